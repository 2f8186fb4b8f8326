"""The agent's tools as a chat template declares them, and a model's call turned back into the
environment's action text.

The bash environment acts through one tool, ``bash`` (one shell command; the command ``submit``
ends the episode). A template with a tool-call format (Qwen2.5's, Hermes-style) is given the
tool's JSON schema and the model answers with

    <tool_call>
    {"name": "bash", "arguments": {"command": "ls"}}
    </tool_call>

which :func:`action_from_tool_call` turns into the bash action language's bare command. A turn
with no call, a malformed one, a call of another tool or more than one call is passed on as the
turn's text, for the environment to record as what it is (METHOD §4).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

_CALL = re.compile(r"<tool_call>(.*?)</tool_call>", re.DOTALL)


@dataclass(frozen=True)
class Tool:
    name: str
    argument: str
    """The one argument that carries the action text."""
    schema: dict[str, Any]


BASH = Tool(
    name="bash",
    argument="command",
    schema={
        "type": "function",
        "function": {
            "name": "bash",
            "description": (
                "Run one shell command in the repository's working directory and return its "
                "exit code and output. Run the command `submit` to finish."
            ),
            "parameters": {
                "type": "object",
                "properties": {
                    "command": {"type": "string", "description": "The shell command to run."}
                },
                "required": ["command"],
            },
        },
    },
)

TOOLS: dict[str, Tool] = {BASH.name: BASH}


def action_from_tool_call(text: str, tool: str) -> str:
    """The command of the turn's single call of ``tool``; the text itself otherwise."""
    calls = _CALL.findall(text)
    if len(calls) != 1:
        return text
    try:
        call = json.loads(calls[0])
    except json.JSONDecodeError:
        return text
    if not isinstance(call, dict) or call.get("name") != tool:
        return text
    arguments = call.get("arguments")
    if isinstance(arguments, str):
        try:
            arguments = json.loads(arguments)
        except json.JSONDecodeError:
            return text
    value = arguments.get(TOOLS[tool].argument) if isinstance(arguments, dict) else None
    return value if isinstance(value, str) else text
