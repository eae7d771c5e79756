"""CAP as a labeler, judged (Sec. 8.2): the three labelers fitted on one split and scored on another.

:func:`compare_labelers` fits the paper's uniform bins (their band shares only), fitted thresholds and the
component model on labelled rows (the validation split), predicts the classes of other rows (the test split) and
scores them with :func:`caplib.evaluation.classification_scores` (accuracy, macro-F1, Cohen's and weighted kappas,
per-class F1, confusion), the measures of the paper's human-LLM agreement (Tab. 8). It refuses rows it was fitted on.

Example:
    >>> fit = pd.DataFrame({"row_id": [0, 1, 2, 3], "cap": [0.1, 0.2, 0.8, 0.9],
    ...                     "label_semantic": ["invalid", "invalid", "exact", "exact"]})
    >>> test = fit.assign(row_id=[4, 5, 6, 7])
    >>> result = compare_labelers(fit, test)
    >>> result.table()["accuracy"].round(1).to_dict()
    {'uniform bins': 50.0, 'fitted thresholds': 100.0}
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np
import pandas as pd

from caplib.calibration.components import FEATURES, ComponentLabeler
from caplib.calibration.provenance import Provenance
from caplib.calibration.store import Labeler
from caplib.calibration.thresholds import ThresholdLabeler, objective_value
from caplib.evaluation import classification_scores, kappa_weights
from caplib.evaluation.measures import labels_array
from caplib.taxonomy import LABELS

__all__ = ["SCORE_COLUMNS", "LabelerComparison", "compare_labelers", "measure_of", "paired_difference"]

#: The summary measures of :meth:`LabelerComparison.table`, in order.
SCORE_COLUMNS = ("accuracy", "macro_f1", "kappa", "linear", "quadratic")


@dataclass(frozen=True)
class LabelerComparison:
    """Labelers fitted on one set of rows and judged on another.

    Attributes:
        labelers: name -> fitted labeler (``uniform bins``, ``fitted thresholds``, ``component model``).
        predictions: name -> predicted classes of the evaluation rows.
        scores: name -> :func:`caplib.evaluation.classification_scores` against the evaluation labels.
    """

    labelers: dict[str, Labeler]
    predictions: dict[str, np.ndarray]
    scores: dict[str, dict[str, Any]]

    def table(self, x100: bool = True) -> pd.DataFrame:
        """One row per labeler: accuracy, macro-F1, Cohen's kappa, linear and quadratic weighted kappa (x100)."""
        factor = 100.0 if x100 else 1.0
        return pd.DataFrame({name: {column: factor * scores[column] for column in SCORE_COLUMNS}
                             for name, scores in self.scores.items()}).T.rename_axis("labeler")

    def difference(self, a: str, b: str, truth: Sequence[str], measure: str = "quadratic", n_resamples: int = 1000,
                   seed: int = 0, confidence: float = 0.95) -> tuple[float, float, float]:
        """``(delta, low, high)``: labeler ``a``'s ``measure`` minus ``b``'s on the evaluation rows (``truth``, their
        labels), with a percentile interval from a paired bootstrap over rows (both on the same resamples,
        ``np.random.default_rng(seed)``). ``measure`` is one of :data:`SCORE_COLUMNS`; fractions, not x100."""
        return paired_difference(truth, self.predictions[a], self.predictions[b], measure, n_resamples, seed,
                                 confidence)

    def per_class_f1(self, x100: bool = True) -> pd.DataFrame:
        """F1 of each class (rows, Eq. 1 order) under each labeler (columns); NaN where a class is absent."""
        factor = 100.0 if x100 else 1.0
        return pd.DataFrame({name: {label: factor * value for label, value in scores["per_class_f1"].items()}
                             for name, scores in self.scores.items()})


def measure_of(confusion: np.ndarray, measure: str) -> float:
    """One of :data:`SCORE_COLUMNS` from an 8 x 8 confusion matrix (rows labels, columns predictions, ``LABELS``
    order), as :func:`caplib.evaluation.classification_scores` computes it (macro-F1 over the classes present on
    either side).

    Example:
        >>> confusion = np.zeros((8, 8), dtype=int)
        >>> confusion[0, 0] = confusion[0, 1] = confusion[1, 1] = 1  # exact->exact, exact->equivalent, eq->eq
        >>> round(measure_of(confusion, "macro_f1"), 4), round(measure_of(confusion, "accuracy"), 4)
        (0.6667, 0.6667)
    """
    if measure in ("accuracy", "quadratic"):
        return objective_value(confusion, measure)
    if measure in ("kappa", "linear"):
        weights = kappa_weights("none" if measure == "kappa" else "linear")
        expected = np.outer(confusion.sum(axis=1), confusion.sum(axis=0)) / confusion.sum()
        chance = float((weights * expected).sum())
        return 1.0 - float((weights * confusion).sum()) / chance if chance > 0 else 0.0
    if measure != "macro_f1":
        raise ValueError(f"measure must be one of {SCORE_COLUMNS}, got {measure!r}")
    true_positive, labelled, predicted = np.diag(confusion), confusion.sum(axis=1), confusion.sum(axis=0)
    present = (labelled + predicted) > 0
    f1 = 2 * true_positive[present] / (labelled[present] + predicted[present])
    return float(f1.mean())


def paired_difference(truth: Sequence[str], predicted_a: Sequence[str], predicted_b: Sequence[str],
                      measure: str = "quadratic", n_resamples: int = 1000, seed: int = 0,
                      confidence: float = 0.95) -> tuple[float, float, float]:
    """``(delta, low, high)`` of ``measure(a) - measure(b)`` against ``truth``: the difference on all rows and its
    percentile interval over paired bootstrap resamples of the rows (``np.random.default_rng(seed)``).

    Example:
        >>> truth = ["exact", "invalid"] * 20
        >>> paired_difference(truth, truth, truth, "accuracy", n_resamples=50)
        (0.0, 0.0, 0.0)
    """
    index = {label: i for i, label in enumerate(LABELS)}
    t, a, b = (np.array([index[label] for label in labels_array(list(x))]) for x in (truth, predicted_a, predicted_b))
    if not len(t) == len(a) == len(b):
        raise ValueError(f"truth and predictions differ in length: {len(t)}, {len(a)}, {len(b)}")

    def confusion(rows: np.ndarray, predicted: np.ndarray) -> np.ndarray:
        return np.bincount(t[rows] * len(LABELS) + predicted[rows], minlength=len(LABELS) ** 2).reshape(8, 8)

    everything = np.arange(len(t))
    delta = measure_of(confusion(everything, a), measure) - measure_of(confusion(everything, b), measure)
    rng = np.random.default_rng(seed)
    samples = np.empty(n_resamples)
    for r in range(n_resamples):
        rows = rng.integers(0, len(t), len(t))
        samples[r] = measure_of(confusion(rows, a), measure) - measure_of(confusion(rows, b), measure)
    tail = 100 * (1 - confidence) / 2
    low, high = np.percentile(samples, [tail, 100 - tail])
    return float(delta), float(low), float(high)


def compare_labelers(fit_rows: pd.DataFrame, eval_rows: pd.DataFrame, label_column: str = "label_semantic", *,
                     objective: str = "quadratic", cap_signature: str | None = None,
                     fitted_on: str | None = None) -> LabelerComparison:
    """Fit the uniform bins, fitted thresholds and (when the rows carry CAP's components) the component model on
    ``fit_rows``, and score their classes of ``eval_rows`` against its labels.

    ``cap_signature`` and ``fitted_on`` (a split's name) go into each labeler's provenance.

    Raises:
        ValueError: the two frames share a ``row_id`` (a labeler must never be judged on rows it was fitted on).
    """
    if "row_id" in fit_rows.columns and "row_id" in eval_rows.columns:
        shared = sorted(set(fit_rows["row_id"].astype(int)) & set(eval_rows["row_id"].astype(int)))
        if shared:
            raise ValueError(f"{len(shared)} row(s) are in both the fitting and the evaluation rows (row_id "
                             f"{shared[:5]}...): fit on one split, judge on another")
    provenance = Provenance(cap_signature=cap_signature, split=fitted_on, label_column=label_column,
                            n=len(fit_rows), row_ids=tuple(int(i) for i in fit_rows.get("row_id", ())))
    labels = fit_rows[label_column].tolist()
    labelers: dict[str, Labeler] = {
        "uniform bins": ThresholdLabeler.uniform().fit(fit_rows["cap"], labels, provenance),
        "fitted thresholds": ThresholdLabeler("auto", objective).fit(fit_rows["cap"], labels, provenance),
    }
    if set(FEATURES) <= set(fit_rows.columns) and set(FEATURES) <= set(eval_rows.columns):
        labelers["component model"] = ComponentLabeler().fit(fit_rows, labels, provenance)
    predictions = {name: labeler.predict(eval_rows if isinstance(labeler, ComponentLabeler) else eval_rows["cap"])
                   for name, labeler in labelers.items()}
    truth = eval_rows[label_column].tolist()
    scores = {name: classification_scores(truth, predicted) for name, predicted in predictions.items()}
    return LabelerComparison(labelers, predictions, scores)
