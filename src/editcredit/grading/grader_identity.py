"""Which grader decided: the code that judges, the observer inside the sandbox, and what runs
the tests, recorded with every evaluation journal and every training segment.

The identity is flat, so that two can be compared field by field:

``backend``          ``docker`` or ``local``
``image``            the configured image tag (None for local)
``image_id``         the image's content id (a rebuild under the same tag changes it)
``repo_digests``     its registry digests where it was pulled (empty where built here)
``python``, ``pytest``, ``pluggy``  the versions inside the image (the host's for local)
``grader_sha256``    the host code that turns a patch into a verdict: :data:`GRADER_SOURCES`
``observer_sha256``  the guest code mounted into the sandbox: :data:`OBSERVER_SOURCES`

:data:`GRADER_SOURCES` are the modules that decide a verdict: the judge (``grading/grader.py``,
``grading/verdicts.py``, ``grading/utility.py``) and the sandbox's observation path (the base
grading flow, both backends, per-test limits, the observation records, patch splitting,
sentinels, workspaces). Scheduling and construction (``sandbox/pool.py``,
``sandbox/factory.py``), image building (``sandbox/image.py``: the image is named by its id)
and the controls are not part of it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

from editcredit.io.hashing import sha256_file
from editcredit.io.provenance import directory_digest
from editcredit.sandbox import report_store
from editcredit.sandbox.runtime import image_runtime, local_runtime

PACKAGE = Path(__file__).resolve().parents[1]
GRADER_SOURCES = (
    "grading/grader.py",
    "grading/utility.py",
    "grading/verdicts.py",
    "sandbox/base.py",
    "sandbox/docker_backend.py",
    "sandbox/limits.py",
    "sandbox/local_backend.py",
    "sandbox/observations.py",
    "sandbox/patches.py",
    "sandbox/runners.py",
    "sandbox/sentinels.py",
    "sandbox/workspace.py",
)
OBSERVER_DIR = "sandbox/guest"
FIELDS = (
    "backend",
    "image",
    "image_id",
    "repo_digests",
    "python",
    "pytest",
    "pluggy",
    "grader_sha256",
    "observer_sha256",
)


def sources_digest(root: Path, relative: Iterable[str]) -> str:
    """SHA256 over (path, file SHA256) of ``relative`` paths under ``root``, sorted by path."""
    entries = []
    for rel in sorted(relative):
        path = root / rel
        if not path.is_file():
            raise FileNotFoundError(f"{path}: a grader source file is missing")
        entries.append((rel, sha256_file(path)))
    return directory_digest(entries)


def observer_sources(root: Path = PACKAGE) -> list[str]:
    """The guest files mounted into every sandbox (python files of ``sandbox/guest``)."""
    return sorted(p.relative_to(root).as_posix() for p in (root / OBSERVER_DIR).glob("*.py"))


def grader_identity(
    sandbox_cfg: Mapping[str, Any],
    runtime: Callable[[Mapping[str, Any]], Mapping[str, Any]] | None = None,
    root: Path = PACKAGE,
) -> dict[str, Any]:
    """The identity of the grader that ``sandbox_cfg`` (the config's ``sandbox`` section)
    grades with; ``runtime`` replaces the look at the image or the host (tests)."""
    backend = sandbox_cfg["backend"]
    found = dict((runtime or backend_runtime)(sandbox_cfg))
    identity = {
        "backend": backend,
        **{k: found.get(k) for k in FIELDS[1:7]},
        "grader_sha256": sources_digest(root, GRADER_SOURCES),
        "observer_sha256": sources_digest(root, observer_sources(root)),
    }
    return identity


def backend_runtime(sandbox_cfg: Mapping[str, Any]) -> dict[str, Any]:
    """The image (docker) or the host interpreter (local) that runs the tests."""
    backend = sandbox_cfg["backend"]
    if backend == "docker":
        return image_runtime(sandbox_cfg["image"])
    if backend == "local":
        return local_runtime()
    raise ValueError(f"sandbox.backend: unknown backend {backend!r} (docker or local)")


def grader_changes(old: Mapping[str, Any] | None, new: Mapping[str, Any]) -> list[str]:
    """``field: old -> new`` for every field that differs; a missing old identity is one line."""
    if old is None:
        return ["grader: not recorded"]
    return [
        f"{k}: {old.get(k)!r} -> {new.get(k)!r}"
        for k in sorted(set(old) | set(new))
        if old.get(k) != new.get(k)
    ]


def study_report_store(
    sandbox_cfg: Mapping[str, Any], grader: Mapping[str, Any] | None = None
) -> report_store.ReportStore | None:
    """The study's report store (config ``sandbox.report_store``) for this grader, or None where
    the config names none; the grader's identity (``grader``, else looked up) is asked for only
    when there is a store (opened through the module, where the tests turn it off)."""
    if not sandbox_cfg.get("report_store"):
        return None
    identity = grader if grader is not None else grader_identity(sandbox_cfg)
    return report_store.open_report_store(sandbox_cfg, identity)
