"""A small Qwen2-architecture directory that has learnt to act through the bash tool.

The stock directory of :mod:`qwenfactory` (the standard Qwen2.5-Instruct chat template and its
``<tool_call>`` format, no project tokens) is trained by the project's own SFT on expert
episodes played in the real bash environment, in each task's own image: half fix the bug with a
``sed`` command derived from the gold patch and submit, half make an irrelevant edit (a comment
appended) and submit. Sampled at temperature 1 the model does either, so a group's rewards
differ, the update has a gradient, and the fixing episodes hold an edit block whose
counterfactual changes the grade: the real path's training, credit and audits get something to
act on. Episodes are played only on the tasks given (a study passes its train split).
"""

from __future__ import annotations

import json
import shlex
from pathlib import Path
from typing import Any

from qwenfactory import write_stock_qwen2

from editcredit.agent.bash_actions import SUBMIT
from editcredit.data.task import Task

_BRE_SPECIAL = "\\.*[]^$|"


def replacement_hunk(task: Task) -> tuple[str, str, str] | None:
    """(path, old line, new line) of a gold patch that replaces exactly one line (None
    otherwise)."""
    path, removed, added = "", [], []
    for line in task.patch.split("\n"):
        if line.startswith("+++ b/"):
            path = line[len("+++ b/") :]
        elif line.startswith("-") and not line.startswith("---"):
            removed.append(line[1:])
        elif line.startswith("+") and not line.startswith("+++"):
            added.append(line[1:])
    if not path or len(removed) != 1 or len(added) != 1:
        return None
    return path, removed[0], added[0]


def sed_fix(task: Task) -> str | None:
    """The gold patch's one-line replacement as a ``sed -i`` command (None when the patch is
    not one)."""
    hunk = replacement_hunk(task)
    if hunk is None:
        return None
    path, old, new = hunk
    pattern = "".join(f"\\{c}" if c in _BRE_SPECIAL else c for c in old.strip())
    replacement = "".join(f"\\{c}" if c in "\\&|" else c for c in new.strip())
    return f"sed -i {shlex.quote(f's|{pattern}|{replacement}|')} {path}"


def irrelevant_edit(task: Task) -> str | None:
    """An edit that changes the tree and not the grade: a comment appended to the patched
    file."""
    hunk = replacement_hunk(task)
    return None if hunk is None else f"echo '# reviewed' >> {hunk[0]}"


def tool_call_text(command: str) -> str:
    """The assistant text of one call of the bash tool in the Qwen2.5 format."""
    call = {"name": "bash", "arguments": {"command": command}}
    return f"<tool_call>\n{json.dumps(call)}\n</tool_call>"


def play(make_env, task: Task, commands: list[str]) -> tuple[list[str], list[str]]:
    """Play ``commands`` then ``submit`` in a fresh environment: (observations, commands)."""
    env = make_env(None)
    try:
        observations = [env.reset(task)]
        actions = [*commands, SUBMIT]
        for action in actions[:-1]:
            observation, done = env.step(action)
            assert not done, f"{task.instance_id}: the episode ended at {action!r}"
            observations.append(observation)
        env.step(SUBMIT)
    finally:
        env.close()
    return observations, actions


def expert_episodes(tasks: list[Task], make_env) -> list[tuple[list[str], list[str]]]:
    """A fixing and an irrelevant episode per task whose gold patch replaces one line."""
    episodes = []
    for task in tasks:
        fix, other = sed_fix(task), irrelevant_edit(task)
        if fix is None or other is None:
            continue
        episodes += [play(make_env, task, [fix]), play(make_env, task, [other])]
    if not episodes:
        raise ValueError("no task has a one-line gold patch to build expert episodes from")
    return episodes


def write_bash_qwen2(
    out: Path, tasks: list[Task], agent_cfg: dict[str, Any], sandbox_cfg: dict[str, Any]
) -> Path:
    """The stock directory at ``out``, trained on :func:`expert_episodes` of ``tasks``."""
    import torch
    from policyfactory import sft_config
    from transformers import AutoTokenizer, Qwen2ForCausalLM

    from editcredit.agent.environments import environment_factory
    from editcredit.policy.chat import ChatTemplate
    from editcredit.policy.sft import chat_example, train_sft

    make_env = environment_factory({**agent_cfg, "environment": "bash"}, sandbox_cfg)
    episodes = expert_episodes(tasks, make_env)
    texts = [t for obs, acts in episodes for t in [*obs, *map(tool_call_text, acts)]]
    write_stock_qwen2(out, vocab_size=1200, texts=texts, hidden_size=64, num_layers=2)
    chat = ChatTemplate(AutoTokenizer.from_pretrained(str(out)))
    examples = [
        chat_example(chat, obs, [tool_call_text(a) for a in acts], tool="bash")
        for obs, acts in episodes
    ]
    model = Qwen2ForCausalLM.from_pretrained(str(out))
    cfg = sft_config(lr=3e-3, batch_size=4, max_steps=300, warmup_steps=20, threads=2)
    train_sft(model, examples, chat.pad, cfg, torch.device("cpu"))
    model.save_pretrained(str(out), safe_serialization=True)
    return out
