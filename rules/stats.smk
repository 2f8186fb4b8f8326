# Statistics (METHOD §8-§9): scores, paired comparisons, the claim gate, training analyses.
# The gate thresholds reach rule compare only (as params), so changing them reruns only the
# gate, the tables and the paper.


rule evalset_scores:
    input:
        slots=evalset_slots,
    output:
        layout.STATS_SCORES,
    log:
        "logs/evalset_scores/{evalset}.log",
    benchmark:
        "results/benchmarks/evalset_scores/{evalset}.tsv"
    wildcard_constraints:
        evalset=names_regex(config["stats"]["evalsets"]),
    conda:
        "../envs/editcredit.yaml"
    resources:
        gpu=0,
        mem_mb=mem_mb("evalset_scores", 2000),
    params:
        n_samples=lambda wc: evalset_samples(wc.evalset),
    script:
        "../scripts/stats_scores.py"


rule paired:
    input:
        slots=comparison_slots,
        segments=comparison_segments,
    output:
        layout.STATS_PAIRED,
    log:
        "logs/paired/{comparison}.log",
    benchmark:
        "results/benchmarks/paired/{comparison}.tsv"
    wildcard_constraints:
        comparison=names_regex(config["stats"]["comparisons"]),
    conda:
        "../envs/editcredit.yaml"
    resources:
        gpu=0,
        mem_mb=mem_mb("paired", 2000),
    params:
        spec=comparison_params,
        n_samples=lambda wc: evalset_samples(comparison_params(wc)["evalset"]),
        bootstrap=config["stats"]["bootstrap"],
        histogram_bins=config["stats"]["histogram_bins"],
    script:
        "../scripts/stats_paired.py"


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
        comparison=names_regex(config["stats"]["comparisons"]),
    conda:
        "../envs/editcredit.yaml"
    resources:
        gpu=0,
        mem_mb=mem_mb("compare", 1000),
    params:
        gate=config["stats"]["gate"],
    script:
        "../scripts/stats_compare.py"


rule training_analysis:
    input:
        segments=arm_segments,
        controls=lambda wc: list(arm_control_replays(wc).values()),
    output:
        layout.STATS_TRAINING,
    log:
        "logs/training_analysis/{arm}.log",
    benchmark:
        "results/benchmarks/training_analysis/{arm}.tsv"
    wildcard_constraints:
        arm=names_regex(config["training"]["plan"]),
    conda:
        "../envs/editcredit.yaml"
    resources:
        gpu=0,
        mem_mb=mem_mb("training_analysis", 2000),
    params:
        endpoint_step=config["training"]["endpoint_step"],
        failure_buckets=config["stats"]["failure_buckets"],
        encounter_k=config["stats"]["encounter_k"],
        bootstrap=config["stats"]["bootstrap"],
        controls=arm_control_replays,
    script:
        "../scripts/stats_training.py"
