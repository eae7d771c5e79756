"""A multinomial logistic model on CAP's components (Sec. 8.2, the stronger variant of a label-free labeler).

CAP folds two directional scores into one number (Eq. 3); the parts keep more: the six NLI probabilities
P(entailment | neutral | contradiction) in both directions and D(g -> p), D(p -> g) (Eq. 2),
``caplib.cap.COMPONENT_COLUMNS``. :class:`ComponentLabeler` standardises those eight features and fits scikit-learn's
multinomial logistic regression (L2, ``C``, lbfgs: deterministic) on labelled rows; at use time it needs only the
components of new rows, no label. The fitted model is kept as plain numbers (means, scales, coefficients,
intercepts), so that a saved calibration loads without pickles and predicts with numpy alone.

Example:
    >>> rows = pd.DataFrame({feature: [0.0, 0.1, 0.9, 1.0] for feature in FEATURES})
    >>> rows["cap_p_entail_fwd"] = [0.05, 0.1, 0.9, 0.95]
    >>> labeler = ComponentLabeler().fit(rows, ["invalid", "invalid", "exact", "exact"])
    >>> labeler.predict(rows).tolist()
    ['invalid', 'invalid', 'exact', 'exact']
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Mapping, Sequence

import numpy as np
import pandas as pd

from caplib.cap import PROBABILITY_COMPONENTS
from caplib.calibration.provenance import Provenance, read_document, write_document
from caplib.evaluation.measures import labels_array
from caplib.signature import Signature
from caplib.taxonomy import LABELS

__all__ = ["FEATURES", "ComponentLabeler"]

#: The model's inputs: the six directional NLI probabilities, then D(g -> p) and D(p -> g) (columns of
#: ``caplib score --components``).
FEATURES: tuple[str, ...] = (*PROBABILITY_COMPONENTS, "cap_d_forward", "cap_d_backward")


def _features(components: Any) -> np.ndarray:
    if not isinstance(components, pd.DataFrame):
        raise ValueError(f"a component labeler reads a frame with the columns {list(FEATURES)} (`caplib score "
                         f"--components` writes them); got {type(components).__name__}")
    missing = [name for name in FEATURES if name not in components.columns]
    if missing:
        raise ValueError(f"a component labeler needs CAP's components {missing}; score the rows with `caplib score "
                         f"--components` (or caplib.scoring.score_frame(..., components=True))")
    values = components[list(FEATURES)].to_numpy(dtype=np.float64)
    if not np.isfinite(values).all():
        row, column = np.argwhere(~np.isfinite(values))[0]
        raise ValueError(f"row {int(row)}, column {FEATURES[column]!r}: {values[row, column]} is not a finite number")
    return values


class ComponentLabeler:
    """Multinomial logistic regression on :data:`FEATURES` (see the module docstring).

    Args:
        C: inverse L2 strength of scikit-learn's ``LogisticRegression`` (1.0, its default; on the bundled sample's
            validation split, 5 folds by question, C from 0.01 to 100 gave quadratic kappa within 5 points, C = 1
            at the top: never chosen on a test split).

    Attributes (after :meth:`fit`): ``mean``, ``scale`` (standardisation), ``coef`` (classes x features),
    ``intercept``, ``classes`` (the labels seen in fitting, ``LABELS`` order), ``provenance``.
    """

    method = "components"
    columns: tuple[str, ...] = FEATURES
    #: CAP signature fields its inputs depend on: the backbone, and lambda through D (alpha enters only CAP).
    depends_on: tuple[str, ...] = ("nli", "lam")

    def __init__(self, C: float = 1.0) -> None:
        if not C > 0:
            raise ValueError(f"C must be a positive number, got {C!r}")
        self.C = float(C)
        self.mean = self.scale = self.coef = self.intercept = np.zeros(0)
        self.classes: tuple[str, ...] = ()
        self.provenance = Provenance()

    def fit(self, components: pd.DataFrame, labels: Sequence[str],
            provenance: Provenance | None = None) -> ComponentLabeler:
        """Fit on a frame with the :data:`FEATURES` columns and taxonomy ``labels`` (two classes at least)."""
        from sklearn.linear_model import LogisticRegression

        features, truth = _features(components), labels_array(list(labels))
        if len(features) != len(truth):
            raise ValueError(f"fit needs one label per row: {len(features)} rows, {len(truth)} labels")
        self.classes = tuple(label for label in LABELS if label in set(truth))
        if len(self.classes) < 2:
            raise ValueError(f"fit needs at least two classes among the labels; all are {self.classes}")
        self.mean = features.mean(axis=0)
        scale = features.std(axis=0)
        self.scale = np.where(scale > 0, scale, 1.0)  # a constant feature stays 0 after standardising
        model = LogisticRegression(C=self.C, max_iter=5000).fit((features - self.mean) / self.scale, truth)
        coef, intercept = model.coef_, model.intercept_
        if len(coef) == 1:  # scikit-learn keeps one row for two classes: softmax([0, z]) == sigmoid(z)
            coef, intercept = np.vstack([np.zeros_like(coef[0]), coef[0]]), np.array([0.0, intercept[0]])
        order = [list(model.classes_).index(label) for label in self.classes]  # scikit-learn sorts by name
        self.coef, self.intercept = coef[order], intercept[order]
        self.provenance = provenance if provenance is not None else Provenance(n=len(truth))
        return self

    def predict_proba(self, components: pd.DataFrame) -> pd.DataFrame:
        """Class probabilities, one column per class of ``LABELS`` (0 for a class absent from the fitting rows)."""
        if not self.classes:
            raise ValueError("this component labeler is not fitted yet: call fit(components, labels) first")
        logits = ((_features(components) - self.mean) / self.scale) @ self.coef.T + self.intercept
        logits -= logits.max(axis=1, keepdims=True)
        proba = np.exp(logits)
        proba /= proba.sum(axis=1, keepdims=True)
        return pd.DataFrame(proba, columns=list(self.classes)).reindex(columns=list(LABELS), fill_value=0.0)

    def predict(self, components: pd.DataFrame) -> np.ndarray:
        """The most probable class of each row (ties: the first in Eq. 1 order)."""
        proba = self.predict_proba(components)
        return np.asarray(LABELS, dtype=object)[proba.to_numpy().argmax(axis=1)]

    def confidence(self, components: pd.DataFrame) -> np.ndarray:
        """The probability of the predicted class."""
        return self.predict_proba(components).to_numpy().max(axis=1)

    def signature(self) -> Signature:
        """``calibration|method:components|C:...|features:8|nli:...|...|caplib:...``."""
        from caplib import __version__

        return Signature.of("calibration", [("method", self.method), ("C", f"{self.C:g}"),
                                            ("features", str(len(FEATURES))), *self.provenance.signature_fields(),
                                            ("caplib", __version__)])

    def to_dict(self) -> dict[str, Any]:
        """The model as JSON-ready fields (the ``model`` of a calibration file)."""
        return {"C": self.C, "features": list(FEATURES), "classes": list(self.classes), "mean": self.mean.tolist(),
                "scale": self.scale.tolist(), "coef": self.coef.tolist(), "intercept": self.intercept.tolist()}

    def save(self, path: str | Path) -> None:
        """Write this labeler to a calibration file (JSON, with its signature and provenance)."""
        write_document(path, self.method, self.signature(), self.provenance, self.to_dict())

    @classmethod
    def load(cls, path: str | Path) -> ComponentLabeler:
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
    def from_dict(cls, model: Mapping[str, Any], provenance: Provenance | None = None) -> ComponentLabeler:
        """The inverse of :meth:`to_dict`.

        Raises:
            ValueError: the file's features are not this version's :data:`FEATURES`.
        """
        if list(model.get("features", [])) != list(FEATURES):
            raise ValueError(f"the calibration's features {model.get('features')} are not {list(FEATURES)}; refit "
                             f"it with this caplib")
        labeler = cls(model["C"])
        labeler.classes = tuple(model["classes"])
        labeler.mean, labeler.scale, labeler.coef, labeler.intercept = (
            np.asarray(model[key], dtype=np.float64) for key in ("mean", "scale", "coef", "intercept"))
        labeler.provenance = provenance if provenance is not None else Provenance()
        return labeler
