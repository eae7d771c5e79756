"""Two implementations of the same metrics on the same rows, set side by side: caplib's scores beside the authors'
released ones (:mod:`caplib.release`), or any two sources of per-row scores.

:func:`row_agreement` says how often the two give the same number on a row (within ``tolerance``), how far apart
they are at most and how well they rank the rows alike (Spearman between them). :func:`concordance` adds what the
protocol makes of each side (Sec. 6.2: Spearman and pairwise accuracy against the taxonomy, with bootstrap CIs of
App. D.1 drawn from the same resamples for both sides, and the inverted class means of Tab. 14) and both sides'
class means. :func:`by_label_source` is the protocol under each label source (Tab. 16/17: the synthetic labels and
the annotators' on the rows that have both).

Example:
    >>> labels = ["exact", "partial", "invalid", "contradictory"] * 4
    >>> ours = {"m": np.tile([0.9, 0.5, 0.3, 0.1], 4)}
    >>> theirs = {"m": np.tile([0.9, 0.5, 0.2, 0.1], 4)}
    >>> tables = concordance(ours, theirs, labels, n_resamples=100)
    >>> row = tables["metrics"].iloc[0]
    >>> row["rows_equal"], round(row["max_abs_difference"], 6), row["spearman_ours"] == row["spearman_theirs"]
    (0.75, 0.1, True)
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats

from caplib.evaluation.measures import blank_labels, class_means, pairwise_accuracy, rank_correlation
from caplib.evaluation.tables import protocol_tables
from caplib.taxonomy import LABELS

__all__ = ["by_label_source", "concordance", "row_agreement"]

#: The two sides' names in :func:`concordance`'s columns.
SIDES: tuple[str, str] = ("ours", "theirs")


def row_agreement(ours: Sequence[float] | np.ndarray, theirs: Sequence[float] | np.ndarray,
                  tolerance: float = 1e-6) -> dict[str, float]:
    """How two scorings of the same rows agree, row by row: ``n``, ``rows_equal`` (the share with
    ``|ours - theirs| <= tolerance``), ``rows_differing`` (their count), ``max_abs_difference``,
    ``mean_abs_difference`` and ``spearman`` between the two (how alike they rank the rows).

    Example:
        >>> agreement = row_agreement([0.1, 0.5, 0.9, 0.3], [0.1, 0.5, 0.8, 0.35])
        >>> agreement["rows_equal"], agreement["rows_differing"], round(agreement["max_abs_difference"], 6)
        (0.5, 2, 0.1)
        >>> agreement["spearman"]
        1.0

    Raises:
        ValueError: the two differ in length, are empty, or hold a non-finite value.
    """
    first, second = np.asarray(ours, dtype=np.float64), np.asarray(theirs, dtype=np.float64)
    if first.shape != second.shape or first.ndim != 1 or first.size == 0:
        raise ValueError(f"row_agreement needs two non-empty score vectors of one length, got {first.shape} and "
                         f"{second.shape}")
    if not (np.isfinite(first).all() and np.isfinite(second).all()):
        raise ValueError("row_agreement: every score must be finite (a NaN is a row not scored: drop it first)")
    difference = np.abs(first - second)
    equal = difference <= tolerance
    return {"n": int(first.size), "rows_equal": float(equal.mean()), "rows_differing": int((~equal).sum()),
            "max_abs_difference": float(difference.max()), "mean_abs_difference": float(difference.mean()),
            "spearman": float(stats.spearmanr(first, second).statistic)}


def concordance(ours: Mapping[str, Sequence[float] | np.ndarray], theirs: Mapping[str, Sequence[float] | np.ndarray],
                labels: Sequence[str], *, tolerance: float = 1e-6, n_resamples: int = 1_000,
                confidence: float = 0.95, seed: int = 0) -> dict[str, pd.DataFrame]:
    """Every metric of ``ours`` beside the same metric of ``theirs`` on the same rows (labelled ``labels``).

    Returns ``{"metrics": ..., "class_means": ...}``. ``metrics`` has one row per metric: :func:`row_agreement`'s
    fields, then per side (``_ours``, ``_theirs``) Spearman and pairwise accuracy against the taxonomy with their
    bootstrap CIs (``*_ci_low``, ``*_ci_high``; every series resampled with the same rows) and the inverted class
    means (``violations``); ``class_means`` has one row per metric and class, both sides' means and their
    difference. Values are fractions (the paper prints them x100).

    Example:
        >>> labels = ["exact", "invalid"] * 4
        >>> tables = concordance({"m": [0.9, 0.1] * 4}, {"m": [0.8, 0.3] * 4}, labels, n_resamples=50)
        >>> tables["class_means"][["label", "ours", "theirs"]].values.tolist()
        [['exact', 0.9, 0.8], ['invalid', 0.1, 0.3]]

    Raises:
        ValueError: the two name different metrics, or a metric's scores do not fit the labels.
    """
    if list(ours) != list(theirs):
        raise ValueError(f"concordance needs the same metrics on both sides, got {list(ours)} and {list(theirs)}")
    series = {f"{side}:{metric}": np.asarray(values, dtype=np.float64)
              for side, scores in zip(SIDES, (ours, theirs)) for metric, values in scores.items()}
    tables = protocol_tables(series, labels, n_resamples=n_resamples, confidence=confidence, seed=seed)
    correlations = tables["correlations"].set_index("metric")
    violations = tables["monotonicity"].set_index("metric")["mean_violations"]
    rows: list[dict[str, Any]] = []
    for metric in ours:
        row: dict[str, Any] = {"metric": metric, **row_agreement(ours[metric], theirs[metric], tolerance)}
        for side in SIDES:
            line = correlations.loc[f"{side}:{metric}"]
            for statistic in ("spearman", "pairwise_accuracy"):
                row |= {f"{statistic}_{side}": float(line[statistic]),
                        f"{statistic}_{side}_ci_low": float(line[f"{statistic}_ci_low"]),
                        f"{statistic}_{side}_ci_high": float(line[f"{statistic}_ci_high"])}
            row[f"violations_{side}"] = int(violations.loc[f"{side}:{metric}"])
        rows.append(row)
    means = tables["descriptives"].set_index(["metric", "label"])["mean"]
    class_rows = [{"metric": metric, "label": label, "ours": float(means[f"ours:{metric}", label]),
                   "theirs": float(means[f"theirs:{metric}", label])}
                  for metric in ours for label in LABELS if (f"ours:{metric}", label) in means.index]
    class_table = pd.DataFrame(class_rows, columns=["metric", "label", "ours", "theirs"])
    return {"metrics": pd.DataFrame(rows), "class_means": class_table.assign(difference=class_table["ours"]
                                                                               - class_table["theirs"])}


def by_label_source(scores: Mapping[str, Sequence[float] | np.ndarray],
                    sources: Mapping[str, Sequence[str | None]]) -> pd.DataFrame:
    """The protocol under each label source (Tab. 16 and 17): for every metric of ``scores`` and every source of
    labels in ``sources`` (e.g. the synthetic ``label_semantic`` and the annotators' ``label_semantic_manual``), on
    the rows every source labels: ``n``, Spearman, Kendall tau-b, pairwise accuracy and the class means
    (``mean <class>``).

    Example:
        >>> table = by_label_source({"m": [0.9, 0.5, 0.1, 0.7]}, {"a": ["exact", "partial", "invalid", None],
        ...                                                     "b": ["exact", "invalid", "invalid", "partial"]})
        >>> table[["metric", "source", "n", "spearman"]].values.tolist()
        [['m', 'a', 3, 1.0], ['m', 'b', 3, 0.8660254037844387]]

    Raises:
        ValueError: fewer than two rows labelled by every source, or lengths that differ.
    """
    frame = pd.DataFrame({f"source:{name}": list(labels) for name, labels in sources.items()})
    keep = ~np.logical_or.reduce([blank_labels(frame[column]) for column in frame.columns])
    if keep.sum() < 2:
        raise ValueError(f"by_label_source needs two or more rows labelled by every source, found {int(keep.sum())}")
    rows = []
    for metric, values in scores.items():
        values = np.asarray(values, dtype=np.float64)
        if len(values) != len(frame):
            raise ValueError(f"{metric}: {len(values)} scores for {len(frame)} labelled rows")
        for name in sources:
            labels = frame[f"source:{name}"].to_numpy()[keep]
            spearman, kendall = rank_correlation(values[keep], labels)
            rows.append({"metric": metric, "source": name, "n": int(keep.sum()), "spearman": spearman,
                         "kendall": kendall, "pairwise_accuracy": pairwise_accuracy(values[keep], labels),
                         **{f"mean {label}": mean for label, mean in class_means(values[keep], labels).items()}})
    return pd.DataFrame(rows)
