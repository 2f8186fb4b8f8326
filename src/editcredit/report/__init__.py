"""The paper's generated parts: LaTeX tables (jinja2), text numbers, figures, the PDF build.

Reads result files only (JSON records of ``results/stats``, the controls, the audits, Snakemake
benchmark files); no models, no sandboxes.

- :mod:`~editcredit.report.latex`: escaping, number formats, the jinja2 environment, and the
  ``% editcredit-provenance: {json}`` first line of every generated .tex file.
- :mod:`~editcredit.report.context`: the rows each table prints.
- :mod:`~editcredit.report.numbers`: the ``\\ecnum{key}`` macros the text quotes.
- :mod:`~editcredit.report.costs`: cost per rule from benchmark files.
- :mod:`~editcredit.report.tables`: renders every table.
- :mod:`~editcredit.report.figures`: training curves, task differences, bootstrap distribution.
- :mod:`~editcredit.report.paper`: latexmk.
"""
