"""Segment state on disk: the HF model directory, optimiser state, RNG states, data cursor.

``runs/{run}/step_{N}/`` is written whole into a temporary sibling and renamed into place, so a
killed segment leaves nothing that looks finished. Model files are deterministic bytes (safetensors
of float32 weights), so resuming from a segment gives the same bytes as never stopping (on CPU).
"""

from __future__ import annotations

import json
import random
import shutil
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypedDict, cast

import numpy as np
import torch

if TYPE_CHECKING:
    from transformers import PreTrainedModel

TOKENIZER_FILES = (
    "tokenizer.json",
    "tokenizer_config.json",
    "special_tokens_map.json",
    "chat_template.jinja",  # the model's own chat template (policy.chat), where saved apart
    "chat_template.json",
    "vocab.json",
    "merges.txt",
    "added_tokens.json",
)
"""The tokenizer files a checkpoint copies from its base, where present: everything the agent
plays the model through."""


class RngState(TypedDict):
    """``state/rng.json``: every generator a checkpoint records, as JSON lists."""

    python: list[Any]  # random.getstate(): [version, internal state, gauss]
    numpy: list[Any]  # numpy's legacy MT19937 state: [name, keys, pos, has_gauss, cached]
    torch: list[int]  # torch's CPU generator state, bytes


class SegmentState(TypedDict):
    """``state/cursor.json`` (sorted keys): where the next segment starts."""

    cursor: dict[str, int]  # the data cursor (rl.cursor.DataCursor: seed, epoch, position)
    health: dict[str, Any]  # the health monitor's state (rl.health.HealthMonitor.state)
    step: int  # the run's last trained step


def seed_rng(seed: int) -> None:
    """Seed every generator a checkpoint records (Python's, NumPy's global one and torch's) from
    the run's seed, so that a run's first ``state/rng.json`` is a function of its seed; Python
    and NumPy otherwise start from the operating system's entropy and the file would differ
    between any two runs."""
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)


def rng_state() -> RngState:
    # the legacy global generator is MT19937, whose state is a tuple (name, keys, pos, ...)
    np_state = cast(tuple[Any, ...], np.random.get_state())
    return {
        "python": [random.getstate()[0], list(random.getstate()[1]), random.getstate()[2]],
        "numpy": [np_state[0], np_state[1].tolist(), *np_state[2:]],
        "torch": torch.get_rng_state().tolist(),
    }


def restore_rng(state: RngState) -> None:
    v, internal, gauss = state["python"]
    random.setstate((v, tuple(internal), gauss))
    name, keys, pos, has_gauss, cached = state["numpy"]
    np.random.set_state((name, np.asarray(keys, dtype=np.uint32), pos, has_gauss, cached))
    torch.set_rng_state(torch.tensor(state["torch"], dtype=torch.uint8))


def save_segment(
    out_dir: Path,
    model: torch.nn.Module,
    tokenizer_dir: Path,
    optimizer: torch.optim.Optimizer,
    cursor: SegmentState,
    extra_files: dict[str, Any],
) -> None:
    """Write the model, its tokenizer, the optimiser, RNG and cursor state (``cursor``), then
    ``extra_files``
    (name -> callable(path) writing that file), all under ``out_dir`` at once."""
    tmp = out_dir.with_name(f".{out_dir.name}.tmp")
    if tmp.exists():
        shutil.rmtree(tmp)
    (tmp / "state").mkdir(parents=True)
    # the trained policy is a transformers model (PreTrainedModel), which saves itself
    cast("PreTrainedModel", model).save_pretrained(str(tmp / "model"))
    for name in TOKENIZER_FILES:
        if (tokenizer_dir / name).is_file():
            shutil.copy2(tokenizer_dir / name, tmp / "model" / name)
    torch.save(optimizer.state_dict(), tmp / "state" / "optimizer.pt")
    (tmp / "state" / "rng.json").write_text(json.dumps(rng_state()))
    (tmp / "state" / "cursor.json").write_text(json.dumps(cursor, indent=1, sort_keys=True))
    for name, write in extra_files.items():
        write(tmp / name)
    if out_dir.exists():
        raise FileExistsError(f"{out_dir} exists: a segment is never overwritten")
    tmp.rename(out_dir)


def load_state(state_dir: Path | None) -> tuple[dict[str, Any] | None, dict[str, Any]]:
    """Optimiser state dict and cursor record of a finished segment (None, {} for step 0)."""
    if state_dir is None:
        return None, {}
    optimizer = torch.load(state_dir / "optimizer.pt", weights_only=True)
    restore_rng(json.loads((state_dir / "rng.json").read_text()))
    return optimizer, json.loads((state_dir / "cursor.json").read_text())
