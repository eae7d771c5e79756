"""The authored NLI corpus (issue 13): pair files, relations, blind second pass, artifact check, held-out split."""

from __future__ import annotations

import json
import random
from collections import Counter
from pathlib import Path

import pytest

from caplib import offline_nli as onli
from caplib.offline_nli import corpus

CORPUS = corpus.CORPUS_DIR / "pairs.jsonl"


def _entry(n: int, source: str = "general") -> dict:
    return {"premise_id": f"{source}:{n}", "source": source, "premise": f"The tower in town {n} is 40 metres tall.",
            "hypotheses": [{"relation": "paraphrase", "text": f"Town {n} has a tower that stands 40 metres high."},
                           {"relation": "added_detail", "text": f"The stone tower in town {n} is 40 metres tall."},
                           {"relation": "wrong_value", "text": f"The tower in town {n} is 90 metres tall."}]}


def test_pairs_from_entries_writes_both_directions_with_the_relation_labels() -> None:
    pairs, problems = corpus.pairs_from_entries([_entry(1)])
    assert problems == []
    got = {(p["relation"], p["direction"]): p["label"] for p in pairs}
    assert got == {("paraphrase", "forward"): "entailment", ("paraphrase", "reverse"): "entailment",
                   ("added_detail", "forward"): "neutral", ("added_detail", "reverse"): "entailment",
                   ("wrong_value", "forward"): "contradiction", ("wrong_value", "reverse"): "contradiction"}
    reverse = next(p for p in pairs if p["pair_id"] == "general:1#1r")
    assert reverse["premise"] == _entry(1)["hypotheses"][1]["text"] and reverse["hypothesis"] == _entry(1)["premise"]


@pytest.mark.parametrize("change, problem", [
    (lambda e: e["hypotheses"][0].update(relation="synonym"), "unknown relation"),
    (lambda e: e["hypotheses"][2].update(text=e["premise"]), "equals the premise"),
    (lambda e: e["hypotheses"][2].update(text=e["hypotheses"][0]["text"]), "repeated"),
    (lambda e: e.update(premise="  "), "empty premise"),
    (lambda e: e["hypotheses"][1].update(text=""), "empty hypothesis"),
])
def test_a_malformed_entry_is_reported_and_left_out_whole(change, problem) -> None:
    bad = _entry(2)
    change(bad)
    pairs, problems = corpus.pairs_from_entries([_entry(1), bad])
    assert len(problems) == 1 and problem in problems[0] and problems[0].startswith("general:2")
    assert {p["premise_id"] for p in pairs} == {"general:1"}


def test_relation_rotation_keeps_the_shares_and_negation_under_a_third() -> None:
    rows = corpus.relation_rotation(900, seed=3)
    assert all([corpus.RELATIONS[r].group for r in row] == ["entailment", "neutral", "contradiction"] for row in rows)
    counts = Counter(r for row in rows for r in row)
    assert counts["negation"] == 200 and counts["wrong_value"] == 400 and counts["antonym"] == 300
    assert counts["paraphrase"] == 360 and counts["added_detail"] == 360
    assert rows != corpus.relation_rotation(900, seed=4) and rows == corpus.relation_rotation(900, seed=3)


def _second_pass(directory: Path, labels: dict[str, str]) -> None:
    (directory / "second_labels").mkdir()
    (directory / "second_labels" / "item_to_pair.json").write_text(json.dumps({f"N{i}": k for i, k in enumerate(labels)}))
    with open(directory / "second_labels" / "labels.jsonl", "w") as handle:
        for i, label in enumerate(labels.values()):
            handle.write(json.dumps({"item": f"N{i}", "label": label}) + "\n")


def test_hypotheses_the_blind_labeller_disputes_are_left_out_in_both_directions(tmp_path: Path) -> None:
    pairs, _ = corpus.pairs_from_entries([_entry(1), _entry(2)])
    corpus.write_corpus(pairs, tmp_path / "pairs.jsonl")
    assert len(onli.load_authored_pairs(tmp_path)[0]) == 12
    # agrees on 1#0 and 2#2r, disputes 1#1r (reverse of added detail is entailment, labelled neutral)
    _second_pass(tmp_path, {"general:1#0": "entailment", "general:1#1r": "neutral", "general:2#2r": "contradiction"})
    assert corpus.disputed_pairs(tmp_path) == {"general:1#1"}
    kept, counts = onli.load_authored_pairs(tmp_path)
    assert counts == {"pairs": 12, "pairs_kept": 10, "hypotheses_disputed": 1}
    assert all(not p.kind.startswith("authored_added_detail") for p in kept if p.item_id == "general:1")
    assert Counter(p.kind for p in kept)["authored_wrong_value_reverse"] == 2


def test_hypothesis_only_check_finds_a_label_word_and_not_noise() -> None:
    rng = random.Random(0)
    words = [f"w{i}" for i in range(40)]
    labels = [rng.choice(["entailment", "neutral", "contradiction"]) for _ in range(600)]
    groups = [str(i // 3) for i in range(600)]
    noise = [" ".join(rng.sample(words, 6)) for _ in labels]
    cue = [text + (" not" if label == "contradiction" else "") for text, label in zip(noise, labels)]
    plain = corpus.hypothesis_only_accuracy(noise, labels, groups)
    cued = corpus.hypothesis_only_accuracy(cue, labels, groups)
    assert plain["accuracy"] < 0.45 and plain["majority_baseline"] < 0.4
    # the cue gives away contradiction; the other two stay at chance: about 1/3 + 2/3 * 1/2
    assert 0.6 < cued["accuracy"] < 0.75


def test_split_keeps_a_premise_on_one_side_and_drops_all_pairs_of_a_leaked_one() -> None:
    entries = [_entry(n, "arc_easy") for n in range(40)]
    entries[5]["hypotheses"][2]["text"] = "How tall is the tower in town 5?"  # a reserved question
    pairs, _ = corpus.pairs_from_entries(entries)
    nli = tuple(onli.NLIPair(p["premise"], p["hypothesis"], p["label"], f"authored_{p['relation']}", "authored",
                             p["premise_id"]) for p in pairs)
    items = tuple(onli.QAItem("arc_easy", str(n), f"How tall is tower {n} of the town?", "40 metres")
                  for n in range(40))
    data = onli.TrainingData(items, nli, {}, ("How tall is the tower in town 5?",))
    recipe = onli.Recipe(heldout_fraction=0.3)
    train_items, held_items, train, held, counts = onli.split_data(data, recipe)
    assert "arc_easy:5" not in {p.item_id for p in (*train, *held)} and counts["authored"]["items_leaked"] == 1
    assert {p.item_id for p in train}.isdisjoint(p.item_id for p in held) and held
    # an authored premise falls on the side of the QA item it states
    assert {p.item_id for p in held} == {f"arc_easy:{i.item_id}" for i in held_items} - {"arc_easy:5"}
    assert onli.item_key("authored", "arc_easy:5") == ("arc_easy", "5")


def test_identity_pairs_once_per_authored_premise() -> None:
    pairs, _ = corpus.pairs_from_entries([_entry(1), _entry(2)])
    nli = [onli.NLIPair(p["premise"], p["hypothesis"], p["label"],
                        f"authored_{p['relation']}" + ("_reverse" if p["direction"] == "reverse" else ""),
                        "authored", p["premise_id"]) for p in pairs]
    same = onli.identity_pairs(nli)
    assert [(p.premise == p.hypothesis, p.label, p.item_id) for p in same] == [
        (True, "entailment", "general:1"), (True, "entailment", "general:2")]
    assert {p.premise for p in same} == {_entry(1)["premise"], _entry(2)["premise"]}


# --- the corpus as shipped ----------------------------------------------------------------------------------------

@pytest.mark.slow
def test_the_shipped_corpus_stats_are_what_the_files_give() -> None:
    computed, shipped = corpus.corpus_stats(), corpus.read_stats()  # counts, agreement, artifact check (about 35 s)
    # the hypothesis-only classifier's lbfgs fit moves in the last float digits with the BLAS build: on another
    # machine one or two of ~9,000 held-out predictions can flip (0.5531 -> 0.553); every count stays exact
    for direction in ("both_directions", "forward_only"):
        accuracy = computed["hypothesis_only"][direction].pop("accuracy")
        assert accuracy == pytest.approx(shipped["hypothesis_only"][direction].pop("accuracy"), abs=5e-4)
    assert computed == shipped
    assert corpus.read_stats()["hypothesis_only"]["both_directions"]["accuracy"] <= 0.55


def test_the_shipped_corpus_has_the_size_and_shape_the_issue_asks_for() -> None:
    pairs = corpus.read_corpus(CORPUS)
    forward = [p for p in pairs if p["direction"] == "forward"]
    per_premise = Counter(p["premise_id"] for p in forward)
    assert len(pairs) >= 6000 and len(per_premise) >= 2000
    assert set(per_premise.values()) <= {3, 4}
    groups = Counter((p["premise_id"], corpus.RELATIONS[p["relation"]].group) for p in forward)
    # one entailment, one neutral, one contradiction per premise, and a reworded answer (brief, revision 1)
    assert all(n == 1 for (_, group), n in groups.items() if group != "entailment")
    assert all(n == 1 + any(p["relation"] == "reworded_answer" for p in forward if p["premise_id"] == premise)
               for (premise, group), n in groups.items() if group == "entailment")
    assert len({(p["premise_id"], g) for p in forward for g in [corpus.RELATIONS[p["relation"]].group]}) \
        == 3 * len(per_premise)
    contradictions = [p for p in forward if p["label"] == "contradiction"]
    assert sum(p["relation"] == "negation" for p in contradictions) <= len(contradictions) / 3
    assert all(p["label"] == corpus.RELATIONS[p["relation"]].forward for p in forward)
    assert len({p["pair_id"] for p in pairs}) == len(pairs)
    second = corpus.CORPUS_DIR / "second_labels"
    if (second / "labels.jsonl").is_file():
        assert len(corpus.read_corpus(second / "labels.jsonl")) >= 0.1 * len(pairs)


def test_balanced_sample_takes_equal_labels_and_gives_a_small_labels_rest_to_the_others() -> None:
    from caplib.offline_nli.artifact import balanced_sample

    labels = ["entailment"] * 50 + ["neutral"] * 30 + ["contradiction"] * 4
    pairs = [onli.NLIPair("p", str(i), label, "k", "s", str(i)) for i, label in enumerate(labels)]
    chosen = balanced_sample(pairs, 40, "7")
    assert Counter(p.label for p in chosen) == {"contradiction": 4, "neutral": 18, "entailment": 18}
    assert [int(p.hypothesis) for p in chosen] == sorted(int(p.hypothesis) for p in chosen)  # input order kept
    assert chosen == balanced_sample(pairs, 40, "7") and chosen != balanced_sample(pairs, 40, "8")
    assert balanced_sample(pairs, 100, "7") == pairs


def test_backbone_figures_read_the_manifest_of_the_offline_backbone(tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    from caplib import book
    from caplib.profiles import load_profile

    two_way = {"n": 277, "accuracy": 0.61, "majority_baseline": 0.527}
    evaluation = {"heldout_by_source": {"authored": {"n": 1700, "accuracy": 0.8, "majority_baseline": 0.4}},
                  "cb": {"n": 56, "accuracy": 0.5, "majority_baseline": 0.5}, "rte": {"two_way": two_way},
                  "snli": {"n": 3000, "accuracy": 0.79, "majority_baseline": 0.34}}
    (tmp_path / "manifest.json").write_text(json.dumps({"evaluation": evaluation}))
    monkeypatch.setenv(onli.ENV_DIR, str(tmp_path))
    table = book.backbone_figures(load_profile("offline"))
    assert table.loc["GLUE RTE validation (entailment or not)"].tolist() == [277, 0.61, 0.527]
    assert table.loc["authored corpus, held-out tenth (3-way)", "accuracy"] == 0.8
    assert table.loc["SNLI 1.0 test, first 3,000 (3-way)"].tolist() == [3000, 0.79, 0.34]
    artifact_check = corpus.read_stats()["hypothesis_only"]["both_directions"]  # the corpus's, not the model's
    assert table.loc["hypothesis only, both directions (artifact check)"].tolist() == [
        artifact_check["n"], artifact_check["accuracy"], artifact_check["majority_baseline"]]
    assert book.backbone_figures(load_profile("paper")) is None
    monkeypatch.setenv(onli.ENV_DIR, str(tmp_path / "not-built"))
    assert book.backbone_figures(load_profile("offline")) is None
