#!/usr/bin/env bash
# The GPU-box measurements of docs/scale.md ("Profiles and GPUs") on a lent GPU machine with
# Python and PyTorch but no Snakemake, docker or TeX. Run from the repository root with the
# missing packages as wheels in .whl/, the frozen suite in data/frozen/ (frozen here, where
# docker is) and its freeze's benchmark in results/benchmarks/freeze_suite/; OUT is where the
# figures go.
#
#   dev/gpu_box.sh bench OUT     # the evaluation job's generation against its bandwidth bound
#   dev/gpu_box.sh phases OUT    # its process's whole memory per phase, and the suspects of
#                                # what lies outside the allocator (docs/scale.md)
#   dev/gpu_box.sh study OUT     # start the documented GPU-box command (in the background);
#                                # GPU_BOX_CONFIGS replaces its config files, e.g. with
#                                # the multi-bug presets layered over gpu-box.yaml
#   dev/gpu_box.sh wait S OUT    # wait up to S seconds for it, then copy what it measured
#                                # (and every minute meanwhile)
#   dev/gpu_box.sh grading OUT [TAR]  # a warm local grading's cost under this box's interpreter
#                                # (bench_grading.py --backend local --gold-known) and, with
#                                # TAR (a `git archive` of another commit), bench_local_grading.py
#                                # against that commit, side by side
#
# Here, `python dev/gpu_box_summary.py OUT` turns what `wait` brought back into the per-rule
# table and the card's figures docs/scale.md quotes, and `python dev/gpu_box_restats.py DIR`
# (DIR: where OUT/computed.tar.gz was unpacked) recomputes its paired statistics here.
#
# The study runs with --keep-going: a failed job stops only what depends on it, so one run
# measures every other job (the profile's keep-going: false is for studies, not measurements).
set -euo pipefail
what=$1
shift
STATE=/tmp/gpu_box
mkdir -p "$STATE"
if [ ! -f "$STATE/installed" ]; then
    python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
        --target /tmp/site .whl/*.whl
    # The frozen suite is carried, not frozen here (a freeze on this box, Python 3.12 and the
    # local sandbox, gave another manifest than the pinned one): its files must be newer than
    # their sources, whatever this box's clock says of the copy's times, and its benchmark file
    # (an output to Snakemake 9) must come with it from where it was frozen.
    find . \( -path ./data/frozen -o -path ./.whl \) -prune -o -exec touch -h -d 2000-01-01 {} +
    touch data/frozen/*/*
    for suite in data/frozen/*/; do
        bench=results/benchmarks/freeze_suite/$(basename "$suite").tsv
        if [ -f "$bench" ]; then
            touch "$bench"
        else
            echo "no $bench carried with $suite: a study that uses it freezes it again" >&2
        fi
    done
    touch "$STATE/installed"
fi
export PYTHONPATH=/tmp/site:$PWD/src PYTHONUNBUFFERED=1

collect() {
    local out=$1
    cp "$STATE/study.log" "$out/study.log" 2>/dev/null || true
    cp "$STATE/study.log" "$out/study.txt" 2>/dev/null || true
    cp "$STATE/smi.csv" "$out/smi.csv" 2>/dev/null || true
    cp "$STATE/apps.csv" "$out/apps.csv" 2>/dev/null || true
    cp "$STATE/cpu.log" "$out/cpu.log" 2>/dev/null || true
    cp "$STATE/ps.log" "$out/ps.log" 2>/dev/null || true
    # GPU-holding seconds per job (Snakemake's benchmark files), one line each
    find results/benchmarks -name '*.tsv' 2>/dev/null | sort | while read -r f; do
        printf '%s\t%s\n' "$f" "$(tail -n 1 "$f")"
    done >"$out/benchmarks.tsv"
    grep -h "GPU memory of" "$STATE/study.log" >"$out/gpu_peaks.txt" 2>/dev/null || true
    # every job's log, and what the study computed
    tar -czf "$out/logs.tar.gz" logs 2>/dev/null || true
    # (statistics, stop study, audits, training records, evaluation scores and slots, the
    # controls' verdicts, the tables, each segment's rollouts): the verdicts and statistics a CPU
    # run's can be compared with, and what dev/gpu_box_restats.py recomputes the statistics from
    find results/stats results/stop results/audits results/training paper/tables \
        results/eval results/controls -name scores.json -o -name slots.parquet \
        -o -name '*.json' -not -path 'results/eval/*/*/*' \
        -o -name '*.tsv' -o -name '*.tex' -o -name '*.csv' 2>/dev/null |
        cat - <(find runs -path '*/step_*/rollouts.parquet' 2>/dev/null) |
        tar -czf "$out/computed.tar.gz" -T - 2>/dev/null || true
}

case $what in
bench)
    out=$1
    nvidia-smi --query-gpu=name,memory.total --format=csv,noheader
    python3 -m editcredit.policy.gpu_box
    (cd benchmarks && python3 bench_gpu_generation.py --eval-job --episodes 512 --out "$out")
    ;;
grading)
    out=$1 against=${2:-}
    python3 -c "import sys; print(sys.executable, sys.version)"
    python3 benchmarks/bench_grading.py --tasks 60 --workers 2 --backend local --gold-known
    cp benchmarks/out/grading_local_gold_known.json "$out/"
    if [ -n "$against" ]; then
        rm -rf /tmp/gpu_box_against && mkdir -p /tmp/gpu_box_against
        tar -xf "$against" -C /tmp/gpu_box_against
        python3 benchmarks/bench_local_grading.py --against /tmp/gpu_box_against --rounds 2
        cp benchmarks/out/local_grading_against.json "$out/"
    fi
    ;;
phases)
    out=$1
    nvidia-smi --query-gpu=name,memory.total,memory.used --format=csv,noheader
    cd benchmarks
    b="python3 bench_gpu_generation.py --eval-job --phases --episodes 512 --out $out"
    $b --name phases
    CUDA_MODULE_LOADING=EAGER $b --skip-update --name phases_eager_modules
    CUBLAS_WORKSPACE_CONFIG=:16:8 $b --skip-update --name phases_small_cublas
    $b --skip-update --max-graphs 2 --name phases_two_graphs
    $b --skip-update --max-graphs 2 --stream-per-capture --name phases_stream_per_capture
    ;;
study)
    out=$1
    # GPU_BOX_RESOURCES stands in for the box's own line, e.g. an 80 GB card's
    # "gpu=32 gpu_mem_mb=81047" on a larger card
    resources=${GPU_BOX_RESOURCES:-$(python3 -m editcredit.policy.gpu_box)}
    configs=${GPU_BOX_CONFIGS:-config/presets/gpu-box.yaml config/presets/tiny-large.yaml}
    echo "resources: $resources; configs: $configs"
    setsid nohup nvidia-smi --query-gpu=timestamp,utilization.gpu,memory.used \
        --format=csv -lms 1000 >"$STATE/smi.csv" 2>&1 &
    setsid nohup nvidia-smi --query-compute-apps=timestamp,pid,used_memory \
        --format=csv -lms 2000 >"$STATE/apps.csv" 2>&1 &
    # the box's CPUs every 2 s: the load average and the first line of /proc/stat (cumulative
    # jiffies; differences give the busy share), to tell whether its cores are the bound
    setsid nohup bash -c 'while :; do echo "$(date +%s) $(cut -d" " -f1-3 /proc/loadavg) \
        $(head -n 1 /proc/stat)"; sleep 2; done' >"$STATE/cpu.log" 2>&1 &
    # which processes hold those cores, every 10 s: the busiest 25 by recent CPU share
    setsid nohup bash -c 'while :; do echo "== $(date +%s)"; ps -eo pcpu,cputime,rss,args \
        --sort=-pcpu | head -n 26 | cut -c1-200; sleep 10; done' >"$STATE/ps.log" 2>&1 &
    # shellcheck disable=SC2086  # the resources are two words
    setsid nohup bash -c "start=\$(date +%s); python3 -m snakemake --cores 16 \
        --workflow-profile profiles/gpu --resources $resources \
        --configfile $configs \
        --omit-from paper --keep-going; echo \"snakemake rc=\$? wall=\$(( \$(date +%s) - start ))s\"" \
        >"$STATE/study.log" 2>&1 &
    sleep 5
    tail -n 5 "$STATE/study.log"
    ;;
wait)
    limit=$1 out=$2
    end=$(($(date +%s) + limit))
    # what it measured so far is copied every minute: a call cut by the device's time limit
    # (less device time left than asked) still brings back the last copy
    next_copy=$(($(date +%s) + 60))
    while [ "$(date +%s)" -lt "$end" ] && ! grep -q "snakemake rc=" "$STATE/study.log"; do
        sleep 5
        if [ "$(date +%s)" -ge "$next_copy" ]; then
            collect "$out"
            next_copy=$(($(date +%s) + 60))
        fi
    done
    collect "$out"
    grep -E "snakemake rc=|steps \(|Error|error" "$STATE/study.log" | tail -n 20 || true
    tail -n 3 "$STATE/study.log"
    ;;
*)
    echo "usage: dev/gpu_box.sh bench|grading|phases|study|wait ..." >&2
    exit 2
    ;;
esac
