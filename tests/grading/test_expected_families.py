"""expected_statuses looks pytest's alias families up by node id: the same outcomes (members
in the same order) as family_members' search over every item, the search it replaced."""

from __future__ import annotations

import random

import pytest

from editcredit.grading import verdicts
from editcredit.sandbox.observations import ItemObservation

NAMES = [
    "t.py::test_a",
    "t.py::test_a[1]",
    "t.py::test_a[2]",
    "t.py::test_a[x[y]]",
    "t.py::test_ab",
    "t.py::test_ab[1]",
    "t.py::C::test_a",
    "t.py::C::test_a[1]",
    "u.py::test_a",
]


def test_families_match_the_search_over_every_item(monkeypatch: pytest.MonkeyPatch) -> None:
    rng = random.Random(0)
    cases = []
    for _ in range(300):
        names = [rng.choice(NAMES) for _ in range(rng.randint(0, 12))]  # repeats: two items
        items = [ItemObservation(nodeid=n, phases=[]) for n in names]
        expected = rng.sample([*NAMES, "t.py::test_z", "t.py::test_a[9]"], k=5)
        timed_out = set(rng.sample(names, k=min(2, len(names))))
        cases.append((expected, items, timed_out))
    looked_up = [verdicts.expected_statuses(*case) for case in cases]
    monkeypatch.setattr(verdicts, "_pytest_families", lambda items: None)  # the search
    searched = [verdicts.expected_statuses(*case) for case in cases]
    assert looked_up == searched
    assert any(o.members for out in looked_up for o in out.values())
