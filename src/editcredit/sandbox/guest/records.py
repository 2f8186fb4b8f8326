"""The observers' record writer and the per-test record helpers of the non-pytest hooks.

Standard library only (mounted into the sandbox; never imports editcredit). Every record is one
JSON line carrying the run's nonce, written straight to the runner's pipe; the writer is a
closure over its descriptor and encoder (no attribute or global lookup the tests could swap).
A test's outcome is written as the same ``phase`` records the pytest observer writes
(``setup``/``call``/``teardown``), so the host reads one format whatever the runner. A finding
of tampering is written once (:func:`tampering`). The hooks see a runner's reports through a
:class:`Tap` of its result (unittest) or reporter (SymPy).
"""

import json
import os

MESSAGE_LIMIT = 1500  # a record stays one atomic pipe write (PIPE_BUF) in a forked child too


def writer(fd: int, nonce: str):
    """``emit(record)``: add the nonce, write one line to ``fd``."""
    encode = json.JSONEncoder(sort_keys=True).encode
    write = os.write

    def emit(record: dict) -> None:
        record["nonce"] = nonce
        data = (encode(record) + "\n").encode("utf-8", "replace")
        while data:
            data = data[write(fd, data) :]

    return emit


def phase(nodeid: str, when: str, outcome: str, message: str = "", **flags) -> dict:
    """One ``phase`` record (``flags``: wasxfail, xfail_not_run, xpass_strict)."""
    return {
        "event": "phase",
        "nodeid": nodeid,
        "when": when,
        "outcome": outcome,
        "wasxfail": bool(flags.get("wasxfail", False)),
        "xfail_not_run": bool(flags.get("xfail_not_run", False)),
        "xpass_strict": bool(flags.get("xpass_strict", False)),
        "message": str(message)[:MESSAGE_LIMIT],
        "duration": float(flags.get("duration", 0.0)),
    }


def error_message(err) -> str:
    """``Type: text`` of an exc_info triple (never the terminal's rendering)."""
    if not err or err[0] is None:
        return ""
    try:
        text = str(err[1])
    except Exception:  # noqa: BLE001 - a test's exception may not even print
        text = "<unprintable>"
    return f"{getattr(err[0], '__name__', '?')}: {text}"[:MESSAGE_LIMIT]


def tampering(emit, seen: set, found: "list[str]") -> "list[str]":
    """Write one ``tampering`` record of the findings not in ``seen`` (then added to it);
    return ``found``."""
    new = [f for f in found if f not in seen]
    if new:
        seen.update(new)
        emit({"event": "tampering", "what": new})
    return found


class Tap:
    """A proxy of a runner's result or reporter: attributes are read and set on the inner object;
    a hook's subclass records each report before it forwards it."""

    __slots__ = ("_inner",)

    def __init__(self, inner) -> None:
        object.__setattr__(self, "_inner", inner)

    def __getattr__(self, name):
        return getattr(object.__getattribute__(self, "_inner"), name)

    def __setattr__(self, name, value) -> None:
        setattr(object.__getattribute__(self, "_inner"), name, value)
