"""Assemble the bundled CAP-Correctness sample from the selected questions and the authored candidates.

Inputs: ``data/sample/questions.csv`` (``scripts/select_questions.py``) and the authoring files
``data/sample/authoring/batch_*.json``. Each authoring entry holds, for one question, the premise (the
question + gold answer as one declarative statement, B.5 constraints) and, for each of the seven non-exact
classes of Tab. 7, a candidate answer written after the class instruction of Tab. 18 together with its
hypothesis (question + candidate as one statement). The ``exact`` candidate is not authored: Tab. 18 says
"Reproduce the gold answer verbatim", so its answer is the gold and its hypothesis is the premise.

Outputs (deterministic, byte for byte):

- ``data/sample/cap_correctness.csv`` in the published schema (``caplib.data.CORRECTNESS_COLUMNS``);
  ``dataset`` is the source dataset, ``label_semantic`` the class the candidate was written for and
  ``label_semantic_manual`` holds the blind second labels of ``data/sample/second_labels/`` (empty for rows
  outside that pass; see ``caplib.data.read_label_pass``). Rows follow
  ``questions.csv``; within a question the 8 classes are shuffled by ``random.Random(f"{SEED}|{question_id}")``
  so that the class cannot be read off the row position.
- ``data/sample/cap_correctness_splits.csv`` (``row_id,split``): split by question, never by row;
  per source dataset the ``VALIDATION_PER_SOURCE`` questions of lowest ``sha256(f"{SEED}|split|{question_id}")``
  are ``validation``, the others ``test``.
- ``data/sample/cap_correctness_provenance.csv`` (``row_id,question_id,source_dataset,source_split,source_id``).

Example::

    python scripts/assemble_sample.py              # writes the three files and prints the counts
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import re
import sys
from pathlib import Path

import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from caplib.data import CORRECTNESS_COLUMNS, load_correctness, read_label_pass  # noqa: E402
from caplib.taxonomy import LABELS  # noqa: E402
from caplib.text import normalize_text  # noqa: E402

SEED = 2026
VALIDATION_PER_SOURCE = 5
SAMPLE = ROOT / "data" / "sample"
AUTHORED = tuple(label for label in LABELS if label != "exact")

# B.5: one declarative sentence, no question marks, no second-person address, no meta-commentary.
_STATEMENT_PROBLEMS = (
    (re.compile(r"\?"), "contains a question mark"),
    (re.compile(r"(?i)\b(you|your|yours)\b"), "addresses the reader (second person)"),
    (re.compile(r"(?i)\bthe (correct )?answer (is|would be)\b"), "meta-commentary ('the answer is')"),
    (re.compile(r"[.!]\s+[A-Z]"), "more than one sentence"),
)


class AuthoringError(ValueError):
    """An authoring file breaks the expected structure; the message names file, question and class."""


def statement_problems(statement: str) -> list[str]:
    """What makes ``statement`` break the B.5 statement constraints (empty list when it is fine).

    Example:
        >>> statement_problems("What is the answer?")
        ['contains a question mark', 'does not end with a period']
    """
    problems = [why for pattern, why in _STATEMENT_PROBLEMS if pattern.search(statement)]
    if not statement.rstrip().endswith("."):
        problems.append("does not end with a period")
    return problems


def load_authoring(directory: Path = SAMPLE / "authoring") -> dict[str, dict]:
    """All authoring entries by ``question_id``, checked for structure and the B.5 statement constraints."""
    entries: dict[str, dict] = {}
    for path in sorted(directory.glob("batch_*.json")):
        for entry in json.loads(path.read_text(encoding="utf-8")):
            where = f"{path.name}, {entry.get('question_id')!r}"
            if entry["question_id"] in entries:
                raise AuthoringError(f"{where}: question authored twice; keep one entry per question")
            candidates = entry["candidates"]
            if sorted(candidates) != sorted(AUTHORED):
                raise AuthoringError(f"{where}: classes {sorted(candidates)}, expected exactly {list(AUTHORED)}")
            statements = {"premise": entry["premise"], **{c: candidates[c][1] for c in AUTHORED}}
            for name, statement in statements.items():
                problems = statement_problems(statement)
                if problems:
                    raise AuthoringError(f"{where}, {name}: statement {statement!r} {'; '.join(problems)}")
            answers = [candidates[c][0].strip() for c in AUTHORED]
            if any(not a for a in answers) or len({a.lower() for a in answers}) < len(answers):
                raise AuthoringError(f"{where}: empty or repeated candidate answers {answers}")
            hypotheses = list(statements.values())
            if len(set(hypotheses)) < len(hypotheses):
                raise AuthoringError(f"{where}: two classes share a hypothesis (or one equals the premise)")
            entries[entry["question_id"]] = entry
    return entries


def assemble(questions: pd.DataFrame, authoring: dict[str, dict], seed: int = SEED,
             manual: dict[int, str] | None = None) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """(cap_correctness, splits, provenance) frames from the selected questions and their authoring entries."""
    manual = manual or {}
    missing = sorted(set(questions["question_id"]) - set(authoring))
    extra = sorted(set(authoring) - set(questions["question_id"]))
    if missing or extra:
        raise AuthoringError(f"questions without authoring: {missing}; authoring without a selected question: "
                             f"{extra}. Author the missing ones or delete the stale entries")
    validation: set[str] = set()
    for _, group in questions.groupby("source_dataset", sort=True):
        ranked = sorted(group["question_id"], key=lambda q: hashlib.sha256(f"{seed}|split|{q}".encode()).hexdigest())
        validation.update(ranked[:VALIDATION_PER_SOURCE])
    rows, splits, provenance = [], [], []
    for q in questions.itertuples(index=False):
        entry = authoring[q.question_id]
        if entry["source_id"] != q.source_id:
            raise AuthoringError(f"{q.question_id}: authored for source_id {entry['source_id']!r}, but questions.csv "
                                 f"has {q.source_id!r}; re-author it for the selected item")
        copies = [c for c in AUTHORED if normalize_text(entry["candidates"][c][0]) == normalize_text(q.gold_answer)]
        if copies:
            raise AuthoringError(f"{q.question_id}: the {copies} answer repeats the gold; only 'exact' may do that")
        candidates = {"exact": [q.gold_answer, entry["premise"]], **entry["candidates"]}
        order = list(LABELS)
        random.Random(f"{seed}|{q.question_id}").shuffle(order)
        for label in order:
            answer, hypothesis = candidates[label]
            row_id = len(rows)
            rows.append({"question": q.question, "dataset": q.source_dataset, "gold_answer": q.gold_answer,
                         "answer": answer, "hypothesis": hypothesis, "premise": entry["premise"],
                         "label_semantic": label, "label_semantic_manual": manual.get(row_id, "")})
            splits.append({"row_id": row_id, "split": "validation" if q.question_id in validation else "test"})
            provenance.append({"row_id": row_id, "question_id": q.question_id, "source_dataset": q.source_dataset,
                               "source_split": q.source_split, "source_id": q.source_id})
    return (pd.DataFrame(rows, columns=list(CORRECTNESS_COLUMNS)), pd.DataFrame(splits), pd.DataFrame(provenance))


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out-dir", type=Path, default=SAMPLE, help="where the three CSV files go")
    args = parser.parse_args(argv)
    questions = pd.read_csv(SAMPLE / "questions.csv", dtype=str, keep_default_na=False)
    data, splits, provenance = assemble(questions, load_authoring(), manual=read_label_pass(SAMPLE / "second_labels"))
    args.out_dir.mkdir(parents=True, exist_ok=True)
    paths = {name: args.out_dir / f"cap_correctness{suffix}.csv"
             for name, suffix in (("data", ""), ("splits", "_splits"), ("provenance", "_provenance"))}
    for name, frame in (("data", data), ("splits", splits), ("provenance", provenance)):
        frame.to_csv(paths[name], index=False, lineterminator="\n")
    df = load_correctness(paths["data"], splits=paths["splits"])
    print(f"{len(df)} rows, {df['question'].nunique()} questions, seed {SEED}")
    for column in ("label_semantic", "dataset", "split"):
        print(df[column].value_counts().sort_index().to_string(), end="\n\n")


if __name__ == "__main__":
    main()
