"""A shortcut baseline: what surface cues alone say about a candidate's class.

Class-conditioned generation (App. B.3-B.4) leaves surface traces in any such dataset: contradictions carry
negation words, partials are shorter than the gold, overinclusive answers longer. This module measures how far
those traces go. ``surface_features`` computes :data:`FEATURES` (17 numbers per row, from the gold answer and
the candidate only: never the question, a model or the label); ``shortcut_scores`` fits a multinomial logistic
regression on them **out of fold**, with folds grouped by question so that no question is both fitted and
scored, and returns the expected severity (App. C.2's map, scaled to [0, 1]) of each row. The score is then
evaluated like any metric (pairwise accuracy, Spearman, Tab. 4's hard pairs), so a reader can see what a metric
adds over surface cues on any labelled file.

Example:
    >>> surface_features(["water"], ["not water"])[0][FEATURES.index("answer_negations")]
    1.0
    >>> has_negation("It isn't water"), has_negation("It is water")
    (True, False)
"""

from __future__ import annotations

import math
import re
from typing import Sequence

import numpy as np
import pandas as pd

from caplib.signature import Signature
from caplib.taxonomy import LABELS, SEVERITY, normalize_label

#: The negation words of the sample audit (issue 12); ``n't`` is matched as a suffix.
NEGATION_WORDS: tuple[str, ...] = ("not", "no", "never", "cannot", "none", "neither", "nor")

#: Function words left out of the "content words" of an answer.
STOP_WORDS: frozenset[str] = frozenset(
    "a an the of to in on at by for from with without into onto over under about as is are was were be been "
    "being it its this that these those and or but if then than so such which who whom whose what when where "
    "why how there their they them he she his her we our i you your do does did has have had can could will "
    "would shall should may might must also very more most less least only just some any each every all both "
    "one".split()
)

#: The 17 surface features, in column order.
FEATURES: tuple[str, ...] = (
    "answer_tokens_log", "gold_tokens_log", "token_ratio_log", "char_ratio_log",
    "answer_stems_in_gold", "gold_stems_in_answer", "stem_jaccard", "new_content_words_log",
    "same_text", "answer_contains_gold", "gold_contains_answer",
    "answer_negations", "negation_difference",
    "answer_list_markers", "gold_list_markers", "answer_has_digits", "numbers_differ",
)

_WORD = re.compile(r"[a-z0-9]+(?:'[a-z]+)?")
_NEGATION = re.compile(r"\b(?:" + "|".join(NEGATION_WORDS) + r")\b|n't\b", re.IGNORECASE)
_LIST_MARKER = re.compile(r",|;|\band\b|\bor\b|\bas well as\b", re.IGNORECASE)
_NUMBER = re.compile(r"\d+(?:[.,]\d+)?")
_SUFFIXES = ("ing", "ed", "es", "ly", "s")


def words(text: str) -> list[str]:
    """Lower-cased word tokens (letters and digits, inner apostrophes kept)."""
    return _WORD.findall(text.lower())


def stem(word: str) -> str:
    """A crude suffix-stripping stem (``-ing``, ``-ed``, ``-es``, ``-ly``, ``-s``), enough to match inflections."""
    for suffix in _SUFFIXES:
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            return word[: -len(suffix)]
    return word


def content_stems(text: str) -> frozenset[str]:
    """Stems of the content words of ``text`` (stop words removed).

    Example:
        >>> sorted(content_stems("The plants are making sugars"))
        ['mak', 'plant', 'sugar']
    """
    return frozenset(stem(w) for w in words(text) if w not in STOP_WORDS)


def has_negation(text: str) -> bool:
    """Whether ``text`` holds one of :data:`NEGATION_WORDS` or an ``n't`` contraction."""
    return bool(_NEGATION.search(text))


def _row_features(gold: str, answer: str) -> list[float]:
    gold_words, answer_words = words(gold), words(answer)
    gold_stems, answer_stems = content_stems(gold), content_stems(answer)
    gold_norm, answer_norm = " ".join(gold_words), " ".join(answer_words)
    shared = len(gold_stems & answer_stems)
    union = len(gold_stems | answer_stems)
    answer_negations = len(_NEGATION.findall(answer))
    return [
        math.log1p(len(answer_words)),
        math.log1p(len(gold_words)),
        math.log((len(answer_words) + 1) / (len(gold_words) + 1)),
        math.log((len(answer) + 1) / (len(gold) + 1)),
        shared / len(answer_stems) if answer_stems else 1.0,
        shared / len(gold_stems) if gold_stems else 1.0,
        shared / union if union else 1.0,
        math.log1p(len(answer_stems - gold_stems)),
        float(answer_norm == gold_norm),
        float(bool(gold_norm) and f" {gold_norm} " in f" {answer_norm} "),
        float(bool(answer_norm) and f" {answer_norm} " in f" {gold_norm} "),
        float(answer_negations),
        float(answer_negations - len(_NEGATION.findall(gold))),
        float(len(_LIST_MARKER.findall(answer))),
        float(len(_LIST_MARKER.findall(gold))),
        float(bool(_NUMBER.search(answer))),
        float(set(_NUMBER.findall(answer)) != set(_NUMBER.findall(gold))),
    ]


def surface_features(golds: Sequence[str], answers: Sequence[str]) -> np.ndarray:
    """An ``(n, 17)`` array of :data:`FEATURES` for each (gold, answer) pair."""
    if len(golds) != len(answers):
        raise ValueError(f"{len(golds)} gold answers but {len(answers)} answers")
    return np.array([_row_features(str(g), str(a)) for g, a in zip(golds, answers)], dtype=float).reshape(
        len(golds), len(FEATURES))


def shortcut_signature(n_folds: int = 5, seed: int = 0) -> Signature:
    """The settings behind :func:`shortcut_scores`, for the record beside its numbers."""
    import sklearn

    return Signature.of("shortcut", {"features": len(FEATURES), "model": "logreg-multinomial-C1",
                                     "folds": f"{n_folds}-by-question", "seed": seed, "sklearn": sklearn.__version__})


def frame_shortcut_scores(frame: pd.DataFrame, label_column: str = "label_semantic", seed: int = 0) -> np.ndarray:
    """:func:`shortcut_scores` of a frame's ``gold_answer``, ``answer``, ``label_column`` (normalised) and
    ``question`` (the folds) columns.

    Raises:
        ValueError: a column is missing (named), or what :func:`shortcut_scores` refuses.
    """
    absent = [c for c in ("question", "gold_answer", "answer", label_column) if c not in frame.columns]
    if absent:
        raise ValueError(f"needs column(s) {absent}; columns are {list(frame.columns)}")
    return shortcut_scores(frame["gold_answer"].tolist(), frame["answer"].tolist(),
                           [normalize_label(label) for label in frame[label_column]], frame["question"].tolist(),
                           seed=seed)


def shortcut_scores(golds: Sequence[str], answers: Sequence[str], labels: Sequence[str],
                    groups: Sequence[str], n_folds: int = 5, seed: int = 0) -> np.ndarray:
    """Out-of-fold expected severity in [0, 1] from a logistic regression on :func:`surface_features`.

    Folds are grouped by ``groups`` (the question), so a row is always scored by a model that saw no row of its
    question. The score is ``sum_c P(c | features) * SEVERITY[c] / 6``; it uses the labels only to fit, never to
    score the held-out fold.

    Example:
        >>> golds = ["water", "the sun", "iron", "oxygen", "gravity", "a cell"] * 2
        >>> answers = golds[:6] + ["not " + g for g in golds[:6]]
        >>> labels = ["exact"] * 6 + ["contradictory"] * 6
        >>> scores = shortcut_scores(golds, answers, labels, groups=list(range(6)) * 2, n_folds=3)
        >>> bool(scores[:6].min() > scores[6:].max())
        True
    """
    from sklearn.linear_model import LogisticRegression
    from sklearn.model_selection import GroupKFold
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    labels = np.asarray([str(label) for label in labels])
    unknown = sorted(set(labels) - set(LABELS))
    if unknown:
        raise ValueError(f"labels outside the taxonomy: {unknown}; normalise them with caplib.taxonomy first")
    groups = np.asarray([str(g) for g in groups])
    if len(labels) != len(golds) or len(groups) != len(golds):
        raise ValueError(f"golds, labels and groups differ in length: {len(golds)}, {len(labels)}, {len(groups)}")
    n_groups = len(set(groups))
    if n_groups < 2:
        raise ValueError("shortcut_scores needs rows from at least two questions (folds are grouped by question)")
    features = surface_features(golds, answers)
    # GroupKFold is deterministic; shuffle the group order with the seed so folds do not follow file order.
    order = {g: i for i, g in enumerate(np.random.default_rng(seed).permutation(sorted(set(groups))))}
    group_ids = np.array([order[g] for g in groups])
    scores = np.empty(len(labels))
    for fit, held in GroupKFold(n_splits=min(n_folds, n_groups)).split(features, labels, group_ids):
        classes = sorted(set(labels[fit]))
        if len(classes) == 1:
            scores[held] = SEVERITY[classes[0]] / 6
            continue
        model = make_pipeline(StandardScaler(), LogisticRegression(max_iter=2000, C=1.0))
        model.fit(features[fit], labels[fit])
        severity = np.array([SEVERITY[c] for c in model.classes_]) / 6
        scores[held] = model.predict_proba(features[held]) @ severity
    return scores
