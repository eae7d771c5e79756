"""Audit a CAP-Correctness-format sample against the authoring constraints of issue 12 and Tab. 18.

Measures, over the whole file (and the test split where a splits file is given):

- partial: share of candidates that reproduce part of the gold's own wording (every content word, crudely
  stemmed, is one of the gold's, and the candidate is not the gold) -- target at least 60 %;
- alternative_correct: rows flagged as possibly entailing the gold or being entailed by it (a number where the
  gold has one: unit conversion?; definition wording; a WordNet synonym; all the gold's content words;
  only the gold's content words) -- target none, each flagged row is listed;
- contradictory: share without a negation word (``caplib.shortcut.NEGATION_WORDS``) -- target at least 40 %;
- overinclusive valid/invalid: share written as "gold, clause" (the gold verbatim, then a comma);
- the shortcut baseline (``caplib.shortcut.shortcut_scores``): pairwise accuracy, Spearman and the hard pairs of
  Tab. 4 from surface features alone.

``--authoring DIR`` audits draft authoring batches (``batch_*.json``) before assembly, so authors can check
their work; questions and gold answers then come from ``data/sample/questions.csv``.

Example::

    python scripts/audit_sample.py                                   # the bundled sample
    python scripts/audit_sample.py --csv old.csv --splits old_splits.csv
    python scripts/audit_sample.py --authoring data/sample/authoring --rows
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from caplib.data import load_correctness  # noqa: E402
from caplib.evaluation import report  # noqa: E402
from caplib.shortcut import content_stems, frame_shortcut_scores, has_negation, words  # noqa: E402
from caplib.taxonomy import LABELS  # noqa: E402

SAMPLE = ROOT / "data" / "sample"
_DEFINITION = re.compile(r"(?i)\b(?:which|that) (?:is|are|means)\b|\bi\.e\.|\bdefined as\b|\bmeaning\b|"
                         r"\bknown as\b|\bcalled\b|\bin other words\b|\bthe process (?:of|by which)\b")
_NUMBER = re.compile(r"\d")


def partial_reuses_gold(gold: str, answer: str) -> bool:
    """Whether a partial reproduces part of the gold's wording: its content stems are a subset of the gold's.

    Example:
        >>> partial_reuses_gold("wearing protective clothing and goggles", "wearing goggles")
        True
        >>> partial_reuses_gold("wearing protective clothing and goggles", "safety gear")
        False
    """
    stems = content_stems(answer)
    return bool(stems) and stems <= content_stems(gold) and words(answer) != words(gold)


def _synonyms(text: str) -> set[str]:
    from caplib.wordnet import wordnet_reader

    try:
        wordnet = wordnet_reader()
    except Exception:  # noqa: BLE001 - the synonym check is skipped (and says so) without WordNet
        return set()
    key = "_".join(words(text))
    return {lemma.lower() for synset in wordnet.synsets(key) for lemma in synset.lemma_names()} - {key}


def alternative_flags(gold: str, answer: str) -> list[str]:
    """Why an alternative_correct candidate may entail the gold or be entailed by it (empty: no flag).

    Example:
        >>> alternative_flags("150 m", "0.15 km")
        ['number where the gold has one (unit conversion?)']
    """
    flags = []
    if _NUMBER.search(gold) and _NUMBER.search(answer):
        flags.append("number where the gold has one (unit conversion?)")
    if _DEFINITION.search(answer):
        flags.append("definition wording")
    if "_".join(words(answer)) in _synonyms(gold):
        flags.append("WordNet synonym of the gold")
    gold_stems, answer_stems = content_stems(gold), content_stems(answer)
    if gold_stems and gold_stems <= answer_stems:
        flags.append("holds all the gold's content words (superset)")
    elif answer_stems and answer_stems <= gold_stems:
        flags.append("only the gold's content words (subset)")
    return flags


def gold_then_clause(gold: str, answer: str) -> bool:
    """Whether an overinclusive answer is written as the gold verbatim followed by a comma."""
    g, a = gold.strip().rstrip(".").lower(), answer.strip().lower()
    return a.startswith(g) and a[len(g):].lstrip().startswith(",")


def frame_from_authoring(directory: Path) -> pd.DataFrame:
    """The draft candidates of ``directory/batch_*.json`` as rows (question_id, gold_answer, answer, label)."""
    questions = pd.read_csv(SAMPLE / "questions.csv", dtype=str, keep_default_na=False).set_index("question_id")
    rows = []
    for path in sorted(directory.glob("batch_*.json")):
        for entry in json.loads(path.read_text(encoding="utf-8")):
            q = questions.loc[entry["question_id"]]
            rows.append({"question_id": entry["question_id"], "question": q["question"],
                         "gold_answer": q["gold_answer"], "answer": q["gold_answer"], "label_semantic": "exact"})
            for label, (answer, _hypothesis) in entry["candidates"].items():
                rows.append({"question_id": entry["question_id"], "question": q["question"],
                             "gold_answer": q["gold_answer"], "answer": answer, "label_semantic": label})
    return pd.DataFrame(rows)


def shortcut_summary(df: pd.DataFrame) -> dict:
    """The shortcut baseline's protocol measures (``caplib.evaluation.report``): Spearman, pairwise accuracy, the
    hard pairs of Tab. 4 (``Acc OV>OI`` is OV vs OI) and the AUCs of Tab. 3."""
    table = report(df.assign(shortcut=frame_shortcut_scores(df)), ["shortcut"], "label_semantic")
    row = table.loc["shortcut"]
    return {key: float(value) for key, value in row.items()
            if key in ("spearman", "pairwise_accuracy") or key.startswith(("Acc ", "AUC "))}


def audit(df: pd.DataFrame, show_rows: bool = False) -> dict:
    """The audit numbers of one sample frame (columns gold_answer, answer, label_semantic, question)."""
    out: dict = {"rows": len(df), "questions": int(df["question"].nunique())}
    by = {label: df[df["label_semantic"] == label] for label in LABELS}
    part = by["partial"]
    reuse = [partial_reuses_gold(g, a) for g, a in zip(part["gold_answer"], part["answer"])]
    out["partial_reuse_share"] = float(np.mean(reuse)) if reuse else float("nan")
    contra = by["contradictory"]
    out["contradictory_without_negation_share"] = float(np.mean([not has_negation(a) for a in contra["answer"]]))
    for label in ("overinclusive_valid", "overinclusive_invalid"):
        rows = by[label]
        out[f"{label}_gold_comma_share"] = float(np.mean([gold_then_clause(g, a)
                                                          for g, a in zip(rows["gold_answer"], rows["answer"])]))
    flagged = []
    for index, row in by["alternative_correct"].iterrows():
        flags = alternative_flags(row["gold_answer"], row["answer"])
        if flags:
            flagged.append({"row": int(index), "gold": row["gold_answer"], "answer": row["answer"], "flags": flags})
    out["alternative_flagged"] = flagged
    out["shortcut"] = shortcut_summary(df)
    if show_rows:
        out["partial_rows"] = [{"gold": g, "answer": a, "reuses_gold": r}
                               for g, a, r in zip(part["gold_answer"], part["answer"], reuse)]
        out["contradictory_with_negation"] = [a for a in contra["answer"] if has_negation(a)]
    return out


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    source = parser.add_mutually_exclusive_group()
    source.add_argument("--csv", type=Path, default=SAMPLE / "cap_correctness.csv")
    source.add_argument("--authoring", type=Path, help="audit draft batch_*.json files instead of a CSV")
    parser.add_argument("--splits", type=Path, default=None, help="splits CSV (default: the sample's, with --csv)")
    parser.add_argument("--rows", action="store_true", help="also list partial rows and negated contradictions")
    args = parser.parse_args(argv)
    if args.authoring:
        print(json.dumps(audit(frame_from_authoring(args.authoring), args.rows), indent=1, default=str))
        return
    splits = args.splits or (SAMPLE / "cap_correctness_splits.csv" if args.csv.parent == SAMPLE else None)
    df = load_correctness(args.csv, splits=splits)
    result = {"all": audit(df, args.rows)}
    if "split" in df:
        test = df[df["split"] == "test"]
        result["test"] = {"shortcut": shortcut_summary(test)} if len(test) else {}
    print(json.dumps(result, indent=1, default=str))


if __name__ == "__main__":
    main()
