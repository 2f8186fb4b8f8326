"""Guest-side grading runner: runs pytest on a prepared workspace inside the sandbox.

Standard library and pytest only; it is mounted read-only into the sandbox and never imports
editcredit. Two modes:

- ``once REQUEST.json``: run one grading, write ``done.json`` beside the observations.
- ``serve SPOOL``: a warm server. pytest is imported once; every request found in
  ``SPOOL/requests`` is run in a forked child (a fresh process image for the task's own
  modules), killed with its whole process group when it exceeds its timeout.

A request is JSON: ``workspace``, ``tests`` (paths or node ids relative to the workspace),
``out_dir``, ``env`` (the complete environment of the test process), ``nonce``,
``timeout_s``, and optional ``rlimits`` (name -> soft/hard value) applied in the child.
"""

from __future__ import annotations

import contextlib
import gc
import json
import os
import resource
import signal
import sys
import time

sys.dont_write_bytecode = True
GUEST_DIR = os.path.dirname(os.path.abspath(__file__))
if GUEST_DIR not in sys.path:
    sys.path.insert(0, GUEST_DIR)

import observer  # noqa: E402
import pytest  # noqa: E402
import rewrite_cache  # noqa: E402

POLL_S = 0.002
PYTEST_FLAGS = ["-q", "-p", "no:cacheprovider", "--tb=short", "-rN", "--color=no"]


def _child(req: dict) -> None:
    """Runs in the forked child: isolate, then run pytest with the observer."""
    os.setsid()
    out_dir = req["out_dir"]
    log = os.open(os.path.join(out_dir, "pytest.log"), os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
    os.dup2(log, 1)
    os.dup2(log, 2)
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    for name, value in req.get("rlimits", {}).items():
        limit = int(value)
        resource.setrlimit(getattr(resource, name), (limit, limit))
    workspace = req["workspace"]
    os.chdir(workspace)
    os.environ.clear()
    os.environ.update(req["env"])
    sys.path[:] = [p for p in sys.path if p and p != GUEST_DIR and not p.startswith(workspace)]
    plugin = observer.Observer(os.path.join(out_dir, "observations.jsonl"), req["nonce"])
    code = pytest.main([*req["tests"], *PYTEST_FLAGS, f"--rootdir={workspace}"], plugins=[plugin])
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(int(code))


def run_request(req: dict, warm: bool = False) -> dict:
    """Fork, run the grading in the child, enforce the timeout, return the done record.

    A warm server first rewrites the (frozen, restored) test files' asserts in the parent, so
    children forked for later gradings of the same test files reuse the work.
    """
    start = time.monotonic()
    if warm:
        files = dict.fromkeys(t.split("::", 1)[0] for t in req["tests"])  # node ids too
        rewrite_cache.prewarm(os.path.join(req["workspace"], f) for f in files)
        gc.freeze()  # the child's collector skips inherited objects: fewer copy-on-write pages
    pid = os.fork()
    if pid == 0:
        try:
            _child(req)
        finally:
            os._exit(70)
    deadline = start + float(req["timeout_s"])
    status, exit_code = "finished", None
    while True:
        done_pid, wait_status = os.waitpid(pid, os.WNOHANG)
        if done_pid == pid:
            exit_code = os.waitstatus_to_exitcode(wait_status)
            break
        if time.monotonic() > deadline:
            status = "timeout"
            _kill_group(pid)
            os.waitpid(pid, 0)
            break
        time.sleep(POLL_S)
    _kill_group(pid)  # stray grandchildren of a finished run
    record = {"status": status, "exit_code": exit_code, "seconds": time.monotonic() - start}
    _write_json(os.path.join(req["out_dir"], "done.json"), record)
    return record


def _kill_group(pid: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signal.SIGKILL)


def _write_json(path: str, data: dict) -> None:
    tmp = path + ".tmp"
    with open(tmp, "w", encoding="utf-8") as fh:
        json.dump(data, fh)
    os.replace(tmp, path)


def _load(path: str) -> dict:
    with open(path, encoding="utf-8") as fh:
        return json.load(fh)


WARMUP_TEST = """
import pytest


def test_pass():
    assert [1, 2] == [1, 2]


def test_fail():
    assert {"a": 1} == {"a": 2}


@pytest.mark.parametrize("x", [1, 2], ids=["one", "two"])
def test_param(x, tmp_path, capsys, monkeypatch):
    print(x)
    assert x


@pytest.mark.xfail(reason="warm-up")
def test_xfail():
    raise ValueError("expected")
"""


def warm_up() -> None:
    """Run one throwaway session in this process, so the builtin plugins and the modules
    pytest imports lazily are loaded once here and inherited by every forked grading."""
    import tempfile

    with tempfile.TemporaryDirectory(prefix="warmup-") as tmp:
        path = os.path.join(tmp, "test_editcredit_warmup.py")
        with open(path, "w", encoding="utf-8") as fh:
            fh.write(WARMUP_TEST)
        saved = os.dup(1), os.dup(2)
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, 1)
        os.dup2(devnull, 2)
        try:
            pytest.main([path, *PYTEST_FLAGS, f"--rootdir={tmp}"])
        finally:
            os.dup2(saved[0], 1)
            os.dup2(saved[1], 2)
            for fd in (*saved, devnull):
                os.close(fd)
        sys.modules.pop("test_editcredit_warmup", None)


def serve(spool: str) -> None:
    """Process requests in name order until SPOOL/control/stop exists."""
    warm_up()
    requests = os.path.join(spool, "requests")
    control = os.path.join(spool, "control")
    _write_json(os.path.join(control, "ready.json"), {"pid": os.getpid()})
    while not os.path.exists(os.path.join(control, "stop")):
        names = sorted(n for n in os.listdir(requests) if n.endswith(".json"))
        if not names:
            time.sleep(POLL_S)
            continue
        for name in names:
            path = os.path.join(requests, name)
            req = _load(path)
            os.unlink(path)
            run_request(req, warm=True)


def main(argv: list[str]) -> int:
    if len(argv) == 2 and argv[0] == "once":
        run_request(_load(argv[1]))
        return 0
    if len(argv) == 2 and argv[0] == "serve":
        serve(argv[1])
        return 0
    print("usage: runner.py once REQUEST.json | serve SPOOL", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
