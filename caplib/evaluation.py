"""The monotonicity evaluation protocol of Sec. 6.2 and App. C.1, with the bootstrap of App. D.1.

A metric ``m`` gives every (gold, prediction) pair a score; each pair carries a taxonomy class ``c``.
The protocol asks whether the scores respect the ordering of Eq. 1, realized as the integer severity
map of App. C.2 (``caplib.taxonomy.SEVERITY``):

- rank correlation: Spearman's rho and Kendall's tau-b between scores and severities (mid-ranks);
- pairwise ranking accuracy (Eq. 8): over *all* example pairs (a, b) whose classes form a strictly
  ordered pair, the fraction with m(a) > m(b);
- monotonicity violations: strictly ordered class pairs whose class means are inverted (<=);
- hard neighbouring-pair accuracy (Tab. 4) and per-pair AUCs (Tab. 3).

Every value is a fraction in [0, 1]; the paper prints them x100.

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
from typing import Callable, Iterator, Mapping, Sequence

import numpy as np
import pandas as pd
import scipy
from scipy import stats
from sklearn.metrics import cohen_kappa_score

from caplib.signature import Signature
from caplib.taxonomy import (
    ABBREVIATIONS,
    HARD_PAIRS,
    LABELS,
    SEPARABILITY_PAIRS,
    SEVERITY,
    STRICT_PAIRS,
    normalize_label,
)

Pair = tuple[str, str]
Statistic = Callable[[np.ndarray, np.ndarray], float]

#: Statistics that ``bootstrap_ci`` accepts by name and computes for all resamples at once.
BATCHED_STATISTICS: tuple[str, ...] = ("spearman", "kendall", "pairwise_accuracy")

# Elements per bootstrap block (resamples x examples): bounds the memory of one block to ~16 MB per array.
_BLOCK_ELEMENTS = 2_000_000


def pair_name(higher: str, lower: str) -> str:
    """The name of a class pair in the paper's tables (the columns of Tab. 3 and 4): ``higher>lower`` abbreviated.

    Example:
        >>> pair_name("equivalent", "partial"), pair_name("exact", "invalid")
        ('Eq>Part', 'Exact>Inv')
    """
    return f"{ABBREVIATIONS[higher]}>{ABBREVIATIONS[lower]}"


# ---------------------------------------------------------------------------------------------------------------
# Input validation


def _labels_array(labels: Sequence[str] | np.ndarray | pd.Series, *, name: str = "labels") -> np.ndarray:
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


def _prepare(scores: Sequence[float] | np.ndarray, labels: Sequence[str] | np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Validated ``(scores as float64, canonical labels)``: same non-zero length, finite scores."""
    values = np.asarray(scores, dtype=np.float64)
    if values.ndim != 1:
        raise ValueError(f"scores must be one-dimensional, got shape {values.shape}")
    canonical = _labels_array(labels)
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


def _sorted_by_class(values: np.ndarray, canonical: np.ndarray) -> dict[str, np.ndarray]:
    """Each present class's scores, sorted ascending (the basis of all rank counting below)."""
    return {label: np.sort(values[canonical == label]) for label in LABELS if (canonical == label).any()}


def _check_pair(higher: str, lower: str, *, strict: bool) -> Pair:
    pair = normalize_label(higher), normalize_label(lower)
    if pair[0] == pair[1]:
        raise ValueError(f"a class pair needs two different classes, got {higher!r} and {lower!r}")
    if strict and SEVERITY[pair[0]] <= SEVERITY[pair[1]]:
        raise ValueError(
            f"({higher!r}, {lower!r}) is not a strictly ordered pair: severity {SEVERITY[pair[0]]} "
            f"vs {SEVERITY[pair[1]]} (App. C.2); pass (higher, lower) with higher severity first"
        )
    return pair


def _pair_counts(by_class: Mapping[str, np.ndarray], higher: str, lower: str) -> tuple[int, int, int]:
    """``(#{m(a) > m(b)}, #{m(a) == m(b)}, #pairs)`` over a in ``higher``, b in ``lower``, by rank counting.

    O((n_a + n_b) log n_b): for each score of ``higher`` count the ``lower`` scores below / equal to it
    with ``np.searchsorted`` on the sorted ``lower`` scores; no pair is materialized.
    """
    high, low = by_class[higher], by_class[lower]
    below = np.searchsorted(low, high, side="left")
    at_or_below = np.searchsorted(low, high, side="right")
    greater = int(below.sum())
    return greater, int(at_or_below.sum()) - greater, len(high) * len(low)


def _missing(by_class: Mapping[str, np.ndarray], pair: Pair) -> list[str]:
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
    values, canonical = _prepare(scores, labels)
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
    values, canonical = _prepare(scores, labels)
    ranks = np.array([SEVERITY[label] for label in canonical])
    _check_correlation_defined(values, ranks)
    spearman = stats.spearmanr(values, ranks).statistic
    kendall = stats.kendalltau(values, ranks, variant="b").statistic
    return float(spearman), float(kendall)


def _check_correlation_defined(values: np.ndarray, ranks: np.ndarray) -> None:
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
    checked = STRICT_PAIRS if pairs is None else tuple(_check_pair(h, l, strict=True) for h, l in pairs)
    values, canonical = _prepare(scores, labels)
    by_class = _sorted_by_class(values, canonical)
    correct = 0.0
    total = 0
    for higher, lower in checked:
        if _missing(by_class, (higher, lower)):
            continue
        greater, equal, count = _pair_counts(by_class, higher, lower)
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
    pair = _check_pair(higher, lower, strict=False)
    values, canonical = _prepare(scores, labels)
    by_class = _sorted_by_class(values, canonical)
    absent = _missing(by_class, pair)
    if absent:
        raise ValueError(
            f"pair_auc({higher!r}, {lower!r}): class {', '.join(absent)} has no example in the data "
            f"(present: {', '.join(by_class)})"
        )
    greater, equal, count = _pair_counts(by_class, *pair)
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
    values, canonical = _prepare(scores, labels)
    by_class = _sorted_by_class(values, canonical)
    result: dict[str, float] = {}
    for higher, lower in HARD_PAIRS:
        absent = _missing(by_class, (higher, lower))
        if absent and missing == "raise":
            raise ValueError(
                f"hard pair {pair_name(higher, lower)}: class {', '.join(absent)} has no example in the data"
            )
        if absent:
            result[pair_name(higher, lower)] = float("nan")
            continue
        greater, _, count = _pair_counts(by_class, higher, lower)
        result[pair_name(higher, lower)] = greater / count
    return result


# ---------------------------------------------------------------------------------------------------------------
# Bootstrap (App. D.1)


def _resample_blocks(rng: np.random.Generator, n: int, n_resamples: int) -> Iterator[np.ndarray]:
    """Blocks of bootstrap index rows (each row: n draws with replacement), one fixed block layout.

    Both bootstrap paths draw through here, so a seed gives the same resamples in either.
    """
    block = max(1, _BLOCK_ELEMENTS // n)
    for start in range(0, n_resamples, block):
        yield rng.integers(0, n, size=(min(block, n_resamples - start), n))


def _batched(name: str, values: np.ndarray, canonical: np.ndarray, indices: np.ndarray) -> np.ndarray:
    """Spearman / Kendall tau-b / pairwise accuracy of every resample in ``indices`` at once.

    A resample is the original data with multiplicities ``W`` (bootstrap weights), so nothing is sorted
    per resample: the examples are sorted once by (score ascending, severity descending), which makes
    every score tie group and every (score, severity) group contiguous, and cumulative sums of ``W``
    give every mid-rank and every "lower-severity weight at a strictly lower score" count. The results
    equal scipy's on the materialized resamples (tested).
    """
    rows, n = indices.shape
    severity = np.array([SEVERITY[label] for label in canonical])
    order = np.lexsort((-severity, values))
    x, severity = values[order], severity[order]
    position = np.empty(n, dtype=np.int64)
    position[order] = np.arange(n)  # where each example lands in the sorted order
    W = np.bincount((position[indices] + n * np.arange(rows)[:, None]).ravel(), minlength=rows * n)
    W = W.reshape(rows, n).astype(np.float64)

    new_score = np.r_[True, x[1:] != x[:-1]]
    c = np.add.reduceat(W, np.flatnonzero(new_score), axis=1)  # weight of each score tie group
    levels = np.unique(severity)
    columns = [np.flatnonzero(severity == level) for level in levels]
    m = np.stack([W[:, cols].sum(axis=1) for cols in columns], axis=1)  # weight of each severity level

    if name == "spearman":
        rank_x = (np.cumsum(c, axis=1) - c + (c + 1) / 2)[:, np.cumsum(new_score) - 1]
        rank_y = (np.cumsum(m, axis=1) - m + (m + 1) / 2)[:, np.searchsorted(levels, severity)]
        mean_x = (W * rank_x).sum(axis=1) / n
        mean_y = (W * rank_y).sum(axis=1) / n
        cov = (W * rank_x * rank_y).sum(axis=1) / n - mean_x * mean_y
        var_x = (W * rank_x**2).sum(axis=1) / n - mean_x**2
        var_y = (W * rank_y**2).sum(axis=1) / n - mean_y**2
        return cov / np.sqrt(var_x * var_y)

    # wins: pairs (a, b) with severity(a) > severity(b) and score(a) > score(b). Within a tie group the
    # higher severities come first, so the level-j weight *before* a level-k example (j < k) is exactly
    # the level-j weight at a strictly lower score.
    before = [np.concatenate([np.zeros((rows, 1)), W[:, cols].cumsum(axis=1)], axis=1) for cols in columns]
    wins = np.zeros(rows)
    for k in range(1, len(levels)):
        below = sum(before[j][:, np.searchsorted(columns[j], columns[k])] for j in range(k))
        wins += (W[:, columns[k]] * below).sum(axis=1)
    pairs = sum(m[:, k] * m[:, :k].sum(axis=1) for k in range(1, len(levels)))
    if name == "pairwise_accuracy":
        return wins / pairs
    # Cross-level pairs tied in score: within each tie group, all pairs minus same-level pairs.
    new_cell = new_score | np.r_[True, severity[1:] != severity[:-1]]
    cell = np.add.reduceat(W, np.flatnonzero(new_cell), axis=1)
    tied = ((c**2).sum(axis=1) - (cell**2).sum(axis=1)) / 2
    losses = pairs - wins - tied
    n0 = n * (n - 1) / 2
    ties_x = (c * (c - 1) / 2).sum(axis=1)
    ties_y = (m * (m - 1) / 2).sum(axis=1)
    return (wins - losses) / np.sqrt((n0 - ties_x) * (n0 - ties_y))


def bootstrap_ci(
    statistic: Statistic | str,
    scores: Sequence[float] | np.ndarray,
    labels: Sequence[str],
    n_resamples: int = 10_000,
    confidence: float = 0.95,
    seed: int = 0,
) -> tuple[float, float, float]:
    """``(point, low, high)``: percentile bootstrap over examples (App. D.1), reproducible by ``seed``.

    ``statistic`` is a callable ``(scores, labels) -> float`` called on each resample (labels arrive
    canonical), or one of ``BATCHED_STATISTICS`` (``"spearman"``, ``"kendall"``, ``"pairwise_accuracy"``
    with the 25 strict pairs, ties 0), computed for all resamples at once in O(n) each -- the same
    numbers as ``lambda s, l: rank_correlation(s, l)[0]`` etc. for the same seed, much faster
    (10,000 resamples of 1,000 rows: about a second instead of tens of seconds; of 7,827 rows,
    Tab. 13's setting: a few seconds). Resamples draw n examples with replacement
    from ``np.random.default_rng(seed)``; the interval is the (1 - confidence)/2 and (1 + confidence)/2
    percentiles (linear interpolation) of the resampled statistics.

    Example:
        >>> scores, labels = [0.9, 0.8, 0.6, 0.5, 0.2, 0.1], ["exact", "Eq", "OV", "Part", "Inv", "Contra"]
        >>> point, low, high = bootstrap_ci("spearman", scores, labels, n_resamples=200)
        >>> low <= point <= high
        True

    Raises:
        ValueError: bad input, an unknown statistic name, or a resample where the statistic is undefined.
    """
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must lie in (0, 1), got {confidence}")
    if n_resamples < 1:
        raise ValueError(f"n_resamples must be positive, got {n_resamples}")
    values, canonical = _prepare(scores, labels)
    if isinstance(statistic, str):
        if statistic not in BATCHED_STATISTICS:
            raise ValueError(f"unknown statistic {statistic!r}; by name: {', '.join(BATCHED_STATISTICS)}")
        name = statistic
        point = {
            "spearman": lambda: rank_correlation(values, canonical)[0],
            "kendall": lambda: rank_correlation(values, canonical)[1],
            "pairwise_accuracy": lambda: pairwise_accuracy(values, canonical),
        }[name]()
    else:
        name = ""
        point = float(statistic(values, canonical))
    rng = np.random.default_rng(seed)
    resampled = []
    for block in _resample_blocks(rng, len(values), n_resamples):
        if name:
            with np.errstate(invalid="ignore", divide="ignore"):  # undefined resamples: NaN, raised below
                resampled.append(_batched(name, values, canonical, block))
        else:
            resampled.append(np.array([float(statistic(values[row], canonical[row])) for row in block]))
    samples = np.concatenate(resampled)
    if not np.all(np.isfinite(samples)):
        raise ValueError(
            f"the statistic is undefined on {int((~np.isfinite(samples)).sum())} of {n_resamples} resamples "
            "(e.g. a resample with a single severity level); use more data"
        )
    low, high = np.percentile(samples, [50 * (1 - confidence), 50 * (1 + confidence)])
    return float(point), float(low), float(high)


# ---------------------------------------------------------------------------------------------------------------
# Agreement (Tab. 8) and the report table


def agreement(labels_a: Sequence[str | None], labels_b: Sequence[str | None]) -> dict[str, float]:
    """Cohen's kappa between two labelings: unweighted, linear and quadratic weighted (Tab. 8).

    Weights use the distance between positions in ``LABELS`` (the order of Eq. 1, 0..7). Rows where
    either label is missing (None, NaN, empty string) are excluded; the result's ``"n"`` is the number
    of rows used.

    Example:
        >>> # row 5 dropped (blank); 3 of 4 agree; marginals a: exact 2, invalid 2; b: exact 1, invalid 3
        >>> # -> p_e = (2*1 + 2*3) / 16 = 0.5, kappa = (0.75 - 0.5) / (1 - 0.5)
        >>> a = ["exact", "exact", "invalid", "invalid", ""]
        >>> result = agreement(a, ["exact", "invalid", "invalid", "Inv", "exact"])
        >>> round(result["kappa"], 4), result["n"]
        (0.5, 4)

    Raises:
        ValueError: lengths differ, an unknown label, fewer than two usable rows, or kappa undefined
            (both labelings use one and the same single class).
    """
    a = pd.Series(list(labels_a), dtype=object)
    b = pd.Series(list(labels_b), dtype=object)
    if len(a) != len(b):
        raise ValueError(f"labelings differ in length: {len(a)} vs {len(b)}")

    def blank(series: pd.Series) -> pd.Series:
        return series.isna() | (series.astype(str).str.strip() == "")

    keep = ~(blank(a) | blank(b))
    if keep.sum() < 2:
        raise ValueError(f"agreement needs at least two rows labelled on both sides; {int(keep.sum())} found")
    a = _labels_array(a[keep].to_numpy(), name="labels_a")
    b = _labels_array(b[keep].to_numpy(), name="labels_b")
    if len(set(a) | set(b)) < 2:
        raise ValueError(f"kappa is undefined: every label on both sides is {a[0]!r}")
    result: dict[str, float] = {}
    for key, weights in (("kappa", None), ("linear", "linear"), ("quadratic", "quadratic")):
        result[key] = float(cohen_kappa_score(a, b, labels=list(LABELS), weights=weights))
    result["n"] = int(len(a))
    return result


def report(
    df: pd.DataFrame,
    metric_columns: Sequence[str],
    label_column: str,
    n_resamples: int = 0,
    seed: int = 0,
    confidence: float = 0.95,
) -> pd.DataFrame:
    """One row per metric column: the measures of Tab. 2, 3, 4 and 14 (and the CIs of Tab. 13).

    Columns: ``n``, ``spearman``, ``kendall``, ``pairwise_accuracy``, ``violations`` (count),
    ``ordered_pairs`` (strict pairs with both classes present: 25 with all eight classes),
    ``violation_rate`` (violations / ordered_pairs, Tab. 14's count/25), ``Acc Eq>Part`` ...
    ``Acc Alt>Inv`` (Tab. 4), ``AUC Exact>Inv`` ... ``AUC OV>OI`` (Tab. 3), and with ``n_resamples > 0``
    ``spearman_low``, ``spearman_high``, ``kendall_low``, ``kendall_high``. A hard pair or AUC pair
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
    labels = _labels_array(df[label_column].to_numpy(), name=f"column {label_column!r}")
    rows = []
    for column in metric_columns:
        try:
            values, canonical = _prepare(df[column].to_numpy(), labels)
        except ValueError as error:
            raise ValueError(f"metric column {column!r}: {error}") from None
        by_class = _sorted_by_class(values, canonical)
        spearman, kendall = rank_correlation(values, canonical)
        violations = monotonicity_violations(class_means(values, canonical), missing="skip")
        ordered = sum(1 for pair in STRICT_PAIRS if not _missing(by_class, pair))
        row: dict[str, float | int | str] = {
            "metric": column,
            "n": len(values),
            "spearman": spearman,
            "kendall": kendall,
            "pairwise_accuracy": pairwise_accuracy(values, canonical),
            "violations": len(violations),
            "ordered_pairs": ordered,
            "violation_rate": len(violations) / ordered,
        }
        for key, accuracy in hard_pair_accuracy(values, canonical).items():
            row[f"Acc {key}"] = accuracy
        for higher, lower in SEPARABILITY_PAIRS:
            present = not _missing(by_class, (higher, lower))
            row[f"AUC {pair_name(higher, lower)}"] = (
                pair_auc(values, canonical, higher, lower) if present else float("nan")
            )
        if n_resamples > 0:
            for name in ("spearman", "kendall"):
                _, low, high = bootstrap_ci(name, values, canonical, n_resamples, confidence, seed)
                row[f"{name}_low"], row[f"{name}_high"] = low, high
        rows.append(row)
    table = pd.DataFrame(rows).set_index("metric")
    table.attrs["signature"] = str(Signature.of("caplib.evaluation", {
        "labels": label_column, "severity": "App.C.2", "pairs": 25, "ties": "zero", "bootstrap": n_resamples,
        "confidence": confidence, "seed": seed, "numpy": np.__version__, "scipy": scipy.__version__}))
    return table
