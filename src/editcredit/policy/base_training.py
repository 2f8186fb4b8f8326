"""Train the embedded default's base policy: scripted experts -> tokenizer -> tiny LM (SFT).

Uses the train split only (minus tasks whose controls were flagged). Writes an ordinary HF
directory (config.json, model.safetensors, tokenizer files) and ``identity.json`` with the
SHA256 of every file, the config, and the hash of the training data.
"""

from __future__ import annotations

import hashlib
import json
import random
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import torch

from editcredit.agent.experts import expert_actions, run_expert_episode
from editcredit.agent.minibugs_env import MinibugsEnv
from editcredit.audit.identity import write_identity
from editcredit.data.task import Task
from editcredit.policy.chat import ChatIds
from editcredit.policy.model import new_model, tiny_config
from editcredit.policy.sft import SFTConfig, chat_example, train_sft
from editcredit.policy.tokenizer import train_tokenizer


def expert_corpus(
    tasks: list[Task], sandbox, cfg: dict[str, Any], max_turns: int, workers: int
) -> tuple[list[tuple[list[str], list[str]]], list[str]]:
    """Expert episodes (observations, actions), played through the real environment, and
    the seed function of each."""
    jobs = []
    for task in tasks:
        for k in range(int(cfg["episodes_per_task"])):
            rng = random.Random(f"{cfg['seed']}:{task.instance_id}:{k}")
            actions = expert_actions(task, rng, float(cfg["detour_prob"]), float(cfg["run_prob"]))
            if actions:
                jobs.append((task, actions))
    with ThreadPoolExecutor(workers) as ex:
        episodes = list(
            ex.map(lambda job: run_expert_episode(MinibugsEnv(sandbox, max_turns), *job), jobs)
        )
    return episodes, [task.meta["seed_function"].split(".", 1)[1] for task, _ in jobs]


_SYLLABLES = (
    "ka",
    "lo",
    "mi",
    "ren",
    "tu",
    "sa",
    "vel",
    "dor",
    "pi",
    "nex",
    "qua",
    "zo",
    "bri",
    "mon",
    "tal",
    "ec",
    "ul",
    "fi",
    "gra",
    "hos",
)


def synthetic_name(rng: random.Random) -> str:
    """A pronounceable identifier never used by the pool (for renaming augmentation)."""
    words = [
        "".join(rng.choice(_SYLLABLES) for _ in range(rng.randint(2, 3)))
        for _ in range(rng.randint(1, 3))
    ]
    return "_".join(words)


def rename_episode(
    episode: tuple[list[str], list[str]], old: str, new: str
) -> tuple[list[str], list[str]]:
    """The same episode with the seed function renamed everywhere (statement, code, test ids,
    actions): teaches the policy to copy a function's name rather than recall it."""
    obs, acts = episode
    return [o.replace(old, new) for o in obs], [a.replace(old, new) for a in acts]


def augment_with_renames(corpus, names: list[str], copies: int, seed: int):
    """Append ``copies`` renamed versions of each episode (seeded, deterministic)."""
    out = list(corpus)
    for k, (episode, name) in enumerate(zip(corpus, names, strict=True)):
        rng = random.Random(f"{seed}:rename:{k}")
        for _ in range(copies):
            out.append(rename_episode(episode, name, synthetic_name(rng)))
    return out


def corpus_sha256(corpus: list[tuple[list[str], list[str]]]) -> str:
    text = json.dumps(corpus, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def train_base_model(
    tasks: list[Task],
    sandbox,
    cfg: dict[str, Any],
    agent_cfg: dict[str, Any],
    out_dir: str | Path,
    device: torch.device,
    workers: int = 2,
) -> dict[str, Any]:
    out_dir = Path(out_dir)
    start = time.monotonic()
    experts = {**cfg["experts"], "seed": cfg["seed"]}
    corpus, names = expert_corpus(tasks, sandbox, experts, int(agent_cfg["max_turns"]), workers)
    corpus = augment_with_renames(
        corpus, names, int(cfg["experts"].get("rename_copies", 0)), int(cfg["seed"])
    )
    data_seconds = time.monotonic() - start
    tokenizer = train_tokenizer(
        (x for obs, act in corpus for x in obs + act), int(cfg["tokenizer_vocab"])
    )
    chat = ChatIds(tokenizer)
    examples = [chat_example(chat, obs, act) for obs, act in corpus]
    model = new_model(
        tiny_config(len(tokenizer), cfg["architecture"], chat.pad, chat.bos, chat.eos),
        int(cfg["seed"]),
    )
    sft = SFTConfig(**{**cfg["sft"], "seed": int(cfg["seed"])})
    stats = train_sft(model, examples, chat.pad, sft, device)
    model.to("cpu")
    out_dir.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(str(out_dir), safe_serialization=True)
    tokenizer.save_pretrained(str(out_dir))
    training = {
        "tasks": len(tasks),
        "episodes": len(corpus),
        "tokens": sum(len(ids) for ids, _ in examples),
        "training_data_sha256": corpus_sha256(corpus),
        "expert_seconds": round(data_seconds, 2),
        "sft": stats,
        "parameters": sum(p.numel() for p in model.parameters()),
        "device": str(device),
    }
    write_identity(out_dir, config=cfg, extra={"training": training})
    return training
