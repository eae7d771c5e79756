"""The paper's reported tables checked against each other and against its text, under caplib's protocol.

Each test states the claim it checks (section of the paper). Where the paper is inconsistent, the test
asserts the discrepancy *as found* and explains it, so that it stays visible (see data/paper/README.md).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy.optimize import linprog

from caplib import paper
from caplib.evaluation import monotonicity_violations
from caplib.taxonomy import ABBREVIATIONS, HARD_PAIRS, LABELS, STRICT_PAIRS, normalize_label

BASELINES = ["BLEU", "ROUGE-L", "METEOR", "BERTScore", "COMET"]
METRICS = [*BASELINES, "CAP"]
MODELS = ["GPT-4o", "Gemini Flash", "Qwen 3"]


def by_metric(number: int) -> pd.DataFrame:
    return paper.load_table(number).set_index("metric")


# ------------------------------------------------------------------------------------------ the data files


def test_every_table_loads_with_caption_and_expected_shape():
    shapes = {1: (2, 4), 2: (6, 4), 3: (6, 4), 4: (6, 5), 5: (8, 5), 6: (8, 5), 8: (3, 3), 12: (5, 6),
              13: (6, 7), 14: (6, 4), 15: (4, 5), 16: (2, 5), 17: (8, 4)}
    assert paper.TABLES == tuple(shapes)
    for number, shape in shapes.items():
        table = paper.load_table(number)
        assert table.shape == shape, number
        assert paper.caption(number).strip(), number
        # the only empty cell of all tables is Tab. 1's CAP-Correctness train split (printed "-")
        expected_empty = 1 if number == 1 else 0
        assert int(table.isna().sum().sum()) == expected_empty, number
    assert np.isnan(paper.load_table(1).set_index("dataset").loc["CAP-Correctness", "train"])
    with pytest.raises(ValueError, match="no numeric table 7"):
        paper.load_table(7)


def test_class_rows_use_canonical_labels_that_match_the_printed_names():
    for number in (5, 6, 17):
        table = paper.load_table(number)
        assert sorted(table["label"]) == sorted(LABELS), number
        for label, printed in zip(table["label"], table["printed"]):
            assert normalize_label(printed) == label, (number, printed)
    tab3 = paper.load_table(3)
    for comparison, higher, lower in tab3[["comparison", "higher", "lower"]].itertuples(index=False):
        left, right = comparison.split(" > ")
        assert (normalize_label(left), normalize_label(right)) == (higher, lower)
    # Tab. 4 columns are the hard pairs of the taxonomy, in order, named like hard_pair_accuracy's keys
    expected = [f"{ABBREVIATIONS[h]}>{ABBREVIATIONS[l]}" for h, l in HARD_PAIRS]
    assert list(paper.load_table(4).columns[1:]) == expected


def test_reported_class_means_helper():
    means = paper.reported_class_means(5, "Qwen 3")
    assert means["contradictory"] == 4.53 and len(means) == 8
    with pytest.raises(ValueError, match="no column"):
        paper.reported_class_means(5, "GPT-5")
    with pytest.raises(ValueError, match="no per-class means"):
        paper.reported_class_means(6, "GPT-4o")


# ------------------------------------------------------------------------------ structure of the protocol


def test_the_taxonomy_induces_25_strict_pairs():
    # App. C.1: "The taxonomy induces 25 strictly ordered class pairs" (28 pairs minus the 3 tied top pairs)
    assert len(STRICT_PAIRS) == 25 == 8 * 7 // 2 - 3


# ------------------------------------------------------------------- Tab. 5 and Sec. 7.4: LLM-generated answers


def test_tab5_violation_counts_follow_from_the_class_means():
    # Sec. 7.4: "CAP incurs 4 violations for GPT-4o, 6 for Gemini Flash, and 2 for Qwen3-8B-Instruct."
    alt, ov, part, oi, inv, contra = (
        "alternative_correct", "overinclusive_valid", "partial", "overinclusive_invalid", "invalid", "contradictory"
    )
    expected = {
        # alt (31.59) < OV 40.32, partial 35.64, OI 36.58; partial 35.64 < OI 36.58
        "GPT-4o": [(alt, ov), (alt, part), (alt, oi), (part, oi)],
        # alt (26.77) below every lower class; OV 44.08 < partial 48.87
        "Gemini Flash": [(alt, ov), (alt, part), (alt, oi), (alt, inv), (alt, contra), (ov, part)],
        # alt (29.65) < OV 47.47, partial 46.87 (but > OI 28.38)
        "Qwen 3": [(alt, ov), (alt, part)],
    }
    stated = {"GPT-4o": 4, "Gemini Flash": 6, "Qwen 3": 2}
    for model in MODELS:
        violations = monotonicity_violations(paper.reported_class_means(5, model))
        assert violations == expected[model], model
        assert len(violations) == stated[model], model


def test_tab5_text_alternative_correct_low_and_ov_partial_inversion_only_for_gemini():
    # Sec. 7.4: alternative-correct "falls below its intended top-tier position for all three models";
    # "Gemini Flash additionally exhibits the previously observed overinclusive-valid/partial inversion".
    for model in MODELS:
        violations = monotonicity_violations(paper.reported_class_means(5, model))
        assert ("alternative_correct", "overinclusive_valid") in violations, model
        has_ov_partial = ("overinclusive_valid", "partial") in violations
        assert has_ov_partial == (model == "Gemini Flash"), model


def test_tab6_populates_every_class_but_each_model_sums_to_999_not_1000():
    # Sec. 7.4: responses "on a random sample of 1,000 CAP-Correctness questions", App. C.2 "a 1k sample",
    # and the poster: "3,000 responses from 3 LLM families". Every class is populated (as the text says),
    # but each model's column of Tab. 6 sums to 999, i.e. 2,997 labeled responses in all.
    # INCONSISTENCY (as found): one question per model is unaccounted for (dropped or unlabeled).
    counts = paper.load_table(6).set_index("label")[MODELS]
    assert (counts > 0).all().all()
    assert counts.sum().to_dict() == {"GPT-4o": 999, "Gemini Flash": 999, "Qwen 3": 999}
    assert int(counts.to_numpy().sum()) == 2997


# --------------------------------------------------------------------- Tab. 14, Sec. 7.2 and App. D.2


def test_tab14_rates_are_counts_over_25_and_match_the_text():
    tab14 = by_metric(14)
    assert (tab14["violations_total"] == len(STRICT_PAIRS)).all()
    assert np.allclose(tab14["violation_rate"], 100 * tab14["violations"] / tab14["violations_total"])
    # Sec. 7.2 / D.2: "COMET inverts 9/25, and CAP reduces this to 4/25"; poster: BERTScore 11/25
    assert tab14.loc["CAP", "violations"] == 4 and tab14.loc["COMET", "violations"] == 9
    assert tab14.loc["BERTScore", "violations"] == 11
    # D.2: "on 21 of the 25 ordered pairs, the mean CAP score for the more correct class is higher"
    assert 25 - tab14.loc["CAP", "violations"] == 21
    # "lexical metrics and BERTScore invert roughly half of the ordering": 11 to 14 of 25
    assert tab14.loc[["BLEU", "ROUGE-L", "METEOR", "BERTScore"], "violations"].between(11, 14).all()
    assert tab14["violations"].idxmin() == "CAP"


# ---------------------------------------------------------------------------------- Tab. 17 and App. E


def test_tab17_violations_are_4_for_both_label_sources():
    # App. E / Sec. 7.2: 4 inversions, concentrated on alternative-correct and the partial/OV pair.
    expected = [
        ("alternative_correct", "overinclusive_valid"),
        ("alternative_correct", "partial"),
        ("alternative_correct", "overinclusive_invalid"),
        ("overinclusive_valid", "partial"),
    ]
    for source in ("Synthetic", "Annotator"):
        assert monotonicity_violations(paper.reported_class_means(17, source)) == expected, source


def test_tab17_matches_the_text_of_app_e():
    synthetic = paper.reported_class_means(17, "Synthetic")
    annotator = paper.reported_class_means(17, "Annotator")
    # "The largest shifts occur for partial (83.61 vs. 77.98) and alternative-correct (36.74 vs. 31.74)"
    assert (synthetic["partial"], annotator["partial"]) == (83.61, 77.98)
    assert (synthetic["alternative_correct"], annotator["alternative_correct"]) == (36.74, 31.74)
    shifts = {label: abs(synthetic[label] - annotator[label]) for label in LABELS}
    assert sorted(shifts, key=shifts.get)[-2:] == ["alternative_correct", "partial"]
    # "Its mean (39.20 synthetic, 38.46 annotator) sits below overinclusive-valid ... and clearly above
    # invalid and contradictory"
    for means in (synthetic, annotator):
        assert means["invalid"] < means["overinclusive_invalid"] < means["overinclusive_valid"]
        assert means["contradictory"] < means["overinclusive_invalid"]
        # "exact and equivalent score highest, invalid and contradictory lowest"
        ranked = sorted(means, key=means.get)
        assert set(ranked[:2]) == {"invalid", "contradictory"} and set(ranked[-2:]) == {"exact", "equivalent"}
    assert (synthetic["overinclusive_invalid"], annotator["overinclusive_invalid"]) == (39.20, 38.46)


def test_tab16_matches_the_text_of_app_e():
    # "rho: 69.89 vs. 66.87; tau: 57.34 vs. 54.69; PairAcc: 87.16 vs. 84.87" (human vs synthetic)
    tab16 = paper.load_table(16).set_index("key")
    assert tab16.loc["human", ["spearman", "kendall", "pairwise_accuracy"]].tolist() == [69.89, 57.34, 87.16]
    assert tab16.loc["synthetic", ["spearman", "kendall", "pairwise_accuracy"]].tolist() == [66.87, 54.69, 84.87]
    assert (tab16.loc["human"].drop("label_source") > tab16.loc["synthetic"].drop("label_source")).all()


# ------------------------------------------------------------------------------- Tab. 2, 3, 4, 13 and Sec. 7


def test_tab13_point_estimates_lie_in_their_cis_and_equal_tab2():
    tab13, tab2 = by_metric(13), by_metric(2)
    assert list(tab13.index) == list(tab2.index) == METRICS
    for name in ("spearman", "kendall"):
        assert (tab13[f"{name}_low"] < tab13[name]).all() and (tab13[name] < tab13[f"{name}_high"]).all()
        assert tab13[name].equals(tab2[name])
    # D.1: CAP's intervals [58.56, 62.11] and [47.32, 50.35] "remain well separated from those of all baselines"
    assert tab13.loc["CAP", ["spearman_low", "spearman_high", "kendall_low", "kendall_high"]].tolist() == [
        58.56, 62.11, 47.32, 50.35
    ]
    for name in ("spearman", "kendall"):
        assert tab13.loc["CAP", f"{name}_low"] > tab13.loc[BASELINES, f"{name}_high"].max()
    # caption: "10,000 resamples from the 7,827 test examples" = Tab. 1's test split
    assert "7,827" in paper.caption(13)
    assert paper.load_table(1).set_index("dataset").loc["CAP-Correctness", "test"] == 7827


def test_tab2_matches_the_text_and_the_poster():
    tab2 = by_metric(2)
    # The poster's pairwise-accuracy table (an independent print of the same numbers)
    poster = {"CAP": 77.70, "COMET": 61.10, "BERTScore": 56.18, "ROUGE-L": 55.35, "METEOR": 53.71, "BLEU": 51.57}
    assert tab2["pairwise_accuracy"].to_dict() == poster
    # Sec. 7.1: lexical metrics and BERTScore "remain close to the 0.5 pairwise-accuracy baseline";
    # COMET better; CAP strongest on every measure
    assert tab2.loc[["BLEU", "ROUGE-L", "METEOR", "BERTScore"], "pairwise_accuracy"].between(50, 57).all()
    assert (tab2.idxmax() == "CAP").all()
    assert (tab2.loc[BASELINES].idxmax() == "COMET").all()
    # Sec. 9: CAP "roughly doubles the rank correlation of the strongest baseline": 60.37 / 26.88 = 2.25
    assert 2.0 < tab2.loc["CAP", "spearman"] / tab2.loc["COMET", "spearman"] < 2.5


def test_tab3_ov_oi_equals_tab4_cap_ov_oi():
    # The same quantity (CAP, OV > OI) printed twice: as an AUC (ties half) and as a pairwise accuracy
    # (ties zero); they agree when CAP scores have no OV/OI ties.
    tab3 = paper.load_table(3).set_index("comparison")
    assert tab3.loc["OV > OI", "cap_auc"] == by_metric(4).loc["CAP", "OV>OI"] == 69.48


def test_tab4_text_of_sec_7_3():
    tab4 = by_metric(4)
    ov_part = tab4["OV>Part"]
    # "with CAP showing the largest reversal" on OV > Part
    assert ov_part.idxmin() == "CAP"
    # "Most baselines collapse to or below chance here": 15 of the 20 baseline cells are <= 50
    assert int((tab4.loc[BASELINES] <= 50).to_numpy().sum()) == 15
    # "All metrics except METEOR fall below chance on this pair [OV > Part]".
    # INCONSISTENCY (as found): BLEU's printed OV > Part is 51.42, above chance (50); the metrics below
    # chance are ROUGE-L, BERTScore, COMET and CAP.
    assert sorted(ov_part[ov_part < 50].index) == ["BERTScore", "CAP", "COMET", "ROUGE-L"]
    assert ov_part["BLEU"] == 51.42


# --------------------------------------------------------------------------------------- Tab. 1, 8, 12, 15


def test_tab1_split_sizes_add_up():
    tab1 = paper.load_table(1).set_index("dataset")
    correctness, statements = tab1.loc["CAP-Correctness"], tab1.loc["CAP-Statements"]
    assert correctness["validation"] + correctness["test"] == 8827  # Sec. 5: 8,827 examples
    assert statements[["train", "validation", "test"]].sum() == 11000  # B.5: 8,800 / 1,100 / 1,100
    # Sec. 5: "a 1638-example subset (18.56%)"; B.5: "1,353 generated declarative statements (12.3%)"
    assert round(100 * 1638 / 8827, 2) == 18.56
    assert round(100 * 1353 / 11000, 1) == 12.3


def test_tab8_matches_the_text_of_sec_5_and_b3():
    # B.3: kappa = 0.779, linear 0.825, quadratic 0.879 (Sec. 5 repeats 0.779 and 0.879)
    tab8 = paper.load_table(8).set_index("key")["score"]
    assert (tab8 / 100).round(3).to_dict() == {"kappa": 0.779, "linear": 0.825, "quadratic": 0.879}
    assert tab8["kappa"] < tab8["linear"] < tab8["quadratic"]  # "increases under ... weighting"
    assert "1638" in paper.caption(8)


def test_tab12_chosen_setting_is_the_best_row():
    tab12 = paper.load_table(12)
    best = tab12.loc[tab12["spearman"].idxmax()]
    assert (best["alpha"], best["lam"]) == (0.85, 0.3)  # alpha = 0.85, lam = 0.30 of Sec. 4 / C.2
    assert tab12["pairwise_accuracy"].idxmax() == tab12["spearman"].idxmax()
    assert best["violations"] == tab12["violations"].min()  # "matching the lowest violation count"
    assert (tab12["violations_total"] == 25).all()
    # C.3: the chosen setting outperforms "purely entailment-based (lambda = 0)" rows: present, lower ...
    assert (tab12.loc[tab12["lam"] == 0.0, "spearman"] < best["spearman"]).all()
    # ... "and purely unidirectional (alpha = 1) variants".
    # INCONSISTENCY (as found): Tab. 12 has no alpha = 1 row, so that claim has no number behind it.
    assert not (tab12["alpha"] == 1.0).any()


def test_tab15_matches_the_text_but_not_the_aggregate_of_b5():
    tab15 = paper.load_table(15).set_index("label_question_type")
    # App. E / B.5: long-context items "at 32.9% wrong and 9.6% semantic errors"; "combined error rate
    # below 1% on sentence-to-complete and blank-spaces-task"
    assert tab15.loc["long-question", ["wrong", "semantic"]].tolist() == [32.9, 9.6]
    errors = tab15[["syntactic", "semantic", "wrong"]].sum(axis=1)
    assert (errors[["sentence-to-complete", "blank-spaces-task"]] < 1).all()
    # B.5 (Fig. 7) aggregate over the 1,353 statements: 90.0% correct, 1.3% semantic, 1.2% syntactic,
    # 7.5% wrong (summing to 100). Any aggregate is a mixture of the four rows of Tab. 15 with weights
    # w >= 0, sum 1 (the share of each question type in the sample). Allowing every printed number its
    # rounding (+-0.05 on both sides), no mixture reproduces 1.3 / 1.2 / 7.5: the semantic and wrong
    # rates force w(short) ~ 0.36 and w(long) ~ 0.11, and then syntactic is at least 1.49%.
    # INCONSISTENCY (as found): Tab. 15's per-type rates and B.5's aggregate rates cannot both hold.
    # (With balanced types, as B.5 says the corpus is, the aggregate would be ~1.8 / 2.55 / 10.85.)
    assert 90.0 + 1.3 + 1.2 + 7.5 == pytest.approx(100.0)
    rates = {name: tab15[name].to_numpy() for name in ("syntactic", "semantic", "wrong")}
    aggregate = {"syntactic": 1.2, "semantic": 1.3, "wrong": 7.5}
    tolerance = 0.1
    bounds_ub, rhs = [], []
    for name in ("semantic", "wrong"):
        bounds_ub += [rates[name], -rates[name]]
        rhs += [aggregate[name] + tolerance, -(aggregate[name] - tolerance)]
    lowest = linprog(rates["syntactic"], A_ub=bounds_ub, b_ub=rhs, A_eq=[np.ones(4)], b_eq=[1], bounds=(0, 1))
    assert lowest.status == 0  # semantic and wrong alone are reachable ...
    assert lowest.fun == pytest.approx(1.4932, abs=1e-3)  # ... but then syntactic >= 1.49%
    assert lowest.fun > aggregate["syntactic"] + tolerance


def test_consistency_checks_flag_exactly_the_known_inconsistencies():
    from caplib.paper import consistency_checks

    checks = consistency_checks()
    flagged = checks.loc[~checks["consistent"], "claim"].tolist()
    assert flagged == [
        "'All metrics except METEOR fall below chance' on OV>Part (Sec. 7.3)",
        "Tab. 6 GPT-4o: answers to the 1,000 sampled questions (Sec. 7.4)",
        "Tab. 6 Gemini Flash: answers to the 1,000 sampled questions (Sec. 7.4)",
        "Tab. 6 Qwen 3: answers to the 1,000 sampled questions (Sec. 7.4)",
        "the sweep includes a unidirectional alpha = 1 variant (App. C.3)",
    ]
    # every table with a cross-check appears, and each Tab. 13 CI check is a real containment test
    assert {"1", "2, 13", "13", "14", "3, 4", "4", "5", "6", "8", "12", "16", "17"} <= set(checks["tables"])
    assert checks.loc[checks["claim"].str.contains("inside its 95% CI"), "consistent"].all()
