"""Tests of caplib.evaluation against hand-worked cases and brute-force pair enumeration."""

from __future__ import annotations

import itertools
import math
import time

import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import roc_auc_score

from caplib import evaluation as ev
from caplib.taxonomy import HARD_PAIRS, LABELS, SEPARABILITY_PAIRS, SEVERITY, STRICT_PAIRS


def random_data(n: int, seed: int, *, decimals: int = 1, classes=LABELS) -> tuple[np.ndarray, np.ndarray]:
    """Scores rounded to ``decimals`` (so ties are frequent) and random labels."""
    rng = np.random.default_rng(seed)
    return np.round(rng.random(n), decimals), rng.choice(np.array(classes, dtype=object), n)


def brute_pairs(scores, labels, pairs=STRICT_PAIRS) -> tuple[int, int, int]:
    """(wins, ties, total) by enumerating every example pair of the given class pairs."""
    wins = ties = total = 0
    wanted = set(pairs)
    for i, j in itertools.permutations(range(len(scores)), 2):
        if (labels[i], labels[j]) in wanted:
            total += 1
            wins += scores[i] > scores[j]
            ties += scores[i] == scores[j]
    return wins, ties, total


def brute_kendall_b(x, y) -> float:
    """Kendall tau-b by enumerating all pairs: (C - D) / sqrt((n0 - ties_x) (n0 - ties_y))."""
    concordant = discordant = ties_x = ties_y = 0
    for i, j in itertools.combinations(range(len(x)), 2):
        dx, dy = np.sign(x[i] - x[j]), np.sign(y[i] - y[j])
        ties_x += dx == 0
        ties_y += dy == 0
        concordant += dx * dy > 0
        discordant += dx * dy < 0
    n0 = len(x) * (len(x) - 1) / 2
    return (concordant - discordant) / math.sqrt((n0 - ties_x) * (n0 - ties_y))


def midranks(values) -> np.ndarray:
    """Mid-ranks (1-based) by counting: rank = #smaller + (#equal + 1) / 2."""
    values = np.asarray(values)
    return np.array([(values < v).sum() + ((values == v).sum() + 1) / 2 for v in values])


# --------------------------------------------------------------------------------------------- class_means


def test_class_means_by_hand_with_spellings():
    means = ev.class_means([1.0, 0.5, 0.0, 0.25], ["exact", "Exact", "invalid", "OV"])
    # exact: (1.0 + 0.5) / 2; taxonomy order of keys; only present classes
    assert means == {"exact": 0.75, "overinclusive_valid": 0.25, "invalid": 0.0}
    assert list(means) == ["exact", "overinclusive_valid", "invalid"]


@pytest.mark.parametrize(
    "scores, labels, message",
    [
        ([], [], "empty"),
        ([0.1, 0.2], ["exact"], "differ in length"),
        ([0.1, float("nan")], ["exact", "invalid"], "non-finite"),
        ([0.1, 0.2], ["exact", None], "missing"),
        ([0.1, 0.2], ["exact", "nonsense"], r"labels\[1\].*unknown taxonomy label"),
    ],
)
def test_bad_input_is_a_clear_error(scores, labels, message):
    for function in (ev.class_means, ev.rank_correlation, ev.pairwise_accuracy, ev.hard_pair_accuracy):
        with pytest.raises(ValueError, match=message):
            function(scores, labels)


# ---------------------------------------------------------------------------------------- rank_correlation


def test_rank_correlation_by_hand():
    # severities 6, 6, 4, 1; score ranks x = [2, 4, 3, 1], severity mid-ranks y = [3.5, 3.5, 2, 1].
    # Spearman: dx = [-.5, 1.5, .5, -1.5], dy = [1, 1, -.5, -1.5]; cov 3, sum dx^2 5, sum dy^2 4.5
    #   -> 3 / sqrt(22.5) = sqrt(0.4).
    # Kendall: (exact, equivalent) tied in y; (exact, partial) discordant; the other 4 concordant
    #   -> (4 - 1) / sqrt(6 * (6 - 1)) = 3 / sqrt(30).
    spearman, kendall = ev.rank_correlation([0.2, 0.9, 0.5, 0.1], ["exact", "equivalent", "partial", "invalid"])
    assert spearman == pytest.approx(math.sqrt(0.4))
    assert kendall == pytest.approx(3 / math.sqrt(30))


def test_rank_correlation_brute_force_with_ties():
    scores, labels = random_data(60, seed=3)
    severity = np.array([SEVERITY[label] for label in labels])
    spearman, kendall = ev.rank_correlation(scores, labels)
    assert spearman == pytest.approx(np.corrcoef(midranks(scores), midranks(severity))[0, 1])
    assert kendall == pytest.approx(brute_kendall_b(scores, severity))


def test_rank_correlation_undefined_cases():
    with pytest.raises(ValueError, match="two severity levels"):
        ev.rank_correlation([0.1, 0.9, 0.5], ["exact", "exact", "exact"])
    with pytest.raises(ValueError, match="two severity levels"):  # three classes, one severity (App. C.2)
        ev.rank_correlation([0.1, 0.9, 0.5], ["exact", "equivalent", "alternative_correct"])
    with pytest.raises(ValueError, match="constant scores"):
        ev.rank_correlation([0.5, 0.5], ["exact", "invalid"])


# --------------------------------------------------------------------------------------- pairwise_accuracy


def test_pairwise_accuracy_by_hand():
    scores, labels = [0.9, 0.5, 0.2, 0.9], ["exact", "partial", "invalid", "invalid"]
    # exact>partial: 0.9>0.5 win; exact>invalid: 0.9>0.2 win, 0.9=0.9 tie; partial>invalid: win, loss
    assert ev.pairwise_accuracy(scores, labels) == pytest.approx(3 / 5)
    assert ev.pairwise_accuracy(scores, labels, ties="half") == pytest.approx(3.5 / 5)
    # restricted to partial > invalid: 1 of 2
    assert ev.pairwise_accuracy(scores, labels, pairs=[("Part", "Inv")]) == pytest.approx(0.5)


def test_pairwise_accuracy_weights_by_example_pairs_not_by_class_pair():
    # exact>invalid: 3 x 1 = 3 pairs, all wins; partial>invalid: 1 pair, a loss -> 3/4 (not the
    # class-pair average (1 + 0) / 2); exact>partial: 3 pairs, all wins -> (3 + 3 + 0) / 7
    scores = [0.9, 0.9, 0.9, 0.1, 0.5]
    labels = ["exact", "exact", "exact", "partial", "invalid"]
    assert ev.pairwise_accuracy(scores, labels, pairs=[("exact", "invalid"), ("partial", "invalid")]) == 0.75
    assert ev.pairwise_accuracy(scores, labels) == pytest.approx(6 / 7)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_pairwise_accuracy_brute_force_with_ties(seed):
    scores, labels = random_data(70, seed=seed)
    wins, ties, total = brute_pairs(scores, labels)
    assert ties > 0  # the data do exercise ties
    assert ev.pairwise_accuracy(scores, labels) == pytest.approx(wins / total)
    assert ev.pairwise_accuracy(scores, labels, ties="half") == pytest.approx((wins + ties / 2) / total)
    wins, _, total = brute_pairs(scores, labels, HARD_PAIRS)
    assert ev.pairwise_accuracy(scores, labels, pairs=HARD_PAIRS) == pytest.approx(wins / total)


def test_pairwise_accuracy_with_a_class_absent():
    present = [label for label in LABELS if label != "contradictory"]
    scores, labels = random_data(50, seed=5, classes=present)
    wins, _, total = brute_pairs(scores, labels)  # no pair involves contradictory: it drops out
    assert ev.pairwise_accuracy(scores, labels) == pytest.approx(wins / total)


def test_pairwise_accuracy_errors():
    with pytest.raises(ValueError, match="no example pair"):
        ev.pairwise_accuracy([0.1, 0.2], ["exact", "exact"])  # single class
    with pytest.raises(ValueError, match="no example pair"):
        ev.pairwise_accuracy([0.1, 0.2], ["exact", "equivalent"])  # tied severities only
    with pytest.raises(ValueError, match="not a strictly ordered pair"):
        ev.pairwise_accuracy([0.1, 0.2], ["exact", "equivalent"], pairs=[("exact", "equivalent")])
    with pytest.raises(ValueError, match="not a strictly ordered pair"):
        ev.pairwise_accuracy([0.1, 0.2], ["exact", "invalid"], pairs=[("invalid", "exact")])
    with pytest.raises(ValueError, match="ties"):
        ev.pairwise_accuracy([0.1, 0.2], ["exact", "invalid"], ties="one")


def test_pairwise_accuracy_100k_is_fast():
    scores, labels = random_data(100_000, seed=7, decimals=4)
    start = time.perf_counter()
    value = ev.pairwise_accuracy(scores, labels)
    elapsed = time.perf_counter() - start
    assert 0.45 < value < 0.55  # random scores
    assert elapsed < 2.0, f"pairwise_accuracy on 100,000 scores took {elapsed:.2f} s"


# ---------------------------------------------------------------------------------- monotonicity_violations


def ordered_means() -> dict[str, float]:
    return {label: 10.0 - i for i, label in enumerate(LABELS)}


def test_monotonicity_violations_by_hand():
    assert ev.monotonicity_violations(ordered_means()) == []
    means = ordered_means()
    means["partial"], means["overinclusive_valid"] = 7.0, 6.0  # swap OV and partial
    assert ev.monotonicity_violations(means) == [("overinclusive_valid", "partial")]
    means = ordered_means()
    means["invalid"] = means["overinclusive_invalid"]  # equal means violate (<=, App. C.1)
    assert ev.monotonicity_violations(means) == [("overinclusive_invalid", "invalid")]
    # alternative_correct at the bottom: above it sit OV, partial, OI, invalid, contradictory -> 5
    means = ordered_means()
    means["alternative_correct"] = -1.0
    assert len(ev.monotonicity_violations(means)) == 5
    # exact = equivalent = alternative_correct (App. C.2): their order never counts
    means = ordered_means()
    means["exact"], means["alternative_correct"] = means["alternative_correct"], means["exact"]
    assert ev.monotonicity_violations(means) == []


def test_monotonicity_violations_spellings_and_missing():
    spelled = {"Exact": 8, "Eq": 7, "alternative-correct": 6, "OV": 5, "Part": 4, "OI": 3, "Inv": 5, "Contra": 0}
    # invalid (5) >= OI (3), partial (4), and OV (5, equal): three violations
    assert ev.monotonicity_violations(spelled) == [
        ("overinclusive_valid", "invalid"),
        ("partial", "invalid"),
        ("overinclusive_invalid", "invalid"),
    ]
    partial_means = {"exact": 1.0, "partial": 2.0, "invalid": 0.0}
    with pytest.raises(ValueError, match="lacks equivalent"):
        ev.monotonicity_violations(partial_means)
    assert ev.monotonicity_violations(partial_means, missing="skip") == [("exact", "partial")]
    with pytest.raises(ValueError, match="appears twice"):
        ev.monotonicity_violations({**ordered_means(), "Exact": 3.0})
    with pytest.raises(ValueError, match="NaN"):
        ev.monotonicity_violations({**ordered_means(), "invalid": float("nan")})


def test_monotonicity_violations_from_class_means_agree_with_brute_force():
    scores, labels = random_data(200, seed=11)
    means = ev.class_means(scores, labels)
    expected = [(h, l) for h in LABELS for l in LABELS if SEVERITY[h] > SEVERITY[l] and means[h] <= means[l]]
    assert sorted(ev.monotonicity_violations(means)) == sorted(expected)


# -------------------------------------------------------------------------------------- pair_auc, hard pairs


def test_pair_auc_by_hand():
    # (0.9, 0.1) win, (0.9, 0.9) tie, (0.4, 0.1) win, (0.4, 0.9) loss -> 2.5 / 4
    scores, labels = [0.9, 0.4, 0.1, 0.9], ["exact", "exact", "invalid", "invalid"]
    assert ev.pair_auc(scores, labels, "exact", "invalid") == 0.625
    assert ev.pair_auc(scores, labels, "invalid", "exact") == 0.375


@pytest.mark.parametrize("seed", [0, 1])
def test_pair_auc_brute_force_and_sklearn(seed):
    scores, labels = random_data(80, seed=seed)
    for higher, lower in SEPARABILITY_PAIRS:
        wins, ties, total = brute_pairs(scores, labels, [(higher, lower)])
        auc = ev.pair_auc(scores, labels, higher, lower)
        assert auc == pytest.approx((wins + ties / 2) / total)
        keep = np.isin(labels, [higher, lower])
        assert auc == pytest.approx(roc_auc_score(labels[keep] == higher, scores[keep]))


def test_pair_auc_absent_class_is_an_error():
    with pytest.raises(ValueError, match="class partial has no example"):
        ev.pair_auc([0.1, 0.2], ["exact", "invalid"], "partial", "invalid")
    with pytest.raises(ValueError, match="two different classes"):
        ev.pair_auc([0.1, 0.2], ["exact", "invalid"], "exact", "Exact")


def test_hard_pair_accuracy_by_hand_and_absent_class():
    scores = [0.9, 0.3, 0.6, 0.5, 0.5, 0.2]
    labels = ["equivalent", "equivalent", "OV", "partial", "OI", "OI"]
    result = ev.hard_pair_accuracy(scores, labels)
    assert list(result) == ["Eq>Part", "OV>Part", "OV>OI", "Alt>Inv"]
    assert result["Eq>Part"] == 0.5  # 0.9 > 0.5 win, 0.3 < 0.5 loss
    assert result["OV>Part"] == 1.0  # 0.6 > 0.5
    assert result["OV>OI"] == 1.0  # 0.6 > 0.5, 0.6 > 0.2
    assert math.isnan(result["Alt>Inv"])  # neither class present: an empty cell
    with pytest.raises(ValueError, match="Alt>Inv.*alternative_correct, invalid"):
        ev.hard_pair_accuracy(scores, labels, missing="raise")


def test_hard_pair_accuracy_counts_ties_as_zero():
    # OV>OI: 0.5 = 0.5 tie -> 0, 0.5 > 0.2 -> 1: 1/2 (ties count 0 as in Eq. 8)
    result = ev.hard_pair_accuracy([0.5, 0.5, 0.2], ["OV", "OI", "OI"])
    assert result["OV>OI"] == 0.5


# ---------------------------------------------------------------------------------------------- bootstrap


def test_bootstrap_reproducible_and_contains_point():
    scores, labels = random_data(300, seed=2, decimals=2)
    first = ev.bootstrap_ci("spearman", scores, labels, n_resamples=500, seed=4)
    again = ev.bootstrap_ci("spearman", scores, labels, n_resamples=500, seed=4)
    other = ev.bootstrap_ci("spearman", scores, labels, n_resamples=500, seed=5)
    assert first == again
    assert first[1:] != other[1:]
    assert first[0] == other[0] == pytest.approx(ev.rank_correlation(scores, labels)[0])
    for point, low, high in (first, other):
        assert low < point < high


@pytest.mark.parametrize(
    "name, statistic",
    [
        ("spearman", lambda s, l: ev.rank_correlation(s, l)[0]),
        ("kendall", lambda s, l: ev.rank_correlation(s, l)[1]),
        ("pairwise_accuracy", ev.pairwise_accuracy),
    ],
)
def test_batched_bootstrap_equals_callable_bootstrap(name, statistic):
    # Heavy ties (one decimal, many zeros like BLEU) so mid-ranks and tau-b tie terms matter.
    scores, labels = random_data(150, seed=8)
    scores[::3] = 0.0
    batched = ev.bootstrap_ci(name, scores, labels, n_resamples=300, seed=1)
    generic = ev.bootstrap_ci(statistic, scores, labels, n_resamples=300, seed=1)
    assert batched == pytest.approx(generic, abs=1e-12)


def test_bootstrap_percentiles_by_hand():
    # With a callable the resamples are rows of rng.integers(0, n, (B, n)) (one block when B * n is small).
    scores, labels = random_data(40, seed=9)
    statistic = lambda s, l: float(np.mean(s))  # noqa: E731
    point, low, high = ev.bootstrap_ci(statistic, scores, labels, n_resamples=100, confidence=0.9, seed=3)
    indices = np.random.default_rng(3).integers(0, 40, size=(100, 40))
    expected = np.percentile(scores[indices].mean(axis=1), [5, 95])
    assert point == pytest.approx(scores.mean())
    assert (low, high) == pytest.approx(tuple(expected))


def test_bootstrap_10k_spearman_on_1000_rows_is_fast():
    scores, labels = random_data(1000, seed=10, decimals=3)
    start = time.perf_counter()
    point, low, high = ev.bootstrap_ci("spearman", scores, labels)
    elapsed = time.perf_counter() - start
    assert low < point < high
    assert elapsed < 15.0, f"10,000 Spearman resamples of 1,000 rows took {elapsed:.1f} s"


def test_bootstrap_errors():
    with pytest.raises(ValueError, match="unknown statistic"):
        ev.bootstrap_ci("pearson", [0.1, 0.2], ["exact", "invalid"])
    with pytest.raises(ValueError, match="confidence"):
        ev.bootstrap_ci("spearman", [0.1, 0.2], ["exact", "invalid"], confidence=95)
    with pytest.raises(ValueError, match="two severity levels"):
        ev.bootstrap_ci("kendall", [0.1, 0.2], ["exact", "exact"])
    # Two examples: many resamples hold one example twice -> undefined correlation, said so.
    with pytest.raises(ValueError, match="undefined on"):
        ev.bootstrap_ci("spearman", [0.1, 0.2], ["exact", "invalid"], n_resamples=50)


# ---------------------------------------------------------------------------------------------- agreement


def test_agreement_by_hand():
    # Rows 4 and 5 are dropped (blank / NaN). Positions in LABELS: exact 0, partial 4, invalid 6.
    # Unweighted: p_o = 2/3, p_e = (1*1 + 1*2) / 9 = 1/3 -> kappa = (2/3 - 1/3) / (2/3) = 0.5.
    # Linear: observed sum |i-j| = 2; expected sum r_i c_j |i-j| / 3 = (12 + 8 + 6) / 3 -> 1 - 6/26.
    # Quadratic: observed 4; expected (72 + 24 + 36) / 3 = 44 -> 1 - 4/44.
    result = ev.agreement(
        ["exact", "partial", "invalid", "", "exact"],
        ["Exact", "Inv", "invalid", "exact", float("nan")],
    )
    assert result["n"] == 3
    assert result["kappa"] == pytest.approx(0.5)
    assert result["linear"] == pytest.approx(20 / 26)
    assert result["quadratic"] == pytest.approx(40 / 44)


def test_agreement_errors():
    with pytest.raises(ValueError, match="differ in length"):
        ev.agreement(["exact"], ["exact", "invalid"])
    with pytest.raises(ValueError, match="undefined"):
        ev.agreement(["exact", "exact"], ["exact", "exact"])
    with pytest.raises(ValueError, match=r"labels_b\[1\]"):
        ev.agreement(["exact", "exact"], ["exact", "wrong"])


# ------------------------------------------------------------------------------------------------- report


def test_report_matches_the_functions_and_hand_values():
    frame = pd.DataFrame(
        {
            "label": ["exact", "equivalent", "OV", "partial", "OI", "invalid", "contradictory", "partial"],
            "good": [0.9, 0.85, 0.8, 0.7, 0.4, 0.2, 0.1, 0.6],
            "bad": [0.125, 0.25, 0.375, 0.5, 0.625, 0.75, 0.875, 0.75],  # exact in binary floating point
        }
    )
    table = ev.report(frame, ["good", "bad"], "label")
    assert list(table.index) == ["good", "bad"]
    good = table.loc["good"]
    assert good["n"] == 8
    assert good["pairwise_accuracy"] == 1.0 and good["violations"] == 0
    # 7 classes present (no alternative_correct): all their pairs are strict except exact/equivalent -> 20
    assert good["ordered_pairs"] == 20
    bad = table.loc["bad"]
    # "bad" rises down the taxonomy: all 20 strict pairs of present classes are inverted; partial's
    # mean (0.5 + 0.75) / 2 = 0.625 equals OI's, which counts as a violation too (<=)
    assert bad["violations"] == 20 and bad["violation_rate"] == 1.0
    assert bad["pairwise_accuracy"] < 0.5
    for column in ("good", "bad"):
        row = table.loc[column]
        spearman, kendall = ev.rank_correlation(frame[column], frame["label"])
        assert (row["spearman"], row["kendall"]) == (spearman, kendall)
        for key, value in ev.hard_pair_accuracy(frame[column], frame["label"]).items():
            assert row[f"Acc {key}"] == value or (math.isnan(value) and math.isnan(row[f"Acc {key}"]))
    assert table.loc["good", "AUC Exact>Inv"] == 1.0
    assert table.loc["good", "AUC Part>OI"] == 1.0
    assert math.isnan(table.loc["good", "Acc Alt>Inv"])  # alternative_correct absent
    assert "spearman_low" not in table.columns
    assert "seed:0" in table.attrs["signature"]


def test_report_with_bootstrap_and_errors():
    scores, labels = random_data(200, seed=12, decimals=2)
    frame = pd.DataFrame({"m": scores + (np.array([SEVERITY[l] for l in labels]) / 10), "label": labels})
    table = ev.report(frame, ["m"], "label", n_resamples=200, seed=1)
    row = table.loc["m"]
    assert row["ordered_pairs"] == 25
    assert row["spearman_low"] < row["spearman"] < row["spearman_high"]
    assert row["kendall_low"] < row["kendall"] < row["kendall_high"]
    assert [c for c in table.columns if c.startswith("AUC")] == [
        "AUC Exact>Inv", "AUC Part>Inv", "AUC Eq>Inv", "AUC Eq>OV", "AUC Part>OI", "AUC OV>OI"
    ]
    with pytest.raises(ValueError, match="'missing'"):
        ev.report(frame, ["missing"], "label")
    frame.loc[3, "m"] = np.nan
    with pytest.raises(ValueError, match="metric column 'm'.*position 3"):
        ev.report(frame, ["m"], "label")
