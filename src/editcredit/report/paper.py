"""Compile ``paper/main.tex`` to ``paper/main.pdf`` with latexmk.

The build runs in a separate output directory (aux files never land in ``paper/``) with a fixed
``SOURCE_DATE_EPOCH``, so the same sources give the same PDF bytes. When TeX is missing the
error says how to get it; the tables and figures are produced by their own rules regardless.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

__all__ = ["TEX_PACKAGES", "TexMissingError", "build_pdf", "log_warnings"]

#: The Debian packages ``./dev.sh setup`` installs (with ``--no-install-recommends``).
TEX_PACKAGES = (
    "latexmk",
    "texlive-latex-base",
    "texlive-latex-recommended",
    "texlive-fonts-recommended",
)

#: 2026-01-01T00:00:00Z: the PDF's creation date, fixed for reproducible bytes.
SOURCE_DATE_EPOCH = "1767225600"

#: Seconds one latexmk run may take before the build fails (not a setting: the paper compiles
#: in seconds, and a run that hangs on a TeX prompt should stop rather than hold the job).
COMPILE_TIMEOUT_S = 300.0


class TexMissingError(RuntimeError):
    """latexmk or pdflatex is not installed."""


def _missing_message(tool: str) -> str:
    return (
        f"{tool} was not found, so paper/main.pdf cannot be compiled. Install TeX with "
        "`./dev.sh setup` (it runs: apt-get install --no-install-recommends "
        f"{' '.join(TEX_PACKAGES)}), or install latexmk and a TeX Live with booktabs on PATH. "
        "The tables (paper/tables/*.tex) and figures (paper/figures/) are already produced."
    )


def log_warnings(log_text: str) -> list[str]:
    """Lines of a LaTeX log worth reporting: overfull boxes, undefined references, errors."""
    keep = re.compile(r"Overfull \\hbox|undefined|^! |Warning: Reference|Warning: Citation")
    return [line for line in log_text.splitlines() if keep.search(line)]


def build_pdf(
    tex: str | Path,
    pdf: str | Path,
    build_dir: str | Path,
    *,
    latexmk: str,
) -> list[str]:
    """Compile ``tex`` (run in its own directory) with ``latexmk`` (config ``paper.latexmk``)
    and copy the PDF to ``pdf``.

    Returns the warnings of the final LaTeX log (:func:`log_warnings`).

    Raises:
        TexMissingError: latexmk or pdflatex is not on PATH (the message says how to get them).
        RuntimeError: the compilation failed; the message holds the end of the log.
    """
    for tool in (latexmk, "pdflatex"):
        if shutil.which(tool) is None:
            raise TexMissingError(_missing_message(tool))
    tex, pdf, build_dir = Path(tex).resolve(), Path(pdf).resolve(), Path(build_dir).resolve()
    build_dir.mkdir(parents=True, exist_ok=True)
    cmd = [
        latexmk,
        "-pdf",
        "-interaction=nonstopmode",
        "-halt-on-error",
        "-file-line-error",
        f"-outdir={build_dir}",
        tex.name,
    ]
    env = {**os.environ, "SOURCE_DATE_EPOCH": SOURCE_DATE_EPOCH, "FORCE_SOURCE_DATE": "1"}
    proc = subprocess.run(
        cmd, cwd=tex.parent, env=env, capture_output=True, text=True, timeout=COMPILE_TIMEOUT_S
    )
    log_path = build_dir / f"{tex.stem}.log"
    log_text = log_path.read_text(errors="replace") if log_path.exists() else ""
    built = build_dir / f"{tex.stem}.pdf"
    if proc.returncode != 0 or not built.exists():
        tail = "\n".join((log_text or proc.stdout + proc.stderr).splitlines()[-40:])
        raise RuntimeError(f"latexmk failed on {tex} (exit {proc.returncode}):\n{tail}")
    pdf.parent.mkdir(parents=True, exist_ok=True)
    tmp = pdf.with_name(f".{pdf.name}.tmp")
    shutil.copyfile(built, tmp)
    tmp.replace(pdf)
    return log_warnings(log_text)
