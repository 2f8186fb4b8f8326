"""The plan's forecast of the bytes it will write, against the free space of its file system.

Pure arithmetic on a few counts (:class:`PlanCounts`, gathered by :mod:`editcredit.storage.plan`):

- one segment's checkpoint is the model's parameters x (4 bytes of float32 weights + 8 bytes of
  AdamW's two float32 moments): ``model/model.safetensors`` and ``state/optimizer.pt``;
- on disk at once are the checkpoints the retention policy keeps plus, for each run still
  training, one it will remove (the latest, kept to resume from until the next segment exists);
- results are stored trajectories, training rollouts and evaluation slots alike, at most
  :data:`BYTES_PER_TOKEN` per token of the agent's context budget (token ids, log-probabilities,
  the mask and the turns' text: an upper estimate, Parquet compresses them).

The forecast fits when what it needs leaves ``training.health.min_free_disk_gb`` free.
"""

from __future__ import annotations

from dataclasses import dataclass

WEIGHT_BYTES = 4
"""Bytes per parameter of a segment's ``model.safetensors`` (float32 weights)."""
OPTIMIZER_BYTES = 8
"""Bytes per parameter of a segment's ``optimizer.pt`` (AdamW's two float32 moments)."""
BYTES_PER_TOKEN = 16
"""Upper estimate of one stored trajectory token (ids, log-probs, mask, text)."""


class StorageForecastError(RuntimeError):
    """The plan's forecast bytes do not fit in the free space less the margin."""


def qwen2_parameters(
    vocab: int,
    hidden: int,
    intermediate: int,
    layers: int,
    heads: int,
    kv_heads: int,
    tied: bool = True,
) -> int:
    """Parameters of a Qwen2 causal LM of these sizes (q/k/v with biases, o without, a gated MLP,
    two RMSNorms per layer and a final one; the output head tied to the embedding by default)."""
    head_dim = hidden // heads
    kv = kv_heads * head_dim
    attention = (hidden * hidden + hidden) + 2 * (hidden * kv + kv) + hidden * hidden
    layer = attention + 3 * hidden * intermediate + 2 * hidden
    embed = vocab * hidden
    return embed * (1 if tied else 2) + layers * layer + hidden


def checkpoint_bytes(parameters: int) -> int:
    """One segment's model and optimiser state."""
    return parameters * (WEIGHT_BYTES + OPTIMIZER_BYTES)


@dataclass(frozen=True)
class PlanCounts:
    """What the plan still has to write (what exists already is not counted)."""

    parameters: int | None  # None: not known yet (no base model, no architecture)
    segments: int  # training segments still to write, every run
    pruned: int  # of those, the ones the retention policy removes again
    runs: int  # runs with a segment still to write
    rollouts: int  # training rollouts of those segments
    eval_slots: int  # evaluation slots still to write (0 where the tasks are not frozen yet)
    context_tokens: int  # the agent's context budget (agent.max_context_tokens)


@dataclass(frozen=True)
class Forecast:
    """Bytes the plan needs against the free bytes of its file system."""

    counts: PlanCounts
    checkpoint_bytes: int  # one segment's (0 when the parameters are not known)
    peak_checkpoint_bytes: int  # checkpoints on disk at once
    result_bytes: int
    free_bytes: int
    margin_bytes: int

    @property
    def need_bytes(self) -> int:
        return self.peak_checkpoint_bytes + self.result_bytes

    @property
    def fits(self) -> bool:
        return self.need_bytes <= self.free_bytes - self.margin_bytes

    def line(self) -> str:
        """One line for the log of every ``snakemake`` invocation."""
        c = self.counts
        size = _gb(self.checkpoint_bytes) if c.parameters is not None else "unknown size"
        kept = f", {c.pruned} removed by training.keep_checkpoints" if c.pruned else ""
        verdict = "fits" if self.fits else "DOES NOT FIT"
        return (
            f"storage forecast: {c.segments} segment checkpoint(s) x {size}{kept} "
            f"(peak {_gb(self.peak_checkpoint_bytes)}) + results {_gb(self.result_bytes)} "
            f"({c.rollouts} rollouts, {c.eval_slots} eval slots) = {_gb(self.need_bytes)}; "
            f"{_gb(self.free_bytes)} free, {_gb(self.margin_bytes)} kept free "
            f"(training.health.min_free_disk_gb): {verdict}"
        )


def forecast(counts: PlanCounts, free_bytes: int, margin_bytes: int) -> Forecast:
    """The forecast of ``counts`` against ``free_bytes`` with ``margin_bytes`` kept free."""
    if counts.pruned > counts.segments:
        raise ValueError(f"{counts.pruned} pruned of {counts.segments} segments")
    one = checkpoint_bytes(counts.parameters) if counts.parameters is not None else 0
    kept = counts.segments - counts.pruned
    in_flight = min(counts.pruned, counts.runs)
    results = (counts.rollouts + counts.eval_slots) * counts.context_tokens * BYTES_PER_TOKEN
    return Forecast(
        counts=counts,
        checkpoint_bytes=one,
        peak_checkpoint_bytes=(kept + in_flight) * one,
        result_bytes=results,
        free_bytes=int(free_bytes),
        margin_bytes=int(margin_bytes),
    )


def require_fit(result: Forecast, where: str) -> None:
    """Raise :class:`StorageForecastError` naming the shortfall when ``result`` does not fit."""
    if not result.fits:
        short = result.need_bytes - (result.free_bytes - result.margin_bytes)
        raise StorageForecastError(
            f"{where}: the plan needs {_gb(result.need_bytes)} but {_gb(result.free_bytes)} are "
            f"free and {_gb(result.margin_bytes)} must stay free (training.health."
            f"min_free_disk_gb): {_gb(short)} short. Free space, keep fewer segments "
            f"(training.keep_checkpoints) or shrink the plan"
        )


def _gb(n: int) -> str:
    return f"{n / 1e9:.3f} GB"
