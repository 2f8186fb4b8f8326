"""Build a frozen suite from its config: generate minibugs (single- or multi-bug) or import a
SWE-bench file."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from editcredit.data.freeze import freeze
from editcredit.sandbox.pool import SandboxPool
from editcredit.suites.minibugs import generate
from editcredit.suites.multibugs import PARAMETERS, generate_multibugs
from editcredit.suites.swebench_import import import_tasks

GENERATOR_KEYS = (
    "generator",
    "seed",
    "modules",
    "mutants_per_function",
    "timeout_s",
    "validation_timeout_s",
    "splits",
)
#: Recorded only for generator 'procedural' (so the other suites' manifests are unchanged).
PROCEDURAL_KEYS = ("pool_modules", "pool_functions")


def build_suite(
    suite: str,
    suite_cfg: dict[str, Any],
    sandbox_cfg: dict[str, Any],
    out_dir: str | Path,
    pinned_sha256: str = "",
) -> str:
    """Write data/frozen/{suite}/tasks.parquet + manifest.json; return the manifest SHA256."""
    keys = GENERATOR_KEYS + (PROCEDURAL_KEYS if suite_cfg["generator"] == "procedural" else ())
    generator = {k: suite_cfg[k] for k in keys if k in suite_cfg}
    if suite_cfg["generator"] == "multibugs":
        with SandboxPool(sandbox_cfg["backend"], sandbox_cfg, int(sandbox_cfg["workers"])) as pool:
            grade = lambda jobs: pool.grade_many(jobs, suite)  # noqa: E731
            tasks, rejected = generate_multibugs(suite_cfg, grade, suite=suite)
        generator["multi"] = dict(PARAMETERS)
        generator["rejected"] = dict(sorted(rejected.items()))
    elif suite_cfg["generator"] in ("minibugs", "procedural"):
        with SandboxPool(sandbox_cfg["backend"], sandbox_cfg, int(sandbox_cfg["workers"])) as pool:
            # hand-written pool tasks keep their ids' historic prefix (pinned manifests)
            family = suite if suite_cfg["generator"] == "procedural" else "minibugs"
            grade = lambda jobs: pool.grade_many(jobs, suite)  # noqa: E731
            tasks, rejected = generate(suite_cfg, grade, suite=family)
        generator["rejected"] = dict(sorted(rejected.items()))
    else:
        tasks = import_tasks(
            suite_cfg["source"],
            suite,
            suite_cfg["image_template"],
            float(suite_cfg["timeout_s"]),
        )
    digest = freeze(tasks, Path(out_dir), suite, generator, pinned_sha256)
    print(f"froze {len(tasks)} tasks of {suite}: manifest SHA256 {digest}")
    return digest
