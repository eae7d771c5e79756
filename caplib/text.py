"""Text normalization and near-duplicate detection of App. B.5 (normalized-text Jaccard >= 0.9), and stable ids
made from a row's text (:func:`content_id`).

One normalization serves every comparison of texts in caplib: the cleaning rules (:mod:`caplib.data`),
the template statement generator, the deduplication of the bundled samples and the offline NLI
backbone's leakage guard. A text is lower-cased and NFKC-normalized, punctuation (and the ``_``
blanks of blank-spaces-task items) becomes spaces; two texts are compared as sets of tokens.

Example:
    >>> normalize_text("What is H2O?")
    'what is h2o'
    >>> near_duplicates(["What is H2O?", "what is h2o", "What is CO2?"])
    [1]
    >>> jaccard("a b c d", "a b c e")
    0.6
"""

from __future__ import annotations

import hashlib
import math
import re
import unicodedata
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence

__all__ = ["content_id", "content_ids", "jaccard", "near_duplicates", "near_duplicates_in", "normalize_text"]

_PUNCTUATION = re.compile(r"[\W_]+")  # punctuation and the "____" blanks of blank-spaces-task items


def normalize_text(text: str) -> str:
    """Lower-case, NFKC-normalized text with punctuation (and ``_`` blanks) turned into single spaces.

    Example:
        >>> normalize_text("  What's the Boiling-Point of ____? ")
        'what s the boiling point of'
    """
    if not isinstance(text, str):
        raise TypeError(f"expected a string, got {type(text).__name__} {text!r}")
    text = unicodedata.normalize("NFKC", text).casefold()
    return " ".join(_PUNCTUATION.sub(" ", text).split())


def _tokens(text: str) -> frozenset[str]:
    return frozenset(normalize_text(text).split())


def jaccard(a: str, b: str) -> float:
    """Jaccard similarity of the token sets of ``normalize_text(a)`` and ``normalize_text(b)`` (B.5).

    Two texts with no tokens at all are identical (1.0).

    Example:
        >>> jaccard("The sun is a star.", "the SUN is a star")
        1.0
    """
    x, y = _tokens(a), _tokens(b)
    if not x and not y:
        return 1.0
    return len(x & y) / len(x | y)


def _min_overlap(threshold: float, size: int) -> int:
    # Jaccard(x, y) >= t implies |x & y| >= t * max(|x|, |y|) >= ceil(t * |x|).
    return math.ceil(threshold * size - 1e-9)


def _prefix(tokens: frozenset[str], frequency: Counter[str], threshold: float) -> list[str]:
    # Two sets with Jaccard >= t share a token among the first |x| - ceil(t|x|) + 1 of each, tokens ordered
    # rarest first (prefix filtering); ``frequency`` must be the same order for both sides.
    ordered = sorted(tokens, key=lambda token: (frequency[token], token))
    return ordered[: len(tokens) - _min_overlap(threshold, len(tokens)) + 1]


def _check_threshold(threshold: float) -> None:
    if not 0 < threshold <= 1:
        raise ValueError(f"threshold must be in (0, 1], got {threshold}")


def near_duplicates(texts: Sequence[str], threshold: float = 0.9) -> list[int]:
    """Indices of texts to drop as near-duplicates of an earlier kept text (B.5: Jaccard >= 0.9).

    Texts are visited in order; a text is dropped when its ``jaccard`` with any earlier *kept* text is
    at least ``threshold`` (exact duplicates included), so the kept texts have no near-duplicate pair.
    Candidates come from prefix filtering (tokens ordered rarest first; two sets with Jaccard >= t
    share a token among the first ``|x| - ceil(t|x|) + 1`` of each), then the exact Jaccard is checked.

    Example:
        >>> near_duplicates(["a b c d e f g h i j", "A b c d e f g h i?", "a b c d e f g h i k"])
        [1]
    """
    _check_threshold(threshold)
    token_sets = [_tokens(text) for text in texts]
    frequency = Counter(token for tokens in token_sets for token in tokens)
    index: dict[str, list[int]] = defaultdict(list)
    drop: list[int] = []
    empty_kept = False
    for i, tokens in enumerate(token_sets):
        if not tokens:  # no tokens: only an earlier token-less text is similar (Jaccard 1.0)
            if empty_kept:
                drop.append(i)
            empty_kept = True
            continue
        prefix = _prefix(tokens, frequency, threshold)
        candidates = {j for token in prefix for j in index[token]}
        if any(_similar(tokens, token_sets[j], threshold) for j in candidates):
            drop.append(i)
            continue
        for token in prefix:
            index[token].append(i)
    return drop


def near_duplicates_in(texts: Sequence[str], reference: Sequence[str], threshold: float = 0.9) -> list[int]:
    """Indices of ``texts`` with a near-duplicate (Jaccard >= ``threshold``, exact copies included) in ``reference``.

    Every text is compared with every reference text (prefix filtering over one token order for both sides,
    then the exact Jaccard), in one pass; used by the offline backbone's leakage guard.

    Example:
        >>> near_duplicates_in(["What is H2O?", "Who wrote Hamlet?"], ["what is h2o", "Name a noble gas."])
        [0]
    """
    _check_threshold(threshold)
    reference_sets = [_tokens(text) for text in reference]
    token_sets = [_tokens(text) for text in texts]
    frequency = Counter(token for tokens in (*reference_sets, *token_sets) for token in tokens)
    index: dict[str, list[int]] = defaultdict(list)
    for j, tokens in enumerate(reference_sets):
        for token in _prefix(tokens, frequency, threshold):
            index[token].append(j)
    empty_reference = any(not tokens for tokens in reference_sets)
    found = []
    for i, tokens in enumerate(token_sets):
        if not tokens:
            if empty_reference:
                found.append(i)
            continue
        candidates = {j for token in _prefix(tokens, frequency, threshold) for j in index[token]}
        if any(_similar(tokens, reference_sets[j], threshold) for j in candidates):
            found.append(i)
    return found


def _similar(x: frozenset[str], y: frozenset[str], threshold: float) -> bool:
    if min(len(x), len(y)) < threshold * max(len(x), len(y)) - 1e-9:  # size filter
        return False
    overlap = len(x & y)
    return overlap >= threshold * (len(x) + len(y) - overlap) - 1e-9


def content_id(question: str, answer: str, statement: str) -> str:
    """A stable id for a CAP-Statements row that has none (:func:`caplib.data.load_statements`): ``sha-`` and 12 hex digits of the SHA-256 of its question,
    answer and statement (so it does not depend on the row's position in the file).

    Example:
        >>> content_id("Capital of France?", "Paris", "The capital of France is Paris.")
        'sha-c243a16c03e4'
    """
    digest = hashlib.sha256("\x1f".join((question, answer, statement)).encode("utf-8")).hexdigest()
    return f"sha-{digest[:12]}"


def content_ids(questions: Iterable[str], answers: Iterable[str], statements: Iterable[str]) -> list[str]:
    """:func:`content_id` of each (question, answer, statement); a repeated triple gets ``-2``, ``-3``, ... in order.

    Example:
        >>> content_ids(["Q"] * 2, ["A"] * 2, ["S"] * 2)[1].endswith("-2")
        True
    """
    seen: dict[str, int] = {}
    ids = []
    for question, answer, statement in zip(questions, answers, statements):
        base = content_id(question, answer, statement)
        seen[base] = seen.get(base, 0) + 1
        ids.append(base if seen[base] == 1 else f"{base}-{seen[base]}")
    return ids
