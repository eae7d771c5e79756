"""The alpha/lambda sweep of App. C.3 recomputes CAP from NLI probabilities and evaluates each setting."""

import numpy as np
import pytest

from caplib.evaluation import pairwise_accuracy, rank_correlation
from caplib.sweep import ALPHAS, LAMS, sweep
from caplib.taxonomy import LABELS


def _probs(entail, neutral):
    entail, neutral = np.asarray(entail, float), np.asarray(neutral, float)
    return np.stack([entail, neutral, 1.0 - entail - neutral], axis=1)


def test_grid_contains_every_row_of_tab12():
    for alpha, lam in [(0.3, 0.0), (0.5, 0.0), (0.5, 0.3), (0.7, 0.3), (0.85, 0.3)]:
        assert alpha in ALPHAS and lam in LAMS


def test_sweep_matches_a_hand_computed_setting():
    labels = list(LABELS)
    # Forward entailment falls with severity except partial, which is entailed by the gold (the Sec. 7.3 artefact).
    forward = _probs([0.9, 0.8, 0.1, 0.3, 0.85, 0.2, 0.05, 0.0], [0.1, 0.2, 0.8, 0.7, 0.1, 0.3, 0.2, 0.0])
    backward = _probs([0.9, 0.8, 0.1, 0.9, 0.2, 0.6, 0.05, 0.0], [0.1, 0.2, 0.8, 0.1, 0.8, 0.2, 0.2, 0.0])
    table = sweep(forward, backward, labels, alphas=(1.0, 0.5), lams=(0.0, 1.0)).set_index(["alpha", "lam"])
    # alpha = 1, lam = 0: CAP = forward entailment = [0.9, 0.8, 0.1, 0.3, 0.85, 0.2, 0.05, 0.0]
    scores = np.array([0.9, 0.8, 0.1, 0.3, 0.85, 0.2, 0.05, 0.0])
    row = table.loc[(1.0, 0.0)]
    assert row["pairwise_accuracy"] == pytest.approx(pairwise_accuracy(scores, labels))
    assert row["spearman"] == pytest.approx(rank_correlation(scores, labels)[0])
    # Violations by hand: eq (0.8) <= partial (0.85), alt (0.1) <= OV (0.3), alt <= partial, alt <= OI (0.2),
    # OV (0.3) <= partial: 5 of the 25 strict pairs.
    assert row["violations"] == 5
    assert len(table) == 4


def test_sweep_refuses_labels_missing_a_class():
    probs = _probs([0.5, 0.4], [0.3, 0.3])
    with pytest.raises(ValueError, match="lacks"):
        sweep(probs, probs, ["exact", "partial"], alphas=(0.85,), lams=(0.3,))
