"""The taxonomy must be exactly the paper's: Eq. 1 order, App. C.2 severities, 25 strict pairs, Tab. 3/4 pairs."""

from itertools import product

import pytest

from caplib.taxonomy import (
    HARD_PAIRS,
    LABELS,
    SEPARABILITY_PAIRS,
    SEVERITY,
    STRICT_PAIRS,
    normalize_label,
    ordinal_ranks,
)


def test_labels_in_eq1_order_with_app_c2_severities():
    assert LABELS == (
        "exact", "equivalent", "alternative_correct", "overinclusive_valid",
        "partial", "overinclusive_invalid", "invalid", "contradictory",
    )
    assert [SEVERITY[label] for label in LABELS] == [6, 6, 6, 5, 4, 2, 1, 0]


def test_strict_pairs_are_all_pairs_with_different_severity():
    # Brute force over the 8 x 8 grid: 28 unordered pairs minus the 3 ties among the top-tier classes.
    expected = {(a, b) for a, b in product(LABELS, LABELS) if SEVERITY[a] > SEVERITY[b]}
    assert len(STRICT_PAIRS) == 25
    assert set(STRICT_PAIRS) == expected
    assert len(set(STRICT_PAIRS)) == 25


def test_hard_and_separability_pairs_are_strict_pairs():
    assert HARD_PAIRS == (
        ("equivalent", "partial"), ("overinclusive_valid", "partial"),
        ("overinclusive_valid", "overinclusive_invalid"), ("alternative_correct", "invalid"),
    )
    assert len(SEPARABILITY_PAIRS) == 6
    assert set(HARD_PAIRS) <= set(STRICT_PAIRS)
    assert set(SEPARABILITY_PAIRS) <= set(STRICT_PAIRS)


@pytest.mark.parametrize(
    "spelling, label",
    [
        ("alternative-correct", "alternative_correct"),
        ("Alternative correct", "alternative_correct"),
        ("overinclusive valid", "overinclusive_valid"),
        ("  Overinclusive_Invalid ", "overinclusive_invalid"),
        ("OV", "overinclusive_valid"),
        ("oi", "overinclusive_invalid"),
        ("Alt", "alternative_correct"),
        ("Inv", "invalid"),
        ("Part", "partial"),
        ("Eq", "equivalent"),
        ("EXACT", "exact"),
        ("contradictory", "contradictory"),
    ],
)
def test_normalize_label_accepts_common_spellings(spelling, label):
    assert normalize_label(spelling) == label


@pytest.mark.parametrize("bad", ["correct", "", "partially", "ov-i", None])
def test_normalize_label_rejects_unknown_with_the_valid_list(bad):
    with pytest.raises(ValueError) as err:
        normalize_label(bad)
    assert "alternative_correct" in str(err.value) and "contradictory" in str(err.value)


def test_ordinal_ranks():
    assert ordinal_ranks(["Exact", "partial", "OI", "contradictory"]) == [6, 4, 2, 0]
