"""Compare two finished studies file by file: the same bytes, the same but for provenance, or not.

    python dev/compare_studies.py BEFORE AFTER [--out report.json]

BEFORE and AFTER are checkouts where the default pipeline ran. Every file under the study's
result roots (``ROOTS``) is compared. A file is *identical* when its bytes are; otherwise it is
*equal but for provenance* when it is the same after removing what names the code that wrote it
or the moment it ran (``NORMALISED_KEYS`` in JSON, the Parquet schema metadata, the first
``% editcredit-provenance:`` line of a LaTeX table); otherwise it *differs*, and the report names
the first keys or columns that do. Files a rerun never reproduces are left out (``SKIPPED``:
volatile sidecars, Snakemake's benchmark files, logs). Exit status 1 when anything differs or
is present on one side only.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from pathlib import Path
from typing import Any

ROOTS = ("data/frozen", "models", "runs", "results", "paper/tables", "logs/protocols")
SKIPPED_PARTS = ("benchmarks",)
SKIPPED_SUFFIXES = (".volatile.json", ".log", ".tsv")
NORMALISED_KEYS = frozenset({"provenance", "code", "frozen_at", "applied_at", "log_tail"})
TEX_PREFIX = "% editcredit-provenance: "


def study_files(root: Path) -> dict[str, Path]:
    """Relative path -> file, for every compared file of the study at ``root``."""
    found: dict[str, Path] = {}
    for top in ROOTS:
        base = root / top
        if not base.is_dir():
            continue
        for path in base.rglob("*"):
            rel = path.relative_to(root).as_posix()
            if not path.is_file() or rel.endswith(SKIPPED_SUFFIXES):
                continue
            if any(part in SKIPPED_PARTS for part in Path(rel).parts):
                continue
            found[rel] = path
    return found


def strip_keys(value: Any) -> Any:
    """``value`` without ``NORMALISED_KEYS`` at any depth."""
    if isinstance(value, dict):
        return {k: strip_keys(v) for k, v in value.items() if k not in NORMALISED_KEYS}
    if isinstance(value, list):
        return [strip_keys(v) for v in value]
    return value


def json_difference(a: Any, b: Any, path: str = "") -> str | None:
    """The first key path where two JSON values differ, or None."""
    if isinstance(a, dict) and isinstance(b, dict):
        for key in sorted(set(a) | set(b)):
            if key not in a or key not in b:
                return f"{path}/{key} (one side only)"
            found = json_difference(a[key], b[key], f"{path}/{key}")
            if found:
                return found
        return None
    if isinstance(a, list) and isinstance(b, list):
        if len(a) != len(b):
            return f"{path} (lengths {len(a)} and {len(b)})"
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            found = json_difference(x, y, f"{path}[{i}]")
            if found:
                return found
        return None
    return None if a == b else (path or "/")


def parquet_difference(a: Path, b: Path) -> str | None:
    """The first column whose values differ (schema metadata aside), or None."""
    import pyarrow.parquet as pq

    ta, tb = pq.read_table(a), pq.read_table(b)
    ta, tb = ta.replace_schema_metadata(None), tb.replace_schema_metadata(None)
    if ta.schema != tb.schema:
        return f"schema ({ta.schema.names} vs {tb.schema.names})"
    for name in ta.schema.names:
        if not ta.column(name).equals(tb.column(name)):
            return f"column {name}"
    return None


def tex_body(path: Path) -> str:
    lines = path.read_text(encoding="utf-8").splitlines()
    return "\n".join(line for line in lines if not line.startswith(TEX_PREFIX))


def compare_file(a: Path, b: Path) -> tuple[str, str | None]:
    """(``identical`` | ``provenance`` | ``differs``, what differs)."""
    if a.read_bytes() == b.read_bytes():
        return "identical", None
    suffix = a.suffix
    if suffix == ".json":
        try:
            ja, jb = json.loads(a.read_text()), json.loads(b.read_text())
        except ValueError:
            return "differs", "not JSON"
        where = json_difference(strip_keys(ja), strip_keys(jb))
        return ("provenance", None) if where is None else ("differs", where)
    if suffix == ".parquet":
        where = parquet_difference(a, b)
        return ("provenance", None) if where is None else ("differs", where)
    if suffix == ".tex":
        return ("provenance", None) if tex_body(a) == tex_body(b) else ("differs", "body")
    return "differs", "bytes"


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()[:12]


def compare_studies(before: Path, after: Path) -> dict[str, Any]:
    fa, fb = study_files(before), study_files(after)
    report: dict[str, Any] = {
        "identical": 0,
        "provenance": [],
        "differs": [],
        "only_before": sorted(set(fa) - set(fb)),
        "only_after": sorted(set(fb) - set(fa)),
    }
    for rel in sorted(set(fa) & set(fb)):
        kind, where = compare_file(fa[rel], fb[rel])
        if kind == "identical":
            report["identical"] += 1
        elif kind == "provenance":
            report["provenance"].append(rel)
        else:
            report["differs"].append(
                {"file": rel, "where": where, "before": digest(fa[rel]), "after": digest(fb[rel])}
            )
    return report


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("before", type=Path)
    parser.add_argument("after", type=Path)
    parser.add_argument("--out", type=Path)
    args = parser.parse_args(argv)
    report = compare_studies(args.before, args.after)
    if args.out:
        args.out.write_text(json.dumps(report, indent=2) + "\n")
    print(
        f"identical bytes: {report['identical']}; equal but for provenance: "
        f"{len(report['provenance'])}; differ: {len(report['differs'])}; "
        f"only before: {len(report['only_before'])}; only after: {len(report['only_after'])}"
    )
    for item in report["differs"][:40]:
        print(f"  differs: {item['file']} at {item['where']}")
    for rel in report["only_before"][:20]:
        print(f"  only before: {rel}")
    for rel in report["only_after"][:20]:
        print(f"  only after: {rel}")
    bad = report["differs"] or report["only_before"] or report["only_after"]
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
