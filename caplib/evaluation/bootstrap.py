"""Resampling over examples (App. D.1): confidence intervals of one metric's measures, and paired tests of two
metrics on the same labelled examples (sacrebleu's ``significance`` module is the model, adapted from comparing
two systems under one metric to comparing two metrics on one set of systems' answers).

- :func:`bootstrap_ci`: percentile bootstrap of one measure (Tab. 13).
- :func:`paired_bootstrap`: the same resamples for both metrics; CI and p-value of the difference.
- :func:`paired_randomization`: approximate randomization, each example's two scores swapped with probability 1/2.

Every resample is the data with multiplicities (bootstrap weights), so nothing is sorted per resample: a metric's
examples are sorted once (:class:`_Ranking`) and the measures of all resamples of a block follow from cumulative
sums of the weights (:func:`_batched`), in O(n) per resample.

Example:
    >>> labels = ["exact", "Eq", "OV", "Part", "OI", "Inv", "Contra", "Alt"] * 4
    >>> a = [0.9, 0.8, 0.7, 0.6, 0.4, 0.2, 0.1, 0.85] * 4
    >>> b = [0.9, 0.5, 0.7, 0.6, 0.4, 0.8, 0.1, 0.3] * 4
    >>> table = paired_bootstrap(a, b, labels, statistics=("spearman",), n_resamples=500, names=("a", "b"))
    >>> table.loc["spearman", "delta"] > 0, table.loc["spearman", "p_value"] < 0.05
    (True, True)
"""

from __future__ import annotations

import os
from collections import deque
from concurrent.futures import ThreadPoolExecutor
from typing import Callable, Iterable, Iterator, Sequence, TypeVar

import numpy as np
import pandas as pd
from scipy import stats

from caplib.evaluation.measures import hard_pair_accuracy, pair_name, pairwise_accuracy, prepare, rank_correlation
from caplib.signature import Signature
from caplib.taxonomy import HARD_PAIRS, LABELS, SEVERITY, STRICT_PAIRS

__all__ = ["BATCHED_STATISTICS", "PAIRED_STATISTICS", "bootstrap_ci", "bootstrap_replicates", "paired_bootstrap",
           "paired_randomization"]

Statistic = Callable[[np.ndarray, np.ndarray], float]
Block = TypeVar("Block")
Result = TypeVar("Result")

#: The hard pairs of Tab. 4 as statistics, named as in :func:`caplib.evaluation.report` (``"Acc Eq>Part"``, ...).
HARD_PAIR_STATISTICS: tuple[str, ...] = tuple(f"Acc {pair_name(higher, lower)}" for higher, lower in HARD_PAIRS)
#: Statistics computed for all resamples at once, by name: ``bootstrap_ci`` and the paired tests accept these.
BATCHED_STATISTICS: tuple[str, ...] = ("spearman", "kendall", "pairwise_accuracy", *HARD_PAIR_STATISTICS)
#: What a paired comparison reports by default: Spearman, pairwise accuracy (Eq. 8) and the hard pairs of Tab. 4.
PAIRED_STATISTICS: tuple[str, ...] = ("spearman", "pairwise_accuracy", *HARD_PAIR_STATISTICS)

# Elements per block (resamples x examples): ~4 MB per float64 array, small enough to stay in cache (a block of
# 2M elements ran twice as slowly). The layout does not change the resamples: numpy's generator draws the same
# integers in blocks as at once.
_BLOCK_ELEMENTS = 2**17
# Threads a bootstrap runs its blocks on (numpy is single-threaded in its elementwise loops).
_THREADS = max(1, min(4, os.cpu_count() or 1))
_CLASS_INDEX = {label: index for index, label in enumerate(LABELS)}
_STRICT_INDEX = tuple((_CLASS_INDEX[higher], _CLASS_INDEX[lower]) for higher, lower in STRICT_PAIRS)
_HARD_INDEX = {name: (_CLASS_INDEX[higher], _CLASS_INDEX[lower])
               for name, (higher, lower) in zip(HARD_PAIR_STATISTICS, HARD_PAIRS)}


def _point(name: str, values: np.ndarray, canonical: np.ndarray) -> float:
    """The statistic ``name`` of ``BATCHED_STATISTICS`` on the data itself (NaN for a hard pair with a class absent)."""
    if name in ("spearman", "kendall"):
        return rank_correlation(values, canonical)[name == "kendall"]
    if name == "pairwise_accuracy":
        return pairwise_accuracy(values, canonical)
    return hard_pair_accuracy(values, canonical)[name.removeprefix("Acc ")]


def _check_names(names: Sequence[str]) -> tuple[str, ...]:
    unknown = [name for name in names if name not in BATCHED_STATISTICS]
    if unknown or not names:
        raise ValueError(f"unknown statistic(s) {unknown or list(names)}; by name: {', '.join(BATCHED_STATISTICS)}")
    return tuple(dict.fromkeys(names))


def _resample_blocks(rng: np.random.Generator, n: int, n_resamples: int) -> Iterator[np.ndarray]:
    """Blocks of bootstrap index rows (each row: n draws with replacement), one fixed block layout.

    Every bootstrap path draws through here, so a seed gives the same resamples in each.
    """
    block = max(1, _BLOCK_ELEMENTS // n)
    for start in range(0, n_resamples, block):
        yield rng.integers(0, n, size=(min(block, n_resamples - start), n))


def _in_threads(function: Callable[[Block], Result], blocks: Iterable[Block]) -> list[Result]:
    """``function`` of every block, in order, on up to :data:`_THREADS` threads: numpy releases the GIL in the
    loops that take the time, so the blocks of a bootstrap run side by side. Blocks are drawn in order by this
    thread (the random stream stays the same) and at most two per thread wait, bounding memory."""
    results: list[Result] = []
    with ThreadPoolExecutor(max_workers=_THREADS) as pool:
        pending: deque = deque()
        for block in blocks:
            pending.append(pool.submit(function, block))
            if len(pending) >= 2 * _THREADS:
                results.append(pending.popleft().result())
        results.extend(future.result() for future in pending)
    return results


def _weights(indices: np.ndarray, n: int) -> np.ndarray:
    """Multiplicity (int64) of each example (columns, data order) in each resample (rows)."""
    rows = len(indices)
    return np.bincount((indices + n * np.arange(rows)[:, None]).ravel(), minlength=rows * n).reshape(rows, n)


class _Ranking:
    """One metric's examples sorted once by (score ascending, severity descending), and what every block reuses.

    The order makes every score tie group and every (score, severity) cell contiguous, and puts a higher-severity
    example before a lower-severity one of equal score: so the weight of class ``l`` *before* an example of a
    higher class is exactly the weight of ``l`` at a strictly lower score (Eq. 8 counts ties as 0).
    """

    def __init__(self, values: np.ndarray, canonical: np.ndarray):
        classes = np.array([_CLASS_INDEX[label] for label in canonical])
        severity = np.array([SEVERITY[label] for label in LABELS])[classes]
        self.order = np.lexsort((-severity, values))
        x, severity, classes = values[self.order], severity[self.order], classes[self.order]
        n = len(values)
        new_score = np.r_[True, x[1:] != x[:-1]]
        self.score_starts = np.flatnonzero(new_score)
        self.score_group = np.cumsum(new_score) - 1
        self.cell_starts = np.flatnonzero(new_score | np.r_[True, severity[1:] != severity[:-1]])
        self.onehot = np.zeros((n, len(LABELS)))
        self.onehot[np.arange(n), classes] = 1.0
        self.levels = sorted({SEVERITY[label] for label in canonical})
        self.level_of_class = np.array([SEVERITY[label] for label in LABELS])
        self.columns = {c: np.flatnonzero(classes == c) for c in np.unique(classes).tolist()}
        self.pairs = [(h, l) for h, l in _STRICT_INDEX if h in self.columns and l in self.columns]
        self.below = {(h, l): np.searchsorted(self.columns[l], self.columns[h]) for h, l in self.pairs}


def _batched(names: Sequence[str], ranking: _Ranking, weights: np.ndarray) -> dict[str, np.ndarray]:
    """Each statistic of ``names`` (``BATCHED_STATISTICS``) of every weighting (row of ``weights``) at once.

    ``weights`` holds each example's integer multiplicity (int64, columns in data order); every row sums to the
    resample size. Sums run in int64 (numpy's integer cumulative sums are also five times faster than its float
    ones) or over integers below 2**53 in float64, so they are exact, and the results equal scipy's on the
    materialized resamples (tested). Spearman uses closed forms: with mid-ranks, the ranks of a resample of size
    n sum to n(n + 1)/2 and their squares to n(n + 1)(2n + 1)/6 - sum(c**3 - c)/12 over tie groups of weight c,
    so only the rank-severity cross term needs the examples (summed per class by one matrix product).
    """
    n = int(weights[0].sum())  # the resample size (a randomization trial weighs n of 2n scores)
    W = weights[:, ranking.order]
    m = W.astype(np.float64) @ ranking.onehot  # weight of each class
    level = np.stack([m[:, ranking.level_of_class == k].sum(axis=1) for k in ranking.levels], axis=1)
    tied = len(ranking.score_starts) < len(ranking.order)
    c = np.add.reduceat(W, ranking.score_starts, axis=1) if tied else W  # weight of each score tie group
    result: dict[str, np.ndarray] = {}
    if "spearman" in names:
        twice_rank = np.cumsum(c, axis=1)  # 2 * mid-rank of a group: 2 * (weight before) + c + 1
        twice_rank *= 2
        twice_rank -= c
        twice_rank += 1
        if tied:
            twice_rank = twice_rank[:, ranking.score_group]
        twice_rank *= W
        by_class = twice_rank.astype(np.float64) @ ranking.onehot
        by_level = np.stack([by_class[:, ranking.level_of_class == k].sum(axis=1) for k in ranking.levels], axis=1)
        twice_rank_y = 2 * np.cumsum(level, axis=1) - level + 1
        mean = (n * (n + 1) / 2) / n
        squares = n * (n + 1) * (2 * n + 1) / 6
        var_x = (squares - (np.einsum("ij,ij->i", c * c, c) - n) / 12) / n - mean**2
        var_y = (squares - ((level**3).sum(axis=1) - n) / 12) / n - mean**2
        cov = ((by_level * twice_rank_y).sum(axis=1) / 4) / n - mean * mean
        result["spearman"] = cov / np.sqrt(var_x * var_y)
    # wins[h, l]: weight of pairs (a in class h, b in class l) with m(a) > m(b), from the weight of l before a
    wins = {}
    gathered: dict[int, np.ndarray] = {}
    before: dict[int, np.ndarray] = {}
    ordered = {"kendall", "pairwise_accuracy"} & set(names)
    for h, l in ranking.pairs if ordered else [_HARD_INDEX[name] for name in names if name in _HARD_INDEX]:
        if (h, l) not in ranking.below:
            continue  # a class of the pair is absent from the data
        for cls in (h, l):
            if cls not in gathered:
                gathered[cls] = W[:, ranking.columns[cls]]
        if l not in before:  # with a leading 0: the weight of l before the first example of l is 0
            before[l] = np.zeros((len(W), len(ranking.columns[l]) + 1), dtype=W.dtype)
            np.cumsum(gathered[l], axis=1, out=before[l][:, 1:])
        wins[h, l] = np.einsum("ij,ij->i", gathered[h], before[l][:, ranking.below[h, l]])
    for name in set(names) & set(_HARD_INDEX):
        h, l = _HARD_INDEX[name]
        result[name] = wins[h, l] / (m[:, h] * m[:, l]) if (h, l) in wins else np.full(len(W), np.nan)
    if ordered:
        won = sum(wins.values()).astype(np.float64)
        pairs = sum(m[:, h] * m[:, l] for h, l in ranking.pairs)
        result["pairwise_accuracy"] = won / pairs
    if "kendall" in names:
        # Cross-level pairs tied in score: within each tie group, all pairs minus same-level pairs.
        cell = np.add.reduceat(W, ranking.cell_starts, axis=1)
        ties = ((c**2).sum(axis=1) - (cell**2).sum(axis=1)) / 2
        losses = pairs - won - ties
        n0 = n * (n - 1) / 2
        ties_x = (c * (c - 1) / 2).sum(axis=1)
        ties_y = (level * (level - 1) / 2).sum(axis=1)
        result["kendall"] = (won - losses) / np.sqrt((n0 - ties_x) * (n0 - ties_y))
    return {name: result[name] for name in names}


def _undefined(samples: np.ndarray, name: str, total: int) -> ValueError:
    return ValueError(
        f"{name} is undefined on {int((~np.isfinite(samples)).sum())} of {total} resamples (e.g. a resample "
        "with a single severity level, or without a class of the pair); use more data or leave the statistic out")


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
    with the 25 strict pairs, ties 0, and the hard pairs ``"Acc Eq>Part"`` ...), computed for all resamples at
    once in O(n) each -- the same numbers as ``lambda s, l: rank_correlation(s, l)[0]`` etc. for the same seed,
    much faster (10,000 resamples of 10,000 rows: about a second per statistic). Resamples draw n examples with
    replacement from ``np.random.default_rng(seed)``; the interval is the (1 - confidence)/2 and
    (1 + confidence)/2 percentiles (linear interpolation) of the resampled statistics.

    Example:
        >>> scores, labels = [0.9, 0.8, 0.6, 0.5, 0.2, 0.1], ["exact", "Eq", "OV", "Part", "Inv", "Contra"]
        >>> point, low, high = bootstrap_ci("spearman", scores, labels, n_resamples=200)
        >>> low <= point <= high
        True

    Raises:
        ValueError: bad input, an unknown statistic name, or a resample where the statistic is undefined.
    """
    _check_resampling(n_resamples, confidence)
    values, canonical = prepare(scores, labels)
    rng = np.random.default_rng(seed)
    resampled = []
    if isinstance(statistic, str):
        name = _check_names([statistic])[0]
        point = _point(name, values, canonical)
        ranking = _Ranking(values, canonical)

        def measure(block: np.ndarray) -> np.ndarray:
            with np.errstate(invalid="ignore", divide="ignore"):  # undefined resamples: NaN, raised below
                return _batched((name,), ranking, _weights(block, len(values)))[name]

        resampled = _in_threads(measure, _resample_blocks(rng, len(values), n_resamples))
    else:
        name = "the statistic"
        point = float(statistic(values, canonical))
        for block in _resample_blocks(rng, len(values), n_resamples):
            resampled.append(np.array([float(statistic(values[row], canonical[row])) for row in block]))
    samples = np.concatenate(resampled)
    if not np.all(np.isfinite(samples)):
        raise _undefined(samples, name, n_resamples)
    low, high = np.percentile(samples, [50 * (1 - confidence), 50 * (1 + confidence)])
    return float(point), float(low), float(high)


def _class_pair_replicates(ranking: _Ranking, values: np.ndarray, weights: np.ndarray,
                           upto: dict[tuple[int, int], np.ndarray]) -> dict[str, np.ndarray]:
    """Per weighting (row of ``weights``): every class's mean, and the accuracy and AUC of every strict class pair
    (``upto[h, l]``: for each example of class h, how many of class l sort before the end of its score tie group)."""
    W = weights[:, ranking.order]
    m = W.astype(np.float64) @ ranking.onehot
    sums = (W * values[ranking.order]) @ ranking.onehot
    result = {f"mean {LABELS[index]}": sums[:, index] / m[:, index] for index in sorted(ranking.columns)}
    gathered = {cls: W[:, columns] for cls, columns in ranking.columns.items()}
    before = {}
    for cls, block in gathered.items():  # with a leading 0: the weight of the class before each of its examples
        before[cls] = np.zeros((len(W), block.shape[1] + 1), dtype=W.dtype)
        np.cumsum(block, axis=1, out=before[cls][:, 1:])
    for h, l in ranking.pairs:
        name = pair_name(LABELS[h], LABELS[l])
        wins = np.einsum("ij,ij->i", gathered[h], before[l][:, ranking.below[h, l]])
        ties = np.einsum("ij,ij->i", gathered[h], before[l][:, upto[h, l]]) - wins
        pairs = m[:, h] * m[:, l]
        result[f"Acc {name}"], result[f"AUC {name}"] = wins / pairs, (wins + 0.5 * ties) / pairs
    return result


def bootstrap_replicates(
    scores: Sequence[float] | np.ndarray,
    labels: Sequence[str],
    n_resamples: int = 10_000,
    seed: int = 0,
) -> dict[str, np.ndarray]:
    """Every protocol statistic of every bootstrap resample (App. D.1), by name: ``spearman``, ``kendall``,
    ``pairwise_accuracy``, ``mean <class>`` for each class present, and ``Acc <pair>`` / ``AUC <pair>`` for each
    strict pair present (:func:`caplib.evaluation.pair_name`; accuracy counts score ties 0, AUC 1/2).

    Resamples are :func:`bootstrap_ci`'s for the same seed (n rows drawn with replacement from
    ``np.random.default_rng(seed)``, one row of draws per resample), so each metric of a table bootstrapped with one
    seed sees the same resamples (paired). A statistic undefined on a resample (a class drawn zero times) is NaN.

    Example:
        >>> labels = ["exact", "partial", "invalid"] * 10
        >>> draws = bootstrap_replicates(np.tile([0.9, 0.5, 0.1], 10), labels, n_resamples=50)
        >>> draws["pairwise_accuracy"].min(), draws["AUC Exact>Part"].shape
        (1.0, (50,))
    """
    _check_resampling(n_resamples)
    values, canonical = prepare(scores, labels)
    ranking = _Ranking(values, canonical)
    group_end = np.r_[ranking.score_starts[1:], len(values)][ranking.score_group]  # where each tie group ends
    upto = {(h, l): np.searchsorted(ranking.columns[l], group_end[ranking.columns[h]]) for h, l in ranking.pairs}

    def measure(block: np.ndarray) -> dict[str, np.ndarray]:
        weights = _weights(block, len(values))
        with np.errstate(invalid="ignore", divide="ignore"):
            return {**_batched(("spearman", "kendall", "pairwise_accuracy"), ranking, weights),
                    **_class_pair_replicates(ranking, values, weights, upto)}

    parts = _in_threads(measure, _resample_blocks(np.random.default_rng(seed), len(values), n_resamples))
    return {name: np.concatenate([part[name] for part in parts]) for name in parts[0]}


def _check_resampling(n_resamples: int, confidence: float = 0.95) -> None:
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must lie in (0, 1), got {confidence}")
    if n_resamples < 1:
        raise ValueError(f"the number of resamples must be positive, got {n_resamples}")


def _paired_input(scores_a: Sequence[float] | np.ndarray, scores_b: Sequence[float] | np.ndarray,
                  labels: Sequence[str], names: Sequence[str], statistics: Sequence[str]
                  ) -> tuple[np.ndarray, np.ndarray, np.ndarray, tuple[str, ...], pd.DataFrame]:
    """Validated scores, canonical labels, statistic names, and the table of point estimates."""
    if len(names) != 2 or names[0] == names[1]:
        raise ValueError(f"names must be two different metric names, got {list(names)}")
    a, canonical = prepare(scores_a, labels)
    b, _ = prepare(scores_b, labels)
    chosen = _check_names(statistics)
    table = pd.DataFrame({names[0]: [_point(s, a, canonical) for s in chosen],
                          names[1]: [_point(s, b, canonical) for s in chosen]},
                         index=pd.Index(chosen, name="statistic"))
    table["delta"] = table[names[0]] - table[names[1]]
    return a, b, canonical, chosen, table


def _p_value(null: np.ndarray, observed: float) -> float:
    """(1 + #{|null| >= |observed|}) / (1 + #null): two-sided, never 0 (sacrebleu's ``_compute_p_value``, with
    ``>=`` so that a zero difference is never attributed to chance)."""
    if np.isnan(observed):
        return float("nan")
    return float((1 + np.sum(np.abs(null) >= abs(observed) - 1e-12)) / (1 + len(null)))


def paired_bootstrap(
    scores_a: Sequence[float] | np.ndarray,
    scores_b: Sequence[float] | np.ndarray,
    labels: Sequence[str],
    statistics: Sequence[str] = PAIRED_STATISTICS,
    n_resamples: int = 10_000,
    confidence: float = 0.95,
    seed: int = 0,
    names: Sequence[str] = ("a", "b"),
    undefined: str = "raise",
) -> pd.DataFrame:
    """Paired bootstrap over examples of the difference a - b of each statistic between two metrics.

    Both metrics are measured on the *same* resamples (drawn as in :func:`bootstrap_ci`, so metric a's CI here
    is ``bootstrap_ci``'s for the same seed). Per statistic: the two point values, ``delta`` = a - b, the
    percentile interval ``low``/``high`` of the resampled differences, and ``p_value``, two-sided, for
    H0: equal statistics. The p-value follows sacrebleu's ``paired_bs`` (the resampled differences shifted to
    mean 0 are the null distribution; (1 + count) / (1 + resamples)), with one change: sacrebleu shifts the
    *absolute* differences, whose p-value is not uniform under H0 (about 0.4 at a zero difference, never near
    1); here the *signed* differences are shifted (Koehn 2004; Efron & Tibshirani 1993, Sec. 16.4):
    ``p = (1 + #{r : abs(d_r - mean(d)) >= abs(delta)}) / (1 + n_resamples)``. A hard pair with a class absent from the
    data is NaN, as in :func:`caplib.evaluation.report`. A statistic undefined on some resample (a class of a hard
    pair drawn zero times) raises, or with ``undefined="nan"`` gets NaN interval and p-value, and
    ``attrs["undefined"]`` counts its undefined resamples. The frame's ``attrs["signature"]`` records the settings.

    Example:
        >>> labels = ["exact", "partial", "invalid"] * 10
        >>> a = np.tile([0.9, 0.5, 0.1], 10)
        >>> table = paired_bootstrap(a, a, labels, statistics=("spearman",), n_resamples=100)
        >>> table.loc["spearman", ["delta", "low", "high", "p_value"]].tolist()
        [0.0, 0.0, 0.0, 1.0]

    Raises:
        ValueError: bad input, an unknown statistic, or a statistic undefined on some resample.
    """
    _check_resampling(n_resamples, confidence)
    if undefined not in ("raise", "nan"):
        raise ValueError(f"undefined must be 'raise' or 'nan', got {undefined!r}")
    a, b, canonical, chosen, table = _paired_input(scores_a, scores_b, labels, names, statistics)
    table.attrs["undefined"] = {}
    rankings = (_Ranking(a, canonical), _Ranking(b, canonical))

    def differences_of(block: np.ndarray) -> dict[str, np.ndarray]:
        weights = _weights(block, len(a))
        with np.errstate(invalid="ignore", divide="ignore"):
            first, second = (_batched(chosen, ranking, weights) for ranking in rankings)
        return {name: first[name] - second[name] for name in chosen}

    parts = _in_threads(differences_of, _resample_blocks(np.random.default_rng(seed), len(a), n_resamples))
    for name in chosen:
        differences = np.concatenate([part[name] for part in parts])
        if np.isnan(table.at[name, "delta"]):
            table.loc[name, ["low", "high", "p_value"]] = np.nan
            continue
        if not np.all(np.isfinite(differences)):
            if undefined == "raise":
                raise _undefined(differences, name, n_resamples)
            table.attrs["undefined"][name] = int((~np.isfinite(differences)).sum())
            table.loc[name, ["low", "high", "p_value"]] = np.nan
            continue
        table.loc[name, ["low", "high"]] = np.percentile(differences, [50 * (1 - confidence), 50 * (1 + confidence)])
        table.loc[name, "p_value"] = _p_value(differences - differences.mean(), table.at[name, "delta"])
    table.attrs["signature"] = str(Signature.of("caplib.compare", {
        "a": names[0], "b": names[1], "test": "paired-bootstrap", "resamples": n_resamples,
        "confidence": confidence, "seed": seed, "p": "shifted-signed-two-sided", "numpy": np.__version__}))
    return table


def paired_randomization(
    scores_a: Sequence[float] | np.ndarray,
    scores_b: Sequence[float] | np.ndarray,
    labels: Sequence[str],
    statistics: Sequence[str] = PAIRED_STATISTICS,
    n_trials: int = 10_000,
    seed: int = 0,
    names: Sequence[str] = ("a", "b"),
) -> pd.DataFrame:
    """Approximate randomization test of H0: the two metrics are exchangeable on every example.

    Each trial swaps each example's two scores with probability 1/2 (sacrebleu's ``paired_ar``, seeded
    ``np.random.default_rng(seed)``) and measures the difference of the two pseudo-metrics;
    ``p = (1 + #{trials with abs(difference) >= abs(delta)}) / (1 + n_trials)``. Two metrics live on different scales, so each is first
    replaced by its mid-ranks / n (as Deutsch et al. 2021 standardize before swapping): every statistic here
    depends on the order of scores only, so the observed values do not change. A trial is a weighting of the 2n
    (example, metric) scores, sorted once, which :func:`_batched` measures without sorting per trial. Columns:
    the two point values, ``delta``, ``p_value``; ``attrs["signature"]`` records the settings.

    Example:
        >>> labels = ["exact", "partial", "invalid"] * 10
        >>> a = np.tile([0.9, 0.5, 0.1], 10)
        >>> paired_randomization(a, a, labels, statistics=("spearman",), n_trials=100).loc["spearman", "p_value"]
        1.0

    Raises:
        ValueError: bad input, an unknown statistic, or ``n_trials`` < 1.
    """
    _check_resampling(n_trials)
    a, b, canonical, chosen, table = _paired_input(scores_a, scores_b, labels, names, statistics)
    n = len(a)
    both = np.concatenate([stats.rankdata(a), stats.rankdata(b)]) / n
    ranking = _Ranking(both, np.concatenate([canonical, canonical]))
    rng = np.random.default_rng(seed)
    rows = max(1, _BLOCK_ELEMENTS // (2 * n))
    swaps = (rng.integers(2, size=(min(rows, n_trials - start), n)) for start in range(0, n_trials, rows))

    def differences_of(swap: np.ndarray) -> dict[str, np.ndarray]:
        with np.errstate(invalid="ignore", divide="ignore"):  # a hard pair absent from the data: NaN throughout
            first = _batched(chosen, ranking, np.concatenate([1 - swap, swap], axis=1))
            second = _batched(chosen, ranking, np.concatenate([swap, 1 - swap], axis=1))
        return {name: first[name] - second[name] for name in chosen}

    parts = _in_threads(differences_of, swaps)
    for name in chosen:
        table.loc[name, "p_value"] = _p_value(np.concatenate([part[name] for part in parts]), table.at[name, "delta"])
    table.attrs["signature"] = str(Signature.of("caplib.compare", {
        "a": names[0], "b": names[1], "test": "approximate-randomization", "trials": n_trials, "seed": seed,
        "swap": "mid-ranks/n", "numpy": np.__version__}))
    return table
