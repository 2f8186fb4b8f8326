"""One real training segment of the truth control T (long tier: an SFT toy policy and two GRPO
steps with docker gradings) on multi-bug tasks played with tries scoped to their function."""

from __future__ import annotations

import json

import torch
from test_located_tries import multi_task


def test_a_t_segment_trains_with_credit_on_the_fixing_turns(tmp_path, docker_sandbox):
    """One real training segment of the truth control (two steps, docker gradings) on multi-bug
    tasks played with tries scoped to their function: the step's credit reaches the turns of
    the blocks that fixed a planted bug, and no counterfactual is sent."""
    import pandas as pd
    from jobfactory import NO_RAY, run_segment
    from policyfactory import SFT_DEFAULTS, TOY_ARCH
    from taskfactory import CONFIG

    from editcredit.agent.expert_corpus import expert_corpus, expert_environment
    from editcredit.data.freeze import write_parquet
    from editcredit.policy.base_training import fit_base_model

    base = multi_task()
    tasks = [
        base.model_copy(update={"instance_id": f"{base.instance_id}_{i}", "split": "train"})
        for i in range(2)
    ]
    agent = {**CONFIG["agent"], "try_scope": "function", "max_turns": 5, "max_new_tokens": 32}
    make_env = expert_environment(agent, CONFIG["sandbox"])
    experts = {
        "kind": "oracle",
        "episodes_per_task": 4,
        "detour_prob": 0.5,
        "run_prob": 0.5,
        "rename_prob": 0.0,
        "rename_locals": True,
        "fragment_style": "minimal",
        "rename_copies": 0,
        "seed": 0,
    }
    corpus, names = expert_corpus(tasks, docker_sandbox, experts, make_env, 5, 1)
    cfg = {
        "seed": 0,
        "tokenizer_vocab": 400,
        "tokenizer_whole_numbers_below": 0,
        "architecture": TOY_ARCH,
        "experts": experts,
        "sft": {
            **SFT_DEFAULTS,
            "lr": 0.01,
            "batch_size": 8,
            "max_steps": 300,
            "warmup_steps": 5,
            "observation_loss_weight": 0.3,
        },
    }
    policy = tmp_path / "policy"
    fit_base_model(corpus, names, cfg, policy, torch.device("cpu"), len(tasks))
    tasks_file = tmp_path / "tasks.parquet"
    write_parquet(tasks, tasks_file)
    overrides = {
        **NO_RAY,
        "training.segment_steps": 2,
        "training.endpoint_step": 2,
        "training.grpo.tasks_per_step": 2,
        "training.grpo.group_size": 4,
        "training.grpo.micro_batch_size": 8,
        "agent.try_scope": "function",
        "agent.max_turns": 5,
        "agent.max_new_tokens": 32,
    }
    out = tmp_path / "runs" / "T-s3" / "step_2"
    run_segment("T-s3", 2, policy, out, tasks_file, overrides)

    metrics = pd.read_parquet(out / "metrics.parquet")
    rollouts = pd.read_parquet(out / "rollouts.parquet")
    assert (metrics["cf_sent"] == 0).all()
    print(metrics[["step", "pass_rate", "credit_mass_l1", "credit_rollouts"]].to_string())
    fixed = 0
    for _, row in rollouts.iterrows():
        blocks = json.loads(row["edit_blocks"])
        assert all(b["paths"] == ["calc3.py"] for b in blocks)
        fixed += row["Y"] == 1
    assert fixed > 0, "the policy fixed no task: nothing for T to credit"
    assert metrics["credit_mass_l1"].sum() > 0 and metrics["credit_rollouts"].sum() > 0
