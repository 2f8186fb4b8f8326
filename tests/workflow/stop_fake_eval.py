"""A fake evaluation tree for the stop rules: real episodes of scripted actions on toy tasks
(MinibugsEnv with the docker sandbox), written where rule eval_model writes them (per-task slot
files, slots.parquet, trajectory files), so the stop rules read them as they read a real run."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
from taskfactory import make_calc_task

from editcredit.agent.minibugs_env import MinibugsEnv
from editcredit.agent.trajectory import TRAJECTORY_SCHEMA
from editcredit.data.freeze import write_parquet

WRONG = "edit calc.py\n- return a - b\n+ return b - a"
RIGHT = "edit calc.py\n- return a - b\n+ return a + b"
AFTER_WRONG = "edit calc.py\n- return b - a\n+ return a + b"
SCRIPTS = [
    [WRONG, "run", AFTER_WRONG, "run", "submit"],  # recovers: wrong, then right
    [RIGHT, "submit"],  # right at once
    [WRONG, "run", "submit"],  # gives up wrong
    [RIGHT, "run", "submit"],  # right, checks, submits
    ["run", "submit"],  # no edit
    [RIGHT, "run", WRONG.replace("a - b", "a + b"), "submit"],  # right, then breaks it
]
SPLITS = ["dev", "dev", "dev", "train", "holdout", "holdout", "holdout"]


def toy_tasks():
    base = make_calc_task()
    return [
        base.model_copy(update={"instance_id": f"toy__calc__{i}", "split": s, "suite": "toy"})
        for i, s in enumerate(SPLITS)
    ]


def _row(task, env, key: str) -> dict:
    tokens, turns, mask, lps = [], [], [], []
    for t in env.turns:
        n = 3 + len(t.action_text) // 8
        tokens += [5] * n + [1]
        turns += [t.turn] * n + [-1]
        mask += [1] * n + [0]
        lps += [-0.1 * (1 + t.turn)] * n + [0.0]
    return {
        "rollout_key": key,
        "instance_id": task.instance_id,
        "split": task.split,
        "token_ids": tokens,
        "logprobs": lps,
        "loss_mask": mask,
        "turn_of_token": turns,
        "n_turns": len(env.turns),
        "end_reason": env.end_reason,
        "turns": json.dumps([t.to_dict() for t in env.turns], sort_keys=True),
        "edit_blocks": "[]",
        "selected_block": -1,
        "final_patch": env.final_patch(),
        "report": "{}",
        "Y": None,
        "format_error": 0,
        "p2p_regression": None,
        "reward": None,
        "masked": False,
        "mask_cause": "",
    }


def write_fake_eval(root: Path, sandbox, model: str = "base", samples: int = 2) -> None:
    tasks = toy_tasks()
    write_parquet(tasks, root / "data/frozen/toy/tasks.parquet")
    # the control rule's per-task records: none here, so each task's gold run is measured
    (root / "results/controls/toy/tasks").mkdir(parents=True, exist_ok=True)
    evalsets = {"holdout": ["holdout"], "broad": ["dev", "train"]}
    for evalset, splits in evalsets.items():
        folder = root / "results/eval" / model / evalset
        traj_rel = f"results/eval/{model}/{evalset}/attempts/k/trajectories/t.parquet"
        rows, slot_rows = [], []
        for i, task in enumerate(t for t in tasks if t.split in splits):
            slots = []
            for sample in range(samples):
                env = MinibugsEnv(
                    sandbox, max_turns=8, numbered_lines=False, candidates=False, try_scope="file"
                )
                env.reset(task)
                for action in SCRIPTS[(i + 2 * sample) % len(SCRIPTS)]:
                    _, done = env.step(action)
                    if done:
                        break
                key = f"eval:{model}:{evalset}:{task.instance_id}:{sample}:a0"
                ref = {"path": traj_rel, "row": len(rows), "rollout_key": key}
                rows.append(_row(task, env, key))
                slots.append(
                    {
                        "sample": sample,
                        "decided_by": 1,
                        "attempts": [
                            {"index": 0, "kind": "generate", "trajectory": ref, "of": None},
                            {"index": 1, "kind": "grade", "trajectory": None, "of": 0},
                        ],
                    }
                )
                slot_rows.append({"instance_id": task.instance_id, "sample": sample})
            record = {
                "model": model,
                "evalset": evalset,
                "instance_id": task.instance_id,
                "slots": slots,
            }
            folder.mkdir(parents=True, exist_ok=True)
            (folder / f"{task.instance_id}.json").write_text(json.dumps(record))
        (root / traj_rel).parent.mkdir(parents=True, exist_ok=True)
        pq.write_table(pa.Table.from_pylist(rows, schema=TRAJECTORY_SCHEMA), root / traj_rel)
        pq.write_table(pa.Table.from_pylist(slot_rows), folder / "slots.parquet")
