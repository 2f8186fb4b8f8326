"""Task images of real layouts and real upstream releases, built offline from local files.

A release is a file from PyPI (an sdist with its tests, or a wheel) pinned by SHA256, kept in
``EDITCREDIT_UPSTREAM_CACHE`` (default ``~/.cache/editcredit/upstream``) and fetched with
``pip download`` only when missing; a test that cannot get it is skipped, naming the file.
An image is built ``FROM`` the offline sandbox image (Python 3.11, no pip), as
``docs/image-tasks.md`` says: the repository at ``/testbed``, what the image installs copied
into its ``dist-packages`` (wheels unpacked, ``.pth`` files of development installs). An image
whose recipe label (the SHA256 of the base image id and every file of its context) matches is
reused.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import pytest
from taskfactory import CONFIG

from editcredit.suites.image import build_image

CACHE = Path(
    os.environ.get("EDITCREDIT_UPSTREAM_CACHE", Path.home() / ".cache" / "editcredit" / "upstream")
)
SITE = "/usr/local/lib/python3.11/dist-packages"
#: name==version -> SHA256 of the one file used (sdists with their tests, wheels).
PINS = {
    "asgiref==3.8.1": "3e1e3ecc849832fe52ccf2cb6686b7a55f82bb1d6aee72a58826471390335e47",
    "attrs==24.2.0": "81921eb96de3191c8258c199618104dd27ac608d9366f5e35d011eae1867ede2",
    "django==5.1.4": "de450c09e91879fa5a307f696e57c851955c910a438a35e6b4c895e86bedc82a",
    "hypothesis==6.112.0": "1e6adbd9534c0d691690b5006904327ea37c851d4e15262a22094aa77879e84d",
    "mpmath==1.3.0": "a0b2b9fe80bbcd81a6647ff13108738cfb482d481d826cc0e02f5b35e5c88d2c",
    "sortedcontainers==2.4.0": "a163dcaede0f1c021485e957a39245190e74249897e2ae4b2aa38595db237ee0",
    "sqlparse==0.5.2": "e99bc85c78160918c3e1d9230834ab8d80fc06c59d03f8db2618f65f65dda55e",
    "sympy==1.12": "ebf595c8dac3e0fdc4152c51878b498396ec7f30e7a914d6071e674d49420fb8",
    "sympy==1.13.3": "b27fd2c6530e0ab39e275fc9b683895367e51d5da91baa8d3d64db2565fec4d9",
}
LABEL_RECIPE = "editcredit.layout-recipe"


def release(spec: str, sdist: bool) -> Path:
    """The file of ``spec`` (``name==version``): from the cache, else ``pip download``."""
    dest = CACHE / spec.replace("==", "-")
    found = sorted(dest.glob("*")) if dest.exists() else []
    if not found:
        dest.mkdir(parents=True, exist_ok=True)
        binary = ["--no-binary", ":all:"] if sdist else ["--only-binary", ":all:"]
        cmd = [sys.executable, "-m", "pip", "download", "--no-deps", *binary, spec, "-d", dest]
        proc = subprocess.run([str(c) for c in cmd], capture_output=True, text=True, timeout=600)
        found = sorted(dest.glob("*"))
        if proc.returncode != 0 or not found:
            pytest.skip(f"{spec} is not in {dest} and pip could not download it")
    digest = hashlib.sha256(found[0].read_bytes()).hexdigest()
    if digest != PINS[spec]:
        raise AssertionError(f"{found[0]}: SHA256 {digest}, pinned {PINS[spec]} for {spec}")
    return found[0]


def unpack_wheel(spec: str, site: Path) -> None:
    with zipfile.ZipFile(release(spec, sdist=False)) as zf:
        zf.extractall(site)


def unpack_sdist(spec: str, dest: Path) -> Path:
    """Extract the sdist of ``spec`` under ``dest``; its top directory."""
    with tarfile.open(release(spec, sdist=True)) as tf:
        tf.extractall(dest, filter="data")
    (top,) = [p for p in dest.iterdir() if p.is_dir()]
    return top


def write_files(root: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")


def recipe_of(ctx: Path, base_id: str) -> str:
    digest = hashlib.sha256(base_id.encode())
    for path in sorted(p for p in ctx.rglob("*") if p.is_file() or p.is_symlink()):
        digest.update(str(path.relative_to(ctx)).encode() + b"\0")
        if path.is_symlink():  # its target, which may exist only in the image
            digest.update(b"link:" + os.readlink(path).encode())
        else:
            digest.update(hashlib.sha256(path.read_bytes()).digest())
    return digest.hexdigest()


def build_layout_image(tag: str, ctx: Path) -> str:
    """Build ``ctx`` (``repo/`` -> /testbed, ``site/`` -> dist-packages, ``opt/`` -> /opt
    where present) as ``tag``."""
    from editcredit.sandbox.docker_backend import docker_client

    client = docker_client()
    base = CONFIG["sandbox"]["image"]
    (ctx / "site").mkdir(exist_ok=True)
    (ctx / "Dockerfile").write_text(
        f"FROM {base}\nCOPY site/ {SITE}/\nCOPY repo/ /testbed/\n"
        + ("COPY opt/ /opt/\n" if (ctx / "opt").is_dir() else "")
        + "WORKDIR /testbed\n",
        encoding="utf-8",
    )
    recipe = recipe_of(ctx, client.images.get(base).id)
    try:
        current = client.images.get(tag)
    except Exception:
        current = None
    if current is not None and current.labels.get(LABEL_RECIPE) == recipe:
        return tag
    build_image(client, tag, ctx, {LABEL_RECIPE: recipe})
    return tag


def fresh_dir(path: Path) -> Path:
    shutil.rmtree(path, ignore_errors=True)
    path.mkdir(parents=True)
    return path
