"""The pinned project list (``conformance/projects.yaml``) as typed records.

Every downloaded file is pinned by name and SHA256; a project is either written in the
repository (``local``: a directory under ``conformance/projects``) or an upstream release
(``sdist``: its PyPI source distribution, tests included; ``wheel``: its released binary wheel
unpacked as the working tree over the files of the sdist ``tests_from`` names, or alone where
the wheel ships its tests). Bad input raises
:class:`PinsError` naming the file, the project and the field.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

RUNNERS = ("pytest", "django", "sympy")
KINDS = ("local", "sdist", "wheel")
_SHA = re.compile(r"^[0-9a-f]{64}$")
_NAME = re.compile(r"^[a-z0-9][a-z0-9_-]*$")


class PinsError(ValueError):
    """The pinned list is malformed."""


@dataclass(frozen=True)
class FilePin:
    """One downloaded file: its exact file name on PyPI (or its ``url`` on Debian's package
    archive, for a release whose PyPI files lack what the suite needs) and its SHA256."""

    filename: str
    sha256: str
    url: str = ""


@dataclass(frozen=True)
class Edit:
    """A one-line change: the line ``old`` (exactly once in ``path``) becomes ``new``."""

    path: str
    old: str
    new: str


@dataclass(frozen=True)
class Project:
    name: str
    kind: str
    runner: str
    tests: tuple[str, ...]
    gold: Edit
    bug: Edit
    version: str = ""
    path: str = ""  # local: the tree's directory, relative to the repository root
    source: FilePin | None = None  # sdist or wheel of the project itself
    tests_from: FilePin | None = None  # wheel kind: the sdist laid under the wheel, if any
    deps: tuple[FilePin, ...] = ()  # wheels installed into the image's site-packages
    dev_paths: tuple[str, ...] = (".",)  # what the development-mode .pth adds, under /testbed
    command: tuple[str, ...] = ()  # the runner's command (grader and reference), () = default
    timeout_s: float = 600.0
    mem_limit: str = ""  # the grading sandbox's memory limit ('' = the config's)
    ci: bool = False
    note: str = ""
    tree_overlay: dict[str, str] = field(default_factory=dict)  # extra files written in the tree


@dataclass(frozen=True)
class Pins:
    projects: tuple[Project, ...]

    def by_name(self, name: str) -> Project:
        for project in self.projects:
            if project.name == name:
                return project
        raise PinsError(f"no project {name!r} (known: {', '.join(self.names())})")

    def names(self) -> list[str]:
        return [p.name for p in self.projects]


def _pin(value: Any, where: str) -> FilePin:
    if not isinstance(value, dict) or not {"file", "sha256"} <= set(value) <= {
        "file",
        "sha256",
        "url",
    }:
        raise PinsError(f"{where}: expected a mapping with 'file', 'sha256' (and 'url')")
    name, digest, url = value["file"], value["sha256"], value.get("url", "")
    if not isinstance(name, str) or "/" in name or not name:
        raise PinsError(f"{where}.file: not a file name: {name!r}")
    if not isinstance(digest, str) or not _SHA.match(digest):
        raise PinsError(f"{where}.sha256: not a lower-case SHA256: {digest!r}")
    if url and (
        not isinstance(url, str)
        or not url.startswith(("http://", "https://"))
        or not url.endswith("/" + name)
    ):
        raise PinsError(f"{where}.url: expected an http(s) URL ending in /{name}")
    return FilePin(name, digest, url)


def _edit(value: Any, where: str) -> Edit:
    if not isinstance(value, dict) or set(value) != {"path", "old", "new"}:
        raise PinsError(f"{where}: expected a mapping with exactly 'path', 'old' and 'new'")
    for key in ("path", "old", "new"):
        if not isinstance(value[key], str) or "\n" in value[key]:
            raise PinsError(f"{where}.{key}: expected one line of text")
    if value["old"] == value["new"]:
        raise PinsError(f"{where}: 'old' and 'new' are the same line")
    return Edit(value["path"], value["old"], value["new"])


def _strings(value: Any, where: str) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
        raise PinsError(f"{where}: expected a list of non-empty strings")
    return tuple(value)


FIELDS = {
    "name",
    "kind",
    "runner",
    "version",
    "path",
    "source",
    "tests_from",
    "deps",
    "dev_paths",
    "tests",
    "command",
    "gold",
    "bug",
    "timeout_s",
    "mem_limit",
    "ci",
    "note",
    "tree_overlay",
}


def project_from(raw: Any, where: str, wheels: dict[str, FilePin]) -> Project:
    """One project entry; ``wheels`` resolves the names in ``deps``."""
    if not isinstance(raw, dict):
        raise PinsError(f"{where}: expected a mapping")
    unknown = sorted(set(raw) - FIELDS)
    if unknown:
        raise PinsError(f"{where}: unknown field {unknown[0]!r}")
    name = raw.get("name")
    if not isinstance(name, str) or not _NAME.match(name):
        raise PinsError(f"{where}.name: expected a lower-case name, got {name!r}")
    where = f"{where} ({name})"
    kind, runner = raw.get("kind"), raw.get("runner", "pytest")
    if kind not in KINDS:
        raise PinsError(f"{where}.kind: {kind!r} is not one of {', '.join(KINDS)}")
    if runner not in RUNNERS:
        raise PinsError(f"{where}.runner: {runner!r} is not one of {', '.join(RUNNERS)}")
    for key in ("tests", "gold", "bug"):
        if key not in raw:
            raise PinsError(f"{where}.{key}: required")
    deps = []
    for i, dep in enumerate(_strings(raw.get("deps", []), f"{where}.deps")):
        if dep not in wheels:
            raise PinsError(f"{where}.deps[{i}]: {dep!r} is not pinned under 'wheels'")
        deps.append(wheels[dep])
    path, source, tests_from = raw.get("path", ""), None, None
    if kind == "local":
        if not isinstance(path, str) or not path:
            raise PinsError(f"{where}.path: a local project needs its directory")
    else:
        if "source" not in raw:
            raise PinsError(f"{where}.source: required for kind {kind}")
        source = _pin(raw["source"], f"{where}.source")
        if not raw.get("version"):
            raise PinsError(f"{where}.version: required for kind {kind}")
    if "tests_from" in raw:
        if kind != "wheel":
            raise PinsError(f"{where}.tests_from: only a wheel project takes files from an sdist")
        tests_from = _pin(raw["tests_from"], f"{where}.tests_from")
    timeout = raw.get("timeout_s", 600.0)
    if not isinstance(timeout, int | float) or timeout <= 0:
        raise PinsError(f"{where}.timeout_s: expected a positive number")
    overlay = raw.get("tree_overlay", {})
    if not isinstance(overlay, dict) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in overlay.items()
    ):
        raise PinsError(f"{where}.tree_overlay: expected a mapping of path to text")
    return Project(
        name=name,
        kind=kind,
        runner=runner,
        tests=_strings(raw["tests"], f"{where}.tests"),
        gold=_edit(raw["gold"], f"{where}.gold"),
        bug=_edit(raw["bug"], f"{where}.bug"),
        version=str(raw.get("version", "")),
        path=path,
        source=source,
        tests_from=tests_from,
        deps=tuple(deps),
        dev_paths=_strings(raw.get("dev_paths", ["."]), f"{where}.dev_paths"),
        command=_strings(raw.get("command", []), f"{where}.command"),
        timeout_s=float(timeout),
        mem_limit=str(raw.get("mem_limit", "")),
        ci=bool(raw.get("ci", False)),
        note=str(raw.get("note", "")),
        tree_overlay=dict(overlay),
    )


def parse_pins(data: Any, where: str) -> Pins:
    if not isinstance(data, dict) or "projects" not in data:
        raise PinsError(f"{where}: expected a mapping with 'projects' (and 'wheels')")
    wheels_raw = data.get("wheels") or {}
    if not isinstance(wheels_raw, dict):
        raise PinsError(f"{where}: wheels: expected a mapping of name to pin")
    wheels = {k: _pin(v, f"{where}: wheels.{k}") for k, v in wheels_raw.items()}
    raw_projects = data["projects"]
    if not isinstance(raw_projects, list):
        raise PinsError(f"{where}: projects: expected a list")
    projects = [
        project_from(p, f"{where}: projects[{i}]", wheels) for i, p in enumerate(raw_projects)
    ]
    seen: set[str] = set()
    for i, project in enumerate(projects):
        if project.name in seen:
            raise PinsError(f"{where}: projects[{i}].name: duplicate {project.name!r}")
        seen.add(project.name)
    return Pins(tuple(projects))


def load_pins(path: str | Path) -> Pins:
    path = Path(path)
    if not path.is_file():
        raise PinsError(f"{path}: no such file")
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except yaml.YAMLError as exc:
        raise PinsError(f"{path}: not valid YAML ({exc})") from None
    return parse_pins(data, str(path))
