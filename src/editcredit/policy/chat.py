"""The model's own chat template, token in, token out.

Prompts are rendered by the tokenizer's ``chat_template`` (Jinja, ``apply_chat_template``); the
sampled ids of an assistant turn are kept as sampled and never re-tokenized. One episode is a
:class:`Conversation`:

    start(obs_0)      template([system?, obs_0 message], add_generation_prompt)   -> ids
    reply(sampled)    the action text for the environment (a tool call becomes its command)
    observe(obs_k)    the rest of the assistant turn's closing (``<|im_end|>`` is usually the
                      sampled stop token, so only ``\\n`` remains) + the new observation's turn
                      + the generation prompt                                        -> ids

``observe``'s text is the difference between rendering the conversation with and without the new
message; the template must keep the earlier rendering as a prefix (checked on every turn, and
on a probe conversation when the template is loaded: a template that rewrites history, e.g. one
that drops earlier reasoning, is refused by name). Generation stops at the template's end-of-turn
token (the special token that closes an assistant turn) or the tokenizer's eos.

Where the template has a tool-call format (Qwen2.5's ``<tool_call>`` JSON) and the environment
acts through a tool (:attr:`Environment.tool`), the tool is declared to the template, the task
(the first observation) is a ``user`` message, the tool's results are ``tool`` messages and
the model's call is turned back into the environment's action text
(:mod:`editcredit.policy.tool_calls`); otherwise observations are ``user`` messages and the
action text is the decoded turn. The loss covers the sampled tokens.
"""

from __future__ import annotations

from typing import Any

from editcredit.policy.tool_calls import TOOLS, action_from_tool_call

ACTION_PROBE = "@@ editcredit action @@"
OBSERVATION_PROBE = "@@ editcredit observation @@"


class ChatTemplateError(ValueError):
    """The tokenizer's chat template cannot be played token-exactly."""


class ChatTemplate:
    """The rendering of one tokenizer's chat template: stop ids, pad id, tool-call format."""

    def __init__(self, tokenizer: Any, system: str | None = None) -> None:
        self.tokenizer = tokenizer
        self.name = str(getattr(tokenizer, "name_or_path", "") or "the tokenizer")
        self.system = system
        if not getattr(tokenizer, "chat_template", None):
            raise ChatTemplateError(
                f"{self.name}: the tokenizer has no chat_template (a model is played through its "
                "own template; give the directory one)"
            )
        self.close_text = self._assistant_close()
        close_ids = self.encode_text(self.close_text)
        specials = set(tokenizer.all_special_ids) | set(
            getattr(tokenizer, "added_tokens_decoder", {})
        )
        first = tokenizer.decode(close_ids[:1], skip_special_tokens=False)
        if not close_ids or close_ids[0] not in specials or not self.close_text.startswith(first):
            raise ChatTemplateError(
                f"chat template of {self.name}: an assistant turn closes with "
                f"{self.close_text!r}, which does not begin with a special end-of-turn token"
            )
        self.end_of_turn = close_ids[0]
        self.close_rest_text = self.close_text[len(first) :]
        eos = tokenizer.eos_token_id
        self.stop_ids = tuple(dict.fromkeys(i for i in (self.end_of_turn, eos) if i is not None))
        pad = tokenizer.pad_token_id
        self.pad = int(pad if pad is not None else self.end_of_turn)
        self.bos = tokenizer.bos_token_id
        self.tool_format, self.tool_problem = self._tool_format()
        for tool in (None, *(TOOLS if self.tool_problem is None else ())):
            self._check_prefix(tool)

    # rendering

    def render(self, messages: list[dict], tool: str | None, generation_prompt: bool) -> str:
        tools = [TOOLS[tool].schema] if tool is not None and self.tool_format else None
        return self.tokenizer.apply_chat_template(
            messages, tools=tools, add_generation_prompt=generation_prompt, tokenize=False
        )

    def encode_text(self, text: str) -> list[int]:
        return list(self.tokenizer.encode(text, add_special_tokens=False))

    def head(self) -> list[dict]:
        return [{"role": "system", "content": self.system}] if self.system else []

    def observation_message(self, text: str, tool: str | None) -> dict:
        if tool is not None and self.tool_format:
            return {"role": "tool", "name": tool, "content": text}
        return {"role": "user", "content": text}

    def conversation(self, tool: str | None = None) -> Conversation:
        """A new episode's conversation; ``tool``: the environment's tool (None: plain text)."""
        if tool is not None and tool not in TOOLS:
            raise ChatTemplateError(f"unknown tool {tool!r} (one of {', '.join(TOOLS)})")
        if tool is not None and self.tool_problem is not None:
            raise ChatTemplateError(self.tool_problem)
        return Conversation(self, tool)

    def prefix_delta(self, before: str, after: str, what: str) -> str:
        if not after.startswith(before):
            raise ChatTemplateError(
                f"chat template of {self.name}: rendering {what} changes the earlier turns' "
                "text (the template is not prefix-stable, so earlier sampled tokens would no "
                "longer be what the template shows the model)"
            )
        return after[len(before) :]

    # checks of the template at load time

    def _assistant_close(self) -> str:
        messages = [*self.head(), {"role": "user", "content": OBSERVATION_PROBE}]
        prompt = self.render(messages, None, True)
        full = self.render([*messages, {"role": "assistant", "content": ACTION_PROBE}], None, False)
        turn = self.prefix_delta(prompt, full, "an assistant turn")
        if not turn.startswith(ACTION_PROBE):
            raise ChatTemplateError(
                f"chat template of {self.name}: an assistant turn is not rendered as the "
                "generation prompt followed by its content"
            )
        return turn[len(ACTION_PROBE) :]

    def _tool_format(self) -> tuple[str | None, str | None]:
        """The tool-call format and, for a template whose format the agent cannot read, why
        (an environment with a tool is then refused; one without plays in plain text):
        ``("tool_call", None)`` when the template declares tools and asks for ``<tool_call>``
        JSON, ``(None, None)`` when it ignores tools."""
        messages = [*self.head(), {"role": "user", "content": OBSERVATION_PROBE}]
        plain = self.tokenizer.apply_chat_template(messages, tokenize=False)
        tools = [t.schema for t in TOOLS.values()]
        declared = self.tokenizer.apply_chat_template(messages, tools=tools, tokenize=False)
        if declared == plain:
            return None, None
        if "<tool_call>" not in declared:
            return None, (
                f"chat template of {self.name}: it declares tools, but not in the <tool_call> "
                "JSON format, the only tool-call format the agent reads"
            )
        return "tool_call", None

    def _check_prefix(self, tool: str | None) -> None:
        conv = self.conversation(tool)
        conv.start(OBSERVATION_PROBE)
        for k in range(2):
            conv.reply(self.encode_text(f"{ACTION_PROBE} {k}") + [self.end_of_turn])
            conv.observe(f"{OBSERVATION_PROBE} {k}")


class Conversation:
    """One episode's messages, rendered turn by turn; the ids it returns are appended to the
    sampled ones unchanged."""

    def __init__(self, template: ChatTemplate, tool: str | None) -> None:
        self.template = template
        self.tool = tool
        self.messages: list[dict] = []
        self._last: list[int] = []

    def start(self, observation: str) -> list[int]:
        """The first prompt: ``[system?, observation]`` with the generation prompt."""
        t = self.template
        self.messages = [*t.head(), t.observation_message(observation, None)]  # the task
        return t.encode_text(t.render(self.messages, self.tool, True))

    def reply(self, sampled: list[int]) -> str:
        """Record one sampled assistant turn; return its action text for the environment."""
        t = self.template
        self._last = list(sampled)
        body = [i for i in sampled if i not in t.stop_ids and i != t.pad]
        text = t.tokenizer.decode(body, skip_special_tokens=False)
        self.messages.append({"role": "assistant", "content": text})
        if self.tool is not None and t.tool_format:
            return action_from_tool_call(text, self.tool)
        return text

    def observe(self, observation: str) -> list[int]:
        """The ids after the last sampled turn: the rest of its closing (all of it when the turn
        did not end with the end-of-turn token), the observation's turn, the generation
        prompt."""
        t = self.template
        before = t.render(self.messages, self.tool, False)
        self.messages.append(t.observation_message(observation, self.tool))
        after = t.render(self.messages, self.tool, True)
        delta = t.prefix_delta(before, after, "a new observation")
        ended = bool(self._last) and self._last[-1] == t.end_of_turn
        close = t.close_rest_text if ended else t.close_text
        if not before.endswith(t.close_text):
            raise ChatTemplateError(
                f"chat template of {t.name}: an assistant turn in a longer conversation does "
                f"not close with {t.close_text!r}"
            )
        return t.encode_text(close + delta)
