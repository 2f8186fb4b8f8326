"""The minibugs environment: a file tree in memory, edited by unique fragments, graded on demand."""

from __future__ import annotations

import re
from typing import cast

from editcredit.agent.actions import (
    FormatError,
    apply_action_edit,
    function_span,
    numbered,
    parse_action,
)
from editcredit.agent.candidates import (
    TRY_SCOPES,
    Candidate,
    candidate_listing,
    listed_candidates,
    seed_functions,
    tree_with,
    tried_at_location,
)
from editcredit.agent.protocol import Environment, TurnRecord, content_hash
from editcredit.data.task import Task
from editcredit.grading.grader import GradingReport, observe_tree
from editcredit.sandbox.base import Sandbox
from editcredit.sandbox.patches import diff_trees

MAX_FAILURES_SHOWN = 2


def function_source(source: str, function: str, numbers: bool = False) -> str:
    """The text of one top-level function (each line prefixed by its line number in
    ``source`` with ``numbers``)."""
    span = function_span(source, function)
    if span is None:
        raise KeyError(f"no function {function!r}")
    text = source[span[0] : span[1]].rstrip("\n")
    return numbered(text, source.count("\n", 0, span[0]) + 1) if numbers else text


def summarize_report(report: GradingReport) -> str:
    """A short observation of a test run: counts and the first failures (never the fix)."""
    if report.outcome == "infrastructure_failure":
        return "tests: the test run failed (infrastructure); try again or submit"
    if report.verdict == "patch_does_not_apply":
        return "tests: the tree could not be prepared"
    if report.tampering:
        return "tests: the run's reports were tampered with (none can be trusted)"
    statuses = {i: t["status"] for i, t in report.tests.items()}
    bad = sorted(i for i, s in statuses.items() if s != "passed")
    head = f"tests: {len(statuses) - len(bad)} passed, {len(bad)} failed"
    if not bad:
        return head
    messages = _failure_messages(report)
    shown = [
        f"FAILED {i.split('::', 1)[1]}: {messages.get(i, statuses[i])}"
        for i in bad[:MAX_FAILURES_SHOWN]
    ]
    return "\n".join([head, *shown])


#: the sandbox's per-grading work directory (random) up to the task tree, e.g.
#: ``/spool/jobs/job-x1y2z3/tree/``: dropped so that observations name tree paths only and the
#: same tree always reads the same (trajectories reproduce token for token)
_WORKDIR = re.compile(r"""[^\s"']*/tree/""")


def _failure_messages(report: GradingReport) -> dict[str, str]:
    out: dict[str, str] = {}
    if report.sandbox is None:
        return out
    for item in report.sandbox.observations.items:
        for phase in item.phases:
            if phase.outcome == "failed" and phase.message:
                first = _WORKDIR.sub("", phase.message.strip().splitlines()[0])
                out.setdefault(item.nodeid, first[:80])
    return out


def visible_tests(task: Task, every_bug: bool = False) -> list[str]:
    """What the agent's test action runs: :meth:`Task.visible_tests`, or with ``every_bug``
    (``agent.try_scope: function``) each planted bug's statement test of a multi-bug task, in
    the order of its bugs, then PASS_TO_PASS."""
    if not (every_bug and task.bugs):
        return task.visible_tests()
    shown = [b.statement_test for b in task.bugs if b.statement_test]
    return [*dict.fromkeys(shown), *task.PASS_TO_PASS]


def visible_view(task: Task, every_bug: bool = False) -> Task:
    """The task as the agent's test action judges it: its visible tests are the expected ids."""
    update: dict[str, object] = {"FAIL_TO_PASS": visible_tests(task, every_bug), "PASS_TO_PASS": []}
    if every_bug:  # the bugs' own ids are no longer the view's expected ids
        update["bugs"] = None
    return task.model_copy(update=update)


def run_selection(task: Task, every_bug: bool = False) -> list[str] | None:
    """The node ids the agent's test run executes, or None when that is every expected test."""
    visible = visible_tests(task, every_bug)
    return None if set(visible) == {*task.FAIL_TO_PASS, *task.PASS_TO_PASS} else visible


class MinibugsEnv(Environment):
    """Fragment-edit environment over a task's inline tree; tests run through the sandbox."""

    def __init__(
        self,
        sandbox: Sandbox,
        max_turns: int,
        numbered_lines: bool,
        candidates: bool,
        try_scope: str,
    ) -> None:
        if try_scope not in TRY_SCOPES:
            raise ValueError(f"try_scope {try_scope!r} is not one of {TRY_SCOPES}")
        self.sandbox = sandbox
        self.max_turns = max_turns
        self.numbered_lines = numbered_lines
        self.shows_candidates = candidates
        self.try_scope = try_scope
        """'file': a try undoes every earlier try; 'function': only earlier tries at its
        function, and a multi-bug task shows every bug's function and statement test."""
        self.candidates: list[Candidate] = []
        self._task: Task | None = None

    def reset(self, task: Task) -> str:
        if task.files is None:
            raise ValueError(f"{task.instance_id}: MinibugsEnv needs an inline tree")
        self._task = task
        self.tree: dict[str, str] = dict(task.files)
        self.store: dict[str, str] = {content_hash(t): t for t in self.tree.values()}
        self.begin_episode()
        self.test_runs = 0
        self.infra_failures = 0  # test runs that failed for infrastructure reasons
        self.candidates = listed_candidates(task, self.try_scope) if self.shows_candidates else []
        return self.initial_observation(task)

    def initial_observation(self, task: Task) -> str:
        if self.try_scope == "function" and task.meta.get("seed_functions"):
            return self._located_observation(task)
        module, _, function = task.meta.get("seed_function", "").partition(".")
        path = f"{module}.py"
        if function and path in self.tree:
            view = f"{path}:\n{function_source(self.tree[path], function, self.numbered_lines)}"
        else:
            show = numbered if self.numbered_lines else str
            view = "\n".join(
                f"{p}:\n{show(self.tree[p])}" for p in sorted(self.tree) if p not in task.test_paths
            )
        shown = f"{task.problem_statement.strip()}\n\n{view}"
        if self.shows_candidates:
            shown += "\n\n" + candidate_listing(self.candidates)
        return shown

    def _located_observation(self, task: Task) -> str:
        """The statement (each bug's failing test), every seed function in the order of
        ``meta.seed_functions`` and the candidates of all of them."""
        views = [
            f"{path}:\n{function_source(self.tree[path], function, self.numbered_lines)}"
            for path, function in seed_functions(task)
            if path in self.tree
        ]
        shown = "\n\n".join([task.problem_statement.strip(), *views])
        if self.shows_candidates:
            shown += "\n\n" + candidate_listing(self.candidates)
        return shown

    def step(self, action_text: str) -> tuple[str, bool]:
        if self._task is None or self._end_reason:
            raise RuntimeError("step() after the episode ended or before reset()")
        record = TurnRecord(turn=len(self._turns), action_text=action_text, kind="format_error")
        try:
            action = parse_action(action_text)
            record.kind = action.kind
            if action.kind == "edit":
                record.changes, observation = self._edit(action)
            elif action.kind == "try":
                record.changes, observation = self._try(action.candidate)
            elif action.kind == "run":
                self.test_runs += 1
                observation = self._run_visible()
            else:
                observation = "submitted"
                self.end("submit")
        except FormatError as exc:
            record.kind, record.error = "format_error", str(exc)
            observation = f"format error: {exc}"
        record.observation = observation
        self._turns.append(record)
        if not self._end_reason and len(self._turns) >= self.max_turns:
            self.end("turn_budget")
        return observation, bool(self._end_reason)

    def _run_visible(self) -> str:
        """Run the task's visible tests only (METHOD §2): the statement's FAIL_TO_PASS test
        and PASS_TO_PASS. The other FAIL_TO_PASS ids grade the final patch, never run here."""
        task = self._task
        assert task is not None
        every_bug = self.try_scope == "function"
        if not visible_tests(task, every_bug):
            return "tests: this task has no visible tests"
        # None selects every expected test: observe_tree passes it on to
        # sandbox.base.observe_selected, which takes list[str] | None
        select = cast(list[str], run_selection(task, every_bug))
        view = visible_view(task, every_bug)
        report = observe_tree(view, self.final_patch(), self.sandbox, select)
        self.infra_failures += report.outcome == "infrastructure_failure"
        return summarize_report(report)

    def _edit(self, action):
        path = action.path
        if path not in self.tree:  # parsed, so not a format error (METHOD §4): a no-op
            return {}, f"no file {path}; nothing changed"
        before = self.tree[path]
        after, why = apply_action_edit(before, action)
        if after is None:
            return {}, f"{why} in {path}; nothing changed"
        if after == before:
            return {}, f"{path} unchanged"
        self.tree[path] = after
        self.store[content_hash(after)] = after
        return {path: (content_hash(before), content_hash(after))}, f"{path} edited"

    def _try(self, number: int):
        if not self.shows_candidates:  # parsed, so not a format error: a no-op
            return {}, "no candidate fixes are shown; nothing changed"
        if not 1 <= number <= len(self.candidates):
            return {}, f"no candidate {number}; nothing changed"
        assert self._task is not None and self._task.files is not None
        candidate = self.candidates[number - 1]
        path = candidate.path
        before = self.tree[path]
        if self.try_scope == "function":
            after = tried_at_location(self._task.files, before, candidate)
        else:
            after = tree_with(self._task.files, candidate)
        if after == before:
            return {}, f"candidate {number} is already applied; {path} unchanged"
        self.tree[path] = after
        self.store[content_hash(after)] = after
        return {path: (content_hash(before), content_hash(after))}, f"candidate {number} applied"

    def final_patch(self) -> str:
        assert self._task is not None and self._task.files is not None
        return diff_trees(self._task.files, self.tree)
