"""A test's scratch workflow holds the checkout's sources only, whatever a pipeline run left
there (tests/checkout.py): the README's two commands pass in either order."""

from __future__ import annotations

import ast
import shutil
import subprocess
from pathlib import Path

import pytest
from checkout import REPO, CheckoutError, copy_sources, source_files

#: what a pipeline run leaves in a checkout (README, "What the pipeline builds"), planted below
PLANTED = [
    "paper/tables/costs.tex",
    "paper/figures/holdout_curve.pdf",
    "paper/main.pdf",
    "paper/main.aux",
    "paper/main.log",
    "results/eval/base/holdout/slots.parquet",
    "results/benchmarks/train_segment/M-s42/step_4.tsv",
    "models/base/tiny/config.json",
    "runs/M-s42/step_4/segment.json",
    "data/frozen/minibugs/tasks.parquet",
    "logs/eval_model/base/holdout.log",
    "cache/gradings/ab/cd.json",
    ".snakemake/metadata/x",
    "rules/__pycache__/common.cpython-311.pyc",
    "src/editcredit.egg-info/PKG-INFO",
]
SOURCES = [
    "Snakefile",
    "rules/common.smk",
    "scripts/run.py",
    "config/config.yaml",
    "paper/main.tex",
    "paper/templates/costs.tex.j2",
    "src/editcredit/__init__.py",
]


def git(root: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=root, check=True, capture_output=True)


@pytest.fixture
def clone(tmp_path) -> Path:
    """A small repository with this checkout's .gitignore, its sources committed, then a
    pipeline run's outputs planted, a new source not yet added and a tracked file deleted."""
    root = tmp_path / "clone"
    root.mkdir()
    shutil.copy(REPO / ".gitignore", root / ".gitignore")
    for rel in [*SOURCES, "rules/gone.smk"]:
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(f"# {rel}\n")
    (root / "scripts/run.py").chmod(0o755)
    git(root, "init", "-q")
    git(root, "add", ".")
    git(root, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "sources")
    for rel in PLANTED:
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text("generated\n")
    (root / "rules/new.smk").write_text("# a new source, not yet added\n")
    (root / "rules/gone.smk").unlink()
    return root


def listed(root: Path) -> set[str]:
    return {p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file()}


def test_a_copy_holds_the_sources_and_none_of_a_pipeline_runs_outputs(clone, tmp_path):
    names = ("Snakefile", "rules", "scripts", "config", "paper", "src")
    copy = copy_sources(names, tmp_path / "copy", root=clone)
    assert listed(copy) == {*SOURCES, "rules/new.smk"}
    assert (copy / "scripts/run.py").stat().st_mode & 0o111  # modes kept
    assert (copy / "paper/main.tex").read_text() == "# paper/main.tex\n"


def test_a_single_file_and_a_nested_directory_are_names_too(clone, tmp_path):
    copy = copy_sources(("rules/common.smk", "paper/templates"), tmp_path / "copy", root=clone)
    assert listed(copy) == {"rules/common.smk", "paper/templates/costs.tex.j2"}


@pytest.mark.parametrize("name", ["results", "paper/tables", "missing"])
def test_a_name_with_no_source_under_it_is_an_error(clone, name):
    with pytest.raises(CheckoutError, match=f"no source file under '{name}'"):
        source_files([name], clone)


def test_a_directory_outside_git_is_refused_by_name(tmp_path):
    (tmp_path / "Snakefile").write_text("")
    with pytest.raises(CheckoutError, match="git ls-files failed"):
        source_files(["Snakefile"], tmp_path)


def test_the_checkouts_workflow_sources_hold_no_generated_file():
    """This checkout, whatever it holds now: what the fixtures copy is git's sources only."""
    names = ("Snakefile", "rules", "scripts", "config", "profiles", "envs", "src", "paper")
    files = source_files(names, REPO)
    assert "Snakefile" in files and "paper/main.tex" in files and "rules/common.smk" in files
    generated = ("paper/tables/", "paper/figures/", "results/", "models/", "runs/", "logs/")
    assert not [f for f in files if f.startswith(generated) or f == "paper/main.pdf"]
    ignored = subprocess.run(
        ["git", "check-ignore", "--no-index", "--stdin"],
        cwd=REPO,
        input="\n".join(files),
        capture_output=True,
        text=True,
    )
    assert ignored.stdout == "", ignored.stdout


def _copies_from_the_checkout(path: Path, root: Path = REPO) -> list[str]:
    """Calls of shutil.copytree (also as ``(shutil.copytree if ... else shutil.copy)(...)``)
    whose source names the checkout: ``REPO`` in it, or a name its function bound to an
    expression with ``REPO`` in it."""
    found = []
    tree = ast.parse(path.read_text(), str(path))
    for scope in [tree, *(n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef))]:
        from_repo = {
            target.id
            for node in ast.walk(scope)
            if isinstance(node, ast.Assign) and "REPO" in ast.unparse(node.value)
            for target in node.targets
            if isinstance(target, ast.Name)
        }
        for node in ast.walk(scope):
            if not (isinstance(node, ast.Call) and node.args):
                continue
            funcs = [n for n in ast.walk(node.func) if isinstance(n, ast.Attribute)]
            if not any(f.attr == "copytree" for f in funcs):
                continue
            source = node.args[0]
            names = {n.id for n in ast.walk(source) if isinstance(n, ast.Name)}
            if "REPO" in ast.unparse(source) or names & from_repo:
                found.append(f"{path.relative_to(root)}:{node.lineno}")
    return sorted(set(found))


@pytest.mark.parametrize(
    "code, hits",
    [
        ("shutil.copytree(Path(REPO, 'rules'), dst)", 1),
        (
            "def f():\n    src = Path(REPO, name)\n"
            "    (shutil.copytree if d else shutil.copy)(src, x)",
            1,
        ),
        ("shutil.copytree(study['segment'], dst)", 0),
        ("copy_sources(('rules',), dst)", 0),
    ],
)
def test_the_scan_finds_a_checkout_copy(tmp_path, code, hits):
    probe = tmp_path / "probe.py"
    probe.write_text(code + "\n")
    assert len(_copies_from_the_checkout(probe, root=tmp_path)) == hits


def test_no_test_copies_a_checkout_directory_but_through_copy_sources():
    tests = sorted((REPO / "tests").rglob("*.py"))
    found = [hit for p in tests for hit in _copies_from_the_checkout(p)]
    assert not found, "copy the checkout with checkout.copy_sources:\n" + "\n".join(found)
