# The stop-or-continue study (METHOD §12) under its pre-registered protocol (METHOD §11):
# freeze the protocol, grade every decision point of the studied models' eval trajectories,
# fit the stop policies on the fit splits, evaluate them on the sealed split and apply the gate
# once, then the paper's section. Seals and gate records live under logs/seals/ (never outputs).


rule freeze_protocol:
    input:
        "config/protocols/{study}.yaml",
    output:
        layout.PROTOCOL_RECEIPT,
    log:
        "logs/freeze_protocol/{study}.log",
    benchmark:
        "results/benchmarks/freeze_protocol/{study}.tsv"
    wildcard_constraints:
        study="[A-Za-z0-9_-]+",
    conda:
        "../envs/editcredit.yaml"
    resources:
        gpu=0,
        mem_mb=mem_mb("freeze_protocol", 500),
    params:
        seal_dir="logs/seals",
    script:
        "../scripts/freeze_protocol.py"


rule stop_checkpoints:
    input:
        slots=lambda wc: PLAN.stop_slots(wc.model),
        tasks=[layout.frozen_tasks(s) for s in PLAN.stop.suites],
        gold_times=[layout.controls_tasks(s) for s in PLAN.stop.suites],
        # frozen before any label exists, without re-grading when the protocol is re-frozen
        receipt=ancient(PLAN.stop_receipt),
    output:
        checkpoints=layout.STOP_CHECKPOINTS,
        receipt=layout.STOP_CHECKPOINTS_RECEIPT,
    log:
        "logs/stop_checkpoints/{model}.log",
    benchmark:
        "results/benchmarks/stop_checkpoints/{model}.tsv"
    wildcard_constraints:
        model=names_regex(PLAN.stop.models),
    conda:
        "../envs/editcredit.yaml"
    threads: 2
    resources:
        gpu=0,
        mem_mb=mem_mb("stop_checkpoints", 4000),
    params:
        grading=SETTINGS.grading.to_dict(),
        sandbox=SETTINGS.sandbox.to_dict(),
        retries=SETTINGS.stop.retries,
    script:
        "../scripts/stop_checkpoints.py"


rule stop_policies:
    input:
        checkpoints=PLAN.stop_checkpoints,
        protocol=SETTINGS.stop.protocol,
        receipt=PLAN.stop_receipt,
    output:
        scores=layout.STOP_SCORES,
        policies=layout.STOP_POLICIES,
    log:
        "logs/stop_policies.log",
    benchmark:
        "results/benchmarks/stop_policies.tsv"
    conda:
        "../envs/editcredit.yaml"
    resources:
        gpu=0,
        mem_mb=mem_mb("stop_policies", 2000),
    script:
        "../scripts/stop_policies.py"


rule stop_eval:
    input:
        checkpoints=PLAN.stop_checkpoints,
        scores=layout.STOP_SCORES,
        policies=layout.STOP_POLICIES,
        protocol=SETTINGS.stop.protocol,
        receipt=PLAN.stop_receipt,
    output:
        layout.STOP_EVAL,
    log:
        "logs/stop_eval.log",
    benchmark:
        "results/benchmarks/stop_eval.tsv"
    conda:
        "../envs/editcredit.yaml"
    resources:
        gpu=0,
        mem_mb=mem_mb("stop_eval", 2000),
    params:
        seal_dir="logs/seals",
    script:
        "../scripts/stop_eval.py"


rule stop_report:
    input:
        eval=layout.STOP_EVAL,
        receipts=expand(layout.STOP_CHECKPOINTS_RECEIPT, model=PLAN.stop.models),
    output:
        section=layout.STOP_SECTION,
        figure_pdf=layout.STOP_FIGURE.format(ext="pdf"),
        figure_png=layout.STOP_FIGURE.format(ext="png"),
    log:
        "logs/stop_report.log",
    benchmark:
        "results/benchmarks/stop_report.tsv"
    conda:
        "../envs/editcredit.yaml"
    resources:
        gpu=0,
        mem_mb=mem_mb("stop_report", 2000),
    params:
        budget=PLAN.stop_budget,
    script:
        "../scripts/stop_report.py"
