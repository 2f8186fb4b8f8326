"""The chat layer over the model's own template: the tiny default's ChatML and a stock Qwen2.5
template with its tool-call format; token in, token out across turns (CPU, no sandbox)."""

from __future__ import annotations

import pytest
import torch
from qwenfactory import QWEN25_CHAT_TEMPLATE, write_stock_qwen2
from transformers import AutoTokenizer

from editcredit.agent.protocol import Environment
from editcredit.agent.rollout import RolloutConfig, run_episodes
from editcredit.data.task import Task
from editcredit.policy.chat import ChatTemplate, ChatTemplateError
from editcredit.policy.generation import GenerationOutput, collect_outputs
from editcredit.policy.sft import chat_example
from editcredit.policy.tokenizer import train_tokenizer
from editcredit.policy.tool_calls import TOOLS, action_from_tool_call

TEXTS = [
    "replace calc.py:3\n    return a + b",
    "run",
    "submit",
    "tests: 4 passed, 1 failed\nFAILED test_calc.py::test_add: assert -1 == 5",
] * 20
OBSERVATIONS = ["Fix calc.py: add returns a - b.", "tests: 4 passed, 1 failed", "edited calc.py"]
ACTIONS = ["run", "replace calc.py:3\n    return a + b", "submit"]


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    out = tmp_path_factory.mktemp("tiny")
    train_tokenizer(TEXTS, 300).save_pretrained(str(out))
    return AutoTokenizer.from_pretrained(str(out))


@pytest.fixture(scope="module")
def qwen(tmp_path_factory):
    out = write_stock_qwen2(tmp_path_factory.mktemp("stock") / "qwen")
    return AutoTokenizer.from_pretrained(str(out))


class ScriptEnv(Environment):
    """Observations from a list; the episode ends after the last one."""

    def __init__(self, observations: list[str], tool: str | None = None) -> None:
        self.observations = observations
        self.tool = tool  # type: ignore[misc]
        self.actions: list[str] = []

    def reset(self, task: Task) -> str:
        self.begin_episode()
        return self.observations[0]

    def step(self, action_text: str) -> tuple[str, bool]:
        self.actions.append(action_text)
        k = len(self.actions)
        done = k >= len(self.observations)
        return ("" if done else self.observations[k]), done

    def final_patch(self) -> str:
        return ""


class ScriptGenerator:
    """Returns the given id lists, one per turn, as finished completions."""

    def __init__(self, turns: list[list[int]]) -> None:
        self.turns = turns
        self.calls = 0

    def generate(self, prompts, max_new_tokens, temperature, seed):
        out = [
            GenerationOutput(
                list(self.turns[self.calls]), [-1.0] * len(self.turns[self.calls]), True
            )
        ]
        self.calls += 1
        return out * len(prompts)


def _play(chat, observations, turns, tool=None):
    cfg = RolloutConfig(
        max_turns=len(turns), max_new_tokens=64, max_context_tokens=100_000, temperature=1.0
    )
    env = ScriptEnv(observations, tool)
    task = Task.model_construct(instance_id="t")
    [episode] = run_episodes([(task, "k")], lambda: env, ScriptGenerator(turns), chat, cfg, seed=0)
    return episode, env


def test_tiny_default_is_chatml_and_stops_at_im_end(tiny):
    chat = ChatTemplate(tiny)
    im_end = tiny.convert_tokens_to_ids("<|im_end|>")
    assert chat.end_of_turn == im_end and chat.stop_ids == (im_end,)
    assert chat.pad == tiny.convert_tokens_to_ids("<|endoftext|>") and chat.bos is None
    assert chat.tool_format is None
    ids = chat.conversation("bash").start("hello")  # no tool format: the tool is plain text
    assert tiny.decode(ids) == "<|im_start|>user\nhello<|im_end|>\n<|im_start|>assistant\n"


@pytest.mark.parametrize("which,tool", [("tiny", None), ("qwen", None), ("qwen", "bash")])
def test_turn_by_turn_ids_are_the_templates_rendering_of_the_whole_conversation(
    which, tool, request
):
    """The prefix property: the first prompt, the sampled ids and each observation's ids,
    concatenated, decode to exactly what the template renders for the whole conversation."""
    tok = request.getfixturevalue(which)
    chat = ChatTemplate(tok)
    turns = [tok.encode(a, add_special_tokens=False) + [chat.end_of_turn] for a in ACTIONS]
    episode, env = _play(chat, OBSERVATIONS, turns, tool)
    messages = [{"role": "user", "content": OBSERVATIONS[0]}]
    role = "tool" if tool else "user"
    for action, obs in zip(ACTIONS[:-1], OBSERVATIONS[1:], strict=True):
        messages += [{"role": "assistant", "content": action}, {"role": role, "content": obs}]
    messages.append({"role": "assistant", "content": ACTIONS[-1]})
    tools = [TOOLS[tool].schema] if tool else None
    whole = tok.apply_chat_template(messages, tools=tools, tokenize=False)
    assert tok.decode(episode.token_ids) + "\n" == whole  # the last turn's "\n" is not sampled
    assert env.actions == ACTIONS
    if tool:
        assert "<tool_response>\ntests: 4 passed, 1 failed\n</tool_response>" in whole
        assert "# Tools" in tok.decode(episode.token_ids)


def test_a_template_that_rewrites_earlier_turns_is_refused_by_name(tmp_path):
    tok = train_tokenizer(TEXTS, 300)
    tok.chat_template = "{{ messages | length }}" + tok.chat_template  # history changes per turn
    tok.save_pretrained(str(tmp_path))
    with pytest.raises(ChatTemplateError, match=rf"{tmp_path}.*not prefix-stable"):
        ChatTemplate(AutoTokenizer.from_pretrained(str(tmp_path)))


def test_a_tokenizer_without_a_template_or_end_of_turn_token_is_refused(tmp_path):
    tok = train_tokenizer(TEXTS, 300)
    tok.chat_template = None
    with pytest.raises(ChatTemplateError, match="no chat_template"):
        ChatTemplate(tok)
    tok.chat_template = "{% for m in messages %}{{ m['content'] }}\n{% endfor %}"
    with pytest.raises(ChatTemplateError, match="special end-of-turn token"):
        ChatTemplate(tok)


def test_sampled_ids_are_kept_where_decode_and_reencode_would_change_them(tiny):
    """The sampled turn spells "return a + b" one byte-level character at a time: decoding and
    re-encoding it gives other (merged) ids; the trajectory holds the sampled ones."""
    chat = ChatTemplate(tiny)
    text = "return a + b"
    spelled = tiny.convert_tokens_to_ids(list(text.replace(" ", "Ġ")))
    assert tiny.unk_token_id not in spelled and tiny.decode(spelled) == text
    assert tiny.encode(text, add_special_tokens=False) != spelled  # re-tokenizing changes ids
    turns = [
        [*spelled, chat.end_of_turn],
        [*tiny.encode("submit", add_special_tokens=False), chat.end_of_turn],
    ]
    episode, env = _play(chat, OBSERVATIONS[:2], turns)
    first = episode.token_ids.index(spelled[0])
    assert episode.token_ids[first : first + len(turns[0])] == turns[0]
    assert episode.loss_mask[first : first + len(turns[0])] == [1] * len(turns[0])
    assert env.actions[0] == text
    whole = tiny.decode(episode.token_ids)
    assert tiny.encode(whole, add_special_tokens=False) != episode.token_ids


def test_sft_examples_are_token_identical_to_rollouts(tiny):
    chat = ChatTemplate(tiny)
    ids, mask = chat_example(chat, OBSERVATIONS, ACTIONS)
    turns = [tiny.encode(a, add_special_tokens=False) + [chat.end_of_turn] for a in ACTIONS]
    episode, _ = _play(chat, OBSERVATIONS, turns)
    assert ids == episode.token_ids and mask == episode.loss_mask
    assert tiny.decode([i for i, m in zip(ids, mask, strict=True) if m]).count("<|im_end|>") == 3


def test_a_tool_call_turns_into_the_bash_command(qwen):
    chat = ChatTemplate(qwen)
    call = '<tool_call>\n{"name": "bash", "arguments": {"command": "ls -la"}}\n</tool_call>'
    turn = [*qwen.encode(call, add_special_tokens=False), chat.end_of_turn]
    episode, env = _play(chat, OBSERVATIONS[:2], [turn, turn], tool="bash")
    assert env.actions == ["ls -la", "ls -la"]
    assert action_from_tool_call("thinking\n" + call, "bash") == "ls -la"
    bad = ["ls", call + call, call.replace('"bash"', '"python"'), "<tool_call>{nope</tool_call>"]
    assert [action_from_tool_call(t, "bash") for t in bad] == bad


def test_generation_stops_at_any_stop_id():
    tokens = torch.tensor([[5, 7, 9, 7], [5, 9, 7, 3], [5, 6, 6, 6]])
    outs = collect_outputs(tokens, torch.zeros(3, 4), (7, 9))
    assert [o.token_ids for o in outs] == [[5, 7], [5, 9], [5, 6, 6, 6]]
    assert [o.finished for o in outs] == [True, True, False]


def test_the_qwen_template_is_the_stock_one(qwen):
    assert qwen.chat_template == QWEN25_CHAT_TEMPLATE


def test_a_tool_format_other_than_tool_call_json_is_refused_for_a_tool_only():
    tok = train_tokenizer(TEXTS, 300)
    tok.chat_template = (
        "{%- if tools %}{{- '<|im_start|>system\\n[AVAILABLE_TOOLS]' + (tools | tojson)"
        " + '<|im_end|>\\n' }}{%- endif %}" + tok.chat_template
    )
    chat = ChatTemplate(tok)
    assert chat.tool_format is None and "[AVAILABLE_TOOLS]" not in tok.decode(
        chat.conversation().start("x")
    )
    with pytest.raises(ChatTemplateError, match="not in the <tool_call> JSON format"):
        chat.conversation("bash")


def test_run_episodes_shows_its_progress_only_when_labelled(tiny, capsys):
    """A labelled run draws a bar on stderr (turns, episodes still playing); an unlabelled one
    prints nothing, and both play the same episode."""
    chat = ChatTemplate(tiny)
    turns = [tiny.encode(a, add_special_tokens=False) + [chat.end_of_turn] for a in ACTIONS]
    cfg = RolloutConfig(
        max_turns=len(turns), max_new_tokens=64, max_context_tokens=100_000, temperature=1.0
    )
    task = Task.model_construct(instance_id="t")
    played = []
    for label in (None, "probe-dev: 1 episodes, turns"):
        env = ScriptEnv(OBSERVATIONS)
        gen = ScriptGenerator(turns)
        [episode] = run_episodes([(task, "k")], lambda e=env: e, gen, chat, cfg, 0, progress=label)
        played.append((episode.token_ids, env.actions))
        err = capsys.readouterr().err
        if label is None:
            assert err == ""
        else:
            assert label in err and f"{len(turns)}/{len(turns)}" in err
    assert played[0] == played[1]
