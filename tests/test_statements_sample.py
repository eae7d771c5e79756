"""The bundled CAP-Statements sample (App. B.5) and the script that builds it, scripts/build_statements.py."""

from __future__ import annotations

import itertools
import json
import re
import shutil
from collections import Counter
from pathlib import Path

import pytest

from caplib.data import QUESTION_TYPES, STATEMENTS_COLUMNS, load_statements
from caplib.text import jaccard, normalize_text
from tests.scripts import load_script

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "data" / "sample" / "cap_statements.csv"
SPLITS = ROOT / "data" / "sample" / "cap_statements_splits.csv"
AUTHORING = ROOT / "data" / "sample" / "statements_authoring"
ACADEMIC = ("Biology", "Physics", "History", "Geography", "Chemistry", "Mathematics", "Computer Science")


build_statements = load_script("build_statements")


@pytest.fixture(scope="module")
def sample():
    return load_statements(SAMPLE, splits=SPLITS)


def test_sample_has_the_published_schema(sample):
    assert SAMPLE.read_text(encoding="utf-8").splitlines()[0] == ",".join(STATEMENTS_COLUMNS)
    assert list(sample.columns) == ["row_id", *STATEMENTS_COLUMNS, "split"]
    assert sample.id.tolist() == [f"s{i:04d}" for i in range(len(sample))]
    assert set(sample.language) == {"en"}
    assert set(sample.subject) == {"general knowledge", *ACADEMIC}


def test_sample_size_and_balance(sample):
    n = len(sample)
    assert n >= 400
    types = Counter(sample.label_question_type)
    assert set(types) == set(QUESTION_TYPES)
    for question_type, count in types.items():  # Fig. 6: no type above 27.4 %
        assert 0.20 <= count / n <= 0.30, question_type
    subjects = Counter(sample.subject)
    assert 0.45 <= subjects["general knowledge"] / n <= 0.65  # B.5 target: 56.2 %
    for subject in ACADEMIC:  # B.5 target: about 6.3 % each
        assert 0.04 <= subjects[subject] / n <= 0.09, subject


def test_no_near_duplicate_questions_remain(sample):
    # Recomputed by brute force over all pairs (B.5: Jaccard >= 0.9 of normalized question tokens).
    tokens = [frozenset(normalize_text(q).split()) for q in sample.question]
    worst = max(itertools.combinations(range(len(tokens)), 2),
                key=lambda p: len(tokens[p[0]] & tokens[p[1]]) / len(tokens[p[0]] | tokens[p[1]]))
    assert jaccard(sample.question[worst[0]], sample.question[worst[1]]) < 0.9
    assert len({normalize_text(q) for q in sample.question}) == len(sample)


def test_statements_meet_the_prompt_constraints(sample):
    second_person = re.compile(r"\byou(r|rs|rself)?\b", re.IGNORECASE)
    for row in sample.itertuples():
        assert row.statement.endswith("."), row.id
        assert "?" not in row.statement and "_" not in row.statement, row.id
        assert not second_person.search(row.statement), row.id
        assert "the answer is" not in row.statement.lower(), row.id
    blanks = sample[sample.label_question_type == "blank-spaces-task"]
    assert blanks.question.str.contains("______", regex=False).all()
    assert not blanks.statement.str.contains("_", regex=False).any()
    # The blank is filled with the answer, the rest of the question kept: "... ______ ..." -> "... Ankara ...".
    for row in blanks.itertuples():
        prefix, suffix = row.question.split("______")
        assert row.statement.lower() == (prefix + row.answer + suffix).lower(), row.id
    others = sample[sample.label_question_type != "blank-spaces-task"]
    assert not others.question.str.contains("_", regex=False).any()
    questions = sample[sample.label_question_type.isin(["short-question", "long-question"])]
    assert questions.question.str.endswith("?").all()
    completions = sample[sample.label_question_type == "sentence-to-complete"]
    assert not completions.question.str.contains("?", regex=False).any()
    long_questions = sample[sample.label_question_type == "long-question"]
    assert long_questions.question.str.contains(r"[.!?] [A-Z0-9]", regex=True).all()  # context sentence(s) first


def test_splits_are_80_10_10_stratified_by_question_type(sample):
    for question_type in QUESTION_TYPES:
        splits = Counter(sample.split[sample.label_question_type == question_type])
        n = sum(splits.values())
        assert splits["validation"] == splits["test"] == round(0.1 * n) > 0, question_type
        assert splits["train"] == n - 2 * round(0.1 * n), question_type


def test_build_reproduces_the_committed_files_byte_for_byte(tmp_path):
    out, splits_out = tmp_path / "statements.csv", tmp_path / "splits.csv"
    build_statements.main(["--out", str(out), "--splits-out", str(splits_out)])
    assert out.read_bytes() == SAMPLE.read_bytes()
    assert splits_out.read_bytes() == SPLITS.read_bytes()


def test_build_removes_exact_and_near_duplicate_questions(tmp_path):
    authoring = tmp_path / "authoring"
    shutil.copytree(AUTHORING, authoring)
    first = json.loads((AUTHORING / "short-question_1.json").read_text(encoding="utf-8"))["items"]
    original = next(item for item in first if item["question"].startswith("How many players"))
    near = dict(original, question=original["question"].replace("soccer match", "soccer football match"))
    assert 0.9 <= jaccard(near["question"], original["question"]) < 1.0
    exact = dict(original, question=original["question"].upper())
    (authoring / "short-question_99.json").write_text(
        json.dumps({"label_question_type": "short-question", "items": [near, exact]}), encoding="utf-8")
    out, splits_out = tmp_path / "statements.csv", tmp_path / "splits.csv"
    report = build_statements.build(authoring, out, splits_out)
    assert report["removed"] == ["short-question_99.json#0", "short-question_99.json#1"]
    assert report["removed_exact"] == 1
    assert out.read_bytes() == SAMPLE.read_bytes()  # first occurrences kept, ids and splits unchanged


GOOD = ("short-question", "Physics", "What is the SI unit of power?", "The watt", "The SI unit of power is the watt.")


@pytest.mark.parametrize(("field", "value", "problem"), [
    ("statement", "The SI unit of power is the watt", "end with '.'"),
    ("statement", "Is the SI unit of power the watt?", "contains '?'"),
    ("statement", "The SI unit of power is the ______.", "'_'"),
    ("statement", "Your SI unit of power is the watt.", "you/your"),
    ("statement", "The answer is the watt.", "meta-commentary"),
    ("statement", "Power is measured. The SI unit is the watt.", "more than one sentence"),
    ("subject", "Physic", "unknown subject"),
    ("question", "Name the SI unit of power.", "short-question"),
    ("answer", "The watt, named after James Watt, who improved the steam engine in the eighteenth century", "words"),
])
def test_check_triple_rejects_each_broken_constraint(field, value, problem):
    triple = dict(zip(("question_type", "subject", "question", "answer", "statement"), GOOD))
    assert build_statements.check_triple(**triple) == []
    triple[field] = value
    problems = build_statements.check_triple(**triple)
    assert any(problem in p for p in problems), problems


@pytest.mark.parametrize(("question_type", "question", "answer", "statement"), [
    ("long-question", "What is the SI unit of power?", "The watt", "The SI unit of power is the watt."),
    ("blank-spaces-task", "The SI unit of power is the watt.", "Watt", "The SI unit of power is the watt."),
    ("blank-spaces-task", "The SI unit of power is the ______.", "Watt", "The SI unit of power is the joule."),
    ("sentence-to-complete", "The SI unit of power is the…", "Watt", "The unit of power is the watt."),
    ("sentence-to-complete", "What is the SI unit of power?", "Watt", "The SI unit of power is the watt."),
])
def test_check_triple_rejects_wrong_surface_forms(question_type, question, answer, statement):
    assert build_statements.check_triple(question_type, "Physics", question, answer, statement)


def test_read_authoring_names_file_and_item_of_an_invalid_triple(tmp_path):
    item = {"subject": "Physics", "question": "What is the SI unit of power?", "answer": "The watt",
            "statement": "The answer is the watt."}
    (tmp_path / "short-question_1.json").write_text(
        json.dumps({"label_question_type": "short-question", "items": [item]}), encoding="utf-8")
    with pytest.raises(SystemExit, match=r"short-question_1\.json, item 0: statement contains meta-commentary"):
        build_statements.read_authoring(tmp_path)
