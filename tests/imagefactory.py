"""The offline image-based suite for tests: built once per test session, images reused.

Test modules import the fixture by name (``from imagefactory import image_suite``). The first
use writes the repositories and builds (or reuses, when their recipe label matches) one docker
image per instance ``FROM`` the offline sandbox image; later uses in the session get the same
suite object.
"""

from __future__ import annotations

import pytest
from taskfactory import CONFIG

from editcredit.suites.image import ImageSuite, build_image_suite

_BUILT: dict[str, ImageSuite] = {}


def get_image_suite(factory: pytest.TempPathFactory) -> ImageSuite:
    if "suite" not in _BUILT:
        out = factory.mktemp("imagebugs")
        _BUILT["suite"] = build_image_suite(out, CONFIG["sandbox"]["image"])
    return _BUILT["suite"]


@pytest.fixture(scope="session")
def image_suite(tmp_path_factory, docker_ready) -> ImageSuite:
    return get_image_suite(tmp_path_factory)


def task_by_repo(suite: ImageSuite, name: str):
    """The suite's task of repository ``name`` (textkit, numkit, shapes, unitkit, djangoish,
    minisympy)."""
    (task,) = [t for t in suite.tasks if t.repo == f"editcredit/{name}"]
    return task
