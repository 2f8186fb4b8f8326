"""Which job owns a sandbox container, and whether that job is still alive.

Every container this package starts carries two labels: the shared ``editcredit.sandbox=1``
(what it is) and ``editcredit.owner`` (whose it is): ``{host}:{boot}:{pid}:{start}``, where
``boot`` is the kernel's boot id and ``start`` the process's start time in clock ticks since
boot (``/proc/{pid}/stat``, field 22). A pid reused by another process has another start time,
and a pid after a reboot another boot id, so the owner string names one process once.

A job removes, the first time it talks to the daemon, the containers whose owner is dead: owned
by its own host, and that process (pid, start time, boot) no longer runs. It never judges a
container of another host (the daemon may be shared), of a live process, or one without an
owner label (made before owners were recorded): those are left where they are.
"""

from __future__ import annotations

import contextlib
import os
import socket
import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

OWNER_LABEL = "editcredit.owner"
#: the boot id where the kernel has one; "-" elsewhere
BOOT_ID_PATH = Path("/proc/sys/kernel/random/boot_id")


@dataclass(frozen=True)
class Owner:
    """One process on one host during one boot."""

    host: str
    boot: str
    pid: int
    start: str

    def label(self) -> str:
        return f"{self.host}:{self.boot}:{self.pid}:{self.start}"


def parse_owner(value: str) -> Owner | None:
    """The owner a label names, or None where the label is not of that form."""
    parts = value.rsplit(":", 3)
    if len(parts) != 4 or not all(parts) or not parts[2].isdigit():
        return None
    host, boot, pid, start = parts
    return Owner(host, boot, int(pid), start)


def start_from_stat(text: str) -> str:
    """Field 22 (start time, clock ticks since boot) of a ``/proc/{pid}/stat`` line.

    The command name (field 2) is in parentheses and may hold spaces and parentheses itself,
    so the fields are counted from the last ``)``.
    """
    rest = text[text.rindex(")") + 1 :].split()
    return rest[19]  # rest[0] is field 3


def process_start(pid: int) -> str | None:
    """The start time of process ``pid``, or None when no such process runs.

    Without ``/proc`` (not Linux) a running process's start is ``"-"``: pid reuse cannot be
    told apart there.
    """
    stat = Path(f"/proc/{pid}/stat")
    if Path("/proc/self/stat").exists():
        try:
            return start_from_stat(stat.read_text())
        except (OSError, ValueError, IndexError):
            return None
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return None
    except PermissionError:
        return "-"
    return "-"


def boot_id() -> str:
    try:
        return BOOT_ID_PATH.read_text().strip() or "-"
    except OSError:
        return "-"


def owner_alive(owner: Owner, host: str, boot: str, start_of: Callable[[int], str | None]) -> bool:
    """Whether ``owner`` may still run, seen from ``host`` during boot ``boot``.

    Another host's process is taken as alive (it cannot be looked at from here); on this host a
    process of an earlier boot is dead, and so is one whose pid runs no process or a process
    started at another time (a reused pid).
    """
    if owner.host != host:
        return True
    if owner.boot != boot:
        return False
    start = start_of(owner.pid)
    return start is not None and start == owner.start


_ME: Owner | None = None
_ME_PID: int | None = None
_ME_LOCK = threading.Lock()


def current_owner() -> Owner:
    """This process as an owner (computed again in a forked child, whose pid differs)."""
    global _ME, _ME_PID
    with _ME_LOCK:
        if _ME is None or _ME_PID != os.getpid():
            pid = os.getpid()
            _ME = Owner(socket.gethostname(), boot_id(), pid, process_start(pid) or "-")
            _ME_PID = pid
        return _ME


def owned_labels(shared_label: str) -> dict[str, str]:
    """The labels of a container this process starts."""
    return {shared_label: "1", OWNER_LABEL: current_owner().label()}


def dead_owner_containers(containers, me: Owner, start_of=process_start) -> list:
    """The containers (docker SDK objects) whose owner label names a dead process of ``me``'s
    host; containers without a readable owner label are never among them."""
    dead = []
    for container in containers:
        owner = parse_owner((container.labels or {}).get(OWNER_LABEL, ""))
        if owner is None or owner == me:
            continue
        if not owner_alive(owner, me.host, me.boot, start_of):
            dead.append(container)
    return dead


def reap_dead_owners(client, shared_label: str, log=None) -> list[str]:
    """Remove the sandbox containers left by dead jobs of this host; their ids."""
    listed = list_labelled(client, [shared_label, OWNER_LABEL])
    removed = []
    for container in dead_owner_containers(listed, current_owner()):
        with contextlib.suppress(Exception):  # it may be gone already
            container.remove(force=True)
            removed.append(container.id)
    if removed:
        note = f"removed {len(removed)} sandbox container(s) left by dead jobs of this host"
        (log or _note)(note)
    return removed


def list_labelled(client, labels: list[str]) -> list:
    """The containers with ``labels`` (docker SDK objects carrying their id and labels), from
    one listing call. The SDK's own listing inspects each container it lists, and a container
    another job removed in between made that listing fail (NotFound), even when retried, on a
    busy study; the listing's rows already hold what the callers read."""
    rows = client.api.containers(all=True, filters={"label": labels})
    return [
        client.containers.prepare_model({"Id": row["Id"], "Config": {"Labels": row["Labels"]}})
        for row in rows
    ]


def _note(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


_REAPED: set[int] = set()
_REAP_LOCK = threading.Lock()


def reap_once(client, shared_label: str) -> list[str]:
    """:func:`reap_dead_owners` the first time a process calls it; nothing after."""
    with _REAP_LOCK:
        if os.getpid() in _REAPED:
            return []
        _REAPED.add(os.getpid())
    return reap_dead_owners(client, shared_label)
