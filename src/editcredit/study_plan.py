"""The study plan: what the default target builds, worked out once from the typed settings.

``StudyPlan.build(settings)`` runs once, at DAG construction (``rules/common.smk``: ``PLAN``),
and every rule file looks its values up here: the runs ({arm}-s{seed}) and their segment ends,
the checkpoints retention prunes, the evaluated models and their eval sets, the diagnostic steps
of the holdout curve, the comparisons, the stop-or-continue study, and :attr:`StudyPlan.jobs`,
every job of the study as its rule name and wildcards. The cost table, the GPU counts and the
storage forecast iterate over those jobs; tests/workflow/test_study_plan.py checks that they are
exactly the jobs Snakemake's DAG plans, so the rules and the plan cannot drift apart.

A configuration the plan cannot be built from (an endpoint that is no segment end, an unknown
eval model, a comparison of an arm that is not trained) raises :class:`PlanError` here, naming
the key, before any job runs.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any

from editcredit import layout
from editcredit.config import ConfigError
from editcredit.evaluation.plan import diagnostic_steps
from editcredit.settings import Settings
from editcredit.stats.comparisons import ComparisonSpec, comparison_specs
from editcredit.storage.plan import PlanFacts
from editcredit.storage.retention import pruned_steps


class PlanError(ConfigError):
    """The settings describe no study the rules can build; the message names the key."""


# --- the pieces --------------------------------------------------------------------------------


def segment_ends(segment_steps: int, endpoint_step: int) -> list[int]:
    """The step numbers that end a segment: k, 2k, ..., endpoint."""
    if segment_steps <= 0 or endpoint_step % segment_steps:
        raise PlanError(
            f"config training: endpoint_step {endpoint_step} is not a multiple of "
            f"segment_steps {segment_steps}"
        )
    return list(range(segment_steps, endpoint_step + 1, segment_steps))


def plan_seeds(plan: Mapping[str, Sequence[int]]) -> list[int]:
    """Every training seed of the plan once, ascending (one control replay each)."""
    return sorted({s for seeds in plan.values() for s in seeds})


@dataclass(frozen=True)
class EvalModel:
    """An evaluated model: the base, a run at the endpoint or a diagnostic checkpoint.

    ``input`` is the rule input (the segment directory, or the base model's), ``dir`` the HF
    model directory; ``evalsets`` empty means every eval set; ``samples`` 0: the eval set's."""

    name: str
    dir: str
    input: str
    run: str = ""
    step: int = 0
    diagnostic: bool = False
    evalsets: tuple[str, ...] = ()
    samples: int = 0

    def evaluated_on(self, evalset: str) -> bool:
        return not self.evalsets or evalset in self.evalsets

    def plan_record(self) -> dict[str, Any]:
        """What the evaluation plan records of the model (rule eval_plan's ``models`` param)."""
        return {
            "dir": self.dir,
            "run": self.run,
            "step": self.step,
            "diagnostic": self.diagnostic,
            "evalsets": list(self.evalsets),
            "samples": self.samples,
        }


def eval_models(
    base_dir: str,
    runs: Sequence[str],
    endpoint: int,
    diagnostic: Sequence[int],
    curve_evalset: str,
    diagnostic_samples: int,
    chosen: Sequence[str] = (),
) -> dict[str, EvalModel]:
    """Eval model name -> model, in plan order: the base, then each run at the endpoint and at
    its diagnostic steps (on the curve's eval set alone); ``chosen`` (evaluation.models)
    keeps those, in its order."""
    models = {layout.BASE_EVAL_MODEL: EvalModel(layout.BASE_EVAL_MODEL, base_dir, base_dir)}
    for run in runs:
        models[run] = EvalModel(
            run,
            layout.segment_model_dir(run, endpoint),
            layout.segment_dir(run, endpoint),
            run,
            endpoint,
        )
        for step in diagnostic:
            name = layout.diagnostic_model(run, step)
            models[name] = EvalModel(
                name,
                layout.segment_model_dir(run, step),
                layout.segment_dir(run, step),
                run,
                step,
                diagnostic=True,
                evalsets=(curve_evalset,),
                samples=diagnostic_samples,
            )
    if chosen:
        unknown = [m for m in chosen if m not in models]
        if unknown:
            raise PlanError(f"config evaluation.models: unknown {unknown}; known: {sorted(models)}")
        models = {m: models[m] for m in chosen}
    return models


@dataclass(frozen=True)
class StopStudy:
    """The stop-or-continue study (config ``stop``): its protocol, models and eval sets."""

    enabled: bool
    protocol: str
    models: tuple[str, ...]
    evalsets: tuple[str, ...]
    suites: tuple[str, ...]

    @property
    def study(self) -> str:
        """The study's name: its protocol file's stem."""
        return Path(self.protocol).stem


@dataclass(frozen=True)
class Job:
    """One job of the study: its rule and wildcards (values as Snakemake sees them, strings)."""

    rule: str
    wildcards: tuple[tuple[str, str], ...] = ()

    @classmethod
    def of(cls, rule: str, **wildcards: object) -> Job:
        return cls(rule, tuple(sorted((k, str(v)) for k, v in wildcards.items())))

    @property
    def values(self) -> dict[str, str]:
        return dict(self.wildcards)


# --- the plan ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class StudyPlan:
    """Everything the default target builds, in plan order (see the module's docstring)."""

    settings: Settings

    @classmethod
    def build(cls, settings: Settings) -> StudyPlan:
        """The plan of ``settings``, every piece worked out now: PlanError names a key the
        study cannot be built from. (``StudyPlan(settings)`` works each piece out on its first
        use, so a workflow of a few rule files meets only the errors of the pieces it asks.)"""
        plan = cls(settings)
        plan.jobs  # noqa: B018  (every piece)
        return plan

    @cached_property
    def trained(self) -> dict[str, list[int]]:
        """Arm -> seeds of every run the plan trains: ``training.plan``'s arms, then the credit
        controls a config layer plans (``training.controls``; none by default). A control's runs
        are trained, evaluated and analysed as an arm's; the pre-registered comparison and gate
        name arms only (stats.main, stats.gate)."""
        training = self.settings.training
        return {**training.plan, **(training.controls or {})}

    @cached_property
    def runs(self) -> tuple[layout.Run, ...]:
        plan = self.trained
        return tuple(layout.Run(arm, seed) for arm, seeds in plan.items() for seed in seeds)

    @cached_property
    def segment_ends(self) -> tuple[int, ...]:
        training = self.settings.training
        return tuple(segment_ends(training.segment_steps, training.endpoint_step))

    @cached_property
    def diagnostic_steps(self) -> tuple[int, ...]:
        """Intermediate checkpoints evaluated for the holdout curve (evaluation.diagnostic_every
        and diagnostic_steps)."""
        ev = self.settings.evaluation
        end = self.settings.training.endpoint_step
        try:
            steps = diagnostic_steps(
                self.segment_ends, end, ev.diagnostic_every, ev.diagnostic_steps
            )
        except ValueError as exc:
            raise PlanError(str(exc)) from exc
        return tuple(steps)

    @cached_property
    def pruned_steps(self) -> tuple[int, ...]:
        """Segment ends whose model and optimiser files retention removes
        (training.keep_checkpoints; the endpoint, every k-th segment and the diagnostic steps
        stay)."""
        keep = self.settings.training.keep_checkpoints
        try:
            return tuple(pruned_steps(self.segment_ends, keep, self.diagnostic_steps))
        except ValueError as exc:
            raise PlanError(str(exc)) from exc

    @cached_property
    def eval_models(self) -> dict[str, EvalModel]:
        """Eval model name -> model, in plan order (:func:`eval_models`)."""
        s = self.settings
        return eval_models(
            self.base_model_dir,
            self.run_names,
            s.training.endpoint_step,
            self.diagnostic_steps,
            s.stats.evalsets[0],
            s.evaluation.diagnostic_samples,
            s.evaluation.models,
        )

    @cached_property
    def eval_jobs(self) -> tuple[tuple[str, str], ...]:
        """(eval model, eval set) of every planned evaluation: the base and the endpoints on
        every eval set, an intermediate checkpoint on the curve's eval set alone."""
        sets = self.settings.evaluation.evalsets
        return tuple(
            (m.name, e) for m in self.eval_models.values() for e in sets if m.evaluated_on(e)
        )

    @cached_property
    def comparisons(self) -> dict[str, ComparisonSpec]:
        """The configured comparisons (stats.comparisons), resolved against the training plan."""
        try:
            return comparison_specs(self.settings.stats.to_dict(), self.trained)
        except ValueError as exc:
            raise PlanError(str(exc)) from exc

    @cached_property
    def stop(self) -> StopStudy:
        """The stop study: its models (default: the compared eval models) and eval sets
        (default: every eval set)."""
        s = self.settings
        models = s.stop.models or self.compared_models
        evalsets = s.stop.evalsets or list(s.evaluation.evalsets)
        unknown = [e for e in evalsets if e not in s.evaluation.evalsets]
        if unknown:
            raise PlanError(f"config stop.evalsets: {unknown} are no evaluation.evalsets")
        suites = sorted({s.evaluation.evalsets[e].suite for e in evalsets})
        return StopStudy(
            s.stop.enabled, s.stop.protocol, tuple(models), tuple(evalsets), tuple(suites)
        )

    # --- runs and segments

    @property
    def run_names(self) -> list[str]:
        return [r.name for r in self.runs]

    def arm_runs(self, arm: str) -> list[str]:
        return [r.name for r in self.runs if r.arm == arm]

    @property
    def seeds(self) -> list[int]:
        return plan_seeds(self.trained)

    @property
    def base_model_dir(self) -> str:
        return layout.base_model_dir(self.settings.training.model)

    def checkpoint_dir(self, run: str, step: int | str) -> str:
        """The HF model directory of a run at a step (the base model at step 0)."""
        step = int(step)
        return self.base_model_dir if step == 0 else layout.segment_model_dir(run, step)

    def previous_step(self, step: int | str) -> int:
        return int(step) - self.settings.training.segment_steps

    def previous_segment(self, run: str, step: int | str) -> str:
        """The directory a segment starts from: the previous segment's, or the base model's."""
        prev = self.previous_step(step)
        if prev < 0:
            raise ValueError(f"step {step} is not a segment end")
        return self.base_model_dir if prev == 0 else layout.segment_dir(run, prev)

    def arm_control_replays(self, arm: str) -> dict[str, str]:
        """Run name -> its seed's control replay, for every run of an arm."""
        seeds = self.trained[arm]
        return {layout.run_name(arm, s): layout.control_replay(s) for s in seeds}

    def prune_inputs(self, run: str, step: int | str) -> dict[str, Any]:
        """What must exist before a segment's files go: the segment, the next one (no resume
        needs it then) and the audits that read its model (its own and the next segment's)."""
        step = int(step)
        if step not in self.pruned_steps:
            raise ValueError(f"step {step} of {run} is kept (training.keep_checkpoints)")
        after = step + self.settings.training.segment_steps
        return {
            "segment": layout.segment_dir(run, step),
            "next": layout.segment_dir(run, after),
            "audits": [layout.audit_json(run, n) for n in (step, after)],
        }

    def segments(self, runs: Sequence[str]) -> list[str]:
        """Every segment directory of the given runs (the training outputs)."""
        return [layout.segment_dir(run, n) for run in runs for n in self.segment_ends]

    # --- base models

    def check_base_model(self, name: str) -> None:
        """A base model trained here is one the scripted experts can train: PlanError names the
        key when the environment is not minibugs or a corpus suite is no further suite."""
        model = self.settings.models[name]
        if model.source != "train":
            return
        env = self.settings.agent.environment
        if env != "minibugs":
            raise PlanError(
                f"config: models.{name} is trained here by scripted experts, which write "
                f"the minibugs action language; agent.environment is {env!r}"
            )
        for suite in model.corpus_suites or []:
            if suite not in self.settings.suites or suite == model.suite:
                raise PlanError(
                    f"config: models.{name}.corpus_suites names {suite!r}, which is "
                    "not a further suite of suites.<name>"
                )

    # --- evaluation

    @property
    def compared_models(self) -> list[str]:
        """The compared eval models: every planned one except the diagnostic checkpoints."""
        return [n for n, m in self.eval_models.items() if not m.diagnostic]

    @property
    def played_suites(self) -> set[str]:
        """Suites whose tasks episodes are played on: training, evaluation, the models' probes."""
        s = self.settings
        suites = {s.training.suite} | {e.suite for e in s.evaluation.evalsets.values()}
        return suites | {m.suite for m in s.models.values() if m.suite}

    @property
    def evaluates_pool(self) -> bool:
        """Whether an eval set takes the training pool's tasks (with_training_pool)."""
        return any(e.with_training_pool for e in self.settings.evaluation.evalsets.values())

    def comparison_record(self, name: str) -> dict[str, Any]:
        """A comparison as rule paired's ``spec`` param."""
        spec = self.comparisons[name]
        return {
            "name": spec.name,
            "arm_a": spec.arm_a,
            "arm_b": spec.arm_b,
            "seeds": list(spec.seeds),
            "evalset": spec.evalset,
        }

    def evalset_samples(self, evalset: str) -> int:
        """Planned samples per task of an eval set (evaluation.evalsets); 0 = from the rows."""
        spec = self.settings.evaluation.evalsets.get(evalset)
        return spec.samples if spec else 0

    # --- the files rules ask for

    @property
    def suite_summaries(self) -> list[str]:
        return [layout.controls_summary(suite) for suite in self.settings.suites]

    @property
    def endpoint_segments(self) -> list[str]:
        end = self.settings.training.endpoint_step
        return [layout.segment_dir(run, end) for run in self.run_names]

    @property
    def audit_results(self) -> list[str]:
        return [layout.audit_json(r, n) for r in self.run_names for n in self.segment_ends]

    @property
    def pruned_records(self) -> list[str]:
        """One retention record per pruned segment of each run (training.keep_checkpoints)."""
        return [layout.pruned_record(r, n) for r in self.run_names for n in self.pruned_steps]

    @property
    def eval_plan_tasks(self) -> list[str]:
        suites = sorted({s.suite for s in self.settings.evaluation.evalsets.values()})
        return [layout.frozen_tasks(s) for s in suites]

    @property
    def eval_targets(self) -> list[str]:
        return [layout.EVAL_PLAN_SUMMARY] + [
            layout.EVAL_SCORES.format(model=m, evalset=e) for m, e in self.eval_jobs
        ]

    @property
    def eval_slots(self) -> list[str]:
        """Slots files of every planned evaluation (diagnostic checkpoints included)."""
        return [layout.eval_slots(m, e) for m, e in self.eval_jobs]

    def evalset_slots(self, evalset: str) -> list[str]:
        return [layout.eval_slots(m, evalset) for m in self.compared_models]

    @property
    def curve_scores(self) -> list[str]:
        """Every eval model's scores on the first of stats.evalsets: the holdout curve."""
        evalset = self.settings.stats.evalsets[0]
        return [layout.EVAL_SCORES.format(model=m, evalset=evalset) for m in self.eval_models]

    def comparison_slots(self, name: str) -> list[str]:
        spec = self.comparisons[name]
        return [layout.eval_slots(m, spec.evalset) for m in spec.all_models]

    def stats_results(self, kind: str) -> list[str]:
        """Result files of the statistics rules, by kind."""
        s = self.settings
        if kind == "compare":
            return [layout.stats_compare(c) for c in s.stats.comparisons]
        if kind == "paired":
            return [layout.stats_paired(c) for c in s.stats.comparisons]
        if kind == "scores":
            return [layout.stats_scores(e) for e in s.stats.evalsets]
        if kind == "training":
            return [layout.stats_training(arm) for arm in self.trained]
        raise ValueError(f"unknown kind of statistics result {kind!r}")

    # --- the stop-or-continue study's files

    @property
    def stop_receipt(self) -> str:
        return layout.protocol_receipt(self.stop.study)

    def stop_slots(self, model: str) -> list[str]:
        return [layout.eval_slots(model, e) for e in self.stop.evalsets]

    @property
    def stop_checkpoints(self) -> list[str]:
        return [layout.stop_checkpoints(m) for m in self.stop.models]

    @property
    def stop_results(self) -> list[str]:
        """The study's evaluation when it runs (render_tables waits for it: it is costed)."""
        return [layout.STOP_EVAL] if self.stop.enabled else []

    @property
    def stop_paper_inputs(self) -> list[str]:
        """The paper's stop-or-continue section and figure, when the study runs."""
        if not self.stop.enabled:
            return []
        return [layout.STOP_SECTION, layout.STOP_FIGURE.format(ext="pdf")]

    @property
    def lists_candidates(self) -> bool:
        """Whether the study's environment lists candidate fixes (the minibugs environment with
        ``agent.candidates``): then the paper takes the candidate list's coverage table."""
        agent = self.settings.agent
        return agent.environment == "minibugs" and bool(agent.candidates)

    @property
    def stop_targets(self) -> list[str]:
        return [*self.stop_results, *self.stop_paper_inputs]

    @property
    def stop_budget(self) -> dict[str, Any]:
        caps = self.settings.budgets.studies.get(self.stop.study)
        return caps.to_dict() if caps else {}

    # --- the storage forecast

    def storage_facts(self) -> PlanFacts:
        """The plan's segments, pruned segments and evaluations, read off its jobs."""
        return PlanFacts.from_jobs(self.jobs)

    # --- GPUs

    def gpus(self, rule: str, model: str | None = None) -> int:
        """GPUs a job of ``rule`` requests (the ``gpu`` resource and the cost table's GPU s)."""
        if rule in ("base_model", "probe") and model is not None:
            return self.settings.models[model].gpu
        if rule == "eval_model":
            return self.settings.evaluation.gpu
        if rule in ("training_pool", "train_segment", "control_replay"):
            return self.settings.training.gpu
        resources = self.settings.resources.get(rule)
        return int(resources.gpu or 0) if resources else 0

    def gpus_by_rule(self) -> dict[str, int]:
        """GPUs each rule requests, for the cost table's GPU seconds (resources.<rule>.gpu, the
        training and evaluation GPUs, the largest base model's for its rules)."""
        s = self.settings
        gpus = {name: int(r.gpu or 0) for name, r in s.resources.items()}
        gpus["train_segment"] = s.training.gpu
        gpus["control_replay"] = s.training.gpu
        model_gpus = max((m.gpu for m in s.models.values()), default=0)
        for name in ("base_model", "probe"):
            gpus.setdefault(name, model_gpus)
        gpus.setdefault("eval_model", s.evaluation.gpu)
        return gpus

    # --- every job

    @cached_property
    def jobs(self) -> tuple[Job, ...]:
        """Every job of the default target (rule ``all``), rule by rule."""
        return tuple(self._jobs())

    def _jobs(self) -> Iterator[Job]:
        s = self.settings
        for suite in s.suites:
            yield Job.of("freeze_suite", suite=suite)
            yield Job.of("control", suite=suite)
        base = s.models[s.training.model]
        self.check_base_model(s.training.model)
        yield Job.of(
            "base_model" if base.source == "train" else "import_model", model=s.training.model
        )
        yield Job.of("training_pool")
        for run in self.run_names:
            for step in self.segment_ends:
                yield Job.of("train_segment", run=run, step=step)
                yield Job.of("audit_params", run=run, step=step)
            for step in self.pruned_steps:
                yield Job.of("prune_segment", run=run, step=step)
        for seed in self.seeds:
            yield Job.of("control_replay", seed=seed)
        yield Job.of("audit_summary")
        yield Job.of("replay")
        yield Job.of("eval_plan")
        for model, evalset in self.eval_jobs:
            yield Job.of("eval_model", model=model, evalset=evalset)
            yield Job.of("eval_model_scores", model=model, evalset=evalset)
        for evalset in s.stats.evalsets:
            yield Job.of("evalset_scores", evalset=evalset)
        for comparison in self.comparisons:
            yield Job.of("paired", comparison=comparison)
            yield Job.of("compare", comparison=comparison)
        for arm in self.trained:
            yield Job.of("training_analysis", arm=arm)
        if self.stop.enabled:
            yield Job.of("freeze_protocol", study=self.stop.study)
            for model in self.stop.models:
                yield Job.of("stop_checkpoints", model=model)
            yield from (Job.of(r) for r in ("stop_policies", "stop_eval", "stop_report"))
        yield Job.of("credit_truth")
        yield Job.of("strata")
        if self.lists_candidates:
            yield Job.of("candidate_coverage")
        yield from (Job.of(r) for r in ("render_tables", "figures", "paper", "all"))

    #: rules whose jobs the cost table leaves out: the tables' own and what follows them, and
    #: the jobs that write no research output (retention, the training pool's screen)
    UNCOSTED = frozenset(
        {
            "candidate_coverage",
            "strata",
            "credit_truth",
            "render_tables",
            "figures",
            "paper",
            "all",
            "stop_report",
            "prune_segment",
            "training_pool",
        }
    )

    @property
    def costed_jobs(self) -> list[Job]:
        """The jobs whose benchmark files are the cost table's rows."""
        return [j for j in self.jobs if j.rule not in self.UNCOSTED]
