"""The base model's inputs and the import_model job: the training tasks of a suite, and a local
HF directory linked in with its receipt. Training the tiny default is
:func:`editcredit.agent.base_job.base_model_job` (its experts play the agent's environment)."""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from editcredit.audit.base_pin import check_pin
from editcredit.data.freeze import load_tasks
from editcredit.io.identity import RECEIPT, write_identity

HF_FILES = (
    "config.json",
    "generation_config.json",
    "tokenizer.json",
    "tokenizer_config.json",
    "special_tokens_map.json",
    "chat_template.jinja",
)


def check_chat_model(model_dir: Path) -> None:
    """A directory the agent can play as it is: its tokenizer loads, its own chat template renders
    token-exactly (:class:`editcredit.policy.chat.ChatTemplate`) and every id the template and
    tokenizer use is inside the model's vocabulary, so no token is added and no embedding
    resized. ValueError naming the directory otherwise."""
    from transformers import AutoTokenizer

    from editcredit.policy.chat import ChatTemplate

    vocab = json.loads((model_dir / "config.json").read_text()).get("vocab_size")
    try:
        tokenizer = AutoTokenizer.from_pretrained(str(model_dir))
    except Exception as exc:  # noqa: BLE001 - any loader failure is the directory's
        raise ValueError(f"models: {model_dir}: the tokenizer does not load ({exc})") from exc
    chat = ChatTemplate(tokenizer)
    used = {*chat.stop_ids, chat.pad, *tokenizer.all_special_ids}
    if not isinstance(vocab, int) or len(tokenizer) > vocab or max(used) >= vocab:
        raise ValueError(
            f"models: {model_dir}: the tokenizer has {len(tokenizer)} tokens (special ids up to "
            f"{max(used)}) but config.json's vocab_size is {vocab}"
        )


def training_tasks(
    tasks_path: str, controls_path: str | None, quarantine: Mapping[str, str] | None = None
):
    """Train-split tasks minus those whose controls were flagged (METHOD §7) and those the
    config quarantines (``training.quarantine``: task id -> reason; out of training, still
    evaluated). A quarantined id that is not a train task of the suite is refused, by name."""
    tasks = [t for t in load_tasks(tasks_path) if t.split == "train"]
    unknown = sorted(set(quarantine or {}) - {t.instance_id for t in tasks})
    if unknown:
        raise ValueError(
            f"config training.quarantine: {', '.join(unknown)} not a train task of {tasks_path}"
        )
    if controls_path:
        summary = json.loads(Path(controls_path).read_text())
        flagged = set(summary["flagged_ids"])
        tasks = [t for t in tasks if t.instance_id not in flagged]
    return [t for t in tasks if t.instance_id not in (quarantine or {})]


def import_model(source: str, out_dir: Path, cfg: dict[str, Any], name: str = "") -> str:
    """Link (or copy) a local HF directory into models/base/{model} and write its receipt, as it
    is: the agent plays it through its tokenizer's own chat template (checked first,
    :func:`check_chat_model`; nothing is added);
    return the SHA256 of the receipt's file table (``cfg["receipt_sha256"]`` pins it: a
    different directory fails the import, naming both hashes, and leaves nothing behind)."""
    src = Path(source)
    if not (src / "config.json").is_file():
        raise FileNotFoundError(f"models: import path {src} is not a HF directory (no config.json)")
    check_chat_model(src)
    out_dir.mkdir(parents=True, exist_ok=True)
    try:
        for path in sorted(src.rglob("*")):
            if path.is_file():
                dest = out_dir / path.relative_to(src)
                dest.parent.mkdir(parents=True, exist_ok=True)
                try:
                    os.link(path, dest)
                except OSError:
                    shutil.copy2(path, dest)
        receipt = write_identity(out_dir, config=cfg, extra={"imported_from": str(src.resolve())})
        where = f"models.{name or out_dir.name}.receipt_sha256"
        table = check_pin(receipt, cfg.get("receipt_sha256") or "", str(out_dir / RECEIPT), where)
    except BaseException:
        shutil.rmtree(out_dir, ignore_errors=True)
        raise
    print(f"{out_dir}: receipt file table SHA256 {table} (pin it as {where})")
    return table
