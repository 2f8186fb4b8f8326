"""Did the credit go where it belongs? D against the known truth of the blocks (METHOD §9).

Beside the credit diagnostics' counts (:mod:`editcredit.stats.credit`), an arm's credit ledger
(``credit.parquet`` rows of its runs) is read against the known truth of the edit blocks
(``data.block_truth``: ``fix``, ``other``, ``harmful``; one row per labelled block, as
``agent.episode_truth.truth_rows`` writes them):

- the sign table: the available queries (those the rate sent and that gave a D) by the label of
  their selected block and the sign of D; the agreement is the share of labelled queries on the
  sign the label expects (``fix``: D > 0, ``other``: D = 0, ``harmful``: D < 0);
- the positive credit mass (the ledger's ``credit_l1`` of queries with D > 0: the credit of B
  and M has D's sign) and the part of it on the tokens of turns that fixed a planted bug: for
  an arm that spreads its credit over every valid token (B) the share of the rollout's valid
  tokens in turns of ``fix`` blocks (any block that fixed a bug, selected or not); for an arm
  that puts it on the selected block's turns (M) all of it when that block is ``fix``.

A query whose selected block has no label (a task without planted truth, a block whose texts
could not be found) is counted apart and left out of the table and the shares, never guessed.
Arms without a counterfactual query (O, E) write no ledger rows, so they have no table.
Every study computes them (rule ``credit_truth``, :func:`credit_truth_record` of the runs of B
and M: their segments' ``credit.parquet`` and ``truth.parquet``, the rows the rollout workers
label for every rollout) and the paper shows them beside the credit diagnostics.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import TypedDict

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from editcredit.data.block_truth import FIX, HARMFUL, LABELS, OTHER, TRUTH_SCHEMA
from editcredit.layout import parse_run
from editcredit.records import Arm, CreditReason

#: The columns of the sign table, in order.
SIGNS = ("negative", "zero", "positive")
#: The sign of D each label expects.
EXPECTED_SIGN = {FIX: "positive", OTHER: "zero", HARMFUL: "negative"}
#: Where an arm puts its credit: every valid token, or the selected block's turns.
EVERY_VALID_TOKEN, SELECTED_BLOCK = "every valid token", "selected block"
PLACEMENT = {Arm.B.value: EVERY_VALID_TOKEN, Arm.M.value: SELECTED_BLOCK}

_NOT_QUERIED = CreditReason.NOT_QUERIED.value


class CreditTruth(TypedDict):
    """One arm's credit against the known truth (the module docstring)."""

    table: dict[str, dict[str, int]]  # label -> sign of D -> available queries
    unlabelled: int  # available queries whose selected block has no label
    agreement: float | None  # share of the labelled queries on the label's expected sign
    positive_mass: float  # credit_l1 of the labelled queries with D > 0
    positive_mass_on_fixes: float  # ... on tokens of turns that fixed a planted bug
    positive_mass_share: float | None  # the second over the first (None when no mass)


def _sign(d: float) -> str:
    return SIGNS[2] if d > 0 else SIGNS[0] if d < 0 else SIGNS[1]


def credit_truth(ledger: pd.DataFrame, truth: pd.DataFrame, placement: str) -> CreditTruth:
    """The sign table, agreement and positive mass on fixes of one arm (module docstring).

    Args:
        ledger: the credit-ledger rows of the arm's runs (``credit.parquet``: ``rollout_key``,
            ``selected_block``, ``available``, ``reason``, ``D``, ``L``, ``credit_l1``).
        truth: one row per labelled block (``rollout_key``, ``block``, ``label``, ``tokens``:
            the valid tokens of its turns).
        placement: :data:`EVERY_VALID_TOKEN` or :data:`SELECTED_BLOCK` (:data:`PLACEMENT`).
    """
    if placement not in (EVERY_VALID_TOKEN, SELECTED_BLOCK):
        raise ValueError(f"unknown credit placement {placement!r}")
    unknown = sorted(set(truth["label"]) - set(LABELS)) if len(truth) else []
    if unknown:
        raise ValueError(f"unknown block labels {unknown}")
    labels: dict[tuple[str, int], str] = {
        (str(k), int(b)): str(lab)
        for k, b, lab in zip(truth["rollout_key"], truth["block"], truth["label"], strict=True)
    }
    fix_tokens: dict[str, int] = {}
    for k, lab, n in zip(truth["rollout_key"], truth["label"], truth["tokens"], strict=True):
        if lab == FIX:
            fix_tokens[str(k)] = fix_tokens.get(str(k), 0) + int(n)
    table = {label: dict.fromkeys(SIGNS, 0) for label in LABELS}
    out: CreditTruth = {
        "table": table,
        "unlabelled": 0,
        "agreement": None,
        "positive_mass": 0.0,
        "positive_mass_on_fixes": 0.0,
        "positive_mass_share": None,
    }
    if ledger.empty:
        return out
    live = ledger[(ledger["reason"] != _NOT_QUERIED) & ledger["available"].astype(bool)]
    agree = labelled = 0
    for row in live.itertuples(index=False):
        key, d = str(row.rollout_key), float(row.D)
        label = labels.get((key, int(row.selected_block)))
        if label is None:
            out["unlabelled"] += 1
            continue
        sign = _sign(d)
        table[label][sign] += 1
        labelled += 1
        agree += sign == EXPECTED_SIGN[label]
        if d > 0:
            mass = float(row.credit_l1)
            out["positive_mass"] += mass
            if placement == SELECTED_BLOCK:
                out["positive_mass_on_fixes"] += mass if label == FIX else 0.0
            else:
                out["positive_mass_on_fixes"] += mass * fix_tokens.get(key, 0) / int(row.L)
    out["agreement"] = agree / labelled if labelled else None
    if out["positive_mass"] > 0:
        out["positive_mass_share"] = out["positive_mass_on_fixes"] / out["positive_mass"]
    return out


def credit_truth_by_arm(
    ledgers: Mapping[str, pd.DataFrame], truth: pd.DataFrame
) -> dict[str, CreditTruth]:
    """:func:`credit_truth` of each arm with a counterfactual query (:data:`PLACEMENT`), its
    runs' ledgers pooled; ``ledgers``: arm -> its ledger rows."""
    return {
        arm: credit_truth(ledgers[arm], truth, placement)
        for arm, placement in PLACEMENT.items()
        if arm in ledgers
    }


class ArmCreditTruth(CreditTruth):
    """One arm's :class:`CreditTruth` in the study's record, with what it was read from."""

    runs: list[str]  # the arm's runs, sorted
    blocks: dict[str, int]  # label -> labelled blocks of the runs' rollouts (any block)


class CreditTruthRecord(TypedDict):
    """The record of rule ``credit_truth``: each arm with a counterfactual query that ran."""

    arms: dict[str, ArmCreditTruth]  # in the order of :data:`PLACEMENT`
    expected_sign: dict[str, str]  # label -> the sign of D it expects


def credit_truth_runs(arm_runs: Callable[[str], Sequence[str]]) -> list[str]:
    """The runs whose credit is read against the truth: each arm of :data:`PLACEMENT`'s runs
    (``arm_runs``: arm -> its planned runs, none for an arm the study does not train)."""
    return [run for arm in PLACEMENT for run in arm_runs(arm)]


def read_truth(paths: Iterable[str | Path]) -> pd.DataFrame:
    """The truth rows of several segments (``truth.parquet``), concatenated; the columns of
    :data:`~editcredit.data.block_truth.TRUTH_SCHEMA` even when there are none."""
    tables = [pq.read_table(p, schema=TRUTH_SCHEMA) for p in paths]
    return pa.concat_tables(tables or [TRUTH_SCHEMA.empty_table()]).to_pandas()


def credit_truth_record(
    ledgers_by_run: Mapping[str, pd.DataFrame], truth: pd.DataFrame
) -> CreditTruthRecord:
    """:func:`credit_truth_by_arm` of the runs' ledgers pooled by arm (``ledgers_by_run``: run
    -> its ledger rows; the arm is the run name's), against the truth rows of those runs."""
    runs: dict[str, list[str]] = {}
    for run in sorted(ledgers_by_run):
        runs.setdefault(parse_run(run).arm, []).append(run)
    ledgers = {
        arm: pd.concat(
            [ledgers_by_run[r] for r in names if len(ledgers_by_run[r])] or [pd.DataFrame()]
        )
        for arm, names in runs.items()
    }
    arms: dict[str, ArmCreditTruth] = {}
    for arm, result in credit_truth_by_arm(ledgers, truth).items():
        labels = truth["label"][truth["run"].isin(runs[arm])]
        blocks = {label: int((labels == label).sum()) for label in LABELS}
        arms[arm] = {**result, "runs": runs[arm], "blocks": blocks}
    return {"arms": arms, "expected_sign": dict(EXPECTED_SIGN)}
