"""Build a frozen suite from its config: generate minibugs or import a SWE-bench file."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from editcredit.data.freeze import freeze
from editcredit.data.minibugs.generate import generate
from editcredit.data.swebench_import import import_tasks
from editcredit.sandbox.pool import SandboxPool

GENERATOR_KEYS = (
    "generator",
    "seed",
    "modules",
    "mutants_per_function",
    "timeout_s",
    "validation_timeout_s",
    "splits",
)


def build_suite(
    suite: str,
    suite_cfg: dict[str, Any],
    sandbox_cfg: dict[str, Any],
    out_dir: str | Path,
    pinned_sha256: str = "",
) -> str:
    """Write data/frozen/{suite}/tasks.parquet + manifest.json; return the manifest SHA256."""
    generator = {k: suite_cfg[k] for k in GENERATOR_KEYS if k in suite_cfg}
    if suite_cfg["generator"] == "minibugs":
        with SandboxPool(sandbox_cfg["backend"], sandbox_cfg, int(sandbox_cfg["workers"])) as pool:
            tasks, rejected = generate(suite_cfg, lambda jobs: pool.grade_many(jobs, suite))
        generator["rejected"] = dict(sorted(rejected.items()))
    else:
        tasks = import_tasks(
            suite_cfg["source"],
            suite,
            suite_cfg.get("image_template", ""),
            float(suite_cfg["timeout_s"]),
        )
    digest = freeze(tasks, Path(out_dir), suite, generator, pinned_sha256)
    print(f"froze {len(tasks)} tasks of {suite}: manifest SHA256 {digest}")
    return digest
