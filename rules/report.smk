# The paper: tables (jinja2 -> paper/tables/*.tex), figures, and paper/main.pdf (latexmk).

# The share of each suite's tasks whose gold fix is on the environment's candidate list
# (editcredit.agent.candidate_coverage): a result file and the paper's table beside the others.
# The paper takes the table for a study whose environment lists candidates (the minibugs
# environment with agent.candidates), and none in a partial Snakefile without rule freeze_suite
# (its suites' frozen tasks are not that workflow's to make).
CANDIDATE_COVERAGE = "results/report/candidate_coverage.json"
CANDIDATE_TABLE = "paper/tables/candidates.tex"


rule candidate_coverage:
    input:
        tasks=[layout.frozen_tasks(suite) for suite in SETTINGS.suites],
    output:
        json=CANDIDATE_COVERAGE,
        tex=CANDIDATE_TABLE,
    log:
        "logs/candidate_coverage.log",
    benchmark:
        "results/benchmarks/candidate_coverage.tsv"
    conda:
        "../envs/editcredit.yaml"
    resources:
        gpu=0,
        mem_mb=mem_mb("candidate_coverage", 1000),
    params:
        suites=list(SETTINGS.suites),
        try_scope=SETTINGS.agent.try_scope,
    script:
        "../scripts/candidate_coverage.py"


rule render_tables:
    input:
        controls=PLAN.suite_summaries,
        scores=PLAN.stats_results("scores"),
        comparisons=PLAN.stats_results("compare"),
        training=PLAN.stats_results("training"),
        audits=PLAN.audit_results,
        benchmarks=cost_benchmarks,
        templates=paper_tables("tex.j2"),
        segments=PLAN.endpoint_segments,  # budget ledgers, and their volatile sidecars: seconds
        stop=PLAN.stop_results,  # the stop study's rules are in the cost table
        replay=layout.REPLAY_SUMMARY,  # the reproducibility section's replay check
        slots=PLAN.eval_slots,  # the appendix table of unresolved slots
    output:
        paper_tables(),
    log:
        "logs/render_tables.log",
    benchmark:
        "results/benchmarks/render_tables.tsv"
    conda:
        "../envs/editcredit.yaml"
    resources:
        gpu=0,
        mem_mb=mem_mb("render_tables", 1000),
    params:
        settings=tables_settings(),
        template_dir=lambda wc, input: str(Path(input.templates[0]).parent),
        out_dir=lambda wc, output: str(Path(output[0]).parent),
        benchmark_root=layout.BENCHMARKS,
    script:
        "../scripts/render_tables.py"


rule figures:
    input:
        training=PLAN.stats_results("training"),
        paired=PLAN.stats_results("paired"),
        curve=PLAN.curve_scores,  # base, intermediate checkpoints, endpoints on the first eval set
    output:
        **{
            f"{name}_{ext}": report(
                layout.PAPER_FIGURE.format(name=name, ext=ext),
                caption=f"../paper/report/{name}.rst",
                category="Figures",
                labels={"figure": name, "format": ext},
            )
            for name in PAPER_FIGURES
            for ext in ("pdf", "png")
        },
    log:
        "logs/figures.log",
    benchmark:
        "results/benchmarks/figures.tsv"
    conda:
        "../envs/editcredit.yaml"
    resources:
        gpu=0,
        mem_mb=mem_mb("figures", 2000),
    params:
        main=SETTINGS.stats.main,
    script:
        "../scripts/figures.py"


rule paper:
    input:
        tex=layout.PAPER_TEX,
        tables=paper_tables(),
        figures=expand(layout.PAPER_FIGURE, name=PAPER_FIGURES, ext="pdf"),
        stop=PLAN.stop_paper_inputs,
        credit_truth=CREDIT_TRUTH_TABLE,  # rule credit_truth (rules/stats.smk)
        strata=STRATA_TABLE,  # rule strata (rules/stats.smk): comparisons by number of bugs
        candidates=lambda wc: (
            [CANDIDATE_TABLE]
            if PLAN.lists_candidates and rules.has("freeze_suite")
            else []
        ),
    output:
        report(
            layout.PAPER_PDF,
            caption="../paper/report/paper.rst",
            category="Paper",
        ),
    log:
        "logs/paper.log",
    benchmark:
        "results/benchmarks/paper.tsv"
    conda:
        "../envs/editcredit.yaml"
    resources:
        gpu=0,
        mem_mb=mem_mb("paper", 2000),
    params:
        latexmk=SETTINGS.paper.latexmk,
        build_dir="build/paper",
    script:
        "../scripts/paper.py"
