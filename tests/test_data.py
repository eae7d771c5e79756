"""Tests of caplib.data: schemas, validation errors, splits and cleaning rules."""

from __future__ import annotations

import csv
import functools
import http.server
import shutil
import threading
from pathlib import Path

import pandas as pd
import pytest

from caplib import book, data, datasets
from caplib.text import content_id
from caplib.data import (
    CORRECTNESS_COLUMNS,
    OFFICIAL_URLS,
    QUESTION_TYPES,
    STATEMENTS_COLUMNS,
    DataValidationError,
    DroppedRowsWarning,
    apply_cleaning_rules,
    load_correctness,
    load_llm_answers,
    load_sample,
    load_statements,
    normalize_question_type,
)

FIXTURES = Path(__file__).parent / "fixtures"
CORRECTNESS = FIXTURES / "cap_correctness.csv"
CORRECTNESS_SPLITS = FIXTURES / "cap_correctness_splits.csv"
STATEMENTS = FIXTURES / "cap_statements.csv"
STATEMENTS_SPLITS = FIXTURES / "cap_statements_splits.csv"


def read_rows(path: Path) -> tuple[list[str], list[list[str]]]:
    with open(path, newline="", encoding="utf-8") as handle:
        header, *rows = list(csv.reader(handle))
    return header, rows


def write_rows(path: Path, header: list[str], rows: list[list[str]]) -> Path:
    with open(path, "w", newline="", encoding="utf-8") as handle:
        csv.writer(handle).writerows([header, *rows])
    return path


def mutated(tmp_path: Path, source: Path, row: int, column: str, value: str) -> Path:
    """A copy of `source` with one cell replaced."""
    header, rows = read_rows(source)
    rows[row][header.index(column)] = value
    return write_rows(tmp_path / source.name, header, rows)


# --- valid files ---------------------------------------------------------------------------------------------


def test_correctness_loads_with_exact_shape_and_values():
    df = load_correctness(CORRECTNESS)
    assert df.shape == (5, 9)
    assert list(df.columns) == ["row_id", *CORRECTNESS_COLUMNS]
    assert df.row_id.tolist() == [0, 1, 2, 3, 4]
    assert df.label_semantic.tolist() == [
        "exact", "alternative_correct", "contradictory", "overinclusive_valid", "overinclusive_invalid"]
    # empty and whitespace-only manual labels are NA; the others are normalized
    assert df.label_semantic_manual.isna().tolist() == [False, True, False, True, False]
    assert df.label_semantic_manual[[0, 2, 4]].tolist() == ["exact", "contradictory", "overinclusive_invalid"]
    # a quoted cell with a comma and a line break stays one cell
    assert df.question[1] == "Name a planet, other than Earth, with liquid water\non its surface?"
    assert df.dataset.tolist() == ["OpenBookQA", "ARC", "MMLU", "ARC", "MMLU"]


def test_none_and_na_strings_are_kept():
    df = load_correctness(CORRECTNESS)
    assert df.gold_answer[1] == "None"
    assert df.answer[2] == "None"
    assert df.hypothesis[4].startswith("NA is")
    assert df.answer.notna().all()


def test_correctness_splits_cover_rows_in_file_order():
    df = load_correctness(CORRECTNESS, splits=CORRECTNESS_SPLITS)
    assert df.shape == (5, 10)
    assert df.columns[-1] == "split"
    # splits file lists row_ids out of order (3, 0, 4, 1, 2) and spells one split "Test"
    assert df.split.tolist() == ["validation", "test", "validation", "test", "test"]


def test_statements_loads_with_splits_file():
    df = load_statements(STATEMENTS, splits=STATEMENTS_SPLITS)
    assert df.shape == (4, 9)
    assert list(df.columns) == ["row_id", *STATEMENTS_COLUMNS, "split"]
    assert df.id.tolist() == ["s1", "s2", "s3", "s4"]
    assert df.label_question_type.tolist() == list(QUESTION_TYPES)  # Tab. 9 order in the fixture
    assert df.split.tolist() == ["train", "train", "validation", "test"]  # "dev" read as validation
    assert df.subject[1] == "" and df.language[3] == ""  # optional cells may be empty


def test_statements_loads_with_split_column(tmp_path):
    header, rows = read_rows(STATEMENTS)
    path = write_rows(tmp_path / "s.csv", header + ["split"],
                      [row + [split] for row, split in zip(rows, ["train", "validation", "TEST", "val"])])
    df = load_statements(path)
    assert df.split.tolist() == ["train", "validation", "test", "validation"]
    assert len(df) == 4
    with pytest.raises(DataValidationError, match="splits file") as err:
        load_statements(path, splits=STATEMENTS_SPLITS)
    assert err.value.column == "split"


@pytest.mark.parametrize("variant, expected", [
    ("short-question", "short-question"), ("Short question", "short-question"),
    ("SHORT_QUESTION", "short-question"), ("sentence completion", "sentence-to-complete"),
    ("Long context", "long-question"), ("long question", "long-question"),
    ("Blank-space task", "blank-spaces-task"), ("blank spaces task", "blank-spaces-task"),
])
def test_question_type_variants(variant, expected):
    assert normalize_question_type(variant) == expected


# --- validation errors: each names file, row and column --------------------------------------------------------


def assert_located(err: pytest.ExceptionInfo, file: Path, row: int | None, column: str | None) -> None:
    message = str(err.value)
    assert err.value.file == str(file) and str(file) in message
    assert err.value.row == row and err.value.column == column
    if row is not None:
        assert f"row {row} (line " in message
    if column is not None:
        assert repr(column) in message
    assert "To fix:" in message


@pytest.mark.parametrize("row, column, value, pattern", [
    (2, "label_semantic", "great", "unknown value 'great'"),
    (4, "label_semantic_manual", "mostly right", "unknown value 'mostly right'"),
    (1, "label_semantic", "   ", "empty cell"),
    (0, "premise", " \t", "empty cell"),
    (4, "hypothesis", "", "empty cell"),
    (2, "question", "", "empty cell"),
    (1, "gold_answer", "", "empty cell"),
])
def test_correctness_cell_errors(tmp_path, row, column, value, pattern):
    path = mutated(tmp_path, CORRECTNESS, row, column, value)
    with pytest.raises(DataValidationError, match=pattern) as err:
        load_correctness(path)
    assert_located(err, path, row, column)


def test_error_gives_editor_line(tmp_path):
    # row 1 spans lines 3-4 (quoted line break), so row 2 starts on line 5
    path = mutated(tmp_path, CORRECTNESS, 2, "label_semantic", "great")
    with pytest.raises(DataValidationError, match=r"row 2 \(line 5\)"):
        load_correctness(path)


def test_empty_optional_cells_are_allowed(tmp_path):
    path = mutated(tmp_path, CORRECTNESS, 0, "dataset", "")
    assert load_correctness(path).dataset[0] == ""


def test_missing_column(tmp_path):
    header, rows = read_rows(CORRECTNESS)
    i = header.index("premise")
    path = write_rows(tmp_path / "c.csv", header[:i] + header[i + 1:], [r[:i] + r[i + 1:] for r in rows])
    with pytest.raises(DataValidationError, match="missing column") as err:
        load_correctness(path)
    assert_located(err, path, None, "premise")


def test_extra_column(tmp_path):
    header, rows = read_rows(CORRECTNESS)
    path = write_rows(tmp_path / "c.csv", header + ["notes"], [r + ["x"] for r in rows])
    with pytest.raises(DataValidationError, match="unexpected column") as err:
        load_correctness(path)
    assert_located(err, path, None, "notes")


def test_duplicated_header_column(tmp_path):
    header, rows = read_rows(CORRECTNESS)
    path = write_rows(tmp_path / "c.csv", header + ["answer"], [r + ["x"] for r in rows])
    with pytest.raises(DataValidationError, match="duplicated header") as err:
        load_correctness(path)
    assert_located(err, path, None, "answer")


def test_row_with_wrong_field_count(tmp_path):
    header, rows = read_rows(CORRECTNESS)
    rows[3] = rows[3] + ["stray"]
    path = write_rows(tmp_path / "c.csv", header, rows)
    with pytest.raises(DataValidationError, match=r"has 9 fields but the header has 8") as err:
        load_correctness(path)
    assert_located(err, path, 3, None)


def test_empty_file(tmp_path):
    path = tmp_path / "c.csv"
    path.write_text("\n")
    with pytest.raises(DataValidationError, match="empty") as err:
        load_correctness(path)
    assert err.value.file == str(path)


@pytest.mark.parametrize("lines, row, column, pattern", [
    (["0,validation", "1,test", "2,test", "3,test", "3,validation", "4,test"], 3, "row_id", "more than once"),
    (["0,validation", "1,test", "2,test", "4,test"], 3, "row_id", "no split"),
    (["0,validation", "1,test", "2,test", "3,test", "4,test", "5,test"], 5, "row_id", "row_id 5 is not in"),
    (["0,validation", "one,test", "2,test", "3,test", "4,test"], 1, "row_id", "not a non-negative integer"),
    (["0,validation", "1,test", "2,train", "3,test", "4,test"], 2, "split", "unknown value 'train'"),
    (["0,validation", "1,", "2,test", "3,test", "4,test"], 1, "split", "empty cell"),
])
def test_correctness_splits_errors(tmp_path, lines, row, column, pattern):
    splits = tmp_path / "splits.csv"
    splits.write_text("\n".join(["row_id,split", *lines]) + "\n")
    with pytest.raises(DataValidationError, match=pattern) as err:
        load_correctness(CORRECTNESS, splits=splits)
    # a data row without a split is reported against the data file; the other errors against the splits file
    assert_located(err, CORRECTNESS if pattern == "no split" else splits, row, column)


def test_correctness_splits_file_needs_exact_columns(tmp_path):
    splits = tmp_path / "splits.csv"
    splits.write_text("id,split\n0,test\n")
    with pytest.raises(DataValidationError, match="missing column") as err:
        load_correctness(CORRECTNESS, splits=splits)
    assert_located(err, splits, None, "row_id")


@pytest.mark.parametrize("row, column, value, pattern", [
    (2, "id", "s1", "duplicate value 's1'"),
    (1, "label_question_type", "essay", "unknown value 'essay'"),
    (3, "statement", " ", "empty cell"),
    (2, "label_question_type", "", "empty cell"),
])
def test_statements_cell_errors(tmp_path, row, column, value, pattern):
    path = mutated(tmp_path, STATEMENTS, row, column, value)
    with pytest.raises(DataValidationError, match=pattern) as err:
        load_statements(path)
    first = 0 if column == "id" and value == "s1" else row  # both duplicates are listed, the first is s1's row
    assert_located(err, path, first, column)


@pytest.mark.parametrize("lines, file, row, pattern", [
    (["s1,train", "s2,train", "s3,dev", "s4,test", "s5,test"], "splits", 4, "'s5' is not in"),
    (["s1,train", "s2,train", "s4,test"], "data", 2, "no split"),
    (["s1,train", "s2,train", "s3,dev", "s4,test", "s1,test"], "splits", 0, "more than once"),
])
def test_statements_splits_errors(tmp_path, lines, file, row, pattern):
    splits = tmp_path / "splits.csv"
    splits.write_text("\n".join(["id,split", *lines]) + "\n")
    with pytest.raises(DataValidationError, match=pattern) as err:
        load_statements(STATEMENTS, splits=splits)
    assert_located(err, splits if file == "splits" else STATEMENTS, row, "id")


def test_statements_split_column_unknown_name(tmp_path):
    header, rows = read_rows(STATEMENTS)
    path = write_rows(tmp_path / "s.csv", header + ["split"],
                      [row + [split] for row, split in zip(rows, ["train", "holdout", "test", "test"])])
    with pytest.raises(DataValidationError, match="unknown value 'holdout'") as err:
        load_statements(path)
    assert_located(err, path, 1, "split")


def test_error_lists_several_rows(tmp_path):
    header, rows = read_rows(CORRECTNESS)
    for row in rows:
        row[header.index("label_semantic")] = "bogus"
    path = write_rows(tmp_path / "c.csv", header, rows)
    with pytest.raises(DataValidationError) as err:
        load_correctness(path)
    assert "row 0 (line 2), 1 (line 3), 2 (line 5), 3 (line 6), 4 (line 7)" in str(err.value)


# --- missing files and URLs --------------------------------------------------------------------------------------


def test_missing_local_file_points_to_official_files(tmp_path):
    with pytest.raises(FileNotFoundError) as err:
        load_correctness(tmp_path / "CAP-Correctness.csv")
    assert OFFICIAL_URLS["CAP-Correctness.csv"] in str(err.value)
    assert "load_sample" in str(err.value)
    with pytest.raises(FileNotFoundError, match="CAP-Statements.csv"):
        load_statements(tmp_path / "nope.csv")


@pytest.fixture
def http_server():
    """A local HTTP server serving tests/fixtures (no network needed)."""
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(FIXTURES))
    handler.log_message = lambda *args: None  # type: ignore[assignment]
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


def test_url_loads_like_a_path(http_server):
    from_url = load_correctness(f"{http_server}/cap_correctness.csv", splits=f"{http_server}/cap_correctness_splits.csv")
    pd.testing.assert_frame_equal(from_url, load_correctness(CORRECTNESS, splits=CORRECTNESS_SPLITS))


def test_unfetchable_url_points_to_official_files(http_server):
    with pytest.raises(ConnectionError) as err:
        load_statements(f"{http_server}/missing.csv")
    message = str(err.value)
    assert OFFICIAL_URLS["CAP-Statements.csv"] in message and "local path" in message


def test_official_urls():
    assert set(OFFICIAL_URLS) == {"CAP-Correctness.csv", "CAP-Correctness-splits.csv", "CAP-Statements.csv"}
    commits = {"CAP-Correctness.csv": "4491248acba112183356df05c1f74fc0d7ece826",  # MIRROR.md's pinned commits
               "CAP-Correctness-splits.csv": "fef4a58cf08465cb829142a3f1548f800d4cdf04",
               "CAP-Statements.csv": "bdc6a5a4b68e74f868aa6d105d0bb6a15bcfd026"}
    for name, url in OFFICIAL_URLS.items():
        assert url == f"https://raw.githubusercontent.com/ElitsaY/Correctness_eval/{commits[name]}/data/{name}"


# --- bundled samples ---------------------------------------------------------------------------------------------


def test_load_sample_finds_files_and_splits(tmp_path, monkeypatch):
    monkeypatch.setattr(data, "SAMPLE_DIR", tmp_path)
    with pytest.raises(FileNotFoundError, match="cap_correctness.csv") as err:
        load_sample("cap_correctness")
    assert OFFICIAL_URLS["CAP-Correctness.csv"] in str(err.value)
    shutil.copy(CORRECTNESS, tmp_path / "cap_correctness.csv")
    assert "split" not in load_sample("cap_correctness").columns
    shutil.copy(CORRECTNESS_SPLITS, tmp_path / "cap_correctness_splits.csv")
    assert load_sample("cap_correctness").split.tolist() == ["validation", "test", "validation", "test", "test"]
    shutil.copy(STATEMENTS, tmp_path / "cap_statements.csv")
    shutil.copy(STATEMENTS_SPLITS, tmp_path / "cap_statements_splits.csv")
    assert load_sample("cap_statements").split.tolist() == ["train", "train", "validation", "test"]
    with pytest.raises(ValueError, match="cap_correctness, cap_statements, llm_answers"):
        load_sample("cap-correctness")


def test_sample_dir_is_repository_data_sample():
    assert data.SAMPLE_DIR == Path(__file__).resolve().parent.parent / "data" / "sample"


@pytest.mark.parametrize("name", ["cap_correctness", "cap_statements", "llm_answers"])
def test_bundled_samples_validate(name):
    if not (data.SAMPLE_DIR / f"{name}.csv").is_file():
        pytest.skip(f"data/sample/{name}.csv not bundled yet")
    df = load_sample(name)
    assert len(df) > 0 and df.row_id.tolist() == list(range(len(df)))


def test_llm_answers_extra_columns_and_labels(tmp_path):
    header = ["question", "gold_answer", "answer", "model", "label_semantic", "temperature"]
    rows = [["Q1", "Paris", "None", "m1", "Part", "0.7"], ["Q2", "Rome", "Rome", "m2", "exact", "0"]]
    df = load_llm_answers(write_rows(tmp_path / "a.csv", header, rows))
    assert list(df.columns) == ["row_id", *header]
    assert df.label_semantic.tolist() == ["partial", "exact"]
    assert df.answer[0] == "None" and df.temperature.tolist() == ["0.7", "0"]
    path = write_rows(tmp_path / "b.csv", [h for h in header if h != "model"],
                      [[c for h, c in zip(header, r) if h != "model"] for r in rows])
    with pytest.raises(DataValidationError, match="missing column") as err:
        load_llm_answers(path)
    assert_located(err, path, None, "model")
    path = write_rows(tmp_path / "c.csv", header, [rows[0], ["Q2", "Rome", "Rome", "", "exact", "0"]])
    with pytest.raises(DataValidationError, match="empty cell") as err:
        load_llm_answers(path)
    assert_located(err, path, 1, "model")


# --- cleaning rules (B.3 / Sec. 5) -----------------------------------------------------------------------------


def test_apply_cleaning_rules():
    df = pd.DataFrame({
        "question": [
            "Which of the following is a mammal?",
            "What is the largest planet?",
            "Of the planets, WHICH  OF THE\nFOLLOWING is red?",
            "Which planet is red?",
            "Pick one: which of the following metals is liquid?",
            "Which statement is true?",
            "Which statement is false?",
            "Which of these is a fish?",
        ],
        "gold_answer": ["Whale", "Jupiter", "Mars", "All of the above.", "None of the above",
                        "none of above", "All of above answers", "Both of the above"],
    }, index=[10, 11, 12, 13, 14, 15, 16, 17])
    kept, dropped = apply_cleaning_rules(df)
    assert kept.index.tolist() == [11, 16, 17]
    assert dropped.index.tolist() == [10, 12, 13, 14, 15]
    assert dropped.reason.tolist() == [
        "which-of-the-following question",
        "which-of-the-following question",
        "all/none-of-the-above gold",
        "which-of-the-following question; all/none-of-the-above gold",
        "all/none-of-the-above gold",
    ]
    assert list(kept.columns) == ["question", "gold_answer"]
    assert len(kept) + len(dropped) == len(df)


def test_apply_cleaning_rules_custom_columns():
    df = pd.DataFrame({"q": ["which of the following?"], "g": ["x"]})
    kept, dropped = apply_cleaning_rules(df, question_column="q", gold_column="g")
    assert kept.empty and dropped.reason.tolist() == ["which-of-the-following question"]
    with pytest.raises(DataValidationError, match="'question'") as err:
        apply_cleaning_rules(df)
    assert err.value.column == "question"


def official_profile(directory: Path) -> Path:
    """A copy of the paper profile whose data directory is ``directory/official`` (read against the file)."""
    import yaml

    settings = yaml.safe_load((Path(data.__file__).parent / "profiles" / "paper.yaml").read_text())
    settings["data"] = "./official"
    (directory / "official").mkdir(exist_ok=True)
    (directory / "mine.yaml").write_text(yaml.safe_dump(settings))
    return directory / "mine.yaml"


def test_load_dataset_profiles(tmp_path):
    offline = datasets.load_dataset("cap_correctness", "offline")
    assert len(offline) == 1024 and set(offline["split"]) == {"validation", "test"}
    profile = official_profile(tmp_path)
    with pytest.raises(FileNotFoundError, match="caplib fetch --profile"):
        datasets.load_dataset("cap_correctness", profile)
    fixture = Path(__file__).parent / "fixtures"
    (tmp_path / "official" / "CAP-Correctness.csv").write_bytes((fixture / "cap_correctness.csv").read_bytes())
    (tmp_path / "official" / "CAP-Correctness-splits.csv").write_bytes(
        (fixture / "cap_correctness_splits.csv").read_bytes())
    official = datasets.load_dataset("cap_correctness", profile)
    assert len(official) == 5 and "split" in official
    with pytest.raises(ValueError, match="unknown dataset"):
        datasets.load_dataset("llm_answers")


def test_load_dataset_or_reason_gives_the_reason_a_chapter_shows(tmp_path):
    frame, reason = datasets.load_dataset_or_reason("cap_statements", official_profile(tmp_path))  # no files there
    assert frame is None and OFFICIAL_URLS["CAP-Statements.csv"] in reason and str(tmp_path) in reason
    assert "caplib fetch --profile" in reason
    note = book.unavailable_note("CAP-Statements", reason)
    assert note.startswith("**CAP-Statements is not available") and f"> {reason}" in note
    assert all(f"[{file}]({url})" in note for file, url in OFFICIAL_URLS.items()) and str(tmp_path) in note
    assert "caplib fetch --profile paper" in note
    frame, reason = datasets.load_dataset_or_reason("cap_statements", "offline")
    assert reason is None and len(frame) == len(load_sample("cap_statements"))
    with pytest.raises(ValueError, match="unknown dataset"):  # a wrong name is an error, not a skipped chapter
        datasets.load_dataset_or_reason("llm_answers")


def test_a_parquet_file_is_read_as_its_csv_is(tmp_path):
    pytest.importorskip("pyarrow")
    from caplib.data import load_scoring_input

    source = Path(__file__).resolve().parents[1] / "data" / "sample" / "cap_correctness.csv"
    rows = pd.read_csv(source, dtype=str, keep_default_na=False).head(40)
    rows.loc[3, "answer"] = "None"  # strings that pandas would read as missing stay strings
    csv_path, parquet_path = tmp_path / "rows.csv", tmp_path / "rows.parquet"
    rows.to_csv(csv_path, index=False)
    rows.to_parquet(parquet_path, index=False)
    from_csv, gold_csv = load_scoring_input(csv_path)
    from_parquet, gold_parquet = load_scoring_input(parquet_path)
    pd.testing.assert_frame_equal(from_parquet, from_csv)
    assert gold_parquet == gold_csv == "gold_answer" and from_parquet.loc[3, "answer"] == "None"
    rows.assign(question=[""] + list(rows["question"][1:])).to_parquet(parquet_path, index=False)
    with pytest.raises(ValueError, match=r"rows.parquet, row 0 \(line 2\)"):
        load_scoring_input(parquet_path)  # an empty question, named by row as in a CSV


def test_a_row_without_an_answer_is_dropped_with_a_note(tmp_path):
    path = mutated(tmp_path, CORRECTNESS, 3, "answer", "")
    with pytest.warns(DroppedRowsWarning, match=r"dropped 1 row\(s\) without an answer, row_id 3 \(line"):
        df = load_correctness(path)
    full = load_correctness(CORRECTNESS)
    assert df.attrs["dropped_rows"] == {3: "no answer"}
    assert 3 not in set(df.row_id) and len(df) == len(full) - 1
    assert df.row_id.tolist() == [r for r in full.row_id if r != 3]  # the others keep their row_id
    with pytest.raises(DataValidationError, match="empty cell") as err:
        load_correctness(path, empty_answers="raise")
    assert_located(err, path, 3, "answer")


def test_statements_rows_without_an_id_get_a_stable_one_from_their_content(tmp_path):
    path = mutated(tmp_path, STATEMENTS, 0, "id", "")
    first = load_statements(path)
    header, rows = read_rows(path)
    moved = write_rows(tmp_path / "moved.csv", header, rows[1:] + rows[:1])  # the same row, last
    assert first.id[0] == load_statements(moved).id.iloc[-1] == content_id(*first.loc[0, ["question", "answer",
                                                                                          "statement"]])
    assert first.id[0].startswith("sha-") and first.id[1:].tolist() == load_statements(STATEMENTS).id[1:].tolist()


@pytest.mark.parametrize("spelling, canonical", [("short_question", "short-question"),
                                                 ("sentence_to_complete", "sentence-to-complete"),
                                                 ("long_question_with_context", "long-question"),
                                                 ("blank_spaces_task", "blank-spaces-task")])
def test_the_release_question_type_spellings(spelling, canonical):
    assert normalize_question_type(spelling) == canonical
