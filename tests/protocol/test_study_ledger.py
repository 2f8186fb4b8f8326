"""A study's budget holds for all its jobs together: their spend is summed in one append-only
ledger under a file lock, parallel jobs neither lose nor double-count a unit, and a job stops
when the study's spend (not its own) would cross a cap (METHOD §11)."""

from __future__ import annotations

import json
import multiprocessing

import pytest

from editcredit.protocol.budget import BudgetExceeded, StudyLedger, study_guard

UNITS = 300


def _append_units(path: str, job: str, start, gradings: int) -> None:
    ledger = StudyLedger(path)
    start.wait()
    for k in range(UNITS):
        ledger.append(job, f"{job}-attempt", "step", {"gradings": gradings, "steps": 1}, k % 2)


def test_two_processes_appending_at_once_lose_and_double_count_nothing(tmp_path):
    path = tmp_path / "stop.ledger.jsonl"
    ctx = multiprocessing.get_context("spawn")
    start = ctx.Barrier(2)
    jobs = [
        ctx.Process(target=_append_units, args=(str(path), name, start, g))
        for name, g in (("stop-base", 1), ("stop-M-s42", 3))
    ]
    for p in jobs:
        p.start()
    for p in jobs:
        p.join(120)
        assert p.exitcode == 0
    lines = path.read_text().splitlines()
    assert len(lines) == 2 * UNITS
    records = [json.loads(line) for line in lines]  # no interleaved writes
    assert {r["job"] for r in records} == {"stop-base", "stop-M-s42"}
    spent, infra = StudyLedger(path).total()
    assert spent["gradings"] == UNITS * (1 + 3)
    assert spent["steps"] == 2 * UNITS
    assert infra == 2 * (UNITS // 2)


def test_a_reader_catches_up_with_what_others_appended_since(tmp_path):
    path = tmp_path / "s.ledger.jsonl"
    reader, writer = StudyLedger(path), StudyLedger(path)
    writer.append("a", "x", "step", {"gradings": 2}, 0)
    assert reader.total()[0]["gradings"] == 2
    writer.append("b", "y", "step", {"gradings": 5}, 1)
    spent, infra = reader.total()
    assert (spent["gradings"], infra) == (7, 1)
    assert reader.total() == (spent, infra)  # each line read once, not counted twice


def test_a_torn_line_is_skipped_and_the_next_record_starts_a_fresh_line(tmp_path):
    path = tmp_path / "s.ledger.jsonl"
    StudyLedger(path).append("a", "x", "step", {"gradings": 1}, 0)
    with path.open("ab") as fh:
        fh.write(b'{"job": "killed", "cost": {"grad')  # a writer killed mid-line
    ledger = StudyLedger(path)
    ledger.append("b", "y", "step", {"gradings": 4}, 0)
    assert ledger.total()[0]["gradings"] == 5
    assert ledger.torn_lines == 1


def test_the_study_cap_counts_every_job_and_stops_the_one_that_would_cross_it(tmp_path):
    first = study_guard("stop", "stop-base", {"gradings": 5}, receipt_dir=tmp_path)
    for k in range(3):
        first.check(f"grading {k}")
        first.add({"gradings": 1, "wall_seconds": 0.1})
    second = study_guard("stop", "stop-M-s42", {"gradings": 5}, receipt_dir=tmp_path)
    second.check("grading 0")  # the study spent 3: one more is 4
    second.add({"gradings": 1})
    second.check("grading 1")  # 4 + 1 = 5: exactly the cap
    second.add({"gradings": 1})
    with pytest.raises(BudgetExceeded, match="the study's spend") as err:
        second.check("grading 2")  # 6 > 5, though this job spent only 2
    receipt = json.loads(err.value.receipt.read_text())
    from record_shapes import assert_record

    from editcredit.protocol.budget import BudgetLedger, BudgetStopReceipt

    assert_record(receipt, BudgetStopReceipt, ordered=False)
    assert "study" in receipt
    assert_record(second.ledger(), BudgetLedger)
    assert receipt["scope"] == "stop-M-s42"
    assert receipt["spent"]["gradings"] == 2  # the job's own spend
    assert receipt["study"]["spent"]["gradings"] == 5  # every job's
    assert receipt["crossed"]["gradings"] == {"cap": 5.0, "spent": 5.0, "projected": 6.0}
    # the first job is stopped too: the study's cap is spent
    with pytest.raises(BudgetExceeded):
        first.check("grading 3")
    assert len(list(tmp_path.glob("stop-*.json"))) == 2
    # a stopped guard answers every later check with the same receipt, writing no other
    with pytest.raises(BudgetExceeded) as again:
        second.check("grading 3")
    assert again.value.receipt == err.value.receipt
    assert len(list(tmp_path.glob("stop-*.json"))) == 2


def test_without_a_shared_ledger_a_job_counts_only_its_own_spend(tmp_path):
    from editcredit.protocol.budget import job_guard

    a = job_guard(
        "eval-base-holdout", {"steps": 2}, "config budgets.evaluation", receipt_dir=tmp_path
    )
    b = job_guard(
        "eval-M-s42-holdout", {"steps": 2}, "config budgets.evaluation", receipt_dir=tmp_path
    )
    for guard in (a, b):
        for k in (1, 2):
            guard.check(k)
            guard.add({"tokens": 10})
    assert a.ledger()["spent"]["steps"] == b.ledger()["spent"]["steps"] == 2
    assert "study" not in a.ledger()
    assert not list(tmp_path.iterdir())
