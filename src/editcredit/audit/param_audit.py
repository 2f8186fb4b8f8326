"""Parameter audit of a checkpoint against its base and previous checkpoint (METHOD §10).

One pass over the data: each checkpoint file is read sequentially in bounded windows; every
window is fed to the file's SHA256 (one thread), its tensor pieces to per-tensor SHA256s
(another thread) and, on the calling thread, compared with the matching reference bytes read
with ``pread``. Memory is bounded by a few windows, not by the tensor or file size.
"""

from __future__ import annotations

import fnmatch
import hashlib
import os
from collections.abc import Sequence
from concurrent.futures import Future
from dataclasses import dataclass, field
from pathlib import Path

from editcredit.audit.audit_report import (
    AuditReport,
    Comparison,
    DtypeDifference,
    Exclusion,
    FileDigest,
    ShapeMismatch,
    TensorDelta,
    TensorDigest,
)
from editcredit.audit.tensor_compare import (
    DeltaAccumulator,
    Segment,
    Workspace,
    relative_change,
)
from editcredit.io.hashing import CHUNK_BYTES, Digest, OrderedHasher
from editcredit.io.safetensors_reader import (
    Checkpoint,
    SafetensorsFile,
    TensorInfo,
    pread_into,
)

__all__ = ["audit_checkpoint", "EQUALS_BASE", "exclusions"]

EQUALS_BASE = "checkpoint equals its base: no tensor changed"
N_BUFFERS = 3
COMPUTE_BYTES = 1024 * 1024  # comparison slice: keeps float64 temporaries cache-sized


@dataclass
class _Plan:
    """Key/shape/dtype bookkeeping and running accumulators against one reference."""

    ref: Checkpoint
    missing: tuple[str, ...]
    unexpected: tuple[str, ...]
    shapes: tuple[ShapeMismatch, ...]
    dtypes: tuple[DtypeDifference, ...]
    accs: dict[str, DeltaAccumulator]
    buf: bytearray = field(default_factory=bytearray)

    @classmethod
    def build(cls, ckpt: Checkpoint, ref: Checkpoint, excluded: frozenset[str]) -> _Plan:
        mine = {n: t for n, t in ckpt.tensors.items() if n not in excluded}
        theirs = {n: t for n, t in ref.tensors.items() if n not in excluded}
        common = [n for n in mine if n in theirs]
        shapes = tuple(
            ShapeMismatch(n, mine[n].shape, theirs[n].shape)
            for n in common
            if mine[n].shape != theirs[n].shape
        )
        bad = {s.name for s in shapes}
        return cls(
            ref,
            missing=tuple(sorted(set(theirs) - set(mine))),
            unexpected=tuple(sorted(set(mine) - set(theirs))),
            shapes=shapes,
            dtypes=tuple(
                DtypeDifference(n, mine[n].dtype, theirs[n].dtype)
                for n in common
                if mine[n].dtype != theirs[n].dtype
            ),
            accs={n: DeltaAccumulator(theirs[n].dtype) for n in common if n not in bad},
        )

    def comparison(self, ckpt: Checkpoint) -> Comparison:
        deltas = tuple(
            TensorDelta(
                n,
                ckpt.tensors[n].numel,
                a.changed,
                a.relative_change,
                a.ref_nonfinite,
                a.cast_nonfinite,
            )
            for n, a in self.accs.items()
        )
        diff_sq = sum(a.diff_sq for a in self.accs.values())
        ref_sq = sum(a.ref_sq for a in self.accs.values())
        return Comparison(
            reference=str(self.ref.root),
            missing_keys=self.missing,
            unexpected_keys=self.unexpected,
            shape_mismatches=self.shapes,
            dtype_differences=self.dtypes,
            compared_tensors=len(deltas),
            compared_elements=sum(d.numel for d in deltas),
            changed_tensors=sum(1 for d in deltas if d.changed_elements),
            changed_elements=sum(d.changed_elements for d in deltas),
            reference_nonfinite=sum(d.reference_nonfinite for d in deltas),
            cast_reference_nonfinite=sum(d.cast_reference_nonfinite for d in deltas),
            relative_change=relative_change(diff_sq, ref_sq),
            tensors=deltas,
        )


def _windows(shard: SafetensorsFile, chunk: int) -> list[tuple[int, int]]:
    """Split the file into reads of at most ``chunk`` bytes that never split an element."""
    infos = list(shard.tensors.values())
    out, pos, k = [], 0, 0
    while pos < shard.file_size:
        end = min(pos + chunk, shard.file_size)
        while k < len(infos) and infos[k].end <= end:
            k += 1
        if k < len(infos) and infos[k].begin < end:  # ``end`` falls inside tensor k
            t = infos[k]
            start = max(pos, t.begin)
            end = start + (end - start) // t.itemsize * t.itemsize
            if end == pos:
                end = pos + t.itemsize
        out.append((pos, end))
        pos = end
    return out


class _Scanner:
    """Reads every checkpoint shard once, feeding hashes and comparisons from the same bytes."""

    def __init__(self, plans: list[_Plan], chunk: int, fhash: OrderedHasher, thash: OrderedHasher):
        self.plans, self.chunk, self.fhash, self.thash = plans, chunk, fhash, thash
        self.bufs = [bytearray(chunk) for _ in range(N_BUFFERS)]
        self.tensor_sha: dict[str, Future[str]] = {}
        self.file_sha: dict[Path, Future[str]] = {}
        self.nonfinite: dict[str, int] = {}
        self.bytes_read = 0
        self._fds: dict[Path, int] = {}
        self._ws = Workspace()

    def close(self) -> None:
        for fd in self._fds.values():
            os.close(fd)

    def scan(self, shard: SafetensorsFile) -> None:
        infos = list(shard.tensors.values())
        digest = hashlib.sha256()
        running: dict[str, Digest] = {}  # tensor name -> its digest so far
        pending: list[list[Future[None]]] = [[] for _ in self.bufs]
        first = 0
        fd = os.open(shard.path, os.O_RDONLY)
        try:
            for i, (w0, w1) in enumerate(_windows(shard, self.chunk)):
                slot = i % len(self.bufs)
                for fut in pending[slot]:
                    fut.result()
                view = memoryview(self.bufs[slot])[: w1 - w0]
                pread_into(fd, view, w0, shard.path)
                futs: list[Future[None]] = [self.fhash.update(digest, view)]
                j = first
                while j < len(infos) and infos[j].begin < w1:
                    t = infos[j]
                    s, e = max(t.begin, w0), min(t.end, w1)
                    if s < e:
                        sha = running.setdefault(t.name, hashlib.sha256())
                        futs.append(self.thash.update(sha, view[s - w0 : e - w0]))
                        self._compare(t, view[s - w0 : e - w0], (s - t.begin) // t.itemsize)
                    if t.end <= w1:
                        self._finish(t, running)
                        first = j + 1
                    j += 1
                pending[slot] = futs
            for t in infos[first:]:  # zero-size tensors at the very end of the file
                self._finish(t, running)
        finally:
            for futs in pending:  # buffers must outlive their hash updates
                for fut in futs:
                    fut.result()
            os.close(fd)
        self.file_sha[shard.path] = self.fhash.hexdigest(digest)
        self.bytes_read += shard.file_size

    def _finish(self, t: TensorInfo, running: dict[str, Digest]) -> None:
        sha = running.pop(t.name, None) or hashlib.sha256()
        self.tensor_sha[t.name] = self.thash.hexdigest(sha)
        self.nonfinite.setdefault(t.name, 0)

    def _compare(self, t: TensorInfo, view: memoryview, first_elem: int) -> None:
        step = max(COMPUTE_BYTES // t.itemsize, 1) * t.itemsize
        for off in range(0, len(view), step):
            part = view[off : off + step]
            seg = Segment.from_bytes(part, t.dtype, self._ws)
            elem0, n = first_elem + off // t.itemsize, len(part) // t.itemsize
            for plan in self.plans:
                acc = plan.accs.get(t.name)
                if acc is not None:
                    acc.add(seg, self._read_ref(plan, plan.ref.tensors[t.name], elem0, n), self._ws)
            self.nonfinite[t.name] = self.nonfinite.get(t.name, 0) + seg.nonfinite()

    def _read_ref(self, plan: _Plan, info: TensorInfo, elem0: int, n: int) -> memoryview:
        size = n * info.itemsize
        if len(plan.buf) < size:
            plan.buf = bytearray(size)  # replaced, never resized: numpy views may remain
        fd = self._fds.get(info.path)
        if fd is None:
            fd = self._fds[info.path] = os.open(info.path, os.O_RDONLY)
        view = memoryview(plan.buf)[:size]
        pread_into(fd, view, info.begin + elem0 * info.itemsize, info.path)
        self.bytes_read += size
        return view


def _failures(
    nonfinite: dict[str, int],
    vs_base: Comparison,
    vs_prev: Comparison | None,
    require_change: bool,
) -> tuple[str, ...]:
    out: list[str] = []
    if vs_base.changed_elements == 0 and require_change:
        out.append(EQUALS_BASE)
    bad = [n for n, c in nonfinite.items() if c]
    if bad:
        shown = ", ".join(bad[:20]) + (f" and {len(bad) - 20} more" if len(bad) > 20 else "")
        out.append(f"non-finite values in checkpoint: {sum(nonfinite.values())} in {shown}")
    for label, comp in (("base", vs_base), ("previous checkpoint", vs_prev)):
        if comp is None:
            continue
        if comp.missing_keys:
            out.append(f"keys missing vs {label}: {', '.join(comp.missing_keys)}")
        for m in comp.shape_mismatches:
            out.append(
                f"shape mismatch vs {label}: {m.name} is {list(m.checkpoint_shape)}, "
                f"{label} has {list(m.reference_shape)}"
            )
    return tuple(out)


def exclusions(declared: Sequence[tuple[str, str]], names: Sequence[str]) -> tuple[Exclusion, ...]:
    """The ``(pattern, reason)`` declarations applied to tensor ``names``: each name goes to the
    first pattern that matches it (``fnmatch.fnmatchcase``), in declaration order."""
    taken: dict[str, list[str]] = {pattern: [] for pattern, _ in declared}
    for name in sorted(set(names)):
        for pattern, _ in declared:
            if fnmatch.fnmatchcase(name, pattern):
                taken[pattern].append(name)
                break
    return tuple(Exclusion(p, reason, tuple(taken[p])) for p, reason in declared)


def audit_checkpoint(
    ckpt_dir: str | os.PathLike[str],
    base_dir: str | os.PathLike[str],
    previous_dir: str | os.PathLike[str] | None = None,
    *,
    chunk_bytes: int = CHUNK_BYTES,
    require_change: bool = True,
    exclude: Sequence[tuple[str, str]] = (),
) -> AuditReport:
    """Audit ``ckpt_dir`` against ``base_dir`` (and ``previous_dir``); see METHOD §10.

    Each argument is a safetensors file or a directory of shards. Malformed files raise
    ``SafetensorsError``; audit findings go to ``AuditReport.failures``. A checkpoint equal to
    its base fails unless ``require_change`` is false (then it is a note: checkpoints before the
    endpoint may legitimately not have moved yet). ``exclude`` holds declared ``(pattern,
    reason)`` pairs: the tensors they match, on either side, are left out of the comparisons
    (not missing, unexpected, mismatched or compared) and listed in ``AuditReport.excluded``;
    the checkpoint's own non-finite check still covers every tensor.
    """
    if chunk_bytes < 8 or chunk_bytes % 8:
        raise ValueError("chunk_bytes must be a positive multiple of 8")
    ckpt = Checkpoint(ckpt_dir)
    base = Checkpoint(base_dir)
    prev = None if previous_dir is None else Checkpoint(previous_dir)
    names = [n for c in (ckpt, base, prev) if c is not None for n in c.tensors]
    excluded = exclusions(list(exclude), names)
    skip = frozenset(k for e in excluded for k in e.keys)
    base_plan = _Plan.build(ckpt, base, skip)
    prev_plan = None if prev is None else _Plan.build(ckpt, prev, skip)
    plans = [p for p in (base_plan, prev_plan) if p is not None]
    root = ckpt.root if ckpt.root.is_dir() else ckpt.root.parent
    shard_paths = {s.path for s in ckpt.files}
    others = [] if not ckpt.root.is_dir() else sorted(p for p in root.rglob("*") if p.is_file())
    with OrderedHasher("audit-file-sha") as fhash, OrderedHasher("audit-tensor-sha") as thash:
        scanner = _Scanner(plans, chunk_bytes, fhash, thash)
        try:
            for shard in ckpt.files:
                scanner.scan(shard)
        finally:
            scanner.close()
        sha = dict(scanner.file_sha)
        sha.update({p: fhash.submit_file(p) for p in others if p not in shard_paths})
        files = tuple(
            FileDigest(str(p.relative_to(root)), p.stat().st_size, sha[p].result())
            for p in sorted(sha)
        )
        tensors = tuple(
            TensorDigest(
                n,
                t.path.name,
                t.dtype,
                t.shape,
                scanner.tensor_sha[n].result(),
                scanner.nonfinite[n],
            )
            for n, t in ckpt.tensors.items()
        )
    vs_base = base_plan.comparison(ckpt)
    vs_prev = None if prev_plan is None else prev_plan.comparison(ckpt)
    notes = []
    if vs_base.changed_elements == 0 and not require_change:
        notes.append(f"{EQUALS_BASE} (allowed: not the endpoint)")
    if vs_prev is not None and vs_prev.changed_elements == 0:
        notes.append("checkpoint equals the previous checkpoint of its run")
    notes += [f"audit.exclude {e.pattern!r} matched no tensor" for e in excluded if not e.keys]
    extra = sum(p.stat().st_size for p in others if p not in shard_paths)
    return AuditReport(
        checkpoint=str(ckpt.root),
        base=str(base_plan.ref.root),
        previous=None if prev_plan is None else str(prev_plan.ref.root),
        files=files,
        tensors=tensors,
        checkpoint_nonfinite=sum(scanner.nonfinite.values()),
        nonfinite_tensors=tuple(n for n, c in scanner.nonfinite.items() if c),
        vs_base=vs_base,
        vs_previous=vs_prev,
        bytes_read=scanner.bytes_read + extra,
        failures=_failures(scanner.nonfinite, vs_base, vs_prev, require_change),
        notes=tuple(notes),
        excluded=excluded,
    )
