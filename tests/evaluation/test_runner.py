"""The slot runner: batched generation, grading, the ledger's retries, resuming."""

from __future__ import annotations

import pytest
from evalfakes import FakeChat, ScriptedGenerator, by_task, calc_tasks
from taskfactory import CONFIG

from editcredit.agent.environments import environment_factory
from editcredit.agent.rollout import RolloutConfig
from editcredit.evaluation.journal import Journal
from editcredit.evaluation.ledger import Limits
from editcredit.evaluation.runner import SliceSettings, run_slots
from editcredit.sandbox.base import SandboxError

ROLLOUT = RolloutConfig(max_turns=4, max_new_tokens=8, max_context_tokens=4096, temperature=1.0)
MINIBUGS = environment_factory({**CONFIG["agent"], "max_turns": 4}, CONFIG["sandbox"])


def settings(**kw):
    base = dict(
        model="m",
        evalset="holdout",
        rollout=ROLLOUT,
        environment=MINIBUGS,
        f_weight=CONFIG["grading"]["f_weight"],
        g_weight=CONFIG["grading"]["g_weight"],
        limits=Limits(**CONFIG["evaluation"]["limits"]),
        seed=7,
        batch_size=CONFIG["evaluation"]["batch_size"],
        workers=CONFIG["sandbox"]["workers"],
    )
    return SliceSettings(**{**base, **kw})


class FailFirst:
    """Raises (or reports a died sandbox) on its first ``n`` gradings, then passes through."""

    def __init__(self, inner, n: int = 1) -> None:
        self.inner, self.n, self.calls = inner, n, 0

    def grade(self, task, patch):
        self.calls += 1
        if self.calls <= self.n:
            raise SandboxError("daemon went away")
        return self.inner.grade(task, patch)


class CrashOnce:
    """A generator whose first call fails like a lost device, then behaves."""

    def __init__(self, inner, exc: BaseException, at_call: int = 1) -> None:
        self.inner, self.exc, self.at_call, self.calls = inner, exc, at_call, 0

    def generate(self, *args):
        self.calls += 1
        if self.calls == self.at_call:
            raise self.exc
        return self.inner.generate(*args)


def run(tmp_path, slots, tasks, generator, chat, sandbox, **kw):
    journal = Journal(tmp_path / "j", {"test": 1})
    return run_slots(
        slots,
        {t.instance_id: t for t in tasks},
        settings(**kw),
        journal,
        sandbox,
        lambda: (generator, chat),
        tmp_path / "j" / "trajectories",
        log=lambda _: None,
    )


def kinds(attempts):
    return [(a.kind, a.outcome) for a in attempts]


def test_in_episode_infrastructure_failure_regenerates_with_a_new_seed(tmp_path, local_sandbox):
    tasks = calc_tasks(1)
    chat = FakeChat()
    history, stats = run(
        tmp_path,
        [("toy__calc__0", 0)],
        tasks,
        ScriptedGenerator(chat, by_task),
        chat,
        FailFirst(local_sandbox),
        workers=1,
    )
    attempts = history[("toy__calc__0", 0)]
    assert kinds(attempts) == [
        ("generate", "infra_failure"),
        ("regenerate", "patch"),
        ("grade", "report"),
    ]
    assert attempts[0].evidence["in_episode_failures"][0]["exception"].startswith("SandboxError")
    assert attempts[0].seed != attempts[1].seed
    assert attempts[0].rollout_key != attempts[1].rollout_key
    assert attempts[2].verdict == 1 and attempts[2].of == 1
    assert stats.attempts == {"generate": 1, "regenerate": 1, "grade": 1}


def test_a_crashed_generation_batch_is_an_attempt_failure_of_every_slot(tmp_path, local_sandbox):
    tasks = calc_tasks(2)
    chat = FakeChat()
    generator = CrashOnce(ScriptedGenerator(chat, by_task), OSError("device lost"))
    slots = [(t.instance_id, 0) for t in tasks]
    history, _ = run(tmp_path, slots, tasks, generator, chat, local_sandbox)
    for slot in slots:
        first = history[slot][0]
        assert (first.kind, first.outcome) == ("generate", "infra_failure")
        assert "device lost" in first.evidence["exception"]
        assert first.trajectory is None
        assert history[slot][1].kind == "regenerate"
        assert history[slot][-1].outcome == "report"
    # task 0 fixes the bug, task 1 submits an empty patch (0 without running)
    assert history[slots[0]][-1].verdict == 1
    assert history[slots[1]][-1].verdict_kind == "empty_patch"


def test_an_interrupted_run_resumes_without_grading_a_decided_slot_again(tmp_path, local_sandbox):
    tasks = calc_tasks(3)
    slots = [(t.instance_id, k) for t in tasks for k in range(2)]
    chat = FakeChat()
    crashing = CrashOnce(ScriptedGenerator(chat, by_task), KeyboardInterrupt(), at_call=4)
    with pytest.raises(KeyboardInterrupt):
        run(tmp_path, slots, tasks, crashing, chat, local_sandbox, batch_size=2)
    journal_path = tmp_path / "j" / "journal.jsonl"
    before_text = journal_path.read_text()
    before = Journal(tmp_path / "j", {"test": 1}).replay()
    decided = {s for s, a in before.items() if any(x.outcome == "report" for x in a)}
    assert decided and len(decided) < len(slots)
    resumed = ScriptedGenerator(chat, by_task)
    history, stats = run(tmp_path, slots, tasks, resumed, chat, local_sandbox)
    assert journal_path.read_text().startswith(before_text)  # append-only: nothing lost
    for slot in decided:
        assert history[slot] == before[slot]  # not one more attempt
    for slot in slots:
        assert sum(a.outcome == "report" for a in history[slot]) == 1
    assert stats.resumed_attempts == sum(len(v) for v in before.values())


def test_a_rerun_of_a_finished_slice_loads_no_policy_and_makes_no_attempt(tmp_path, local_sandbox):
    tasks = calc_tasks(2)
    slots = [(t.instance_id, 0) for t in tasks]
    chat = FakeChat()
    first, _ = run(tmp_path, slots, tasks, ScriptedGenerator(chat, by_task), chat, local_sandbox)

    def no_policy():
        raise AssertionError("the policy was loaded")

    journal = Journal(tmp_path / "j", {"test": 1})
    again, stats = run_slots(
        slots,
        {t.instance_id: t for t in tasks},
        settings(),
        journal,
        local_sandbox,
        no_policy,
        tmp_path / "j" / "trajectories",
        log=lambda _: None,
    )
    assert again == first
    assert stats.attempts == {} and not stats.policy_loaded


@pytest.mark.docker
def test_docker_grading_with_injected_faults_settles_every_slot_within_the_limits(
    tmp_path, docker_sandbox
):
    from editcredit.evaluation.sandboxes import FaultySandbox

    tasks = calc_tasks(4)
    slots = [(t.instance_id, k) for t in tasks for k in range(2)]
    chat = FakeChat()
    faulty = FaultySandbox(docker_sandbox, rate=0.3, seed=2, mode="mixed")
    history, stats = run(
        tmp_path, slots, tasks, ScriptedGenerator(chat, by_task), chat, faulty, batch_size=3
    )
    assert faulty.injected > 0 and faulty.passed > 0
    for slot in slots:
        attempts = history[slot]
        assert sum(a.kind == "regenerate" for a in attempts) <= 1
        assert sum(a.kind == "regrade" for a in attempts) <= 1
        assert sum(a.outcome == "report" for a in attempts) <= 1
    verdicts = {s: a[-1].verdict_kind for s, a in history.items() if a[-1].outcome == "report"}
    # docker really graded: the fix passes, the wrong edit fails, the empty patch is 0
    assert verdicts.get(("toy__calc__0", 0), "valid_1") == "valid_1"
    assert {"valid_1", "valid_0", "empty_patch"} <= set(verdicts.values())


def test_the_progress_line_counts_settled_slots_on_stderr_and_in_no_result(
    tmp_path, local_sandbox, monkeypatch, capsys
):
    monkeypatch.setenv("EDITCREDIT_PROGRESS_SECONDS", "0.01")
    tasks = calc_tasks(2)
    slots = [(t.instance_id, k) for t in tasks for k in range(2)]
    chat = FakeChat()
    history, _ = run(tmp_path, slots, tasks, ScriptedGenerator(chat, by_task), chat, local_sandbox)
    lines = [x for x in capsys.readouterr().err.splitlines() if x.startswith("progress ")]
    assert lines and all(x.startswith("progress eval m/holdout: ") for x in lines)
    assert lines[-1].startswith("progress eval m/holdout: 4/4 slots (100 %)")
    assert lines[-1].endswith("done; round 1: grading")
    assert all(a[-1].outcome == "report" for a in history.values())
    written = [p.read_bytes() for p in (tmp_path / "j").rglob("*") if p.is_file()]
    assert not any(b"progress eval" in b for b in written)


@pytest.mark.parametrize("threads_per_sandbox", [1, 3])
def test_step_threads_beyond_the_sandboxes_change_no_attempt(
    tmp_path, local_sandbox, monkeypatch, threads_per_sandbox
):
    """Several samples of a task test the same trees in the same turn, so steps wait on one
    another in the grading memo; however many threads run the steps, every slot gets the same
    attempts (kinds, outcomes, patches, verdicts) as with the default's."""
    import editcredit.evaluation.runner as runner_module
    from editcredit.sandbox.memo import GradingMemo

    tasks = calc_tasks(4)
    slots = [(t.instance_id, k) for t in tasks for k in range(3)]

    def attempts_with(threads: int, where: str):
        monkeypatch.setattr(runner_module, "STEP_THREADS_PER_SANDBOX", threads)
        chat = FakeChat()
        generator = ScriptedGenerator(chat, by_task)
        folder = tmp_path / where
        folder.mkdir()
        history, _ = run(folder, slots, tasks, generator, chat, GradingMemo(local_sandbox))
        return {
            slot: [(a.kind, a.outcome, a.patch_sha256, a.verdict) for a in attempts]
            for slot, attempts in history.items()
        }

    default = attempts_with(runner_module.STEP_THREADS_PER_SANDBOX, "default")
    assert default == attempts_with(threads_per_sandbox, "other")
    assert {a[-1][3] for a in default.values()} == {0, 1}  # fixes and failures both graded
