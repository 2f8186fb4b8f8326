"""What runs a task's tests: the sandbox image (by content, not only by name) and the versions
of python, pytest and pluggy inside it.

``image_runtime`` names the image by its id (the SHA256 of its configuration, so a rebuild under
the same tag is another image) and its registry digests where it was pulled, and asks the image
once per process for its versions (a short container: no network, non-root, owned and removed).
``local_runtime`` is the same record for the local backend: the host's interpreter.
"""

from __future__ import annotations

import contextlib
import json
import platform
import threading
from importlib.metadata import PackageNotFoundError, version
from typing import Any

from editcredit.sandbox.base import SandboxError
from editcredit.sandbox.docker_backend import LABEL, SANDBOX_UID, docker_client, remove_container
from editcredit.sandbox.owners import owned_labels

PROBE = (
    "import json, sys, platform, pluggy, pytest; "
    "print(json.dumps({'python': platform.python_version(), "
    "'pytest': pytest.__version__, 'pluggy': pluggy.__version__}))"
)
PROBE_TIMEOUT_S = 120
VERSION_KEYS = ("python", "pytest", "pluggy")

_VERSIONS: dict[str, dict[str, str]] = {}
_LOCK = threading.Lock()


def parse_versions(text: str, where: str) -> dict[str, str]:
    """The probe's answer (its last line of output), or SandboxError naming ``where``."""
    lines = [line for line in text.splitlines() if line.strip()]
    try:
        found = json.loads(lines[-1])
        return {k: str(found[k]) for k in VERSION_KEYS}
    except (IndexError, ValueError, KeyError, TypeError) as exc:
        raise SandboxError(f"{where}: no versions in the probe's answer {text[-500:]!r}") from exc


def image_versions(client, image_id: str) -> dict[str, str]:
    """python, pytest and pluggy versions inside ``image_id`` (asked once per process)."""
    with _LOCK:
        if image_id in _VERSIONS:
            return dict(_VERSIONS[image_id])
    container = client.containers.run(
        image_id,
        command=["python3", "-I", "-c", PROBE],
        entrypoint=[],
        detach=True,
        network_mode="none",
        user=f"{SANDBOX_UID}:{SANDBOX_UID}",
        read_only=True,
        labels=owned_labels(LABEL),
    )
    try:
        status = container.wait(timeout=PROBE_TIMEOUT_S)
        out = container.logs(stdout=True, stderr=True).decode(errors="replace")
    except Exception as exc:
        raise SandboxError(f"image {image_id}: the version probe did not finish: {exc}") from exc
    finally:
        remove_container(container)
    if status.get("StatusCode") != 0:
        raise SandboxError(f"image {image_id}: the version probe failed: {out[-500:]}")
    versions = parse_versions(out, f"image {image_id}")
    with _LOCK:
        _VERSIONS[image_id] = versions
    return dict(versions)


def image_runtime(image: str, client=None) -> dict[str, Any]:
    """The sandbox image ``image`` by id and registry digests, with its versions."""
    client = client or docker_client()
    try:
        found = client.images.get(image)
    except Exception as exc:
        raise SandboxError(
            f"sandbox image {image!r} not found; build it with `editcredit build-image`"
        ) from exc
    return {
        "image": image,
        "image_id": found.id,
        "repo_digests": sorted(found.attrs.get("RepoDigests") or []),
        **image_versions(client, found.id),
    }


def local_runtime() -> dict[str, Any]:
    """The host interpreter that the local backend runs tests with."""
    versions = {"python": platform.python_version()}
    for name in ("pytest", "pluggy"):
        versions[name] = "missing"
        with contextlib.suppress(PackageNotFoundError):
            versions[name] = version(name)
    return {"image": None, "image_id": None, "repo_digests": [], **versions}
