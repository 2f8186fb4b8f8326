rule base_model:
    input:
        tasks=lambda wc: trained_suite(wc, layout.frozen_tasks),
        corpus=lambda wc: [
            layout.frozen_tasks(s)
            for s in SETTINGS.models[wc.model].corpus_suites or []
        ],
        controls=lambda wc: trained_suite(wc, layout.controls_summary),
        gold_times=lambda wc: trained_suite(wc, layout.controls_tasks),
    output:
        model=protected(directory(layout.BASE_MODEL)),
    log:
        "logs/base_model/{model}.log",
    benchmark:
        "results/benchmarks/base_model/{model}.tsv"
    wildcard_constraints:
        model=names_regex(n for n, m in SETTINGS.models.items() if m.source == "train"),
    conda:
        "../envs/editcredit.yaml"
    threads: 2
    resources:
        gpu=lambda wc: PLAN.gpus("base_model", wc.model),
        gpu_mem_mb=gpu_mem_mb("base_model"),
        mem_mb=mem_mb("base_model", 6000),
    params:
        model=lambda wc: SETTINGS.models[wc.model].to_dict(),
        agent=SETTINGS.agent.to_dict(),
        sandbox=SETTINGS.sandbox.to_dict(),
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
        model=names_regex(n for n, m in SETTINGS.models.items() if m.source == "import"),
    conda:
        "../envs/editcredit.yaml"
    resources:
        gpu=0,
        mem_mb=mem_mb("import_model", 2000),
    params:
        model=lambda wc: SETTINGS.models[wc.model].to_dict(),
    script:
        "../scripts/import_model.py"


rule probe:
    input:
        model=layout.BASE_MODEL,
        tasks=lambda wc: layout.frozen_tasks(probe_suite(wc)),
        gold_times=lambda wc: layout.controls_tasks(probe_suite(wc)),
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
        gpu=lambda wc: PLAN.gpus("probe", wc.model),
        gpu_mem_mb=gpu_mem_mb("probe"),
        mem_mb=mem_mb("probe", 6000),
    params:
        settings=job_settings(ProbeJobSettings),
    script:
        "../scripts/probe.py"
