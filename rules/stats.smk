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
