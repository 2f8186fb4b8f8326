"""Rule stop_report: the paper's stop-policy section (table, text) and the success-cost figure."""

from editcredit.report.stop import stop_report_job
from editcredit.workflow import logged

sm = snakemake  # noqa: F821 - injected by Snakemake
with logged(sm.log[0]):
    stop_report_job(
        eval_path=sm.input.eval,
        receipts=list(sm.input.receipts),
        budget=sm.params.budget,
        out_section=sm.output.section,
        out_pdf=sm.output.figure_pdf,
        out_png=sm.output.figure_png,
        config=sm.config,
    )
