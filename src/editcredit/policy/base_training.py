"""Fit the embedded default's base policy on an expert corpus: renaming augmentation ->
tokenizer -> tiny LM (SFT). The corpus comes from :mod:`editcredit.agent.expert_corpus` (the
experts play the agent's environment; policy does not import agent).

The corpus is from the train split only (minus tasks whose controls were flagged). Writes an
ordinary HF directory (config.json, model.safetensors, tokenizer files) and ``identity.json``
with the SHA256 of every file, the config, and the hash of the training data.
"""

from __future__ import annotations

import json
import random
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

import torch

from editcredit.data.procedural import synthetic_name
from editcredit.io.hashing import sha256_text
from editcredit.io.identity import write_identity
from editcredit.policy.chat import ChatTemplate
from editcredit.policy.copy_drill import copy_drills
from editcredit.policy.model import new_model, tiny_config
from editcredit.policy.sft import SFTConfig, chat_example, train_sft
from editcredit.policy.tokenizer import train_tokenizer
from editcredit.protocol.budget import BudgetGuard
from editcredit.settings import Sft

if TYPE_CHECKING:
    from transformers import PreTrainedModel


def rename_episode(
    episode: tuple[list[str], list[str]], renames: dict[str, str]
) -> tuple[list[str], list[str]]:
    """The same episode with identifiers renamed everywhere (statement, code, test ids,
    actions): teaches the policy to copy what is on screen rather than recall it. The first
    name (the function's) is replaced inside longer words too (test ids), the others as whole
    words."""
    items = list(renames.items())
    if not items:
        return episode
    (first, first_new), rest = items[0], items[1:]
    words = "|".join(re.escape(o) for o, _ in rest)
    pattern = re.compile(rf"\b({words})\b") if rest else None
    table = dict(rest)

    def sub(text: str) -> str:
        text = text.replace(first, first_new)
        return pattern.sub(lambda m: table[m.group(1)], text) if pattern else text

    obs, acts = episode
    return [sub(o) for o in obs], [sub(a) for a in acts]


def _renamed(episode, idents: list[str], rng: random.Random):
    return rename_episode(episode, {old: synthetic_name(rng) for old in idents})


def augment_with_renames(
    corpus, names: list[list[str]], copies: int, seed: int, prob: float = 0.0, locals_too=True
):
    """Rename augmentation (seeded, deterministic): each episode is replaced by a renamed
    version with probability ``prob``, then ``copies`` renamed versions of each original
    episode are appended. ``names[k]``: episode k's identifiers, its function's first."""
    out = []
    extra = []
    for k, (episode, idents) in enumerate(zip(corpus, names, strict=True)):
        rng = random.Random(f"{seed}:rename:{k}")
        chosen = idents if locals_too else idents[:1]
        if prob > 0 and rng.random() < prob:
            out.append(_renamed(episode, chosen, rng))
        else:
            out.append(episode)
        extra += [_renamed(episode, chosen, rng) for _ in range(copies)]
    return out + extra


def corpus_sha256(corpus: list[tuple[list[str], list[str]]]) -> str:
    text = json.dumps(corpus, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return sha256_text(text)


def fit_base_model(
    corpus: list[tuple[list[str], list[str]]],
    names: list[list[str]],
    cfg: dict[str, Any],
    out_dir: str | Path,
    device: torch.device,
    n_tasks: int,
    data_seconds: float = 0.0,
    budget: BudgetGuard | None = None,
) -> dict[str, Any]:
    """Augment the expert corpus, train the tokenizer and the tiny LM, save the HF directory
    with its identity receipt. With a ``budget``, each SFT chunk is checked before it starts;
    a stop raises before anything is written."""
    out_dir = Path(out_dir)
    corpus = augment_with_renames(
        corpus,
        names,
        int(cfg["experts"]["rename_copies"]),
        int(cfg["seed"]),
        float(cfg["experts"]["rename_prob"]),
        bool(cfg["experts"]["rename_locals"]),
    )
    tokenizer = train_tokenizer(
        (x for obs, act in corpus for x in obs + act),
        int(cfg["tokenizer_vocab"]),
        int(cfg["tokenizer_whole_numbers_below"]),
    )
    chat = ChatTemplate(tokenizer)
    examples = [chat_example(chat, obs, act) for obs, act in corpus]
    model = new_model(
        tiny_config(len(tokenizer), cfg["architecture"], chat.pad, chat.bos, chat.end_of_turn),
        int(cfg["seed"]),
    )
    sft = SFTConfig.from_settings(Sft.from_mapping(cfg["sft"]), int(cfg["seed"]))
    drills = None
    if sft.copy_steps or sft.copy_rows:
        newline = chat.encode_text("\n")
        count = sft.copy_steps * sft.batch_size + sft.max_steps * sft.copy_rows
        drills = copy_drills(
            [o for obs, _ in corpus for o in obs],
            chat.encode_text,
            chat.end_of_turn,
            newline[0],
            count,
            int(cfg["seed"]),
        )
    stats = train_sft(
        model, examples, chat.pad, sft, device, budget, drills, end_of_turn=chat.end_of_turn
    )
    model.to("cpu")
    out_dir.mkdir(parents=True, exist_ok=True)
    hf = cast("PreTrainedModel", model)  # new_model's HF model
    hf.save_pretrained(str(out_dir), safe_serialization=True)
    tokenizer.save_pretrained(str(out_dir))
    training = {
        "tasks": n_tasks,
        "episodes": len(corpus),
        "tokens": sum(len(ids) for ids, _ in examples),
        "training_data_sha256": corpus_sha256(corpus),
        "expert_seconds": round(data_seconds, 2),
        "sft": stats,
        "parameters": sum(p.numel() for p in model.parameters()),
        "device": str(device),
    }
    timeless = {k: v for k, v in training.items() if k != "expert_seconds"}
    timeless["sft"] = {k: v for k, v in stats.items() if k != "seconds"}
    write_identity(out_dir, config=cfg, extra={"training": timeless})  # no wall-clock figures
    return training
