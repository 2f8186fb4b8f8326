"""The spec lives in the repository: every "METHOD §N" cited anywhere names a section of
docs/method.md, and the documents the README points at exist."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from checkout import source_files

REPO = Path(__file__).resolve().parents[1]

# "METHOD §4", "METHOD §4/§8", "METHOD §4 and §8", "METHOD.md §10": every number is a section.
METHOD_REF = re.compile(r"METHOD(?:\.md)?\s*§\s*(\d+)((?:\s*(?:/|,|and|or)\s*§?\s*\d+)*)")
# Loose forms that escape the check above and should be written "METHOD §N".
LOOSE_REF = re.compile(r"METHOD(?:\.md)?\s+(?:s\.|section)\s*\d+", re.IGNORECASE)
SCANNED = ["src", "rules", "scripts", "docs", "config", "paper", "tests", "benchmarks", "profiles"]
SCANNED_FILES = ["README.md", "Snakefile"]
SUFFIXES = {".py", ".smk", ".md", ".yaml", ".yml", ".tex", ".j2", ".rst", ".txt", ".sh", ""}


def method_sections(text: str) -> set[int]:
    """The numbered sections of docs/method.md ("## 6. Grading: ...")."""
    return {int(m) for m in re.findall(r"^## (\d+)\. ", text, flags=re.MULTILINE)}


def cited_sections(text: str) -> list[int]:
    """Every section number a text cites as METHOD §N (chains such as §4/§8 included)."""
    cited = []
    for match in METHOD_REF.finditer(text):
        cited.append(int(match.group(1)))
        cited.extend(int(n) for n in re.findall(r"\d+", match.group(2)))
    return cited


def scanned_files() -> list[Path]:
    """The sources scanned (never what a pipeline run left: generated tables, logs, results)."""
    files = [REPO / name for name in SCANNED_FILES]
    files += [REPO / rel for rel in source_files(SCANNED, REPO) if Path(rel).suffix in SUFFIXES]
    this_file = Path(__file__).resolve()  # its examples cite a missing section on purpose
    return [path for path in files if path.resolve() != this_file]


def test_the_spec_is_in_the_repository():
    for name in ("docs/method.md", "docs/design.md"):
        assert (REPO / name).is_file(), name
    readme = (REPO / "README.md").read_text()
    assert "docs/method.md" in readme and "docs/design.md" in readme
    assert "../shared/" not in readme


def test_every_method_reference_names_a_section():
    sections = method_sections((REPO / "docs/method.md").read_text())
    assert sections == set(range(1, max(sections) + 1))
    dangling, loose, total = [], [], 0
    for path in scanned_files():
        try:
            text = path.read_text()
        except UnicodeDecodeError:
            continue
        rel = path.relative_to(REPO)
        for number in cited_sections(text):
            total += 1
            if number not in sections:
                dangling.append(f"{rel}: METHOD §{number}")
        loose.extend(f"{rel}: {m.group(0)!r}" for m in LOOSE_REF.finditer(text))
    assert total > 50, "the scan found almost no references: is the pattern right?"
    assert not dangling, "references to sections docs/method.md lacks:\n" + "\n".join(dangling)
    assert not loose, "write these as 'METHOD §N':\n" + "\n".join(loose)


@pytest.mark.parametrize(
    "text, expected",
    [
        ("see METHOD §6.", [6]),
        ("(METHOD §4/§8)", [4, 8]),
        ("METHOD §4 and §8", [4, 8]),
        ("METHOD.md §10", [10]),
        ("docs/scale.md §6", []),
    ],
)
def test_cited_sections_reads_every_form(text, expected):
    assert cited_sections(text) == expected


def test_a_dangling_reference_is_caught():
    assert 13 not in method_sections((REPO / "docs/method.md").read_text())
    assert cited_sections("as METHOD §13 says") == [13]
