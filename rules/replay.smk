# The replay check: a hash-chosen sample of the study's stored gradings (every run's final
# patches and counterfactual trees) re-graded through the training grader and sandbox.


rule replay:
    input:
        segments=replay_segments(),
        tasks=training_tasks_file,
    output:
        summary=layout.REPLAY_SUMMARY,
    log:
        "logs/replay.log",
    benchmark:
        "results/benchmarks/replay.tsv"
    conda:
        "../envs/editcredit.yaml"
    resources:
        gpu=0,
        mem_mb=mem_mb("replay", 2000),
    params:
        sandbox=config["sandbox"],
        grading=config["grading"],
        replay=config["replay"],
    script:
        "../scripts/replay.py"
