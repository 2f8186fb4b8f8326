rule freeze_suite:
    input:
        suite_sources,
    output:
        tasks=protected("data/frozen/{suite}/tasks.parquet"),
        manifest=protected("data/frozen/{suite}/manifest.json"),
    log:
        "logs/freeze_suite/{suite}.log",
    benchmark:
        "results/benchmarks/freeze_suite/{suite}.tsv"
    params:
        suite=suite_cfg,
        sandbox=config["sandbox"],
    resources:
        mem_mb=mem_mb("freeze_suite"),
        gpu=0,
    script:
        "../scripts/freeze_suite.py"
