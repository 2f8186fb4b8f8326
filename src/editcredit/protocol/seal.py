"""Freezing a protocol, reading a sealed split's labels, and gate verdicts written once.

Three files, three lifetimes:

- the **freeze receipt** ``logs/protocols/{study}.json`` (rule ``freeze_protocol``): the
  protocol's SHA256 and when it was frozen. Rewritten by the rule whenever the protocol file
  changes, *unless* a seal exists for another hash: then the rule refuses, naming the seal.
- the **seal** ``logs/seals/{study}.json``: written by the first read of the sealed labels, never
  by a rule and never again: both hashes (protocol and labels), the freeze receipt it trusted and
  the order of events (frozen, then first read). Later reads are appended to
  ``logs/seals/{study}.reads.jsonl``.
- the **gate** ``logs/seals/{study}.gate.json``: the verdict of the protocol's gate on the sealed
  split, written once. A recomputation must agree with it; it is never overwritten.

:func:`read_sealed_labels` is the only function in the package that opens a sealed labels file.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TypedDict, cast

from editcredit.io.atomic import atomic_write_text
from editcredit.io.hashing import sha256_file
from editcredit.io.provenance import code_version
from editcredit.protocol.spec import ProtocolError, load_protocol, protocol_sha256

DEFAULT_SEAL_DIR = Path("logs/seals")


class FreezeReceipt(TypedDict):
    """The freeze receipt ``logs/protocols/{study}.json`` (written with sorted keys)."""

    study: str
    protocol: str  # the protocol file's path
    protocol_sha256: str  # its hash when frozen
    frozen_at: str  # UTC time, ISO 8601 with microseconds
    sealed_split: str  # the split whose labels are sealed
    code: dict[str, Any]  # the code that froze it (io.provenance.code_version)


class SealEvent(TypedDict):
    """One event of a seal, in order."""

    event: str  # "protocol frozen", "first read of sealed labels"
    at: str


class Seal(TypedDict):
    """The seal ``logs/seals/{study}.json``, written by the first read of the sealed labels."""

    study: str
    protocol: str
    protocol_sha256: str  # the protocol's hash the labels were first read under
    labels_sha256: dict[str, str]  # per labels file (its path)
    freeze_receipt: str  # the receipt it trusted
    frozen_at: str
    first_read_at: str
    events: list[SealEvent]


class GateRecord(TypedDict):
    """The gate ``logs/seals/{study}.gate[.{key}].json``: a verdict recorded once."""

    study: str
    key: str  # names one evaluation ("" for the study's only one)
    applied_at: str
    record: dict[str, Any]  # the verdict as given (JSON-normalized, sorted keys)


def _now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def seal_path(study: str, seal_dir: str | Path = DEFAULT_SEAL_DIR) -> Path:
    return Path(seal_dir) / f"{study}.json"


def gate_path(study: str, seal_dir: str | Path = DEFAULT_SEAL_DIR, key: str = "") -> Path:
    """The gate record of a study; ``key`` (e.g. a hash of the sealed labels and of what the fit
    split chose) names one evaluation, so a changed input gets its own record beside the old."""
    name = f"{study}.gate.{key[:16]}.json" if key else f"{study}.gate.json"
    return Path(seal_dir) / name


def _read_json(path: Path) -> dict[str, Any]:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ProtocolError(f"{path}: unreadable receipt ({exc})") from exc


def _write_new(path: Path, record: Seal | GateRecord) -> None:
    """Create ``path`` exclusively (an existing file is never replaced)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "x", encoding="utf-8") as fh:
        fh.write(json.dumps(record, indent=2, sort_keys=True) + "\n")
        fh.flush()
        os.fsync(fh.fileno())


def freeze_protocol(
    protocol: str | Path, receipt: str | Path, seal_dir: str | Path = DEFAULT_SEAL_DIR
) -> FreezeReceipt:
    """Write the freeze receipt of ``protocol``; refuse when its sealed labels were already read
    under another version of the file.

    Raises:
        ProtocolError: the protocol is malformed, or a seal exists for a different hash (the
            message names the seal receipt).
    """
    protocol = Path(protocol)
    spec = load_protocol(protocol)
    digest = protocol_sha256(protocol)
    seal = seal_path(spec["study"], seal_dir)
    if seal.exists():
        sealed = _read_json(seal)
        if sealed.get("protocol_sha256") != digest:
            raise ProtocolError(
                f"{protocol}: the protocol of study {spec['study']!r} is frozen and its sealed "
                f"labels were read at {sealed.get('first_read_at')} under protocol "
                f"{sealed.get('protocol_sha256')}; this file hashes to {digest}. Editing a "
                f"frozen protocol is refused (seal receipt {seal}); a new protocol is a new "
                f"study with a new name."
            )
    record: FreezeReceipt = {
        "study": spec["study"],
        "protocol": protocol.as_posix(),
        "protocol_sha256": digest,
        "frozen_at": _now(),
        "sealed_split": spec["splits"]["sealed"],
        "code": code_version(),
    }
    atomic_write_text(receipt, json.dumps(record, indent=2, sort_keys=True) + "\n")
    return record


def check_frozen(protocol: str | Path, receipt: str | Path) -> FreezeReceipt:
    """The freeze receipt, after checking that the protocol file still has its frozen hash."""
    protocol, receipt = Path(protocol), Path(receipt)
    if not receipt.exists():
        raise ProtocolError(
            f"{protocol}: not frozen (no receipt {receipt}); rule freeze_protocol writes it "
            f"before any sealed label is read"
        )
    frozen = _read_json(receipt)
    digest = protocol_sha256(protocol)
    if frozen.get("protocol_sha256") != digest:
        raise ProtocolError(
            f"{protocol}: hashes to {digest} but its freeze receipt {receipt} records "
            f"{frozen.get('protocol_sha256')}: the protocol changed after it was frozen"
        )
    return cast(FreezeReceipt, frozen)


def read_sealed_labels(
    labels: str | Path | Sequence[str | Path],
    *,
    protocol: str | Path,
    receipt: str | Path,
    seal_dir: str | Path = DEFAULT_SEAL_DIR,
    rows: tuple[str, str] | None = None,
):
    """The one reader of a sealed split's labels (Parquet files), as one pandas DataFrame.

    ``rows`` = (column, value) keeps only the rows of the sealed split (e.g. ``("role",
    "sealed")``) when the files hold other splits too. Demands a frozen protocol (its receipt,
    and the file still at the frozen hash). The first read writes the seal: the protocol hash,
    the labels' hashes, the freeze receipt, and the order of events (frozen, then first read).
    Every later read must be under the same protocol hash; it is appended to the reads log.

    Raises:
        ProtocolError: no receipt, the protocol changed since freezing, the seal records another
            protocol hash, or the receipt post-dates the first read (events out of order).
    """
    import pandas as pd
    import pyarrow.parquet as pq

    frozen = check_frozen(protocol, receipt)
    study = frozen["study"]
    paths = [Path(labels)] if isinstance(labels, str | Path) else [Path(p) for p in labels]
    digests = {p.as_posix(): sha256_file(p) for p in paths}
    seal = seal_path(study, seal_dir)
    now = _now()
    if seal.exists():
        sealed = _read_json(seal)
        if sealed.get("protocol_sha256") != frozen["protocol_sha256"]:
            raise ProtocolError(
                f"{paths[0] if paths else 'labels'}: sealed labels of study {study!r} were "
                f"first read under protocol {sealed.get('protocol_sha256')} (seal receipt "
                f"{seal}); the frozen protocol is now {frozen['protocol_sha256']}: refused"
            )
        log = seal.with_name(f"{study}.reads.jsonl")
        event = {"at": now, "labels_sha256": digests}
        with open(log, "a", encoding="utf-8") as fh:
            fh.write(json.dumps(event, sort_keys=True) + "\n")
    else:
        if frozen["frozen_at"] > now:
            raise ProtocolError(
                f"{receipt}: frozen at {frozen['frozen_at']}, after this read at {now}"
            )
        first: Seal = {
            "study": study,
            "protocol": frozen["protocol"],
            "protocol_sha256": frozen["protocol_sha256"],
            "labels_sha256": digests,
            "freeze_receipt": Path(receipt).as_posix(),
            "frozen_at": frozen["frozen_at"],
            "first_read_at": now,
            "events": [
                {"event": "protocol frozen", "at": frozen["frozen_at"]},
                {"event": "first read of sealed labels", "at": now},
            ],
        }
        _write_new(seal, first)
    filters = [(rows[0], "==", rows[1])] if rows else None
    frames = [pq.read_table(p, filters=filters).to_pandas() for p in paths]
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()


def apply_gate_once(
    study: str, verdict: dict[str, Any], seal_dir: str | Path = DEFAULT_SEAL_DIR, key: str = ""
) -> GateRecord:
    """Record the gate's verdict on the sealed split, once; return the recorded one.

    ``verdict`` must carry ``protocol_sha256`` and ``verdict`` ("pass" or "fail"). An existing
    record (of the same ``key``) is never overwritten: a recomputation must reproduce it exactly
    (same verdict and numbers), otherwise the call fails naming the record. A failed gate stays
    failed.
    """
    path = gate_path(study, seal_dir, key)
    if verdict.get("verdict") not in ("pass", "fail") or "protocol_sha256" not in verdict:
        raise ProtocolError(f"{path}: a gate record needs protocol_sha256 and a pass/fail verdict")
    body = json.loads(json.dumps(verdict, sort_keys=True))
    if path.exists():
        recorded = _read_json(path)
        if recorded.get("record") != body:
            raise ProtocolError(
                f"{path}: the gate of study {study!r} was applied at {recorded.get('applied_at')}"
                f" with verdict {recorded.get('record', {}).get('verdict')!r}; a gate is "
                f"applied once and its record is never overwritten (the recomputation differs)"
            )
        return cast(GateRecord, recorded)
    record: GateRecord = {"study": study, "key": key, "applied_at": _now(), "record": body}
    _write_new(path, record)
    return record
