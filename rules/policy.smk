rule base_model:
    input:
        tasks=base_model_tasks,
        corpus=base_model_corpus,
        controls=base_model_controls,
        gold_times=base_model_gold_times,
    output:
        model=protected(directory(layout.BASE_MODEL)),
    log:
        "logs/base_model/{model}.log",
    benchmark:
        "results/benchmarks/base_model/{model}.tsv"
    wildcard_constraints:
        model=models_from("train"),
    conda:
        "../envs/editcredit.yaml"
    threads: 2
    resources:
        gpu=model_gpus,
        gpu_mem_mb=gpu_mem_mb("base_model"),
        mem_mb=mem_mb("base_model", 6000),
    params:
        model=model_cfg,
        agent=config["agent"],
        sandbox=config["sandbox"],
    script:
        "../scripts/base_model.py"


rule import_model:
    output:
        model=protected(directory(layout.BASE_MODEL)),
    log:
        "logs/import_model/{model}.log",
    benchmark:
        "results/benchmarks/import_model/{model}.tsv"
    wildcard_constraints:
        model=models_from("import"),
    conda:
        "../envs/editcredit.yaml"
    resources:
        gpu=0,
        mem_mb=mem_mb("import_model", 2000),
    params:
        model=model_cfg,
    script:
        "../scripts/import_model.py"


rule probe:
    input:
        model=layout.BASE_MODEL,
        tasks=probe_tasks,
        gold_times=probe_gold_times,
    output:
        probe=layout.PROBE,
        trajectories=layout.PROBE_TRAJECTORIES,
    log:
        "logs/probe/{model}.log",
    benchmark:
        "results/benchmarks/probe/{model}.tsv"
    conda:
        "../envs/editcredit.yaml"
    threads: 2
    resources:
        gpu=model_gpus,
        gpu_mem_mb=gpu_mem_mb("probe"),
        mem_mb=mem_mb("probe", 6000),
    params:
        settings=job_settings(ProbeJobSettings),
    script:
        "../scripts/probe.py"
