"""The attempts journal: append-only, durable lines, torn tails, identity."""

from __future__ import annotations

import json

import pytest
from record_shapes import assert_record

from editcredit.evaluation.journal import (
    Journal,
    JournalError,
    JournalHeader,
    JournalLine,
    open_journal,
)
from editcredit.evaluation.sandboxes import FaultySandbox
from editcredit.evaluation.slots import Attempt


def attempt(iid="t", sample=0, index=0, kind="generate", outcome="patch", **kw):
    base = dict(started="s", finished="f", seconds=0.0, patch="", patch_sha256="x")
    return Attempt(
        instance_id=iid, sample=sample, index=index, kind=kind, outcome=outcome, **{**base, **kw}
    )


def test_replay_returns_the_attempts_by_slot_in_order(tmp_path):
    j = Journal(tmp_path, {"a": 1})
    j.append([attempt(), attempt(sample=1)])
    j.append([attempt(index=1, kind="grade", outcome="report", of=0, verdict=0)])
    again = Journal(tmp_path, {"a": 1}).replay()
    assert [a.kind for a in again[("t", 0)]] == ["generate", "grade"]
    assert [a.kind for a in again[("t", 1)]] == ["generate"]
    first, *rest = [json.loads(x) for x in j.path.read_text().splitlines()]
    assert_record(first, JournalHeader)
    assert first["header"] == {"a": 1} and first["key"] == j.key
    assert_record(rest, list[JournalLine])
    assert len(rest) == 3


def test_a_torn_last_line_is_skipped_and_the_next_append_starts_a_new_line(tmp_path):
    j = Journal(tmp_path, {"a": 1})
    j.append([attempt()])
    with j.path.open("a") as fh:
        fh.write('{"attempt": {"instance_id": "t", "sam')  # a crash mid-line
    j2 = Journal(tmp_path, {"a": 1})
    j2.append([attempt(index=1, kind="grade", outcome="report", of=0, verdict=1)])
    history = j2.replay()
    assert j2.torn_lines == 1
    assert [a.index for a in history[("t", 0)]] == [0, 1]


def test_a_journal_of_another_identity_is_refused(tmp_path):
    Journal(tmp_path, {"a": 1})
    with pytest.raises(JournalError, match="belongs to key"):
        Journal(tmp_path, {"a": 2})


def test_a_gap_in_attempt_indices_is_an_error_naming_the_line(tmp_path):
    j = Journal(tmp_path, {"a": 1})
    j.append([attempt(index=1)])
    with pytest.raises(JournalError, match="line 2: attempt 1 of slot"):
        j.replay()


def test_fault_injection_is_deterministic_by_seed(calc_task):
    class Box:
        calls = 0

        def grade(self, task, patch):
            Box.calls += 1
            return "ran"

    def pattern(seed):
        faulty = FaultySandbox(Box(), rate=0.5, seed=seed, mode="report")
        out = []
        for i in range(40):
            report = faulty.grade(calc_task, f"patch {i % 7}")
            out.append(report == "ran")
        return out, faulty.injected

    a, injected = pattern(1)
    assert pattern(1) == (a, injected) and pattern(2)[0] != a
    assert 10 < injected < 30
    with pytest.raises(ValueError):
        FaultySandbox(Box(), rate=1.5, seed=0, mode="report")


GRADER_A = {"backend": "docker", "image": "img", "image_id": "sha256:aaa", "pytest": "7.2.1"}
GRADER_B = {**GRADER_A, "image_id": "sha256:bbb"}
SLICE = {"model": "m", "evalset": "holdout", "seed": 1}


def _started(root, identity):
    """A journal with one attempt recorded, opened the way the job opens it."""
    journal = open_journal(root, identity, "new_journal")
    journal.append([attempt()])
    return journal


def test_the_same_grader_resumes_its_journal(tmp_path):
    first = _started(tmp_path, {**SLICE, "grader": GRADER_A})
    again = open_journal(tmp_path, {**SLICE, "grader": GRADER_A}, "refuse")
    assert again.path == first.path and list(again.replay()) == [("t", 0)]


def test_another_grader_starts_a_new_journal_and_keeps_the_old_one(tmp_path):
    old = _started(tmp_path, {**SLICE, "grader": GRADER_A})
    before = old.path.read_bytes()
    notes = []
    new = open_journal(tmp_path, {**SLICE, "grader": GRADER_B}, "new_journal", notes.append)
    assert new.path != old.path and new.replay() == {}  # nothing of the old grader's
    assert old.path.read_bytes() == before
    assert notes == [
        f"{old.path}: recorded under another grader "
        "(image_id: 'sha256:aaa' -> 'sha256:bbb'); kept, not resumed"
    ]


@pytest.mark.parametrize(
    "old_grader, differs",
    [
        (GRADER_A, "image_id: 'sha256:aaa' -> 'sha256:bbb'"),
        ({**GRADER_B, "pytest": "8.0.0"}, "pytest: '8.0.0' -> '7.2.1'"),
        (None, "grader: not recorded"),  # a journal from before graders were recorded
    ],
)
def test_refuse_names_the_journal_and_what_differs(tmp_path, old_grader, differs):
    header = {**SLICE, "grader": old_grader} if old_grader else dict(SLICE)
    old = Journal(tmp_path / "0123456789abcdef", header)
    with pytest.raises(JournalError) as err:
        open_journal(tmp_path, {**SLICE, "grader": GRADER_B}, "refuse")
    assert str(err.value).startswith(f"{old.path}: ")
    assert differs in str(err.value) and "on_grader_change is 'refuse'" in str(err.value)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["0123456789abcdef"]  # none started


def test_a_journal_of_another_slice_is_no_grader_change(tmp_path):
    _started(tmp_path, {**SLICE, "seed": 2, "grader": GRADER_A})
    journal = open_journal(tmp_path, {**SLICE, "grader": GRADER_B}, "refuse")
    assert journal.replay() == {}


def test_a_choice_other_than_new_journal_or_refuse_is_refused(tmp_path):
    with pytest.raises(ValueError, match="evaluation.on_grader_change: 'keep' is not one of"):
        open_journal(tmp_path, {**SLICE, "grader": GRADER_A}, "keep")
    with pytest.raises(JournalError, match="must name its grader"):
        open_journal(tmp_path, dict(SLICE), "new_journal")
