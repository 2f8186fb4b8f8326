"""The conformance report: JSON and a fixed-width text table, one line per project."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

from editcredit.conformance.compare import ProjectResult

COLUMNS = (
    ("project", 18),
    ("runner", 7),
    ("tests", 6),
    ("match", 6),
    ("mism", 5),
    ("clean", 11),
    ("gold", 11),
    ("bug", 11),
    ("tamper", 7),
    ("flips", 7),
    ("ok", 3),
)


def _cell(r: ProjectResult) -> list[str]:
    def verdict(v: str) -> str:
        return v or "-"

    return [
        f"{r.project} {r.version}".strip(),
        r.runner,
        str(r.tests),
        str(r.matches),
        str(r.mismatches),
        verdict(r.clean),
        verdict(r.gold),
        verdict(r.bug),
        "yes" if r.tampering else "no",
        f"{r.flips_reference}/{r.flips_grader}",
        "ok" if r.ok else "NO",
    ]


def text_table(results: list[ProjectResult]) -> str:
    """Header, one line per project (flips: reference/grader), then each project's error and
    first mismatches."""
    head = "  ".join(name.ljust(width) for name, width in COLUMNS).rstrip()
    lines = [head, "-" * len(head)]
    for r in results:
        lines.append(
            "  ".join(c.ljust(w) for c, (_, w) in zip(_cell(r), COLUMNS, strict=True)).rstrip()
        )
    notes = []
    for r in results:
        if r.error:
            notes.append(f"{r.project}: error: {r.error}")
        for d in r.details[:5]:
            notes.append(
                f"{r.project}: {d['run']}: {d['test']}: reference {d['reference']}, "
                f"grader {d['grader']}"
            )
        if r.mismatches > 5:
            notes.append(f"{r.project}: ... {r.mismatches - 5} more mismatches")
        for run, errors in r.collect_errors.items():
            notes += [f"{r.project}: {run}: grader collection error: {e}" for e in errors[:2]]
        for run, reason in r.reasons.items():
            if not r.ok and reason:
                notes.append(f"{r.project}: {run} verdict reason: {reason[:200]}")
    passed = sum(r.ok for r in results)
    lines.append(f"{passed}/{len(results)} projects conform")
    return "\n".join(lines + ([""] + notes if notes else [])) + "\n"


def report_json(results: list[ProjectResult]) -> str:
    data = {
        "projects": [r.to_json() for r in results],
        "conforming": sum(r.ok for r in results),
        "total": len(results),
    }
    return json.dumps(data, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def load_results(path: Path) -> list[ProjectResult]:
    """The projects of an earlier ``conformance.json`` (none when the file is absent)."""
    if not path.is_file():
        return []
    data = json.loads(path.read_text(encoding="utf-8"))
    names = {f.name for f in dataclasses.fields(ProjectResult)}
    return [ProjectResult(**{k: v for k, v in p.items() if k in names}) for p in data["projects"]]


def merge_results(
    earlier: list[ProjectResult], new: list[ProjectResult], order: list[str]
) -> list[ProjectResult]:
    """``earlier`` with the projects run again replaced by ``new``, in the pinned list's order
    (projects no longer pinned are dropped)."""
    by_name = {r.project: r for r in earlier}
    by_name.update({r.project: r for r in new})
    return [by_name[n] for n in order if n in by_name]
