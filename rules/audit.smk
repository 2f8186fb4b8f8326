# Parameter audits (METHOD §10): every segment checkpoint against the base and the previous one.


rule audit_params:
    input:
        ckpt=layout.SEGMENT,
        base=PLAN.base_model_dir,
        previous=lambda wc: PLAN.previous_segment(wc.run, wc.step),
    output:
        layout.AUDIT,
    log:
        "logs/audit_params/{run}/step_{step}.log",
    benchmark:
        "results/benchmarks/audit_params/{run}/step_{step}.tsv"
    conda:
        "../envs/editcredit.yaml"
    resources:
        gpu=0,
        mem_mb=mem_mb("audit_params", 2000),
    params:
        cfg=SETTINGS.audit.to_dict(),
        ckpt_model=lambda wc: PLAN.checkpoint_dir(wc.run, wc.step),
        previous_model=lambda wc: PLAN.checkpoint_dir(
            wc.run, PLAN.previous_step(wc.step)
        ),
        endpoint_step=SETTINGS.training.endpoint_step,
    script:
        "../scripts/audit_params.py"


rule audit_summary:
    input:
        expand(
            layout.AUDIT,
            run=PLAN.run_names,
            step=PLAN.segment_ends,
        ),
    output:
        layout.AUDIT_SUMMARY,
    log:
        "logs/audit_summary.log",
    benchmark:
        "results/benchmarks/audit_summary.tsv"
    conda:
        "../envs/editcredit.yaml"
    resources:
        gpu=0,
        mem_mb=mem_mb("audit_summary", 1000),
    script:
        "../scripts/audit_summary.py"
