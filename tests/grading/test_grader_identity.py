"""The grader's identity: which code judged, which observer ran, what ran the tests."""

from __future__ import annotations

import shutil

import pytest

from editcredit.grading.grader_identity import (
    FIELDS,
    GRADER_SOURCES,
    PACKAGE,
    grader_changes,
    grader_identity,
    observer_sources,
    sources_digest,
)

RUNTIME = {
    "image": "img:tag",
    "image_id": "sha256:abc",
    "repo_digests": [],
    "python": "3.11.2",
    "pytest": "7.2.1",
    "pluggy": "1.0.0",
}


@pytest.fixture
def package(tmp_path):
    """A copy of the grader and observer sources, to change one file at a time."""
    for rel in [*GRADER_SOURCES, *observer_sources()]:
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(PACKAGE / rel, tmp_path / rel)
    return tmp_path


def identity(root, runtime=RUNTIME, backend="docker"):
    return grader_identity({"backend": backend}, lambda cfg: runtime, root)


def test_the_identity_has_every_field_and_a_copy_of_the_package_has_the_same(package):
    mine = identity(package)
    assert tuple(mine) == FIELDS
    assert mine == identity(PACKAGE)
    assert {k: mine[k] for k in RUNTIME} == RUNTIME


@pytest.mark.parametrize(
    "changed, field",
    [
        ("grading/verdicts.py", "grader_sha256"),
        ("sandbox/base.py", "grader_sha256"),
        ("sandbox/guest/observer.py", "observer_sha256"),
        ("sandbox/guest/runner.py", "observer_sha256"),
    ],
)
def test_a_changed_source_changes_its_hash_and_only_its(package, changed, field):
    before = identity(package)
    with (package / changed).open("a") as fh:
        fh.write("\n# changed\n")
    after = identity(package)
    assert grader_changes(before, after) == [f"{field}: {before[field]!r} -> {after[field]!r}"]


def test_a_new_observer_file_changes_the_observer_hash(package):
    before = identity(package)
    (package / "sandbox/guest/extra.py").write_text("x = 1\n")
    assert identity(package)["observer_sha256"] != before["observer_sha256"]


def test_a_file_outside_the_sources_changes_nothing(package):
    before = identity(package)
    (package / "sandbox/pool.py").write_text("anything\n")
    assert identity(package) == before


def test_a_missing_source_is_an_error_naming_it(package):
    (package / "grading/verdicts.py").unlink()
    with pytest.raises(FileNotFoundError, match="grading/verdicts.py: a grader source file"):
        identity(package)


def test_the_digest_does_not_depend_on_the_order_of_the_paths(package):
    rels = list(GRADER_SOURCES)
    assert sources_digest(package, rels) == sources_digest(package, reversed(rels))


@pytest.mark.parametrize(
    "old, new, lines",
    [
        ({"a": 1}, {"a": 1}, []),
        ({"a": 1}, {"a": 2}, ["a: 1 -> 2"]),
        ({"a": 1, "b": "x"}, {"a": 1, "b": "y", "c": 3}, ["b: 'x' -> 'y'", "c: None -> 3"]),
        (None, {"a": 1}, ["grader: not recorded"]),
    ],
)
def test_grader_changes(old, new, lines):
    assert grader_changes(old, new) == lines


def test_the_local_backend_names_the_host_interpreter():
    import platform

    found = grader_identity({"backend": "local"})
    assert found["backend"] == "local" and found["image"] is None and found["image_id"] is None
    assert found["pytest"] == pytest.__version__
    assert found["python"] == platform.python_version()


def test_an_unknown_backend_is_refused_naming_the_field():
    with pytest.raises(ValueError, match="sandbox.backend: unknown backend 'podman'"):
        grader_identity({"backend": "podman"})
