"""Pinned downloads from PyPI (or a pinned URL on Debian's archive), cached by content under
``cache/conformance/files``.

A file is fetched with pip (``pip download --no-deps``: ``--no-binary :all:`` for an sdist,
``--only-binary :all: --python-version 3.11`` for a wheel), then kept only if its SHA256 is the
pinned one. A cached file whose digest matches is never fetched again.
"""

from __future__ import annotations

import hashlib
import re
import shutil
import subprocess
import sys
import tempfile
import urllib.request
from pathlib import Path

from editcredit.conformance.pins import FilePin


class FetchError(RuntimeError):
    """A pinned file could not be obtained with its pinned digest."""


def file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def requirement_of(filename: str) -> tuple[str, str, bool]:
    """(project, version, is_wheel) of a distribution file name."""
    if filename.endswith(".whl"):
        name, version = filename.split("-")[:2]
        return name, version, True
    match = re.match(r"^(?P<name>.+?)-(?P<version>\d[^-]*)\.(tar\.gz|zip|tar\.bz2)$", filename)
    if not match:
        raise FetchError(f"{filename}: not an sdist or wheel file name")
    return match["name"], match["version"], False


def pip_args(pin: FilePin) -> list[str]:
    name, version, wheel = requirement_of(pin.filename)
    args = ["download", "--no-deps", "--disable-pip-version-check", f"{name}=={version}"]
    if wheel:
        platform = "manylinux2014_x86_64" if "manylinux" in pin.filename else "any"
        args += ["--only-binary", ":all:", "--python-version", "3.11"]
        if platform != "any":
            args += ["--platform", "manylinux_2_17_x86_64", "--platform", platform]
    else:
        args += ["--no-binary", ":all:"]
    return args


def fetch(pin: FilePin, cache: Path) -> Path:
    """The cached file of ``pin`` (downloaded on first use), its digest checked."""
    files = cache / "files"
    target = files / pin.sha256 / pin.filename
    if target.is_file() and file_sha256(target) == pin.sha256:
        return target
    files.mkdir(parents=True, exist_ok=True)
    tail = ""
    with tempfile.TemporaryDirectory(dir=files) as tmp:
        got = Path(tmp) / pin.filename
        if pin.url:
            try:
                urllib.request.urlretrieve(pin.url, got)
            except OSError as exc:
                raise FetchError(f"{pin.filename}: download from {pin.url} failed: {exc}") from None
        else:
            cmd = [sys.executable, "-m", "pip", *pip_args(pin), "-d", tmp]
            proc = subprocess.run(cmd, capture_output=True, text=True)
            tail = "\n".join((proc.stdout + proc.stderr).strip().splitlines()[-4:])
        if not got.is_file():
            raise FetchError(f"{pin.filename}: pip download did not produce it:\n{tail}")
        digest = file_sha256(got)
        if digest != pin.sha256:
            raise FetchError(f"{pin.filename}: SHA256 {digest}, pinned {pin.sha256}")
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.move(str(got), target)
    return target
