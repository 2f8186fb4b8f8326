"""Guest-side grading runner: runs a task's tests on a prepared workspace inside the sandbox.

Standard library and pytest only (pytest only for the pytest runner); it is mounted read-only
into the sandbox and never imports editcredit. Two modes:

- ``once REQUEST.json``: run one grading, write ``done.json`` beside the observations.
- ``serve SPOOL``: a warm server. pytest is imported once; every request found in
  ``SPOOL/requests`` is run in a forked child (a fresh process image for the task's own
  modules), killed with its whole process group when it exceeds its timeout.

A request is JSON: ``workspace``, ``tests`` (paths or node ids relative to the workspace),
``out_dir``, ``env`` (the complete environment of the test process), ``nonce``,
``timeout_s``, and optional ``rlimits`` (name -> soft/hard value) applied in the child and
``image_plugins`` (default true: register the ``pytest11`` plugins the interpreter installs,
:mod:`plugins`; false: pytest's own plugins alone).
``runner`` (default ``pytest``) names the task's test runner; any other runner (``unittest``,
``django``, ``sympy``) runs the request's ``command`` (an argument vector) in the forked child
under that runner's observer hook (:mod:`commands`); a test past its own limit ends that run and
is rerun alone (:func:`run_command_request`).
"""

import contextlib
import gc
import importlib
import json
import os
import resource
import select
import signal
import sys
import time

sys.dont_write_bytecode = True
GUEST_DIR = os.path.dirname(os.path.abspath(__file__))
if GUEST_DIR not in sys.path:
    sys.path.insert(0, GUEST_DIR)

import commands  # noqa: E402
import records  # noqa: E402
import repo_env  # noqa: E402
import sympy_hook  # noqa: E402, F401 - imported before the child leaves the guest dir
import unittest_hook  # noqa: E402, F401

_LAZY: dict = {}


def _pytest():
    """pytest, the observer plugin and the rewrite cache, imported on first use (an image
    whose tests run under another runner need not have pytest)."""
    if not _LAZY:
        pytest = importlib.import_module("pytest")  # first: ImportError without pytest
        observer = importlib.import_module("observer")
        rewrite_cache = importlib.import_module("rewrite_cache")

        _LAZY.update(observer=observer, pytest=pytest, rewrite_cache=rewrite_cache)
    return _LAZY


#: The guest's own modules, imported from GUEST_DIR before a test process starts.
GUEST_MODULES = (
    "commands",
    "machinery",
    "observer",
    "plugins",
    "records",
    "repo_env",
    "rewrite_cache",
    "sympy_hook",
    "unittest_hook",
)
#: Directories never searched for a module of a guest module's name.
SKIP_DIRS = frozenset({".git", ".hg", ".svn", "__pycache__", "node_modules"})


def _names_in_tree(root: str, names: "set[str]") -> "set[str]":
    """Which of ``names`` the tree under ``root`` has as a module (``NAME.py``, a ``NAME``
    directory, an extension module) at any depth: a runner may put any directory of it on
    the path (pytest's rootdir insertion, Django's ``tests/``)."""
    found: "set[str]" = set()
    stack = [root]
    while stack and found != names:
        try:
            entries = list(os.scandir(stack.pop()))
        except OSError:
            continue
        for entry in entries:
            stem = entry.name.split(".", 1)[0]
            if stem in names:
                found.add(stem)
            if entry.name not in SKIP_DIRS and entry.is_dir(follow_symlinks=False):
                stack.append(entry.path)
    return found


def hide_guest_modules(workspace: str) -> "list[str]":
    """Leave the test's imports to the repository: a guest module whose name the test process
    could import from elsewhere (the tree, a directory on its path) is removed from
    ``sys.modules`` (the guest keeps its own references), so ``import NAME`` finds the
    repository's. GUEST_DIR itself is never on the test's path. The names released."""
    import importlib.machinery

    present = {
        n
        for n in GUEST_MODULES
        if getattr(sys.modules.get(n), "__file__", "").startswith(GUEST_DIR + os.sep)
    }
    clash = _names_in_tree(workspace, present)
    path = [p for p in sys.path if p != GUEST_DIR]
    for name in present - clash:
        with contextlib.suppress(ImportError, ValueError):
            if importlib.machinery.PathFinder.find_spec(name, path) is not None:
                clash.add(name)
    for name in clash:
        del sys.modules[name]
    return sorted(clash)


POLL_S = 0.002
SELECT_S = 0.02
EOF_WAIT_S = 0.0005  # the first wait for a child whose records have ended
#: After reading records, the runner lets the next ones gather this long before it reads again:
#: a test process writes about five records a test, and waking the runner for each one cost
#: both processes a context switch (the per-test clocks start at most this much later; every
#: limit is seconds long).
GATHER_S = 0.003
PYTEST_FLAGS = [
    "-q",
    "-p",
    "no:cacheprovider",
    "--tb=short",
    "-rN",
    "--color=no",
    "--continue-on-collection-errors",  # one broken test file does not hide the others
]


def _child(req: dict, fd: int, skip: int, tests: "list[str]", extra: "list[str]", log_mode: int):
    """Runs in the forked child: isolate, then run pytest with the observer writing to ``fd``."""
    os.setsid()
    signal.signal(signal.SIGINT, signal.default_int_handler)
    out_dir = req["out_dir"]
    log = os.open(os.path.join(out_dir, "pytest.log"), os.O_WRONLY | os.O_CREAT | log_mode)
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
    for path in REPOSITORY_PYTHONS:  # in its environment: activated, its tools first on PATH
        prefix = repo_env.environment_prefix(path)
        if os.path.realpath(sys.prefix) == os.path.realpath(prefix):
            os.environ.update(repo_env.activated(os.environ, prefix))
    # the image's own arrangement of imports stays: its development installs and .pth files
    # put the work tree (the patched copy, mounted at the image's path) on the path
    sys.path[:] = _test_path()
    hide_guest_modules(workspace)
    if req.get("runner", "pytest") != "pytest":
        code = commands.run(req, fd, _LAZY.get("observer"))
        sys.stdout.flush()
        sys.stderr.flush()
        records.writer(fd, req["nonce"])({"event": "main_returned", "exitstatus": int(code)})
        os._exit(int(code) & 0xFF)
    lazy = _pytest()
    sentinel = req.get("sentinel")
    plugin = lazy["observer"].Observer(
        fd,
        req["nonce"],
        skip=skip,
        sentinel=(
            (os.path.join(workspace, sentinel["path"]), tuple(sentinel["names"]))
            if sentinel
            else None
        ),
        patched=tuple(os.path.join(workspace, p) for p in req.get("patched", [])),
        image_plugins=bool(req.get("image_plugins", True)),
    )
    args = [*tests, *PYTEST_FLAGS, *extra, f"--rootdir={workspace}"]
    code = lazy["pytest"].main(args, plugins=[plugin])
    sys.stdout.flush()
    sys.stderr.flush()
    plugin.emit({"event": "main_returned", "exitstatus": int(code)})
    os._exit(int(code))


def _test_path() -> "list[str]":
    """The test process's ``sys.path``: this one's without the guest directory (and ``''``)."""
    return [p for p in sys.path if p and p != GUEST_DIR]


class Session:
    """What the runner saw of one forked pytest process."""

    def __init__(self) -> None:
        self.lines: "list[str]" = []
        self.end = "finished"  # finished | timeout | collect_timeout | item_timeout
        self.exit_code: "int | None" = None
        self.collected: "list[str] | None" = None
        self.collect_s: "float | None" = None
        self.durations: "dict[int, tuple[str, float]]" = {}
        self.timed_out: "dict | None" = None
        self.grace: "int | str | None" = None  # what was running when the run's limit passed


def _limit_of(limits: "dict | None", nodeid: str, never: float) -> float:
    """The item's own limit (``never``, larger than any elapsed time, without limits)."""
    if not limits:
        return never
    return float(limits.get("tests", {}).get(nodeid, limits["default_s"]))


#: The CPUs a process can run on at once: a test spends at most this many CPU seconds a second.
CPUS = max(os.cpu_count() or 1, 1)
CLOCK_TICKS = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


def _cpu_seconds(pid: int) -> "float | None":
    """CPU seconds the process ``pid`` has used (user and system, its reaped children's
    included), read from ``/proc`` outside it, so the code it runs cannot change the count;
    None where ``/proc`` cannot tell (then only the wall-clock limit holds)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return sum(int(x) for x in fields[11:15]) / CLOCK_TICKS  # utime stime cutime cstime
    except (OSError, IndexError, ValueError):
        return None


def _over_limit(limits: dict, current: tuple, now: float, cpu_used: "float | None"):
    """The running item's timeout record when it is past its own wall-clock limit, or past its
    CPU-time limit (``limits["cpu"]``: a loop told without waiting out the wall-clock limit; load
    slows a test's clock, never adds to its CPU seconds); else None."""
    wall_limit = _limit_of(limits, current[1], 0)
    cpu_limits = limits.get("cpu")
    cpu_limit = _limit_of(cpu_limits, current[1], 0) if cpu_limits else None
    over_cpu = cpu_limit is not None and cpu_used is not None and cpu_used > cpu_limit
    if now - current[2] <= wall_limit and not over_cpu:
        return None
    record = {
        "index": current[0],
        "nodeid": current[1],
        "seconds": round(now - current[2], 3),
        "limit_s": wall_limit,
    }
    if cpu_limit is not None:
        record["cpu_s"] = cpu_used
        record["cpu_limit_s"] = cpu_limit
        record["limited_by"] = "cpu" if over_cpu else "wall"
    return record


def run_session(
    req: dict,
    deadline: float,
    hard: "float | None" = None,
    skip: int = 0,
    tests: "list[str] | None" = None,
    extra: "list[str]" = (),
    log_mode: int = os.O_TRUNC,
) -> Session:
    """Fork one pytest process and watch its records as they arrive: kill its process group
    when collection exceeds ``limits.collect_s``, an item exceeds its own limit, or the clock
    passes ``deadline`` (the whole run's limit; it waits for a collection or an item still
    within its own limit, up to ``hard``). The records are kept in order; the runner's own
    clock times them."""
    hard = deadline if hard is None else hard
    limits = req.get("limits")
    tests = list(req["tests"]) if tests is None else tests
    read_fd, write_fd = os.pipe()
    start = time.monotonic()
    pid = child = os.fork()
    if pid == 0:
        try:
            os.close(read_fd)
            _child(req, write_fd, skip, tests, list(extra), log_mode)
        finally:
            os._exit(70)
    os.close(write_fd)
    os.set_blocking(read_fd, False)
    s, buf, current = Session(), b"", None
    eof, eof_wait = False, EOF_WAIT_S
    # the running item, its CPU seconds at its start, and the clock before which its CPU
    # seconds need no reading
    cpu_mark: "tuple[int, float | None, float] | None" = None
    while True:
        if eof:
            # the pipe closed: the child is ending (or runs on without it). Look again soon,
            # then less often; a fixed SELECT_S here added up to 20 ms to a grading whose
            # child had not exited at the first look (on a loaded machine).
            time.sleep(eof_wait)
            eof_wait = min(2 * eof_wait, SELECT_S)
        elif select.select([read_fd], [], [], SELECT_S)[0]:
            try:
                chunk = os.read(read_fd, 1 << 16)
            except BlockingIOError:
                chunk = None
            eof = chunk == b""  # every writer closed the pipe; the process may still run
            if chunk:
                buf += chunk
                *complete, buf = buf.split(b"\n")
                now = time.monotonic()
                for raw in complete:
                    line = raw.decode("utf-8", "replace")
                    s.lines.append(line)
                    current = _track(s, line, req["nonce"], now - start, now, current)
            if not eof:
                time.sleep(GATHER_S)
        now = time.monotonic()
        done_pid, wait_status = os.waitpid(pid, os.WNOHANG)
        if done_pid == pid:
            s.exit_code = _exit_code(wait_status)
            pid = None
            break
        collecting = bool(limits) and s.collected is None
        cpu_used = None
        if current is not None and limits and limits.get("cpu"):
            if cpu_mark is None or cpu_mark[0] != current[0]:
                cpu_limit = _limit_of(limits["cpu"], current[1], 0)
                cpu_mark = (current[0], _cpu_seconds(child), current[2] + cpu_limit / CPUS)
            if now >= cpu_mark[2]:  # before it, all the CPUs together cannot pass the limit
                cpu_now = _cpu_seconds(child)
                if cpu_now is not None and cpu_mark[1] is not None:
                    cpu_used = round(cpu_now - cpu_mark[1], 3)  # as recorded: whole ticks
        over = _over_limit(limits, current, now, cpu_used) if current and limits else None
        if now > hard:
            s.end = "timeout"
        elif collecting and now - start > float(limits["collect_s"]):
            s.end = "collect_timeout"
        elif over is not None:
            s.end = "item_timeout"
            s.timed_out = over
        elif now > deadline:
            # the collection or the test running at the run's limit is waited for, until its
            # own limit; nothing after it starts
            running = "collection" if collecting else current[0] if current else None
            if s.grace is None:
                s.grace = running if limits else "none"
            if running is None or running != s.grace:
                s.end = "timeout"
        if s.end != "finished":
            break
    if pid is not None:
        _kill_group(pid)
        os.waitpid(pid, 0)
    _kill_group(child)  # stray grandchildren of a finished run
    _drain(read_fd, s, buf)
    os.close(read_fd)
    return s


def _drain(fd: int, s: Session, buf: bytes) -> None:
    with contextlib.suppress(OSError):
        while True:
            chunk = os.read(fd, 1 << 16)
            if not chunk:
                break
            buf += chunk
    for raw in buf.split(b"\n"):
        if raw:
            s.lines.append(raw.decode("utf-8", "replace"))


def _track(s: Session, line: str, nonce: str, elapsed: float, now: float, current):
    """Follow collection and the running item from one record (others are kept, not read)."""
    try:
        rec = json.loads(line)
    except ValueError:
        return current
    if not isinstance(rec, dict) or rec.get("nonce") != nonce:
        return current
    event = rec.get("event")
    if event == "collected" and s.collected is None:
        s.collected = [str(n) for n in rec.get("nodeids", [])]
        s.collect_s = round(elapsed, 4)
    elif event == "item_start":
        return (int(rec.get("index", -1)), str(rec.get("nodeid", "")), now)
    elif event == "item_end" and current is not None:
        s.durations[current[0]] = (current[1], round(now - current[2], 4))
        return None
    return current


def run_request(req: dict, warm: bool = False) -> dict:
    """Run the grading: one pytest process, continued after each per-test timeout from the
    next item, then a rerun of every timed-out test alone (and of a collection that timed
    out) under the same limits; write ``done.json`` and the observations.

    A warm server first rewrites the (frozen, restored) test files' asserts in the parent, so
    children forked for later gradings of the same test files reuse the work.
    """
    start = time.monotonic()
    if req.get("runner", "pytest") != "pytest":
        return run_command_request(req, start)
    _pytest()  # in this process, before a child leaves the guest directory
    if warm:
        files = dict.fromkeys(t.split("::", 1)[0] for t in req["tests"])  # node ids too
        _pytest()["rewrite_cache"].prewarm(os.path.join(req["workspace"], f) for f in files)
        if req.get("image_plugins", True):  # the image's pytest plugins, found on the path
            importlib.import_module("plugins").prewarm(_test_path())  # of the test process
        gc.freeze()  # the child's collector skips inherited objects: fewer copy-on-write pages
    limits = req.get("limits")
    hard = start + float(req.get("budget_s", req["timeout_s"]))
    deadline = start + float(req["timeout_s"])
    max_timeouts = int(limits.get("max_timeouts", 3)) if limits else 0
    lines: "list[str]" = []
    timeouts: "list[dict]" = []
    timings = {"collect_s": None, "tests": {}}
    status, exit_code, skip, collect_timeout = "finished", None, 0, None
    log_mode = os.O_TRUNC
    while True:
        s = run_session(req, deadline, hard, skip=skip, log_mode=log_mode)
        log_mode = os.O_APPEND
        lines.append(json.dumps({"event": "segment", "skip": skip, "nonce": req["nonce"]}))
        lines += s.lines
        if timings["collect_s"] is None:
            timings["collect_s"] = s.collect_s
        for nodeid, seconds in s.durations.values():
            timings["tests"][nodeid] = seconds
        exit_code = s.exit_code
        if s.end == "item_timeout":
            timeouts.append(s.timed_out)
            nxt = s.timed_out["index"] + 1
            if len(timeouts) >= max_timeouts or s.collected is None or nxt >= len(s.collected):
                break
            deadline += s.timed_out["seconds"] + (s.collect_s or 0.0)
            skip = nxt
            continue
        if s.end == "collect_timeout":
            collect_timeout = {"seconds": round(time.monotonic() - start, 3)}
        elif s.end == "timeout":
            status = "timeout"
        break
    for timeout in timeouts:  # a per-test timeout counts only when it reproduces alone
        rerun = run_session(
            req,
            min(hard, time.monotonic() + float(limits["collect_s"]) + timeout["limit_s"] + 1.0),
            tests=[timeout["nodeid"]],
            log_mode=os.O_APPEND,
        )
        timeout["reproduced"] = rerun.end == "item_timeout" and (
            rerun.timed_out["nodeid"] == timeout["nodeid"]
        )
        timeout["rerun"] = rerun.end if rerun.end != "finished" else "finished in time"
    if collect_timeout is not None:
        rerun = run_session(
            req,
            min(hard, time.monotonic() + float(limits["collect_s"]) + 1.0),
            extra=["--collect-only"],
            log_mode=os.O_APPEND,
        )
        collect_timeout["reproduced"] = rerun.end == "collect_timeout"
        collect_timeout["limit_s"] = float(limits["collect_s"])
    record = {
        "status": status,
        "exit_code": exit_code,
        "seconds": time.monotonic() - start,
        "timeouts": timeouts,
        "collect_timeout": collect_timeout,
        "timings": timings,
    }
    _write_lines(os.path.join(req["out_dir"], "observations.jsonl"), lines)
    _write_json(os.path.join(req["out_dir"], "done.json"), record)
    return record


def run_command_request(req: dict, start: float) -> dict:
    """A non-pytest runner's grading: one observed run of the task's command. With per-test
    limits, a test that exceeds its own is killed with the run (a runner cannot be continued
    from the next test) and rerun alone (``commands.rerun_command``); the rest of the run is
    held to the whole run's limit."""
    if req["runner"] == "sympy":  # SymPy 1.13's bin/test runs pytest, where the image has it
        with contextlib.suppress(ImportError, SyntaxError):  # no pytest, or one too new
            _pytest()
    hard = start + float(req.get("budget_s", req["timeout_s"]))
    deadline = start + float(req["timeout_s"])
    limits = req.get("limits")
    if limits:  # collection is not observed apart from the tests: only the tests are limited
        limits = {**limits, "collect_s": float(req.get("budget_s", req["timeout_s"])) + 1.0}
    s = run_session({**req, "limits": limits}, deadline, hard, tests=[])
    lines = [json.dumps({"event": "segment", "skip": 0, "nonce": req["nonce"]}), *s.lines]
    timings = {"collect_s": 0.0, "tests": {n: sec for n, sec in s.durations.values()}}
    timeouts = []
    if s.end == "item_timeout":
        timeout = dict(s.timed_out)
        rerun_req = {**req, "limits": limits, "command": commands.rerun_command(req, timeout)}
        limit = float(timeout["limit_s"])
        rerun = run_session(rerun_req, min(hard, time.monotonic() + limit + 1.0), hard, tests=[])
        timeout["reproduced"] = rerun.end == "item_timeout" and (
            rerun.timed_out["nodeid"] == timeout["nodeid"]
        )
        timeout["rerun"] = rerun.end if rerun.end != "finished" else "finished in time"
        timeouts.append(timeout)
    record = {
        "status": "timeout" if s.end == "timeout" else "finished",
        "exit_code": s.exit_code,
        "seconds": time.monotonic() - start,
        "timeouts": timeouts,
        "collect_timeout": None,
        "timings": timings,
    }
    _write_lines(os.path.join(req["out_dir"], "observations.jsonl"), lines)
    _write_json(os.path.join(req["out_dir"], "done.json"), record)
    return record


def _exit_code(status: int) -> int:
    """``os.waitstatus_to_exitcode`` (Python 3.9+), also on older images' interpreters."""
    if os.WIFSIGNALED(status):
        return -os.WTERMSIG(status)
    return os.WEXITSTATUS(status)


def _kill_group(pid: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signal.SIGKILL)


def _write_lines(path: str, lines: "list[str]") -> None:
    tmp = path + ".tmp"
    with open(tmp, "w", encoding="utf-8") as fh:
        fh.writelines(line + "\n" for line in lines)
    os.replace(tmp, path)


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

    try:
        _pytest()
    except ImportError:  # an interpreter without pytest serves the other runners
        return
    with tempfile.TemporaryDirectory(prefix="warmup-") as tmp:
        path = os.path.join(tmp, "test_editcredit_warmup.py")
        with open(path, "w", encoding="utf-8") as fh:
            fh.write(WARMUP_TEST)
        saved = os.dup(1), os.dup(2)
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, 1)
        os.dup2(devnull, 2)
        try:
            _pytest()["pytest"].main([path, *PYTEST_FLAGS, f"--rootdir={tmp}"])
        finally:
            sys.stdout.flush()  # nothing of the warm-up may reach a grading's log
            sys.stderr.flush()
            os.dup2(saved[0], 1)
            os.dup2(saved[1], 2)
            for fd in (*saved, devnull):
                os.close(fd)
        sys.modules.pop("test_editcredit_warmup", None)


def serve(spool: str) -> None:
    """Process requests in name order until SPOOL/control/stop exists.

    In a container the server is process 1, which a test process can only signal with
    signals it handles: SIGINT (Python's KeyboardInterrupt) is ignored, so no test can stop
    the server (a died sandbox would be an infrastructure failure: masked, not scored)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
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


#: Where an image keeps the repository's own interpreter (``repo_env``, which the bash tool reads).
REPOSITORY_PYTHONS = repo_env.REPOSITORY_PYTHONS
#: The oldest interpreter the guest code runs on.
OLDEST_GUEST = (3, 6)


def _env_version(prefix: str) -> "tuple[int, int] | None":
    """The Python version of an environment from its ``lib/pythonX.Y`` directory."""
    try:
        names = os.listdir(os.path.join(prefix, "lib"))
    except OSError:
        return None
    found = []
    for name in names:
        major, _, minor = name[len("python") :].partition(".")
        if name.startswith("python") and major.isdigit() and minor.isdigit():
            found.append((int(major), int(minor)))
    return max(found) if found else None


def repository_python() -> "str | None":
    """The image's environment interpreter the grading should run in, where this process is
    not already running in that environment and the guest code can run on it."""
    for path in REPOSITORY_PYTHONS:
        prefix = repo_env.environment_prefix(path)
        if os.path.realpath(sys.prefix) == os.path.realpath(prefix):
            return None
        if not os.access(path, os.X_OK):
            continue
        version = _env_version(prefix)
        if version is None or version >= OLDEST_GUEST:
            return path
    return None


def main(argv: "list[str]") -> int:
    python = repository_python() if argv[:1] == ["once"] else None
    if python is not None:  # the repository's interpreter runs the grading, as its harness does
        os.execv(python, [python, os.path.abspath(__file__), *argv])
    if len(argv) == 2 and argv[0] == "once":
        signal.signal(signal.SIGINT, signal.SIG_IGN)  # as serve(): the tests cannot stop it
        run_request(_load(argv[1]))
        return 0
    if len(argv) == 2 and argv[0] == "serve":
        serve(argv[1])
        return 0
    print("usage: runner.py once REQUEST.json | serve SPOOL", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
