"""caplib.evaluation.concordance: two scorings of the same rows side by side (issue 31, Chapter 11).

Every expected value is worked out by hand or with scipy directly, not with the module's own helpers.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from caplib.evaluation.concordance import by_label_source, concordance, row_agreement
from caplib.taxonomy import SEVERITY


def test_row_agreement_counts_rows_within_the_tolerance_and_ranks_the_two():
    ours = [0.10, 0.50, 0.90, 0.30, 0.70]
    theirs = [0.10, 0.5000004, 0.80, 0.35, 0.70]  # row 2 within 1e-6, rows 3 and 4 apart by 0.1 and 0.05
    agreement = row_agreement(ours, theirs)
    assert agreement["n"] == 5 and agreement["rows_differing"] == 2 and agreement["rows_equal"] == 0.6
    assert agreement["max_abs_difference"] == pytest.approx(0.1)
    assert agreement["mean_abs_difference"] == pytest.approx((0.0 + 4e-7 + 0.1 + 0.05 + 0.0) / 5)
    assert agreement["spearman"] == pytest.approx(stats.spearmanr(ours, theirs).statistic)
    assert row_agreement(ours, theirs, tolerance=0.1)["rows_differing"] == 0


@pytest.mark.parametrize("ours, theirs", [([0.1, 0.2], [0.1]), ([], []), ([0.1, np.nan], [0.1, 0.2])])
def test_row_agreement_refuses_vectors_that_are_not_two_scorings_of_the_same_rows(ours, theirs):
    with pytest.raises(ValueError, match="row_agreement"):
        row_agreement(ours, theirs)


def test_concordance_puts_each_sides_protocol_numbers_and_class_means_beside_the_others():
    rng = np.random.default_rng(3)
    labels = np.repeat(["exact", "partial", "invalid", "contradictory"], 25)
    severity = np.array([SEVERITY[label] for label in labels], dtype=float)
    theirs = severity / 6 + rng.normal(0, 0.2, labels.size)
    ours = theirs.copy()
    ours[:10] += 0.5  # ten rows differ (the first ten, all exact), the rest are equal
    tables = concordance({"m": ours}, {"m": theirs}, labels, n_resamples=200, seed=1)
    row = tables["metrics"].set_index("metric").loc["m"]
    assert (row["rows_differing"], row["rows_equal"]) == (10, 0.9)
    for side, values in (("ours", ours), ("theirs", theirs)):
        assert row[f"spearman_{side}"] == pytest.approx(stats.spearmanr(values, severity).statistic, abs=1e-12)
        assert row[f"spearman_{side}_ci_low"] <= row[f"spearman_{side}"] <= row[f"spearman_{side}_ci_high"]
        # pairwise accuracy by brute force over the 25 strict pairs' example pairs present here (Eq. 8, ties 0)
        wins = total = 0
        for a in range(labels.size):
            for b in range(labels.size):
                if severity[a] > severity[b]:
                    total += 1
                    wins += values[a] > values[b]
        assert row[f"pairwise_accuracy_{side}"] == pytest.approx(wins / total, abs=1e-12)
    means = tables["class_means"].set_index("label")
    assert list(means.index) == ["exact", "partial", "invalid", "contradictory"]  # the order of Eq. 1
    assert means.loc["exact", "ours"] == pytest.approx(ours[:25].mean())
    assert means.loc["exact", "difference"] == pytest.approx(0.5 * 10 / 25)
    assert means.loc["invalid", "difference"] == 0.0


def test_concordance_needs_the_same_metrics_on_both_sides():
    with pytest.raises(ValueError, match="same metrics"):
        concordance({"a": [0.1, 0.2]}, {"b": [0.1, 0.2]}, ["exact", "invalid"])


def test_by_label_source_uses_the_rows_every_source_labels():
    scores = [0.9, 0.8, 0.2, 0.1, 0.5]
    synthetic = ["exact", "partial", "invalid", "contradictory", "exact"]
    annotators = ["exact", "exact", "invalid", "invalid", None]  # the last row has no manual label
    table = by_label_source({"cap": scores}, {"synthetic": synthetic, "annotators": annotators})
    by_source = table.set_index("source")
    assert by_source["n"].tolist() == [4, 4]
    kept = scores[:4]
    for source, labels in (("synthetic", synthetic[:4]), ("annotators", annotators[:4])):
        severity = [SEVERITY[label] for label in labels]
        assert by_source.loc[source, "spearman"] == pytest.approx(stats.spearmanr(kept, severity).statistic)
        assert by_source.loc[source, "kendall"] == pytest.approx(stats.kendalltau(kept, severity).statistic)
    assert by_source.loc["annotators", "pairwise_accuracy"] == 1.0  # 0.9, 0.8 above 0.2, 0.1: all 4 pairs won
    assert by_source.loc["annotators", "mean exact"] == pytest.approx(0.85)
    assert pd.isna(by_source.loc["annotators", "mean partial"])  # no annotator said partial
    with pytest.raises(ValueError, match="two or more rows"):
        by_label_source({"cap": [0.1, 0.2]}, {"a": ["exact", None], "b": [None, "exact"]})
