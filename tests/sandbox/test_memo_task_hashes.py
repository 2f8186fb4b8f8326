"""The memo hashes each task object once: its keys are grading_key's, for the same object,
an equal copy and a visible view alike, and the kept hashes stay bounded."""

from __future__ import annotations

from taskfactory import make_calc_task

from editcredit.agent.minibugs_env import visible_view
from editcredit.sandbox import memo as memo_module
from editcredit.sandbox.memo import GradingMemo, grading_key


def test_the_kept_hash_is_the_tasks_own(monkeypatch) -> None:
    memo = GradingMemo(sandbox=None)
    task = make_calc_task()
    for t in (task, task, make_calc_task(), visible_view(task), task):
        assert memo._task_sha256(t) == t.sha256()
        assert grading_key(t, "p", None, memo._task_sha256(t)) == grading_key(t, "p", None)
    monkeypatch.setattr(memo_module, "TASK_HASHES_KEPT", 2)
    for _ in range(5):
        memo._task_sha256(make_calc_task())
    assert len(memo._task_hashes) <= 2
