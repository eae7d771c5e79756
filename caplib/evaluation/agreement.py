"""Agreement between two labelings (Tab. 8) and how well a labeler's classes match the labels (Sec. 8.2).

:func:`agreement` is Cohen's kappa, unweighted and weighted by the distance between positions in ``LABELS``
(the order of Eq. 1): the measure of the paper's human-LLM agreement. :func:`classification_scores` adds what a
classifier is judged by (accuracy, macro-F1, per-class F1, the confusion matrix) around the same kappas, so that
a label-free labeler (:mod:`caplib.calibration`) stands beside Tab. 8 on one scale.

Example:
    >>> scores = classification_scores(["exact", "partial", "invalid"], ["exact", "partial", "partial"])
    >>> round(scores["accuracy"], 4), scores["n"]
    (0.6667, 3)
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np
import pandas as pd

from caplib.evaluation.measures import blank_labels, labels_array
from caplib.taxonomy import LABELS

__all__ = ["agreement", "classification_scores", "kappa_weights"]


def kappa_weights(kind: str = "quadratic") -> np.ndarray:
    """The disagreement weights of a weighted kappa over ``LABELS`` positions (0..7, the order of Eq. 1):
    ``(i - j) ** 2`` (quadratic), ``|i - j|`` (linear), or ``i != j`` (unweighted); what :func:`agreement`
    weighs with (scikit-learn's ``cohen_kappa_score`` with ``labels=LABELS``).

    Example:
        >>> kappa_weights("quadratic")[0, 7], kappa_weights("linear")[0, 7], kappa_weights("none")[0, 7]
        (49.0, 7.0, 1.0)
    """
    positions = np.arange(len(LABELS), dtype=np.float64)
    distance = np.abs(positions[:, None] - positions[None, :])
    weights = {"quadratic": distance**2, "linear": distance, "none": (distance > 0).astype(np.float64)}
    if kind not in weights:
        raise ValueError(f"kappa weights are 'quadratic', 'linear' or 'none', got {kind!r}")
    return weights[kind]


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

    keep = ~(blank_labels(a) | blank_labels(b))
    if keep.sum() < 2:
        raise ValueError(f"agreement needs at least two rows labelled on both sides; {int(keep.sum())} found")
    a = labels_array(a[keep].to_numpy(), name="labels_a")
    b = labels_array(b[keep].to_numpy(), name="labels_b")
    if len(set(a) | set(b)) < 2:
        raise ValueError(f"kappa is undefined: every label on both sides is {a[0]!r}")
    from sklearn.metrics import cohen_kappa_score  # here: importing scikit-learn takes ~0.4 s, every process

    result: dict[str, float] = {}
    for key, weights in (("kappa", None), ("linear", "linear"), ("quadratic", "quadratic")):
        result[key] = float(cohen_kappa_score(a, b, labels=list(LABELS), weights=weights))
    result["n"] = int(len(a))
    return result


def classification_scores(labels: Sequence[str], predicted: Sequence[str]) -> dict[str, Any]:
    """How well predicted classes match the labels: accuracy, macro-F1, the kappas of :func:`agreement`
    (``kappa``, ``linear``, ``quadratic``), per-class F1 and the confusion matrix.

    ``per_class_f1`` maps each class present in the labels or the predictions to its F1 (taxonomy order);
    ``macro_f1`` is their mean. ``confusion`` is a DataFrame, rows the labels and columns the predictions,
    all eight classes in the order of ``LABELS``. Labels are normalized; no value may be missing.

    Example:
        >>> scores = classification_scores(["exact", "exact", "invalid", "partial"],
        ...                                ["exact", "equivalent", "invalid", "partial"])
        >>> scores["accuracy"], round(scores["macro_f1"], 4), int(scores["confusion"].loc["exact", "equivalent"])
        (0.75, 0.6667, 1)

    Raises:
        ValueError: lengths differ, a missing or unknown label, or kappa undefined (one class on both sides).
    """
    truth = labels_array(labels, name="labels")
    guess = labels_array(predicted, name="predicted")
    if len(truth) != len(guess):
        raise ValueError(f"labels and predictions differ in length: {len(truth)} vs {len(guess)}")
    from sklearn.metrics import f1_score

    kappas = agreement(truth, guess)
    present = [label for label in LABELS if label in set(truth) | set(guess)]
    per_class = f1_score(truth, guess, labels=present, average=None, zero_division=0.0)
    confusion = pd.crosstab(pd.Categorical(truth, categories=LABELS), pd.Categorical(guess, categories=LABELS),
                            dropna=False).rename_axis(index="label", columns="predicted")
    return {
        "n": len(truth),
        "accuracy": float(np.mean(truth == guess)),
        "macro_f1": float(np.mean(per_class)),
        "kappa": kappas["kappa"],
        "linear": kappas["linear"],
        "quadratic": kappas["quadratic"],
        "per_class_f1": {label: float(value) for label, value in zip(present, per_class)},
        "confusion": confusion,
    }
