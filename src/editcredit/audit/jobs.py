"""The two audit jobs of the workflow: one checkpoint's audit JSON, and the summary table.

``audit_params_job`` audits ``runs/{run}/step_{N}/model`` against the base model and the
previous checkpoint of its run, cross-checks the file hashes with the step's identity receipt,
and writes ``results/audits/{run}/step_{N}.json`` with its provenance block. Any failure
(METHOD §10) raises ``AuditFailed`` with every reason in one message and the full audit as
its ``record`` (the rule's failure record keeps it), and writes no output.
``audit_summary_job`` gathers the audits into ``results/audits/summary.parquet``.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import pyarrow as pa

from editcredit.audit.audit_report import AuditReport, FileDigest
from editcredit.audit.base_pin import guard_base
from editcredit.audit.param_audit import audit_checkpoint
from editcredit.io.identity import RECEIPT
from editcredit.io.provenance import directory_digest, write_result_json, write_result_parquet
from editcredit.layout import parse_run
from editcredit.settings import AuditSettings

__all__ = [
    "AuditFailed",
    "SUMMARY_SCHEMA",
    "audit_params_job",
    "audit_summary_job",
    "declared_exclusions",
    "identity_mismatches",
    "summary_row",
]


class AuditFailed(RuntimeError):
    """A checkpoint failed its parameter audit; the message names it and every reason.

    ``record`` is the full audit (as the JSON would hold it, ``ok`` false): the job's failure
    record keeps it (``editcredit.job_records``), since a failed job leaves no output."""

    def __init__(self, message: str, record: dict[str, Any] | None = None) -> None:
        super().__init__(message)
        self.record = record


def identity_mismatches(model_dir: Path, files: Sequence[FileDigest]) -> list[str]:
    """Audited files whose SHA256 differs from the identity receipt of the model's directory.

    The receipt is ``model_dir/identity.json`` (a base model) or ``model_dir/../identity.json``
    (a training step, whose receipt covers ``model/...``); none found means nothing to check.
    """
    for receipt_dir in (model_dir, model_dir.parent):
        receipt = receipt_dir / RECEIPT
        if receipt.is_file():
            break
    else:
        return []
    recorded: dict[str, str] = json.loads(receipt.read_text(encoding="utf-8"))["files"]
    prefix = model_dir.relative_to(receipt_dir).as_posix()
    prefix = "" if prefix == "." else prefix + "/"
    audited = {prefix + f.path: f.sha256 for f in files if Path(f.path).name != RECEIPT}
    audited.pop(prefix + ".snakemake_timestamp", None)
    expected = {k: v for k, v in recorded.items() if k.startswith(prefix)}
    bad = sorted(k for k in set(audited) | set(expected) if audited.get(k) != expected.get(k))
    return [f"{receipt}: {k} differs from the receipt" for k in bad]


def declared_exclusions(audit: AuditSettings | Mapping[str, Any]) -> list[tuple[str, str]]:
    """``audit.exclude`` as ``(pattern, reason)`` pairs (none declared: an empty list)."""
    if not isinstance(audit, AuditSettings):
        audit = AuditSettings.from_mapping(audit)
    return [(e.pattern, e.reason) for e in audit.exclude or []]


def _log_view(result: dict[str, Any]) -> dict[str, Any]:
    """The audit without its per-file and per-tensor lists (those go to the JSON only)."""
    out = {k: v for k, v in result.items() if k not in ("files", "tensors")}
    for key in ("vs_base", "vs_previous"):
        if out.get(key):
            out[key] = {k: v for k, v in out[key].items() if k != "tensors"}
    return out


def _model_digest(files: Sequence[FileDigest]) -> str:
    """``sha256_path`` of the checkpoint directory, from the hashes the audit computed."""
    ordered = sorted(files, key=lambda f: Path(f.path))
    return directory_digest((f.path, f.sha256) for f in ordered)


def audit_params_job(
    ckpt_model: str | Path,
    base_model: str | Path,
    previous_model: str | Path | None,
    out_json: str | Path,
    run: str,
    step: int,
    endpoint_step: int,
    audit_cfg: dict[str, Any],
    config: Any,
    models: Mapping[str, Mapping[str, Any]] | None = None,
) -> dict[str, Any]:
    """Audit one checkpoint and write its JSON; raise ``AuditFailed`` on any failure (a base
    that differs from its receipt or the pin of ``models``, the configured models, raises
    ``BaseDrifted`` before anything is compared). ``audit_cfg`` is the ``audit`` section (the
    rule's param), read as :class:`~editcredit.settings.AuditSettings`, strictly: the schema
    gave every key its value. ``config`` is hashed into the provenance block, never read."""
    base_check = guard_base(base_model, models)
    step = int(step)
    audit = AuditSettings.from_mapping(audit_cfg)  # the ``audit`` section, built strictly
    chunk = audit.chunk_mib << 20
    report: AuditReport = audit_checkpoint(
        ckpt_model,
        base_model,
        previous_model or None,
        chunk_bytes=chunk,
        require_change=step >= int(endpoint_step),
        exclude=declared_exclusions(audit),
    )
    failures = list(report.failures) + identity_mismatches(Path(ckpt_model), report.files)
    name = parse_run(run)
    result = {
        "run": run,
        "arm": name.arm,
        "seed": name.seed,
        "step": step,
        "endpoint": step == int(endpoint_step),
        **report.to_dict(),
        "failures": failures,
        "ok": not failures,
    }
    print(json.dumps(_log_view(result), indent=1))
    if failures:
        raise AuditFailed(
            f"parameter audit of {ckpt_model} (run {run}, step {step}) failed: "
            + "; ".join(failures),
            record=result,
        )
    inputs = [str(ckpt_model), str(base_model)]
    if previous_model:
        inputs.append(str(previous_model))
    known = {str(ckpt_model): _model_digest(report.files)}
    if base_check is not None:
        known[str(base_model)] = base_check["directory_sha256"]
    write_result_json(out_json, result, inputs, config, known=known)
    return result


#: one row per audited checkpoint; ``*_prev`` columns compare with the previous checkpoint
SUMMARY_SCHEMA = pa.schema(
    [
        ("run", pa.string()),
        ("arm", pa.string()),
        ("seed", pa.int64()),
        ("step", pa.int32()),
        ("endpoint", pa.bool_()),
        ("ok", pa.bool_()),
        ("checkpoint", pa.string()),
        ("checkpoint_sha256", pa.string()),
        ("n_files", pa.int32()),
        ("n_tensors", pa.int32()),
        ("bytes_read", pa.int64()),
        ("missing_keys", pa.int32()),
        ("unexpected_keys", pa.int32()),
        ("shape_mismatches", pa.int32()),
        ("dtype_differences", pa.int32()),
        ("compared_tensors", pa.int32()),
        ("compared_elements", pa.int64()),
        ("changed_tensors", pa.int32()),
        ("changed_elements", pa.int64()),
        ("changed_share", pa.float64()),
        ("relative_change", pa.float64()),
        ("max_tensor_relative_change", pa.float64()),
        ("max_tensor", pa.string()),
        ("changed_tensors_prev", pa.int32()),
        ("changed_elements_prev", pa.int64()),
        ("relative_change_prev", pa.float64()),
        ("checkpoint_nonfinite", pa.int64()),
        ("base_nonfinite", pa.int64()),
        ("cast_base_nonfinite", pa.int64()),
        ("notes", pa.string()),
        ("excluded_keys", pa.int32()),
        ("audit_json", pa.string()),
    ]
)


def _num(value: Any) -> float:
    """A JSON number or one of ``json_ready``'s strings ``"nan"``, ``"inf"``, ``"-inf"``."""
    return float(value)


def summary_row(audit: dict[str, Any], audit_json: str) -> dict[str, Any]:
    """One summary row from an audit JSON body."""
    vb, vp = audit["vs_base"], audit.get("vs_previous") or {}
    finite = [t for t in vb["tensors"] if math.isfinite(_num(t["relative_change"]))]
    top = max(finite, key=lambda t: _num(t["relative_change"]), default=None)
    return {
        "run": audit["run"],
        "arm": audit["arm"],
        "seed": audit["seed"],
        "step": audit["step"],
        "endpoint": audit["endpoint"],
        "ok": audit["ok"],
        "checkpoint": audit["checkpoint"],
        "checkpoint_sha256": audit["provenance"]["inputs"].get(audit["checkpoint"]),
        "n_files": len(audit["files"]),
        "n_tensors": len(audit["tensors"]),
        "bytes_read": audit["bytes_read"],
        "missing_keys": len(vb["missing_keys"]),
        "unexpected_keys": len(vb["unexpected_keys"]),
        "shape_mismatches": len(vb["shape_mismatches"]),
        "dtype_differences": len(vb["dtype_differences"]),
        "compared_tensors": vb["compared_tensors"],
        "compared_elements": vb["compared_elements"],
        "changed_tensors": vb["changed_tensors"],
        "changed_elements": vb["changed_elements"],
        "changed_share": vb["changed_elements"] / max(vb["compared_elements"], 1),
        "relative_change": _num(vb["relative_change"]),
        "max_tensor_relative_change": None if top is None else _num(top["relative_change"]),
        "max_tensor": None if top is None else top["name"],
        "changed_tensors_prev": vp.get("changed_tensors"),
        "changed_elements_prev": vp.get("changed_elements"),
        "relative_change_prev": None if not vp else _num(vp["relative_change"]),
        "checkpoint_nonfinite": audit["checkpoint_nonfinite"],
        "base_nonfinite": vb["reference_nonfinite"],
        "cast_base_nonfinite": vb["cast_reference_nonfinite"],
        "notes": "; ".join(audit.get("notes", [])),
        "excluded_keys": sum(len(e["keys"]) for e in audit.get("excluded", [])),
        "audit_json": audit_json,
    }


def audit_summary_job(
    audit_paths: Iterable[str | Path], out_parquet: str | Path, config: Any
) -> pa.Table:
    """Write ``results/audits/summary.parquet``: one row per audit, sorted by run and step."""
    paths = sorted(map(str, audit_paths))
    rows = [summary_row(json.loads(Path(p).read_text(encoding="utf-8")), p) for p in paths]
    rows.sort(key=lambda r: (r["run"], r["step"]))
    table = pa.Table.from_pylist(rows, schema=SUMMARY_SCHEMA)
    write_result_parquet(out_parquet, table, paths, config)
    print(f"{len(rows)} audits -> {out_parquet}")
    return table
