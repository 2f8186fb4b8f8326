"""The records the statistics write (``results/stats/*.json``) and the report reads.

Each is the JSON row of one writer, keys in the order the writer writes them (a TypedDict, so
the bytes stay those of a plain dict): the scores of every model on an eval set
(:func:`~editcredit.stats.comparisons.evalset_scores_record`), a configured comparison without
and with its claim gate (:func:`~editcredit.stats.comparisons.paired_record`,
:func:`~editcredit.stats.comparisons.gated_record`) and one arm's training record
(:func:`~editcredit.stats.training.training_record`), with the parts they nest. Values are the
plain ones :func:`~editcredit.stats._records.to_plain` writes (tuples as lists, non-finite
floats as None).
"""

from __future__ import annotations

from typing import Any, TypedDict

from editcredit.stats.credit import CreditCounts

__all__ = [
    "ArmHealth",
    "BootstrapRecord",
    "BootstrapSettings",
    "CIRecord",
    "ComparisonRecord",
    "DistributionRecord",
    "EncounterRecord",
    "EvalsetScores",
    "FailureBucket",
    "GateRecord",
    "GatedRecord",
    "LearningRecord",
    "PairedFields",
    "PairedRecord",
    "PartComparison",
    "PartRecord",
    "PartlyTrained",
    "RunHealth",
    "ScoreSummary",
    "SignRecord",
    "TrainingRecord",
    "VerdictRecord",
    "WithoutInfluential",
]


class BootstrapSettings(TypedDict):
    """The bootstrap of every CI (config ``stats.bootstrap``)."""

    n_resamples: int  # resamples drawn
    rng_seed: int  # seed of numpy.random.default_rng
    level: float  # confidence level


class BootstrapRecord(BootstrapSettings):
    """The bootstrap as a record states it."""

    method: str  # always "percentile"


class CIRecord(TypedDict):
    """A bootstrap CI (:class:`~editcredit.stats.bootstrap.BootstrapCI`)."""

    estimate: float  # the mean the interval is about
    lower: float
    upper: float
    level: float
    scheme: str  # which resampling: "seed x task", "task (seeds fixed)", ...
    n_seeds: int  # seeds in the data (1 for a one-dimensional bootstrap)
    n_units: int  # tasks (or other units) in the data
    n_resamples: int
    rng_seed: int
    method: str  # always "percentile"
    half_width: float  # (upper - lower) / 2


class SignRecord(TypedDict):
    """Per-task wins / losses / ties and the sign test
    (:class:`~editcredit.stats.signtest.SignTest`)."""

    wins: int  # tasks whose difference is > 0
    losses: int  # ... < 0
    ties: int  # ... exactly 0
    n_nontied: int  # wins + losses
    p_value: float | None  # two-sided exact binomial p-value; None when every task ties


class VerdictRecord(TypedDict):
    """The claim gate's verdict (:class:`~editcredit.stats.gates.GateVerdict`)."""

    label: str  # the comparison, e.g. "M - B"
    passed: bool  # every condition held
    verdict: str  # "pass" or "fail"
    reasons: list[str]  # one line per condition, whether and why it held
    difference: float | None  # the paired difference; None when unresolved
    ci_lower: float | None  # lower end of the CI used; None when there is none
    ci_scheme: str | None  # which CI was used
    min_difference: float  # required difference (score units)
    ci_lower_threshold: float  # the CI's lower end must exceed this
    difference_ok: bool
    ci_ok: bool


class GateRecord(VerdictRecord):
    """The verdict as a gated record holds it."""

    line: str  # the printed one-line verdict


class ScoreSummary(TypedDict):
    """One model's score (or bounds) on an eval set's planned tasks."""

    n_samples: int  # planned samples per task (n)
    n_planned: int  # planned slots N
    n_known: int  # slots with a verdict, K
    n_successes: int  # slots with verdict 1, S
    n_unresolved: int  # N - K (null verdicts and missing rows)
    n_missing_rows: int  # the part of n_unresolved with no row
    n_tasks: int  # planned tasks
    resolved: bool  # K == N
    score: float | None  # S / N; None while K < N
    lower: float  # S / N: every unresolved slot a 0
    upper: float  # (S + N - K) / N: every unresolved slot a 1
    unresolved_by_reason: dict[str, int]  # unresolved slots by reason, sorted


class EvalsetScores(TypedDict):
    """Every model's score on one eval set (``results/stats/scores_{evalset}.json``)."""

    evalset: str
    n_tasks: int  # planned tasks
    n_samples: int  # planned samples per task
    models: dict[str, ScoreSummary]  # by eval model name


class PairedFields(TypedDict):
    """The fields of a paired comparison (:class:`~editcredit.stats.paired.PairedComparison`)."""

    label: str  # e.g. "M - B" or "M42 - E42"
    kind: str  # "paired seed x task comparison" or "single-seed contrast"
    arm_a: str
    arm_b: str
    seeds: list[Any]  # the paired training seeds
    tasks: list[str]  # the tasks, in order
    resolved: bool  # neither arm has an unresolved slot
    difference: float | None  # mean paired difference; None when unresolved
    difference_lower: float  # A_lo - B_hi (the difference when resolved)
    difference_upper: float  # A_hi - B_lo
    ci_seed_task: CIRecord | None  # None when unresolved or single-seed
    ci_task: CIRecord | None  # the task-only CI; None when unresolved
    sign: SignRecord | None  # None when unresolved
    task_differences: list[float] | None  # per task, averaged over seeds


class ComparisonRecord(PairedFields):
    """The paired comparison on the whole eval set, with its primary CI."""

    single_seed: bool  # one paired seed: the task-only CI is the primary one
    n_seeds: int
    n_tasks: int
    primary_ci: CIRecord | None  # the CI a claim rests on
    half_width: float | None  # its half-width


class PartComparison(TypedDict):
    """The difference over one part's (seed, task) cells (trained or untrained tasks)."""

    label: str  # e.g. "M - B (trained)"
    resolved: bool
    n_seeds: int  # seeds with a task in the part
    n_cells: int
    seeds: list[Any]
    difference: float | None  # None while a cell is unresolved
    difference_lower: float
    difference_upper: float
    ci: CIRecord | None  # stratified by seed; None while unresolved
    half_width: float | None
    wins: int | None  # cells with difference > 0 (None while unresolved)
    losses: int | None
    ties: int | None


class PartRecord(TypedDict):
    """One part of the trained / untrained split (:func:`~editcredit.stats.trained.part_record`)."""

    n_tasks: int  # distinct tasks over the seeds
    n_cells: int  # (seed, task) cells
    tasks_by_seed: dict[str, int]  # cells per seed (the seed as text)
    note: str  # why the part is empty; "" otherwise
    comparison: PartComparison | None  # None for an empty part


class PartlyTrained(TypedDict):
    """Cells whose task some but not all of the seed's runs trained on (in neither part)."""

    n_cells: int
    tasks_by_seed: dict[str, int]


class DistributionRecord(TypedDict):
    """Histogram of the bootstrap resample means behind the primary CI."""

    scheme: str  # the primary CI's scheme
    counts: list[int]
    edges: list[float]  # bin edges (one more than counts)
    mean: float
    sd: float  # sample standard deviation (0 for one resample)


class PairedRecord(TypedDict):
    """One configured comparison without the gate (``results/stats/paired/{name}.json``)."""

    comparison: str  # its key in stats.comparisons
    label: str
    kind: str
    single_seed: bool
    evalset: str
    arm_a: str
    arm_b: str  # an arm, or the base policy
    seeds: list[int]
    n_tasks: int
    n_samples: int
    bootstrap: BootstrapRecord
    scores: dict[str, ScoreSummary]  # by compared eval model
    all: ComparisonRecord  # the whole eval set
    trained: PartRecord  # tasks every compared run of the seed trained on
    untrained: PartRecord  # tasks none of them saw
    partly_trained: PartlyTrained
    bootstrap_distribution: DistributionRecord | None  # None when unresolved


class GatedRecord(PairedRecord):
    """The paired record plus the claim gate (``results/stats/{name}.json``)."""

    gate: GateRecord


class RunHealth(TypedDict):
    """Health of one run's training (or of several runs' metrics pooled)."""

    steps: int
    rollouts: int
    cf_sent: int  # counterfactual queries sent
    cf_available: int  # ... that gave a D
    cf_nonzero: int  # ... with a non-zero D
    cf_availability: float | None  # cf_available / cf_sent
    credit_mass_l1_mean: float | None
    credit_mass_signed_mean: float | None
    entropy_first: float | None  # at the first step
    entropy_last: float | None  # at the last step
    reward_first: float | None
    reward_last: float | None
    masked_share: float | None  # masked rollouts / rollouts
    masked_by_cause: dict[str, int]  # masked rollouts by cause, sorted
    alerts: dict[str, int]  # alerts by name, sorted
    n_alerts: int
    generated_tokens: int


class ArmHealth(RunHealth):
    """Health pooled over an arm's runs, with its learning against the control."""

    runs: int  # runs pooled
    run_pass_last_quarter: float | None  # mean over runs of the run's pass rate
    control_pass_last_quarter: float | None  # ... of the no-learning control's
    delta_last_quarter: float | None  # ... of their difference


class LearningRecord(TypedDict):
    """One run's training pass rate against the no-learning control on the same draws."""

    steps: list[int]  # 1..endpoint
    run_pass: list[float | None]  # per step; None where no rollout counted
    control_pass: list[float | None]
    delta: list[float | None]  # run_pass - control_pass
    last_quarter_steps: list[int]
    run_pass_last_quarter: float | None
    control_pass_last_quarter: float | None
    delta_last_quarter: float | None
    delta_after_first: float | None  # mean delta over steps 2..endpoint
    first_step_equal: bool  # step 1 plays the base policy in both: they must agree


class FailureBucket(TypedDict):
    """Failure rates over one step bucket, rollout-weighted."""

    steps: list[int]  # [first, last] step of the bucket
    rollouts: int
    format_error_rate: float | None
    p2p_regression_rate: float | None  # over unmasked rollouts
    context_budget_rate: float | None


class WithoutInfluential(TypedDict):
    """The encounter effect again with its most influential task left out."""

    task: str  # the task left out
    mean_difference: float
    ci: CIRecord


class EncounterRecord(TypedDict):
    """The encounter effect at one k: per task the pass rate at the k-th encounter minus the
    first, averaged over the arm's runs, then over tasks."""

    k: int | str  # the encounter, or "last" (tasks seen at least three times)
    n_tasks: int  # tasks with a k-th encounter
    n_tasks_seen: int
    n_tasks_without_kth: int
    mean_difference: float | None  # None when no task has a k-th encounter
    ci: CIRecord | None
    without_most_influential: WithoutInfluential | None
    tasks: list[str]
    task_differences: list[float]  # per task, in the order of tasks


class TrainingRecord(TypedDict):
    """Everything the paper shows about one arm's training
    (``results/stats/training_{arm}.json``)."""

    arm: str
    runs: list[str]  # its runs
    endpoint_step: int
    curves: dict[str, dict[str, list[Any]]]  # per run: per-step series by name
    health_by_run: dict[str, RunHealth]
    learning_vs_control: dict[str, LearningRecord]  # by run
    health: ArmHealth
    failures: list[FailureBucket]
    credit: CreditCounts
    encounter: list[EncounterRecord]  # the configured k, then "last"
    bootstrap: BootstrapRecord
