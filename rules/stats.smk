# Statistics (METHOD §8-§9): scores, paired comparisons, the claim gate, training analyses.
# The gate thresholds reach rule compare only (as params), so changing them reruns only the
# gate, the tables and the paper.


rule evalset_scores:
    input:
        slots=lambda wc: PLAN.evalset_slots(wc.evalset),
    output:
        layout.STATS_SCORES,
    log:
        "logs/evalset_scores/{evalset}.log",
    benchmark:
        "results/benchmarks/evalset_scores/{evalset}.tsv"
    wildcard_constraints:
        evalset=names_regex(SETTINGS.stats.evalsets),
    conda:
        "../envs/editcredit.yaml"
    resources:
        gpu=0,
        mem_mb=mem_mb("evalset_scores", 2000),
    params:
        n_samples=lambda wc: PLAN.evalset_samples(wc.evalset),
    script:
        "../scripts/evalset_scores.py"


rule paired:
    input:
        slots=lambda wc: PLAN.comparison_slots(wc.comparison),
        segments=lambda wc: PLAN.segments(PLAN.comparisons[wc.comparison].runs),
    output:
        layout.STATS_PAIRED,
    log:
        "logs/paired/{comparison}.log",
    benchmark:
        "results/benchmarks/paired/{comparison}.tsv"
    wildcard_constraints:
        comparison=names_regex(PLAN.comparisons),
    conda:
        "../envs/editcredit.yaml"
    resources:
        gpu=0,
        mem_mb=mem_mb("paired", 2000),
    params:
        spec=comparison_params,
        n_samples=lambda wc: PLAN.evalset_samples(
            PLAN.comparisons[wc.comparison].evalset
        ),
        bootstrap=SETTINGS.stats.bootstrap.to_dict(),
        histogram_bins=SETTINGS.stats.histogram_bins,
    script:
        "../scripts/paired.py"


rule compare:
    input:
        layout.STATS_PAIRED,
    output:
        layout.STATS_COMPARE,
    log:
        "logs/compare/{comparison}.log",
    benchmark:
        "results/benchmarks/compare/{comparison}.tsv"
    wildcard_constraints:
        comparison=names_regex(PLAN.comparisons),
    conda:
        "../envs/editcredit.yaml"
    resources:
        gpu=0,
        mem_mb=mem_mb("compare", 1000),
    params:
        gate=SETTINGS.stats.gate.to_dict(),
    script:
        "../scripts/compare.py"


rule training_analysis:
    input:
        segments=lambda wc: PLAN.segments(PLAN.arm_runs(wc.arm)),
        controls=lambda wc: list(PLAN.arm_control_replays(wc.arm).values()),
    output:
        layout.STATS_TRAINING,
    log:
        "logs/training_analysis/{arm}.log",
    benchmark:
        "results/benchmarks/training_analysis/{arm}.tsv"
    wildcard_constraints:
        arm=names_regex(PLAN.trained),
    conda:
        "../envs/editcredit.yaml"
    resources:
        gpu=0,
        mem_mb=mem_mb("training_analysis", 2000),
    params:
        endpoint_step=SETTINGS.training.endpoint_step,
        failure_buckets=SETTINGS.stats.failure_buckets,
        encounter_k=SETTINGS.stats.encounter_k,
        bootstrap=SETTINGS.stats.bootstrap.to_dict(),
        controls=lambda wc: PLAN.arm_control_replays(wc.arm),
    script:
        "../scripts/training_analysis.py"


# The credit of the arms with a counterfactual query (B, M) against the known truth of their
# selected blocks (METHOD §9; editcredit.stats.credit_truth): their runs' ledgers and truth rows
# in, a result file and the paper's table with its sentence out.
from editcredit.stats.credit_truth import credit_truth_runs

CREDIT_TRUTH_JSON = "results/stats/credit_truth.json"
CREDIT_TRUTH_TABLE = "paper/tables/credit_truth.tex"


rule credit_truth:
    input:
        segments=PLAN.segments(credit_truth_runs(PLAN.arm_runs)),
        template=layout.TABLE_TEMPLATE.format(name="credit_truth"),
    output:
        json=CREDIT_TRUTH_JSON,
        tex=CREDIT_TRUTH_TABLE,
    log:
        "logs/credit_truth.log",
    benchmark:
        "results/benchmarks/credit_truth.tsv"
    conda:
        "../envs/editcredit.yaml"
    resources:
        gpu=0,
        mem_mb=mem_mb("credit_truth", 2000),
    script:
        "../scripts/credit_truth.py"


# M - B, M - O and the truth control T - O (where training.controls plans T) on the first eval
# set's single-bug and multi-bug tasks (the task records' bugs), with both CIs and the minimum
# detectable difference (editcredit.stats.strata): a result file and the paper's table. No
# claim gate reads it.
from editcredit.stats.strata import strata_specs

STRATA_JSON = "results/stats/strata.json"
STRATA_TABLE = "paper/tables/strata.tex"
STRATA_EVALSET = SETTINGS.stats.evalsets[0]
STRATA_SPECS = strata_specs(SETTINGS.training.plan, SETTINGS.training.controls)


rule strata:
    input:
        slots=list(
            dict.fromkeys(
                layout.eval_slots(m, STRATA_EVALSET)
                for spec in STRATA_SPECS
                for m in spec.all_models
            )
        ),
        tasks=layout.frozen_tasks(SETTINGS.evaluation.evalsets[STRATA_EVALSET].suite),
    output:
        json=STRATA_JSON,
        tex=STRATA_TABLE,
    log:
        "logs/strata.log",
    benchmark:
        "results/benchmarks/strata.tsv"
    conda:
        "../envs/editcredit.yaml"
    resources:
        gpu=0,
        mem_mb=mem_mb("strata", 2000),
    params:
        specs=[spec.to_dict() for spec in STRATA_SPECS],
        evalset=STRATA_EVALSET,
        n_samples=PLAN.evalset_samples(STRATA_EVALSET),
        bootstrap=SETTINGS.stats.bootstrap.to_dict(),
    script:
        "../scripts/strata.py"
