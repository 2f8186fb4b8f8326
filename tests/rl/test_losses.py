"""Policy losses, loss aggregations and TrainConfig (METHOD §4): hand-computed small tensors."""

from __future__ import annotations

import dataclasses
import math

import pytest
import torch

from editcredit.rl.config import ARMS, LOSS_AGGREGATION_NAMES, TrainConfig
from editcredit.rl.losses import (
    LOSS_AGGREGATIONS,
    POLICY_LOSSES,
    aggregate,
    dppo_tv_mask,
    get_policy_loss,
    register_policy_loss,
)

F64 = torch.float64


def _row(values) -> torch.Tensor:
    return torch.tensor([values], dtype=F64)


def _logp_pair(p_rollout: list[float], p_now: list[float]):
    """Log-probabilities of one [1, N] row: logp_new (a leaf with grad) and logp_rollout."""
    logp_new = torch.log(_row(p_now)).requires_grad_(True)
    return logp_new, torch.log(_row(p_rollout))


# ---------------------------------------------------------------- PPO clip

# (A, ratio, expected loss, clipped?) with eps = 0.2; loss = -min(r*A, clip(r, 0.8, 1.2)*A)
PPO_ROWS = [
    (1.0, 1.5, -1.2, True),  # A > 0, ratio above 1+eps: clipped, no gradient
    (1.0, 1.1, -1.1, False),  # inside the trust region
    (1.0, 0.5, -0.5, False),  # A > 0, ratio below 1-eps: unclipped term is the min
    (-1.0, 0.5, 0.8, True),  # A < 0, ratio below 1-eps: clipped, no gradient
    (-1.0, 1.5, 1.5, False),  # A < 0, ratio above 1+eps: unclipped term is the min
    (-2.0, 0.9, 1.8, False),  # inside
    (0.0, 1.7, 0.0, False),  # A == 0
]


def test_ppo_clip_rows_loss_gradient_and_stats():
    adv = _row([r[0] for r in PPO_ROWS])
    ratio = [r[1] for r in PPO_ROWS]
    logp_new, logp_rollout = _logp_pair([0.5] * len(ratio), [0.5 * r for r in ratio])
    mask = torch.ones_like(adv)
    loss, stats = get_policy_loss("ppo_clip")(
        logp_new, logp_rollout, adv, mask, ppo_clip=0.2, dppo_delta=0.15
    )
    assert loss.shape == adv.shape
    expected = [r[2] for r in PPO_ROWS]
    assert loss[0].tolist() == pytest.approx(expected, abs=1e-12)
    loss.sum().backward()
    # d(-r*A)/d(logp_new) = -r*A where unclipped, 0 where clipped
    want_grad = [0.0 if r[3] else -r[0] * r[1] for r in PPO_ROWS]
    assert logp_new.grad[0].tolist() == pytest.approx(want_grad, abs=1e-12)
    assert stats["clip_high_fraction"] == pytest.approx(1 / 7)
    assert stats["clip_low_fraction"] == pytest.approx(1 / 7)
    assert stats["clip_fraction"] == pytest.approx(2 / 7)


def test_ppo_clip_invalid_tokens_have_zero_loss_and_gradient():
    logp_new = torch.tensor([[-0.2, -0.2, -3.0]], dtype=F64, requires_grad=True)
    logp_rollout = torch.tensor([[-0.3, -math.inf, -0.1]], dtype=F64)  # padding may hold -inf
    adv = _row([1.0, 5.0, -2.0])
    mask = _row([1.0, 0.0, 0.0])
    loss, stats = POLICY_LOSSES["ppo_clip"](logp_new, logp_rollout, adv, mask, ppo_clip=0.2)
    loss.sum().backward()
    assert loss[0, 1:].tolist() == [0.0, 0.0]
    assert logp_new.grad[0, 1:].tolist() == [0.0, 0.0]
    assert torch.isfinite(logp_new.grad).all()
    # the one valid token: ratio exp(0.1) inside [0.8, 1.2]; padding (A = 5, ratio inf) not counted
    assert loss[0, 0].item() == pytest.approx(-math.exp(0.1))
    assert logp_new.grad[0, 0].item() == pytest.approx(-math.exp(0.1))
    assert stats["clip_fraction"] == 0.0


# ---------------------------------------------------------------- DPPO binary-TV

# (A, p_rollout, p_now, masked?) with delta = 0.15
DPPO_ROWS = [
    (1.0, 0.5, 0.7, True),  # A > 0, p rose by 0.2 > delta: masked
    (1.0, 0.5, 0.6, False),  # A > 0, rose by 0.1: kept
    (1.0, 0.5, 0.2, False),  # A > 0, fell by 0.3 (against A's push): kept
    (-1.0, 0.5, 0.3, True),  # A < 0, fell by 0.2 > delta: masked
    (-1.0, 0.5, 0.4, False),  # A < 0, fell by 0.1: kept
    (-1.0, 0.5, 0.9, False),  # A < 0, rose by 0.4 (against A's push): kept
    (0.0, 0.5, 0.9, False),  # A == 0 is never masked
    (0.0, 0.5, 0.1, False),
    (2.0, 0.1, 0.3, True),  # A > 0, rose by 0.2
]


def test_dppo_rows_loss_gradient_and_masked_fraction():
    adv = _row([r[0] for r in DPPO_ROWS])
    logp_new, logp_rollout = _logp_pair([r[1] for r in DPPO_ROWS], [r[2] for r in DPPO_ROWS])
    mask = torch.ones_like(adv)
    loss, stats = get_policy_loss("dppo_binary_tv")(
        logp_new, logp_rollout, adv, mask, ppo_clip=0.2, dppo_delta=0.15
    )
    expected = [0.0 if m else -(p_now / p_roll) * a for a, p_roll, p_now, m in DPPO_ROWS]
    assert loss[0].tolist() == pytest.approx(expected, abs=1e-12)
    loss.sum().backward()
    grad = logp_new.grad[0].tolist()
    for (a, p_roll, p_now, masked), g in zip(DPPO_ROWS, grad, strict=True):
        if masked:
            assert g == 0.0  # masked tokens get exactly no gradient
        else:
            assert g == pytest.approx(-(p_now / p_roll) * a, abs=1e-12)  # d(-r*A)/d logp_new
    assert stats["masked_fraction"] == pytest.approx(3 / 9)


@pytest.mark.parametrize(("adv", "p_now"), [(1.0, 0.75), (-1.0, 0.25)])
def test_dppo_move_of_exactly_delta_is_not_masked(adv, p_now):
    logp_new, logp_rollout = _logp_pair([0.5], [p_now])
    # delta equal to the move as computed in float64 (exp of the logs), in A's direction
    move = (torch.exp(logp_new.detach()) - torch.exp(logp_rollout)).item() * adv
    advantages = _row([adv])
    assert not dppo_tv_mask(logp_new, logp_rollout, advantages, move).any()
    assert dppo_tv_mask(logp_new, logp_rollout, advantages, math.nextafter(move, 0.0)).all()
    loss, stats = POLICY_LOSSES["dppo_binary_tv"](
        logp_new, logp_rollout, advantages, torch.ones_like(advantages), dppo_delta=move
    )
    loss.sum().backward()
    assert stats["masked_fraction"] == 0.0
    assert logp_new.grad.item() != 0.0


def test_dppo_invalid_tokens_are_zero_and_not_counted_as_masked():
    logp_new = torch.log(_row([0.9, 0.9, 0.6])).requires_grad_(True)
    logp_rollout = torch.tensor([[math.log(0.5), -math.inf, math.log(0.5)]], dtype=F64)
    adv = _row([1.0, 1.0, 1.0])
    mask = _row([1.0, 0.0, 1.0])
    loss, stats = POLICY_LOSSES["dppo_binary_tv"](
        logp_new, logp_rollout, adv, mask, dppo_delta=0.15
    )
    loss.sum().backward()
    assert loss[0].tolist() == pytest.approx([0.0, 0.0, -1.2])
    assert logp_new.grad[0].tolist() == pytest.approx([0.0, 0.0, -1.2])
    assert stats["masked_fraction"] == pytest.approx(1 / 2)  # one of the two valid tokens


def test_dppo_gradient_through_a_model_parameter_ignores_masked_tokens():
    """Masked tokens contribute nothing to a parameter's gradient (autograd end to end)."""
    theta = torch.zeros(1, 3, dtype=F64, requires_grad=True)
    base = torch.log(_row([0.8, 0.55, 0.2]))  # current probabilities
    logp_new = base + theta
    logp_rollout = torch.log(_row([0.5, 0.5, 0.5]))
    adv = _row([1.0, 1.0, -1.0])  # token 0 masked (+0.3), token 1 kept, token 2 masked (-0.3)
    loss, _ = POLICY_LOSSES["dppo_binary_tv"](
        logp_new, logp_rollout, adv, torch.ones_like(adv), dppo_delta=0.15
    )
    aggregate(loss, torch.ones_like(adv), ["t"], "prompt_mean").backward()
    assert theta.grad[0].tolist() == pytest.approx([0.0, -(0.55 / 0.5) / 3, 0.0])


# ---------------------------------------------------------------- aggregations

X = 100.0  # padding values must be ignored
LOSS = torch.tensor(
    [
        [1.0, 2.0, 3.0, 6.0],  # group a: 4 valid, sum 12, mean 3
        [4.0, X, X, X],  # group a: 1 valid, sum 4, mean 4
        [0.0, 2.0, X, X],  # group b: 2 valid, sum 2, mean 1
        [X, X, X, X],  # group c: no valid token (masked rollout)
    ],
    dtype=F64,
)
MASK = torch.tensor(
    [[1, 1, 1, 1], [1, 0, 0, 0], [1, 1, 0, 0], [0, 0, 0, 0]],
    dtype=F64,
)
GROUPS = ["a", "a", "b", "c"]
AGG_ROWS = [
    ("token_mean", 18 / 7),  # (12 + 4 + 2) / 7 tokens
    ("sequence_mean", 8 / 3),  # (3 + 4 + 1) / 3 sequences with a valid token
    ("prompt_mean", 2.1),  # (16/5 + 2/2) / 2 groups with a valid token
]


@pytest.mark.parametrize(("how", "expected"), AGG_ROWS)
def test_aggregation_values(how, expected):
    assert aggregate(LOSS, MASK, GROUPS, how).item() == pytest.approx(expected, abs=1e-12)


def test_the_three_aggregations_differ_on_this_batch():
    assert len({round(v, 9) for _, v in AGG_ROWS}) == 3


def test_prompt_mean_accepts_a_tensor_group_index():
    got = aggregate(LOSS, MASK, torch.tensor([7, 7, 3, 9]), "prompt_mean")
    assert got.item() == pytest.approx(2.1)


# per-token gradient weights: 1/7 each; 1/(n_seq_tokens * 3); 1/(n_group_tokens * 2)
AGG_GRADS = [
    ("token_mean", [[1 / 7] * 4, [1 / 7, 0, 0, 0], [1 / 7, 1 / 7, 0, 0], [0] * 4]),
    ("sequence_mean", [[1 / 12] * 4, [1 / 3, 0, 0, 0], [1 / 6, 1 / 6, 0, 0], [0] * 4]),
    ("prompt_mean", [[0.1] * 4, [0.1, 0, 0, 0], [0.25, 0.25, 0, 0], [0] * 4]),
]


@pytest.mark.parametrize(("how", "grad"), AGG_GRADS)
def test_aggregation_gradients_and_nan_padding_is_harmless(how, grad):
    loss = LOSS.clone().masked_fill(MASK == 0, math.nan).requires_grad_(True)
    out = aggregate(loss, MASK, GROUPS, how)
    out.backward()
    assert math.isfinite(out.item())
    assert torch.allclose(loss.grad, torch.tensor(grad, dtype=F64))


@pytest.mark.parametrize("how", sorted(LOSS_AGGREGATIONS))
def test_aggregation_with_no_valid_token_is_zero_with_a_graph(how):
    loss = torch.ones(2, 3, dtype=F64, requires_grad=True)
    out = aggregate(loss, torch.zeros(2, 3, dtype=F64), ["a", "b"], how)
    out.backward()
    assert out.item() == 0.0
    assert loss.grad.abs().sum().item() == 0.0


def test_prompt_mean_errors():
    with pytest.raises(ValueError, match="needs group_index"):
        aggregate(LOSS, MASK, None, "prompt_mean")
    with pytest.raises(ValueError, match="group_index has 2 entries for 4 sequences"):
        aggregate(LOSS, MASK, ["a", "b"], "prompt_mean")


# ---------------------------------------------------------------- registries


def test_registries_hold_the_methods_names():
    assert set(POLICY_LOSSES) == {"ppo_clip", "dppo_binary_tv"}
    assert set(LOSS_AGGREGATIONS) == set(LOSS_AGGREGATION_NAMES)


def test_unknown_policy_loss_error_names_it():
    with pytest.raises(ValueError, match="unknown policy loss 'grpo_magic'"):
        get_policy_loss("grpo_magic")


def test_unknown_aggregation_error_names_it():
    with pytest.raises(ValueError, match="unknown loss aggregation 'median'"):
        aggregate(LOSS, MASK, GROUPS, "median")


def test_register_policy_loss_adds_and_rejects_duplicates():
    @register_policy_loss("test_only_loss")
    def _loss(logp_new, logp_rollout, advantages, mask, **_):
        return torch.zeros_like(logp_new), {}

    try:
        assert get_policy_loss("test_only_loss") is _loss
        with pytest.raises(ValueError, match="already registered"):
            register_policy_loss("test_only_loss")(_loss)
    finally:
        POLICY_LOSSES.pop("test_only_loss")


# ---------------------------------------------------------------- TrainConfig


def _full(**over):
    from taskfactory import CONFIG

    d = {**CONFIG["training"]["grpo"], "temperature": 1.0, "arm": "O", "seed": 42}
    return {**d, **over}


def test_every_field_comes_from_config_and_a_missing_one_is_named():
    assert TrainConfig.from_dict(_full()).lr == pytest.approx(
        __import__("taskfactory").CONFIG["training"]["grpo"]["lr"]
    )
    d = _full()
    del d["dppo_delta"]
    with pytest.raises(ValueError, match="missing key.*dppo_delta"):
        TrainConfig.from_dict(d)


def test_from_dict_overrides_and_is_frozen():
    cfg = TrainConfig.from_dict(_full(arm="M", loss_aggregation="token_mean", seed=314159))
    assert (cfg.arm, cfg.loss_aggregation, cfg.seed) == ("M", "token_mean", 314159)
    with pytest.raises(dataclasses.FrozenInstanceError):
        cfg.arm = "B"  # type: ignore[misc]


@pytest.mark.parametrize("arm", ARMS)
def test_every_arm_is_accepted(arm):
    assert TrainConfig.from_dict(_full(arm=arm)).arm == arm


@pytest.mark.parametrize(
    ("d", "message"),
    [
        ({"lr": 1e-6, "learning_rate": 1.0, "beta": 0}, "unknown key.*beta, learning_rate"),
        ({"loss_aggregation": "mean"}, "loss_aggregation: 'mean' is not one of"),
        ({"arm": "X"}, "arm: 'X' is not one of O, B, M, E"),
        ({"policy_loss": "grpo"}, "policy_loss: 'grpo' is not one of dppo_binary_tv, ppo_clip"),
        ({"group_size": 0}, "group_size: must be >= 1"),
        ({"dppo_delta": 0.0}, "dppo_delta: must be > 0"),
        ({"query_rate": 1.5}, r"query_rate: must be in \[0, 1\]"),
        ({"credit_lambda": -0.1}, "credit_lambda: must be >= 0"),
        ({"negative_weight": 1.5}, r"negative_weight: must be in \[0, 1\]"),
        ({"negative_weight": -0.1}, r"negative_weight: must be in \[0, 1\]"),
    ],
)
def test_from_dict_errors_name_the_field(d, message):
    with pytest.raises(ValueError, match=message):
        TrainConfig.from_dict({**_full(), **d})


def test_full_study_preset_holds_methods_published_values():
    import yaml
    from taskfactory import REPO

    with open(f"{REPO}/config/presets/full-study.yaml") as fh:
        preset = yaml.safe_load(fh)
    grpo = preset["training"]["grpo"]
    assert (grpo["tasks_per_step"], grpo["group_size"], grpo["lr"]) == (16, 8, 1e-6)
    assert (preset["training"]["endpoint_step"], preset["training"]["segment_steps"]) == (80, 10)
    assert (grpo["credit_lambda"], grpo["credit_c"], grpo["query_rate"]) == (0.1, 1.0, 1.0)
    assert grpo["dppo_delta"] == 0.15 and grpo["loss_aggregation"] == "prompt_mean"
    assert preset["agent"]["temperature"] == 1.0
    assert sorted(preset["training"]["plan"]["M"]) == [42, 271828, 314159]
