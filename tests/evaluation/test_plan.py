"""The slot plan: rows, hashes, versions, slices."""

from __future__ import annotations

import pytest
from evalfakes import calc_tasks

from editcredit.evaluation.plan import (
    EvalSetSpec,
    ModelSpec,
    PlanError,
    build_plan,
    content_sha256,
    diagnostic_steps,
    read_slice,
    write_plan,
)

MODELS = [
    ModelSpec("base", "models/base/tiny"),
    ModelSpec("M-s1", "runs/M-s1/step_4/model", "M-s1", 4),
    ModelSpec("M-s1-step2", "runs/M-s1/step_2/model", "M-s1", 2, diagnostic=True),
]


def suite():
    tasks = calc_tasks(6)
    splits = ["holdout", "holdout", "holdout", "dev", "train", "train"]
    return [t.model_copy(update={"split": s}) for t, s in zip(tasks, splits, strict=True)]


def evalsets(**kw):
    broad = {"max_tasks": 0, "with_training_pool": False, **kw}
    return [
        EvalSetSpec("holdout", "toy", ("holdout",), 3, 0, False),
        EvalSetSpec("broad", "toy", ("dev", "train", "holdout"), 2, **broad),
    ]


def test_slots_are_models_x_evalsets_x_tasks_x_samples():
    rows = build_plan(MODELS, evalsets(), {"toy": suite()})
    assert len(rows) == 3 * (3 * 3 + 6 * 2)
    holdout = [r for r in rows if r["model"] == "base" and r["evalset"] == "holdout"]
    assert [(r["instance_id"][-1], r["sample"]) for r in holdout[:4]] == [
        ("0", 0),
        ("0", 1),
        ("0", 2),
        ("1", 0),
    ]
    # the same task in two eval sets gives two separate slots, one per set (never pooled)
    both = {
        (r["evalset"], r["sample"])
        for r in rows
        if r["model"] == "base" and r["instance_id"] == "toy__calc__0"
    }
    assert both == {("holdout", 0), ("holdout", 1), ("holdout", 2), ("broad", 0), ("broad", 1)}
    diag = {r["diagnostic"] for r in rows if r["model"] == "M-s1-step2"}
    assert diag == {True} and {r["diagnostic"] for r in rows if r["model"] == "M-s1"} == {False}


def test_a_model_limited_to_some_eval_sets_has_slots_there_alone():
    curve_only = ModelSpec("M-s1-step2", "d", "M-s1", 2, diagnostic=True, evalsets=("holdout",))
    rows = build_plan([MODELS[0], curve_only], evalsets(), {"toy": suite()})
    sets = {(r["model"], r["evalset"]) for r in rows}
    assert sets == {("base", "holdout"), ("base", "broad"), ("M-s1-step2", "holdout")}
    assert sum(r["model"] == "M-s1-step2" for r in rows) == 3 * 3


def test_an_intermediate_checkpoint_takes_its_own_samples_per_task():
    fewer = ModelSpec("M-s1-step2", "d", "M-s1", 2, True, ("holdout",), samples=1)
    rows = build_plan([MODELS[0], fewer], evalsets(), {"toy": suite()})
    per_model = {}
    for r in rows:
        if r["evalset"] == "holdout":
            per_model.setdefault(r["model"], set()).add(r["sample"])
    assert per_model == {"base": {0, 1, 2}, "M-s1-step2": {0}}
    # every task of the set, once
    tasks = {r["instance_id"] for r in rows if r["evalset"] == "holdout"}
    assert len([r for r in rows if r["model"] == "M-s1-step2"]) == len(tasks) == 3
    with pytest.raises(PlanError, match="model M-s1-step2: samples must be >= 0"):
        build_plan([ModelSpec("M-s1-step2", "d", samples=-1)], evalsets(), {"toy": suite()})


@pytest.mark.parametrize(
    "ends,endpoint,every,listed,expected",
    [
        ([2, 4, 6, 8], 8, 2, [], [4]),  # the default plan: step 4 between the base and 8
        ([2, 4, 6, 8], 8, 1, [], [2, 4, 6]),
        ([2, 4, 6, 8], 8, 0, [], []),
        ([2, 4, 6, 8], 8, 0, [6], [6]),
        ([2, 4, 6, 8], 8, 2, [2, 4], [2, 4]),
        ([2, 4, 6, 8], 8, 4, [], []),  # the 4th end is the endpoint, evaluated anyway
        ([2], 2, 2, [], []),  # a one-segment plan has nothing before its endpoint
        ([10, 20, 30, 40, 50, 60, 70, 80], 80, 2, [], [20, 40, 60]),
    ],
)
def test_diagnostic_steps_are_every_kth_segment_end_before_the_endpoint(
    ends, endpoint, every, listed, expected
):
    assert diagnostic_steps(ends, endpoint, every, listed) == expected


@pytest.mark.parametrize(
    "listed,every,message",
    [
        ([3], 0, "diagnostic_steps: 3 is not a segment end before the endpoint 8"),
        ([8], 0, "diagnostic_steps: 8 is not a segment end"),
        ([], -1, "diagnostic_every is -1"),
    ],
)
def test_bad_diagnostic_steps_are_named(listed, every, message):
    with pytest.raises(PlanError, match=message):
        diagnostic_steps([2, 4, 6, 8], 8, every, listed)


def test_max_tasks_keeps_a_hash_ordered_subset():
    rows = build_plan(MODELS[:1], evalsets(max_tasks=4), {"toy": suite()})
    broad = sorted({r["instance_id"] for r in rows if r["evalset"] == "broad"})
    assert len(broad) == 4
    assert broad == sorted(
        {
            r["instance_id"]
            for r in build_plan(MODELS[:1], evalsets(max_tasks=4), {"toy": list(reversed(suite()))})
            if r["evalset"] == "broad"
        }
    )


def broad_ids(rows):
    return sorted({r["instance_id"] for r in rows if r["evalset"] == "broad"})


@pytest.mark.parametrize("max_tasks", [1, 2, 4])
def test_a_set_with_the_training_pool_holds_every_pool_task_beside_its_first(max_tasks):
    tasks = suite()
    first = broad_ids(build_plan(MODELS[:1], evalsets(max_tasks=max_tasks), {"toy": tasks}))
    pool = [t.instance_id for t in tasks if t.split == "train"]
    sets = evalsets(max_tasks=max_tasks, with_training_pool=True)
    got = broad_ids(build_plan(MODELS[:1], sets, {"toy": tasks}, pool))
    assert got == sorted(set(first) | set(pool))
    # a set without the flag ignores the pool; a pool task outside the set's splits stays out
    plain = build_plan(MODELS[:1], evalsets(max_tasks=max_tasks), {"toy": tasks}, pool)
    assert broad_ids(plain) == first
    holdout_only = [EvalSetSpec("broad", "toy", ("holdout",), 1, 1, with_training_pool=True)]
    rows = build_plan(MODELS[:1], holdout_only, {"toy": tasks}, pool)
    assert not set(broad_ids(rows)) & set(pool)


@pytest.mark.parametrize(
    "models,sets,tasks,message",
    [
        ([], evalsets(), suite(), "no models"),
        (MODELS[:1] * 2, evalsets(), suite(), "duplicate model"),
        (MODELS, [EvalSetSpec("x", "toy", ("nope",), 1, 0, False)], suite(), "no task in splits"),
        (MODELS, [EvalSetSpec("x", "other", ("dev",), 1, 0, False)], suite(), "suite other"),
        (
            [ModelSpec("base", "b", evalsets=("holdout", "nope"))],
            evalsets(),
            suite(),
            r"model base: unknown eval sets \['nope'\]",
        ),
        (
            MODELS,
            evalsets(),
            [calc_tasks(1)[0].model_copy(update={"instance_id": "scores", "split": "holdout"})],
            "not a file name",
        ),
    ],
)
def test_bad_plans_are_named(models, sets, tasks, message):
    with pytest.raises(PlanError, match=message):
        build_plan(models, sets, {"toy": tasks})


def test_written_once_a_change_is_a_new_version(tmp_path):
    rows = build_plan(MODELS, evalsets(), {"toy": suite()})
    first = write_plan(rows, tmp_path / "plan.parquet", tmp_path / "plans")
    assert first["version"] == 1 and first["plan_sha256"] == content_sha256(rows)
    again = write_plan(rows, tmp_path / "plan.parquet", tmp_path / "plans")
    assert again["version"] == 1 and len(list((tmp_path / "plans").iterdir())) == 1
    changed = build_plan(MODELS[:2], evalsets(), {"toy": suite()})
    second = write_plan(changed, tmp_path / "plan.parquet", tmp_path / "plans")
    assert second["version"] == 2 and second["plan_sha256"] != first["plan_sha256"]
    back = write_plan(rows, tmp_path / "plan.parquet", tmp_path / "plans")
    assert back["version"] == 1  # the archived version of an identical plan
    assert [v["version"] for v in back["versions"]] == [1, 2]

    piece = read_slice(tmp_path / "plan.parquet", "M-s1", "holdout")
    assert piece.plan_version == 1 and piece.samples == 3 and len(piece.tasks) == 3
    assert piece.first("step") == 4 and piece.first("model_dir") == "runs/M-s1/step_4/model"
    # a slice's identity does not depend on the rest of the plan
    other = read_slice(
        tmp_path
        / "plans"
        / next(p.name for p in (tmp_path / "plans").iterdir() if p.name.startswith("v0002")),
        "M-s1",
        "holdout",
    )
    assert other.sha256 == piece.sha256 and other.plan_sha256 != piece.plan_sha256
    with pytest.raises(PlanError, match="no slots planned for model nope"):
        read_slice(tmp_path / "plan.parquet", "nope", "holdout")


def test_evalset_specs_reject_zero_samples():
    with pytest.raises(PlanError, match="samples"):
        EvalSetSpec.from_mapping(
            "h",
            {
                "suite": "toy",
                "splits": ["holdout"],
                "samples": 0,
                "max_tasks": 0,
                "with_training_pool": False,
            },
        )
