"""Assemble data/sample/llm_answers.csv (Sec. 7.4 sample) from the raw, unedited collection files.

Inputs (data/sample/llm_answers_raw/):
- answers.jsonl: {"question_id", "answer"} — zero-shot answers written by an LLM that saw only the question and the
  App. C.2 system prompt (caplib.llm_answers.ANSWER_PROMPT), never the gold answer; one pass, no edits. The model
  was reached as an agent, so temperature 0.0 and the 256-token cap of App. C.2 were instructed, not enforced:
  the CSV therefore records no decoding settings.
- labels.jsonl: {"item", "label"} — taxonomy labels from a separate blind pass (a different LLM process that saw
  question, gold and answer as in items.jsonl, under the strict brief of data/sample/second_labels/BRIEF.md, and
  never the process that wrote the answers), items L000.. in answers.jsonl order. labels_v1.jsonl keeps the first
  labelling (2026-11-29, a shorter brief) for comparison; it is not used here.
The questions and golds come from data/sample/questions.csv. Deterministic: re-running gives the same bytes.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import pandas as pd

from caplib.llm_answers import ANSWER_PROMPT
from caplib.taxonomy import normalize_label

ROOT = Path(__file__).resolve().parents[1]
RAW = ROOT / "data" / "sample" / "llm_answers_raw"
MODEL = "Claude (Anthropic; exact version not exposed to the collecting session)"
COLLECTED = "2026-11-29"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--out", type=Path, default=ROOT / "data" / "sample" / "llm_answers.csv")
    args = parser.parse_args(argv)
    questions = pd.read_csv(ROOT / "data" / "sample" / "questions.csv", keep_default_na=False, dtype=str)
    questions = questions.set_index("question_id")
    answers = [json.loads(line) for line in (RAW / "answers.jsonl").read_text().splitlines() if line.strip()]
    labels = [json.loads(line) for line in (RAW / "labels.jsonl").read_text().splitlines() if line.strip()]
    if len(answers) != len(labels) or [l["item"] for l in labels] != [f"L{i:03d}" for i in range(len(answers))]:
        raise SystemExit("labels.jsonl does not cover answers.jsonl item by item (L000, L001, ...)")
    rows = []
    for answer, label in zip(answers, labels):
        question = questions.loc[answer["question_id"]]
        rows.append({
            "question_id": answer["question_id"],
            "question": question["question"],
            "dataset": question["source_dataset"],
            "gold_answer": question["gold_answer"],
            "answer": answer["answer"],
            "model": MODEL,
            "prompt": ANSWER_PROMPT,
            "date": COLLECTED,
            "label_semantic": normalize_label(label["label"]),
        })
    pd.DataFrame(rows).to_csv(args.out, index=False, lineterminator="\n")
    print(f"wrote {len(rows)} rows to {args.out}")


if __name__ == "__main__":
    main()
