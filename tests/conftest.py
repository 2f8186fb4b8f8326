"""Shared fixtures: crafted tasks and real sandboxes (docker is required, not optional)."""

from __future__ import annotations

import os

import pytest
from taskfactory import CONFIG, make_calc_task

from editcredit.data.task import Task


@pytest.fixture(autouse=True)
def no_shared_report_store(monkeypatch):
    """A test grades on its own: a report store shared across tests, or with a study run in
    this checkout, would answer the gradings a test means to run. The store's own tests open
    one in a temporary directory; workflow tests run Snakemake in their own directories."""
    from editcredit.sandbox import report_store

    monkeypatch.setattr(report_store, "open_report_store", lambda *args, **kwargs: None)


@pytest.fixture
def calc_task() -> Task:
    return make_calc_task()


def _docker_or_fail():
    from editcredit.sandbox.base import SandboxError
    from editcredit.sandbox.docker_backend import docker_client

    try:
        client = docker_client()
        client.images.get(CONFIG["sandbox"]["image"])
    except (SandboxError, Exception) as exc:
        if os.environ.get("EDITCREDIT_ALLOW_NO_DOCKER") == "1":
            pytest.skip(f"docker unavailable and EDITCREDIT_ALLOW_NO_DOCKER=1: {exc}")
        pytest.fail(f"docker tests need the daemon and the sandbox image (./dev.sh setup): {exc}")


@pytest.fixture(scope="session")
def docker_ready():
    _docker_or_fail()
    return True


@pytest.fixture(scope="module")
def docker_sandbox():
    _docker_or_fail()
    from editcredit.sandbox.factory import make_sandbox

    box = make_sandbox("docker", CONFIG["sandbox"])
    yield box
    box.close()


@pytest.fixture(scope="module")
def local_sandbox():
    from editcredit.sandbox.factory import make_sandbox

    box = make_sandbox("local", CONFIG["sandbox"])
    yield box
    box.close()


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config, items):
    """The long tier (tests/tiers.py): ``./dev.sh test`` deselects it with ``-m "not long"``."""
    from tiers import is_long

    for item in items:
        if is_long(item.nodeid):
            item.add_marker(pytest.mark.long)
