"""Rule paper: compile paper/main.tex to paper/main.pdf with latexmk."""

import sys

from editcredit.report.jobs import paper_job
from editcredit.report.paper import TexMissingError
from editcredit.workflow import logged

try:
    with logged(snakemake.log[0]):  # noqa: F821 - injected by Snakemake
        paper_job(
            tex=snakemake.input.tex,  # noqa: F821
            pdf=snakemake.output[0],  # noqa: F821
            build_dir=snakemake.params.build_dir,  # noqa: F821
            latexmk=snakemake.params.latexmk,  # noqa: F821
        )
except TexMissingError as exc:  # say how to get TeX on the console, not only in the log
    sys.stderr.write(f"rule paper: {exc}\n")
    raise SystemExit(1) from None
