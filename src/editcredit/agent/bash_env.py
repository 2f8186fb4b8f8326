"""The bash-tool environment: one shell command per turn in a long-lived per-episode container.

The container runs the task's image (an inline task: the sandbox image) with no network, as user
65534, all capabilities dropped, no new privileges, memory and pid limits and a read-only root.
The work tree is a tmpfs at the task's ``workdir``, filled at ``reset`` from the image's tree
without version-control metadata (:class:`editcredit.sandbox.image.ImageTrees`), so the
repository's history (and future) is not reachable from inside; the image's own ``workdir`` is
hidden under it.

Every command runs in a fresh ``bash -c`` in the work tree (no shell state survives a turn, only
files), with :data:`COMMAND_ENV`; where the image keeps the repository's environment apart from
its ``python3`` (SWE-bench's conda environment ``/opt/miniconda3/envs/testbed``, the places the
grading runner reads from ``sandbox/guest/repo_env.py``), that environment is activated for the
command (its ``bin`` first on ``PATH``, ``CONDA_PREFIX``) with no derived image layer, so the
agent's ``python`` and ``pytest`` are the repository's, as the graded tests' are. A command has a
timeout; its output is cut to a budget (head and tail kept). After the command
every process it left is killed and the tracked tree (UTF-8 text files up to 1 MiB, outside
``.git``/``__pycache__``/``.pytest_cache``) is hashed: the difference is the turn's file-change
record ``path -> (sha256 before, sha256 after)``. ``submit`` ends the episode.

For edit blocks and counterfactuals (``editcredit.agent.edit_blocks``) the environment exposes
``tree`` (the base versions of the paths the episode touched, overlaid with their final state;
for an inline task the whole tree), ``base_files`` (the base versions of the same paths) and
``store`` (every version seen, by content hash); ``patch_of(tree)`` is the diff that grades any
such tree, and ``final_patch() == patch_of(tree)``.

What the text tree cannot hold is tracked beside it: after every command the helper also lists
every regular file and symbolic link with its git mode and blob id (``entries``). A path whose
change the text diff cannot express (:func:`special_paths`: a binary or over-large file, a
symbolic link, a mode change, a new or deleted executable) goes into the graded patch as a git
section of its own (mode lines and a binary patch with full index lines,
``sandbox.patches.git_binary_section``); the bytes of each such final state are read after the
command that made it, so the patch is complete even if the container dies later. The grader
then applies it like any patch (``git apply``; a patch that creates a symbolic link does not
apply, with that reason). Nothing the agent changed drops out of the graded artifact.
"""

from __future__ import annotations

import base64
import json
import shutil
import tempfile
import weakref
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

from editcredit.agent.bash_actions import (
    GUEST_HELPER,
    REAPER,
    BashFormatError,
    format_output,
    parse_bash_action,
)
from editcredit.agent.protocol import Environment, TurnRecord, content_hash
from editcredit.data.task import Task
from editcredit.sandbox.base import SandboxError
from editcredit.sandbox.docker_backend import LABEL, SANDBOX_UID, remove_container
from editcredit.sandbox.image import ImageTrees
from editcredit.sandbox.owners import owned_labels
from editcredit.sandbox.patches import LINK_MODE, diff_trees, git_binary_section, git_blob_id
from editcredit.sandbox.workspace import write_tree

BASE_MOUNT = "/editcredit/base"
READ_BATCH = 200
#: The declared environment of every command (no inherited proxies or locale surprises).
COMMAND_ENV = {
    "PATH": "/usr/local/bin:/usr/bin:/bin",
    "HOME": "/tmp",
    "TMPDIR": "/tmp",
    "LANG": "C.UTF-8",
    "LC_ALL": "C.UTF-8",
    "TZ": "UTC",
    "TERM": "dumb",
    "PAGER": "cat",
    "GIT_PAGER": "cat",
    "PYTHONHASHSEED": "0",
    "PYTHONDONTWRITEBYTECODE": "1",
    "OMP_NUM_THREADS": "1",
    "OPENBLAS_NUM_THREADS": "1",
    "MKL_NUM_THREADS": "1",
}


@dataclass(frozen=True)
class BashConfig:
    """Budgets and limits of one bash-tool episode: config ``agent.bash``, the agent's turn
    budget and the sandbox's image and limits, built by
    :func:`editcredit.agent.environments.bash_settings` (each key's default is the schema's
    alone)."""

    max_turns: int
    """Assistant turns before the episode ends with ``turn_budget`` (``agent.max_turns``)."""
    output_limit: int
    """Bytes of a command's output shown: the first and last halves, the middle counted."""
    command_timeout_s: float
    """Wall-clock limit of one command; its processes are killed after it."""
    max_command_chars: int
    """Longer commands are format errors."""
    image: str
    """Image for inline tasks (an image-based task brings its own): ``sandbox.image``."""
    mem_limit: str
    pids_limit: int
    tree_size: str
    """Size of the work tree's tmpfs (counted in the memory limit)."""

    def __post_init__(self) -> None:
        if self.max_turns < 1 or self.output_limit < 2 or self.command_timeout_s <= 0:
            raise ValueError(f"bash env: bad budgets {self}")


def special_paths(
    base: dict[str, list[str]], final: dict[str, list[str]], base_text: set, final_text: set
) -> list[str]:
    """Changed paths (``base``/``final``: path -> [git mode, blob id]) that a text diff of the
    text trees (``base_text``/``final_text``: their tracked paths) cannot express: either side
    a link or a file that is not tracked text, a mode change, or a file created or deleted
    with a mode other than 100644."""
    out = []
    for path in sorted(set(base) | set(final)):
        before, after = base.get(path), final.get(path)
        if before == after:
            continue
        plain_before = before is None or (before[0] != LINK_MODE and path in base_text)
        plain_after = after is None or (after[0] != LINK_MODE and path in final_text)
        if before is not None and after is not None:
            moded = before[0] != after[0]
        else:
            # one of the two is set: equal entries were skipped above
            moded = cast(list[str], before or after)[0] != "100644"
        if not (plain_before and plain_after) or moded:
            out.append(path)
    return out


class BashEnv(Environment):
    """One shell command per turn over a task's work tree in its own container."""

    tool = "bash"  # a chat template with a tool-call format calls it (policy.tool_calls)

    def __init__(self, trees: ImageTrees, cfg: BashConfig) -> None:
        self.trees = trees
        self.cfg = cfg
        self.client = trees.client
        self.client.api.timeout = max(self.client.api.timeout, self.cfg.command_timeout_s + 60)
        self._container = None
        self._scratch: Path | None = None
        self._task: Task | None = None
        self._finalizer: weakref.finalize[Any, Any] = weakref.finalize(self, lambda: None)

    # -- protocol --------------------------------------------------------------------------
    def reset(self, task: Task) -> str:
        self.close()
        self._task = task
        self.begin_episode()
        self.commands_run = 0
        if task.image is not None:
            image, self._base_dir = task.image, self.trees.get(task.image, task.workdir)
            self.base_files: dict[str, str] = {}
        else:
            assert task.files is not None
            self._scratch = Path(tempfile.mkdtemp(prefix="editcredit-bash-"))
            image, self._base_dir = self.cfg.image, self._scratch / "base"
            write_tree(task.files, self._base_dir)
            self.base_files = dict(task.files)
        self.tree: dict[str, str] = dict(self.base_files)
        self.store: dict[str, str] = {content_hash(t): t for t in self.tree.values()}
        try:
            self._start(image, task.workdir)
            setup = self._guest("setup", BASE_MOUNT)
        except BaseException:
            self.close()
            raise
        self._base_manifest: dict[str, str] = setup["manifest"]
        self._base_entries: dict[str, list[str]] = setup["entries"]
        self._manifest, self._entries = self._base_manifest, self._base_entries
        self._blobs: dict[str, bytes] = {}  # final bytes of special paths, by path
        return self.initial_observation(task)

    def initial_observation(self, task: Task) -> str:
        return (
            f"{task.problem_statement.strip()}\n\n"
            f"The repository is in {task.workdir} (the working directory). Reply with one shell "
            f"command per turn; its output is shown (at most {self.cfg.output_limit} bytes). "
            "Reply `submit` when the work tree holds your fix."
        )

    def end(self, reason: str) -> None:
        """End the episode and release its container (the record and patch stay)."""
        super().end(reason)
        self.close()

    def step(self, action_text: str) -> tuple[str, bool]:
        if self._task is None or self._end_reason:
            raise RuntimeError("step() after the episode ended or before reset()")
        record = TurnRecord(turn=len(self._turns), action_text=action_text, kind="format_error")
        try:
            action = parse_bash_action(action_text, self.cfg.max_command_chars)
            record.kind = action.kind
            if action.kind == "submit":
                observation = "submitted"
                self.end("submit")
            else:
                observation, record.changes = self._command(action.command)
        except BashFormatError as exc:
            record.error = str(exc)
            observation = f"format error: {exc}"
        except SandboxError as exc:
            record.error = str(exc)
            observation = f"the environment failed: {exc}"
            self.end("sandbox_died")
        record.observation = observation
        self._turns.append(record)
        if not self._end_reason and len(self._turns) >= self.cfg.max_turns:
            self.end("turn_budget")
        return observation, bool(self._end_reason)

    def final_patch(self) -> str:
        return self.patch_of(self.tree)

    def patch_of(self, tree: dict[str, str]) -> str:
        """The diff from the base to ``tree`` (e.g. a counterfactual of ``self.tree``), with
        every special path's final state (binary content, links, modes) as a git section; a
        special path whose final state is text takes its content from ``tree``."""
        special = self.special_paths()
        base = {p: t for p, t in self.base_files.items() if p not in special}
        text = diff_trees(base, {p: t for p, t in tree.items() if p not in special})
        sections = []
        for path in special:
            before, after = self._base_entries.get(path), self._entries.get(path)
            old = (before[0], before[1]) if before else None
            if after is None:
                new = None
            elif path in self._manifest and after[0] != LINK_MODE:
                content = tree.get(path)
                new = None if content is None else (after[0], content.encode("utf-8"))
            else:
                new = (after[0], self._blobs[path])
            sections.append(git_binary_section(path, old, new))
        return text + "".join(sections)

    def special_paths(self) -> list[str]:
        """Paths whose change so far a text diff cannot express (see :func:`special_paths`)."""
        return special_paths(
            self._base_entries, self._entries, set(self._base_manifest), set(self._manifest)
        )

    # -- commands and the change record ------------------------------------------------------
    def _command(self, command: str) -> tuple[str, dict[str, tuple[str | None, str | None]]]:
        self.commands_run += 1
        timeout = self.cfg.command_timeout_s
        try:
            result = self._guest("run", str(timeout), str(self.cfg.output_limit), command)
            observation = format_output(result, timeout)
        except SandboxError as exc:  # the command may kill its supervisor (same user): settle
            result = self._guest("settle")
            observation = f"the command's supervisor was killed; its output is lost ({exc})"
        after: dict[str, str] = result["manifest"]
        before = self._manifest
        changed = sorted(p for p in set(before) | set(after) if before.get(p) != after.get(p))
        wanted = [p for p in changed if p in after and after[p] not in self.store]
        texts = self._read(wanted)
        for path in wanted:  # check everything before changing any state
            if texts.get(path) is None or content_hash(texts[path]) != after[path]:
                raise SandboxError(f"{path} changed while it was read")
        first = [p for p in changed if p not in self.base_files and p in self._base_manifest]
        bases = {p: self._base_text(p) for p in first}
        for path, text in bases.items():  # base versions of paths touched for the first time
            self.base_files[path] = self.tree[path] = self.store[content_hash(text)] = text
        for path in changed:
            if path in after:
                text = texts[path] if path in texts else self.store[after[path]]
                self.store[after[path]] = self.tree[path] = text
            else:
                self.tree.pop(path, None)
        self._manifest = after
        self._entries = result["entries"]
        self._track_special()
        return observation, {p: (before.get(p), after.get(p)) for p in changed}

    def _track_special(self) -> None:
        """Base texts of special text paths, and the bytes of every special final state that
        is not text (read now: the container may not outlive the episode)."""
        for path in self.special_paths():
            entry = self._entries.get(path)
            if entry is None:
                continue
            if path in self._manifest and entry[0] != LINK_MODE:
                if path in self._base_manifest and path not in self.base_files:
                    text = self._base_text(path)  # a mode change of an untouched text file
                    self.base_files[path] = self.tree[path] = text
                    self.store[content_hash(text)] = text
                continue
            have = self._blobs.get(path)
            if have is not None and git_blob_id(have) == entry[1]:
                continue
            raw = self._guest("readb", json.dumps([path])).get(path)
            data = base64.b64decode(raw) if raw is not None else None
            if data is None or git_blob_id(data) != entry[1]:
                raise SandboxError(f"{path} changed while it was read")
            self._blobs[path] = data

    def _base_text(self, path: str) -> str:
        """The base version of a path (read from the host copy, checked against the tree's)."""
        text = (self._base_dir / path).read_text(encoding="utf-8")
        if content_hash(text) != self._base_manifest[path]:
            raise SandboxError(f"{path}: the work tree's base copy differs from the image's")
        return text

    def _read(self, paths: list[str]) -> dict[str, str]:
        texts: dict[str, str] = {}
        for i in range(0, len(paths), READ_BATCH):
            texts.update(self._guest("read", json.dumps(paths[i : i + READ_BATCH])))
        return texts

    # -- the container ---------------------------------------------------------------------
    def _start(self, image: str, workdir: str) -> None:
        self.trees.image_id(image)  # a missing image fails here, naming it
        self._container = self.client.containers.run(
            image,
            command=["python3", "-I", "-c", REAPER],
            entrypoint=[],
            detach=True,
            network_mode="none",
            user=f"{SANDBOX_UID}:{SANDBOX_UID}",
            read_only=True,
            cap_drop=["ALL"],
            security_opt=["no-new-privileges"],
            labels=owned_labels(LABEL),
            tmpfs={
                "/tmp": "rw,size=128m,mode=1777",
                workdir: f"rw,exec,size={self.cfg.tree_size},uid={SANDBOX_UID},"
                f"gid={SANDBOX_UID},mode=0755",
            },
            volumes={str(self._base_dir): {"bind": BASE_MOUNT, "mode": "ro"}},
            working_dir=workdir,
            environment=COMMAND_ENV,
            mem_limit=self.cfg.mem_limit,
            memswap_limit=self.cfg.mem_limit,
            pids_limit=self.cfg.pids_limit,
        )
        self._finalizer.detach()
        self._finalizer = weakref.finalize(self, remove_container, self._container)

    def _guest(self, mode: str, *args: str) -> dict[str, Any]:
        """Run the guest helper in the episode's container as the tree's owner; its answer."""
        if self._container is None or self._task is None:
            raise SandboxError("the episode's container is not running")
        argv = ["python3", "-I", "-c", GUEST_HELPER, mode, self._task.workdir, *args]
        try:
            code, (out, err) = self._container.exec_run(
                argv,
                user=f"{SANDBOX_UID}:{SANDBOX_UID}",
                environment=COMMAND_ENV,
                demux=True,
            )
        except Exception as exc:
            raise SandboxError(f"exec in the episode container failed: {exc}") from exc
        if code != 0:
            tail = (err or b"").decode(errors="replace")[-500:]
            raise SandboxError(f"environment helper {mode} exited with {code}: {tail}")
        try:
            return json.loads(out or b"")
        except json.JSONDecodeError as exc:
            raise SandboxError(f"environment helper {mode}: unreadable answer ({exc})") from None

    def _stop(self) -> None:
        if self._container is not None:
            remove_container(self._container)
            self._container = None
            self._finalizer.detach()

    def close(self) -> None:
        """Remove the container and scratch files (the episode's record stays readable)."""
        self._stop()
        if self._scratch is not None:
            shutil.rmtree(self._scratch, ignore_errors=True)
            self._scratch = None

    def __enter__(self) -> BashEnv:
        return self

    def __exit__(self, *exc) -> None:
        self.close()
