# The replay check: a hash-chosen sample of the study's stored gradings (every run's final
# patches and counterfactual trees) re-graded through the training grader and sandbox.


rule replay:
    input:
        segments=PLAN.segments(PLAN.run_names),
        tasks=layout.frozen_tasks(SETTINGS.training.suite),
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
        sandbox=SETTINGS.sandbox.to_dict(),
        grading=SETTINGS.grading.to_dict(),
        replay=SETTINGS.replay.to_dict(),
    script:
        "../scripts/replay.py"
