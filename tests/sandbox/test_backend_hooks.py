"""What the one ``Sandbox.grade`` leaves to a backend: a backend without images refuses an
image-based task with one clear error (never a tree built from nothing)."""

from __future__ import annotations

import pytest
from taskfactory import make_calc_task

from editcredit.data.task import Task
from editcredit.sandbox.base import SandboxError


def test_a_backend_without_images_refuses_an_image_task(local_sandbox):
    inline = make_calc_task()
    data = inline.model_dump()
    data.update(files=None, image="editcredit-task:calc", instance_id="toy__calc__image")
    task = Task(**data)
    with pytest.raises(SandboxError, match=r"toy__calc__image lives in the image .*local backend"):
        local_sandbox.grade(task, "")
    assert local_sandbox.grade(inline, inline.patch).run_status == "finished"
