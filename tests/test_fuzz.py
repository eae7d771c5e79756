"""Property-based fuzzing of the command line's file handling (issue 15): random CSVs through
load -> score (fast metrics) -> write -> read.

Every generated file is written with Python's csv module (so it is valid CSV: quotes, embedded newlines and commas
are quoted), with cells drawn from unicode text, NA-like strings, whitespace, quotes and newlines, duplicated rows,
an extra column and random spellings of the taxonomy labels. Properties:

* ``caplib score`` either succeeds (status 0) or rejects the file (status 2) with one line that names the file and
  a row or column, never a traceback;
* an accepted file keeps every row, in order, with every cell exactly as written (the scorer adds columns, never
  edits one), and the score columns are numbers in [0, 1];
* ``caplib evaluate`` on the written file reads it back.
"""

from __future__ import annotations

import csv
from pathlib import Path

import pandas as pd
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from caplib.cli import main
from caplib.taxonomy import LABELS

METRICS = "em,acc,bleu,rouge_l"
NA_LIKE = ["NA", "N/A", "nan", "NaN", "null", "None", "#N/A", "-", "0", "", " ", "\t"]
SPELLINGS = [*LABELS, *(label.upper() for label in LABELS), *(f" {label.replace('_', ' ')} " for label in LABELS),
             "overinclusive-valid", "Exact", "unknown class"]

text = st.one_of(
    st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"), max_size=30),
    st.sampled_from(NA_LIKE),
    st.text(alphabet=" \t\n\r\"',;", max_size=6),
    st.from_regex(r"[A-Za-z ]{1,20}[.?!]?", fullmatch=True),
)


@st.composite
def tables(draw) -> tuple[list[str], list[list[str]]]:
    columns = ["question", draw(st.sampled_from(["gold_answer", "gold"])), "answer"]
    if draw(st.booleans()):
        columns.append("label_semantic")
    if draw(st.booleans()):
        columns.append(draw(st.sampled_from(["note", "row_id", "extra column", "ünïcode"])))
    columns = draw(st.permutations(columns))
    rows = draw(st.lists(st.lists(text, min_size=len(columns), max_size=len(columns)), min_size=1, max_size=6))
    for row in rows:
        if "label_semantic" in columns:
            row[columns.index("label_semantic")] = draw(st.sampled_from(SPELLINGS))
        if "row_id" in columns:
            row[columns.index("row_id")] = draw(st.sampled_from(["0", "7", "x", ""]))
    if draw(st.booleans()):
        rows = rows + rows[:1]  # a duplicated row
    return list(columns), rows


def _write(path: Path, columns: list[str], rows: list[list[str]]) -> None:
    with open(path, "w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(columns)
        writer.writerows(rows)


@pytest.fixture(scope="module")
def workdir(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("fuzz")


@settings(max_examples=150, deadline=None, derandomize=True, database=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(tables())
# found while writing this suite: a cell ending in a lone carriage return was written bare and read back as a line
# break, splitting its row in two (caplib score now quotes every text cell)
@example(table=(["label_semantic", "gold_answer", "note", "question", "answer"], [["exact", "0", "", "0", "0\r"]]))
def test_score_keeps_every_accepted_row_and_names_every_rejection(workdir, capsys, table):
    columns, rows = table
    source, out = workdir / "in.csv", workdir / "out.csv"
    out.unlink(missing_ok=True)
    _write(source, columns, rows)
    status = main(["score", str(source), "-o", str(out), "--metrics", METRICS, "--no-cache", "--no-progress"])
    err = capsys.readouterr().err
    assert "Traceback" not in err
    if status == 2:
        assert err.startswith("caplib: error: ") and str(source) in err and ("row" in err or "column" in err), err
        assert not out.exists()
        return
    assert status == 0, err
    written = pd.read_csv(out, dtype=str, keep_default_na=False)
    assert len(written) == len(rows)
    for index, column in enumerate(columns):
        if column == "label_semantic":  # normalized to the taxonomy's spelling
            assert set(written[column]) <= set(LABELS)
        else:
            assert written[column].tolist() == [row[index] for row in rows], column
    for metric in METRICS.split(","):
        values = pd.to_numeric(written[metric])
        assert values.between(0.0, 1.0).all(), metric
    if "label_semantic" in columns:
        assert main(["evaluate", str(out), "--label-column", "label_semantic"]) in (0, 2)
        assert "Traceback" not in capsys.readouterr().err
