"""Learned stop policies (METHOD §12): logistic regression and gradient-boosted trees for
P(correct now), and a small two-head model for P(correct now) and P(correct at the end).

All are fitted on the protocol's fit split only (rows with a known label) and score every point
from its visible features; scikit-learn, CPU, seeded by the protocol's ``random_state``. A fit
set with a single class gives a constant model (the class frequency), said in its summary.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from editcredit.stopping.policies import Policy


class ConstantModel:
    """P = the training frequency of the positive class, for a fit set with one class."""

    def __init__(self, p: np.ndarray) -> None:
        self.p = np.atleast_1d(np.asarray(p, float))

    def predict(self, x: np.ndarray) -> np.ndarray:
        return np.tile(self.p, (len(x), 1))


def _features(df: pd.DataFrame, names: Sequence[str]) -> np.ndarray:
    missing = [n for n in names if n not in df.columns]
    if missing:
        raise KeyError(f"features {missing} are not columns of the checkpoints")
    return df[list(names)].to_numpy(float)


def _labels(df: pd.DataFrame, column: str) -> np.ndarray:
    return df[column].astype("Float64").to_numpy(float)


class HeadModel:
    """One fitted model: ``predict(x)`` -> an (n, heads) array of probabilities."""

    def __init__(self, name: str, estimator: Any, heads: int, note: str) -> None:
        self.name, self.estimator, self.heads, self.note = name, estimator, heads, note

    def predict(self, x: np.ndarray) -> np.ndarray:
        if isinstance(self.estimator, ConstantModel):
            return self.estimator.predict(x)
        proba = self.estimator.predict_proba(x)
        if self.heads == 1:
            return proba[:, [1]]
        return np.asarray(proba, float)


def fit_model(name: str, fit: pd.DataFrame, features: Sequence[str], grid: Mapping[str, Any]):
    """Fit ``name`` (logistic, boosted_trees or two_head) on the labelled fit rows."""
    from sklearn.ensemble import HistGradientBoostingClassifier
    from sklearn.linear_model import LogisticRegression
    from sklearn.neural_network import MLPClassifier
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    seed = int(grid.get("random_state", 0))
    targets = ["correct_now", "correct_end"] if name == "two_head" else ["correct_now"]
    rows = fit.dropna(subset=targets)
    x = _features(rows, features)
    y = np.column_stack([_labels(rows, t) for t in targets]).astype(int)
    if len(rows) == 0:
        return HeadModel(name, ConstantModel(np.zeros(len(targets))), len(targets), "no rows")
    if any(len(np.unique(y[:, j])) < 2 for j in range(y.shape[1])):
        note = f"a single class in {len(rows)} fit rows: constant model"
        return HeadModel(name, ConstantModel(y.mean(axis=0)), len(targets), note)
    if name == "logistic":
        cfg = grid.get("logistic", {})
        est = make_pipeline(
            StandardScaler(),
            LogisticRegression(C=float(cfg.get("C", 1.0)), max_iter=int(cfg.get("max_iter", 500))),
        )
        est.fit(x, y[:, 0])
    elif name == "boosted_trees":
        cfg = grid.get("boosted_trees", {})
        est = HistGradientBoostingClassifier(
            max_iter=int(cfg.get("max_iter", 100)),
            max_depth=int(cfg.get("max_depth", 3)),
            learning_rate=float(cfg.get("learning_rate", 0.1)),
            random_state=seed,
        )
        est.fit(x, y[:, 0])
    elif name == "two_head":
        cfg = grid.get("two_head", {})
        est = make_pipeline(
            StandardScaler(),
            MLPClassifier(
                hidden_layer_sizes=(int(cfg.get("hidden", 16)),),
                alpha=float(cfg.get("alpha", 1e-3)),
                max_iter=int(cfg.get("max_iter", 500)),
                random_state=seed,
            ),
        )
        est.fit(x, y)
    else:
        raise ValueError(f"unknown learned policy {name!r} (logistic, boosted_trees, two_head)")
    return HeadModel(name, est, len(targets), f"fitted on {len(rows)} rows")


def score_points(
    df: pd.DataFrame, models: Mapping[str, HeadModel], features: Sequence[str]
) -> pd.DataFrame:
    """Score columns per model for every point of ``df`` (features only: no label is read)."""
    x = _features(df, features)
    out = pd.DataFrame(index=df.index)
    for name, model in models.items():
        p = model.predict(x) if len(df) else np.zeros((0, model.heads))
        if model.heads == 1:
            out[name] = p[:, 0]
        else:
            out[f"{name}_now"], out[f"{name}_end"] = p[:, 0], p[:, 1]
    return out


def threshold_policy(column: str, tau: float) -> Policy:
    """Stop at the first point whose P(correct now) reaches ``tau``."""

    def stop(df: pd.DataFrame) -> np.ndarray:
        return (df[column] >= tau).to_numpy(bool)

    return stop


def two_head_policy(prefix: str, weight: float) -> Policy:
    """Stop when P(now) >= P(end) - w: going on is not worth ``w`` of success."""

    def stop(df: pd.DataFrame) -> np.ndarray:
        return (df[f"{prefix}_now"] >= df[f"{prefix}_end"] - weight).to_numpy(bool)

    return stop


def learned_policies(protocol: Mapping[str, Any]) -> dict[str, tuple[str, Policy]]:
    """Name -> (learned model, policy) for every grid value of the protocol's learned models."""
    grid = protocol["grid"]
    out: dict[str, tuple[str, Policy]] = {}
    for name in protocol["policies"]["learned"]:
        if name == "two_head":
            for w in grid["cost_weights"]:
                out[f"two_head@w={float(w):g}"] = (name, two_head_policy(name, float(w)))
        else:
            for tau in grid["thresholds"]:
                out[f"{name}@{float(tau):g}"] = (name, threshold_policy(name, float(tau)))
    return out
