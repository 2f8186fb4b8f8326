"""The sandbox base image, and host copies of task images' work trees.

The base image is pulled where a registry has it, otherwise built offline: a minimal Debian with
python3 and pytest from Debian's package mirror (``debootstrap --variant=minbase``), imported
with ``docker import``. The grader's guest code is not baked in: it is mounted read-only at run
time. :class:`ImageTrees` copies an image-based task's work tree out of its image (without
version-control metadata) for the sandbox and the bash environment.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
import threading
import weakref
from pathlib import Path

from editcredit.sandbox.base import SandboxError
from editcredit.sandbox.docker_backend import LABEL, docker_client, readable_tree, remove_container
from editcredit.sandbox.owners import owned_labels

PACKAGES = ("python3", "python3-pytest")
#: Version-control metadata never copied out of a task image (the future must stay unreachable).
VCS_DIRS = frozenset({".git", ".hg", ".svn"})


def image_exists(tag: str) -> bool:
    try:
        docker_client().images.get(tag)
    except SandboxError:
        raise
    except Exception:
        return False
    return True


def try_pull(ref: str, tag: str) -> bool:
    """Pull ``ref`` and tag it; False (with a note) where no registry answers."""
    client = docker_client()
    try:
        image = client.images.pull(ref)
    except Exception as exc:
        print(f"pull of {ref} failed ({type(exc).__name__}); building offline", file=sys.stderr)
        return False
    repo, _, version = tag.partition(":")
    image.tag(repo, version or "latest")
    return True


def build_offline(tag: str, suite: str, mirror: str) -> None:
    """debootstrap a minbase root with python3 + pytest and ``docker import`` it as ``tag``."""
    if shutil.which("debootstrap") is None:
        raise SandboxError("debootstrap is not installed (apt-get install -y debootstrap)")
    with tempfile.TemporaryDirectory(prefix="editcredit-rootfs-") as tmp:
        root = Path(tmp) / "rootfs"
        cmd = [
            "debootstrap",
            "--variant=minbase",
            f"--include={','.join(PACKAGES)}",
            suite,
            str(root),
            mirror,
        ]
        print("building sandbox image:", " ".join(cmd), file=sys.stderr)
        proc = subprocess.run(cmd, capture_output=True, text=True)
        if proc.returncode != 0:
            tail = "\n".join(proc.stdout.splitlines()[-5:] + proc.stderr.splitlines()[-5:])
            raise SandboxError(f"debootstrap failed ({proc.returncode}):\n{tail}")
        for junk in ("var/cache/apt/archives", "var/lib/apt/lists"):
            shutil.rmtree(root / junk, ignore_errors=True)
        tar = subprocess.Popen(["tar", "-C", str(root), "-c", "."], stdout=subprocess.PIPE)
        changes = [
            "ENV PATH=/usr/local/bin:/usr/bin:/bin",
            "ENV LANG=C.UTF-8",
            "WORKDIR /tmp",
            'CMD ["python3"]',
        ]
        args = ["docker", "import"]
        for change in changes:
            args += ["--change", change]
        imp = subprocess.run([*args, "-", tag], stdin=tar.stdout, capture_output=True, text=True)
        tar.wait()
        if imp.returncode != 0:
            raise SandboxError(f"docker import failed: {imp.stderr.strip()}")


def ensure_image(tag: str, pull_ref: str, suite: str, mirror: str) -> str:
    """Make sure ``tag`` exists: keep it, else pull ``pull_ref`` (if set), else build it."""
    if image_exists(tag):
        return "present"
    if pull_ref and try_pull(pull_ref, tag):
        return "pulled"
    build_offline(tag, suite, mirror)
    return "built"


class ImageTrees:
    """Host copies of task images' work trees, one per (image id, workdir), made on first use.

    A copy holds regular files, directories and links that stay inside the tree; version-control
    metadata (``.git``, ``.hg``, ``.svn``) and anything else is left behind. Removed on close.
    """

    def __init__(self, client, root: Path | None = None) -> None:
        self.client = client
        self._root = Path(root) if root else Path(tempfile.mkdtemp(prefix="editcredit-trees-"))
        self._lock = threading.Lock()
        self._copies: dict[tuple[str, str], Path] = {}
        self._finalizer = weakref.finalize(self, shutil.rmtree, self._root, True)

    def image_id(self, image: str) -> str:
        try:
            return self.client.images.get(image).id
        except Exception as exc:
            raise SandboxError(
                f"task image {image!r} not found; build it (editcredit build-task-images) or "
                f"load it into the daemon ({type(exc).__name__})"
            ) from exc

    def get(self, image: str, workdir: str) -> Path:
        """The host directory holding ``workdir`` of ``image`` (read it, never write it)."""
        key = (self.image_id(image), workdir)
        with self._lock:
            if key not in self._copies:
                digest = hashlib.sha256(f"{key[0]}:{workdir}".encode()).hexdigest()[:24]
                dest = self._root / digest
                extract_image_tree(self.client, key[0], workdir, dest)
                self._copies[key] = dest
            return self._copies[key]

    def close(self) -> None:
        self._finalizer()


def extract_image_tree(client, image: str, workdir: str, dest: Path) -> None:
    """Copy ``workdir`` of ``image`` to the new directory ``dest``, without VCS metadata."""
    container = client.containers.create(
        image, command=["true"], entrypoint=[], network_disabled=True, labels=owned_labels(LABEL)
    )
    try:
        with tempfile.TemporaryFile() as fh:
            try:
                chunks, _stat = container.get_archive(workdir)
                for chunk in chunks:
                    fh.write(chunk)
            except Exception as exc:
                raise SandboxError(f"image {image}: cannot read {workdir}: {exc}") from exc
            fh.seek(0)
            part = dest.with_name(dest.name + ".part")
            shutil.rmtree(part, ignore_errors=True)
            part.mkdir(parents=True)
            with tarfile.open(fileobj=fh) as tar:
                tar.extractall(part, members=_tree_members(tar), filter=_safe_member)
            strip = part / Path(workdir).name
            readable_tree(strip)
            os.replace(strip, dest)
            shutil.rmtree(part, ignore_errors=True)
    finally:
        remove_container(container)


def _tree_members(tar: tarfile.TarFile):
    for member in tar:
        parts = Path(member.name).parts
        if any(p in VCS_DIRS for p in parts):
            continue
        if member.isfile() or member.isdir() or member.issym():
            yield member


def _safe_member(member: tarfile.TarInfo, path: str) -> tarfile.TarInfo | None:
    """tarfile's 'data' filter, skipping (not failing on) members it refuses."""
    try:
        return tarfile.data_filter(member, path)
    except tarfile.FilterError:
        return None
