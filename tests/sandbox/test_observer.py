"""The observer plugin in real pytest runs, through the local and the docker backends."""

from __future__ import annotations

import pytest

from editcredit.data.task import Task
from editcredit.grading.verdicts import expected_statuses, judge

EDGE_TESTS = """import pytest


@pytest.fixture
def broken_setup():
    raise RuntimeError("setup boom")


@pytest.fixture
def broken_teardown():
    yield 1
    raise RuntimeError("teardown boom")


def test_ok():
    assert 1 + 1 == 2


def test_fails():
    assert 1 + 1 == 3


def test_setup_error(broken_setup):
    assert True


def test_teardown_error(broken_teardown):
    assert broken_teardown == 1


@pytest.mark.xfail(run=False, reason="never run")
def test_xfail_not_run():
    assert False


@pytest.mark.xfail(reason="known")
def test_xfail():
    assert False


@pytest.mark.xfail(reason="fixed already")
def test_xpass():
    assert True


@pytest.mark.xfail(strict=True, reason="fixed already")
def test_xpass_strict():
    assert True


def test_skipped():
    pytest.skip("not here")


@pytest.mark.parametrize("word", ["a b", "c  d"], ids=["two words", "double  space"])
def test_spaces(word):
    assert " " in word


class TestA:
    def test_same(self):
        assert True


class TestB:
    def test_same(self):
        assert False
"""

EXPECTED = {
    "test_edges.py::test_ok": "passed",
    "test_edges.py::test_fails": "failed",
    "test_edges.py::test_setup_error": "error",
    "test_edges.py::test_teardown_error": "error",
    "test_edges.py::test_xfail_not_run": "xfail",
    "test_edges.py::test_xfail": "xfail",
    "test_edges.py::test_xpass": "xpass",
    "test_edges.py::test_xpass_strict": "xpass",
    "test_edges.py::test_skipped": "skipped",
    "test_edges.py::test_spaces[two words]": "passed",
    "test_edges.py::test_spaces[double  space]": "passed",
    "test_edges.py::TestA::test_same": "passed",
    "test_edges.py::TestB::test_same": "failed",
}


def edge_task() -> Task:
    return Task(
        instance_id="toy__edges",
        repo="toy/edges",
        problem_statement="edge cases",
        patch="diff --git a/x b/x\n",
        FAIL_TO_PASS=["test_edges.py::test_ok"],
        PASS_TO_PASS=[],
        test_paths=["test_edges.py"],
        files={"test_edges.py": EDGE_TESTS},
        suite="toy",
        timeout_s=20,
    )


@pytest.fixture(params=["local", "docker"])
def sandbox(request):
    return request.getfixturevalue(f"{request.param}_sandbox")


def test_every_phase_outcome_is_observed(sandbox):
    report = sandbox.grade(edge_task(), "")
    assert report.run_status == "finished"
    assert report.observations.finished
    statuses = {
        k: v.status for k, v in expected_statuses(EXPECTED, report.observations.items).items()
    }
    assert statuses == EXPECTED
    not_run = expected_statuses(["test_edges.py::test_xfail_not_run"], report.observations.items)
    assert not_run["test_edges.py::test_xfail_not_run"].xfail_not_run


@pytest.mark.parametrize(
    "f2p,p2p,kind",
    [
        (["test_edges.py::test_ok"], ["test_edges.py::TestA::test_same"], "valid_1"),
        (["test_edges.py::test_ok"], ["test_edges.py::TestB::test_same"], "valid_0"),
        (["test_edges.py::test_xfail_not_run"], ["test_edges.py::test_ok"], "unresolved"),
        (["test_edges.py::test_xpass"], ["test_edges.py::test_ok"], "unresolved"),
        (["test_edges.py::test_setup_error"], ["test_edges.py::test_ok"], "unresolved"),
        (["test_edges.py::test_teardown_error"], ["test_edges.py::test_ok"], "unresolved"),
        (["test_edges.py::test_skipped"], ["test_edges.py::test_fails"], "valid_0"),
        (["test_edges.py::test_spaces[two words]"], ["test_edges.py::test_ok"], "valid_1"),
        (["test_edges.py::test_spaces"], ["test_edges.py::test_ok"], "valid_1"),
        (["test_edges.py::test_gone"], ["test_edges.py::test_ok"], "unresolved"),
    ],
)
def test_verdicts_on_real_observations(local_sandbox, f2p, p2p, kind):
    report = local_sandbox.grade(edge_task(), "")
    assert judge(f2p, p2p, report.observations.items).kind == kind
