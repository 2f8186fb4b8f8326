# Evaluation (METHOD §8): the slot plan, one job per model x eval set (generation batched
# across tasks, grading with the attempt ledger, resumable), scores with bounds.


rule eval_plan:
    input:
        unpack(eval_plan_pool),
        tasks=PLAN.eval_plan_tasks,
    output:
        plan=layout.EVAL_PLAN,
        summary=layout.EVAL_PLAN_SUMMARY,
    log:
        "logs/eval_plan.log",
    benchmark:
        "results/benchmarks/eval_plan.tsv"
    conda:
        "../envs/editcredit.yaml"
    resources:
        gpu=0,
        mem_mb=mem_mb("eval_plan", 2000),
    params:
        models={n: m.plan_record() for n, m in PLAN.eval_models.items()},
        evalsets={n: e.to_dict() for n, e in SETTINGS.evaluation.evalsets.items()},
    script:
        "../scripts/eval_plan.py"


rule eval_model:
    input:
        plan=layout.EVAL_PLAN,
        model=lambda wc: PLAN.eval_models[wc.model].input,
        tasks=lambda wc: layout.frozen_tasks(
            SETTINGS.evaluation.evalsets[wc.evalset].suite
        ),
        gold_times=lambda wc: layout.controls_tasks(
            SETTINGS.evaluation.evalsets[wc.evalset].suite
        ),
    output:
        slots=layout.EVAL_SLOTS,
        predictions=directory(layout.EVAL_PREDICTIONS),
    log:
        "logs/eval_model/{model}/{evalset}.log",
    benchmark:
        "results/benchmarks/eval_model/{model}/{evalset}.tsv"
    wildcard_constraints:
        model=names_regex(PLAN.eval_models),
    conda:
        "../envs/editcredit.yaml"
    threads: 2
    resources:
        gpu=PLAN.gpus("eval_model"),
        gpu_mem_mb=gpu_mem_mb("eval_model"),
        mem_mb=mem_mb("eval_model", 6000),
    params:
        model_dir=lambda wc: PLAN.eval_models[wc.model].dir,
        settings=job_settings(EvalModelSettings),
    script:
        "../scripts/eval_model.py"


rule eval_model_scores:
    input:
        slots=layout.EVAL_SLOTS,
        plan=layout.EVAL_PLAN,
    output:
        layout.EVAL_SCORES,
    log:
        "logs/eval_model_scores/{model}/{evalset}.log",
    benchmark:
        "results/benchmarks/eval_model_scores/{model}/{evalset}.tsv"
    wildcard_constraints:
        model=names_regex(PLAN.eval_models),
    conda:
        "../envs/editcredit.yaml"
    resources:
        gpu=0,
        mem_mb=mem_mb("eval_model_scores", 1000),
    script:
        "../scripts/eval_model_scores.py"
