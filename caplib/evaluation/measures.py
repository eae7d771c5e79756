"""The measures of the monotonicity protocol (Sec. 6.2, App. C.1) and the input checks they share.

A metric ``m`` gives every (gold, prediction) pair a score; each pair carries a taxonomy class ``c``.
The protocol asks whether the scores respect the ordering of Eq. 1, realized as the integer severity
map of App. C.2 (``caplib.taxonomy.SEVERITY``):

- rank correlation: Spearman's rho and Kendall's tau-b between scores and severities (mid-ranks);
- pairwise ranking accuracy (Eq. 8): over *all* example pairs (a, b) whose classes form a strictly
  ordered pair, the fraction with m(a) > m(b);
- monotonicity violations: strictly ordered class pairs whose class means are inverted (<=);
- hard neighbouring-pair accuracy (Tab. 4) and per-pair AUCs (Tab. 3).

Every value is a fraction in [0, 1]; the paper prints them x100. The input checks (:func:`prepare`,
:func:`labels_array`, ...) are public inside :mod:`caplib.evaluation` so that its other modules share them;
``caplib.evaluation`` itself exports the measures only.

Example:
    >>> scores = [0.9, 0.8, 0.4, 0.1]
    >>> labels = ["exact", "partial", "OI", "invalid"]
    >>> pairwise_accuracy(scores, labels)
    1.0
    >>> monotonicity_violations(class_means(scores, labels), missing="skip")
    []
"""

from __future__ import annotations

import math
from typing import Mapping, Sequence

import numpy as np
import pandas as pd
from scipy import stats

from caplib.taxonomy import ABBREVIATIONS, HARD_PAIRS, LABELS, SEVERITY, STRICT_PAIRS, normalize_label

Pair = tuple[str, str]


def pair_name(higher: str, lower: str) -> str:
    """The name of a class pair in the paper's tables (the columns of Tab. 3 and 4): ``higher>lower`` abbreviated.

    Example:
        >>> pair_name("equivalent", "partial"), pair_name("exact", "invalid")
        ('Eq>Part', 'Exact>Inv')
    """
    return f"{ABBREVIATIONS[higher]}>{ABBREVIATIONS[lower]}"


# ---------------------------------------------------------------------------------------------------------------
# Input validation


def blank_labels(labels: Sequence[str | None] | np.ndarray | pd.Series) -> np.ndarray:
    """Which labels are missing: None, NaN, or an empty or all-space string (a row a labeling left unlabelled).

    Example:
        >>> blank_labels(["exact", None, float("nan"), " ", "invalid"]).tolist()
        [False, True, True, True, False]
    """
    series = pd.Series(list(labels), dtype=object)
    return (series.isna() | series.astype(str).str.strip().eq("")).to_numpy()


def labels_array(labels: Sequence[str] | np.ndarray | pd.Series, *, name: str = "labels") -> np.ndarray:
    """Canonical labels as an object array; each distinct spelling is normalized once (fast on 100k rows)."""
    raw = np.asarray(labels, dtype=object)
    if raw.ndim != 1:
        raise ValueError(f"{name} must be one-dimensional, got shape {raw.shape}")
    missing = pd.isna(raw)
    if missing.any():
        where = np.flatnonzero(missing)
        raise ValueError(
            f"{name} has {len(where)} missing value(s) (first at position {int(where[0])}); "
            "drop those rows or fill in a taxonomy label"
        )
    uniques, inverse = np.unique(raw.astype(str), return_inverse=True)
    canonical = []
    for spelling in uniques:
        try:
            canonical.append(normalize_label(spelling))
        except ValueError as error:
            position = int(np.flatnonzero(raw.astype(str) == spelling)[0])
            raise ValueError(f"{name}[{position}]: {error}") from None
    return np.asarray(canonical, dtype=object)[inverse]


def prepare(scores: Sequence[float] | np.ndarray, labels: Sequence[str] | np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Validated ``(scores as float64, canonical labels)``: same non-zero length, finite scores."""
    values = np.asarray(scores, dtype=np.float64)
    if values.ndim != 1:
        raise ValueError(f"scores must be one-dimensional, got shape {values.shape}")
    canonical = labels_array(labels)
    if len(values) != len(canonical):
        raise ValueError(f"scores and labels differ in length: {len(values)} scores vs {len(canonical)} labels")
    if len(values) == 0:
        raise ValueError("empty input: at least two examples of two differently ranked classes are needed")
    bad = ~np.isfinite(values)
    if bad.any():
        where = np.flatnonzero(bad)
        raise ValueError(
            f"scores has {len(where)} non-finite value(s) (first at position {int(where[0])}: {values[where[0]]}); "
            "the metric failed on those rows: rescore or drop them"
        )
    return values, canonical


def sorted_by_class(values: np.ndarray, canonical: np.ndarray) -> dict[str, np.ndarray]:
    """Each present class's scores, sorted ascending (the basis of all rank counting below)."""
    return {label: np.sort(values[canonical == label]) for label in LABELS if (canonical == label).any()}


def check_pair(higher: str, lower: str, *, strict: bool) -> Pair:
    pair = normalize_label(higher), normalize_label(lower)
    if pair[0] == pair[1]:
        raise ValueError(f"a class pair needs two different classes, got {higher!r} and {lower!r}")
    if strict and SEVERITY[pair[0]] <= SEVERITY[pair[1]]:
        raise ValueError(
            f"({higher!r}, {lower!r}) is not a strictly ordered pair: severity {SEVERITY[pair[0]]} "
            f"vs {SEVERITY[pair[1]]} (App. C.2); pass (higher, lower) with higher severity first"
        )
    return pair


def pair_counts(by_class: Mapping[str, np.ndarray], higher: str, lower: str) -> tuple[int, int, int]:
    """``(#{m(a) > m(b)}, #{m(a) == m(b)}, #pairs)`` over a in ``higher``, b in ``lower``, by rank counting.

    O((n_a + n_b) log n_b): for each score of ``higher`` count the ``lower`` scores below / equal to it
    with ``np.searchsorted`` on the sorted ``lower`` scores; no pair is materialized.
    """
    high, low = by_class[higher], by_class[lower]
    below = np.searchsorted(low, high, side="left")
    at_or_below = np.searchsorted(low, high, side="right")
    greater = int(below.sum())
    return greater, int(at_or_below.sum()) - greater, len(high) * len(low)


def absent_classes(by_class: Mapping[str, np.ndarray], pair: Pair) -> list[str]:
    return [label for label in pair if label not in by_class]


# ---------------------------------------------------------------------------------------------------------------
# Measures of Sec. 6.2 / App. C.1


def class_means(scores: Sequence[float] | np.ndarray, labels: Sequence[str]) -> dict[str, float]:
    """Mean score per class (mu_m(c) of App. C.1), for the classes present, in taxonomy order.

    Labels are normalized (``"OV"``, ``"alternative-correct"`` ...). A single class is fine here.

    Example:
        >>> class_means([1.0, 0.5, 0.0], ["exact", "Exact", "invalid"])
        {'exact': 0.75, 'invalid': 0.0}
    """
    values, canonical = prepare(scores, labels)
    return {label: float(values[canonical == label].mean()) for label in LABELS if (canonical == label).any()}


def rank_correlation(scores: Sequence[float] | np.ndarray, labels: Sequence[str]) -> tuple[float, float]:
    """``(spearman, kendall)``: Spearman's rho and Kendall's tau-b against the severity ranks (App. C.1, C.2).

    Ties (in scores and in the tied top classes exact = equivalent = alternative-correct) use mid-ranks.

    Example:
        >>> rank_correlation([0.9, 0.5, 0.1], ["exact", "partial", "invalid"])
        (1.0, 1.0)

    Raises:
        ValueError: empty or mismatched input, non-finite scores, fewer than two severity levels
            (e.g. a single class) or constant scores: the correlation is undefined there.
    """
    values, canonical = prepare(scores, labels)
    ranks = np.array([SEVERITY[label] for label in canonical])
    check_correlation_defined(values, ranks)
    spearman = stats.spearmanr(values, ranks).statistic
    kendall = stats.kendalltau(values, ranks, variant="b").statistic
    return float(spearman), float(kendall)


def check_correlation_defined(values: np.ndarray, ranks: np.ndarray) -> None:
    if len(np.unique(ranks)) < 2:
        present = sorted({label for label, rank in SEVERITY.items() if rank in set(ranks.tolist())})
        raise ValueError(
            f"rank correlation needs at least two severity levels; all {len(ranks)} examples have severity "
            f"{int(ranks[0])} ({', '.join(present)})"
        )
    if np.all(values == values[0]):
        raise ValueError(f"rank correlation is undefined for constant scores (all {len(values)} equal {values[0]})")


def pairwise_accuracy(
    scores: Sequence[float] | np.ndarray,
    labels: Sequence[str],
    pairs: Sequence[Pair] | None = None,
    ties: str = "zero",
) -> float:
    """Pairwise ranking accuracy (Eq. 8), exactly, over all example pairs of strictly ordered classes.

    Every example pair (a, b) whose classes form one of ``pairs`` (default: the 25 ``STRICT_PAIRS``)
    counts once; the result is total correct / total pairs, so class pairs weigh by their number of
    example pairs. ``m(a) > m(b)`` counts 1, a tie counts 0 (``ties="zero"``, Eq. 8) or 1/2
    (``ties="half"``). Class pairs with a class absent from the data hold no example pair and so drop
    out of the mean; only when *no* pair is left is it an error. Runs in O(n log n) per class pair.

    Example:
        >>> # exact > partial: 0.9 > 0.5; exact > invalid: 0.9 > 0.2, 0.9 = 0.9 (tie);
        >>> # partial > invalid: 0.5 > 0.2, 0.5 < 0.9 -> 3 of 5 pairs (3.5 with ties counting half)
        >>> pairwise_accuracy([0.9, 0.5, 0.2, 0.9], ["exact", "partial", "invalid", "invalid"])
        0.6
        >>> pairwise_accuracy([0.9, 0.5, 0.2, 0.9], ["exact", "partial", "invalid", "invalid"], ties="half")
        0.7

    Raises:
        ValueError: bad input, a pair that is not strictly ordered, an unknown ``ties``, or no pair
            with both classes present (e.g. a single class).
    """
    if ties not in ("zero", "half"):
        raise ValueError(f"ties must be 'zero' (Eq. 8) or 'half', got {ties!r}")
    checked = STRICT_PAIRS if pairs is None else tuple(check_pair(h, l, strict=True) for h, l in pairs)
    values, canonical = prepare(scores, labels)
    by_class = sorted_by_class(values, canonical)
    correct = 0.0
    total = 0
    for higher, lower in checked:
        if absent_classes(by_class, (higher, lower)):
            continue
        greater, equal, count = pair_counts(by_class, higher, lower)
        correct += greater + (0.5 * equal if ties == "half" else 0.0)
        total += count
    if total == 0:
        raise ValueError(
            f"no example pair to compare: the data hold only {', '.join(by_class)}, and none of the "
            f"{len(checked)} requested class pairs has both classes present"
        )
    return correct / total


def monotonicity_violations(class_means: Mapping[str, float], missing: str = "raise") -> list[Pair]:
    """The strictly ordered pairs ``(higher, lower)`` with ``mean(higher) <= mean(lower)`` (App. C.1).

    ``class_means`` maps any label spelling to a mean (e.g. from :func:`class_means`, or a paper table).
    The violation rate of Tab. 14 is ``len(result) / 25``, which presumes all eight classes:
    ``missing="raise"`` (default) refuses a mapping without them; ``missing="skip"`` drops the pairs
    with an absent class (then fewer than 25 pairs are compared: check which classes are present).
    Pairs come in ``STRICT_PAIRS`` order.

    Example:
        >>> means = {"exact": 98.79, "Eq": 84.59, "Part": 83.61, "OV": 50.07, "OI": 39.20,
        ...          "Invalid": 13.04, "Contradictory": 3.18, "Alt": 36.74}   # Tab. 17, synthetic
        >>> len(monotonicity_violations(means))
        4

    Raises:
        ValueError: a class missing under ``missing="raise"``, two spellings of one class, a NaN mean.
    """
    if missing not in ("raise", "skip"):
        raise ValueError(f"missing must be 'raise' or 'skip', got {missing!r}")
    means: dict[str, float] = {}
    for key, value in class_means.items():
        label = normalize_label(key)
        if label in means:
            raise ValueError(f"class {label!r} appears twice in class_means (as {key!r} and another spelling)")
        if value is None or math.isnan(float(value)):
            raise ValueError(f"class mean of {key!r} is missing (NaN); drop the class or fix its mean")
        means[label] = float(value)
    absent = [label for label in LABELS if label not in means]
    if absent and missing == "raise":
        raise ValueError(
            f"class_means lacks {', '.join(absent)}: the 25-pair count needs all eight classes; "
            "pass missing='skip' to compare only the pairs whose classes are present"
        )
    return [
        (higher, lower)
        for higher, lower in STRICT_PAIRS
        if higher in means and lower in means and means[higher] <= means[lower]
    ]


def pair_auc(scores: Sequence[float] | np.ndarray, labels: Sequence[str], higher: str, lower: str) -> float:
    """AUC of separating class ``higher`` from class ``lower`` by score (Tab. 3): P(m(a) > m(b)) + P(tie)/2.

    Equals ``sklearn.metrics.roc_auc_score`` with ``higher`` as the positive class, computed by rank
    counting. ``higher`` is the class expected to score higher; any two different classes are accepted.

    Example:
        >>> # pairs: (0.9, 0.1) win, (0.9, 0.9) tie, (0.4, 0.1) win, (0.4, 0.9) loss -> (2 + 0.5) / 4
        >>> pair_auc([0.9, 0.4, 0.1, 0.9], ["exact", "exact", "invalid", "invalid"], "exact", "invalid")
        0.625

    Raises:
        ValueError: bad input, or ``higher`` / ``lower`` absent from the data (named in the message).
    """
    pair = check_pair(higher, lower, strict=False)
    values, canonical = prepare(scores, labels)
    by_class = sorted_by_class(values, canonical)
    absent = absent_classes(by_class, pair)
    if absent:
        raise ValueError(
            f"pair_auc({higher!r}, {lower!r}): class {', '.join(absent)} has no example in the data "
            f"(present: {', '.join(by_class)})"
        )
    greater, equal, count = pair_counts(by_class, *pair)
    return (greater + 0.5 * equal) / count


def hard_pair_accuracy(
    scores: Sequence[float] | np.ndarray, labels: Sequence[str], missing: str = "nan"
) -> dict[str, float]:
    """Pairwise accuracy (Eq. 8, ties count 0) restricted to each hard neighbouring pair of Tab. 4.

    Keys ``"Eq>Part"``, ``"OV>Part"``, ``"OV>OI"``, ``"Alt>Inv"``. A pair with a class absent from the
    data has no defined accuracy: ``missing="nan"`` (default) reports it as ``nan`` (an empty cell of
    the table, while the other pairs are still reported); ``missing="raise"`` raises instead.

    Example:
        >>> accuracy = hard_pair_accuracy([0.9, 0.6, 0.5, 0.2], ["equivalent", "OV", "partial", "OI"])
        >>> accuracy["Eq>Part"], accuracy["OV>OI"], accuracy["Alt>Inv"]
        (1.0, 1.0, nan)
    """
    if missing not in ("nan", "raise"):
        raise ValueError(f"missing must be 'nan' or 'raise', got {missing!r}")
    values, canonical = prepare(scores, labels)
    by_class = sorted_by_class(values, canonical)
    result: dict[str, float] = {}
    for higher, lower in HARD_PAIRS:
        absent = absent_classes(by_class, (higher, lower))
        if absent and missing == "raise":
            raise ValueError(
                f"hard pair {pair_name(higher, lower)}: class {', '.join(absent)} has no example in the data"
            )
        if absent:
            result[pair_name(higher, lower)] = float("nan")
            continue
        greater, _, count = pair_counts(by_class, higher, lower)
        result[pair_name(higher, lower)] = greater / count
    return result
