"""Every table of the protocol for several metrics at once, laid out as the authors' evaluation output
(``results.json`` of their release, :mod:`caplib.release`): so that the release's numbers can be re-derived from its
per-row scores and compared figure by figure (:func:`against_release`).

:func:`protocol_tables` returns five frames whose columns are the release's keys:

- ``correlations``: Spearman, Kendall tau-b (with scipy's p-values) and pairwise accuracy (Eq. 8, ties 0), each with
  a percentile bootstrap CI, and the exact pair counts (``comparable_pairs``, ``pair_wins``, ``pair_ties``,
  ``pair_losses``);
- ``descriptives``: per metric and class, n, mean with CI, std (ddof 1), min, 5th percentile, median, 95th, max;
- ``class_pairs``: per metric and strictly ordered class pair (App. C.1, in the order of Eq. 1): exact
  wins/ties/losses, accuracy (ties 0) and AUC (ties 1/2) with CIs, violation rate (losses / pairs), both class means
  and whether they are inverted (``mean_violation``: ``mean_better <= mean_worse``, as
  :func:`caplib.evaluation.monotonicity_violations` counts; the release writes ``>``, which differs only for equal
  means);
- ``monotonicity``: per metric, the class pairs compared, inverted means (count and share) and the row-level
  violation rate (all losses / all pairs);
- ``paired_differences``: the ``reference`` metric minus each other metric, per statistic: the ``difference`` of
  the point values, and from the paired bootstrap the ``mean_difference`` (the mean of the resampled differences,
  what the release reports), its CI and ``p_reference_not_better`` (the share of resamples with a difference <= 0).

Every metric is resampled with the same seed, so all see the same resamples (:func:`bootstrap_replicates`); with
the authors' seed (42) and 10,000 resamples these are exactly their resamples, and the intervals agree with theirs
to rounding.

Example:
    >>> labels = ["exact", "partial", "invalid", "contradictory"] * 8
    >>> scores = {"a": np.tile([0.9, 0.6, 0.3, 0.1], 8), "b": np.tile([0.8, 0.2, 0.5, 0.1], 8)}
    >>> tables = protocol_tables(scores, labels, n_resamples=200, reference="a")
    >>> tables["monotonicity"].set_index("metric")["mean_violations"].to_dict()
    {'a': 0, 'b': 1}
    >>> tables["paired_differences"]["statistic"].tolist()
    ['spearman', 'kendall', 'pairwise_accuracy']
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats

from caplib.evaluation.bootstrap import bootstrap_replicates
from caplib.evaluation.measures import labels_array, pair_counts, pair_name, prepare, sorted_by_class
from caplib.taxonomy import HARD_PAIRS, LABELS, SEVERITY, STRICT_PAIRS

__all__ = ["TABLES", "against_release", "protocol_tables"]

#: The tables :func:`protocol_tables` returns, in the release's order.
TABLES: tuple[str, ...] = ("correlations", "descriptives", "class_pairs", "monotonicity", "paired_differences")
_CORRELATION_STATISTICS = ("spearman", "kendall", "pairwise_accuracy")
#: Fields that do not depend on resampling, by table: recomputed exactly (:func:`against_release`).
_POINT_FIELDS: Mapping[str, tuple[str, ...]] = {
    "correlations": ("n", "spearman", "spearman_p", "kendall", "kendall_p", "pairwise_accuracy", "comparable_pairs",
                     "pair_wins", "pair_ties", "pair_losses"),
    "descriptives": ("severity", "n", "mean", "std", "min", "p05", "median", "p95", "max"),
    "class_pairs": ("hard_pair", "n_better", "n_worse", "pairs", "wins", "ties", "losses", "accuracy", "auc",
                    "violation_rate", "mean_better", "mean_worse", "mean_violation"),
    "monotonicity": ("class_pairs", "mean_violations", "mean_violation_rate", "row_level_violation_rate"),
    "paired_differences": (),
}
#: Fields that come from the bootstrap, by table.
_RESAMPLED_FIELDS: Mapping[str, tuple[str, ...]] = {
    "correlations": tuple(f"{name}_ci_{end}" for name in _CORRELATION_STATISTICS for end in ("low", "high")),
    "descriptives": ("mean_ci_low", "mean_ci_high"),
    "class_pairs": ("accuracy_ci_low", "accuracy_ci_high", "auc_ci_low", "auc_ci_high"),
    "monotonicity": (),
    "paired_differences": ("mean_difference", "ci_low", "ci_high", "p_reference_not_better"),
}
#: The columns that name a row, by table.
_KEYS: Mapping[str, tuple[str, ...]] = {"correlations": ("metric",), "descriptives": ("metric", "label"),
                                        "class_pairs": ("metric", "better", "worse"), "monotonicity": ("metric",),
                                        "paired_differences": ("reference", "metric", "statistic")}


def _interval(samples: np.ndarray, confidence: float) -> tuple[float, float]:
    """The percentile interval (linear interpolation) of the finite resampled values; NaN when there are none."""
    finite = samples[np.isfinite(samples)]
    if finite.size == 0:
        return float("nan"), float("nan")
    low, high = np.percentile(finite, [50 * (1 - confidence), 50 * (1 + confidence)])
    return float(low), float(high)


def _metric_rows(metric: str, values: np.ndarray, canonical: np.ndarray, draws: Mapping[str, np.ndarray],
                 confidence: float) -> dict[str, list[dict[str, Any]]]:
    by_class = sorted_by_class(values, canonical)
    hard = set(HARD_PAIRS)
    severity = np.array([SEVERITY[label] for label in canonical])
    spearman, kendall = stats.spearmanr(values, severity), stats.kendalltau(values, severity)
    pairs_rows, wins_total, ties_total, pairs_total = [], 0, 0, 0
    for better, worse in STRICT_PAIRS:
        if better not in by_class or worse not in by_class:
            continue
        wins, ties, pairs = pair_counts(by_class, better, worse)
        wins_total, ties_total, pairs_total = wins_total + wins, ties_total + ties, pairs_total + pairs
        name = pair_name(better, worse)
        mean_better, mean_worse = float(by_class[better].mean()), float(by_class[worse].mean())
        accuracy_ci, auc_ci = _interval(draws[f"Acc {name}"], confidence), _interval(draws[f"AUC {name}"], confidence)
        pairs_rows.append({
            "metric": metric, "better": better, "worse": worse, "hard_pair": (better, worse) in hard,
            "n_better": len(by_class[better]), "n_worse": len(by_class[worse]), "pairs": pairs, "wins": wins,
            "ties": ties, "losses": pairs - wins - ties, "accuracy": wins / pairs, "accuracy_ci_low": accuracy_ci[0],
            "accuracy_ci_high": accuracy_ci[1], "auc": (wins + 0.5 * ties) / pairs, "auc_ci_low": auc_ci[0],
            "auc_ci_high": auc_ci[1], "violation_rate": (pairs - wins - ties) / pairs, "mean_better": mean_better,
            "mean_worse": mean_worse, "mean_violation": bool(mean_better <= mean_worse)})
    correlation = {"metric": metric, "n": len(values)}
    for name, point, p_value in (("spearman", spearman.statistic, spearman.pvalue),
                                 ("kendall", kendall.statistic, kendall.pvalue),
                                 ("pairwise_accuracy", wins_total / pairs_total, None)):
        low, high = _interval(draws[name], confidence)
        correlation |= {name: float(point), f"{name}_ci_low": low, f"{name}_ci_high": high}
        if p_value is not None:
            correlation[f"{name}_p"] = float(p_value)
    correlation |= {"comparable_pairs": pairs_total, "pair_wins": wins_total, "pair_ties": ties_total,
                    "pair_losses": pairs_total - wins_total - ties_total}
    descriptives = []
    for label in LABELS:
        if label not in by_class:
            continue
        scores = values[canonical == label]
        low, high = _interval(draws[f"mean {label}"], confidence)
        descriptives.append({
            "metric": metric, "label": label, "severity": SEVERITY[label], "n": len(scores),
            "mean": float(scores.mean()), "mean_ci_low": low, "mean_ci_high": high,
            "std": float(scores.std(ddof=1)) if len(scores) > 1 else float("nan"), "min": float(scores.min()),
            "p05": float(np.percentile(scores, 5)), "median": float(np.median(scores)),
            "p95": float(np.percentile(scores, 95)), "max": float(scores.max())})
    inverted = sum(row["mean_violation"] for row in pairs_rows)
    monotonicity = {"metric": metric, "class_pairs": len(pairs_rows), "mean_violations": inverted,
                    "mean_violation_rate": inverted / len(pairs_rows),
                    "row_level_violation_rate": sum(row["losses"] for row in pairs_rows) / pairs_total}
    return {"correlations": [correlation], "descriptives": descriptives, "class_pairs": pairs_rows,
            "monotonicity": [monotonicity]}


def protocol_tables(
    scores: Mapping[str, Sequence[float] | np.ndarray],
    labels: Sequence[str] | np.ndarray | pd.Series,
    *,
    n_resamples: int = 10_000,
    seed: int = 42,
    confidence: float = 0.95,
    reference: str | None = "cap",
) -> dict[str, pd.DataFrame]:
    """The five tables of the module docstring for every metric of ``scores`` (name -> one score per row, all on
    the rows of ``labels``), bootstrapped with ``n_resamples`` resamples of ``seed`` (the release's: 10,000, 42).
    ``paired_differences`` compares ``reference`` with each other metric (empty when ``reference`` is None or not
    among the metrics).

    Example:
        >>> labels = ["exact", "invalid"] * 6
        >>> tables = protocol_tables({"m": [0.9, 0.1] * 6}, labels, n_resamples=50, reference=None)
        >>> row = tables["correlations"].iloc[0]
        >>> float(row.pairwise_accuracy), int(row.comparable_pairs), int(row.pair_wins)
        (1.0, 36, 36)

    Raises:
        ValueError: no metric, or scores/labels that :func:`caplib.evaluation.pairwise_accuracy` would refuse.
    """
    if not scores:
        raise ValueError("no metric to tabulate; pass {name: scores}")
    canonical = labels_array(labels)
    rows: dict[str, list[dict[str, Any]]] = {name: [] for name in TABLES}
    replicates = {}
    for metric, values in scores.items():
        values, canonical = prepare(values, canonical)
        replicates[metric] = bootstrap_replicates(values, canonical, n_resamples=n_resamples, seed=seed)
        for table, records in _metric_rows(metric, values, canonical, replicates[metric], confidence).items():
            rows[table] += records
    points = {row["metric"]: row for row in rows["correlations"]}
    for metric in scores if reference in scores else ():
        if metric == reference:
            continue
        for statistic in _CORRELATION_STATISTICS:
            difference = replicates[reference][statistic] - replicates[metric][statistic]
            difference = difference[np.isfinite(difference)]
            low, high = _interval(difference, confidence)
            rows["paired_differences"].append({
                "reference": reference, "metric": metric, "statistic": statistic,
                "difference": points[reference][statistic] - points[metric][statistic],
                "mean_difference": float(difference.mean()), "ci_low": low, "ci_high": high,
                "p_reference_not_better": float((difference <= 0).mean())})
    return {name: pd.DataFrame(records) for name, records in rows.items()}


def against_release(tables: Mapping[str, pd.DataFrame], results: Mapping[str, Any]) -> pd.DataFrame:
    """Every figure of the release's ``results.json`` beside the same figure of ``tables`` (:func:`protocol_tables`
    on the same rows): one row per figure with ``table``, ``key``, ``field``, ``kind`` (``point``: does not depend
    on resampling; ``resampled``: from the bootstrap), ``released``, ``ours`` and ``difference`` (ours - released;
    booleans as 0/1). A figure of the release that ``tables`` lacks has ``ours`` NaN. ``paired_differences`` is
    also compared on its point value: our ``difference`` against the release's ``mean_difference`` (field
    ``difference``, kind ``point vs resampled mean``).

    Example:
        >>> tables = {"correlations": pd.DataFrame([{"metric": "m", "n": 3, "spearman": 0.5}])}
        >>> results = {"correlations": [{"metric": "m", "n": 3, "spearman": 0.25}]}
        >>> against_release(tables, results)[["field", "released", "ours", "difference"]].values.tolist()
        [['n', 3.0, 3.0, 0.0], ['spearman', 0.25, 0.5, 0.25]]
    """
    records = []
    for table in TABLES:
        if table not in results:
            continue
        keys = _KEYS[table]
        ours = tables.get(table, pd.DataFrame()).copy()
        ours = ours.set_index(list(keys)) if not ours.empty else ours
        for row in results[table]:
            key = tuple(row[k] for k in keys)
            index = key if len(key) > 1 else key[0]
            mine = ours.loc[index] if not ours.empty and index in ours.index else None
            fields = [(f, "point") for f in _POINT_FIELDS[table]] + [(f, "resampled") for f in _RESAMPLED_FIELDS[table]]
            if table == "paired_differences":
                fields.append(("difference", "point vs resampled mean"))
            for field, kind in fields:
                released_field = "mean_difference" if kind == "point vs resampled mean" else field
                if released_field not in row:
                    continue
                released = float(row[released_field])
                value = float("nan") if mine is None or field not in mine.index else float(mine[field])
                records.append({"table": table, "key": "|".join(str(k) for k in key), "field": field, "kind": kind,
                                "released": released, "ours": value, "difference": value - released})
    return pd.DataFrame(records, columns=["table", "key", "field", "kind", "released", "ours", "difference"])
