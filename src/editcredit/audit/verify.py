"""``editcredit verify``: re-hash what the workflow froze and wrote, and trace every mismatch.

Four checks, each file hashed once (``HashCache``):

1. frozen suites: ``data/frozen/{suite}/tasks.parquet`` against its ``manifest.json``, and the
   manifest against the config pin ``suites.<suite>.manifest_sha256`` (the typed settings of
   the config, validated and filled by its schema);
2. identity receipts of ``models/base/*`` and ``runs/*/step_*`` (every file, none missing or extra;
   a file that retention removed, ``training.keep_checkpoints``, is missing by record: its
   ``runs/{run}/pruned/step_{N}.json`` holds the receipt's hash, which also stands in for it in
   the digest of a directory a result recorded);
3. provenance blocks of the results (``results/**/*.json`` and ``paper/tables/*.tex`` must carry
   one; ``results/**/*.parquet`` and ``runs/**/*.json`` are read when they do): each recorded
   input is re-hashed;
4. for each mismatch, the outputs downstream of it through the provenance graph, ending with the
   tables (``paper/tables/*.tex``) that would change, each with its chain back to the mismatch.

Beside the mismatches, ``drift`` lists what the hashes alone cannot vouch for: results and
receipts built from a dirty tree (grouped by commit, diff and untracked-files hashes), and
results whose recorded config hash differs from the current config's (the config at
``--config``, defaults filled by its schema: the hash every rule's script records). Drift is
reported, and fails ``verify`` only with ``--strict``: a config change that reruns nothing
(Snakemake decides by inputs and params) still leaves every earlier result's hash behind.
"""

from __future__ import annotations

import json
import os
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from editcredit.audit.drift import Drift, config_drift, current_config_hash, dirty_drift
from editcredit.audit.provenance_graph import ProvenanceGraph, chain, is_table
from editcredit.config import DEFAULT_SCHEMA, ConfigError, validate_config
from editcredit.io.hash_cache import HashCache
from editcredit.io.identity import RECEIPT, receipt_files, verify_identity
from editcredit.io.provenance import directory_digest, list_files, read_provenance
from editcredit.io.volatile import is_volatile
from editcredit.settings import Settings

__all__ = ["Drift", "Finding", "VerifyReport", "format_report", "verify_tree"]

MAX_SHOWN = 12


@dataclass
class Finding:
    """One changed (or unverifiable) path and why.

    ``kinds``: which checks saw it: ``frozen`` (manifest or config pin), ``identity`` (a model
    receipt), ``input`` (a result's recorded input hash), ``provenance`` (a result file without a
    readable block).
    """

    path: str
    kinds: list[str] = field(default_factory=list)
    details: list[str] = field(default_factory=list)

    @property
    def kind(self) -> str:
        return ",".join(self.kinds)


@dataclass
class VerifyReport:
    root: Path
    findings: list[Finding]
    graph: ProvenanceGraph
    counts: dict[str, int]
    notes: list[str]
    drift: list[Drift] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.findings

    @property
    def strict_ok(self) -> bool:
        """No mismatch and no drift."""
        return self.ok and not self.drift


def _short(digest: str | None) -> str:
    return "(missing)" if digest is None else digest[:12]


class _Verifier:
    def __init__(self, root: Path, config_path: Path | None, cache: HashCache) -> None:
        self.root = Path(os.path.abspath(root))
        self.config_path = config_path
        self.cache = cache
        self.findings: dict[str, Finding] = {}
        self.graph = ProvenanceGraph()
        self.counts: dict[str, int] = defaultdict(int)
        self.notes: list[str] = []
        self.codes: dict[str, Any] = {}  # node -> the code block of its provenance or receipt
        self.configs: dict[str, Any] = {}  # result node -> its recorded config hash
        self.removed: dict[Path, str] = {}  # files retention removed -> their recorded SHA256

    def node(self, path: str | Path) -> str:
        """Root-relative posix path of ``path`` (absolute when outside the root)."""
        p = Path(path)
        p = Path(os.path.normpath(p if p.is_absolute() else self.root / p))
        try:
            return p.relative_to(self.root).as_posix()
        except ValueError:
            return p.as_posix()

    def abs(self, node: str) -> Path:
        return self.root / node if not Path(node).is_absolute() else Path(node)

    def find(self, path: str | Path, kind: str, detail: str) -> None:
        node = self.node(path)
        finding = self.findings.setdefault(node, Finding(node))
        if kind not in finding.kinds:
            finding.kinds.append(kind)
        finding.details.append(detail)

    def digest(self, node: str) -> str | None:
        """SHA256 of a file or directory; a file that retention removed counts with the hash
        its record holds (so a directory that lost it keeps its recorded digest)."""
        p = Path(os.path.normpath(self.abs(node)))
        gone = {f: h for f, h in self.removed.items() if (f == p or p in f.parents)}
        gone = {f: h for f, h in gone.items() if not f.exists()}
        try:
            if not gone:
                return self.cache.path(p)
            if p in gone:
                return gone[p]
            entries = {f: self.cache.file(f) for f in list_files(p)} | gone
        except OSError:
            return None
        return directory_digest(
            (f.relative_to(p).as_posix(), h) for f, h in sorted(entries.items())
        )

    def was_pruned(self, path: Path, recorded: str | None) -> bool:
        """Whether ``path`` is missing because retention removed it (and recorded its hash)."""
        path = Path(os.path.normpath(path))
        return not path.exists() and recorded is not None and self.removed.get(path) == recorded

    # -- 1. frozen suites ----------------------------------------------------------------------
    def frozen(self) -> None:
        pins = self._pins()
        for suite_dir in sorted(p for p in (self.root / "data/frozen").glob("*") if p.is_dir()):
            self.counts["frozen suites"] += 1
            suite, manifest = suite_dir.name, suite_dir / "manifest.json"
            if not manifest.is_file():
                self.find(manifest, "frozen", "manifest.json is missing")
                continue
            pin = pins.get(suite)
            actual = self.digest(self.node(manifest))
            if not pin:
                self.notes.append(f"suite {suite}: no manifest_sha256 pinned in the config")
            elif actual != pin:
                self.find(
                    manifest,
                    "frozen",
                    f"SHA256 is {_short(actual)}, the config pins {_short(pin)} "
                    f"(suites.{suite}.manifest_sha256)",
                )
            try:
                recorded = json.loads(manifest.read_text(encoding="utf-8"))["tasks_parquet_sha256"]
            except (ValueError, KeyError, TypeError) as exc:
                self.find(manifest, "frozen", f"not a readable manifest ({exc!r})")
                continue
            tasks = suite_dir / "tasks.parquet"
            actual = self.digest(self.node(tasks))
            if actual != recorded:
                self.find(
                    tasks,
                    "frozen",
                    f"SHA256 is {_short(actual)}, {self.node(manifest)} records {_short(recorded)}",
                )

    def _pins(self) -> dict[str, str]:
        """Each suite's pin, ``suites.<suite>.manifest_sha256``, from the typed settings of the
        config (validated and filled by the schema beside it, else the package's, as the
        workflow reads it). A config that cannot be read stops verify; one that does not
        validate is a note, and no pin is checked."""
        path = self.config_path
        if path is None or not path.is_file():
            self.notes.append(f"config {path}: not found; manifest pins not checked")
            return {}
        try:
            cfg = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
        except yaml.YAMLError as exc:
            why = " ".join(str(exc).split())
            raise ConfigError(f"{path}: cannot read the suite pins: {why}") from None
        schema = path.parent / "schema.yaml"
        try:
            if not isinstance(cfg, dict):
                raise ConfigError(f"{path}: expected a mapping at the top level")
            validated = validate_config(
                cfg, schema if schema.is_file() else DEFAULT_SCHEMA, str(path)
            )
            settings = Settings.from_config(validated)
        except ConfigError as exc:
            self.notes.append(f"manifest pins not checked: {exc}")
            return {}
        return {name: suite.manifest_sha256 for name, suite in settings.suites.items()}

    # -- 2. identity receipts ------------------------------------------------------------------
    def identity_dirs(self) -> list[Path]:
        dirs = [p for p in (self.root / "models/base").glob("*") if p.is_dir()]
        dirs += [p for p in (self.root / "runs").glob("*/step_*") if p.is_dir()]
        return sorted(dirs)

    def identities(self, dirs: list[Path]) -> None:
        for d in dirs:
            self.counts["identity receipts"] += 1
            if not (d / RECEIPT).is_file():
                self.find(d, "identity", f"no {RECEIPT}")
                continue
            try:
                bad = verify_identity(d, self.cache.file)
                receipt = json.loads((d / RECEIPT).read_text(encoding="utf-8"))
                self.codes[self.node(d / RECEIPT)] = receipt.get("code")
            except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
                self.find(d / RECEIPT, "identity", f"unreadable receipt ({exc!r})")
                continue
            pruned = [r for r in bad if self.was_pruned(d / r, receipt["files"].get(r))]
            self.counts["files removed by retention"] += len(pruned)
            bad = [r for r in bad if r not in pruned]
            for rel in bad:
                where = self.node(d / RECEIPT)
                self.find(d / rel, "identity", f"differs from {where} (changed, missing or extra)")

    # -- 3. provenance blocks ------------------------------------------------------------------
    def result_files(self) -> list[tuple[Path, bool]]:
        """``(path, block required)`` of every file that carries (or must carry) a block."""

        def visible(p: Path) -> bool:  # a volatile sidecar is no result: it has no block
            return (
                p.is_file()
                and not is_volatile(p)
                and not any(s.startswith(".") for s in p.relative_to(self.root).parts)
            )

        r = self.root
        found = [(p, True) for p in (r / "results").rglob("*.json")]
        found += [(p, True) for p in (r / "paper/tables").glob("*.tex")]
        found += [(p, False) for p in (r / "results").rglob("*.parquet")]
        found += [(p, False) for p in (r / "runs").rglob("*.json") if p.name != RECEIPT]
        return sorted((p, req) for p, req in found if visible(p))

    def blocks(self, files: list[tuple[Path, bool]]) -> dict[str, dict[str, str]]:
        out: dict[str, dict[str, str]] = {}
        for path, required in files:
            try:
                block = read_provenance(path)
            except ValueError as exc:
                self.find(path, "provenance", str(exc))
                continue
            if block is None:
                if required:
                    self.find(path, "provenance", "result file without a provenance block")
                continue
            self.counts["result files"] += 1
            recorded = {self.node(k): v for k, v in block["inputs"].items()}
            out[self.node(path)] = recorded
            self.codes[self.node(path)] = block.get("code")
            self.configs[self.node(path)] = block.get("config_sha256")
            self.graph.add(self.node(path), recorded)
        return out

    def inputs(self, blocks: dict[str, dict[str, str]]) -> None:
        by_input: dict[str, list[tuple[str, str]]] = defaultdict(list)
        for result, recorded in blocks.items():
            for node, digest in recorded.items():
                by_input[node].append((result, digest))
        self.counts["distinct inputs"] = len(by_input)
        for node in sorted(by_input):
            actual = self.digest(node)
            stale = sorted((r, d) for r, d in by_input[node] if d != actual)
            if not stale:
                continue
            now = "is missing" if actual is None else f"SHA256 is {_short(actual)}"
            shown = ", ".join(f"{r} ({_short(d)})" for r, d in stale[:3])
            more = f" and {len(stale) - 3} more" if len(stale) > 3 else ""
            self.find(node, "input", f"{now}; recorded otherwise by {shown}{more}")

    # -- drift: dirty trees and other configs ---------------------------------------------------
    def drift(self) -> list[Drift]:
        out, unknown = dirty_drift(self.codes)
        if unknown:
            self.notes.append(f"{unknown} output(s) record no git checkout: their code is unknown")
        path = self.config_path
        if path is not None and path.is_file():
            try:
                current = current_config_hash(path)
            except ConfigError as exc:
                self.notes.append(f"config hashes not compared: {exc}")
            else:
                out += config_drift(self.configs, current, self.node(path))
        self.counts["drifted outputs"] = len({n for d in out for n in d.paths})
        return out

    def run(self) -> VerifyReport:
        from editcredit.storage.retention import PruneError, removed_files

        try:
            self.removed = removed_files(self.root)
        except PruneError as exc:
            self.find(exc.path or self.root, "provenance", str(exc))
        self.frozen()
        dirs = self.identity_dirs()
        files = self.result_files()
        blocks = self.blocks(files)
        wanted = {self.abs(n) for recorded in blocks.values() for n in recorded}
        wanted |= {f for d in dirs for f in receipt_files(d)}
        self.cache.prefetch(sorted(wanted))
        self.identities(dirs)
        self.inputs(blocks)
        drift = self.drift()
        self.counts["files hashed"] = self.cache.hashed
        findings = sorted(self.findings.values(), key=lambda f: f.path)
        return VerifyReport(self.root, findings, self.graph, dict(self.counts), self.notes, drift)


def verify_tree(
    root: str | Path = ".", config: str | Path | None = "config/config.yaml"
) -> VerifyReport:
    """Run every check under ``root``; ``config`` (relative to ``root``) holds the pins."""
    root = Path(root)
    cfg = (
        None if config is None else (Path(config) if Path(config).is_absolute() else root / config)
    )
    return _Verifier(root, cfg, HashCache()).run()


def _start(finding: Finding) -> str:
    """The node a finding changes: a frozen file stands for its whole suite directory."""
    if "frozen" in finding.kinds:
        return finding.path.rsplit("/", 1)[0]
    return finding.path


def _grouped(nodes: list[str]) -> list[str]:
    """Up to ``MAX_SHOWN`` lines; directories holding many of ``nodes`` collapse to one line."""
    if len(nodes) <= MAX_SHOWN:
        return nodes
    by_dir: dict[str, list[str]] = defaultdict(list)
    for n in nodes:
        by_dir[n.rsplit("/", 1)[0] if "/" in n else "."].append(n)
    lines = [
        (ns[0] if len(ns) == 1 else f"{d}/ ({len(ns)} files)") for d, ns in sorted(by_dir.items())
    ]
    if len(lines) > MAX_SHOWN:
        lines = lines[:MAX_SHOWN] + [f"... and {len(lines) - MAX_SHOWN} more"]
    return lines


def format_finding(report: VerifyReport, finding: Finding) -> list[str]:
    lines = [f"MISMATCH [{finding.kind}] {finding.path}"]
    lines += [f"  {d}" for d in finding.details]
    start = _start(finding)
    reached = report.graph.downstream(start)
    if not reached:
        lines.append("  affected outputs: none recorded")
        return lines
    lines.append(f"  affected outputs ({len(reached)}), by distance:")
    for depth in sorted({d for _, d in reached.values()}):
        nodes = sorted(n for n, (_, d) in reached.items() if d == depth)
        lines += [f"    {depth}  {line}" for line in _grouped(nodes)]
    tables = sorted(n for n in reached if is_table(n))
    lines.append(f"  tables that would change ({len(tables)}):")
    lines += [f"    {'  <-  '.join(chain(reached, t))}" for t in tables] or ["    (none)"]
    return lines


def format_drift(drift: Drift) -> list[str]:
    lines = [f"DRIFT [{drift.kind}] {len(drift.paths)} output(s) {drift.what}: {drift.detail}"]
    return lines + [f"  {line}" for line in _grouped(drift.paths)]


def format_report(report: VerifyReport) -> str:
    checked = ", ".join(f"{k}: {v}" for k, v in report.counts.items())
    head = "clean" if report.ok else f"{len(report.findings)} mismatch(es)"
    if report.drift:
        head += f", {len(report.drift)} drift group(s)"
    lines = [f"editcredit verify {report.root}: {head} (checked {checked})"]
    lines += [f"note: {n}" for n in report.notes]
    for finding in report.findings:
        lines += format_finding(report, finding)
    for drift in report.drift:
        lines += format_drift(drift)
    return "\n".join(lines) + "\n"


def report_json(report: VerifyReport) -> dict[str, Any]:
    """A machine-readable form: each finding with its affected outputs and tables."""
    out = []
    for f in report.findings:
        reached = report.graph.downstream(_start(f))
        out.append(
            {
                "path": f.path,
                "kinds": f.kinds,
                "details": f.details,
                "affected": sorted(reached),
                "tables": {t: chain(reached, t) for t in sorted(reached) if is_table(t)},
            }
        )
    drift = [{"kind": d.kind, "detail": d.detail, "paths": d.paths} for d in report.drift]
    return {
        "ok": report.ok,
        "strict_ok": report.strict_ok,
        "counts": report.counts,
        "notes": report.notes,
        "findings": out,
        "drift": drift,
    }
