"""The eight-class semantic-correctness taxonomy and its ordering (Sec. 3, Eq. 1; App. C.2).

    exact ~ equivalent ~ alternative_correct >= overinclusive_valid > partial
          > overinclusive_invalid > invalid >= contradictory

Example:
    >>> from caplib.taxonomy import normalize_label, SEVERITY
    >>> normalize_label("Alternative correct")
    'alternative_correct'
    >>> SEVERITY["partial"]
    4
"""

from __future__ import annotations

import re
from itertools import combinations
from types import MappingProxyType
from typing import Mapping

#: The eight labels in the order of Eq. 1 (most to least correct), spelled as in the released CSVs.
LABELS: tuple[str, ...] = (
    "exact",
    "equivalent",
    "alternative_correct",
    "overinclusive_valid",
    "partial",
    "overinclusive_invalid",
    "invalid",
    "contradictory",
)

#: Integer severity map of App. C.2 ("Ordinal rank"); higher is more correct.
SEVERITY: Mapping[str, int] = MappingProxyType(
    {
        "exact": 6,
        "equivalent": 6,
        "alternative_correct": 6,
        "overinclusive_valid": 5,
        "partial": 4,
        "overinclusive_invalid": 2,
        "invalid": 1,
        "contradictory": 0,
    }
)

#: The abbreviations used in the paper's tables (Tab. 3, 4, 17).
ABBREVIATIONS: Mapping[str, str] = MappingProxyType(
    {
        "exact": "Exact",
        "equivalent": "Eq",
        "alternative_correct": "Alt",
        "overinclusive_valid": "OV",
        "partial": "Part",
        "overinclusive_invalid": "OI",
        "invalid": "Inv",
        "contradictory": "Contra",
    }
)



def strict_pairs(severity: Mapping[str, int] = SEVERITY) -> tuple[tuple[str, str], ...]:
    """Every (higher, lower) pair of classes with strictly different ``severity``, in Eq. 1's class order; with the
    paper's severities these are the 25 pairs of App. C.1 (:data:`STRICT_PAIRS`). Another map asks what the
    protocol would say under a modified taxonomy (e.g. alternative-correct one tier down).

    Example:
        >>> len(strict_pairs()), len(strict_pairs({**SEVERITY, "alternative_correct": 5}))
        (25, 26)
    """
    return tuple((a, b) if severity[a] > severity[b] else (b, a)
                 for a, b in combinations(LABELS, 2) if severity[a] != severity[b])


#: Every (higher, lower) pair with a strictly higher severity: the 25 pairs of App. C.1.
STRICT_PAIRS: tuple[tuple[str, str], ...] = strict_pairs()

#: The four hard neighbouring pairs of Tab. 4 (Eq>Part, OV>Part, OV>OI, Alt>Inv).
HARD_PAIRS: tuple[tuple[str, str], ...] = (
    ("equivalent", "partial"),
    ("overinclusive_valid", "partial"),
    ("overinclusive_valid", "overinclusive_invalid"),
    ("alternative_correct", "invalid"),
)

#: The six separability pairs of Tab. 3, in the table's order.
SEPARABILITY_PAIRS: tuple[tuple[str, str], ...] = (
    ("exact", "invalid"),
    ("partial", "invalid"),
    ("equivalent", "invalid"),
    ("equivalent", "overinclusive_valid"),
    ("partial", "overinclusive_invalid"),
    ("overinclusive_valid", "overinclusive_invalid"),
)

#: Definitions of Tab. 7.
DEFINITIONS: Mapping[str, str] = MappingProxyType(
    {
        "exact": "Semantically identical to the gold answer.",
        "equivalent": "Same meaning expressed through linguistic variation or paraphrasing.",
        "alternative_correct": "Different but still semantically correct answer.",
        "partial": "Contains only part of the required information.",
        "overinclusive_valid": "Correct answer with additional valid information.",
        "overinclusive_invalid": "Correct answer with additional incorrect information.",
        "invalid": "Semantically incorrect answer.",
        "contradictory": "Explicitly contradicts the gold answer or question premise.",
    }
)

#: Class-specific generation instructions of Tab. 18.
INSTRUCTIONS: Mapping[str, str] = MappingProxyType(
    {
        "exact": "Reproduce the gold answer verbatim.",
        "equivalent": "Express the same meaning as the gold answer using different wording. "
        "Do not omit or add information.",
        "alternative_correct": "Produce a different but equally valid answer to the question. "
        "The answer must be factually correct and must not be entailed by the gold answer in either direction.",
        "partial": "Reproduce a strict subset of the information in the gold answer. "
        "Do not add information beyond what the gold states.",
        "overinclusive_valid": "Include the full content of the gold answer and add one short piece of "
        "additional information that is factually correct and relevant to the question.",
        "overinclusive_invalid": "Include the full content of the gold answer and add one short piece of "
        "additional information that is factually incorrect or unsupported.",
        "invalid": "Produce a plausible-sounding answer to the question that is factually wrong. "
        "Do not directly contradict the gold answer.",
        "contradictory": "Produce an answer that directly contradicts the gold answer or rejects the premise "
        "of the question.",
    }
)

_ALIASES: dict[str, str] = {
    **{label.replace("_", ""): label for label in LABELS},
    **{abbr.lower(): label for label, abbr in ABBREVIATIONS.items()},
    "alt": "alternative_correct",
    "alternative": "alternative_correct",
    "eq": "equivalent",
    "equiv": "equivalent",
    "contradiction": "contradictory",
    "contra": "contradictory",
    "inv": "invalid",
}


def normalize_label(label: str) -> str:
    """Map any common spelling of a taxonomy label to its canonical form.

    Accepts case and whitespace variants, hyphens or spaces for underscores
    (``alternative-correct``, ``Overinclusive valid``) and the abbreviations of the
    paper's tables (``OV``, ``OI``, ``Alt``, ``Inv``, ``Part``, ``Eq``).

    Example:
        >>> normalize_label(" OV ")
        'overinclusive_valid'

    Raises:
        ValueError: for anything else, listing the valid labels.
    """
    if not isinstance(label, str):
        raise ValueError(f"label must be a string, got {label!r}; valid labels: {', '.join(LABELS)}")
    key = re.sub(r"[\s\-_.]+", "", label.strip().lower())
    if key in _ALIASES:
        return _ALIASES[key]
    raise ValueError(
        f"unknown taxonomy label {label!r}; valid labels: {', '.join(LABELS)} "
        f"(abbreviations {', '.join(ABBREVIATIONS.values())} are accepted too)"
    )


def ordinal_ranks(labels: list[str] | tuple[str, ...]) -> list[int]:
    """Severity rank of each label (normalized first).

    Example:
        >>> ordinal_ranks(["exact", "OI"])
        [6, 2]
    """
    return [SEVERITY[normalize_label(label)] for label in labels]
