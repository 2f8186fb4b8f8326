"""Which recipe makes a base policy that solves bugs it never saw? Trains one tiny base per
variant on one expert corpus and probes each on the train and dev splits (the figures design
choices are tuned on; the holdout is reported by rule ``probe``, never tuned on: METHOD §11).

The corpus is played once per corpus setting (the experts, the agent, the suite) and kept under
the output directory by the hash of those settings, so variants that change only the fit (SFT,
architecture, tokenizer, renames) share it. Needs the frozen suite and its controls
(``snakemake --cores 2 results/controls/minibugs/summary.json``). Usage::

    python benchmarks/bench_base_variants.py \\
        --variant default \\
        --variant "obs0 models.tiny.sft.observation_loss_weight=0.0" \\
        [--set sandbox.backend=local ...] [--jobs 2] [--train-tasks 40] [--samples 2]
        [--dev-samples 4] [--gpus 0] [--fit-only]

``--variant "NAME KEY=VALUE ..."`` names a variant and its config overrides; ``--set`` applies to
every variant and to the corpus. Writes benchmarks/out/base_variants/<NAME>.json (fit record and
figures) and prints the table. Not a timed test: minutes per variant on 2 cores.
"""

from __future__ import annotations

import argparse
import copy
import hashlib
import json
import multiprocessing
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))  # the sibling benchmarks, also when imported

from bench_learning import set_value  # noqa: E402
from probe_train_dev import train_dev_figures  # noqa: E402

from editcredit.agent.base_job import play_expert_corpus  # noqa: E402
from editcredit.config import load_config  # noqa: E402
from editcredit.policy.base_job import training_tasks  # noqa: E402
from editcredit.policy.base_training import fit_base_model  # noqa: E402
from editcredit.policy.devices import bind_gpus  # noqa: E402

ROOT = HERE.parent
#: Keys of ``models.tiny.experts`` that act at the fit (policy.base_training), not on the corpus.
FIT_EXPERT_KEYS = ("rename_copies", "rename_prob", "rename_locals")
FIGURES = (
    "train_pass_at_1",
    "dev_pass_at_1",
    "format_error_rate",
    "share_two_or_more_edit_blocks",
    "share_groups_with_reward_variance",
)


def parse_variant(text: str) -> tuple[str, list[str]]:
    """``"NAME KEY=VALUE ..."`` -> (NAME, overrides)."""
    name, *overrides = text.split()
    bad = [o for o in overrides if "=" not in o]
    if bad:
        raise SystemExit(f"--variant {name}: {bad[0]!r} is not KEY=VALUE")
    return name, overrides


def configured(overrides: list[str]) -> dict:
    config = load_config(ROOT / "config" / "config.yaml")
    for item in overrides:
        set_value(config, item)
    return config


def suite_paths(config: dict) -> tuple[Path, Path]:
    """The frozen suite and its controls' summary (one clear exit when either is missing)."""
    suite = config["models"]["tiny"]["suite"]
    paths = (
        ROOT / "data" / "frozen" / suite / "tasks.parquet",
        ROOT / "results" / "controls" / suite / "summary.json",
    )
    for needed in paths:
        if not needed.is_file():
            rel = needed.relative_to(ROOT)
            raise SystemExit(f"{rel} is missing: run `snakemake --cores 2 {rel}` first")
    return paths


def corpus_key(config: dict, tasks_sha256: str) -> str:
    """The settings an expert corpus depends on: the experts, the model's seed, the agent, the
    sandbox backend and the frozen suite's bytes (``tasks_sha256``); not the fit's settings
    (the renames are applied to the corpus when the base is fitted)."""
    model = config["models"]["tiny"]
    experts = {k: v for k, v in model["experts"].items() if k not in FIT_EXPERT_KEYS}
    facts = {
        "experts": experts,
        "seed": model["seed"],
        "agent": config["agent"],
        "backend": config["sandbox"]["backend"],
        "tasks": tasks_sha256,
    }
    return hashlib.sha256(json.dumps(facts, sort_keys=True).encode()).hexdigest()[:12]


def tasks_sha256(config: dict) -> str:
    return hashlib.sha256(suite_paths(config)[0].read_bytes()).hexdigest()


def expert_episodes(config: dict, out: Path) -> dict:
    """The experts' corpus of ``config``, played once and then read from ``out``."""
    path = out / f"corpus-{corpus_key(config, tasks_sha256(config))}.json"
    if path.exists():
        return json.loads(path.read_text())
    tasks_path, controls_path = suite_paths(config)
    tasks = training_tasks(str(tasks_path), str(controls_path))
    start = time.monotonic()
    corpus, names = play_expert_corpus(
        tasks, config["models"]["tiny"], config["agent"], config["sandbox"]
    )
    record = {"corpus": corpus, "names": names, "tasks": len(tasks)}
    record["seconds"] = round(time.monotonic() - start, 1)
    partial = path.with_suffix(".partial")
    partial.write_text(json.dumps(record))
    partial.replace(path)
    return record


def run_variant(name: str, config: dict, corpus: dict, out: Path, args) -> dict:
    """Fit one base on the corpus, probe it on train and dev, write its record."""
    model_dir = out / name / "model"
    if model_dir.exists():
        raise SystemExit(f"{model_dir} exists: a new variant gets a new name")
    device = bind_gpus(args.gpus)
    episodes = [tuple(e) for e in corpus["corpus"]]
    start = time.monotonic()
    fit = fit_base_model(
        episodes, corpus["names"], config["models"]["tiny"], model_dir, device, corpus["tasks"]
    )
    fit["seconds"] = round(time.monotonic() - start, 1)
    figures = {}
    if not args.fit_only:
        figures = train_dev_figures(
            str(model_dir), config, args.train_tasks, args.samples, args.dev_samples, args.threads
        )
    record = {"variant": name, "overrides": args.overrides[name], "fit": fit, "figures": figures}
    (out / f"{name}.json").write_text(json.dumps(record, indent=1) + "\n")
    return record


def table(records: list[dict]) -> str:
    head = "variant".ljust(12) + "".join(f"{k[:24]:>26}" for k in FIGURES) + "   fit s"
    rows = [head]
    for r in records:
        f = r["figures"]
        cells = "".join(f"{'-' if f.get(k) is None else format(f[k], '.3f'):>26}" for k in FIGURES)
        rows.append(f"{r['variant']:<12}{cells}{r['fit']['seconds']:>8.0f}")
    return "\n".join(rows)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--variant", action="append", required=True, help='"NAME KEY=VALUE ..."')
    ap.add_argument("--set", action="append", default=[], help="override for all: a.b=v")
    ap.add_argument("--jobs", type=int, default=1, help="variants at a time (processes)")
    ap.add_argument("--threads", type=int, default=2, help="torch threads of each probe")
    ap.add_argument("--gpus", type=int, default=0, help="GPUs per variant's fit")
    ap.add_argument("--train-tasks", type=int, default=40)
    ap.add_argument("--samples", type=int, default=2)
    ap.add_argument("--dev-samples", type=int, default=4)
    ap.add_argument("--out", default=str(HERE / "out" / "base_variants"))
    ap.add_argument(
        "--fit-only",
        action="store_true",
        help="fit and write each base, no probe (probe each later with probe_train_dev.py: "
        "fits on a many-core machine, probes where the docker sandbox runs)",
    )
    args = ap.parse_args()
    variants = dict(parse_variant(v) for v in args.variant)
    args.overrides = variants
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    configs = {name: configured(args.set + o) for name, o in variants.items()}
    corpora = {}
    keys = {name: corpus_key(c, tasks_sha256(c)) for name, c in configs.items()}
    for name, config in configs.items():
        key = keys[name]
        if key not in corpora:
            corpora[key] = expert_episodes(copy.deepcopy(config), out)
            print(f"corpus {key}: {len(corpora[key]['corpus'])} episodes", flush=True)
    work = [(n, c, corpora[keys[n]], out, args) for n, c in configs.items()]
    if args.jobs > 1:
        context = multiprocessing.get_context("spawn")
        with ProcessPoolExecutor(args.jobs, mp_context=context) as pool:
            records = [f.result() for f in [pool.submit(run_variant, *w) for w in work]]
    else:
        records = [run_variant(*w) for w in work]
    print(table(records))


if __name__ == "__main__":
    main()
