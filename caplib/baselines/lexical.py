"""The lexical baselines of Sec. 6 and the Q-CARE appendix: EM, ACC, BLEU, ROUGE-L, METEOR (App. C.2 versions).

Each metric is a function ``(golds, predictions, questions, **options) -> scores`` and a ``describe_*`` function
that lists the signature fields of its options; :mod:`caplib.baselines` registers them.

Example:
    >>> exact_match(["Paris"], ["paris."], None).tolist()
    [1.0]
"""

from __future__ import annotations

import functools
import importlib.metadata
import re
import string
from collections.abc import Callable, Mapping, Sequence
from types import MappingProxyType
from typing import Any

import numpy as np

from caplib.baselines.base import MetricUnavailable, yes_no
from caplib.wordnet import WordNetMissing, wordnet_reader

__all__ = [
    "METEOR_PARAMETERS",
    "SMOOTHINGS",
    "TOKENIZERS",
    "accuracy",
    "bleu",
    "describe_bleu",
    "describe_meteor",
    "describe_rouge_l",
    "exact_match",
    "meteor",
    "normalize_answer",
    "rouge_l",
    "tokenizer",
]

# ---------------------------------------------------------------------------------------------------------------
# EM and ACC (Q-CARE appendix): SQuAD-style normalization
# ---------------------------------------------------------------------------------------------------------------

_ARTICLES = re.compile(r"\b(a|an|the)\b")
_PUNCTUATION = str.maketrans("", "", string.punctuation)


def normalize_answer(s: str) -> str:
    """SQuAD v1.1 answer normalization: lower-case, drop punctuation and articles, collapse whitespace.

    Example:
        >>> normalize_answer("  The Eiffel-Tower, in  Paris! ")
        'eiffeltower in paris'
    """
    return " ".join(_ARTICLES.sub(" ", s.lower().translate(_PUNCTUATION)).split())


def exact_match(golds: Sequence[str], predictions: Sequence[str], questions: object, **_: Any) -> np.ndarray:
    return np.array([float(normalize_answer(g) == normalize_answer(p)) for g, p in zip(golds, predictions)])


def _contains(gold: str, prediction: str) -> bool:
    g, p = normalize_answer(gold), normalize_answer(prediction)
    if not g or not p:  # "" is a substring of everything: an empty answer would count as correct
        return g == p
    return p in g or g in p


def accuracy(golds: Sequence[str], predictions: Sequence[str], questions: object, **_: Any) -> np.ndarray:
    # Q-CARE ACC: 1[p ⊆ g ∨ g ⊆ p] on normalized strings (character substrings, as defined there)
    return np.array([float(_contains(g, p)) for g, p in zip(golds, predictions)])


# ---------------------------------------------------------------------------------------------------------------
# BLEU, ROUGE-L, METEOR
# ---------------------------------------------------------------------------------------------------------------

TOKENIZERS = ("word", "whitespace")
SMOOTHINGS = ("none",) + tuple(f"method{i}" for i in range(8))


# nltk's METEOR parameters (its defaults), passed explicitly so that the signature cannot drift from them
METEOR_PARAMETERS: Mapping[str, float] = MappingProxyType({"alpha": 0.9, "beta": 3.0, "gamma": 0.5})


def tokenizer(name: str) -> Callable[[str], list[str]]:
    if name == "word":
        from nltk import word_tokenize

        return functools.partial(word_tokenize, preserve_line=True)  # no punkt needed: one line per answer
    return str.split


def bleu(
    golds: Sequence[str], predictions: Sequence[str], questions: object, *,
    tokenize: str, smoothing: str, max_order: int, lowercase: bool, **_: Any,
) -> np.ndarray:
    import warnings

    from nltk.translate.bleu_score import SmoothingFunction, sentence_bleu

    if not (isinstance(max_order, int) and max_order >= 1):
        raise ValueError(f"max_order must be a positive integer, got {max_order!r}")
    split = tokenizer(tokenize)
    smooth = getattr(SmoothingFunction(), "method0" if smoothing == "none" else smoothing)
    weights = (1.0 / max_order,) * max_order
    case = str.lower if lowercase else str
    scores = []
    with warnings.catch_warnings():  # nltk warns on every zero n-gram count of short answers
        warnings.simplefilter("ignore")
        for g, p in zip(golds, predictions):
            scores.append(sentence_bleu([split(case(g))], split(case(p)), weights=weights, smoothing_function=smooth))
    return np.clip(np.array(scores, dtype=float), 0.0, 1.0)  # method5/method7 can exceed 1


def describe_bleu(tokenize: str, smoothing: str, max_order: int, lowercase: bool, **_: Any) -> dict[str, str]:
    return {
        "nltk": importlib.metadata.version("nltk"),
        "tok": tokenize,
        "case": "lc" if lowercase else "mixed",
        "smooth": smoothing,
        "order": str(max_order),
    }


@functools.lru_cache(maxsize=None)
def _rouge_scorer(stem: bool) -> Any:
    from rouge_score import rouge_scorer

    return rouge_scorer.RougeScorer(["rougeL"], use_stemmer=stem)


def rouge_l(golds: Sequence[str], predictions: Sequence[str], questions: object, *, stem: bool, **_: Any) -> np.ndarray:
    scorer = _rouge_scorer(bool(stem))
    return np.array([scorer.score(g, p)["rougeL"].fmeasure for g, p in zip(golds, predictions)])


def describe_rouge_l(stem: bool, **_: Any) -> dict[str, str]:
    return {"rouge_score": importlib.metadata.version("rouge-score"), "variant": "rougeL", "value": "F", "stem": yes_no(stem)}


def _wordnet() -> Any:
    """nltk's WordNet reader, loaded; :class:`MetricUnavailable` with the fix when it is missing."""
    try:
        return wordnet_reader()
    except WordNetMissing as error:
        raise MetricUnavailable("meteor", str(error)) from None


def meteor(golds: Sequence[str], predictions: Sequence[str], questions: object, *, tokenize: str, **_: Any) -> np.ndarray:
    from nltk.translate.meteor_score import meteor_score

    wordnet = _wordnet()
    split = tokenizer(tokenize)
    return np.array(
        [meteor_score([split(g)], split(p), wordnet=wordnet, **METEOR_PARAMETERS) for g, p in zip(golds, predictions)]
    )


def describe_meteor(tokenize: str, **_: Any) -> dict[str, str]:
    try:
        wordnet_version = _wordnet().get_version()
    except MetricUnavailable:
        wordnet_version = "missing"
    return {
        "nltk": importlib.metadata.version("nltk"),
        "wordnet": wordnet_version,
        "tok": tokenize,
        **{name: str(value) for name, value in METEOR_PARAMETERS.items()},
    }
