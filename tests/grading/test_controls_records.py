"""The controls' records: a suite's summary has the keys of ControlsSummary in its order (the
multi-bug counts first, only for suites with multi-bug tasks), and a task's record those of
ControlRecord (bugs only on a multi-bug task)."""

from __future__ import annotations

from editcredit.grading.controls import ControlRecord, ControlsSummary, summarize, training_pool


def _control(task: str, split: str, deviations: list[str], bugs: int = 0) -> ControlRecord:
    """A task's controls as run_controls writes them (bugs only on a multi-bug task)."""
    record: dict = {
        "instance_id": task,
        "task_sha256": "0" * 64,
        "split": split,
        "gold": {"resolved": 1},
        "empty": {"resolved": 0},
    }
    if bugs:
        record["bugs"] = [{"function": f"f{i}", "report": {}} for i in range(bugs)]
    return record | {"flagged": bool(deviations), "deviations": deviations}


def test_a_single_bug_suite_summary_keeps_its_keys():
    controls = [_control("a", "train", []), _control("b", "dev", ["gold: unresolved"])]
    summary = summarize(controls, "minibugs")
    optional = ("multi_bug_tasks", "bug_controls", "bug_controls_ok", "training_pool")
    assert list(summary) == [k for k in ControlsSummary.__annotations__ if k not in optional]
    assert summary["flagged_ids"] == ["b"] and summary["deviations_by_reason"] == {
        "gold: unresolved": 1
    }
    assert training_pool(["a", "b"], summary, exclude_flagged=True) == ["a"]


def test_a_multi_bug_suite_summary_counts_its_bug_controls_first():
    multi = _control("m", "train", ["bug 1 (f1): infrastructure failure"], bugs=2)
    assert list(multi) == list(ControlRecord.__annotations__)
    summary = summarize([_control("a", "train", []), multi], "multibugs")
    assert list(summary) == [k for k in ControlsSummary.__annotations__ if k != "training_pool"]
    assert (summary["multi_bug_tasks"], summary["bug_controls"], summary["bug_controls_ok"]) == (
        1,
        2,
        1,
    )
