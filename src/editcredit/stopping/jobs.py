"""Entry points of the stop study's rules: fit (``stop_policies``) and the sealed evaluation with
the gate (``stop_eval``). Fitting never reads a label of the sealed split: :func:`load_visible`
reads labels only of the fit rows; the sealed labels come through
:func:`editcredit.protocol.seal.read_sealed_labels` alone, under the frozen protocol."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, TypedDict

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from editcredit.io.provenance import write_result_json, write_result_parquet
from editcredit.protocol.seal import (
    DEFAULT_SEAL_DIR,
    apply_gate_once,
    check_frozen,
    gate_path,
    read_sealed_labels,
)
from editcredit.protocol.spec import load_protocol, protocol_sha256
from editcredit.stopping.build import LABEL_COLUMNS
from editcredit.stopping.learned import fit_model, learned_policies, score_points
from editcredit.stopping.policies import fixed_policies, ordered
from editcredit.stopping.records import CurvePoint, GateChoice, PolicyRow
from editcredit.stopping.study import (
    as_float,
    choose_gate,
    curve,
    evaluate_all,
    gate_verdict,
    policy_table,
)

LABELS = tuple(name for name, _ in LABEL_COLUMNS)
KEYS = ["model", "evalset", "rollout_key", "point"]


def role_of(split: str, splits: Mapping[str, Any]) -> str:
    """fit, sealed or other, by the protocol's splits."""
    if split == splits["sealed"]:
        return "sealed"
    return "fit" if split in splits["fit"] else "other"


def load_visible(paths: Sequence[str | Path], splits: Mapping[str, Any]) -> pd.DataFrame:
    """Every decision point's ids, features and ``role``; labels of the fit splits' rows only
    (null elsewhere: the sealed split's labels are not read here)."""
    frames = []
    fit = [str(s) for s in splits["fit"]]
    for path in paths:
        names = pq.read_schema(path).names
        visible = [n for n in names if n not in LABELS]
        points = pq.read_table(path, columns=visible).to_pandas()
        labels = pq.read_table(
            path, columns=[*KEYS, *LABELS], filters=[("split", "in", fit)] if fit else None
        ).to_pandas()
        if not fit:
            labels = labels.iloc[0:0]
        frames.append(points.merge(labels, on=KEYS, how="left", validate="one_to_one"))
    if not frames:
        raise ValueError("no checkpoints files")
    df = pd.concat(frames, ignore_index=True)
    df["role"] = [role_of(s, splits) for s in df["split"]]
    return df


def evaluation_key(sealed: pd.DataFrame, choice: Mapping[str, Any]) -> str:
    """Identity of one gate evaluation: the sealed labels and what the fit split chose. The same
    key must give the same record; a changed upstream input is a new evaluation (its own
    record beside the old, which stays)."""
    rows = sealed.sort_values(KEYS)[[*KEYS, *LABELS]].astype(str).to_numpy().tolist()
    body = json.dumps([rows, choice["candidate"], choice["baseline"]], sort_keys=True)
    return hashlib.sha256(body.encode()).hexdigest()


def policy_sets(spec: Mapping[str, Any]):
    """(policies, kind of each, learned family of each) of a protocol."""
    policies, kinds, family = {}, {}, {}
    for name, policy in fixed_policies(spec["grid"]).items():
        policies[name] = policy
        kinds[name] = "rule" if name.startswith("visible_counts@") else "fixed"
        family[name] = name.split("@")[0]
    for name, (model, policy) in learned_policies(spec).items():
        policies[name], kinds[name], family[name] = policy, "learned", model
    return policies, kinds, family


def _score_columns(df: pd.DataFrame) -> list[str]:
    base = set(KEYS) | {"role", "instance_id"}
    return [c for c in df.columns if c not in base]


class StopPolicies(TypedDict):
    """``results/stop/policies.json`` (sorted keys): the models fitted and the fit split's
    policies, with the gate's candidate and comparator, fixed before any sealed label is read."""

    study: str
    protocol: str  # the protocol file
    protocol_sha256: str
    features: list[str]  # the learned models' features, in the protocol's order
    models: dict[str, str]  # learned policy -> its fitted model's note
    kinds: dict[str, str]  # policy -> its kind ("fixed", "agent", ...)
    family: dict[str, str]  # learned policy -> its family
    fit: dict[str, PolicyRow]  # policy -> its fit-split row
    fit_curve: list[CurvePoint]
    gate_choice: GateChoice


class _StopEvalCore(TypedDict):
    study: str
    protocol: str
    protocol_sha256: str
    frozen_at: str  # when the protocol was frozen (its freeze receipt)
    fit: dict[str, PolicyRow]  # as fitted (policies.json)
    fit_curve: list[CurvePoint]
    kinds: dict[str, str]
    gate_choice: GateChoice
    seal: str  # the study's seal (logs/seals/{study}.json)


class StopEval(_StopEvalCore, total=False):
    """``results/stop/eval.json`` (sorted keys): every policy on the sealed split and the
    gate applied once. Without sealed trajectories ``sealed`` is empty and ``gate`` says it was
    not applied (``verdict`` and ``reason``); else ``gate`` is the recorded
    :class:`~editcredit.stopping.records.StopGateVerdict` with the protocol's hash, when it was
    applied and the gate record's path."""

    sealed: dict[str, PolicyRow]
    sealed_curve: list[CurvePoint]
    gate: dict[str, Any]


def stop_policies_job(
    *,
    checkpoints: Sequence[str],
    protocol: str,
    receipt: str,
    out_scores: str,
    out_policies: str,
    config: Any,
) -> StopPolicies:
    """Fit the learned models on the fit split, score every point, evaluate every policy on the
    fit split, and fix the gate's candidate and comparator before any sealed label is read."""
    check_frozen(protocol, receipt)
    spec = load_protocol(protocol)
    df = ordered(load_visible(checkpoints, spec["splits"]))
    features = list(spec["features"])
    fit = df[df["role"] == "fit"]
    models = {
        name: fit_model(name, fit, features, spec["grid"]) for name in spec["policies"]["learned"]
    }
    scores = score_points(df, models, features)
    scored = pd.concat([df, scores], axis=1)
    policies, kinds, family = policy_sets(spec)
    fit_scored = scored[scored["role"] == "fit"].reset_index(drop=True)
    fit_table = policy_table(evaluate_all(fit_scored, policies), kinds, spec["bootstrap"])
    choice = choose_gate(fit_table, kinds, family, spec["gate"])
    keep = [*KEYS, "instance_id", "role", *scores.columns]
    write_result_parquet(
        out_scores,
        pa.Table.from_pandas(scored[keep], preserve_index=False),
        [*checkpoints, protocol],
        config,
    )
    record: StopPolicies = as_float(
        {
            "study": spec["study"],
            "protocol": protocol,
            "protocol_sha256": protocol_sha256(protocol),
            "features": features,
            "models": {n: m.note for n, m in models.items()},
            "kinds": kinds,
            "family": family,
            "fit": fit_table,
            "fit_curve": curve(fit_table),
            "gate_choice": choice,
        }
    )
    write_result_json(out_policies, record, [*checkpoints, protocol, receipt], config)
    print(json.dumps({"models": record["models"], "gate_choice": choice["candidate"]}))
    return record


def stop_eval_job(
    *,
    checkpoints: Sequence[str],
    scores: str,
    policies_json: str,
    protocol: str,
    receipt: str,
    out: str,
    config: Any,
    seal_dir: str | Path = DEFAULT_SEAL_DIR,
) -> StopEval:
    """Evaluate every policy on the sealed split (labels through the seal) and apply the gate
    once; write ``results/stop/eval.json``."""
    frozen = check_frozen(protocol, receipt)
    spec = load_protocol(protocol)
    fitted = json.loads(Path(policies_json).read_text())
    if fitted["protocol_sha256"] != frozen["protocol_sha256"]:
        raise ValueError(
            f"{policies_json}: fitted under protocol {fitted['protocol_sha256']}, the frozen "
            f"protocol is {frozen['protocol_sha256']} ({receipt})"
        )
    visible = load_visible(checkpoints, spec["splits"]).drop(columns=list(LABELS))
    sealed_points = visible[visible["role"] == "sealed"]
    labels = read_sealed_labels(
        checkpoints,
        protocol=protocol,
        receipt=receipt,
        seal_dir=seal_dir,
        rows=("split", spec["splits"]["sealed"]),
    )
    sealed = sealed_points.merge(
        labels[[*KEYS, *LABELS]], on=KEYS, how="left", validate="one_to_one"
    )
    score = pq.read_table(scores).to_pandas()
    sealed = ordered(sealed.merge(score[[*KEYS, *_score_columns(score)]], on=KEYS, how="left"))
    policies, kinds, _ = policy_sets(spec)
    boot = spec["bootstrap"]
    record: StopEval = {
        "study": spec["study"],
        "protocol": protocol,
        "protocol_sha256": frozen["protocol_sha256"],
        "frozen_at": frozen["frozen_at"],
        "fit": fitted["fit"],
        "fit_curve": fitted["fit_curve"],
        "kinds": kinds,
        "gate_choice": fitted["gate_choice"],
        "seal": (Path(seal_dir) / f"{spec['study']}.json").as_posix(),
    }
    if len(sealed):
        outs = evaluate_all(sealed, policies)
        table = policy_table(outs, kinds, boot)
        verdict = gate_verdict(fitted["gate_choice"], outs, spec["gate"], boot)
        verdict = as_float({**verdict, "protocol_sha256": frozen["protocol_sha256"]})
        key = evaluation_key(sealed, fitted["gate_choice"])
        recorded = apply_gate_once(spec["study"], verdict, seal_dir, key)
        record["sealed"] = as_float(table)
        record["sealed_curve"] = as_float(curve(table))
        record["gate"] = {
            **recorded["record"],
            "applied_at": recorded["applied_at"],
            "record": gate_path(spec["study"], seal_dir, key).as_posix(),
        }
    else:
        record["sealed"] = {}
        record["sealed_curve"] = []
        record["gate"] = {"verdict": "not applied", "reason": "no sealed trajectories"}
    write_result_json(
        out, as_float(record), [*checkpoints, scores, policies_json, protocol, receipt], config
    )
    print(f"stop study gate: {record['gate']['verdict']}")
    return record
