"""The sandbox base image: pulled where a registry has it, otherwise built offline.

The offline build bootstraps a minimal Debian with python3 and pytest from Debian's package
mirror (``debootstrap --variant=minbase``) and imports it with ``docker import``. The grader's
guest code is not baked in: it is mounted read-only at run time.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from editcredit.sandbox.base import SandboxError
from editcredit.sandbox.docker_backend import docker_client

PACKAGES = ("python3", "python3-pytest")


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
