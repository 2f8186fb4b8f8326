"""The bash-tool action language: one shell command per turn, ``submit`` to finish.

An action is either bare text (the whole text is the command) or text holding exactly one fenced
code block (```` ```bash ... ``` ````, any or no language tag), whose content is the command;
prose around the block is allowed. The command ``submit`` ends the episode. An empty command,
two or more blocks, a NUL byte, an over-long command or an unfinished generation is a format
error (recorded, METHOD §4).

:data:`GUEST_HELPER` is the standard-library program the environment runs inside the episode's
container (``python3 -I -c``): ``setup`` copies the base tree into the work tree, ``run`` runs
one command with a timeout and a bounded output, then kills every process the command left and
hashes the work tree, ``settle`` only kills and hashes (after a command that killed its
supervisor), ``read`` returns the text of some files. Its answers are JSON on stdout. Its text
begins with the guest's ``repo_env.py`` (the grading runner's list of places where an image keeps
the repository's environment): a command runs in that environment, activated (its ``bin`` first
on ``PATH``, ``CONDA_PREFIX``), where the image has it, as the graded tests do.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

SUBMIT = "submit"
TRUNCATED = "<truncated>"  # what the rollout passes for a generation that did not finish
_FENCE = re.compile(r"```[^\n`]*\n(.*?)```", re.DOTALL)


class BashFormatError(ValueError):
    """The action text is not one command."""


@dataclass(frozen=True)
class BashAction:
    kind: str  # bash | submit
    command: str = ""


def parse_bash_action(text: str, max_chars: int = 10_000) -> BashAction:
    """One command (or ``submit``) from an action text; :class:`BashFormatError` otherwise."""
    if text.strip() == TRUNCATED:
        raise BashFormatError("the generation did not finish (no complete command)")
    if "```" in text:
        blocks = _FENCE.findall(text)
        if len(blocks) != 1:
            raise BashFormatError(f"expected exactly one fenced command block, found {len(blocks)}")
        command = blocks[0].strip()
    else:
        command = text.strip()
    if not command:
        raise BashFormatError("empty command")
    if "\x00" in command:
        raise BashFormatError("the command contains a NUL byte")
    if len(command) > max_chars:
        raise BashFormatError(f"the command has {len(command)} characters (limit {max_chars})")
    if command == SUBMIT:
        return BashAction("submit")
    return BashAction("bash", command)


def format_output(result: dict, timeout_s: float) -> str:
    """The observation of one command: exit status (or timeout), then its bounded output."""
    head, tail = result["output_head"], result["output_tail"]
    omitted = result["total_bytes"] - result["shown_bytes"]
    output = head + (f"\n[... {omitted} bytes of output omitted ...]\n" if omitted else "") + tail
    if result["timed_out"]:
        status = f"timed out after {timeout_s:g}s (killed)"
    else:
        status = f"exit code {result['exit_code']}"
    return f"{status}\n{output}" if output else status


#: The guest's list of places where an image keeps the repository's environment, and its
#: activation (standard library, shared with the grading runner): the helper's text begins with it.
REPO_ENV_SOURCE = (Path(__file__).resolve().parents[1] / "sandbox/guest/repo_env.py").read_text(
    encoding="utf-8"
)

_HELPER = r'''
import base64, hashlib, json, os, select, shutil, signal, stat, subprocess, sys, time

SKIP_DIRS = {".git", ".hg", ".svn", "__pycache__", ".pytest_cache"}
MAX_BYTES = 1 << 20


def text_of(path):
    """UTF-8 text of a regular file of at most MAX_BYTES (links not followed), else None."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return None
    with os.fdopen(fd, "rb") as fh:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        data = fh.read(MAX_BYTES + 1)
    if len(data) > MAX_BYTES:
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None


def manifest(root):
    """path -> sha256 of every tracked file: UTF-8 text, not under SKIP_DIRS, not *.pyc."""
    out = {}
    for top, dirs, names in os.walk(root):
        dirs[:] = [d for d in dirs if d not in SKIP_DIRS]
        for name in names:
            path = os.path.join(top, name)
            if name.endswith(".pyc") or os.path.islink(path):
                continue
            text = text_of(path)
            if text is not None:
                out[os.path.relpath(path, root)] = hashlib.sha256(text.encode()).hexdigest()
    return out


def entries(root):
    """path -> [git mode, git blob id] of every regular file (any content, any size) and
    symbolic link (its target is its content), outside SKIP_DIRS, not *.pyc."""
    out = {}
    for top, dirs, names in os.walk(root):
        dirs[:] = [d for d in dirs if d not in SKIP_DIRS]
        for name in names + [d for d in dirs if os.path.islink(os.path.join(top, d))]:
            path = os.path.join(top, name)
            if name.endswith(".pyc"):
                continue
            data, mode = raw_of(path)
            if data is not None:
                blob = hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()
                out[os.path.relpath(path, root)] = [mode, blob]
    return out


def raw_of(path):
    """(bytes, git mode) of a regular file or a link's target; (None, None) otherwise."""
    try:
        st = os.lstat(path)
        if stat.S_ISLNK(st.st_mode):
            return os.fsencode(os.readlink(path)), "120000"
        if not stat.S_ISREG(st.st_mode):
            return None, None
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
        with os.fdopen(fd, "rb") as fh:
            data = fh.read()
    except OSError:
        return None, None
    return data, "100755" if st.st_mode & stat.S_IXUSR else "100644"


def live_others():
    """Processes of this user that are not zombies, other than this helper and pid 1."""
    me, uid, found = os.getpid(), os.getuid(), []
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) in (1, me):
            continue
        try:
            with open(f"/proc/{entry}/stat") as fh:
                state = fh.read().rsplit(")", 1)[1].split()[0]
            owner = os.stat(f"/proc/{entry}").st_uid
        except (OSError, IndexError):
            continue
        if owner == uid and state not in ("Z", "X"):
            found.append(int(entry))
    return found


def kill_all():
    """Kill every process of this user but this helper and pid 1 (which reaps them)."""
    for _ in range(200):
        try:
            os.kill(-1, signal.SIGKILL)
        except ProcessLookupError:
            return
        try:
            while os.waitpid(-1, os.WNOHANG)[0]:
                pass
        except ChildProcessError:
            pass
        if not live_others():
            return
        time.sleep(0.005)


def run(root, timeout, limit, command):
    prefix = image_environment()  # the repository's environment, activated, where there is one
    env = activated(os.environ, prefix) if prefix else dict(os.environ)
    proc = subprocess.Popen(
        ["bash", "-c", command], cwd=root, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT, start_new_session=True, env=env,
    )
    fd, half = proc.stdout.fileno(), limit // 2
    head, tail, total = bytearray(), bytearray(), 0
    deadline, grace, timed_out, eof = time.monotonic() + timeout, None, False, False
    while not eof:
        now = time.monotonic()
        if now > deadline:
            break
        if grace is None and proc.poll() is not None:
            grace = now + 0.2  # background jobs may hold the pipe: drain briefly, then stop
        if grace is not None and now > grace:
            break
        ready, _, _ = select.select([fd], [], [], 0.05)
        if not ready:
            continue
        chunk = os.read(fd, 65536)
        eof = not chunk
        total += len(chunk)
        room = half - len(head)
        if room > 0:
            head += chunk[:room]
            chunk = chunk[room:]
        tail += chunk
        del tail[:-half]
    try:
        proc.wait(timeout=max(0.0, deadline - time.monotonic()))
    except subprocess.TimeoutExpired:
        timed_out = True
    kill_all()
    proc.wait()
    return {
        "exit_code": None if timed_out else proc.returncode,
        "timed_out": timed_out,
        "output_head": head.decode("utf-8", "replace"),
        "output_tail": tail.decode("utf-8", "replace"),
        "total_bytes": total,
        "shown_bytes": len(head) + len(tail),
        "manifest": manifest(root),
        "entries": entries(root),
    }


def main(argv):
    mode, root = argv[0], argv[1]
    if mode == "setup":
        shutil.copytree(argv[2], root, symlinks=True, dirs_exist_ok=True)
        answer = {"manifest": manifest(root), "entries": entries(root)}
    elif mode == "run":
        answer = run(root, float(argv[2]), int(argv[3]), argv[4])
    elif mode == "settle":
        kill_all()
        answer = {"manifest": manifest(root), "entries": entries(root)}
    elif mode == "read":
        answer = {rel: text_of(os.path.join(root, rel)) for rel in json.loads(argv[2])}
    elif mode == "readb":
        answer = {}
        for rel in json.loads(argv[2]):
            data, _mode = raw_of(os.path.join(root, rel))
            answer[rel] = None if data is None else base64.b64encode(data).decode("ascii")
    else:
        raise SystemExit(f"unknown mode {mode}")
    sys.stdout.write(json.dumps(answer))


main(sys.argv[1:])
'''
GUEST_HELPER = REPO_ENV_SOURCE + _HELPER


#: PID 1 of the episode's container: reaps the processes commands leave behind.
REAPER = """
import os, time
while True:
    try:
        os.wait()
    except ChildProcessError:
        time.sleep(0.05)
"""
