"""Draw the items of the blind labelling passes of the bundled sample (issue 12), deterministically.

- **Pass A** (``data/sample/second_labels/``): ``PER_CLASS`` rows of every class of the assembled
  ``cap_correctness.csv`` (8 x 52 = 416 rows, 40.6 %), so every hard-pair class of Tab. 4 is covered, drawn with
  ``random.Random(SEED)`` and shown in a seeded random order as items ``C000``...
- **Pass B** (``data/sample/second_labels/pass_b/``): 100 rows of pass A (12 per class plus 4 drawn from the
  rest), re-ordered and renamed ``D000``..., for a second, independent blind labeller: two blind labellers can then
  be compared with each other, not only with the intended class.
- **LLM answers** (``data/sample/llm_answers_raw/items.jsonl``): the 128 answers as items ``L000``... in
  ``answers.jsonl`` order.

Items hold question, gold answer and answer only (never the intended class); ``item_to_row.json`` maps items to
row ids of ``cap_correctness.csv``. The labellers' brief is ``data/sample/second_labels/BRIEF.md``.

Example::

    python scripts/second_label_items.py        # writes the item files; labels are written by the labellers
"""

from __future__ import annotations

import json
import random
import sys
from pathlib import Path

import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from caplib.taxonomy import LABELS  # noqa: E402

SEED = 20261201
PER_CLASS = 52
PASS_B_PER_CLASS = 12
PASS_B_SIZE = 100
SAMPLE = ROOT / "data" / "sample"


def draw_pass_a(labels: list[str], seed: int = SEED, per_class: int = PER_CLASS) -> list[int]:
    """Row ids of pass A: ``per_class`` rows of each class, in a seeded random order."""
    rng = random.Random(seed)
    rows = [r for label in LABELS for r in rng.sample([i for i, x in enumerate(labels) if x == label], per_class)]
    rng.shuffle(rows)
    return rows


def draw_pass_b(labels: list[str], pass_a: list[int], seed: int = SEED) -> list[int]:
    """Row ids of pass B: ``PASS_B_PER_CLASS`` pass-A rows of each class plus a few more, re-ordered."""
    rng = random.Random(f"{seed}|pass_b")
    chosen = [r for label in LABELS
              for r in rng.sample(sorted(r for r in pass_a if labels[r] == label), PASS_B_PER_CLASS)]
    rest = sorted(set(pass_a) - set(chosen))
    chosen += rng.sample(rest, PASS_B_SIZE - len(chosen))
    rng.shuffle(chosen)
    return chosen


def _items(prefix: str, shown: list[tuple[str, str, str]]) -> list[dict[str, str]]:
    """Items ``<prefix>000``... holding (question, gold answer, answer) only: never the intended class."""
    return [{"item": f"{prefix}{k:03d}", "question": q, "gold_answer": g, "answer": a}
            for k, (q, g, a) in enumerate(shown)]


def _write_jsonl(path: Path, items: list[dict[str, str]]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(item, ensure_ascii=False) + "\n" for item in items))


def main() -> None:
    df = pd.read_csv(SAMPLE / "cap_correctness.csv", dtype=str, keep_default_na=False)
    labels = df["label_semantic"].tolist()
    pass_a = draw_pass_a(labels)
    pass_b = draw_pass_b(labels, pass_a)
    for directory, prefix, rows in ((SAMPLE / "second_labels", "C", pass_a),
                                    (SAMPLE / "second_labels" / "pass_b", "D", pass_b)):
        items = _items(prefix, [(df.at[r, "question"], df.at[r, "gold_answer"], df.at[r, "answer"]) for r in rows])
        _write_jsonl(directory / "items.jsonl", items)
        (directory / "item_to_row.json").write_text(json.dumps({i["item"]: r for i, r in zip(items, rows)}) + "\n")
    questions = pd.read_csv(SAMPLE / "questions.csv", dtype=str, keep_default_na=False).set_index("question_id")
    raw = SAMPLE / "llm_answers_raw"
    answers = [json.loads(line) for line in (raw / "answers.jsonl").read_text().splitlines() if line.strip()]
    llm_items = _items("L", [(questions.at[a["question_id"], "question"], questions.at[a["question_id"], "gold_answer"],
                              a["answer"]) for a in answers])
    _write_jsonl(raw / "items.jsonl", llm_items)
    print(f"pass A {len(pass_a)} items ({len(pass_a) / len(df):.1%} of {len(df)} rows), pass B {len(pass_b)}, "
          f"LLM answers {len(llm_items)}")


if __name__ == "__main__":
    main()
