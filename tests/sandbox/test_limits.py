"""Per-test limits from gold-run times (METHOD §6), the run's budget, the recorded times."""

from __future__ import annotations

import json

import pytest

from editcredit.sandbox.limits import (
    GoldTimes,
    GoldTimesBook,
    LimitSettings,
    load_gold_times,
    run_budget_s,
)
from editcredit.sandbox.limits import (
    per_test_limits as limits_of,
)
from editcredit.sandbox.sentinels import make_sentinels

SETTINGS = LimitSettings(factor=10, floor_s=5, collect_factor=4, collect_floor_s=10, max_timeouts=2)


@pytest.mark.parametrize(
    "gold,timeout_factor,tests,default_s,collect_s",
    [
        # fast tests: the floor; slow ones: factor x their own time
        (GoldTimes(0.5, {"a": 0.01, "b": 2.0}), 1.0, {"a": 5.0, "b": 20.0}, 20.0, 10.0),
        # slow collection: collect_factor x the gold collection
        (GoldTimes(4.0, {"a": 0.01}), 1.0, {"a": 5.0}, 5.0, 16.0),
        # sandbox.timeout_factor scales every limit, floors included
        (GoldTimes(0.5, {"a": 0.01, "b": 2.0}), 2.0, {"a": 10.0, "b": 40.0}, 40.0, 20.0),
        # no gold times: every limit is its floor
        (None, 1.0, {}, 5.0, 10.0),
    ],
)
def test_limits_from_gold_times(gold, timeout_factor, tests, default_s, collect_s):
    limits = limits_of(gold, SETTINGS, timeout_factor)
    assert limits == {
        "tests": tests,
        "default_s": default_s,
        "collect_s": collect_s,
        "max_timeouts": 2,
        "gold_timed": gold is not None,
    }


def test_budget_covers_the_allowed_timeouts_and_their_reruns():
    limits = limits_of(GoldTimes(0.5, {"a": 2.0}), SETTINGS)
    # a test still within its 20 s at the run's limit, 2 timeouts x 2 x (20 + 10) + 1 each,
    # plus a collection rerun of 10 + 1
    assert run_budget_s(30.0, limits) == 30.0 + 20.0 + 2 * 61.0 + 11.0
    assert run_budget_s(30.0, None) == 30.0


@pytest.mark.parametrize(
    "cfg,message",
    [
        ({"floor": 3}, "unknown field"),
        ({"floor_s": 0}, "floor_s must be > 0"),
        ({"max_timeouts": 0}, "max_timeouts must be >= 1"),
    ],
)
def test_settings_errors_name_the_field(cfg, message):
    with pytest.raises(ValueError, match=message):
        LimitSettings.from_config(cfg)


def test_gold_times_load_from_control_records(tmp_path):
    timings = {"collect_s": 0.2, "tests": {"t.py::a": 0.01}}
    record = {"instance_id": "x", "gold": {"sandbox": {"timings": timings}}}
    (tmp_path / "x.json").write_text(json.dumps(record))
    (tmp_path / "y.json").write_text(json.dumps({"instance_id": "y", "gold": {"sandbox": None}}))
    assert load_gold_times(tmp_path) == {"x": GoldTimes(0.2, {"t.py::a": 0.01})}
    (tmp_path / "z.json").write_text("[1, 2]")
    with pytest.raises(ValueError, match="z.json"):
        load_gold_times(tmp_path)


def test_book_keeps_the_first_measurement():
    book = GoldTimesBook()
    assert not book.known("x")
    book.put("x", None)
    book.put("x", GoldTimes(1.0))
    assert book.known("x") and book.get("x") is None


def test_sentinels_are_per_nonce_beside_the_first_test_file():
    one, two = make_sentinels("n1", ["tests/test_a.py"]), make_sentinels("n2", ["tests/test_a.py"])
    assert one.path.startswith("tests/test_") and one.path != two.path
    assert {one.must_pass, one.must_fail}.isdisjoint({two.must_pass, two.must_fail})
    assert sorted(one.roles.values()) == ["must_fail", "must_pass"]
    namespace: dict = {}
    exec(one.source, namespace)
    namespace[one.must_pass]()
    with pytest.raises(AssertionError):
        namespace[one.must_fail]()
