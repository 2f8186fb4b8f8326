"""What runs the tests: the sandbox image by id and the versions inside it."""

from __future__ import annotations

import pytest
from taskfactory import CONFIG

from editcredit.sandbox.base import SandboxError
from editcredit.sandbox.runtime import image_runtime, parse_versions


@pytest.mark.parametrize(
    "text, expected",
    [
        (
            '{"python": "3.11.2", "pytest": "7.2.1", "pluggy": "1.0.0"}\n',
            {"python": "3.11.2", "pytest": "7.2.1", "pluggy": "1.0.0"},
        ),
        (
            'a warning\n{"python": "3.12", "pytest": "8", "pluggy": "1", "x": 0}\n\n',
            {"python": "3.12", "pytest": "8", "pluggy": "1"},
        ),
    ],
)
def test_parse_versions(text, expected):
    assert parse_versions(text, "image x") == expected


@pytest.mark.parametrize("text", ["", "Traceback ...\nModuleNotFoundError", '{"python": "3"}'])
def test_an_answer_without_versions_is_an_error_naming_the_image(text):
    with pytest.raises(SandboxError, match="image x: no versions in the probe's answer"):
        parse_versions(text, "image x")


class CountingClient:
    """A docker client that counts the containers it starts."""

    def __init__(self, client) -> None:
        self.images, self._containers, self.runs = client.images, client.containers, 0
        self.containers = self

    def run(self, *args, **kwargs):
        self.runs += 1
        return self._containers.run(*args, **kwargs)


@pytest.mark.docker
def test_the_sandbox_image_is_named_by_id_with_the_versions_inside(docker_ready, monkeypatch):
    from editcredit.sandbox import runtime
    from editcredit.sandbox.docker_backend import docker_client
    from editcredit.sandbox.owners import OWNER_LABEL, current_owner

    monkeypatch.setattr(runtime, "_VERSIONS", {})
    client = CountingClient(docker_client())
    image = client.images.get(CONFIG["sandbox"]["image"])
    found = image_runtime(CONFIG["sandbox"]["image"], client)
    assert found["image_id"] == image.id and found["image_id"].startswith("sha256:")
    assert found["repo_digests"] == sorted(image.attrs.get("RepoDigests") or [])
    assert all(found[k] and found[k][0].isdigit() for k in ("python", "pytest", "pluggy"))
    assert image_runtime(CONFIG["sandbox"]["image"], client) == found
    assert client.runs == 1  # the image was asked once
    mine = f"{OWNER_LABEL}={current_owner().label()}"
    assert client._containers.list(all=True, filters={"label": mine}) == []  # probe removed


@pytest.mark.docker
def test_a_missing_image_is_an_error_naming_it(docker_ready):
    with pytest.raises(SandboxError, match="sandbox image 'editcredit-no-such:image' not found"):
        image_runtime("editcredit-no-such:image")
