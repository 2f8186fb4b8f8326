"""Owned containers: the owner label, when an owner is dead, and a SIGKILLed grading job whose
containers the next job removes (and nobody else's)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from taskfactory import CONFIG, REPO

from editcredit.sandbox.docker_backend import LABEL
from editcredit.sandbox.owners import (
    OWNER_LABEL,
    Owner,
    current_owner,
    dead_owner_containers,
    owned_labels,
    owner_alive,
    parse_owner,
    process_start,
    start_from_stat,
)

ME = Owner("hostA", "boot1", 100, "5000")


@pytest.mark.parametrize(
    "value, expected",
    [
        ("hostA:boot1:100:5000", ME),
        ("a:b:c:d:boot1:100:5000", Owner("a:b:c:d", "boot1", 100, "5000")),  # host keeps colons
        ("hostA:boot1:x100:5000", None),
        ("hostA:boot1:100", None),
        ("hostA::100:5000", None),
        ("", None),
        ("1", None),
    ],
)
def test_parse_owner(value, expected):
    assert parse_owner(value) == expected


def test_an_owner_label_parses_back_to_its_owner():
    assert parse_owner(ME.label()) == ME
    me = current_owner()
    assert parse_owner(me.label()) == me and me.pid == os.getpid()
    assert owned_labels(LABEL) == {LABEL: "1", OWNER_LABEL: me.label()}


@pytest.mark.parametrize(
    "line, start",
    [
        (
            "7298 (cat) R 7294 7294 4995 0 -1 4194304 95 0 0 0 0 0 0 0 20 0 1 0 2405218 31334",
            "2405218",
        ),
        ("12 (a b) c) S 1 1 1 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 77 0", "77"),
    ],
)
def test_the_start_time_is_field_22_counted_after_the_command_name(line, start):
    assert start_from_stat(line) == start


def test_this_process_has_a_start_time_and_a_dead_pid_has_none():
    assert process_start(os.getpid()) == current_owner().start != "-"
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    assert process_start(proc.pid) is None


RUNNING = {100: "5000", 200: "6000"}


@pytest.mark.parametrize(
    "owner, alive",
    [
        (Owner("hostA", "boot1", 100, "5000"), True),  # running, same start
        (Owner("hostA", "boot1", 100, "4999"), False),  # pid reused by a later process
        (Owner("hostA", "boot1", 300, "5000"), False),  # no such process
        (Owner("hostA", "boot0", 100, "5000"), False),  # an earlier boot
        (Owner("hostB", "boot1", 300, "1"), True),  # another host: never judged from here
        (Owner("hostB", "boot0", 300, "1"), True),
    ],
)
def test_owner_alive(owner, alive):
    assert owner_alive(owner, "hostA", "boot1", RUNNING.get) is alive


class FakeContainer:
    def __init__(self, cid: str, labels: dict[str, str] | None) -> None:
        self.id, self.labels = cid, labels


def test_only_containers_of_dead_owners_of_this_host_are_picked():
    containers = [
        FakeContainer("mine", {LABEL: "1", OWNER_LABEL: ME.label()}),
        FakeContainer("live", {LABEL: "1", OWNER_LABEL: "hostA:boot1:200:6000"}),
        FakeContainer("dead", {LABEL: "1", OWNER_LABEL: "hostA:boot1:300:7000"}),
        FakeContainer("reused", {LABEL: "1", OWNER_LABEL: "hostA:boot1:200:1"}),
        FakeContainer("other-host", {LABEL: "1", OWNER_LABEL: "hostB:boot1:300:7000"}),
        FakeContainer("legacy", {LABEL: "1"}),
        FakeContainer("garbled", {LABEL: "1", OWNER_LABEL: "nonsense"}),
        FakeContainer("no-labels", None),
    ]
    dead = dead_owner_containers(containers, ME, RUNNING.get)
    assert [c.id for c in dead] == ["dead", "reused"]


JOB = """
import sys
from taskfactory import CONFIG, make_calc_task
from editcredit.sandbox.factory import make_sandbox

box = make_sandbox("docker", CONFIG["sandbox"])
if sys.argv[1] == "grade":
    task = make_calc_task(timeout_s=300.0)
    slow = "\\n\\ndef test_slow():\\n    import time\\n    time.sleep(300)\\n"
    slow = task.files["test_calc.py"] + slow
    task = task.model_copy(update={"files": {**task.files, "test_calc.py": slow}})
    print("grading", flush=True)
    box.grade(task, task.patch)
elif sys.argv[1] == "idle":
    print("ready", flush=True)
    sys.stdin.readline()
box.close()
print("closed", flush=True)
"""


def _job(mode: str) -> subprocess.Popen:
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(Path(REPO) / "src"), str(Path(REPO) / "tests")]),
    }
    return subprocess.Popen(
        [sys.executable, "-c", JOB, mode],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        env=env,
        cwd=REPO,
    )


def _wait_for(proc: subprocess.Popen, word: str) -> None:
    line = proc.stdout.readline()
    assert line.strip() == word, f"job said {line!r} (exit {proc.poll()})"


def _owned_by(client, pid: int) -> set[str]:
    found = set()
    for c in client.containers.list(all=True, filters={"label": [LABEL, OWNER_LABEL]}):
        owner = parse_owner(c.labels.get(OWNER_LABEL, ""))
        if owner is not None and owner.pid == pid and owner.host == current_owner().host:
            found.add(c.id)
    return found


@pytest.mark.docker
def test_a_sigkilled_grading_jobs_containers_are_gone_after_the_next_run_and_no_other_jobs(
    docker_ready,
):
    from editcredit.sandbox.docker_backend import docker_client

    client = docker_client()
    legacy = client.containers.create(
        CONFIG["sandbox"]["image"], command=["true"], labels={LABEL: "1"}, network_disabled=True
    )
    live = _job("idle")
    victim = None
    try:
        _wait_for(live, "ready")
        live_containers = _owned_by(client, live.pid)
        assert live_containers
        victim = _job("grade")
        _wait_for(victim, "grading")
        time.sleep(2.0)  # inside the slow test run
        assert victim.poll() is None, "the grading finished before the kill"
        victim_containers = _owned_by(client, victim.pid)
        assert victim_containers
        victim.send_signal(signal.SIGKILL)
        victim.wait(timeout=30)
        time.sleep(1.0)
        assert _owned_by(client, victim.pid) == victim_containers  # nothing cleaned up
        after = _job("start")
        _wait_for(after, "closed")
        assert after.wait(timeout=120) == 0
        assert not _owned_by(client, victim.pid) & victim_containers
        assert _owned_by(client, live.pid) == live_containers  # the live job keeps its own
        legacy.reload()  # a container without an owner label is left alone
        assert live.poll() is None
    finally:
        live.stdin.write("\n")
        live.stdin.flush()
        live.wait(timeout=60)
        if victim is not None and victim.poll() is None:
            victim.kill()
            victim.wait()
        for pid in (live.pid, *([victim.pid] if victim else [])):
            for cid in _owned_by(client, pid):
                client.containers.get(cid).remove(force=True)
        legacy.remove(force=True)


def test_the_listing_inspects_no_container():
    """A container removed between the listing and an inspection must not fail the listing:
    the rows of one listing call are all it reads."""
    from docker.errors import NotFound
    from docker.models.containers import ContainerCollection

    from editcredit.sandbox.owners import list_labelled

    class Api:
        def __init__(self):
            self.calls = []

        def containers(self, all, filters):  # noqa: A002 - docker-py's keyword
            self.calls.append((all, filters))
            return [{"Id": "c1", "Labels": {"a": "1", "b": "x"}}, {"Id": "c2", "Labels": None}]

    class Client:
        def __init__(self):
            self.api = Api()
            self.containers = ContainerCollection(client=self)

        def inspect(self, *_):
            raise NotFound("No such container: gone")

    client = Client()
    client.containers.get = client.inspect  # an inspection would fail
    listed = list_labelled(client, ["a=1", "b"])
    assert client.api.calls == [(True, {"label": ["a=1", "b"]})]
    assert [c.id for c in listed] == ["c1", "c2"]
    assert [c.labels for c in listed] == [{"a": "1", "b": "x"}, {}]
