"""The typed configuration tree: one frozen dataclass per section of config/config.yaml.

``Settings.from_config(config)`` is built once, at DAG construction (``rules/common.smk``), from
the config that ``config/schema.yaml`` has validated and filled with its defaults. The schema is
the one source of every key's description, default and bounds; the classes here give each key
its Python type and carry no defaults, so a value never has two homes. They follow the schema
exactly, checked by ``tests/test_settings_schema.py``: the same keys, the same types, a required
field where the schema requires or fills the key and ``X | None = None`` where it does neither
(code that holds one section on its own fills it by the schema too:
:func:`editcredit.config.section_config`). Building walks the config and the classes together
and raises :class:`~editcredit.config.ConfigError` naming the first key's full path that is
unknown, missing or of the wrong type (``training.grpo.credit_lamda: unknown key``), so
``snakemake -n`` fails before any job runs. Optional keys (the schema neither requires nor fills
them) are ``None`` when absent.

A job takes the record of what it reads (:mod:`editcredit.job_settings`, built from this tree:
``EvalModelSettings.from_settings(SETTINGS)``), passed by its rule as one param and rebuilt
strictly by its script (``EvalModelSettings.from_mapping(snakemake.params.settings)``); a job
with a few values takes them as they are.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from editcredit.config import ConfigError, Section, bound_violation, build_section, schema_of

RUN_FIELDS = ("temperature", "arm", "seed")
"""Fields of ``editcredit.rl.config.TrainConfig`` that come from outside ``training.grpo``."""

RUN_BOUNDS = {"temperature": "agent.temperature"}
"""Where the bounds of a run's own fields are declared (the arm and the seed have none there);
every other field's are ``training.grpo.<field>``'s."""


def check_run_fields(values: Mapping[str, Any]) -> None:
    """Raise ValueError naming the first field of a run's config (``training.grpo``'s keys and
    the run's temperature) whose value breaks the bounds config/schema.yaml declares for its key
    (``TrainConfig.<field>: <why>``). The one bound check of a run's config: the tree runs it on
    the config (:meth:`Settings.from_config`), ``TrainConfig`` on every run it builds."""
    for name, value in values.items():
        if name in ("arm", "seed"):
            continue
        why = bound_violation(schema_of(RUN_BOUNDS.get(name, f"training.grpo.{name}")), value)
        if why is not None:
            raise ValueError(f"TrainConfig.{name}: {why}")


# --- suites -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Splits(Section):
    """``suites.<name>.splits``: shares of seed functions per split (sum to 1)."""

    train: float
    dev: float
    holdout: float


@dataclass(frozen=True)
class SuiteSettings(Section):
    """``suites.<name>``: how a task suite is generated or imported, and its pinned hash."""

    generator: str
    seed: int
    splits: Splits
    mutants_per_function: int
    modules: list[str]
    pool_modules: int
    pool_functions: int
    timeout_s: float
    validation_timeout_s: float
    manifest_sha256: str
    image_template: str
    source: str | None = None


# --- sandbox, grading, controls -------------------------------------------------------------


@dataclass(frozen=True)
class TestLimits(Section):
    """``sandbox.test_limits``: per-test and collection limits inside a graded run (METHOD §6)."""

    __test__ = False  # not a pytest class

    factor: float
    floor_s: float
    collect_factor: float
    collect_floor_s: float
    max_timeouts: int
    measure_gold: bool
    cpu_floor_s: float


@dataclass(frozen=True)
class SandboxSettings(Section):
    """``sandbox``: where tests run (docker or local) and its limits."""

    backend: str
    image: str
    pull_ref: str
    debian_suite: str
    debian_mirror: str
    docker_mode: str
    local_mode: str
    workers: int
    expert_workers: int
    eval_workers: int
    report_store: str
    mem_limit: str
    pids_limit: int
    timeout_factor: float
    test_limits: TestLimits


@dataclass(frozen=True)
class GradingSettings(Section):
    """``grading``: the weights of the utility ``U = Y + f*F - g*G`` (METHOD §3)."""

    f_weight: float
    g_weight: float


@dataclass(frozen=True)
class ControlsSettings(Section):
    """``controls``: gold and empty controls per task (METHOD §7)."""

    exclude_flagged_from_training: bool


# --- agent, generation, reward ----------------------------------------------------------------


@dataclass(frozen=True)
class BashSettings(Section):
    """``agent.bash``: the bash environment's budgets."""

    output_limit: int
    command_timeout_s: float
    max_command_chars: int
    tree_size: str


@dataclass(frozen=True)
class AgentSettings(Section):
    """``agent``: episode budgets, the sampling temperature and the environment."""

    max_turns: int
    max_new_tokens: int
    max_context_tokens: int
    temperature: float
    numbered_lines: bool
    candidates: bool
    try_scope: str
    environment: str
    bash: BashSettings


@dataclass(frozen=True)
class FastBackendSettings(Section):
    """``generation.fast``: the static-cache, CUDA-graph backend."""

    compile: bool


@dataclass(frozen=True)
class VLLMBackendSettings(Section):
    """``generation.vllm``: engine settings of the vLLM backend."""

    dtype: str
    gpu_memory_utilization: float
    tensor_parallel_size: int
    max_model_len: int
    enforce_eager: bool
    enable_prefix_caching: bool
    in_process: bool
    seed: int


@dataclass(frozen=True)
class GeneratorSettings(Section):
    """``generation``: the backend behind the one generation interface."""

    backend: str
    fast: FastBackendSettings
    vllm: VLLMBackendSettings


@dataclass(frozen=True)
class RewardSettings(Section):
    """``reward``: the terminal reward terms (METHOD §4), the same for every arm."""

    format_penalty: float
    regression_penalty: float


# --- models and the probe ---------------------------------------------------------------------


@dataclass(frozen=True)
class Architecture(Section):
    """``models.<name>.architecture``: Qwen2 sizes of the tiny policy."""

    hidden_size: int | None = None
    intermediate_size: int | None = None
    num_layers: int | None = None
    num_heads: int | None = None
    num_kv_heads: int | None = None
    max_positions: int | None = None


@dataclass(frozen=True, kw_only=True)  # keyword-only: a required field after optional ones
class Experts(Section):
    """``models.<name>.experts``: the scripted experts whose episodes are the SFT data."""

    kind: str
    search_pool: int
    rename_prob: float
    rename_locals: bool
    fragment_style: str
    search_weights: dict[str, float] | None = None
    episodes_per_task: int | None = None
    detour_prob: float | None = None
    run_prob: float | None = None
    rename_copies: int


@dataclass(frozen=True, kw_only=True)  # keyword-only: the fields keep the schema's order
class Sft(Section):
    """``models.<name>.sft``: supervised fine-tuning of the tiny default on expert episodes."""

    threads: int
    length_grouping: int
    lr: float
    batch_size: int
    max_steps: int
    warmup_steps: int
    observation_loss_weight: float
    end_of_turn_loss_weight: float
    copy_steps: int
    copy_rows: int
    ema_decay: float


@dataclass(frozen=True, kw_only=True)  # keyword-only: the fields keep the schema's order
class ModelSettings(Section):
    """``models.<name>``: a base policy, trained here ('train') or imported ('import')."""

    source: str
    seed: int
    gpu: int
    tokenizer_vocab: int
    tokenizer_whole_numbers_below: int
    path: str | None = None
    receipt_sha256: str | None = None
    suite: str | None = None
    corpus_suites: list[str]
    architecture: Architecture | None = None
    experts: Experts | None = None
    sft: Sft | None = None


@dataclass(frozen=True)
class ProbeSettings(Section):
    """``probe``: the base-policy probe (results/base/{model}/probe.json)."""

    seed: int
    train_tasks: int
    train_samples: int
    threads: int
    dev_samples: int
    holdout_samples: int


@dataclass(frozen=True)
class RuleResources(Section):
    """``resources.<rule>``: what one rule's jobs request."""

    mem_mb: int | None = None
    gpu: int | None = None
    gpu_mem_mb: int | None = None


# --- training ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class RayAllocation(Section):
    """``training.ray.allocation``: the Ray cluster of the job's own SLURM allocation."""

    port: int
    object_store_mb: int
    start_timeout_s: float


@dataclass(frozen=True)
class RaySettings(Section):
    """``training.ray``: rollout and grading workers inside a training job (docs/ray.md)."""

    enabled: bool
    address: str
    num_workers: int
    gpus_per_worker: float
    allocation: RayAllocation


@dataclass(frozen=True)
class HealthSettings(Section):
    """``training.health``: alerts and the storage guard (METHOD §5)."""

    unavailable_streak: int
    availability_window: int
    min_availability: float
    min_free_disk_gb: float
    min_free_inodes: int


@dataclass(frozen=True)
class PoolScreenSettings(Section):
    """``training.pool_screen``: the base policy's screen of the pool's candidates (rule
    training_pool): ``samples`` episodes on each of the first ``candidates`` eligible train tasks;
    the pool keeps those it solved in some but not all of them. ``samples`` 0: no screen."""

    candidates: int
    samples: int
    seed: int


@dataclass(frozen=True, eq=False)
class GrpoSettings(Section, Mapping):
    """``training.grpo``: GRPO, the policy loss and the credit (METHOD §3-§4); each key's meaning,
    bounds and value are in config/schema.yaml and config/config.yaml. A run's
    :class:`~editcredit.rl.config.TrainConfig` is these fields with the run's own
    (:data:`RUN_FIELDS`), built by :func:`editcredit.rl.config.run_config`.

    The section also reads as a mapping of its keys (``grpo["group_size"]``, ``{**grpo}``), and
    equals a mapping of the same keys and values.
    """

    lr: float
    tasks_per_step: int
    group_size: int
    normalize_std: bool
    loss_aggregation: str
    policy_loss: str
    negative_weight: float
    ppo_clip: float
    dppo_delta: float
    zero_variance_filter: bool
    credit_lambda: float
    credit_c: float
    query_rate: float
    mini_batches: int
    epochs: int
    micro_batch_size: int
    micro_batch_tokens: int
    gradient_checkpointing: bool
    max_grad_norm: float

    def __getitem__(self, key: str) -> Any:
        if key not in _grpo_keys():
            raise KeyError(key)
        return getattr(self, key)

    def __iter__(self) -> Iterator[str]:
        return iter(_grpo_keys())

    def __len__(self) -> int:
        return len(_grpo_keys())


def _grpo_keys() -> tuple[str, ...]:
    """The keys of ``training.grpo``: :class:`GrpoSettings`'s own fields (not a subclass's)."""
    return tuple(f.name for f in dataclasses.fields(GrpoSettings))


@dataclass(frozen=True)
class TrainingSettings(Section):
    """``training``: the GRPO runs ({arm}-s{seed}) and their segments."""

    model: str
    suite: str
    plan: dict[str, list[int]]
    endpoint_step: int
    segment_steps: int
    keep_checkpoints: int
    gpu: int
    ray: RaySettings
    grpo: GrpoSettings
    health: HealthSettings
    pool_size: int
    pool_screen: PoolScreenSettings
    quarantine: dict[str, str] | None = None
    controls: dict[str, list[int]] | None = None
    """Control -> seeds: runs of the credit controls (T), only where a config layer plans them."""


# --- audits, evaluation, statistics, paper ----------------------------------------------------


@dataclass(frozen=True)
class AuditExclusion(Section):
    """``audit.exclude[i]``: tensors left out of the audit by declaration, with the reason."""

    pattern: str
    reason: str


@dataclass(frozen=True)
class AuditSettings(Section):
    """``audit``: parameter audits of checkpoints (METHOD §10)."""

    chunk_mib: int
    exclude: list[AuditExclusion] | None = None


@dataclass(frozen=True)
class EvalSetSettings(Section):
    """``evaluation.evalsets.<name>``: the tasks of some splits of one suite, n samples each."""

    suite: str
    splits: list[str]
    samples: int
    max_tasks: int
    with_training_pool: bool


@dataclass(frozen=True)
class RetryLimits(Section):
    """``evaluation.limits``: retries per slot (METHOD §8)."""

    regrade: int
    regenerate: int


@dataclass(frozen=True)
class FaultSettings(Section):
    """``evaluation.faults``: the test hook that plants infrastructure failures (0 = off)."""

    rate: float
    seed: int
    mode: str


@dataclass(frozen=True)
class EvaluationSettings(Section):
    """``evaluation``: eval models, eval sets and slots (METHOD §8)."""

    models: list[str]
    diagnostic_every: int
    diagnostic_steps: list[int]
    diagnostic_samples: int
    evalsets: dict[str, EvalSetSettings]
    seed: int
    batch_size: int
    limits: RetryLimits
    gpu: int
    on_grader_change: str
    faults: FaultSettings


@dataclass(frozen=True)
class ComparisonSettings(Section):
    """``stats.comparisons.<name>``: a paired comparison A - B."""

    a: str
    b: str
    seeds: list[int] | None = None
    evalset: str | None = None


@dataclass(frozen=True)
class BootstrapSettings(Section):
    """``stats.bootstrap``: the seed x task bootstrap (METHOD §9)."""

    n_resamples: int
    rng_seed: int
    level: float


@dataclass(frozen=True)
class GateSettings(Section):
    """``stats.gate``: the pre-registered claim gate (METHOD §9)."""

    min_difference: float
    ci_lower_above: float


@dataclass(frozen=True)
class StatsSettings(Section):
    """``stats``: scores, comparisons, the gate and the training analyses (METHOD §8-§9)."""

    evalsets: list[str]
    main: str
    comparisons: dict[str, ComparisonSettings]
    bootstrap: BootstrapSettings
    gate: GateSettings
    encounter_k: list[int]
    failure_buckets: int
    histogram_bins: int


@dataclass(frozen=True)
class BudgetCaps(Section):
    """``budgets.run``, ``.evaluation``, ``.base_model`` or ``.studies.<study>``: caps declared
    before a job (0 = none)."""

    steps: float
    tokens: float
    gradings: float
    gpu_hours: float
    wall_seconds: float


@dataclass(frozen=True)
class BudgetSettings(Section):
    """``budgets``: the caps of each training run (and control replay), each evaluation job,
    each trained base model and each pre-registered study (METHOD §11)."""

    run: BudgetCaps
    evaluation: BudgetCaps
    base_model: BudgetCaps
    studies: dict[str, BudgetCaps]


@dataclass(frozen=True)
class StopSettings(Section):
    """``stop``: the stop-or-continue study (METHOD §12)."""

    enabled: bool
    protocol: str
    models: list[str]
    evalsets: list[str]
    retries: int


@dataclass(frozen=True)
class ReplaySettings(Section):
    """``replay``: the replay check of stored gradings (rule ``replay``): how many are re-graded,
    ``max(ceil(fraction x stored), minimum)`` (all of them when fewer are stored)."""

    fraction: float
    minimum: int


@dataclass(frozen=True)
class PaperSettings(Section):
    """``paper``: the compiled paper."""

    latexmk: str


@dataclass(frozen=True)
class Settings(Section):
    """The whole configuration, one typed section per top-level key of config/config.yaml."""

    suites: dict[str, SuiteSettings]
    sandbox: SandboxSettings
    grading: GradingSettings
    controls: ControlsSettings
    agent: AgentSettings
    generation: GeneratorSettings
    reward: RewardSettings
    models: dict[str, ModelSettings]
    probe: ProbeSettings
    resources: dict[str, RuleResources]
    training: TrainingSettings
    audit: AuditSettings
    evaluation: EvaluationSettings
    stats: StatsSettings
    budgets: BudgetSettings
    stop: StopSettings
    replay: ReplaySettings
    paper: PaperSettings

    @classmethod
    def from_config(cls, config: Mapping[str, Any]) -> Settings:
        """The tree of a validated config (defaults filled); ConfigError names a bad key."""
        settings = build_section(cls, config, "")
        try:
            check_run_fields({**settings.training.grpo, "temperature": settings.agent.temperature})
        except ValueError as exc:
            raise ConfigError(f"config: training.grpo: {exc}") from exc
        ray = settings.training.ray
        if ray.address and not ray.enabled:
            raise ConfigError(
                f"config: training.ray.address: '{ray.address}' names a Ray cluster, but "
                "training.ray.enabled is false (the default runs local worker processes): set "
                'enabled: true to use the cluster, or address: ""'
            )
        pool, per_step = settings.training.pool_size, settings.training.grpo.tasks_per_step
        if pool and pool < per_step:
            raise ConfigError(
                f"config: training.pool_size: {pool} is smaller than training.grpo.tasks_per_step "
                f"({per_step}); a step draws distinct tasks"
            )
        screen = settings.training.pool_screen
        if screen.samples and pool:  # pool_size 0: every eligible task, nothing to screen
            if screen.samples < 2:
                raise ConfigError(
                    f"config: training.pool_screen.samples: {screen.samples}; a task solved in "
                    "some but not all samples needs at least 2"
                )
            if screen.candidates < pool:
                raise ConfigError(
                    f"config: training.pool_screen.candidates: {screen.candidates} is smaller "
                    f"than training.pool_size ({pool})"
                )
        return settings
