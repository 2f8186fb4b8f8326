"""The facts a storage forecast is computed from, read when the DAG is built: what the plan
still has to write (segments and evaluation jobs whose outputs do not exist yet), the base
model's parameter count, the free space of the output's file system."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from editcredit import layout
from editcredit.storage.forecast import Forecast, PlanCounts, forecast, qwen2_parameters
from editcredit.storage.monitor import existing_parent, probe


@dataclass(frozen=True)
class PlanFacts:
    """The plan's jobs that write the bulk of the bytes (``editcredit.study_plan``)."""

    segments: list[tuple[str, int]]  # (run, step) of every training segment
    pruned: set[tuple[str, int]]  # (run, step) of the segments whose checkpoints retention removes
    eval_jobs: list[tuple[str, str]]  # (eval model, eval set)

    @classmethod
    def from_jobs(cls, jobs: Iterable[Any]) -> PlanFacts:
        """Read off a study's jobs (each with ``rule`` and ``values``, its wildcards)."""
        segments: list[tuple[str, int]] = []
        pruned: set[tuple[str, int]] = set()
        evals: list[tuple[str, str]] = []
        for job in jobs:
            w = job.values
            if job.rule == "train_segment":
                segments.append((w["run"], int(w["step"])))
            elif job.rule == "prune_segment":
                pruned.add((w["run"], int(w["step"])))
            elif job.rule == "eval_model":
                evals.append((w["model"], w["evalset"]))
        return cls(segments, pruned, evals)


def base_parameters(settings, root: Path) -> int | None:
    """Parameters of the training base: from its safetensors headers (the built base, else an
    import's source directory), else from its configured architecture; None when neither."""
    from editcredit.io.safetensors_reader import Checkpoint

    name = settings.training.model
    model = settings.models[name]
    for d in (root / layout.base_model_dir(name), Path(model.path) if model.path else None):
        if d is not None and d.is_dir() and any(d.glob("*.safetensors")):
            return sum(int(t.numel) for t in Checkpoint(d).tensors.values())
    arch = model.architecture
    sizes = (arch.hidden_size, arch.intermediate_size, arch.num_layers) if arch else ()
    if arch is None or None in sizes or arch.num_heads is None or arch.num_kv_heads is None:
        return None
    return qwen2_parameters(
        model.tokenizer_vocab,
        arch.hidden_size,
        arch.intermediate_size,
        arch.num_layers,
        arch.num_heads,
        arch.num_kv_heads,
    )


def split_counts(tasks_path: Path) -> Counter | None:
    """Tasks per split of a frozen suite; None before it is frozen, or when the file is no
    readable suite (a placeholder: the jobs that read it say what is wrong with it, and a
    forecast is no place to fail a plan)."""
    if not tasks_path.is_file():
        return None
    import pyarrow as pa
    import pyarrow.parquet as pq

    try:
        column = pq.read_table(tasks_path, columns=["split"]).column("split")
    except (OSError, KeyError, pa.ArrowException):
        return None
    return Counter(column.to_pylist())


def pending_eval_slots(settings, jobs: list[tuple[str, str]], root: Path) -> int:
    """Slots of the evaluation jobs whose slots.parquet does not exist yet (jobs of a suite not
    frozen yet are not counted)."""
    total = 0
    for model, evalset in jobs:
        if (root / layout.eval_slots(model, evalset)).exists():
            continue
        spec = settings.evaluation.evalsets[evalset]
        counts = split_counts(root / layout.frozen_tasks(spec.suite))
        if counts is None:
            continue
        tasks = sum(counts[s] for s in spec.splits)
        if spec.max_tasks:
            tasks = min(tasks, spec.max_tasks)
        total += tasks * max(1, spec.samples)
    return total


def study_forecast(settings, facts: PlanFacts, root: Path) -> Forecast:
    """The forecast of what the plan still writes against the free space under ``root``."""
    pending = [(r, n) for r, n in facts.segments if not (root / layout.segment_dir(r, n)).exists()]
    training = settings.training
    per_segment = (
        training.segment_steps
        * int(training.grpo["tasks_per_step"])
        * int(training.grpo["group_size"])
    )
    counts = PlanCounts(
        parameters=base_parameters(settings, root),
        segments=len(pending),
        pruned=sum(1 for segment in pending if segment in facts.pruned),
        runs=len({run for run, _ in pending}),
        rollouts=len(pending) * per_segment,
        eval_slots=pending_eval_slots(settings, facts.eval_jobs, root),
        context_tokens=settings.agent.max_context_tokens,
    )
    free = probe(existing_parent(root / layout.RUNS)).free_bytes
    return forecast(counts, free, int(training.health.min_free_disk_gb * 1e9))
