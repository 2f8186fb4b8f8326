"""Rule ``stop_checkpoints``: grade every decision point of a model's eval trajectories.

For each studied eval set of the model, each slot's deciding generation gives one trajectory
(``results/eval/{model}/{evalset}/{task}.json`` -> its trajectory file and row). Its decision
points (:mod:`.points`) carry what was visible then; their checkpoint trees are graded through the
strict grader of the evaluation (:func:`editcredit.grading.grader.grade_patch`), each distinct
(task, tree) once. Labels: ``correct_now`` (the verdict of the point's tree: 1, 0, or null when
unresolved or when grading failed on infrastructure after the retries) and ``correct_end`` (the
verdict of the trajectory's final tree). The study's budget is checked before each grading
against what all of the study's jobs spent (its ledger under ``logs/budgets/``).
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from editcredit.agent.candidates import listed_candidates
from editcredit.data.freeze import load_tasks
from editcredit.data.task import Task
from editcredit.evaluation.sandboxes import INFRA_ERRORS
from editcredit.grading.grader import grade_patch
from editcredit.io.provenance import write_result_json, write_result_parquet
from editcredit.io.volatile import write_volatile
from editcredit.progress import Progress
from editcredit.protocol.budget import DEFAULT_RECEIPT_DIR, BudgetGuard, split_ledger, study_guard
from editcredit.sandbox.limits import GoldTimesBook, gold_times_book
from editcredit.stopping.points import FEATURES, decision_points, sha256_text, tree_sha256

ID_COLUMNS = (
    ("model", pa.string()),
    ("evalset", pa.string()),
    ("instance_id", pa.string()),
    ("sample", pa.int16()),
    ("rollout_key", pa.string()),
    ("split", pa.string()),
    ("point", pa.int16()),
    ("n_points", pa.int16()),
    ("is_end", pa.bool_()),
    ("block_end", pa.bool_()),
    ("end_reason", pa.string()),
    ("tree_sha256", pa.string()),
    ("patch_sha256", pa.string()),
)
LABEL_COLUMNS = (
    ("correct_now", pa.int8()),
    ("verdict_now", pa.string()),
    ("correct_end", pa.int8()),
)
_FLOAT_FEATURES = {"run_pass_share", "block_logprob_mean", "block_logprob_min"}
CHECKPOINTS_SCHEMA = pa.schema(
    [
        *ID_COLUMNS,
        *((f, pa.float64() if f in _FLOAT_FEATURES else pa.int32()) for f in FEATURES),
        *LABEL_COLUMNS,
    ]
)


def deciding_trajectory(slot: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """The generation attempt whose trajectory produced the slot's deciding patch (or the last
    generation with a trajectory when nothing decided it); None when no trajectory exists."""
    attempts = slot["attempts"]
    by_index = {a["index"]: a for a in attempts}
    a = by_index.get(slot["decided_by"]) if slot.get("decided_by") is not None else None
    while a is not None and a.get("trajectory") is None and a.get("of") is not None:
        a = by_index.get(a["of"])
    if a is None or a.get("trajectory") is None:
        with_traj = [x for x in attempts if x.get("trajectory")]
        a = with_traj[-1] if with_traj else None
    return a


def collect_trajectories(slots_paths: Sequence[str]) -> list[dict[str, Any]]:
    """One record per slot with a trajectory: ids, and the trajectory row itself."""
    tables: dict[str, Any] = {}
    out = []
    for slots_path in slots_paths:
        folder = Path(slots_path).parent
        slots = pq.read_table(slots_path).to_pandas()
        for instance_id in sorted(slots["instance_id"].unique()):
            record = json.loads((folder / f"{instance_id}.json").read_text())
            for slot in record["slots"]:
                attempt = deciding_trajectory(slot)
                if attempt is None:
                    continue
                ref = attempt["trajectory"]
                if ref["path"] not in tables:
                    tables[ref["path"]] = pq.read_table(ref["path"]).to_pylist()
                row = tables[ref["path"]][ref["row"]]
                if row["rollout_key"] != ref["rollout_key"]:
                    raise ValueError(f"{ref['path']} row {ref['row']}: not {ref['rollout_key']}")
                out.append(
                    {
                        "model": record["model"],
                        "evalset": record["evalset"],
                        "instance_id": instance_id,
                        "sample": slot["sample"],
                        "row": row,
                    }
                )
    return out


Grader = Callable[[Task, str], tuple[int | None, str, bool]]


def grade_trees(
    jobs: Sequence[tuple[Task, str]],
    grade: Grader,
    guard: BudgetGuard,
    retries: int,
    workers: int,
    progress: Progress | None = None,
) -> list[tuple[int | None, str]]:
    """Grade each (task, patch) once, retrying infrastructure failures; the budget is checked
    before every grading. ``grade`` returns (resolved, verdict kind, infrastructure failed).
    ``progress`` counts the (task, patch) pairs done."""
    from concurrent.futures import ThreadPoolExecutor

    lock = threading.Lock()

    def one(job):
        task, patch = job
        for _ in range(retries + 1):
            with lock:
                guard.check(f"grading of {task.instance_id} {sha256_text(patch)[:12]}")
            resolved, kind, infra = grade(task, patch)
            with lock:
                guard.add({"gradings": 1, "wall_seconds": guard.lap()}, infra_failures=int(infra))
            if not infra:
                return resolved, kind
        return None, f"infrastructure failure after {retries + 1} attempts"

    def counted(job):
        out = one(job)
        if progress is not None:
            progress.update(advance=1)
        return out

    with ThreadPoolExecutor(max(1, workers)) as ex:
        return list(ex.map(counted, jobs))


def sandbox_grader(pool, f_weight: float, g_weight: float) -> Grader:
    """The strict grader of the evaluation, through a sandbox pool."""

    def grade(task: Task, patch: str):
        try:
            report = grade_patch(task, patch, pool, f_weight, g_weight)
        except INFRA_ERRORS:
            return None, "infrastructure failure", True
        if report.outcome == "infrastructure_failure":
            return None, "infrastructure failure", True
        return report.resolved, report.verdict or "", False

    return grade


def checkpoint_rows(
    trajectories: Sequence[Mapping[str, Any]],
    tasks: Mapping[str, Task],
    grade_many: Callable[[list[tuple[Task, str]]], list[tuple[int | None, str]]],
    try_scope: str,
) -> list[dict[str, Any]]:
    """Rows of checkpoints.parquet: decision points with features, graded once per tree.
    ``try_scope`` (``agent.try_scope``) says which candidate list the environment showed, and
    so what a recorded ``try`` wrote (:func:`~editcredit.agent.candidates.listed_candidates`)."""
    staged = []
    unique: dict[tuple[str, str], tuple[Task, str]] = {}
    for traj in trajectories:
        row, task = traj["row"], tasks[traj["instance_id"]]
        if task.files is None:  # no inline tree to replay (per-instance images): not studied
            continue
        where = f"{traj['model']}/{traj['evalset']}/{row['rollout_key']}"
        points = decision_points(
            task.files or {},
            json.loads(row["turns"] or "[]"),
            row["turn_of_token"],
            row["loss_mask"],
            row["logprobs"],
            where,
            listed_candidates(task, try_scope),
        )
        for p in points:
            key = (task.instance_id, tree_sha256(p.tree))
            unique.setdefault(key, (task, p.patch))
        staged.append((traj, task, points))
    keys = sorted(unique)
    verdicts = dict(zip(keys, grade_many([unique[k] for k in keys]), strict=True))
    rows = []
    for traj, task, points in staged:
        row = traj["row"]
        end = verdicts[(task.instance_id, tree_sha256(points[-1].tree))][0]
        for p in points:
            now, kind = verdicts[(task.instance_id, tree_sha256(p.tree))]
            rows.append(
                {
                    "model": traj["model"],
                    "evalset": traj["evalset"],
                    "instance_id": task.instance_id,
                    "sample": traj["sample"],
                    "rollout_key": row["rollout_key"],
                    "split": task.split,
                    "point": p.point,
                    "n_points": len(points),
                    "is_end": p.is_end,
                    "block_end": p.block_end,
                    "end_reason": row["end_reason"],
                    "tree_sha256": tree_sha256(p.tree),
                    "patch_sha256": sha256_text(p.patch),
                    **p.features,
                    "correct_now": now,
                    "verdict_now": kind,
                    "correct_end": end,
                }
            )
    return rows


def _graded_pool(sandbox: Mapping[str, Any], book: GoldTimesBook) -> Any:
    """The job's sandboxes behind the memo and the study's report store."""
    from editcredit.grading.grader_identity import study_report_store
    from editcredit.sandbox.memo import GradingMemo
    from editcredit.sandbox.pool import SandboxPool

    pool = SandboxPool(sandbox["backend"], dict(sandbox), int(sandbox["workers"]), book)
    return GradingMemo(pool, store=study_report_store(sandbox))


def checkpoints_job(
    *,
    model: str,
    slots: Sequence[str],
    tasks_paths: Sequence[str],
    out: str,
    grading: Mapping[str, Any],
    sandbox: Mapping[str, Any],
    budget: Mapping[str, Any] | None,
    retries: int,
    config: Any,
    make_pool: Callable[[], Any] | None = None,
    study: str = "stop",
    budget_dir: str | Path = DEFAULT_RECEIPT_DIR,
    gold_times: Sequence[str] = (),
    try_scope: str,
) -> dict[str, Any]:
    """Write ``results/stop/{model}/checkpoints.parquet`` and its receipt (``.json`` beside).
    ``try_scope``: the ``agent.try_scope`` the trajectories were played under.

    Each tree is graded as the evaluation grades a final patch: held to the tests' recorded
    gold times (``gold_times``: the control rule's per-task directories; a task without them is
    measured with one gold run), through the memo and the study's report store, so a
    checkpoint tree some evaluated trajectory ended on is read, not run again.

    The study's budget (``budget``: config ``budgets.studies.{study}``) holds for all of the
    study's grading jobs together: each grading is checked against, and appended to, the
    study's ledger under ``budget_dir``."""
    tasks = {t.instance_id: t for p in tasks_paths for t in load_tasks(p)}
    book = gold_times_book(list(gold_times))  # a missing directory fails before any grading
    trajectories = collect_trajectories(slots)
    guard = study_guard(study, f"{study}-{model}", budget, receipt_dir=budget_dir)
    started = time.monotonic()
    pool = None

    def grade_many(jobs):
        nonlocal pool
        if not jobs:
            return []
        if pool is None:
            pool = (make_pool or (lambda: _graded_pool(sandbox, book)))()
        grader = sandbox_grader(pool, float(grading["f_weight"]), float(grading["g_weight"]))
        print(f"{model}: grading {len(jobs)} distinct checkpoint trees")
        with Progress(f"stop {model}", len(jobs), "checkpoint trees") as progress:
            return grade_trees(jobs, grader, guard, retries, int(sandbox["workers"]), progress)

    try:
        rows = checkpoint_rows(trajectories, tasks, grade_many, try_scope)
    finally:
        if pool is not None:
            pool.close()
    table = pa.Table.from_pylist(rows, schema=CHECKPOINTS_SCHEMA)
    inputs = [*slots, *tasks_paths]
    write_result_parquet(out, table, inputs, config)
    receipt: dict[str, Any] = {
        "model": model,
        "trajectories": len({(r["evalset"], r["rollout_key"]) for r in rows}),
        "skipped_without_inline_tree": sum(
            tasks[t["instance_id"]].files is None for t in trajectories
        ),
        "points": len(rows),
        "distinct_trees": len({(r["instance_id"], r["tree_sha256"]) for r in rows}),
        "by_split": {
            k: sum(r["split"] == k for r in rows) for k in sorted({r["split"] for r in rows})
        },
    }
    # the sidecar's: the time spent, and the study's ledger (this attempt's host, pid and
    # nonce; what every attempt of the study's jobs spent so far, reruns included)
    receipt["budget"], timed = split_ledger(guard.ledger())
    study = receipt["budget"].pop("study", None)
    write_result_json(Path(out).with_suffix(".json"), receipt, inputs, config)
    volatile = {"seconds": time.monotonic() - started, "budget_spent": timed, "study": study}
    write_volatile(Path(out).with_suffix(".json"), volatile)
    print(
        json.dumps({k: receipt[k] for k in ("model", "trajectories", "points", "distinct_trees")})
    )
    return receipt
