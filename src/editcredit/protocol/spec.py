"""A study protocol: what is measured, on which splits, with which policies, grid and gate.

The protocol is a YAML file under ``config/protocols/``. Its identity is the SHA256 of the
file's bytes (not of the parsed content: a changed comment is a changed protocol, so nothing can
slip in through formatting). :func:`load_protocol` parses and checks the keys every protocol
must carry; the study that uses it reads the rest.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from editcredit.io.hashing import sha256_file

#: keys every protocol declares (METHOD §11: measures, splits, policies, grid, gate)
REQUIRED_KEYS = ("study", "measures", "splits", "policies", "grid", "gate")


class ProtocolError(ValueError):
    """A protocol file that is malformed, or an action that its frozen state forbids."""


def protocol_sha256(path: str | Path) -> str:
    """SHA256 of the protocol file's bytes."""
    return sha256_file(path)


def load_protocol(path: str | Path) -> dict[str, Any]:
    """Parse a protocol file and check the keys every protocol must carry.

    Raises:
        ProtocolError: not a mapping, a required key missing, or ``splits`` without a ``fit``
            list and a ``sealed`` split that is not among them.
    """
    path = Path(path)
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    if not isinstance(data, dict):
        raise ProtocolError(f"{path}: a protocol is a mapping, got {type(data).__name__}")
    missing = [k for k in REQUIRED_KEYS if k not in data]
    if missing:
        raise ProtocolError(f"{path}: missing keys {missing} (every protocol has {REQUIRED_KEYS})")
    splits = data["splits"]
    if not isinstance(splits, dict) or "fit" not in splits or "sealed" not in splits:
        raise ProtocolError(f"{path}: splits needs 'fit' (a list) and 'sealed' (one split)")
    if splits["sealed"] in splits["fit"]:
        raise ProtocolError(f"{path}: the sealed split {splits['sealed']!r} is also a fit split")
    if data["study"] != path.stem:
        raise ProtocolError(f"{path}: study {data['study']!r} differs from the file name")
    return data
