"""Batched multi-turn rollouts: policy turns through the generation interface, env steps.

Token in, token out: the context is the exact sampled ids plus, for each observation, the
tokens the model's chat template adds (:class:`editcredit.policy.chat.Conversation`); earlier
turns are never re-tokenized. Every token carries its
assistant-turn index (-1 for prompt/observation tokens), its log-prob (0.0 where not sampled)
and a loss mask (1 for sampled assistant tokens).
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, cast

from tqdm import tqdm

from editcredit.agent.protocol import Environment
from editcredit.data.task import Task
from editcredit.policy.chat import ChatTemplate, Conversation

if TYPE_CHECKING:  # a type only: policy.generation imports torch, which RolloutConfig's users
    # (the evaluation plan and scores jobs) never need
    from editcredit.policy.generation import Generator


@dataclass(frozen=True)
class RolloutConfig:
    """Budgets and sampling of one episode: the config's ``agent`` section (no defaults here;
    config/schema.yaml holds them)."""

    max_turns: int
    max_new_tokens: int
    max_context_tokens: int
    temperature: float

    @classmethod
    def from_agent(cls, agent_cfg: dict) -> RolloutConfig:
        """The budgets and sampling of the config's ``agent`` section (its other keys, the
        environment's, are the environment factory's)."""
        return cls(**{f: agent_cfg[f] for f in cls.__dataclass_fields__})


@dataclass
class Episode:
    """One rollout in progress and, once done, its token-level record."""

    task: Task
    rollout_key: str
    env: Environment
    token_ids: list[int] = field(default_factory=list)
    logprobs: list[float] = field(default_factory=list)
    loss_mask: list[int] = field(default_factory=list)
    turn_of_token: list[int] = field(default_factory=list)
    done: bool = False
    conversation: Conversation | None = None
    """The episode's rendering through the model's chat template (set by ``run_episodes``)."""

    def extend(self, ids: list[int], logprobs: list[float] | None, turn: int) -> None:
        self.token_ids += ids
        self.logprobs += logprobs if logprobs is not None else [0.0] * len(ids)
        self.loss_mask += [1 if logprobs is not None else 0] * len(ids)
        self.turn_of_token += [turn] * len(ids)


def turn_seed(seed: int, turn: int) -> int:
    digest = hashlib.sha256(f"{seed}:{turn}".encode()).digest()
    return int.from_bytes(digest[:8], "big") >> 1


def run_episodes(
    jobs: Sequence[tuple[Task, str]],
    make_env: Callable[[], Environment],
    generator: Generator,
    chat: ChatTemplate,
    cfg: RolloutConfig,
    seed: int,
    step_workers: int = 2,
    progress: str | None = None,
) -> list[Episode]:
    """Run every (task, rollout_key) episode to its end, all turns batched across episodes.
    With ``progress`` (a label), a bar on stderr counts the turns and the episodes still
    playing."""
    episodes = []
    for task, key in jobs:
        env = make_env()
        conversation = chat.conversation(env.tool)
        episode = Episode(task, key, env, conversation=conversation)
        episode.extend(conversation.start(env.reset(task)), None, -1)
        episodes.append(episode)
    # a generator that keeps each episode's keys and values encodes only a turn's new tokens
    # (policy.generation); nothing is kept across calls of this function
    keeps = bool(getattr(generator, "keeps_prefixes", False))
    if keeps:  # such a generator has release (not part of the Generator protocol)
        cast(Any, generator).release()
    bar = tqdm(total=cfg.max_turns, desc=progress, disable=progress is None, mininterval=5.0)
    for turn in range(cfg.max_turns):
        active = [e for e in episodes if not e.done]
        if not active:
            break
        bar.set_postfix(playing=len(active), refresh=False)
        extra = {"keys": [id(e) for e in active]} if keeps else {}
        outputs = generator.generate(
            [e.token_ids for e in active],
            cfg.max_new_tokens,
            cfg.temperature,
            turn_seed(seed, turn),
            **extra,
        )
        texts = []
        for episode, out in zip(active, outputs, strict=True):
            episode.extend(out.token_ids, out.logprobs, turn)
            # every episode here was started with a conversation (above)
            action = cast(Conversation, episode.conversation).reply(out.token_ids)
            texts.append(action if out.finished else "<truncated>")
        with ThreadPoolExecutor(step_workers) as ex:
            steps = list(
                ex.map(lambda pair: pair[0].env.step(pair[1]), zip(active, texts, strict=True))
            )
        for episode, (observation, done) in zip(active, steps, strict=True):
            if not done:
                obs_ids = cast(Conversation, episode.conversation).observe(observation)
                if (
                    len(episode.token_ids) + len(obs_ids) + cfg.max_new_tokens
                    > cfg.max_context_tokens
                ):
                    episode.env.end("context_budget")
                    done = True
                else:
                    episode.extend(obs_ids, None, -1)
            episode.done = done
        bar.update(1)
    bar.close()
    if keeps:
        cast(Any, generator).release()
    for episode in episodes:
        if not episode.done:
            episode.env.end("turn_budget")
            episode.done = True
    return episodes
