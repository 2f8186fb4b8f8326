"""A project's working tree, its dependencies' site-packages, and its task image.

The image is built ``FROM`` the sandbox base image (Debian bookworm, Python 3.11, no pip):
the dependency wheels are unpacked on the host into ``site/`` and copied into the image's
``/usr/local/lib/python3.11/dist-packages``, the project's tree goes to ``/testbed``, and a
``.pth`` file there adds the project's development paths (``/testbed`` or ``/testbed/src``),
as a development-mode install does; a ``dist-info`` with the project's name and version is
written beside it when the tree carries no metadata of its own. The tag and label name the
SHA256 of the recipe (base image id, Dockerfile, every file's digest), so an unchanged recipe
reuses its image.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import tarfile
import zipfile
from dataclasses import dataclass
from pathlib import Path

from editcredit.conformance.edits import apply_edit
from editcredit.conformance.fetch import fetch
from editcredit.conformance.pins import Edit, Project

SITE = "/usr/local/lib/python3.11/dist-packages"
WORKDIR = "/testbed"
IMAGE_REPO = "editcredit-conformance"
LABEL_RECIPE = "editcredit.recipe_sha256"
LABEL_PROJECT = "editcredit.conformance"


class BuildError(RuntimeError):
    """A project's tree or image could not be made."""


@dataclass(frozen=True)
class Built:
    project: str
    tree: Path  # the host copy of /testbed (read it; copy before changing)
    image: str  # tag
    image_id: str
    recipe: str
    rebuilt: bool


def _strip_top(names: list[str]) -> str:
    tops = {n.split("/", 1)[0] for n in names if n}
    if len(tops) != 1:
        raise BuildError(f"archive has {len(tops)} top-level entries, expected one")
    return tops.pop()


def extract_sdist(archive: Path, dest: Path) -> None:
    """An sdist's files (its one top-level directory stripped) into ``dest``."""
    with tarfile.open(archive) as tar:
        members = [m for m in tar.getmembers() if m.isfile() or m.isdir() or m.issym()]
        top = _strip_top([m.name for m in members])
        for member in members:
            if member.name == top:
                continue
            member.name = member.name[len(top) + 1 :]
        tar.extractall(dest, members=[m for m in members if m.name], filter="data")


def unpack_wheel(wheel: Path, dest: Path, keep_dist_info: bool = True) -> None:
    """A wheel as an installer lays it out in site-packages: ``*.data/purelib`` and
    ``platlib`` merged into the root, its scripts and headers left out."""
    with zipfile.ZipFile(wheel) as zf:
        for info in zf.infolist():
            name = info.filename
            if info.is_dir() or name.startswith("/") or ".." in name.split("/"):
                continue
            parts = name.split("/")
            if parts[0].endswith(".data"):
                if len(parts) < 3 or parts[1] not in ("purelib", "platlib"):
                    continue
                parts = parts[2:]
            elif parts[0].endswith(".dist-info") and not keep_dist_info:
                continue
            target = dest.joinpath(*parts)
            target.parent.mkdir(parents=True, exist_ok=True)
            with zf.open(info) as src, target.open("wb") as out:
                shutil.copyfileobj(src, out)
            mode = (info.external_attr >> 16) & 0o777
            os.chmod(target, 0o755 if mode & 0o111 else 0o644)


def project_metadata(tree: Path, project: Project) -> tuple[str, str]:
    """(distribution name, version) for the development install's dist-info."""
    name, version = project.name, project.version or "0"
    pyproject = tree / "pyproject.toml"
    if pyproject.is_file():
        text = pyproject.read_text(encoding="utf-8", errors="replace")
        found = re.search(r'^name\s*=\s*"([^"]+)"', text, re.M)
        name = found[1] if found else name
        found = re.search(r'^version\s*=\s*"([^"]+)"', text, re.M)
        version = found[1] if found and not project.version else version
    return name, version


def has_own_metadata(tree: Path, dev_path: str) -> bool:
    root = tree / dev_path
    return any(p.suffix in (".egg-info", ".dist-info") for p in root.iterdir() if p.is_dir())


def write_tree(project: Project, repo_root: Path, cache: Path, dest: Path) -> None:
    """The project's working tree at ``dest``."""
    shutil.rmtree(dest, ignore_errors=True)
    dest.mkdir(parents=True)
    if project.kind == "local":
        src = repo_root / project.path
        if not src.is_dir():
            raise BuildError(f"{project.name}: {src} is not a directory")
        shutil.copytree(src, dest, dirs_exist_ok=True, ignore=shutil.ignore_patterns("__pycache__"))
    elif project.kind == "sdist":
        assert project.source is not None
        extract_sdist(fetch(project.source, cache), dest)
    else:  # the wheel's files (compiled extensions and its dist-info) as the working tree
        assert project.source is not None
        if project.tests_from is not None:
            extract_sdist(fetch(project.tests_from, cache), dest)
        unpack_wheel(fetch(project.source, cache), dest)
    for rel, text in project.tree_overlay.items():
        (dest / rel).parent.mkdir(parents=True, exist_ok=True)
        (dest / rel).write_text(text, encoding="utf-8")


def write_site(project: Project, tree: Path, cache: Path, dest: Path) -> None:
    """Dependencies unpacked, the development ``.pth`` and (when needed) a dist-info."""
    shutil.rmtree(dest, ignore_errors=True)
    dest.mkdir(parents=True)
    for pin in project.deps:
        unpack_wheel(fetch(pin, cache), dest)
    lines = [WORKDIR if p == "." else f"{WORKDIR}/{p}" for p in project.dev_paths]
    (dest / f"__editable__.{project.name}.pth").write_text("\n".join(lines) + "\n")
    if not any(has_own_metadata(tree, p) for p in project.dev_paths):
        name, version = project_metadata(tree, project)
        info = dest / f"{re.sub(r'[-.]+', '_', name)}-{version}.dist-info"
        info.mkdir()
        meta = f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n"
        (info / "METADATA").write_text(meta)
        (info / "INSTALLER").write_text("editcredit-conformance\n")


def tree_digest(root: Path) -> dict[str, str]:
    out = {}
    for path in sorted(root.rglob("*")):
        if path.is_file() and not path.is_symlink():
            out[str(path.relative_to(root))] = hashlib.sha256(path.read_bytes()).hexdigest()
        elif path.is_symlink():
            out[str(path.relative_to(root))] = "link:" + os.readlink(path)
    return out


def dockerfile(base_image: str) -> str:
    return f"FROM {base_image}\nCOPY site/ {SITE}/\nCOPY repo/ {WORKDIR}/\nWORKDIR {WORKDIR}\n"


def _readable(root: Path) -> None:
    for path in [root, *root.rglob("*")]:
        if path.is_symlink():
            continue
        mode = path.stat().st_mode
        os.chmod(path, mode | (0o755 if path.is_dir() else 0o644))


def build_project_image(
    project: Project, repo_root: Path, cache: Path, base_image: str, client
) -> Built:
    """The project's build context under ``cache/build/NAME`` and its image (reused when
    the recipe's label matches)."""
    from editcredit.suites.image import build_image

    try:
        base_id = client.images.get(base_image).id
    except Exception as exc:
        raise BuildError(f"base image {base_image!r} not found (editcredit build-image)") from exc
    ctx = cache / "build" / project.name
    tree, site = ctx / "repo", ctx / "site"
    write_tree(project, repo_root, cache, tree)
    write_site(project, tree, cache, site)
    _readable(ctx)
    text = dockerfile(base_image)
    (ctx / "Dockerfile").write_text(text)
    recipe_data = {
        "base": base_id,
        "dockerfile": text,
        "repo": tree_digest(tree),
        "site": tree_digest(site),
    }
    recipe = hashlib.sha256(json.dumps(recipe_data, sort_keys=True).encode()).hexdigest()
    tag = f"{IMAGE_REPO}:{project.name}-{recipe[:16]}"
    try:
        current = client.images.get(tag)
    except Exception:
        current = None
    if current is not None and current.labels.get(LABEL_RECIPE) == recipe:
        return Built(project.name, tree, tag, current.id, recipe, False)
    labels = {LABEL_RECIPE: recipe, LABEL_PROJECT: project.name}
    image_id = build_image(client, tag, ctx, labels)
    return Built(project.name, tree, tag, image_id, recipe, True)


def edited_copy(tree: Path, edit: Edit | None, dest: Path) -> Path:
    """A copy of ``tree`` at ``dest`` with ``edit`` applied (None: the clean tree)."""
    shutil.rmtree(dest, ignore_errors=True)
    shutil.copytree(tree, dest, symlinks=True)
    if edit is not None:
        path = dest / edit.path
        if not path.is_file():
            raise BuildError(f"edit names {edit.path}, which is not a file of the tree")
        path.write_text(apply_edit(path.read_text(encoding="utf-8"), edit), encoding="utf-8")
    return dest
