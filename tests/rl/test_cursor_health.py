"""The data cursor (resumable, result-blind) and the CF availability alerts (METHOD §5)."""

from __future__ import annotations

import pytest

from editcredit.rl.cursor import DataCursor
from editcredit.rl.health import HealthMonitor

POOL = [f"t{i}" for i in range(7)]


def test_cursor_steps_are_resumable_from_their_record():
    c = DataCursor(seed=1)
    straight = []
    for _ in range(5):
        ids, c = c.take(POOL, 3)
        straight.append(ids)
    c2, resumed = DataCursor(seed=1), []
    for _ in range(5):
        ids, c2 = c2.take(POOL, 3)
        c2 = DataCursor.from_dict(c2.to_dict())
        resumed.append(ids)
    assert straight == resumed


def test_cursor_visits_every_task_once_per_epoch_and_never_repeats_within_a_step():
    c, seen = DataCursor(seed=3), []
    for _ in range(7):
        ids, c = c.take(POOL, 3)
        assert len(set(ids)) == 3
        seen += ids
    assert sorted(seen[:7]) == sorted(POOL)


def test_cursor_order_depends_on_the_seed():
    assert DataCursor(1).take(POOL, 7)[0] != DataCursor(2).take(POOL, 7)[0]


def test_cursor_rejects_a_step_larger_than_the_pool():
    with pytest.raises(ValueError, match="exceeds the training pool"):
        DataCursor(1).take(POOL, 8)


def test_streak_alert_after_the_configured_number_of_unavailable_queries():
    m = HealthMonitor(streak_limit=3, window=64, min_availability=0.95)
    assert m.observe([False, False]) == []
    alerts = m.observe([False, True])
    assert len(alerts) == 1 and alerts[0].startswith("cf_unavailable_streak")


def test_availability_alert_once_the_window_is_full_and_state_survives_a_segment():
    m = HealthMonitor(streak_limit=100, window=4, min_availability=0.95)
    assert m.observe([True, False, True]) == []  # window not full yet
    m2 = HealthMonitor(streak_limit=100, window=4, min_availability=0.95)
    m2.restore(m.state())
    alerts = m2.observe([True])
    assert alerts and alerts[0].startswith("cf_availability_low: 75.0%")
    assert HealthMonitor(100, 4, 0.95).observe([True] * 4) == []
