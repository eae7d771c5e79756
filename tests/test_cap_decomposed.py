"""caplib.cap_decomposed: the formula, its fallback to CAP, one NLI call for all units, the signature and the
registration in caplib.scoring; with a tiny locally built NLI checkpoint and with a scripted NLI."""

from __future__ import annotations

import os

import numpy as np
import pandas as pd
import pytest

os.environ["HF_HUB_OFFLINE"] = "1"
os.environ["TRANSFORMERS_OFFLINE"] = "1"

from caplib.cap import CAPScorer, cap, directional_score  # noqa: E402
from caplib.cap_decomposed import (COLUMNS, DEFAULT_BETA, DecomposedCAPScorer, compare, f_beta,  # noqa: E402
                                   order_changes)
from caplib.decompose import RuleDecomposer  # noqa: E402
from caplib.runtime import Runtime  # noqa: E402
from caplib.scoring import EXTENSION_METRICS, METRIC_NAMES, SCORERS, score_frame  # noqa: E402
from tests.tiny_models import build_nli_checkpoint  # noqa: E402

torch = pytest.importorskip("torch")

pytestmark = pytest.mark.usefixtures("one_torch_thread")

GOLD = "Shifting cultivation is practiced in tropical forests."
OV = "Shifting cultivation is practiced in tropical forests with thin soils."
OI = "Shifting cultivation is practiced in tropical forests with deep, rich soils."
PARTIAL = "Shifting cultivation is practiced in forests."
EXACT = GOLD
CONTRA = "Shifting cultivation is never practiced in tropical forests."


@pytest.fixture(scope="module")
def checkpoint(tmp_path_factory):
    return build_nli_checkpoint(tmp_path_factory.mktemp("capd") / "model")


@pytest.fixture()
def cap_scorer(checkpoint):
    return CAPScorer(nli_model=checkpoint, runtime=Runtime(cache=False, progress=False))


class ScriptedNLI:
    """An NLI model that knows the taxonomy's relations: a statement entails its own parts; the gold leaves the
    valid extra neutral and contradicts the invalid one."""

    last_stats: dict[str, int] = {}

    def __init__(self):
        self.calls = []

    def predict(self, premises, hypotheses):
        self.calls.append(list(zip(premises, hypotheses)))
        rows = []
        for premise, hypothesis in zip(premises, hypotheses):
            if premise == hypothesis or hypothesis in {GOLD, PARTIAL} and premise in {GOLD, OV, OI}:
                rows.append([0.95, 0.04, 0.01])
            elif premise == GOLD and hypothesis == OI:
                rows.append([0.00, 0.10, 0.90])
            elif premise == GOLD and hypothesis == OV:
                rows.append([0.05, 0.90, 0.05])
            else:  # the partial does not entail the tropical forests
                rows.append([0.20, 0.70, 0.10])
        return np.array(rows)


def test_f_beta_weights_completeness():
    assert f_beta([1.0], [0.5], beta=2.0)[0] > f_beta([0.5], [1.0], beta=2.0)[0]  # completeness counts more
    np.testing.assert_allclose(f_beta([0.3, 0.8], [0.6, 0.2], beta=1.0), [2 * 0.18 / 0.9, 2 * 0.16 / 1.0])
    with pytest.raises(ValueError, match="beta must be a positive number"):
        f_beta([1.0], [1.0], beta=0)


def test_the_taxonomy_order_with_an_nli_that_knows_it(cap_scorer):
    """OV > partial > OI, with exact on top: the inversion of whole-statement CAP is gone (Sec. 7.3). (OI stays
    below partial only as far as the gold contradicts its extra: precision is the extra's P_e + lam * P_n.)"""
    cap_scorer.nli = ScriptedNLI()
    scorer = DecomposedCAPScorer(cap_scorer)
    frame = scorer.components([GOLD] * 4, [EXACT, OV, PARTIAL, OI])
    exact, ov, partial, oi = frame["cap_decomposed"]
    assert exact > ov > partial > oi
    assert frame["cap_decomposed_fallback"].tolist() == [True, False, False, False]
    # by hand: OV's units (the gold, OV) -> Pr = min(D(g->g), D(g->OV)); C = P_e(OV -> g)
    precision = min(0.95 + 0.3 * 0.04, 0.05 + 0.3 * 0.90)
    assert frame.loc[1, "cap_decomposed_precision"] == pytest.approx(precision)
    b2 = DEFAULT_BETA**2
    assert ov == pytest.approx((1 + b2) * precision * 0.95 / (b2 * precision + 0.95))
    # plain CAP on the same model inverts OV and partial
    plain = cap(*(np.array([ScriptedNLI().predict([a], [b])[0] for a, b in pairs])
                  for pairs in ([(GOLD, OV), (GOLD, PARTIAL)], [(OV, GOLD), (PARTIAL, GOLD)])))
    assert plain[0] < plain[1]


def test_single_units_fall_back_to_cap_exactly(cap_scorer):
    golds = ["Water boils at 100 degrees.", "The sun is a star.", GOLD]
    answers = ["Water boils at 100 degrees.", "The sun is a planet.", CONTRA]
    frame = DecomposedCAPScorer(cap_scorer).components(golds, answers)
    assert frame["cap_decomposed_fallback"].all()
    np.testing.assert_array_equal(frame["cap_decomposed"].to_numpy(), cap_scorer.score(golds, answers))


def test_decomposed_rows_equal_the_formula_by_hand(cap_scorer):
    golds, answers = [GOLD, "Plants need water and light."], [OV, "Plants need water."]
    scorer = DecomposedCAPScorer(cap_scorer)
    gold_units, answer_units = scorer.units(golds, answers)
    assert gold_units == [[GOLD], ["Plants need water.", "Plants need light."]]
    assert answer_units == [[GOLD, OV], ["Plants need water."]]
    frame = scorer.components(golds, answers)
    nli = cap_scorer.nli
    for row, (gold, answer) in enumerate(zip(golds, answers)):
        completeness = min(nli.predict([answer] * len(gold_units[row]), gold_units[row])[:, 0])
        precision = min(directional_score(nli.predict([gold] * len(answer_units[row]), answer_units[row]), 0.3))
        b2 = DEFAULT_BETA**2
        expected = (1 + b2) * precision * completeness / (b2 * precision + completeness)
        assert frame.loc[row, "cap_decomposed"] == pytest.approx(expected, abs=1e-12)
        assert frame.loc[row, "cap_decomposed_completeness"] == pytest.approx(completeness, abs=1e-12)
    assert list(frame.columns) == list(COLUMNS)
    assert frame[["cap_decomposed_gold_units", "cap_decomposed_answer_units"]].values.tolist() == [[1, 2], [2, 1]]
    mean = DecomposedCAPScorer(cap_scorer, aggregate="mean", beta=1.0).components(golds[1:], answers[1:])
    entail = cap_scorer.nli.predict([answers[1]] * 2, gold_units[1])[:, 0]
    assert mean.loc[0, "cap_decomposed_completeness"] == pytest.approx(entail.mean(), abs=1e-12)


def test_all_units_go_through_one_deduplicated_nli_call(cap_scorer):
    scripted = ScriptedNLI()
    cap_scorer.nli = scripted
    DecomposedCAPScorer(cap_scorer).components([GOLD] * 6, [OV, OV, OI, PARTIAL, EXACT, OV])
    assert len(scripted.calls) == 1
    pairs = scripted.calls[0]
    # OV: (OV, GOLD), (GOLD, GOLD), (GOLD, OV); repeated rows ask again, NLIScorer deduplicates and caches
    assert (OV, GOLD) in pairs and (GOLD, OV) in pairs and len(set(pairs)) < len(pairs)


def test_the_settings_sign_the_score(cap_scorer):
    scorer = DecomposedCAPScorer(cap_scorer, RuleDecomposer(rules=("lists",)), beta=2, insertions=False)
    signature = scorer.signature(given_statements=True)
    assert signature.name == "cap_decomposed"
    assert signature["alpha"] == "0.85" and signature["lam"] == "0.3" and signature["statements"] == "given"
    assert signature["decompose"] == "rules" and signature["rules"] == "lists"
    assert (signature["insertions"], signature["aggregate"], signature["beta"]) == ("off", "min", "2")
    assert signature["nli"] == str(cap_scorer.nli.signature().value)


def test_clear_errors(cap_scorer):
    with pytest.raises(ValueError, match="aggregate must be one of"):
        DecomposedCAPScorer(cap_scorer, aggregate="max")
    with pytest.raises(ValueError, match="not both"):
        DecomposedCAPScorer(cap_scorer, alpha=0.5)
    with pytest.raises(ValueError, match="one gold statement per row"):
        DecomposedCAPScorer(cap_scorer).score([[GOLD, OV]], [OV])
    with pytest.raises(ValueError, match="1 questions for 2 rows"):
        DecomposedCAPScorer(cap_scorer).score([GOLD, GOLD], [OV, OI], questions=["q"])


def test_registered_beside_cap_in_scoring(cap_scorer):
    assert "cap_decomposed" in SCORERS and EXTENSION_METRICS == ("cap_decomposed",)
    assert "cap_decomposed" not in METRIC_NAMES  # the paper's metrics stay the default
    rows = pd.DataFrame({"question": ["Where is shifting cultivation practiced?"] * 2, "gold_answer": ["x"] * 2,
                         "answer": ["y"] * 2, "premise": [GOLD, GOLD], "hypothesis": [OV, EXACT]},
                        index=[10, 11])
    scored = score_frame(rows, "offline", ["cap", "cap_decomposed"], cap_scorer=cap_scorer,
                         runtime=Runtime(progress=False))
    assert scored.frame.loc[11, "cap_decomposed"] == scored.frame.loc[11, "cap"]  # exact: the fallback
    assert scored.metrics["cap_decomposed"]["chunked_pairs"] == 0
    assert scored.signatures["cap_decomposed"]["beta"] == f"{DEFAULT_BETA:g}"
    assert list(scored.frame.index) == [10, 11]
    with pytest.raises(ValueError, match="long_inputs='chunk' differs"):
        score_frame(rows, "offline", ["cap_decomposed"], cap_scorer=cap_scorer, long_inputs="chunk")


def test_compare_counts_pairs_and_violations_by_hand():
    labels = ["exact", "overinclusive_valid", "partial", "invalid"] * 10
    cap_like = [0.9, 0.5, 0.6, 0.1] * 10  # OV below partial everywhere: one violation (OV <= partial)
    split = [0.9, 0.75, 0.5, 0.1] * 5 + [0.9, 0.25, 0.5, 0.1] * 5  # OV above partial in half the rows
    table = compare({"cap": cap_like, "cap_decomposed": split}, labels, n_resamples=300, seed=1)
    assert table.loc["cap", "OV>Part"] == 0.0 and table.loc["cap", "violated"] == ["OV>Part"]
    # OV > Part: OV rows 0.75 (5) beat every partial (0.5, 10): 50 of 100 example pairs
    assert table.loc["cap_decomposed", "OV>Part"] == pytest.approx(0.5)
    assert table.loc["cap_decomposed", "violations"] == 1  # the OV mean 0.5 ties partial's 0.5: a violation
    low, high = table.loc["cap_decomposed", ["OV>Part_low", "OV>Part_high"]]
    assert low < 0.5 < high
    assert table.loc["cap", "pairwise_accuracy"] == pytest.approx(5 / 6)  # 6 strict class pairs, one reversed


def test_order_changes_pairs_answers_of_one_question():
    rows = pd.DataFrame({"question": ["q1", "q1", "q2", "q2", "q3", "q3"],
                         "premise": ["g1", "g1", "g2", "g2", "g3", "g3"],
                         "hypothesis": ["ov1", "p1", "ov2", "p2", "ov3", "p3"],
                         "cap": [0.4, 0.7, 0.8, 0.3, 0.2, 0.3], "cap_decomposed": [0.6, 0.5, 0.2, 0.3, 0.25, 0.3]})
    labels = ["overinclusive_valid", "partial"] * 3
    changes = order_changes(rows, labels)
    assert changes[["change", "question", "higher", "lower"]].values.tolist() == [
        ["fixed", "q1", "ov1", "p1"], ["broken", "q2", "ov2", "p2"]]  # q3: wrong under both
    assert changes.loc[0, "cap_decomposed higher"] == 0.6 and changes.loc[1, "cap higher"] == 0.8
