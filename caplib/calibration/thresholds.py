"""Class boundaries on the CAP axis (Sec. 8.2): the paper's uniform bins, and cut points fitted on labelled rows.

Sec. 8.2 suggests bands on the score axis, "for example, [0, 0.125) for contradictory, [0.125, 0.25) for invalid, and
so on up to the equivalent regime near 1": :meth:`ThresholdLabeler.uniform` is that rule, eight bins of width 1/8
in the reverse order of Eq. 1 (contradictory lowest, exact highest), fixed, fitted on nothing.

A fitted :class:`ThresholdLabeler` keeps the order of Eq. 1 and places the cut points. Its band structure
(``bands``) is one of

- ``"severity"``: one band per severity level of App. C.2 (``caplib.taxonomy.SEVERITY``), six bands; the tied top
  tier (exact, equivalent, alternative-correct) shares one band, which predicts the class of that tier that scores
  best on the fitting data (under ``objective="accuracy"`` its majority class; ties go to the first in Eq. 1 order);
- ``"labels"``: one band per class, eight bands, the top tier ordered as Eq. 1 lists it (alternative-correct lowest);
- ``"auto"`` (default): ``"labels"`` when it beats ``"severity"`` on held-out rows of the fitting data by more than
  one standard error (stratified 5-fold cross-validation, folds by position within each class; the per-fold
  difference of the objective, its mean against its standard error), else ``"severity"``: the top tier is split
  only when the data separate it.

Cut points are fitted to maximise quadratic-weighted Cohen's kappa over the positions of Eq. 1 (``objective=
"quadratic"``, the weighting of Tab. 8) or accuracy (``"accuracy"``). Candidate cuts are the midpoints between
consecutive distinct scores (thinned to ``max_candidates`` quantile groups on large data). Accuracy is additive over
rows, so its optimum is exact, by dynamic programming over the sorted scores. Kappa is not (its chance term depends
on the predicted marginals): it is maximised by coordinate search (each cut in turn moved to its best position
between its neighbours, until no move improves it) from three starts (the accuracy optimum, equal-frequency and
equal-width bands), keeping the best; deterministic. Bands may come out empty (a class never predicted).

Example:
    >>> uniform = ThresholdLabeler.uniform()
    >>> uniform.predict([0.05, 0.3, 0.99]).tolist()
    ['contradictory', 'overinclusive_invalid', 'exact']
    >>> fitted = ThresholdLabeler("severity", "accuracy").fit([0.1, 0.2, 0.6, 0.7, 0.9, 0.95],
    ...     ["invalid", "invalid", "partial", "partial", "exact", "exact"])
    >>> [round(cut, 3) for cut in fitted.cuts]  # six bands; those without rows (contra, OI, OV) are empty
    [0.0, 0.4, 0.4, 0.8, 0.8]
    >>> fitted.predict([0.15, 0.5, 0.85]).tolist()
    ['invalid', 'partial', 'exact']
"""

from __future__ import annotations

import itertools
from pathlib import Path
from typing import Any, Mapping, Sequence

import numpy as np
import pandas as pd

from caplib.calibration.provenance import Provenance, read_document, write_document
from caplib.evaluation import kappa_weights
from caplib.evaluation.measures import labels_array
from caplib.signature import Signature
from caplib.taxonomy import LABELS, SEVERITY

__all__ = ["OBJECTIVES", "STRUCTURES", "UNIFORM_CUTS", "ThresholdLabeler", "objective_value"]

#: The band structures, each band a tuple of classes (Eq. 1 order within), lowest band first.
STRUCTURES: Mapping[str, tuple[tuple[str, ...], ...]] = {
    "severity": tuple(tuple(c for c in LABELS if SEVERITY[c] == level) for level in sorted(set(SEVERITY.values()))),
    "labels": tuple((c,) for c in reversed(LABELS)),
}
#: What a fitted labeler maximises on the fitting rows.
OBJECTIVES = ("quadratic", "accuracy")
#: The paper's illustrative bins (Sec. 8.2): width 1/8, contradictory lowest, exact highest.
UNIFORM_CUTS: tuple[float, ...] = tuple(k / 8 for k in range(1, 8))
_FOLDS = 5
_INDEX = {label: i for i, label in enumerate(LABELS)}


def objective_value(confusion: np.ndarray, objective: str) -> float:
    """Accuracy or quadratic-weighted kappa of an 8 x 8 confusion matrix (rows labels, columns predictions, both in
    ``LABELS`` order); kappa is 0 when its chance term is (one class on both sides).

    Example:
        >>> round(objective_value(np.diag([3, 1, 0, 0, 0, 0, 0, 2]), "quadratic"), 4)
        1.0
    """
    if objective not in OBJECTIVES:
        raise ValueError(f"objective must be one of {OBJECTIVES}, got {objective!r}")
    return float(_objectives(np.asarray(confusion, dtype=np.float64)[None], objective)[0])


def _cap_scores(scores: Any) -> np.ndarray:
    if isinstance(scores, pd.DataFrame):
        if "cap" not in scores.columns:
            raise ValueError(f"a threshold labeler reads the column 'cap'; the frame has {list(scores.columns)}")
        scores = scores["cap"]
    values = np.asarray(scores, dtype=np.float64).ravel()
    if not np.isfinite(values).all():
        raise ValueError(f"CAP scores must be finite numbers; position {int(np.flatnonzero(~np.isfinite(values))[0])} "
                         f"is not")
    return values


class _Grouped:
    """Sorted scores in groups of equal value (or quantile groups), with cumulative class counts ``C`` (m+1, 8)."""

    def __init__(self, scores: np.ndarray, labels: np.ndarray, max_candidates: int) -> None:
        order = np.argsort(scores, kind="stable")
        values, classes = scores[order], np.array([_INDEX[c] for c in labels[order]], dtype=np.int64)
        starts = np.flatnonzero(np.r_[True, values[1:] != values[:-1]])
        if len(starts) > max_candidates:  # boundaries only at quantile positions of the distinct values
            starts = np.unique(starts[np.round(np.linspace(0, len(starts), max_candidates + 1)[:-1]).astype(int)])
        ends = np.r_[starts[1:], len(values)]
        self.low, self.high = values[starts], values[ends - 1]
        counts = np.zeros((len(starts), len(LABELS)), dtype=np.int64)
        np.add.at(counts, (np.repeat(np.arange(len(starts)), ends - starts), classes), 1)
        self.C = np.vstack([np.zeros(len(LABELS), dtype=np.int64), counts.cumsum(axis=0)])
        self.m = len(starts)

    def band_counts(self, bounds: Sequence[int]) -> np.ndarray:
        """Class counts of each band (K, 8) for group boundaries ``0 = b_0 <= ... <= b_K = m``."""
        return np.diff(self.C[np.asarray(bounds)], axis=0)

    def cut(self, bound: int) -> float:
        """The score where a band boundary at group index ``bound`` lies: the midpoint between the groups."""
        if bound <= 0:
            return float(min(0.0, self.low[0]))
        if bound >= self.m:
            return float(np.nextafter(max(1.0, self.high[-1]), np.inf))  # above every score: the band above is empty
        return float((self.high[bound - 1] + self.low[bound]) / 2)


def _objectives(confusions: np.ndarray, objective: str) -> np.ndarray:
    """:func:`objective_value` of a stack of confusion matrices (n, 8, 8), vectorised for the search."""
    total = confusions.sum(axis=(1, 2))
    if objective == "accuracy":
        return np.trace(confusions, axis1=1, axis2=2) / np.maximum(total, 1)
    weights = kappa_weights("quadratic")
    marginals = confusions.sum(axis=2)[:, :, None] * confusions.sum(axis=1)[:, None, :]
    expected = marginals / np.maximum(total, 1)[:, None, None]
    chance = (weights * expected).sum(axis=(1, 2))
    observed = (weights * confusions).sum(axis=(1, 2))
    return np.where(chance > 0, 1.0 - observed / np.where(chance > 0, chance, 1.0), 0.0)


def _evaluate_many(counts: np.ndarray, tiers: Sequence[Sequence[int]], objective: str,
                   ) -> tuple[np.ndarray, list[tuple[int, ...]]]:
    """For a stack of band counts (n, K, 8): the objective of each, and the class each band predicts (the best of
    its tier; only the shared top tier offers a choice; ties go to the first in Eq. 1 order)."""
    best_value, best_classes = np.full(len(counts), -np.inf), [()] * len(counts)
    for classes in itertools.product(*tiers):
        onehot = np.eye(len(LABELS))[list(classes)]  # (K, 8): band -> predicted class
        values = _objectives(np.einsum("nkc,kp->ncp", counts, onehot), objective)
        better = values > best_value
        best_value = np.where(better, values, best_value)
        best_classes = [classes if b else old for b, old in zip(better, best_classes)]
    return best_value, best_classes


def _evaluate(counts: np.ndarray, tiers: Sequence[Sequence[int]], objective: str) -> tuple[float, tuple[int, ...]]:
    """The objective of bands with these class counts (K, 8), and the class each band predicts."""
    values, classes = _evaluate_many(counts[None], tiers, objective)
    return float(values[0]), classes[0]


def _accuracy_bounds(grouped: _Grouped, tiers: Sequence[Sequence[int]]) -> list[int]:
    """The exact accuracy optimum: dynamic programming over boundaries (a band earns its majority class's count)."""
    m, K, C = grouped.m, len(tiers), grouped.C
    best = np.full((K + 1, m + 1), -np.inf)
    best[0, 0] = 0.0
    back = np.zeros((K + 1, m + 1), dtype=np.int64)
    for k, tier in enumerate(tiers, start=1):
        for u in range(m + 1):
            gains = (C[u, list(tier)][None, :] - C[: u + 1][:, list(tier)]).max(axis=1)
            total = best[k - 1, : u + 1] + gains
            back[k, u] = int(np.argmax(total))
            best[k, u] = total[back[k, u]]
    bounds = [m]
    for k in range(K, 0, -1):
        bounds.append(int(back[k, bounds[-1]]))
    return bounds[::-1]


def _coordinate_search(grouped: _Grouped, tiers: Sequence[Sequence[int]], objective: str,
                       bounds: list[int]) -> tuple[float, list[int]]:
    current = _evaluate(grouped.band_counts(bounds), tiers, objective)[0]
    for _ in range(100):
        moved = False
        for i in range(1, len(tiers)):
            candidates = np.arange(bounds[i - 1], bounds[i + 1] + 1)
            counts = np.repeat(grouped.band_counts(bounds)[None], len(candidates), axis=0)
            counts[:, i - 1] = grouped.C[candidates] - grouped.C[bounds[i - 1]]
            counts[:, i] = grouped.C[bounds[i + 1]] - grouped.C[candidates]
            values = _evaluate_many(counts, tiers, objective)[0]
            best = int(np.argmax(values))  # the lowest of equal optima
            if values[best] > current + 1e-12:
                bounds = [*bounds[:i], int(candidates[best]), *bounds[i + 1:]]
                current, moved = float(values[best]), True
        if not moved:
            break
    return current, bounds


def _fit_bounds(grouped: _Grouped, tiers: Sequence[Sequence[int]], objective: str) -> list[int]:
    exact = _accuracy_bounds(grouped, tiers)
    if objective == "accuracy":
        return exact
    K, m = len(tiers), grouped.m
    starts = [exact, [round(k * m / K) for k in range(K + 1)],
              [0, *np.searchsorted(grouped.low, np.arange(1, K) / K).tolist(), m]]
    results = [_coordinate_search(grouped, tiers, objective, [int(b) for b in start]) for start in starts]
    return max(results, key=lambda result: result[0])[1]  # the first of equal optima


class ThresholdLabeler:
    """Ordered cut points on the CAP axis, each band one taxonomy class (see the module docstring).

    Args:
        bands: ``"auto"``, ``"severity"`` or ``"labels"``.
        objective: ``"quadratic"`` (quadratic-weighted kappa) or ``"accuracy"``.
        cuts, classes: a fixed rule (``classes`` lowest band first, one more than ``cuts``): :meth:`fit` then keeps
            the cuts and only measures each band's class shares (for :meth:`predict_proba`).
        max_candidates: at most this many candidate positions per cut (quantile groups of the sorted scores).

    Attributes (after :meth:`fit`, or given): ``cuts``, ``classes``, ``structure`` (the band structure used),
    ``band_counts`` (class counts of each band on the fitting rows, ``LABELS`` order), ``cv`` (the out-of-fold
    objective of each structure on pooled held-out rows, and ``fold_difference`` and ``fold_se`` of labels - severity,
    when ``bands="auto"``), ``provenance``.
    """

    method = "thresholds"
    columns: tuple[str, ...] = ("cap",)

    def __init__(self, bands: str = "auto", objective: str = "quadratic", *, cuts: Sequence[float] | None = None,
                 classes: Sequence[str] | None = None, max_candidates: int = 400) -> None:
        if bands not in ("auto", *STRUCTURES):
            raise ValueError(f"bands must be 'auto', {', '.join(map(repr, STRUCTURES))}, got {bands!r}")
        if objective not in OBJECTIVES:
            raise ValueError(f"objective must be one of {OBJECTIVES}, got {objective!r}")
        self.bands, self.objective, self.max_candidates = bands, objective, int(max_candidates)
        self.fixed = cuts is not None
        self.cuts: tuple[float, ...] = ()
        self.classes: tuple[str, ...] = ()
        self.structure = bands
        if self.fixed:
            self.cuts, self.classes = tuple(float(c) for c in cuts), tuple(labels_array(list(classes or ())))
            if len(self.classes) != len(self.cuts) + 1 or list(self.cuts) != sorted(self.cuts):
                raise ValueError(f"a fixed rule needs ascending cuts and one class more than cuts; got {len(self.cuts)}"
                                 f" cuts {self.cuts} and {len(self.classes)} classes")
            self.structure = "fixed"
        self.band_counts: np.ndarray | None = None
        self.cv: dict[str, float | None] = {}
        self.provenance = Provenance()

    @classmethod
    def uniform(cls) -> ThresholdLabeler:
        """The paper's illustrative bins (Sec. 8.2): [0, 0.125) contradictory, [0.125, 0.25) invalid, ...,
        [0.875, 1] exact (the reverse of Eq. 1), fixed."""
        labeler = cls("labels", cuts=UNIFORM_CUTS, classes=tuple(reversed(LABELS)))
        labeler.structure = "uniform"
        return labeler

    @property
    def depends_on(self) -> tuple[str, ...]:
        """The CAP signature fields its cuts depend on: none for a fixed rule; backbone and weights when fitted."""
        return () if self.fixed else ("nli", "alpha", "lam")

    def _fit_structure(self, scores: np.ndarray, labels: np.ndarray, structure: str,
                       ) -> tuple[tuple[float, ...], tuple[str, ...]]:
        tiers = [[_INDEX[c] for c in tier] for tier in STRUCTURES[structure]]
        grouped = _Grouped(scores, labels, self.max_candidates)
        bounds = _fit_bounds(grouped, tiers, self.objective)
        classes = _evaluate(grouped.band_counts(bounds), tiers, self.objective)[1]
        return tuple(grouped.cut(b) for b in bounds[1:-1]), tuple(LABELS[c] for c in classes)

    def _cross_validate(self, scores: np.ndarray, labels: np.ndarray) -> dict[str, float | None]:
        """Each structure's objective on its pooled out-of-fold predictions, and the mean and standard error over
        folds of the per-fold difference labels - severity (what :meth:`fit` decides by)."""
        folds = pd.Series(labels).groupby(labels).cumcount().to_numpy() % _FOLDS
        truth = np.array([_INDEX[c] for c in labels])
        pooled = {structure: np.zeros((len(LABELS), len(LABELS))) for structure in STRUCTURES}
        per_fold: dict[str, list[float]] = {structure: [] for structure in STRUCTURES}
        for fold in range(_FOLDS):
            held = folds == fold
            if held.all() or not held.any():
                continue
            for structure in STRUCTURES:
                cuts, classes = self._fit_structure(scores[~held], labels[~held], structure)
                predicted = np.array([_INDEX[c] for c in classes])[np.searchsorted(cuts, scores[held], side="right")]
                confusion = np.zeros((len(LABELS), len(LABELS)))
                np.add.at(confusion, (truth[held], predicted), 1)
                pooled[structure] += confusion
                per_fold[structure].append(objective_value(confusion, self.objective))
        result = {structure: objective_value(pooled[structure], self.objective) for structure in STRUCTURES}
        differences = np.subtract(per_fold["labels"], per_fold["severity"])
        result["fold_difference"] = float(differences.mean()) if len(differences) else 0.0
        # undefined (None) with fewer than two folds: the top tier then stays shared
        result["fold_se"] = float(differences.std(ddof=1) / np.sqrt(len(differences))) if len(differences) > 1 else None
        return result

    def fit(self, scores: Any, labels: Sequence[str], provenance: Provenance | None = None) -> ThresholdLabeler:
        """Fit the cut points (a fixed rule: only the band shares) on CAP ``scores`` and taxonomy ``labels``.

        ``scores`` is a sequence or a frame with a ``cap`` column; ``provenance`` names the scores' CAP signature
        and the rows (:func:`caplib.calibration.fit_scored_file` fills it in). Returns ``self``.
        """
        values, truth = _cap_scores(scores), labels_array(list(labels))
        if len(values) != len(truth) or len(values) < 2:
            raise ValueError(f"fit needs as many labels as scores, at least two; got {len(values)} scores and "
                             f"{len(truth)} labels")
        if not self.fixed:
            self.cv = self._cross_validate(values, truth) if self.bands == "auto" else {}
            se = self.cv.get("fold_se")
            separated = self.bands == "auto" and se is not None and self.cv["fold_difference"] > max(se, 0.0)
            self.structure = ("labels" if separated else "severity") if self.bands == "auto" else self.bands
            self.cuts, self.classes = self._fit_structure(values, truth, self.structure)
        band = np.searchsorted(self.cuts, values, side="right")
        self.band_counts = np.zeros((len(self.classes), len(LABELS)), dtype=np.int64)
        np.add.at(self.band_counts, (band, [_INDEX[c] for c in truth]), 1)
        self.provenance = provenance if provenance is not None else Provenance(n=len(values))
        return self

    def predict(self, scores: Any) -> np.ndarray:
        """The class of each score's band (band k covers [cut_k-1, cut_k); the first starts at 0, the last ends at 1).

        Example:
            >>> ThresholdLabeler.uniform().predict([0.0, 0.125, 0.874, 1.0]).tolist()
            ['contradictory', 'invalid', 'equivalent', 'exact']
        """
        if not self.classes:
            raise ValueError("this threshold labeler is not fitted yet: call fit(scores, labels) first")
        return np.asarray(self.classes, dtype=object)[np.searchsorted(self.cuts, _cap_scores(scores), side="right")]

    def predict_proba(self, scores: Any) -> pd.DataFrame:
        """Each score's band's class shares on the fitting rows, add-one smoothed over the eight classes (columns
        ``LABELS``): how often a row of that band carried each label.

        Raises:
            ValueError: a fixed rule that was never fitted has no band shares.
        """
        if self.band_counts is None:
            raise ValueError("this threshold labeler has no band shares yet: fit it on labelled scores first "
                             "(a fixed rule keeps its cuts and only counts each band's labels)")
        shares = (self.band_counts + 1.0) / (self.band_counts.sum(axis=1, keepdims=True) + len(LABELS))
        band = np.searchsorted(self.cuts, _cap_scores(scores), side="right")
        return pd.DataFrame(shares[band], columns=list(LABELS))

    def confidence(self, scores: Any) -> np.ndarray:
        """The predicted class's share in its band (:meth:`predict_proba`); NaN when the rule was never fitted."""
        predicted = self.predict(scores)
        if self.band_counts is None:
            return np.full(len(predicted), np.nan)
        proba = self.predict_proba(scores).to_numpy()
        return proba[np.arange(len(predicted)), [_INDEX[c] for c in predicted]]

    def bands_table(self) -> pd.DataFrame:
        """One row per band, lowest first: ``low``, ``high``, ``class``, fitting rows ``n`` and ``share`` of the
        predicted class among them (unsmoothed; NaN for an empty band or a rule never fitted).

        Example:
            >>> ThresholdLabeler.uniform().bands_table().iloc[0][["low", "high", "class"]].tolist()
            [0.0, 0.125, 'contradictory']
        """
        edges = [0.0, *self.cuts, 1.0]
        rows = []
        for k, label in enumerate(self.classes):
            n = int(self.band_counts[k].sum()) if self.band_counts is not None else 0
            share = self.band_counts[k, _INDEX[label]] / n if n else float("nan")
            rows.append({"low": min(max(edges[k], 0.0), 1.0), "high": min(max(edges[k + 1], 0.0), 1.0),
                         "class": label, "n": n, "share": float(share)})
        return pd.DataFrame(rows)

    def never_predicted(self) -> list[str]:
        """The classes of ``LABELS``, in Eq. 1 order, whose band has no width on [0, 1] (two equal cuts, or a cut
        outside the axis) or that have no band at all: no CAP score in [0, 1) gets them.

        Example:
            >>> ThresholdLabeler(cuts=[0.3, 0.3], classes=["invalid", "partial", "exact"]).never_predicted()[2:]
            ['overinclusive_valid', 'partial', 'overinclusive_invalid', 'contradictory']
        """
        bands = self.bands_table()
        reachable = set(bands.loc[bands["high"] > bands["low"], "class"])
        return [label for label in LABELS if label not in reachable]

    def signature(self) -> Signature:
        """``calibration|method:thresholds|bands:...|objective:...|cuts:...|nli:...|...|caplib:...``."""
        from caplib import __version__

        cuts = ",".join(f"{c:.4f}" for c in self.cuts)
        return Signature.of("calibration", [("method", self.method), ("bands", self.structure),
                                            ("objective", "none" if self.fixed else self.objective), ("cuts", cuts),
                                            *self.provenance.signature_fields(), ("caplib", __version__)])

    def to_dict(self) -> dict[str, Any]:
        """The rule as JSON-ready fields (the ``model`` of a calibration file)."""
        return {"bands": self.bands, "objective": self.objective, "structure": self.structure, "fixed": self.fixed,
                "max_candidates": self.max_candidates, "cuts": list(self.cuts), "classes": list(self.classes),
                "band_counts": None if self.band_counts is None else self.band_counts.tolist(), "cv": self.cv}

    def save(self, path: str | Path) -> None:
        """Write this labeler to a calibration file (JSON, with its signature and provenance)."""
        write_document(path, self.method, self.signature(), self.provenance, self.to_dict())

    @classmethod
    def load(cls, path: str | Path) -> ThresholdLabeler:
        """Read a labeler written by :meth:`save` (to check it against scores, use
        :func:`caplib.calibration.load` with ``cap_signature``).

        Raises:
            ValueError: the file holds another kind of labeler, or is no calibration file.
        """
        method, provenance, model = read_document(path)
        if method != cls.method:
            raise ValueError(f"{path}: a {method!r} calibration, not {cls.method!r}; read it with "
                             f"caplib.calibration.load")
        return cls.from_dict(model, provenance)

    @classmethod
    def from_dict(cls, model: Mapping[str, Any], provenance: Provenance | None = None) -> ThresholdLabeler:
        """The inverse of :meth:`to_dict`."""
        labeler = cls(model["bands"], model["objective"], max_candidates=model.get("max_candidates", 400),
                      **({"cuts": model["cuts"], "classes": model["classes"]} if model.get("fixed") else {}))
        labeler.cuts, labeler.classes = tuple(map(float, model["cuts"])), tuple(model["classes"])
        labeler.structure, labeler.cv = model.get("structure", labeler.structure), dict(model.get("cv", {}))
        counts = model.get("band_counts")
        labeler.band_counts = None if counts is None else np.asarray(counts, dtype=np.int64)
        labeler.provenance = provenance if provenance is not None else Provenance()
        return labeler
