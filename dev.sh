#!/usr/bin/env bash
# Set-up and entry points for a fresh Debian machine (run as root, or with sudo available).
#   ./dev.sh setup   install system packages, start docker, create .venv, build the sandbox image
#   ./dev.sh run     setup, then the default pipeline (snakemake rule all)
#   ./dev.sh test    setup, then the fast tier: every test not marked long (-m "not long"; a -m
#                    of your own replaces it), the tests to run on every change (docs/testing.md)
#   ./dev.sh test-all  setup, then the whole suite, the long end-to-end tests included
#   ./dev.sh lint    ruff, snakefmt --check, snakemake --lint and mypy (setup first when .venv is missing)
#   ./dev.sh ci      setup, the four linters, then the whole suite (what .ci/run calls)
#   ./dev.sh slurm start|stop|status|env   a one-node SLURM on this machine (dev/slurm.sh)
set -euo pipefail
cd "$(dirname "$0")"

VENV=.venv
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"

log() { printf '[dev.sh] %s\n' "$*" >&2; }

need_apt() {
  local missing=()
  for pkg in "$@"; do dpkg -s "$pkg" >/dev/null 2>&1 || missing+=("$pkg"); done
  if [ ${#missing[@]} -gt 0 ]; then
    log "installing ${missing[*]}"
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}" >/dev/null
  fi
}

start_docker() {
  if docker info >/dev/null 2>&1; then return; fi
  if ! command -v dockerd >/dev/null 2>&1; then need_apt docker.io; fi
  log "starting dockerd"
  $SUDO sh -c 'nohup dockerd >/var/log/editcredit-dockerd.log 2>&1 &'
  for _ in $(seq 1 60); do
    docker info >/dev/null 2>&1 && return
    sleep 1
  done
  log "dockerd did not start; see /var/log/editcredit-dockerd.log"
  exit 1
}

# TeX for paper/main.pdf (rule paper): latexmk, pdflatex, booktabs and the Times fonts that
# paper/main.tex uses. Without recommends: 19 packages, ~53 MB download, ~160 MiB installed
# (need_apt installs recommends: 106 packages, ~101 MB download).
TEX_PACKAGES=(latexmk texlive-latex-base texlive-latex-recommended texlive-fonts-recommended)
need_tex() {
  local missing=()
  for pkg in "${TEX_PACKAGES[@]}"; do dpkg -s "$pkg" >/dev/null 2>&1 || missing+=("$pkg"); done
  if [ ${#missing[@]} -gt 0 ]; then
    log "installing TeX: ${missing[*]}"
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends \
      "${missing[@]}" >/dev/null
  fi
}

setup() {
  need_apt git debootstrap docker.io
  need_tex
  start_docker
  if [ ! -x "$VENV/bin/python" ]; then
    log "creating $VENV"
    python3 -m venv "$VENV"
  fi
  "$VENV/bin/pip" install -q --upgrade pip >/dev/null 2>&1 || true
  "$VENV/bin/pip" install -q -c requirements/constraints.txt -e '.[dev]' 2>&1 \
    | grep -v '^WARNING: Location' || true
  "$VENV/bin/python" -c 'import editcredit, snakemake' \
    || { log "python dependencies failed to install"; exit 1; }
  "$VENV/bin/editcredit" build-image
}

# The linters CI runs; each must be clean (DESIGN: ruff and snakefmt clean, snakemake --lint clean,
# mypy clean on src/editcredit with the strictness of pyproject.toml's [tool.mypy]).
lint() {
  log "ruff check"
  "$VENV/bin/ruff" check src tests benchmarks scripts
  log "snakefmt --check"
  "$VENV/bin/snakefmt" --check rules Snakefile
  log "snakemake --lint"
  "$VENV/bin/snakemake" --lint
  log "mypy"
  "$VENV/bin/mypy"
}

# Whether pytest's arguments choose markers themselves (then the fast tier's -m is not added).
chooses_markers() {
  local arg
  for arg in "$@"; do
    case "$arg" in -m | -m?* | --markexpr | --markexpr=*) return 0 ;; esac
  done
  return 1
}

case "${1:-}" in
  setup) setup ;;
  run) setup; shift; exec "$VENV/bin/snakemake" --cores 2 "$@" ;;
  test)
    setup; shift
    if chooses_markers "$@"; then exec "$VENV/bin/pytest" "$@"; fi
    exec "$VENV/bin/pytest" -m "not long" "$@" ;;
  test-all) setup; shift; exec "$VENV/bin/pytest" "$@" ;;
  lint) [ -x "$VENV/bin/snakemake" ] || setup; lint ;;
  ci) setup; lint; shift; exec "$VENV/bin/pytest" "$@" ;;
  slurm) shift; exec dev/slurm.sh "$@" ;;
  *) echo "usage: ./dev.sh setup|run|test|test-all|ci [extra args] | lint | slurm start|stop|status|env" >&2; exit 2 ;;
esac
