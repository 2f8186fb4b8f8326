"""A grader that changes between two halves of an evaluation: the sandbox image rebuilt under
the same tag starts a new journal (the old one kept), or is refused, never mixed."""

from __future__ import annotations

import contextlib
import io
import json
import uuid
from pathlib import Path

import pytest
from evalfakes import FakeChat, ScriptedGenerator, by_task, planted_study
from jobfactory import eval_files, eval_settings
from taskfactory import CONFIG

from editcredit.evaluation.job import eval_model_job
from editcredit.evaluation.journal import JournalError, read_header


class Interrupted(KeyboardInterrupt):
    """The job stopped from outside (a kill, a lost node) in the middle of the slice."""


class StopAt:
    """A generator that stops the job at its ``at_call``-th call."""

    def __init__(self, inner, at_call: int) -> None:
        self.inner, self.at_call, self.calls = inner, at_call, 0

    def generate(self, *args):
        self.calls += 1
        if self.calls == self.at_call:
            raise Interrupted()
        return self.inner.generate(*args)


def rebuild(client, tag: str, built: list[str]) -> str:
    """Build the sandbox image again under ``tag`` (same content, a new image id)."""
    dockerfile = f"FROM {CONFIG['sandbox']['image']}\nLABEL editcredit.test.build={uuid.uuid4()}\n"
    image, _ = client.images.build(fileobj=io.BytesIO(dockerfile.encode()), tag=tag, rm=True)
    built.append(image.id)
    return image.id


@pytest.fixture
def slice_study(tmp_path, monkeypatch, docker_ready):
    """Two toy tasks sampled twice, planned for model 'planted'; a test tag of the image."""
    from editcredit.sandbox.docker_backend import docker_client

    monkeypatch.chdir(tmp_path)
    tasks_path, model_dir = planted_study(samples=2, tasks=2, plan="plan.parquet")
    client = docker_client()
    tag = f"editcredit-test-grader:{uuid.uuid4().hex[:12]}"
    built: list[str] = []
    yield tasks_path, model_dir, client, tag, built
    for image_id in reversed(built):
        with contextlib.suppress(Exception):  # a tag another test run holds stays
            client.images.remove(image_id, force=True)


def evaluate(study, generator, chat, on_grader_change):
    tasks_path, model_dir, _client, tag, _built = study
    settings = eval_settings(
        {
            "evaluation.seed": 11,
            "evaluation.batch_size": 2,
            "evaluation.limits": {"regrade": 1, "regenerate": 1},
            "evaluation.on_grader_change": on_grader_change,
            "sandbox": {**CONFIG["sandbox"], "image": tag, "workers": 1},
        }
    )
    return eval_model_job(
        eval_files(model_dir, tasks_path, plan="plan.parquet"),
        settings,
        gpus=0,
        threads=1,
        config={"c": 1},
        load_policy_fn=lambda: (generator, chat),
    )


def journals(root: Path = Path("results/eval/planted/holdout/attempts")) -> dict[Path, bytes]:
    return {p: p.read_bytes() for p in sorted(root.glob("*/journal.jsonl"))}


@pytest.mark.docker
def test_rebuilding_the_sandbox_image_between_two_halves_starts_a_new_journal(slice_study):
    _tasks, _model, client, tag, built = slice_study
    first_id = rebuild(client, tag, built)
    chat = FakeChat()
    with pytest.raises(Interrupted):  # the first half: one batch graded, then stopped
        evaluate(slice_study, StopAt(ScriptedGenerator(chat, by_task), 4), chat, "new_journal")
    (old,) = journals()
    first_half = old.read_bytes()
    assert read_header(old)["grader"]["image_id"] == first_id
    assert len(first_half.splitlines()) > 1  # attempts were recorded

    second_id = rebuild(client, tag, built)
    assert second_id != first_id
    summary = evaluate(slice_study, ScriptedGenerator(chat, by_task), chat, "new_journal")
    new = Path(summary["journal"])
    assert new != old and set(journals()) == {old, new}
    assert old.read_bytes() == first_half  # kept as it was
    assert read_header(new)["grader"]["image_id"] == summary["grader"]["image_id"] == second_id
    assert summary["resumed_attempts"] == 0  # not one attempt of the old grader is reused
    for path in Path("results/eval/planted/holdout").glob("toy__*.json"):
        assert json.loads(path.read_text())["journal"] == new.as_posix()

    # the other choice: the image rebuilt once more, and the job refuses to start a journal
    rebuild(client, tag, built)
    before = journals()
    with pytest.raises(JournalError) as err:
        evaluate(slice_study, ScriptedGenerator(chat, by_task), chat, "refuse")
    message = str(err.value)
    assert message.split(": ")[0] in {str(old), str(new)}
    assert f"image_id: '{second_id}'" in message or f"image_id: '{first_id}'" in message
    assert "evaluation.on_grader_change is 'refuse'" in message
    assert journals() == before  # nothing started, nothing appended
