# Retention of intermediate checkpoints (training.keep_checkpoints; docs/design.md "Storage"):
# a segment's model and optimiser files go once the next segment and its audits exist; the
# segment directory stays, so the DAG still sees it built.


rule prune_segment:
    input:
        unpack(lambda wc: PLAN.prune_inputs(wc.run, wc.step)),
    output:
        layout.PRUNED,
    log:
        "logs/prune_segment/{run}/step_{step}.log",
    benchmark:
        "results/benchmarks/prune_segment/{run}/step_{step}.tsv"
    priority: 50
    localrule: True
    conda:
        "../envs/editcredit.yaml"
    resources:
        gpu=0,
        mem_mb=mem_mb("prune_segment", 500),
    script:
        "../scripts/prune_segment.py"
