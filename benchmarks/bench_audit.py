"""Throughput and memory of ``audit_checkpoint`` against the ``sha256sum`` anchor.

Usage: ``python benchmarks/bench_audit.py [--size-gb 1.0] [--repeat 1] [--keep]``

Creates a synthetic F32 checkpoint of about ``--size-gb`` GB and its base (a slightly perturbed
copy) under ``benchmarks/out/bench_data``, reads both once to warm the page cache, then times
``sha256sum ckpt base`` and the audit (in a child process that runs only the audit, so its
peak-RSS increase is the audit's own). GB/s counts the bytes of both files for both. Figures go
to ``benchmarks/out/audit.json``.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import platform
import resource
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
from safetensors.numpy import save_file

HERE = Path(__file__).resolve().parent
OUT = HERE / "out"
sys.path.insert(0, str(HERE.parent / "src"))

COLS = 4096


def _vm_kib(field: str) -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss


def make_checkpoints(root: Path, size_gb: float, seed: int = 0) -> tuple[Path, Path]:
    """A transformer-like F32 layout: per layer two (2048, 4096) matrices and three vectors."""
    rng = np.random.default_rng(seed)
    layer_bytes = (2 * 2048 * COLS + 3 * COLS) * 4
    n_layers = max(1, round(size_gb * 1e9 / layer_bytes))
    ckpt, base = {}, {}
    for i in range(n_layers):
        for name, shape in (("q", (2048, COLS)), ("mlp", (2048, COLS))):
            ckpt[f"layers.{i}.{name}.weight"] = rng.standard_normal(shape, dtype=np.float32)
        for name in ("q.bias", "norm.weight", "norm.bias"):
            ckpt[f"layers.{i}.{name}"] = rng.standard_normal(COLS, dtype=np.float32)
    for key, value in ckpt.items():  # base: every element perturbed by ~1e-3
        base[key] = value + np.float32(1e-3) * rng.standard_normal(value.shape, dtype=np.float32)
    paths = []
    for label, tensors in (("ckpt", ckpt), ("base", base)):
        (root / label).mkdir(parents=True, exist_ok=True)
        save_file(tensors, str(root / label / "model.safetensors"))
        paths.append(root / label)
        tensors.clear()
    return paths[0], paths[1]


def warm(paths: list[Path]) -> None:
    buf = bytearray(8 << 20)
    for p in paths:
        with open(p, "rb", buffering=0) as fh:
            while fh.readinto(buf):
                pass


def _cpu(who: int) -> float:
    use = resource.getrusage(who)
    return use.ru_utime + use.ru_stime


def time_sha256sum(paths: list[Path]) -> tuple[float, float, dict[str, str]]:
    """Wall and CPU seconds of ``sha256sum`` over ``paths``, and its digests."""
    cpu0, t0 = _cpu(resource.RUSAGE_CHILDREN), time.perf_counter()
    res = subprocess.run(["sha256sum", *map(str, paths)], check=True, capture_output=True)
    seconds, cpu = time.perf_counter() - t0, _cpu(resource.RUSAGE_CHILDREN) - cpu0
    digests = dict(reversed(line.split(maxsplit=1)) for line in res.stdout.decode().splitlines())
    return seconds, cpu, digests


def time_hashlib(paths: list[Path]) -> float:
    """Python hashlib (OpenSSL) over both files, one thread, 4 MiB reads: a second anchor."""
    buf = bytearray(4 << 20)
    view = memoryview(buf)
    t0 = time.perf_counter()
    for p in paths:
        h = hashlib.sha256()
        with open(p, "rb", buffering=0) as fh:
            while n := fh.readinto(buf):
                h.update(view[:n])
        h.hexdigest()
    return time.perf_counter() - t0


def child(ckpt: str, base: str) -> None:
    """Run only the audit; print seconds and the peak-RSS increase as JSON."""
    from editcredit.audit.param_audit import audit_checkpoint

    hwm0, rss0 = _vm_kib("VmHWM"), _vm_kib("VmRSS")
    cpu0, t0 = _cpu(resource.RUSAGE_SELF), time.perf_counter()
    rep = audit_checkpoint(ckpt, base)
    seconds, cpu = time.perf_counter() - t0, _cpu(resource.RUSAGE_SELF) - cpu0
    hwm1 = _vm_kib("VmHWM")
    out = {
        "seconds": seconds,
        "cpu_seconds": cpu,
        "bytes_read": rep.bytes_read,
        "rss_before_kib": rss0,
        "hwm_before_kib": hwm0,
        "hwm_after_kib": hwm1,
        "peak_rss_increase_bytes": (hwm1 - hwm0) * 1024,
        "peak_rss_bytes": hwm1 * 1024,
        "ok": rep.ok,
        "failures": list(rep.failures),
        "changed_tensors": rep.vs_base.changed_tensors,
        "changed_elements": rep.vs_base.changed_elements,
        "file_sha256": {f.path: f.sha256 for f in rep.files},
    }
    print(json.dumps(out))


def run_child(ckpt: Path, base: Path) -> dict:
    cmd = [sys.executable, __file__, "--child", str(ckpt), str(base)]
    res = subprocess.run(cmd, check=True, capture_output=True, text=True)
    return json.loads(res.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--size-gb", type=float, default=1.0)
    ap.add_argument("--repeat", type=int, default=1, help="timed runs of each (median kept)")
    ap.add_argument("--keep", action="store_true", help="keep the synthetic checkpoints")
    ap.add_argument("--child", nargs=2, metavar=("CKPT", "BASE"), help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        child(*args.child)
        return
    data = OUT / "bench_data"
    shutil.rmtree(data, ignore_errors=True)
    t0 = time.perf_counter()
    ckpt, base = make_checkpoints(data, args.size_gb)
    files = [ckpt / "model.safetensors", base / "model.safetensors"]
    total = sum(p.stat().st_size for p in files)
    print(f"created {total / 1e9:.3f} GB in {time.perf_counter() - t0:.1f} s", flush=True)
    try:
        warm(files)
        load_before = os.getloadavg()[0]
        sha_s, sha_cpu, audit_runs, hashlib_s = [], [], [], []
        for _ in range(args.repeat):
            seconds, cpu, digests = time_sha256sum(files)
            sha_s.append(seconds)
            sha_cpu.append(cpu)
            audit_runs.append(run_child(ckpt, base))
            hashlib_s.append(time_hashlib(files))
        audit = sorted(audit_runs, key=lambda r: r["seconds"])[len(audit_runs) // 2]
        assert audit["file_sha256"]["model.safetensors"] == digests[str(files[0])]
        sha_med, audit_s = statistics.median(sha_s), audit["seconds"]
        ckpt_bytes = files[0].stat().st_size
        figures = {
            "checkpoint_bytes": ckpt_bytes,
            "bytes_both_files": total,
            "sha256sum_seconds": sha_med,
            "sha256sum_GBps": total / sha_med / 1e9,
            "sha256sum_cpu_seconds": statistics.median(sha_cpu),
            "audit_seconds": audit_s,
            "audit_GBps": total / audit_s / 1e9,
            "audit_cpu_seconds": audit["cpu_seconds"],
            "audit_to_sha256sum_ratio": sha_med / audit_s,
            "ratio_goal": 0.8,
            "python_hashlib_GBps": total / statistics.median(hashlib_s) / 1e9,
            "audit_peak_rss_increase_bytes": audit["peak_rss_increase_bytes"],
            "audit_peak_rss_increase_vs_checkpoint": audit["peak_rss_increase_bytes"] / ckpt_bytes,
            "audit_process_peak_rss_bytes": audit["peak_rss_bytes"],
            "audit_bytes_read": audit["bytes_read"],
            "audit_ok": audit["ok"],
            "audit_changed_tensors": audit["changed_tensors"],
            "audit_changed_elements": audit["changed_elements"],
            "repeat": args.repeat,
            "sha256sum_runs_seconds": sha_s,
            "audit_runs_seconds": [r["seconds"] for r in audit_runs],
            "cpu_count": os.cpu_count(),
            "load_average_1min_before": load_before,
            "python": platform.python_version(),
            "numpy": np.__version__,
            "page_cache": "warm (files read once before timing; dropping caches not possible)",
        }
    finally:
        if not args.keep:
            shutil.rmtree(data, ignore_errors=True)
    OUT.mkdir(parents=True, exist_ok=True)
    (OUT / "audit.json").write_text(json.dumps(figures, indent=2) + "\n")
    print(json.dumps(figures, indent=2))


if __name__ == "__main__":
    main()
