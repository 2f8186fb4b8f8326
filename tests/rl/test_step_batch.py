"""Step assembly (METHOD §3-§4): rewards and group advantages are arm-independent; credit lands
on the right tokens with the right mass; the ledger has one row per query."""

from __future__ import annotations

import numpy as np
import pytest

from editcredit.rl.step_batch import assemble_step, part_differences

LAM, C = 0.1, 1.0


def _row(task, sample, reward, turns, masked=False):
    # tokens: prompt (turn -1, not generated), then per turn 3 generated tokens + 2 observation
    turn_of_token, loss_mask = [-1, -1], [0, 0]
    for t in range(turns):
        turn_of_token += [t, t, t, -1, -1]
        loss_mask += [1, 1, 1, 0, 0]
    return {
        "rollout_key": f"r:1:{task}:{sample}",
        "instance_id": task,
        "step": 1,
        "reward": None if masked else reward,
        "masked": masked,
        "loss_mask": loss_mask,
        "turn_of_token": turn_of_token,
    }


def _query(key, U_o, U_cf, credited=(1,), block=0, sent=True):
    return {
        "rollout_key": key,
        "selected_block": block,
        "credited_turns": list(credited),
        "U_original": U_o,
        "U_counterfactual": U_cf,
        "sent": sent,
        "reason": "" if U_cf is not None else "counterfactual report unavailable",
    }


def _batch():
    rows = [_row("a", 0, 1.0, 3), _row("a", 1, 0.0, 3), _row("b", 0, -0.5, 2), _row("b", 1, 0.0, 2)]
    queries = [
        _query(rows[0]["rollout_key"], 1.25, 0.0, credited=(1,)),
        _query(rows[1]["rollout_key"], 0.0, 0.0, credited=(0, 2)),
        _query(rows[2]["rollout_key"], -0.25, None, credited=(0,)),
        {
            **_query(rows[3]["rollout_key"], 0.0, None),
            "selected_block": None,
            "sent": False,
            "credited_turns": [],
            "reason": "no eligible block",
        },
    ]
    return rows, queries


def _assemble(arm, rows=None, queries=None):
    if rows is None:
        rows, queries = _batch()
    return assemble_step(
        rows,
        queries,
        run="r",
        arm=arm,
        lam=LAM,
        c=C,
        normalize_std=False,
        zero_variance_filter=False,
    )


def test_group_advantages_are_the_same_for_every_arm():
    seq = {arm: _assemble(arm).sequence_advantages for arm in "OBME"}
    assert seq["O"] == seq["B"] == seq["M"] == seq["E"] == [0.5, -0.5, -0.25, 0.25]


def test_arm_o_token_advantages_are_the_group_advantage_on_valid_tokens_only():
    out = _assemble("O")
    for adv, valid, seq in zip(out.advantages, out.valid, out.sequence_advantages, strict=True):
        assert np.all(adv[valid] == seq)
        assert np.all(adv[~valid] == 0.0)
    assert out.ledger == []
    assert out.metrics["credit_mass_l1"] == 0.0 and out.metrics["cf_sent"] == 0


def test_b_and_m_carry_equal_signed_and_l1_mass_per_trajectory():
    b, m = _assemble("B"), _assemble("M")
    o = _assemble("O")
    for i in range(4):
        aux_b = b.advantages[i] - o.advantages[i]
        aux_m = m.advantages[i] - o.advantages[i]
        assert aux_b.sum() == pytest.approx(aux_m.sum(), abs=1e-12)
        assert np.abs(aux_b).sum() == pytest.approx(np.abs(aux_m).sum(), abs=1e-12)
        assert np.all(np.abs(aux_m) <= C + 1e-12)


def test_m_credit_lands_on_the_selected_block_turns_only():
    rows, _ = _batch()
    m, o = _assemble("M"), _assemble("O")
    aux = m.advantages[0] - o.advantages[0]
    turns = np.asarray(rows[0]["turn_of_token"])
    # D = 1.25, L = 9, m = 3: s = min(1, 1*3 / (0.1*1.25*9)) = 1; per token 0.1*1.25*9/3
    assert np.allclose(aux[turns == 1], 0.1 * 1.25 * 9 / 3, atol=1e-12)
    assert np.all(aux[turns != 1] == 0.0)


def test_zero_d_and_unavailable_d_add_no_credit_and_the_ledger_says_why():
    b, o = _assemble("B"), _assemble("O")
    assert np.all(b.advantages[1] == o.advantages[1])  # D = 0
    assert np.all(b.advantages[2] == o.advantages[2])  # unavailable
    ledger = {r["rollout_key"]: r for r in b.ledger}
    assert len(ledger) == 3  # no row for the trajectory without an eligible block
    zero = ledger["r:1:a:1"]
    assert zero["available"] and zero["D"] == 0.0 and zero["s"] == 1.0
    missing = ledger["r:1:b:0"]
    assert not missing["available"] and missing["D"] is None
    assert missing["reason"] == "counterfactual report unavailable"
    assert b.metrics["cf_sent"] == 3 and b.metrics["cf_available"] == 2
    assert b.metrics["cf_nonzero"] == 1


def test_e_uses_the_group_advantage_clipped_and_needs_no_query():
    e, o = _assemble("E"), _assemble("O")
    rows, _ = _batch()
    aux = e.advantages[0] - o.advantages[0]
    turns = np.asarray(rows[0]["turn_of_token"])
    # clip(0.1 * A * L / m) = clip(0.1 * 0.5 * 9 / 3) = 0.15
    assert np.allclose(aux[turns == 1], 0.15, atol=1e-12)
    assert e.ledger == [] and e.metrics["cf_sent"] == 0


def test_masked_rollout_is_out_of_the_loss_and_of_its_group_mean():
    rows, queries = _batch()
    rows[1] = _row("a", 1, None, 3, masked=True)
    out = _assemble("M", rows, queries)
    assert out.sequence_advantages[0] == 0.0  # alone in its group after masking
    assert out.sequence_advantages[1] is None
    assert not out.valid[1].any() and not out.advantages[1].any()


def test_rewards_in_rows_are_never_touched():
    rows, queries = _batch()
    before = [r["reward"] for r in rows]
    for arm in "OBME":
        assemble_step(
            rows,
            queries,
            run="r",
            arm=arm,
            lam=LAM,
            c=C,
            normalize_std=False,
            zero_variance_filter=False,
        )
    assert [r["reward"] for r in rows] == before


def test_zero_variance_filter_drops_flat_groups_only_when_asked():
    rows, queries = _batch()
    rows[1]["reward"] = 1.0  # group a now flat
    kept = assemble_step(
        rows,
        queries,
        run="r",
        arm="O",
        lam=LAM,
        c=C,
        normalize_std=False,
        zero_variance_filter=False,
    )
    assert kept.valid[0].any() and kept.sequence_advantages[0] == 0.0
    dropped = assemble_step(
        rows,
        queries,
        run="r",
        arm="O",
        lam=LAM,
        c=C,
        normalize_std=False,
        zero_variance_filter=True,
    )
    assert not dropped.valid[0].any() and not dropped.valid[1].any()
    assert dropped.valid[2].any()


@pytest.mark.parametrize(
    ("original", "counterfactual", "expected"),
    [
        ([1.0, 1.0, 0.0], [0.0, 0.5, 0.0], {"dY": 1.0, "dF": 0.5, "dG": 0.0}),  # FAIL_TO_PASS
        ([0.0, 0.0, 1.0], [0.0, 0.0, 0.0], {"dY": 0.0, "dF": 0.0, "dG": 1.0}),  # a regression
        ([1.0, 1.0, 0.0], None, {"dY": None, "dF": None, "dG": None}),
        (None, [0.0, 0.0, 0.0], {"dY": None, "dF": None, "dG": None}),
    ],
)
def test_part_differences(original, counterfactual, expected):
    query = {"parts_original": original, "parts_counterfactual": counterfactual}
    assert part_differences(query) == expected


def test_the_ledger_carries_the_parts_of_d():
    rows, queries = _batch()
    queries[0].update(parts_original=[1.0, 1.0, 0.0], parts_counterfactual=[0.0, 0.0, 0.0])
    queries[2].update(parts_original=[0.0, 0.0, 1.0], parts_counterfactual=None)
    ledger = {r["rollout_key"]: r for r in _assemble("M", rows, queries).ledger}
    assert (ledger["r:1:a:0"]["dY"], ledger["r:1:a:0"]["dF"], ledger["r:1:a:0"]["dG"]) == (1, 1, 0)
    assert ledger["r:1:b:0"]["dY"] is None  # D unavailable: no parts
    assert ledger["r:1:a:1"]["dG"] is None  # no parts recorded for it
