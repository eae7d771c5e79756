"""The authored NLI corpus of ``data/nli/`` (issue 13): draw the items to author, assemble, draw the blind pass.

Steps, each deterministic (seeded):

1. ``select``: QA items of the train/validation splits of ARC-Challenge, ARC-Easy, OpenBookQA, MMLU
   (dev+validation), SciQ and CommonsenseQA (``caplib.offline_nli.load_qa_items``), after the leakage guard
   (Jaccard >= 0.9 against every reserved test question) and the open-QA filter, drawn evenly across sources,
   plus general-knowledge topics; written as ``authoring/items_NN.json`` batches with the hypothesis
   relations each premise is to get (``RELATIONS``), rotated so that the kinds are balanced.
2. Authors write ``authoring/batch_NN.json`` from ``data/nli/BRIEF.md`` (premise + one hypothesis per
   assigned relation); ``assemble`` turns them into ``pairs.jsonl`` (both directions, labels from
   ``caplib.offline_nli.corpus.RELATIONS``) and checks the structure.
3. ``second``: a seeded 11 % of all pairs (both directions), shuffled, shown without relation or label as
   ``second_labels/items.jsonl`` for a separate blind labeller (brief ``second_labels/BRIEF.md``).

Example::

    python scripts/nli_corpus.py select --out data/nli/authoring
    python scripts/nli_corpus.py assemble
    python scripts/nli_corpus.py second               # drawing 0
    python scripts/nli_corpus.py second --revision 1  # drawing 1: the reworded_answer pairs (brief, revision 1)
    python scripts/nli_corpus.py stats                # data/nli/stats.json, once the labels are in
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from caplib.offline_nli import corpus  # noqa: E402

SEED = 20261201
SOURCES = ("arc_challenge", "arc_easy", "openbookqa", "mmlu", "sciq", "commonsense_qa")
QA_PER_BATCH = 255
GENERAL_PER_BATCH = 25
BATCHES = 8
SECOND_FRACTION = 0.11
NLI = ROOT / "data" / "nli"

GENERAL_TOPICS = """
rivers and lakes; mountains; deserts; oceans; capital cities; islands; the solar system; the Moon; planets;
stars; weather; seasons; volcanoes; earthquakes; rainforests; birds; insects; fish; mammals; reptiles; trees;
flowers; vegetables; fruit; bread and baking; cheese; coffee and tea; rice; cooking methods; kitchen tools;
football; tennis; swimming; chess; the Olympic Games; cycling; marathon running; musical instruments;
orchestras; painting; sculpture; famous novels; poetry; theatre; cinema; photography; architecture; bridges;
railways; aviation; ships; cars; bicycles; roads and traffic; money and banking; markets and trade;
agriculture; fishing; mining; electricity; batteries; computers; the internet; telephones; radio; television;
printing; writing systems; languages; alphabets; numbers and counting; calendars; clocks and time; measurement
units; human body; teeth; bones; the heart; sleep; nutrition; vaccines; hospitals; medicines; ancient Egypt;
ancient Rome; ancient Greece; the Middle Ages; exploration voyages; the Industrial Revolution; world wars;
inventions; famous scientists; elections; laws and courts; schools; universities; libraries; museums;
holidays and festivals; clothing; textiles; houses; furniture; glass; metals; plastics; recycling; water supply;
fire; light; sound; magnetism; gravity; chemistry of salt; paper; wood; pottery; gardening; pets; horses; dogs;
cats; bees and honey; farming animals; dairy; maps; compasses; continents; countries of Africa; countries of Asia;
countries of Europe; countries of the Americas; Australia; Antarctica; the Arctic; climate; glaciers; caves;
forests; grasslands; wetlands; coral reefs; whales; sharks; dinosaurs; fossils; rocks and minerals; diamonds;
gold; oil and gas; nuclear power; wind power; solar power; space exploration; satellites; telescopes; microscopes;
cells; DNA; plants and photosynthesis; mushrooms; bacteria; viruses; the immune system; the brain; the eyes;
the ears; the skin; blood; breathing; digestion; exercise; family; jobs and professions; shops; post and mail;
newspapers; games and toys; puzzles; mathematics; geometry; fractions; percentages; statistics; physics of motion;
speed; temperature; ice and snow; rain; clouds; wind; storms; rainbows; tides; sand and beaches; soil
""".replace("\n", " ")


def _topics() -> list[str]:
    return [t.strip() for t in GENERAL_TOPICS.split(";") if t.strip()]


def select(out: Path) -> None:
    """Write ``items_NN.json``: QA items drawn evenly across ``SOURCES`` plus general-knowledge topics."""
    from caplib.offline_nli import load_training_data, split_data
    from caplib.offline_nli.recipe import Recipe
    from caplib.statements import TemplateStatementGenerator

    data = load_training_data()
    train, heldout, _, _, counts = split_data(data, Recipe(heldout_fraction=0.0))
    items = [item for item in (*train, *heldout) if item.source in SOURCES]
    rng = random.Random(SEED)
    by_source = {s: sorted((i for i in items if i.source == s), key=lambda i: i.item_id) for s in SOURCES}
    for pool in by_source.values():
        rng.shuffle(pool)
    wanted = QA_PER_BATCH * BATCHES
    chosen: list = []
    while len(chosen) < wanted and any(by_source.values()):  # round robin: the small sources are used up first
        for source in SOURCES:
            if by_source[source] and len(chosen) < wanted:
                chosen.append(by_source[source].pop())
    rng.shuffle(chosen)
    statements = TemplateStatementGenerator().generate([i.question for i in chosen], [i.answer for i in chosen])
    topics = _topics()
    rng.shuffle(topics)
    entries = [{"premise_id": f"{i.source}:{i.item_id}", "source": i.source, "question": i.question,
                "answer": i.answer, "other_choices": list(i.wrong), "template_statement": s}
               for i, s in zip(chosen, statements)]
    general = [{"premise_id": f"general:{n:03d}", "source": "general", "topic": topics[n % len(topics)]}
               for n in range(GENERAL_PER_BATCH * BATCHES)]
    rotation = corpus.relation_rotation(len(entries) + len(general), SEED)
    out.mkdir(parents=True, exist_ok=True)
    for b in range(BATCHES):
        batch = entries[b * QA_PER_BATCH:(b + 1) * QA_PER_BATCH] + general[b * GENERAL_PER_BATCH:(b + 1) * GENERAL_PER_BATCH]
        for entry in batch:
            entry["relations"] = rotation.pop()
        (out / f"items_{b + 1:02d}.json").write_text(json.dumps(batch, indent=1, ensure_ascii=False) + "\n")
    print(json.dumps({"qa_items": len(entries), "general": len(general),
                      "by_source": Counter(e["source"] for e in entries),
                      "leakage_guard": {s: counts[s]["items_leaked"] for s in SOURCES}}, indent=1))


def assemble() -> None:
    """``pairs.jsonl`` from the authored batches (both directions), with a structural report."""
    entries = []
    for path in sorted((NLI / "authoring").glob("batch_*.json")):
        entries += json.loads(path.read_text())
    reworded = {row["premise_id"]: row["text"] for path in sorted((NLI / "authoring").glob("reworded_*.json"))
                for row in json.loads(path.read_text())}  # revision 1 of the brief: a fourth hypothesis
    for entry in entries:
        text = reworded.get(entry["premise_id"], "").strip()
        if text in {entry["premise"].strip(), *(h["text"].strip() for h in entry["hypotheses"])}:
            print(f"problem: {entry['premise_id']}: reworded answer left out (empty, or equal to another sentence)")
        else:
            entry["hypotheses"].append({"relation": "reworded_answer", "text": text})
    pairs, problems = corpus.pairs_from_entries(entries)
    for problem in problems:
        print("problem:", problem)
    corpus.write_corpus(pairs, NLI / "pairs.jsonl")
    print(json.dumps({"premises": len(entries), "pairs": len(pairs),
                      "labels": Counter(p["label"] for p in pairs),
                      "relations": Counter(p["relation"] for p in pairs if p["direction"] == "forward")}, indent=1))


def second(revision: int) -> None:
    """The blind pass: a seeded ``SECOND_FRACTION`` of one drawing's pairs, shuffled, shown without relation or label
    as items numbered on from the drawings before. Drawing 0: every pair of the three hypotheses per premise;
    drawing 1 (revision 1 of the brief): the ``reworded_answer`` pairs."""
    pairs = corpus.read_corpus(NLI / "pairs.jsonl")
    out = NLI / "second_labels"
    out.mkdir(parents=True, exist_ok=True)
    mapping_file = out / "item_to_pair.json"
    mapping = json.loads(mapping_file.read_text()) if revision else {}
    fresh = [p for p in pairs if (p["relation"] == "reworded_answer") == bool(revision)]
    rng = random.Random(f"{SEED}|second" + (f"|{revision}" if revision else ""))
    chosen = rng.sample(fresh, round(SECOND_FRACTION * len(fresh)))
    with open(out / "items.jsonl", "a" if revision else "w", encoding="utf-8") as handle:
        for n, pair in enumerate(chosen, start=len(mapping)):
            handle.write(json.dumps({"item": f"N{n:04d}", "premise": pair["premise"], "hypothesis": pair["hypothesis"]},
                                    ensure_ascii=False) + "\n")
            mapping[f"N{n:04d}"] = pair["pair_id"]
    mapping_file.write_text(json.dumps(mapping, indent=0) + "\n")
    print(f"drawing {revision}: {len(chosen)} of {len(fresh)} pairs; {len(mapping)} items in all")


def stats() -> None:
    """``stats.json``: counts, agreement of the blind pass, hypothesis-only check (caplib.offline_nli.corpus)."""
    result = corpus.corpus_stats(NLI)
    (NLI / "stats.json").write_text(json.dumps(result, indent=1) + "\n")
    print(json.dumps({k: result[k] for k in ("pairs", "hypotheses_disputed", "hypothesis_only")}, indent=1))


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="step", required=True)
    sub.add_parser("select").add_argument("--out", type=Path, default=NLI / "authoring")
    sub.add_parser("assemble")
    sub.add_parser("stats")
    sub.add_parser("second").add_argument("--revision", type=int, choices=(0, 1), default=0)
    args = parser.parse_args()
    if args.step == "select":
        select(args.out)
    elif args.step == "assemble":
        assemble()
    elif args.step == "stats":
        stats()
    else:
        second(args.revision)
