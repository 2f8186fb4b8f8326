"""A small synthetic results tree in the formats of docs/outputs.md (for stats and report tests).

``write_fake_tree(root, ...)`` writes, under ``root``: the controls summary, the suite's task
records (ids, splits and bugs), eval slots of the base model and every run, training segments
(metrics and rollouts with the real schemas, and an identity receipt), audits and benchmark
files. The eval set holds ``n_eval_tasks`` held-out tasks
plus ``n_in_pool`` of the training tasks (so the trained / untrained split has both parts).
Arm M is planted ``effect`` above the others; ``unresolved`` slots of the M runs get a null
verdict (the first with the test statuses of an unresolved verdict in ``detail``).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from editcredit.data.block_truth import TRUTH_SCHEMA
from editcredit.evaluation.slots import SLOTS_SCHEMA
from editcredit.io.identity import write_identity
from editcredit.io.provenance import sha256_file
from editcredit.io.volatile import write_volatile
from editcredit.rl.records import CREDIT_SCHEMA, METRICS_SCHEMA, ROLLOUT_SCHEMA

#: the figures rule's outputs (names)
FIGURES = ("training_curves", "holdout_curve", "task_differences", "bootstrap")

PLAN = {"O": [42, 314159], "B": [42, 314159], "M": [42, 314159], "E": [42]}
BENCH_HEADER = "s\th:m:s\tmax_rss\tmax_vms\tmax_uss\tmax_pss\tio_in\tio_out\tmean_load\tcpu_time\n"


@dataclass
class FakeSpec:
    plan: dict[str, list[int]] = field(default_factory=lambda: dict(PLAN))
    endpoint_step: int = 4
    segment_steps: int = 2
    evalset: str = "holdout"
    # further eval sets (name -> samples per task) written with the same tasks, e.g. the broad
    # set of the repository's config; empty keeps the random draws of the default tree
    extra_evalsets: dict[str, int] = field(default_factory=dict)
    n_eval_tasks: int = 40
    n_in_pool: int = 6
    n_samples: int = 4
    n_train_tasks: int = 10
    tasks_per_step: int = 4
    group_size: int = 4
    effect: float = 0.15
    unresolved: int = 0
    seed: int = 0


def _task(i: int, split: str) -> str:
    return f"minibugs__mod__{split}_{i:03d}"


def train_tasks(spec: FakeSpec) -> list[str]:
    return [_task(i, "train") for i in range(spec.n_train_tasks)]


def eval_tasks(spec: FakeSpec) -> list[str]:
    held = [_task(i, "holdout") for i in range(spec.n_eval_tasks)]
    return held + train_tasks(spec)[: spec.n_in_pool]


def run_names(spec: FakeSpec) -> list[str]:
    return [f"{arm}-s{seed}" for arm, seeds in spec.plan.items() for seed in seeds]


def _write_slots(root: Path, spec: FakeSpec, model: str, rate: np.ndarray, g) -> None:
    _write_evalset_slots(root, spec, model, rate, g, spec.evalset, spec.n_samples)
    for evalset, n_samples in spec.extra_evalsets.items():
        _write_evalset_slots(root, spec, model, rate, g, evalset, n_samples)


def _write_evalset_slots(
    root: Path,
    spec: FakeSpec,
    model: str,
    rate: np.ndarray,
    g,
    evalset: str,
    n_samples: int,
    unresolved: bool = True,
) -> None:
    rows = []
    for t, task in enumerate(eval_tasks(spec)):
        for s in range(n_samples):
            rows.append(
                {
                    "model": model,
                    "evalset": evalset,
                    "instance_id": task,
                    "sample": s,
                    "verdict": int(g.random() < rate[t]),
                    "state": "decided",
                    "reason": "",
                    "attempts": 1,
                }
            )
    if unresolved and model.startswith("M-") and spec.unresolved:
        for row in rows[: spec.unresolved]:
            row.update(verdict=None, state="unresolved", reason="missing_observation")
        rows[0]["detail"] = "error: test_a.py::test_x; skipped: test_a.py::test_y"
    path = root / "results" / "eval" / model / evalset / "slots.parquet"
    path.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(pa.Table.from_pylist(rows, schema=SLOTS_SCHEMA), path)


def _write_tasks(root: Path, spec: FakeSpec) -> None:
    """The suite's task records as far as the statistics read them (the id, the split and the
    ``bugs`` column: every fourth held-out task plants two bugs) and a manifest recording their
    SHA256."""
    held = [_task(i, "holdout") for i in range(spec.n_eval_tasks)]
    tasks = held + train_tasks(spec)
    bugs = [
        json.dumps([{}, {}]) if i < len(held) and i % 4 == 3 else None for i in range(len(tasks))
    ]
    splits = ["holdout"] * len(held) + ["train"] * spec.n_train_tasks
    path = root / "data" / "frozen" / "minibugs" / "tasks.parquet"
    path.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(pa.table({"instance_id": tasks, "split": splits, "bugs": bugs}), path)
    manifest = {"suite": "minibugs", "tasks_parquet_sha256": sha256_file(path)}
    (path.parent / "manifest.json").write_text(json.dumps(manifest, indent=2) + "\n")


def fake_manifest_sha256(root: str | Path) -> str:
    """The SHA256 of the fake suite's manifest: the pin (suites.minibugs.manifest_sha256) of a
    config that verifies the fake tree."""
    return sha256_file(Path(root) / "data" / "frozen" / "minibugs" / "manifest.json")


def _rollout_row(run: str, step: int, task: str, sample: int, y: int, masked: bool) -> dict:
    return {
        "rollout_key": f"{run}:{step}:{task}:{sample}",
        "instance_id": task,
        "split": "train",
        "token_ids": [1, 2, 3],
        "logprobs": [-0.1, -0.2, -0.3],
        "loss_mask": [1, 1, 1],
        "turn_of_token": [0, 0, 0],
        "n_turns": 1,
        "end_reason": "submitted",
        "turns": "[]",
        "edit_blocks": "[]",
        "selected_block": -1,
        "final_patch": "",
        "report": "{}",
        "Y": y,
        "format_error": 0,
        "p2p_regression": 0,
        "reward": float(y),
        "masked": masked,
        "step": step,
        "sample": sample,
    }


def _metrics_row(run: str, arm: str, step: int, rows: list[dict], g) -> dict:
    live = [r for r in rows if not r["masked"]]
    cf = arm in ("B", "M")
    sent = len(rows) if cf else 0
    avail = sent - int(g.integers(0, 2)) if cf else 0
    return {
        "run": run,
        "step": step,
        "reward_mean": float(np.mean([r["reward"] for r in live])),
        "pass_rate": float(np.mean([r["Y"] for r in live])),
        "entropy": 2.0 - 0.1 * step + 0.05 * g.random(),
        "grad_norm": 1.0,
        "loss": 0.1,
        "micro_batches": 2,
        "optimizer_steps": 1,
        "loss_masked_share": 0.0,
        "rollouts": len(rows),
        "masked_share": 1 - len(live) / len(rows),
        "format_error_rate": 0.2 / step,
        "p2p_regression_rate": 0.05,
        "context_budget_rate": 0.1 if step % 2 else 0.0,
        "generated_tokens": 3 * len(rows),
        "cf_sent": sent,
        "cf_available": avail,
        "cf_nonzero": avail // 2,
        "credit_mass_l1": 0.02 * avail,
        "credit_mass_signed": 0.0,
        "credit_rollouts": avail,
        "update_tokens": 40 * len(rows),
        "update_model_flops": 6.0 * 1e6 * 40 * len(rows),
        "alerts": json.dumps(["cf_unavailable_streak: 16 consecutive"] if cf and step == 1 else []),
    }


#: (D, dY, dF, dG) of fake credit queries: a fix (FAIL_TO_PASS), a regression (PASS_TO_PASS),
#: nothing, and both at once.
_PARTS = [(1.0, 1.0, 0.0, 0.0), (-0.25, 0.0, 0.0, 1.0), (0.0, 0.0, 0.0, 0.0), (0.75, 1.0, 0.0, 1.0)]


def _ledger_rows(run: str, arm: str, rows: list[dict], g) -> list[dict]:
    """Credit-ledger rows of a step's rollouts (arms B and M only), the last one unavailable."""
    if arm not in ("B", "M"):
        return []
    out = []
    for i, r in enumerate(rows):
        available = i < len(rows) - 1
        D, dY, dF, dG = _PARTS[int(g.integers(0, len(_PARTS)))]
        out.append(
            {
                "run": run,
                "step": r["step"],
                "rollout_key": r["rollout_key"],
                "instance_id": r["instance_id"],
                "selected_block": 0,
                "available": available,
                "reason": "" if available else "counterfactual report unavailable",
                "U_original": 1.0 if available else None,
                "U_counterfactual": 1.0 - D if available else None,
                "D": D if available else None,
                "dY": dY if available else None,
                "dF": dF if available else None,
                "dG": dG if available else None,
                "s": (0.5 if D > 0.5 else 1.0) if available else None,
                "m": 3,
                "L": 9,
                "credit_l1": 0.1 if available else 0.0,
            }
        )
    return out


def _truth_rows(run: str, rows: list[dict]) -> list[dict]:
    """The known truth of each rollout's one edit block (every arm): ``fix`` where the rollout
    resolved its task, ``other`` elsewhere (no random draw: the tree's other values keep theirs)."""
    return [
        {
            "run": run,
            "step": r["step"],
            "rollout_key": r["rollout_key"],
            "instance_id": r["instance_id"],
            "block": 0,
            "eligible": True,
            "label": "fix" if r["Y"] else "other",
            "fixed_bugs": "0" if r["Y"] else "",
            "tokens": 3,
        }
        for r in rows
    ]


def _write_run(root: Path, spec: FakeSpec, run: str, arm: str, g) -> None:
    pool = train_tasks(spec)
    k = spec.segment_steps
    for end in range(k, spec.endpoint_step + 1, k):
        rollouts, metrics, ledger_rows = [], [], []
        for step in range(end - k + 1, end + 1):
            n = spec.tasks_per_step
            picks = [pool[(step * n + i) % len(pool)] for i in range(n)]
            rows = []
            for task in picks:
                p = 0.3 + 0.05 * step + (0.1 if arm == "M" else 0.0)
                for s in range(spec.group_size):
                    masked = bool(g.random() < 0.05)
                    rows.append(_rollout_row(run, step, task, s, int(g.random() < p), masked))
            if all(r["masked"] for r in rows):
                rows[0]["masked"] = False
            rollouts += rows
            metrics.append(_metrics_row(run, arm, step, rows, g))
            ledger_rows += _ledger_rows(run, arm, rows, g)
        out = root / "runs" / run / f"step_{end}"
        out.mkdir(parents=True, exist_ok=True)
        pq.write_table(
            pa.Table.from_pylist(rollouts, schema=ROLLOUT_SCHEMA), out / "rollouts.parquet"
        )
        pq.write_table(
            pa.Table.from_pylist(metrics, schema=METRICS_SCHEMA), out / "metrics.parquet"
        )
        pq.write_table(
            pa.Table.from_pylist(ledger_rows, schema=CREDIT_SCHEMA), out / "credit.parquet"
        )
        truth = pa.Table.from_pylist(_truth_rows(run, rollouts), schema=TRUTH_SCHEMA)
        pq.write_table(truth, out / "truth.parquet")
        spent = {"steps": float(end), "tokens": 1000.0 * end, "gradings": 50.0 * end}
        ledger = {"scope": run, "budget": {"tokens": 1e6}, "spent": spent, "infra_failures": 1}
        (out / "segment.json").write_text(json.dumps({"run": run, "budget": ledger}))
        cf = arm in ("B", "M")
        write_volatile(
            out / "segment.json",
            {
                "run": run,
                "budget_spent": {"gpu_hours": 0.0, "wall_seconds": 12.5 * end},
                "run_seconds": {
                    "seconds_rollout": 1.5 * end,
                    "seconds_counterfactual": (0.5 if cf else 0.0) * end,
                    "seconds_update": 0.25 * end,
                },
            },
        )
        write_identity(out, {})
        _write_audit(root, run, end, ok=True)


def _write_audit(root: Path, run: str, step: int, ok: bool) -> None:
    cmp = {
        "reference": "models/base/tiny",
        "missing_keys": [],
        "unexpected_keys": [],
        "shape_mismatches": [],
        "dtype_differences": [],
        "compared_tensors": 24,
        "compared_elements": 600_000,
        "changed_tensors": 24 if ok else 0,
        "changed_elements": 598_000 if ok else 0,
        "reference_nonfinite": 0,
        "cast_reference_nonfinite": 0,
        "relative_change": 0.0123 * step,
        "tensors": [],
    }
    rec = {
        "checkpoint": f"runs/{run}/step_{step}/model",
        "base": "models/base/tiny",
        "previous": None,
        "files": [],
        "tensors": [],
        "checkpoint_nonfinite": 0,
        "nonfinite_tensors": [],
        "vs_base": cmp,
        "vs_previous": None,
        "bytes_read": 1000,
        "failures": [] if ok else ["endpoint equals its base"],
        "ok": ok,
        "provenance": {"inputs": {}},
    }
    path = root / "results" / "audits" / run / f"step_{step}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(rec))


def _write_controls(root: Path, spec: FakeSpec) -> None:
    n = spec.n_train_tasks + spec.n_eval_tasks
    summary = {
        "suite": "minibugs",
        "tasks": n,
        "by_split": {"train": spec.n_train_tasks, "dev": 0, "holdout": spec.n_eval_tasks},
        "gold_1": n,
        "empty_0": n,
        "flagged": 0,
        "flagged_ids": [],
        "deviations_by_reason": {},
        "training_pool": train_tasks(spec),
        "provenance": {"inputs": {}},
    }
    path = root / "results" / "controls" / "minibugs" / "summary.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(summary))


def _write_benchmarks(root: Path, spec: FakeSpec) -> None:
    jobs = {"freeze_suite": ["minibugs"], "control": ["minibugs"], "base_model": ["tiny"]}
    jobs["train_segment"] = [f"{r}/step_{spec.endpoint_step}" for r in run_names(spec)]
    for rule, names in jobs.items():
        for i, name in enumerate(names):
            path = root / "results" / "benchmarks" / rule / f"{name}.tsv"
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(
                BENCH_HEADER
                + f"{10.5 + i}\t0:00:10\t{300 + i}\t900\t280\t290\t1\t2\t95\t{9.5 + i}\n"
            )


REPLAY_SUMMARY = "results/replay/summary.json"


def _write_replay(root: Path) -> None:
    """A replay check's summary (rule replay): 20 of 212 stored gradings, all identical."""
    summary = {
        "stored": 212,
        "stored_by_kind": {"counterfactual": 52, "final": 160},
        "replayable": 190,
        "excluded": {"empty_patch": 22},
        "fraction": 0.05,
        "minimum": 20,
        "sampled": 20,
        "sampled_by_kind": {"counterfactual": 6, "final": 14},
        "trees_graded": 17,
        "grading_attempts": 17,
        "identical": 20,
        "mismatches": [],
        "sample": [],
        "grader": {"backend": "docker", "image_id": "sha256:fake"},
        "segment_graders": [],
        "provenance": {"inputs": {}},
    }
    path = root / REPLAY_SUMMARY
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(summary))


def control_path(seed: int) -> str:
    return f"results/training/control/s{seed}.parquet"


def _write_control(root: Path, spec: FakeSpec, seed: int, g) -> None:
    """The no-learning control of a seed: the base's rate on every step's draws."""
    pool = train_tasks(spec)
    n, rows = spec.tasks_per_step, []
    for step in range(1, spec.endpoint_step + 1):
        for task in [pool[(step * n + i) % len(pool)] for i in range(n)]:
            for s in range(spec.group_size):
                y = int(g.random() < 0.35)
                rows.append(_rollout_row(f"control-s{seed}", step, task, s, y, False))
    out = root / control_path(seed)
    out.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(pa.Table.from_pylist(rows, schema=ROLLOUT_SCHEMA), out)


def _write_scores(
    root: Path, model: str, run: str, step: int, rate: np.ndarray, samples: int
) -> None:
    """The scores record of one eval model on holdout (the fields the holdout curve reads)."""
    score = float(np.mean(rate))
    record = {
        "model": model,
        "evalset": "holdout",
        "run": run,
        "step": step,
        "diagnostic": bool(run) and model != run,
        "resolved": True,
        "score": score,
        "bounds": [score, score],
        "n_tasks": int(rate.size),
        "n_samples": samples,
        "provenance": {"inputs": {}},
    }
    out = root / "results" / "eval" / model / "holdout" / "scores.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(record, indent=1) + "\n")


def write_fake_tree(root: str | Path, spec: FakeSpec | None = None) -> FakeSpec:
    """Write the whole fake tree under ``root``; returns the spec used."""
    spec = spec or FakeSpec()
    root = Path(root)
    g = np.random.default_rng(spec.seed)
    base_rate = g.uniform(0.1, 0.7, size=len(eval_tasks(spec)))
    _write_controls(root, spec)
    _write_tasks(root, spec)
    _write_slots(root, spec, "base", base_rate, g)
    _write_scores(root, "base", "", 0, base_rate, spec.n_samples)
    for arm, seeds in spec.plan.items():
        for seed in seeds:
            run = f"{arm}-s{seed}"
            bump = spec.effect if arm == "M" else 0.0
            rate = np.clip(base_rate + 0.05 + bump + g.normal(0, 0.05, base_rate.size), 0, 1)
            _write_slots(root, spec, run, rate, g)
            _write_scores(root, run, run, spec.endpoint_step, rate, spec.n_samples)
            half = spec.endpoint_step // 2  # an evaluated intermediate checkpoint (holdout)
            between = (base_rate + rate) / 2
            _write_scores(root, f"{run}-step{half}", run, half, between, spec.n_samples)
            _write_evalset_slots(
                root,
                spec,
                f"{run}-step{half}",
                (base_rate + rate) / 2,
                np.random.default_rng([spec.seed, seed, half]),  # the tree's stream untouched
                spec.evalset,
                spec.n_samples,
                unresolved=False,
            )
            _write_run(root, spec, run, arm, g)
    for seed in sorted({s for seeds in spec.plan.values() for s in seeds}):
        _write_control(root, spec, seed, g)
    _write_benchmarks(root, spec)
    _write_replay(root)
    return spec
