"""The shortcut baseline: surface features computed by hand, out-of-fold scoring, and what it can and cannot see."""

from __future__ import annotations

import math

import numpy as np
import pytest

from caplib.evaluation import pair_auc
from caplib.shortcut import FEATURES, content_stems, has_negation, shortcut_scores, surface_features
from caplib.taxonomy import LABELS


def feature(gold: str, answer: str, name: str) -> float:
    return float(surface_features([gold], [answer])[0][FEATURES.index(name)])


def test_features_of_one_pair_computed_by_hand():
    gold, answer = "wearing protective clothing and goggles", "wearing goggles, never gloves"
    assert len(FEATURES) == 17 and surface_features([gold], [answer]).shape == (1, 17)
    # answer words: wearing goggles never gloves (4); gold words: 5
    assert feature(gold, answer, "answer_tokens_log") == pytest.approx(math.log(5))
    assert feature(gold, answer, "token_ratio_log") == pytest.approx(math.log(5 / 6))
    # content stems: answer {wear, goggl, never, glov}; gold {wear, protective, cloth, goggl}: 2 shared, 6 in union
    assert content_stems(answer) == {"wear", "goggl", "never", "glov"}
    assert feature(gold, answer, "answer_stems_in_gold") == pytest.approx(2 / 4)
    assert feature(gold, answer, "gold_stems_in_answer") == pytest.approx(2 / 4)
    assert feature(gold, answer, "stem_jaccard") == pytest.approx(2 / 6)
    assert feature(gold, answer, "new_content_words_log") == pytest.approx(math.log(3))
    assert feature(gold, answer, "answer_negations") == 1.0 and feature(gold, answer, "negation_difference") == 1.0
    assert feature(gold, answer, "answer_list_markers") == 1.0 and feature(gold, answer, "gold_list_markers") == 1.0
    assert feature(gold, gold, "same_text") == 1.0 and feature(gold, answer, "same_text") == 0.0
    assert feature("12", "12 electrons", "answer_contains_gold") == 1.0
    assert feature("12", "12 electrons", "numbers_differ") == 0.0 and feature("12", "14", "numbers_differ") == 1.0


@pytest.mark.parametrize("text, negated", [("It isn't water", True), ("not water", True), ("Nothing", False),
                                            ("Neither", True), ("knot", False), ("cannot boil", True)])
def test_negation_words(text, negated):
    assert has_negation(text) is negated


def synthetic(n_questions: int = 40, seed: int = 0):
    """Each question gets all eight classes; OV and OI are built identically (gold + one extra clause)."""
    rng = np.random.default_rng(seed)
    nouns = ["iron", "water vapour", "the liver", "carbon dioxide", "a lever", "the moon", "sodium", "red light"]
    extras = ["which is common", "found in rocks", "as seen in labs", "mostly in summer", "at high altitude"]
    golds, answers, labels, groups = [], [], [], []
    for q in range(n_questions):
        gold = f"{nouns[q % 8]} and {nouns[(q + 3) % 8]}"
        made = {
            "exact": gold, "equivalent": f"both {nouns[q % 8]} as well as {nouns[(q + 3) % 8]}",
            "alternative_correct": f"{nouns[(q + 5) % 8]}", "partial": nouns[q % 8],
            "overinclusive_valid": f"{gold}, {extras[rng.integers(5)]}",
            "overinclusive_invalid": f"{gold}, {extras[rng.integers(5)]}",
            "invalid": nouns[(q + 6) % 8], "contradictory": f"not {gold}",
        }
        for label in LABELS:
            golds.append(gold), answers.append(made[label]), labels.append(label), groups.append(f"q{q}")
    return golds, answers, labels, groups


def test_scores_are_out_of_fold_by_question():
    golds, answers, labels, groups = synthetic()
    scores = shortcut_scores(golds, answers, labels, groups)
    assert scores.shape == (len(golds),) and 0 <= scores.min() and scores.max() <= 1
    assert np.array_equal(scores, shortcut_scores(golds, answers, labels, groups))  # deterministic
    # relabelling every row of one question must not change that question's own scores (it is never fitted on
    # its own rows), while it may change others'
    flipped = [("contradictory" if g == "q0" else label) for label, g in zip(labels, groups)]
    again = shortcut_scores(golds, answers, flipped, groups)
    mine = np.array([g == "q0" for g in groups])
    assert np.allclose(scores[mine], again[mine])


def test_surface_cues_order_classes_they_mark_and_not_those_they_do_not():
    golds, answers, labels, groups = synthetic()
    scores = shortcut_scores(golds, answers, labels, groups)
    # negation marks contradictory: always below exact
    assert pair_auc(scores, labels, "exact", "contradictory") == 1.0
    # OV and OI are built the same way: surface cues cannot tell them apart (chance, within sampling noise)
    assert abs(pair_auc(scores, labels, "overinclusive_valid", "overinclusive_invalid") - 0.5) < 0.15


def test_bad_input_is_named():
    with pytest.raises(ValueError, match="outside the taxonomy"):
        shortcut_scores(["a", "b"], ["a", "b"], ["exact", "Exact match"], ["q1", "q2"])
    with pytest.raises(ValueError, match="at least two questions"):
        shortcut_scores(["a", "b"], ["a", "b"], ["exact", "invalid"], ["q1", "q1"])
    with pytest.raises(ValueError, match="differ in length"):
        shortcut_scores(["a", "b"], ["a", "b"], ["exact"], ["q1", "q2"])
