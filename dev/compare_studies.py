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

Two kinds of difference are expected between two runs of the same computation and are named
apart from the rest, so that a real difference is never lost among them (a file goes to the
worst kind any of its differences has: differs, then measured, then identity):

- *identity*: the hashes that name the code or config that wrote a file and so differ whenever
  the code did (``IDENTITY_KEYS``: the grader's and its guest observer's source hashes, a model
  directory's hash, which
  covers its identity receipt, the path of an evaluation's attempt, named by its identity, and
  the config an identity receipt records);
- *measured*: what the machine measured while grading (``MEASURED_KEYS``: a phase's duration,
  the per-test CPU limit derived from the controls' timed gold runs) and test failure messages
  that differ only in an object's memory address (``<function f at 0x7f...>``).

A JSON value inside a Parquet column (the stored grading reports of rollouts) is compared the
same way, row by row. An evaluation's attempt directory is named by its identity
(``attempts/<id>/``); where each side holds one, they are compared with each other.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import sys
from pathlib import Path
from typing import Any

ROOTS = ("data/frozen", "models", "runs", "results", "paper/tables", "logs/protocols")
SKIPPED_PARTS = ("benchmarks", "tensorboard")
SKIPPED_SUFFIXES = (".volatile.json", ".log", ".tsv")
NORMALISED_KEYS = frozenset({"provenance", "code", "frozen_at", "applied_at", "log_tail"})
TEX_PREFIX = "% editcredit-provenance: "
IDENTITY_KEYS = frozenset(
    {
        "grader_sha256",
        "observer_sha256",
        "directory_sha256",
        "model_sha256",
        "config_sha256",
        "journal",
    }
)
#: the config an identity receipt records (``identity.json``'s ``config``) and the hashes of
#: the files it covers (each file is compared on its own), and the header of an evaluation's
#: journal (its model's hash and settings, which name its attempt)
IDENTITY_PREFIXES = ("/config/", "/header/", "/files/")
#: the key at the head of an evaluation's journal: its header's hash, the attempt's name
IDENTITY_PATHS = frozenset({"/key"})
MEASURED_KEYS = frozenset(
    {"duration", "default_s", "wall_seconds", "started", "finished", "seconds"}
)
#: an evaluation's record of its executions (per run: attempts made, batches, budget spent),
#: which an interrupted and resumed job writes otherwise than an uninterrupted one
EXECUTION_RECORDS = frozenset({"runs.jsonl"})
#: a grading's measured times: its per-test CPU limits (derived from the controls' timed gold
#: runs), its phases' seconds, what a timed-out test had spent and which limit stopped it; and
#: the sentinel tests it plants, drawn fresh for each grading so that no patch can know them
MEASURED_PARTS = (
    "/sandbox/limits/",
    "/sandbox/timings/",
    "/sandbox/timeouts",
    "/sandbox/sentinel",
)
#: tables of what the machine measured (the jobs' seconds)
MEASURED_TABLES = frozenset({"paper/tables/costs.tex"})
#: lines of a table that name the code or config (the paper's commit and config hash macros)
IDENTITY_LINE = re.compile(r"\\@namedef\{ecn@(code\.commit|config\.hash)\}")
#: a protocol's sealing time, as a table quotes it
SEALED_AT = re.compile(r"frozen \d{4}-\d\d-\d\dT\d\d:\d\d:\d\d UTC")
MEMORY_ADDRESS = re.compile(r" at 0x[0-9a-f]+")
ATTEMPT_DIR = re.compile(r"/attempts/[0-9a-f]+/")
#: the kinds of a compared file, from the most to the least alike
KINDS = ("identical", "provenance", "identity", "measured", "differs")
MAX_PATHS = 200


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
    return paired_attempts(found)


def paired_attempts(found: dict[str, Path]) -> dict[str, Path]:
    """``found`` with a lone attempt directory's name replaced by ``*`` (``attempts/*/``), so
    that two studies' attempts of the same evaluation meet; where an evaluation holds several
    attempts their names stay."""
    attempts: dict[str, set[str]] = {}
    for rel in found:
        match = ATTEMPT_DIR.search(rel)
        if match:
            attempts.setdefault(rel[: match.start()], set()).add(match.group())
    renamed = {}
    for rel, path in found.items():
        match = ATTEMPT_DIR.search(rel)
        if match and len(attempts[rel[: match.start()]]) == 1:
            rel = f"{rel[: match.start()]}/attempts/*/{rel[match.end() :]}"
        renamed[rel] = path
    return renamed


def strip_keys(value: Any) -> Any:
    """``value`` without ``NORMALISED_KEYS`` at any depth."""
    if isinstance(value, dict):
        return {k: strip_keys(v) for k, v in value.items() if k not in NORMALISED_KEYS}
    if isinstance(value, list):
        return [strip_keys(v) for v in value]
    return value


def json_differences(a: Any, b: Any, path: str = "", out: list[str] | None = None) -> list[str]:
    """Every key path where two JSON values differ (at most ``MAX_PATHS``)."""
    out = [] if out is None else out
    if len(out) >= MAX_PATHS:
        return out
    if isinstance(a, dict) and isinstance(b, dict):
        for key in sorted(set(a) | set(b)):
            if key not in a or key not in b:
                out.append(f"{path}/{key} (one side only)")
            else:
                json_differences(a[key], b[key], f"{path}/{key}", out)
    elif isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            json_differences(x, y, f"{path}[{i}]", out)
    elif a != b:
        out.append(path or "/")
    return out


def difference_kind(path: str, a: Any = None, b: Any = None) -> str:
    """``identity``, ``measured`` or ``differs`` for one differing key path (module doc)."""
    last = re.sub(r"\[\d+\]$", "", path.rsplit("/", 1)[-1]).removesuffix(" (one side only)")
    if last in IDENTITY_KEYS or path in IDENTITY_PATHS or path.startswith(IDENTITY_PREFIXES):
        return "identity"
    if last in MEASURED_KEYS:
        return "measured"
    if any(part in path for part in MEASURED_PARTS):
        return "measured"
    if isinstance(a, str) and isinstance(b, str):
        if ATTEMPT_DIR.sub("/attempts/*/", a) == ATTEMPT_DIR.sub("/attempts/*/", b):
            return "identity"
        if MEMORY_ADDRESS.sub(" at 0x", a) == MEMORY_ADDRESS.sub(" at 0x", b):
            return "measured"
    return "differs"


def value_at(value: Any, path: str) -> Any:
    """The value at a key path of ``json_differences`` (None where there is none)."""
    for key, index in re.findall(r"/([^/\[]+)|\[(\d+)\]", path):
        try:
            value = value[int(index)] if index else value[key]
        except (KeyError, IndexError, TypeError):
            return None
    return value


def json_kind(a: Any, b: Any) -> tuple[str, str | None]:
    """The kind of the difference between two JSON values and the first path of that kind."""
    paths = json_differences(strip_keys(a), strip_keys(b))
    if not paths:
        return "provenance", None
    kinds = [difference_kind(p, value_at(a, p), value_at(b, p)) for p in paths]
    worst = max(kinds, key=KINDS.index)
    return worst, paths[kinds.index(worst)]


def parquet_difference(a: Path, b: Path) -> tuple[str, str | None]:
    """The kind of the difference between two tables (schema metadata aside) and the first
    column of that kind; a column of JSON text is compared value by value."""
    import pyarrow.parquet as pq

    ta, tb = pq.read_table(a), pq.read_table(b)
    ta, tb = ta.replace_schema_metadata(None), tb.replace_schema_metadata(None)
    if ta.schema != tb.schema:
        return "differs", f"schema ({ta.schema.names} vs {tb.schema.names})"
    found: tuple[str, str | None] = ("provenance", None)
    for name in ta.schema.names:
        if ta.column(name).equals(tb.column(name)):
            continue
        kind, where = json_column_kind(ta.column(name).to_pylist(), tb.column(name).to_pylist())
        if KINDS.index(kind) > KINDS.index(found[0]):
            found = (kind, f"column {name}" + (f" {where}" if where else ""))
    return found


def json_column_kind(a: list[Any], b: list[Any]) -> tuple[str, str | None]:
    """The worst kind of difference between two columns' rows (or two files' lines) where
    every differing row holds JSON text on both sides, and the row and key path of its first
    case; ``differs`` and no path where a differing row is not JSON."""
    found: tuple[str, str | None] = ("provenance", None)
    for row, (x, y) in enumerate(zip(a, b, strict=True)):
        if x == y:
            continue
        try:
            kind, where = json_kind(json.loads(x), json.loads(y))
        except (TypeError, ValueError):
            return "differs", None
        if KINDS.index(kind) > KINDS.index(found[0]):
            found = (kind, f"row {row} {where}")
    return found


def tex_body(path: Path) -> str:
    lines = path.read_text(encoding="utf-8").splitlines()
    return "\n".join(line for line in lines if not line.startswith(TEX_PREFIX))


def journal_lines(path: Path) -> list[str]:
    """A JSON-lines file's lines, an evaluation journal's attempts in the order of their slot
    (workers append them in the order they finish, which the machine's timing decides)."""
    lines = path.read_text().splitlines()

    def slot(line: str) -> tuple[str, int, str, int]:
        try:
            attempt = json.loads(line).get("attempt") or {}
        except (ValueError, AttributeError):
            attempt = {}
        return (
            str(attempt.get("instance_id", "")),
            int(attempt.get("sample", -1)),
            str(attempt.get("kind", "")),
            int(attempt.get("index", -1)),
        )

    return sorted(lines, key=slot)


def tex_kind(a: Path, b: Path) -> tuple[str, str | None]:
    """A table's kind of difference: its provenance line aside, lines that differ only in a
    protocol's sealing time are provenance, in the commit or config hash identity, and a table
    of measured seconds (``MEASURED_TABLES``) is measured."""
    la, lb = tex_body(a).splitlines(), tex_body(b).splitlines()
    if la == lb:
        return "provenance", None
    if any(a.as_posix().endswith(rel) for rel in MEASURED_TABLES):
        return "measured", "body"
    if len(la) != len(lb):
        return "differs", "body"
    worst = "provenance"
    for number, (x, y) in enumerate(zip(la, lb, strict=True), start=1):
        if x == y or SEALED_AT.sub("", x) == SEALED_AT.sub("", y):
            continue
        if not (IDENTITY_LINE.search(x) and IDENTITY_LINE.search(y)):
            return "differs", f"line {number}"
        worst = "identity"
    return worst, "body"


def compare_file(a: Path, b: Path) -> tuple[str, str | None]:
    """(one of ``KINDS``, the first key or column of that kind)."""
    if a.read_bytes() == b.read_bytes():
        return "identical", None
    suffix = a.suffix
    if suffix == ".json":
        try:
            ja, jb = json.loads(a.read_text()), json.loads(b.read_text())
        except ValueError:
            return "differs", "not JSON"
        return json_kind(ja, jb)
    if suffix == ".parquet":
        return parquet_difference(a, b)
    if a.name in EXECUTION_RECORDS:
        return "measured", "execution record"
    if suffix == ".jsonl":
        la, lb = journal_lines(a), journal_lines(b)
        if len(la) != len(lb):
            return "differs", f"lines ({len(la)} and {len(lb)})"
        return json_column_kind(la, lb)
    if suffix == ".tex":
        return tex_kind(a, b)
    return "differs", "bytes"


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()[:12]


def compare_studies(before: Path, after: Path) -> dict[str, Any]:
    fa, fb = study_files(before), study_files(after)
    report: dict[str, Any] = {
        "identical": 0,
        "provenance": [],
        "identity": [],
        "measured": [],
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
            report[kind].append(
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
        f"{len(report['provenance'])}; identity hashes only: {len(report['identity'])}; "
        f"measured times only: {len(report['measured'])}; differ: {len(report['differs'])}; "
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
