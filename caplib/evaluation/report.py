"""The protocol's report table (Tab. 2, 3, 4, 13, 14 in one frame), what ``caplib evaluate`` prints.

Example:
    >>> frame = pd.DataFrame({"m": [0.9, 0.7, 0.5, 0.1], "label": ["exact", "OV", "partial", "invalid"]})
    >>> report(frame, ["m"], "label").loc["m", "pairwise_accuracy"]
    1.0
"""

from __future__ import annotations

from typing import Callable, Mapping, Sequence

import numpy as np
import pandas as pd
import scipy

from caplib.evaluation.bootstrap import bootstrap_ci, paired_bootstrap, paired_randomization
from caplib.evaluation.measures import (
    absent_classes,
    class_means,
    hard_pair_accuracy,
    labels_array,
    monotonicity_violations,
    pair_counts,
    pair_auc,
    pair_name,
    pairwise_accuracy,
    prepare,
    rank_correlation,
    sorted_by_class,
)
from caplib.signature import Signature
from caplib.taxonomy import SEPARABILITY_PAIRS, STRICT_PAIRS

__all__ = ["head_to_head", "paired_report", "paired_summary", "paired_verdict", "report"]


def report(
    df: pd.DataFrame,
    metric_columns: Sequence[str],
    label_column: str,
    n_resamples: int = 0,
    seed: int = 0,
    confidence: float = 0.95,
) -> pd.DataFrame:
    """One row per metric column: the measures of Tab. 2, 3, 4 and 14 (and the CIs of Tab. 13).

    Columns: ``n``, ``spearman``, ``kendall``, ``pairwise_accuracy``, the example pairs it counts (``pairs``,
    ``pair_wins``, ``pair_ties``), ``violations`` (count),
    ``ordered_pairs`` (strict pairs with both classes present: 25 with all eight classes),
    ``violation_rate`` (violations / ordered_pairs, Tab. 14's count/25), ``mean <class>`` for each class present
    (in the order of Eq. 1), ``Acc Eq>Part`` ...
    ``Acc Alt>Inv`` (Tab. 4), ``AUC Exact>Inv`` ... ``AUC OV>OI`` (Tab. 3), and with ``n_resamples > 0``
    ``spearman_low``, ``spearman_high``, ``kendall_low``, ``kendall_high``, ``pairwise_accuracy_low``,
    ``pairwise_accuracy_high``. A hard pair or AUC pair
    with a class absent from the data is NaN (empty cell). Fractions in [0, 1]. The frame's
    ``attrs["signature"]`` records the settings.

    Example:
        >>> frame = pd.DataFrame({"m": [0.9, 0.7, 0.5, 0.1], "label": ["exact", "OV", "partial", "invalid"]})
        >>> report(frame, ["m"], "label").loc["m", ["spearman", "violations", "ordered_pairs"]].tolist()
        [1.0, 0.0, 6.0]

    Raises:
        ValueError: a column not in ``df`` (named), or a metric column that fails the checks above.
    """
    absent_columns = [column for column in [*metric_columns, label_column] if column not in df.columns]
    if absent_columns:
        raise ValueError(f"report: column(s) {', '.join(map(repr, absent_columns))} not in the frame "
                         f"(columns: {', '.join(map(str, df.columns))})")
    labels = labels_array(df[label_column].to_numpy(), name=f"column {label_column!r}")
    rows = []
    for column in metric_columns:
        try:
            values, canonical = prepare(df[column].to_numpy(), labels)
        except ValueError as error:
            raise ValueError(f"metric column {column!r}: {error}") from None
        by_class = sorted_by_class(values, canonical)
        spearman, kendall = rank_correlation(values, canonical)
        violations = monotonicity_violations(class_means(values, canonical), missing="skip")
        ordered = sum(1 for pair in STRICT_PAIRS if not absent_classes(by_class, pair))
        counts = [pair_counts(by_class, *pair) for pair in STRICT_PAIRS if not absent_classes(by_class, pair)]
        row: dict[str, float | int | str] = {
            "metric": column,
            "n": len(values),
            "spearman": spearman,
            "kendall": kendall,
            "pairwise_accuracy": pairwise_accuracy(values, canonical),
            "pairs": sum(count[2] for count in counts),
            "pair_wins": sum(count[0] for count in counts),
            "pair_ties": sum(count[1] for count in counts),
            "violations": len(violations),
            "ordered_pairs": ordered,
            "violation_rate": len(violations) / ordered,
            **{f"mean {label}": mean for label, mean in class_means(values, canonical).items()},
        }
        for key, accuracy in hard_pair_accuracy(values, canonical).items():
            row[f"Acc {key}"] = accuracy
        for higher, lower in SEPARABILITY_PAIRS:
            present = not absent_classes(by_class, (higher, lower))
            row[f"AUC {pair_name(higher, lower)}"] = (
                pair_auc(values, canonical, higher, lower) if present else float("nan")
            )
        if n_resamples > 0:
            for name in ("spearman", "kendall", "pairwise_accuracy"):
                _, low, high = bootstrap_ci(name, values, canonical, n_resamples, confidence, seed)
                row[f"{name}_low"], row[f"{name}_high"] = low, high
        rows.append(row)
    table = pd.DataFrame(rows).set_index("metric")
    table.attrs["signature"] = str(Signature.of("caplib.evaluation", {
        "labels": label_column, "severity": "App.C.2", "pairs": 25, "ties": "zero", "bootstrap": n_resamples,
        "confidence": confidence, "seed": seed, "numpy": np.__version__, "scipy": scipy.__version__}))
    return table


def paired_report(
    df: pd.DataFrame,
    reference: str,
    others: Sequence[str],
    label_column: str,
    statistics: Sequence[str] = ("spearman", "pairwise_accuracy"),
    n_resamples: int = 1000,
    confidence: float = 0.95,
    seed: int = 0,
    level: float = 0.05,
) -> pd.DataFrame:
    """``reference`` against each of ``others`` on the same rows: paired bootstrap and approximate randomization.

    One row per (metric, statistic): the difference ``delta`` = reference - metric, its percentile interval
    ``low``/``high`` (:func:`paired_bootstrap`, the same resamples for both), its bootstrap ``p_value``, the
    randomization test's ``randomization_p_value`` (:func:`paired_randomization`, as many trials as resamples),
    and ``significant``: both p-values below ``level`` (the two tests answer slightly different nulls, so a
    difference one of them leaves in doubt is not called significant). A statistic undefined on some resample
    (too few rows of a class) has no interval or p-value and is never called significant. The frame's
    ``attrs["signatures"]`` maps each compared metric to both tests' signatures.

    Example:
        >>> frame = pd.DataFrame({"label": ["exact", "OV", "partial", "invalid"] * 25,
        ...                       "good": [0.9, 0.7, 0.5, 0.1] * 25, "flat": [0.5, 0.5, 0.4, 0.5] * 25})
        >>> table = paired_report(frame, "good", ["flat"], "label", n_resamples=200)
        >>> bool(table.loc[("flat", "spearman"), "significant"])
        True
    """
    labels = df[label_column]
    rows = []
    signatures: dict[str, list[str]] = {}
    for other in others:
        names = (reference, other)
        bootstrap = paired_bootstrap(df[reference], df[other], labels, statistics, n_resamples=n_resamples,
                                     confidence=confidence, seed=seed, names=names, undefined="nan")
        randomization = paired_randomization(df[reference], df[other], labels, statistics, n_trials=n_resamples,
                                             seed=seed, names=names)
        signatures[other] = [bootstrap.attrs["signature"], randomization.attrs["signature"]]
        for statistic in bootstrap.index:
            entry = bootstrap.loc[statistic]
            p_values = (float(entry["p_value"]), float(randomization.loc[statistic, "p_value"]))
            rows.append({"metric": other, "statistic": statistic, "delta": float(entry["delta"]),
                         "low": float(entry["low"]), "high": float(entry["high"]), "p_value": p_values[0],
                         "randomization_p_value": p_values[1],
                         "significant": bool(all(p < level for p in p_values))})  # NaN < level is False
    table = pd.DataFrame(rows).set_index(["metric", "statistic"])
    table.attrs["signatures"] = signatures
    return table


def paired_summary(table: pd.DataFrame, reference: str, printed: Mapping[str, str] | None = None) -> str:
    """One sentence per statistic of a :func:`paired_report`: which metrics ``reference`` is significantly above or
    below, and which differences the tests leave open. ``printed`` maps metric and statistic names to printed ones.

    Example:
        >>> table = pd.DataFrame({"delta": [0.2, 0.01], "significant": [True, False]},
        ...     index=pd.MultiIndex.from_tuples([("bleu", "spearman"), ("comet", "spearman")]))
        >>> paired_summary(table, "CAP", {"bleu": "BLEU", "comet": "COMET"})
        'spearman: CAP is significantly above BLEU; not significantly different from COMET.'
    """
    names = dict(printed or {})
    sentences = []
    for statistic in table.index.unique(1):
        rows = table.xs(statistic, level=1)
        groups = {"significantly above": rows.index[rows["significant"] & (rows["delta"] > 0)],
                  "significantly below": rows.index[rows["significant"] & (rows["delta"] < 0)],
                  "not significantly different from": rows.index[~rows["significant"].astype(bool)]}
        parts = [f"{verb} {', '.join(names.get(m, m) for m in metrics)}" for verb, metrics in groups.items()
                 if len(metrics)]
        sentences.append(f"{names.get(statistic, statistic)}: {reference} is {'; '.join(parts)}.")
    return " ".join(sentences)


def paired_verdict(delta: float, low: float, high: float, first: str, second: str, measure: str,
                   significant: bool | None = None) -> str:
    """The verdict on a paired difference ``first - second`` of ``measure`` (any scale, e.g. x100) and its interval
    (:func:`paired_bootstrap`), in words: ahead or behind when the interval excludes 0 (and, when ``significant`` is
    given, e.g. :func:`paired_report`'s, when it is true too), else not told apart by these rows: a point difference
    alone is never called a lead. An undefined interval says so.

    Example:
        >>> paired_verdict(2.5, 0.4, 4.6, "CAP", "BLEU", "ρ")
        'CAP is ahead of BLEU on ρ by 2.50 [0.40, 4.60]'
        >>> paired_verdict(1.0, -0.5, 2.5, "CAP", "the shortcut", "ρ")
        'these rows cannot tell CAP from the shortcut on ρ (+1.00 [-0.50, 2.50], an interval that includes 0)'
    """
    if np.isnan(low) or np.isnan(high):
        return f"{first} minus {second} on {measure} is {delta:+.2f}, without an interval (undefined on these rows)"
    decided = significant is not False
    if decided and low > 0:
        return f"{first} is ahead of {second} on {measure} by {delta:.2f} [{low:.2f}, {high:.2f}]"
    if decided and high < 0:
        return f"{first} is behind {second} on {measure} by {-delta:.2f} [{-high:.2f}, {-low:.2f}]"
    why = "an interval that includes 0" if low <= 0 <= high else "the tests' p-values do not both fall below 0.05"
    return f"these rows cannot tell {first} from {second} on {measure} ({delta:+.2f} [{low:.2f}, {high:.2f}], {why})"


def head_to_head(table: pd.DataFrame, reference: str, other: str,
                 paired: pd.DataFrame | None = None) -> tuple[dict[str, list[str]], str]:
    """Where ``reference`` is ahead of ``other`` in a :func:`report` table, level with it, or behind: Spearman,
    pairwise accuracy, violations (fewer is better) and every ``Acc``/``AUC`` column both rows define. A measure that
    ``paired`` (a :func:`paired_report` of ``reference`` against ``other`` among others) tests is decided by its
    test: ahead or behind only when significant, else level (the rows cannot tell the two apart); the others
    (violations, AUCs) by their values, and the text calls them untested. Returns
    ``({"beats": [...], "ties": [...], "loses": [...]}, text)``.

    Example:
        >>> table = pd.DataFrame({"spearman": [0.6, 0.5], "violations": [3, 4]}, index=["cap", "shortcut"])
        >>> tests = pd.DataFrame({"delta": [0.1], "significant": [False]},
        ...                      index=pd.MultiIndex.from_tuples([("shortcut", "spearman")]))
        >>> head_to_head(table, "cap", "shortcut", tests)
        ({'beats': ['violations'], 'ties': ['spearman'], 'loses': []}, 'by the paired tests, not distinguishable on \
spearman. Untested (point values): ahead on violations.')
    """
    columns = [c for c in ["spearman", "pairwise_accuracy", "violations"] + [c for c in table.columns
                                                                           if c.startswith(("Acc ", "AUC "))]
               if c in table.columns and pd.notna(table.loc[reference, c]) and pd.notna(table.loc[other, c])]
    tested = set() if paired is None or other not in paired.index.unique(0) else set(paired.loc[other].index)
    verdict: dict[str, list[str]] = {"beats": [], "ties": [], "loses": []}
    for column in columns:
        if column in tested:
            row = paired.loc[(other, column)]
            sign = np.sign(row["delta"]) if bool(row["significant"]) else 0
        else:
            mine, theirs = table.loc[reference, column], table.loc[other, column]
            sign = np.sign(theirs - mine) if column == "violations" else np.sign(mine - theirs)
        verdict["beats" if sign > 0 else "ties" if sign == 0 else "loses"].append(column)

    def said(keep: Callable[[str], bool], words: tuple[str, str, str]) -> str:
        parts = [f"{word} on {', '.join(c for c in verdict[key] if keep(c))}" for key, word in zip(verdict, words)
                 if any(keep(c) for c in verdict[key])]
        return "; ".join(parts)

    by_test = said(lambda c: c in tested, ("ahead", "not distinguishable", "behind"))
    by_value = said(lambda c: c not in tested, ("ahead", "level", "behind"))
    text = ". ".join(part for part in (f"by the paired tests, {by_test}" if by_test else "",
                                       f"Untested (point values): {by_value}" if by_value else "") if part)
    return verdict, text + "."
