"""Build the bundled CAP-Statements sample (``data/sample/cap_statements.csv`` + ``cap_statements_splits.csv``).

The paper's CAP-Statements (App. B.5) holds 11,000 [question, answer, statement] triples generated per
(subject, question-type) cell under a fixed prompt, deduplicated, and split 8,800 / 1,100 / 1,100 (Tab. 1).
The bundled sample is a small hand-authored set written to the same prompt constraints. Its working files
are ``data/sample/statements_authoring/<question type>_<chunk>.json``, each
``{"label_question_type": ..., "items": [{"subject", "question", "answer", "statement"}, ...]}``.
This script rebuilds the sample from them, byte for byte:

1. read the authoring files in (question type of Tab. 9, chunk) order;
2. validate every triple against B.5's prompt constraints (``check_triple``): the question has the
   surface form of its type, the answer is a short phrase, the statement is one declarative sentence
   ending in a period with no question mark, no ``_`` blank, no second-person address and no
   meta-commentary; blank-spaces and sentence-completion statements fill in the question verbatim;
3. drop exact and near-duplicate questions (B.5: normalized-text Jaccard >= 0.9 on the question field,
   ``caplib.text.near_duplicates``), keeping the first occurrence;
4. assign ids ``s0000``, ``s0001``, ... in that order and a train / validation / test split of 80 / 10 / 10
   (Tab. 1) stratified by question type, drawn with ``numpy.random.default_rng(SEED)``;
5. write both CSVs and re-read them with ``caplib.data.load_statements``.

Example::

    python scripts/build_statements.py
    python scripts/build_statements.py --out /tmp/s.csv --splits-out /tmp/s_splits.csv
"""

from __future__ import annotations

import argparse
import csv
import json
import re
import sys
from collections import Counter
from pathlib import Path
from typing import Sequence

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from caplib.data import QUESTION_TYPES, STATEMENTS_COLUMNS, load_statements  # noqa: E402
from caplib.text import near_duplicates, normalize_text  # noqa: E402

SEED = 2026
LANGUAGE = "en"
#: B.5: "general knowledge" plus seven academic subjects, spelled as in the paper.
SUBJECTS: tuple[str, ...] = ("general knowledge", "Biology", "Physics", "History", "Geography", "Chemistry",
                             "Mathematics", "Computer Science")
#: Tab. 1: 8,800 / 1,100 / 1,100 of 11,000.
SPLIT_FRACTIONS = {"validation": 0.1, "test": 0.1}
DEDUP_THRESHOLD = 0.9  # B.5
MAX_ANSWER_WORDS = 12  # "a phrase or short sentence"
BLANK = "______"
AUTHORING = ROOT / "data" / "sample" / "statements_authoring"
OUTPUT = ROOT / "data" / "sample" / "cap_statements.csv"
SPLITS_OUTPUT = ROOT / "data" / "sample" / "cap_statements_splits.csv"
FIELDS = ("subject", "question", "answer", "statement")

_SECOND_PERSON = re.compile(r"\b(?:you|your|yours|yourself|yourselves)\b", re.IGNORECASE)
_META = re.compile(r"\bthe (?:correct )?answer (?:is|would be)\b", re.IGNORECASE)
# A sentence boundary: ". Next", "? Next", but not after an initial as in "J. K. Rowling".
_SENTENCE_BREAK = re.compile(r"(?<!\b[A-Z])[.?!]\s+[A-Z0-9]")
_COMPLETE_PREFIX = "Complete the sentence: "
_ELLIPSIS = "…"


def _fill(template: str, statement: str) -> str | None:
    """The text that fills the gap of ``template`` (a prefix and suffix around ``BLANK``) in ``statement``.

    The statement must keep the rest of the template verbatim (up to letter case of the prefix, so that a
    blank opening the sentence may be filled with a capitalized word); otherwise None.

    Example:
        >>> _fill("The capital of Turkey is ______.", "The capital of Turkey is Ankara.")
        'Ankara'
    """
    prefix, suffix = template.split(BLANK)
    lead = len(prefix)
    if not (statement[:lead].lower() == prefix.lower() and statement.endswith(suffix)
            and len(statement) > lead + len(suffix)):
        return None
    return statement[lead:len(statement) - len(suffix)]


def check_triple(question_type: str, subject: str, question: str, answer: str, statement: str) -> list[str]:
    """Problems with one triple under B.5's prompt constraints (empty list: the triple is valid).

    Example:
        >>> check_triple("short-question", "Physics", "What is the SI unit of power?", "The watt",
        ...              "The SI unit of power is the watt.")
        []
        >>> check_triple("short-question", "Physics", "What is the SI unit of power?", "The watt",
        ...              "The answer is the watt?")
        ["statement must end with '.'", "statement contains '?'", 'statement contains meta-commentary']
    """
    problems: list[str] = []
    if question_type not in QUESTION_TYPES:
        return [f"unknown question type {question_type!r}; use one of {list(QUESTION_TYPES)}"]
    if subject not in SUBJECTS:
        problems.append(f"unknown subject {subject!r}; use one of {list(SUBJECTS)}")
    for name, value in (("question", question), ("answer", answer), ("statement", statement)):
        if not value.strip() or value != value.strip() or "\n" in value:
            problems.append(f"{name} is empty, has surrounding whitespace or a line break")
    # The statement: "a single declarative sentence ... with no question marks, no second-person address,
    # and no meta-commentary"; "no underscores remain" for blanks.
    if not statement.endswith("."):
        problems.append("statement must end with '.'")
    if "?" in statement:
        problems.append("statement contains '?'")
    if "_" in statement:
        problems.append("statement contains '_' (an unfilled blank)")
    if _SECOND_PERSON.search(statement):
        problems.append("statement addresses the reader (you/your)")
    if _META.search(statement):
        problems.append("statement contains meta-commentary")
    if _SENTENCE_BREAK.search(statement[:-1]):
        problems.append("statement has more than one sentence")
    # The answer: "a phrase or short sentence; do not explain or justify it".
    if len(answer.split()) > MAX_ANSWER_WORDS:
        problems.append(f"answer has more than {MAX_ANSWER_WORDS} words")
    # The question: "must match the surface form of the specified type" (Tab. 9, Tab. 10).
    if question_type != "blank-spaces-task" and "_" in question:
        problems.append("only blank-spaces-task questions contain '_'")
    if question_type == "short-question":
        if not question.endswith("?") or _SENTENCE_BREAK.search(question):
            problems.append("a short-question is one direct question ending with '?'")
    elif question_type == "long-question":
        if not question.endswith("?") or not _SENTENCE_BREAK.search(question):
            problems.append("a long-question is context sentence(s) followed by a question ending with '?'")
    elif question_type == "blank-spaces-task":
        if question.count(BLANK) != 1 or "?" in question:
            problems.append(f"a blank-spaces-task question has exactly one blank {BLANK!r} and no '?'")
        elif (filled := _fill(question, statement)) is None or filled.lower() != answer.lower():
            problems.append("the statement must be the question with the blank filled in by the answer")
    elif question_type == "sentence-to-complete":
        if "?" in question:
            problems.append("a sentence-to-complete question is a stem or prompt without '?'")
        elif question.endswith(_ELLIPSIS):
            stem = question.removeprefix(_COMPLETE_PREFIX)[: -len(_ELLIPSIS)]
            filled = _fill(stem + " " + BLANK + ".", statement)
            if filled is None or filled.lower() not in {answer.lower(), "the " + answer.lower()}:
                problems.append("the statement must complete the stem with the answer")
        elif not question.endswith("."):
            problems.append("a sentence-to-complete question ends with '…' (stem) or '.' (prompt)")
    return problems


def read_authoring(directory: Path) -> list[dict[str, str]]:
    """All triples of the authoring files, in (Tab. 9 question type, chunk number) order, validated.

    Raises:
        SystemExit: listing every invalid triple as ``file, item N: problem``.
    """
    files = sorted(directory.glob("*.json"))
    if not files:
        raise SystemExit(f"no authoring files *.json in {directory}")

    def order(path: Path) -> tuple[int, int]:
        kind, _, chunk = path.stem.rpartition("_")
        if kind not in QUESTION_TYPES or not chunk.isdigit():
            raise SystemExit(f"{path}: the file name must be <question type>_<chunk number>.json with a "
                             f"question type from {list(QUESTION_TYPES)}")
        return QUESTION_TYPES.index(kind), int(chunk)

    rows: list[dict[str, str]] = []
    problems: list[str] = []
    for path in sorted(files, key=order):
        document = json.loads(path.read_text(encoding="utf-8"))
        question_type = document.get("label_question_type")
        if question_type != path.stem.rpartition("_")[0]:
            problems.append(f"{path.name}: label_question_type {question_type!r} does not match the file name")
            continue
        for number, item in enumerate(document.get("items", [])):
            if not isinstance(item, dict) or set(item) != set(FIELDS) or not all(
                    isinstance(item[f], str) for f in FIELDS):
                problems.append(f"{path.name}, item {number}: needs exactly the string fields {list(FIELDS)}")
                continue
            problems += [f"{path.name}, item {number}: {p}"
                         for p in check_triple(question_type, **{f: item[f] for f in FIELDS})]
            rows.append({**item, "label_question_type": question_type, "source": f"{path.name}#{number}"})
    if problems:
        raise SystemExit(f"{len(problems)} invalid triple(s) in {directory}:\n  " + "\n  ".join(problems)
                         + "\nTo fix: edit these items so they meet the B.5 prompt constraints.")
    return rows


def deduplicate(rows: Sequence[dict[str, str]]) -> tuple[list[dict[str, str]], list[dict[str, str]]]:
    """Split rows into kept and removed: exact and near-duplicate questions (B.5), first occurrence kept."""
    drop = set(near_duplicates([row["question"] for row in rows], threshold=DEDUP_THRESHOLD))
    kept = [row for i, row in enumerate(rows) if i not in drop]
    removed = [row for i, row in enumerate(rows) if i in drop]
    return kept, removed


def assign_splits(question_types: Sequence[str], seed: int = SEED) -> list[str]:
    """80 / 10 / 10 train / validation / test split stratified by question type (Tab. 1), seeded.

    Example:
        >>> sorted(Counter(assign_splits(["short-question"] * 20)).items())
        [('test', 2), ('train', 16), ('validation', 2)]
    """
    rng = np.random.default_rng(seed)
    splits = ["train"] * len(question_types)
    for question_type in QUESTION_TYPES:
        members = [i for i, t in enumerate(question_types) if t == question_type]
        order = rng.permutation(len(members))
        start = 0
        for split, fraction in SPLIT_FRACTIONS.items():
            size = round(fraction * len(members))
            for position in order[start:start + size]:
                splits[members[position]] = split
            start += size
    return splits


def _write_csv(path: Path, header: Sequence[str], rows: Sequence[Sequence[str]]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.writer(handle, lineterminator="\n")
        writer.writerow(header)
        writer.writerows(rows)


def build(authoring: Path = AUTHORING, out: Path = OUTPUT, splits_out: Path = SPLITS_OUTPUT,
          seed: int = SEED) -> dict[str, object]:
    """Rebuild the sample files; returns the counts that ``main`` reports."""
    rows = read_authoring(authoring)
    kept, removed = deduplicate(rows)
    exact = len(rows) - len({normalize_text(row["question"]) for row in rows})
    ids = [f"s{i:04d}" for i in range(len(kept))]
    splits = assign_splits([row["label_question_type"] for row in kept], seed=seed)
    _write_csv(out, STATEMENTS_COLUMNS,
               [[id_, LANGUAGE, row["subject"], row["question"], row["answer"], row["statement"],
                 row["label_question_type"]] for id_, row in zip(ids, kept)])
    _write_csv(splits_out, ("id", "split"), list(zip(ids, splits)))
    frame = load_statements(out, splits=splits_out)
    return {
        "authored": len(rows),
        "removed": [row["source"] for row in removed],
        "removed_exact": exact,
        "rows": len(frame),
        "per_type": Counter(frame.label_question_type),
        "per_subject": Counter(frame.subject),
        "per_split": Counter(frame.split),
        "per_type_split": Counter(zip(frame.label_question_type, frame.split)),
    }


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--authoring", type=Path, default=AUTHORING, help="folder of the authoring JSON files")
    parser.add_argument("--out", type=Path, default=OUTPUT, help="statements CSV to write")
    parser.add_argument("--splits-out", type=Path, default=SPLITS_OUTPUT, help="id,split CSV to write")
    parser.add_argument("--seed", type=int, default=SEED, help="seed of the split draw")
    args = parser.parse_args(argv)
    report = build(args.authoring, args.out, args.splits_out, args.seed)
    removed = report["removed"]
    print(f"authored {report['authored']} triples; deduplication (B.5, question Jaccard >= {DEDUP_THRESHOLD}) "
          f"removed {len(removed)} ({report['removed_exact']} exact){': ' + ', '.join(removed) if removed else ''}")
    print(f"wrote {report['rows']} rows to {args.out} and their splits to {args.splits_out} (seed {args.seed})")
    for name in ("per_type", "per_subject", "per_split", "per_type_split"):
        counts = report[name]
        print(f"{name}: " + ", ".join(f"{k}={v}" for k, v in sorted(counts.items(), key=str)))


if __name__ == "__main__":
    main()
