rule training_pool:
    input:
        base=PLAN.base_model_dir,
        tasks=layout.frozen_tasks(SETTINGS.training.suite),
        controls=layout.controls_summary(SETTINGS.training.suite),
        gold_times=layout.controls_tasks(SETTINGS.training.suite),
    output:
        pool=layout.TRAINING_POOL,
        screen=layout.TRAINING_POOL_SCREEN,
    log:
        "logs/training_pool.log",
    benchmark:
        "results/benchmarks/training_pool.tsv"
    conda:
        "../envs/editcredit.yaml"
    threads: 2
    resources:
        gpu=PLAN.gpus("training_pool"),
        gpu_mem_mb=gpu_mem_mb("training_pool"),
        mem_mb=mem_mb("training_pool", 8000),
    params:
        settings=job_settings(PoolJobSettings),
    script:
        "../scripts/training_pool.py"


rule train_segment:
    input:
        previous=lambda wc: PLAN.previous_segment(wc.run, wc.step),
        tasks=layout.frozen_tasks(SETTINGS.training.suite),
        controls=layout.controls_summary(SETTINGS.training.suite),
        gold_times=layout.controls_tasks(SETTINGS.training.suite),
        pool=layout.TRAINING_POOL,
    output:
        segment=protected(directory(layout.SEGMENT)),
    log:
        "logs/train_segment/{run}/step_{step}.log",
    benchmark:
        "results/benchmarks/train_segment/{run}/step_{step}.tsv"
    # a run's segments are a chain on the study's longest path: where jobs outnumber the free
    # slots (a GPU box), a ready segment goes before evaluations and replays (without it
    # Snakemake prefers the jobs with the larger inputs: docs/scale.md)
    priority: 10
    conda:
        "../envs/editcredit.yaml"
    threads: 2
    resources:
        gpu=PLAN.gpus("train_segment"),
        gpu_mem_mb=gpu_mem_mb("train_segment"),
        mem_mb=mem_mb("train_segment", 8000),
    params:
        settings=job_settings(SegmentSettings),
    script:
        "../scripts/train_segment.py"


rule control_replay:
    input:
        base=PLAN.base_model_dir,
        tasks=layout.frozen_tasks(SETTINGS.training.suite),
        controls=layout.controls_summary(SETTINGS.training.suite),
        gold_times=layout.controls_tasks(SETTINGS.training.suite),
        pool=layout.TRAINING_POOL,
    output:
        rollouts=layout.CONTROL_REPLAY,
        receipt=layout.CONTROL_REPLAY_RECEIPT,
    log:
        "logs/control_replay/s{seed}.log",
    benchmark:
        "results/benchmarks/control_replay/s{seed}.tsv"
    wildcard_constraints:
        seed=r"\d+",
    conda:
        "../envs/editcredit.yaml"
    threads: 2
    resources:
        gpu=PLAN.gpus("control_replay"),
        gpu_mem_mb=gpu_mem_mb("control_replay"),
        mem_mb=mem_mb("control_replay", 8000),
    params:
        settings=job_settings(ControlReplaySettings),
    script:
        "../scripts/control_replay.py"
