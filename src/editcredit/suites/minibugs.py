"""Generate minibugs tasks: seeded mutations of the pool, each validated by real sandbox runs.

A candidate is kept only when, under the strict contract, the mutated tree (the empty
control) fails at least one test in its call phase (FAIL_TO_PASS) while every other test
passes (PASS_TO_PASS, at least one), and the gold patch (mutated -> original) scores 1.
"""

from __future__ import annotations

import hashlib
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from editcredit.data.minibugs.pool_files import SeedModule, load_pool
from editcredit.data.mutations import (
    Mutation,
    apply_mutation,
    sample_mutations,
    top_level_functions,
)
from editcredit.data.problem import problem_statement
from editcredit.data.procedural import procedural_pool
from editcredit.data.splits import assign_split
from editcredit.data.task import Task
from editcredit.grading.verdicts import expected_statuses, judge
from editcredit.sandbox.base import SandboxReport
from editcredit.sandbox.patches import diff_trees

SUITE = "minibugs"
PROBE_ID = "::__probe__"

#: Runs (task, patch) in a sandbox; the pool runner maps it over worker sandboxes.
GradeMany = Callable[[Sequence[tuple[Task, str]]], list[SandboxReport]]

#: A run that does not finish inside its whole-run limit is graded again with the limit
#: multiplied by each of these in turn: a busy machine is no property of a mutant, so only a
#: run that fails to finish at every rung is judged by that (the suite does not depend on load).
RETRY_FACTORS = (4.0, 16.0)


def settled_runs(grade_many: GradeMany, jobs: Sequence[tuple[Task, str]]) -> list[SandboxReport]:
    """``grade_many(jobs)``, each run that did not finish graded again with a longer whole-run
    limit (:data:`RETRY_FACTORS`); the last report of each job."""
    runs = list(grade_many(jobs))
    for factor in RETRY_FACTORS:
        again = [k for k, run in enumerate(runs) if run.run_status != "finished"]
        if not again:
            break
        longer = [
            (jobs[k][0].model_copy(update={"timeout_s": jobs[k][0].timeout_s * factor}), jobs[k][1])
            for k in again
        ]
        for k, run in zip(again, grade_many(longer), strict=True):
            runs[k] = run
    return runs


@dataclass(frozen=True)
class Candidate:
    module: SeedModule
    function: str
    mutation: Mutation
    mutated_source: str
    suite: str = SUITE

    @property
    def group_key(self) -> str:
        return f"{self.suite}:{self.module.name}.{self.function}"

    @property
    def instance_id(self) -> str:
        digest = hashlib.sha256(self.mutation.mutation_id().encode()).hexdigest()[:8]
        return f"{self.suite}__{self.module.name}__{self.function}__{digest}"


def candidates(
    pool: list[SeedModule], seed: int, per_function: int, suite: str = SUITE
) -> list[Candidate]:
    """Seeded mutants: each function draws from its own RNG, so pool edits stay local."""
    out: list[Candidate] = []
    for module in pool:
        seen = {module.source}
        for function in top_level_functions(module.source):
            rng = random.Random(f"{seed}:{module.name}:{function}")
            for mutation in sample_mutations(module.source, function, rng, per_function):
                mutated = apply_mutation(module.source, mutation)
                if mutated in seen:
                    continue
                seen.add(mutated)
                out.append(Candidate(module, function, mutation, mutated, suite))
    return out


def probe_task(module: SeedModule, source: str, timeout_s: float) -> Task:
    """A task shell for observing a tree; never saved (its FAIL_TO_PASS is a placeholder)."""
    return Task(
        instance_id=f"probe__{module.name}",
        repo=module.name,
        problem_statement="probe",
        patch="probe",
        FAIL_TO_PASS=[module.test_path + PROBE_ID],
        PASS_TO_PASS=[],
        test_paths=[module.test_path],
        files={module.path: source, module.test_path: module.test_source},
        timeout_s=timeout_s,
        suite=SUITE,
    )


def observed_statuses(report: SandboxReport) -> dict[str, str] | None:
    """Status of every collected item of a finished run (None if the run did not finish)."""
    if report.run_status != "finished" or report.observations.collect_errors:
        return None
    items = report.observations.items
    ids = [i.nodeid for i in items]
    if len(set(ids)) != len(ids):
        return None
    return {i: o.status for i, o in expected_statuses(ids, items).items()}


def build_task(
    cand: Candidate, base: dict[str, str], mutated: SandboxReport, cfg: dict[str, Any]
) -> tuple[Task | None, str]:
    """The task for a candidate, or None with the reason it was rejected."""
    statuses = observed_statuses(mutated)
    if statuses is None:
        return None, f"mutated run unusable ({mutated.run_status})"
    if set(statuses) != set(base):
        return None, "mutated run collected other test ids"
    odd = sorted(s for s in statuses.values() if s not in ("passed", "failed"))
    if odd:
        return None, f"non-binary outcomes: {odd}"
    f2p = sorted(i for i, s in statuses.items() if s == "failed")
    p2p = sorted(i for i, s in statuses.items() if s == "passed")
    if not f2p or not p2p:
        return None, "no FAIL_TO_PASS" if not f2p else "no PASS_TO_PASS"
    witness = sorted(f2p, key=lambda i: ("[" in i, i))[0]
    message = next(
        p.message
        for item in mutated.observations.items
        if item.nodeid == witness
        for p in item.phases
        if p.when == "call"
    )
    module = cand.module
    files = {module.path: cand.mutated_source, module.test_path: module.test_source}
    task = Task(
        instance_id=cand.instance_id,
        repo=f"{cand.suite}/{module.name}",
        problem_statement=problem_statement(
            module.path, cand.function, witness, module.test_source, message
        ),
        patch=diff_trees({module.path: cand.mutated_source}, {module.path: module.source}),
        FAIL_TO_PASS=f2p,
        PASS_TO_PASS=p2p,
        statement_test=witness,
        test_paths=[module.test_path],
        files=files,
        timeout_s=float(cfg["timeout_s"]),
        suite=cand.suite,
        split=assign_split(cand.group_key, cfg["splits"]),
        meta={
            "seed_function": f"{module.name}.{cand.function}",
            "operator": cand.mutation.operator,
            "mutation_id": cand.mutation.mutation_id(),
            "line": cand.mutation.lineno,
            "generator_seed": int(cfg["seed"]),
        },
    )
    return task, ""


def seed_pool(cfg: dict[str, Any]) -> list[SeedModule]:
    """The suite's seed modules: the hand-written pool (generator 'minibugs'), or
    ``pool_modules`` generated modules of ``pool_functions`` functions (generator
    'procedural', :mod:`editcredit.data.procedural`)."""
    if cfg["generator"] == "procedural":
        return procedural_pool(
            int(cfg["seed"]), int(cfg["pool_modules"]), int(cfg["pool_functions"])
        )
    return load_pool()


def generate(
    cfg: dict[str, Any],
    grade_many: GradeMany,
    progress: Callable[[str], None] = print,
    suite: str = SUITE,
) -> tuple[list[Task], dict[str, int]]:
    """All validated tasks (sorted by id) and the rejection counts by reason."""
    pool = seed_pool(cfg)
    if cfg.get("modules"):
        unknown = sorted(set(cfg["modules"]) - {m.name for m in pool})
        if unknown:
            raise ValueError(f"suites.minibugs.modules: unknown pool modules {unknown}")
        pool = [m for m in pool if m.name in cfg["modules"]]
    vt = float(cfg["validation_timeout_s"])
    base_runs = settled_runs(grade_many, [(probe_task(m, m.source, vt), "") for m in pool])
    base: dict[str, dict[str, str]] = {}
    for module, run in zip(pool, base_runs, strict=True):
        statuses = observed_statuses(run)
        if statuses is None or any(s != "passed" for s in statuses.values()):
            raise RuntimeError(f"seed pool module {module.path}: its tests do not all pass")
        base[module.name] = statuses
    cands = candidates(pool, int(cfg["seed"]), int(cfg["mutants_per_function"]), suite)
    progress(f"{len(cands)} candidates from {len(pool)} modules")
    mutated_runs = settled_runs(
        grade_many, [(probe_task(c.module, c.mutated_source, vt), "") for c in cands]
    )
    rejected: dict[str, int] = {}
    built: list[Task] = []
    for cand, run in zip(cands, mutated_runs, strict=True):
        task, reason = build_task(cand, base[cand.module.name], run, cfg)
        if task is None:
            key = reason.split(" (")[0].split(":")[0]
            rejected[key] = rejected.get(key, 0) + 1
        else:
            built.append(task)
    gold_runs = settled_runs(grade_many, [(t, t.patch) for t in built])
    tasks = []
    for task, run in zip(built, gold_runs, strict=True):
        ok = (
            run.run_status == "finished"
            and judge(task.FAIL_TO_PASS, task.PASS_TO_PASS, run.observations.items).resolved == 1
        )
        if ok:
            tasks.append(task)
        else:
            rejected["gold does not score 1"] = rejected.get("gold does not score 1", 0) + 1
    progress(f"{len(tasks)} tasks kept; rejected: {rejected}")
    return sorted(tasks, key=lambda t: t.instance_id), rejected
