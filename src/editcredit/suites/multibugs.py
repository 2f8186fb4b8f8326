"""Generate multibugs tasks: single-bug minibugs tasks beside tasks that plant 2 or 3 bugs.

The single-bug tasks are minibugs' own (:func:`editcredit.suites.minibugs.generate`,
under this suite's name). A multi-bug task combines validated single bugs of DIFFERENT
functions of one module whose functions share a split (splits stay by seed function: no
function's bugs are in two splits). Each bug keeps the FAIL_TO_PASS ids its single-bug task
observed; the task's FAIL_TO_PASS is their union, so fixing one bug passes part of it. A
function's split is drawn as minibugs draws it (:data:`SPLIT_FAMILY`'s group key), so with the
same split fractions a function sits in the same split in both suites and they can be used
together without a function on two sides.

A combination is kept only when, under real sandbox runs,

- the bugs' FAIL_TO_PASS lists are disjoint (predicted from the single-bug runs),
- the tree with every bug planted fails exactly their union and passes every other test,
- the gold patch (every bug reverted) scores 1, and
- the per-bug control holds for each bug: its fix alone (the other bugs left in) passes its
  own FAIL_TO_PASS ids and PASS_TO_PASS and fails every other bug's FAIL_TO_PASS ids
  (:func:`editcredit.grading.controls.bug_control_deviation`).

Any other outcome means the bugs interact; the combination is dropped and counted under
:data:`INTERACTING`. The multi-bug parameters are fixed here (not yet config settings):

- :data:`BUG_COUNTS`: how many bugs a multi-bug task plants (drawn uniformly);
- :data:`MULTI_PER_SINGLE`: multi-bug combinations drawn per single-bug task of a (module,
  split) group, so that about half the suite is multi-bug;
- :data:`DRAWS_PER_TARGET`: how many draws a group may spend per wanted combination (draws
  that repeat a combination or whose FAIL_TO_PASS lists overlap are spent too).
"""

from __future__ import annotations

import hashlib
import random
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from editcredit.data.minibugs.pool_files import SeedModule
from editcredit.data.mutations import Mutation, apply_mutation
from editcredit.data.splits import assign_split
from editcredit.data.task import PlantedBug, Task
from editcredit.grading.controls import bug_control_deviation
from editcredit.grading.verdicts import judge
from editcredit.sandbox.patches import diff_trees
from editcredit.suites.minibugs import (
    Candidate,
    GradeMany,
    candidates,
    generate,
    observed_statuses,
    probe_task,
    seed_pool,
    settled_runs,
)

SUITE = "multibugs"
BUG_COUNTS = (2, 3)
MULTI_PER_SINGLE = 1.0
DRAWS_PER_TARGET = 10
#: The suite whose group keys draw the splits (a function's split is the one it has there).
SPLIT_FAMILY = "minibugs"
#: The rejection count of combinations whose bugs interact.
INTERACTING = "bugs interact"
#: The generator parameters recorded in the manifest (``generator.multi``).
PARAMETERS = {
    "bug_counts": list(BUG_COUNTS),
    "multi_per_single": MULTI_PER_SINGLE,
    "draws_per_target": DRAWS_PER_TARGET,
}


def plant_bugs(source: str, mutations: Sequence[Mutation]) -> str:
    """``source`` with every mutation applied; the mutations must be in distinct functions.

    They are applied from the last position up, so each span is found where the original
    source has it. Raises ValueError for two mutations in one function or overlapping spans.
    """
    functions = [m.function for m in mutations]
    if len(set(functions)) != len(functions):
        raise ValueError(f"two bugs in one function: {functions}")
    ordered = sorted(mutations, key=lambda m: (m.lineno, m.col), reverse=True)
    for later, earlier in zip(ordered, ordered[1:], strict=False):
        if (earlier.end_lineno, earlier.end_col) > (later.lineno, later.col):
            raise ValueError(f"{earlier.mutation_id()} overlaps {later.mutation_id()}")
    for m in ordered:
        source = apply_mutation(source, m)
    return source


def without_bug(source: str, mutations: Sequence[Mutation], index: int) -> str:
    """The tree of the per-bug control: every bug planted but bug ``index``."""
    return plant_bugs(source, [m for k, m in enumerate(mutations) if k != index])


def disjoint(per_bug_f2p: Sequence[Sequence[str]]) -> bool:
    """Is each FAIL_TO_PASS id owned by one bug only?"""
    owned = [i for ids in per_bug_f2p for i in ids]
    return len(set(owned)) == len(owned)


def interaction(
    statuses: dict[str, str], base_ids: set[str], per_bug_f2p: Sequence[Sequence[str]]
) -> str:
    """Why the all-bugs run shows interacting bugs ('' when it fails exactly the union of the
    bugs' FAIL_TO_PASS ids and passes every other test of the module)."""
    if set(statuses) != base_ids:
        return "collected other test ids"
    union = {i for ids in per_bug_f2p for i in ids}
    failed = {i for i, s in statuses.items() if s != "passed"}
    if failed != union:
        return f"failed {len(failed)} tests, the bugs alone {len(union)}"
    return ""


@dataclass(frozen=True)
class MultiCandidate:
    """A combination of single bugs (sorted by function position) and their single tasks."""

    module: SeedModule
    bugs: tuple[Candidate, ...]
    singles: tuple[Task, ...]
    suite: str = SUITE

    @property
    def mutations(self) -> list[Mutation]:
        return [c.mutation for c in self.bugs]

    @property
    def mutated_source(self) -> str:
        return plant_bugs(self.module.source, self.mutations)

    @property
    def instance_id(self) -> str:
        key = "+".join(m.mutation_id() for m in self.mutations)
        digest = hashlib.sha256(key.encode()).hexdigest()[:8]
        return f"{self.suite}__{self.module.name}__{len(self.bugs)}bugs__{digest}"


def draw_combinations(
    singles: Sequence[tuple[Candidate, Task]], seed: int, suite: str = SUITE
) -> tuple[list[MultiCandidate], int]:
    """Seeded combinations per (module, split) group and the count of draws dropped because
    their bugs' FAIL_TO_PASS lists overlap (interacting bugs). Each group draws
    ``MULTI_PER_SINGLE`` times its single tasks' count from its own RNG."""
    groups: dict[tuple[str, str], dict[str, list[tuple[Candidate, Task]]]] = defaultdict(dict)
    modules: dict[str, SeedModule] = {}
    for cand, task in singles:
        modules[cand.module.name] = cand.module
        groups[(cand.module.name, task.split)].setdefault(cand.function, []).append((cand, task))
    out: list[MultiCandidate] = []
    overlapping = 0
    for (module, split), by_function in sorted(groups.items()):
        functions = sorted(by_function)
        if len(functions) < min(BUG_COUNTS):
            continue
        rng = random.Random(f"{seed}:{module}:{split}:multi")
        target = round(MULTI_PER_SINGLE * sum(len(v) for v in by_function.values()))
        seen: set[tuple[str, ...]] = set()
        kept = 0
        for _ in range(target * DRAWS_PER_TARGET):
            if kept >= target:
                break
            k = min(rng.choice(BUG_COUNTS), len(functions))
            chosen = [rng.choice(by_function[f]) for f in sorted(rng.sample(functions, k))]
            chosen.sort(key=lambda ct: (ct[0].mutation.lineno, ct[0].mutation.col))
            key = tuple(c.mutation.mutation_id() for c, _ in chosen)
            if key in seen:
                continue
            seen.add(key)
            if not disjoint([t.FAIL_TO_PASS for _, t in chosen]):
                overlapping += 1
                continue
            bugs = tuple(c for c, _ in chosen)
            out.append(MultiCandidate(modules[module], bugs, tuple(t for _, t in chosen), suite))
            kept += 1
    return out, overlapping


def build_multi_task(cand: MultiCandidate, cfg: dict[str, Any]) -> Task:
    """The task record of a combination whose all-bugs run showed no interaction."""
    module, source = cand.module, cand.mutated_source
    bugs = []
    for k, (bug, single) in enumerate(zip(cand.bugs, cand.singles, strict=True)):
        fixed = without_bug(module.source, cand.mutations, k)
        bugs.append(
            PlantedBug(
                function=bug.function,
                FAIL_TO_PASS=list(single.FAIL_TO_PASS),
                patch=diff_trees({module.path: source}, {module.path: fixed}),
                statement_test=single.statement_test,
                meta={
                    "operator": bug.mutation.operator,
                    "mutation_id": bug.mutation.mutation_id(),
                    "line": bug.mutation.lineno,
                    "single_instance_id": single.instance_id,
                },
            )
        )
    f2p = sorted(i for b in bugs for i in b.FAIL_TO_PASS)
    p2p = sorted(set(cand.singles[0].FAIL_TO_PASS + cand.singles[0].PASS_TO_PASS) - set(f2p))
    head = f"{len(bugs)} functions of `{module.path}` do not behave as their tests expect.\n"
    statement = head + "".join(f"\n{s.problem_statement}" for s in cand.singles)
    return Task(
        instance_id=cand.instance_id,
        repo=f"{cand.suite}/{module.name}",
        problem_statement=statement,
        patch=diff_trees({module.path: source}, {module.path: module.source}),
        FAIL_TO_PASS=f2p,
        PASS_TO_PASS=p2p,
        statement_test=bugs[0].statement_test,
        test_paths=[module.test_path],
        files={module.path: source, module.test_path: module.test_source},
        timeout_s=float(cfg["timeout_s"]),
        suite=cand.suite,
        split=cand.singles[0].split,
        meta={
            "seed_functions": [f"{module.name}.{b.function}" for b in bugs],
            "n_bugs": len(bugs),
            "generator_seed": int(cfg["seed"]),
        },
        bugs=bugs,
    )


def function_split(seed_function: str, fractions: dict[str, float]) -> str:
    """The split of a seed function (``module.function``), keyed as in :data:`SPLIT_FAMILY`."""
    return assign_split(f"{SPLIT_FAMILY}:{seed_function}", fractions)


def _count(rejected: dict[str, int], reason: str, n: int = 1) -> None:
    if n:
        rejected[reason] = rejected.get(reason, 0) + n


def generate_multibugs(
    cfg: dict[str, Any],
    grade_many: GradeMany,
    progress: Callable[[str], None] = print,
    suite: str = SUITE,
) -> tuple[list[Task], dict[str, int]]:
    """All validated single- and multi-bug tasks (sorted by id) and the rejection counts by
    reason (the single-bug ones as minibugs counts them, plus :data:`INTERACTING`, 0 included)."""
    singles, rejected = generate(cfg, grade_many, progress, suite=suite)
    singles = [
        t.model_copy(update={"split": function_split(t.meta["seed_function"], cfg["splits"])})
        for t in singles
    ]
    pool = {m.name: m for m in seed_pool(cfg)}
    by_id = {
        c.instance_id: c
        for c in candidates(
            [pool[name] for name in sorted({t.repo.split("/", 1)[1] for t in singles})],
            int(cfg["seed"]),
            int(cfg["mutants_per_function"]),
            suite,
        )
    }
    combos, overlapping = draw_combinations(
        [(by_id[t.instance_id], t) for t in singles], cfg["seed"]
    )
    rejected[INTERACTING] = overlapping  # recorded even when none interact
    progress(f"{len(combos)} multi-bug candidates ({overlapping} overlapping draws dropped)")
    vt = float(cfg["validation_timeout_s"])
    runs = settled_runs(
        grade_many, [(probe_task(c.module, c.mutated_source, vt), "") for c in combos]
    )
    built: list[Task] = []
    for combo, run in zip(combos, runs, strict=True):
        statuses = observed_statuses(run)
        base_ids = set(combo.singles[0].FAIL_TO_PASS + combo.singles[0].PASS_TO_PASS)
        f2p = [t.FAIL_TO_PASS for t in combo.singles]
        if statuses is None or interaction(statuses, base_ids, f2p):
            _count(rejected, INTERACTING)
        else:
            built.append(build_multi_task(combo, cfg))
    jobs = [(t, t.patch) for t in built] + [(t, b.patch) for t in built for b in t.bugs or ()]
    reports = settled_runs(grade_many, jobs)
    gold, per_bug = reports[: len(built)], iter(reports[len(built) :])
    kept = []
    for task, run in zip(built, gold, strict=True):
        bug_runs = [next(per_bug) for _ in task.bugs or ()]
        resolved = run.run_status == "finished" and (
            judge(task.FAIL_TO_PASS, task.PASS_TO_PASS, run.observations.items).resolved == 1
        )
        if not resolved:
            _count(rejected, "gold does not score 1")
            continue
        if any(
            (statuses := observed_statuses(r)) is None
            or bug_control_deviation(task, k, statuses) is not None
            for k, r in enumerate(bug_runs)
        ):
            _count(rejected, INTERACTING)
            continue
        kept.append(task)
    tasks = sorted(singles + kept, key=lambda t: t.instance_id)
    progress(f"{len(kept)} multi-bug tasks kept beside {len(singles)} single-bug; {rejected}")
    return tasks, rejected
