"""caplib.inputs (issue 34): every input file is checked one way (kind, readability, encoding, rows and columns)."""

from __future__ import annotations

import contextlib
import os
import signal
import tempfile
from pathlib import Path

import pandas as pd
import pytest

from caplib.inputs import (
    DataValidationError,
    check_input_file,
    read_input_bytes,
    read_input_text,
    read_table,
    spreadsheet_safe,
)


class Hung(BaseException):
    """Raised by the alarm: a read blocked (a BaseException, so that no ``except OSError`` swallows it)."""


@contextlib.contextmanager
def no_hang(seconds: int = 10):
    """Fail instead of blocking for ever (a read of a FIFO with no writer never returns)."""
    def alarm(signum, frame):
        raise Hung(f"blocked for {seconds} s")

    previous = signal.signal(signal.SIGALRM, alarm)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


@contextlib.contextmanager
def as_another_user():
    """Run the block as ``nobody`` when this process is root (root reads every file whatever its mode), so that a
    file's missing read permission is felt; a no-op for any other user."""
    if os.geteuid() != 0:
        yield
        return
    os.setegid(65534)
    os.seteuid(65534)
    try:
        yield
    finally:
        os.seteuid(0)
        os.setegid(0)


def shared_directory() -> Path:
    """A fresh directory that another user may enter (pytest's tmp_path is private to root)."""
    directory = Path(tempfile.mkdtemp(prefix="caplib-inputs-"))
    directory.chmod(0o755)
    return directory


@pytest.mark.parametrize("reader", [check_input_file, read_input_bytes, read_input_text, read_table])
def test_a_fifo_is_refused_at_once_never_opened(tmp_path, reader):
    fifo = tmp_path / "rows.csv"
    os.mkfifo(fifo)
    with no_hang(), pytest.raises(DataValidationError, match=r"rows\.csv: is a named pipe \(FIFO\), not a regular "
                                                             r"file\. To fix: .*save the data to a file"):
        reader(fifo)


def test_directories_devices_and_missing_files_are_named(tmp_path):
    with pytest.raises(DataValidationError, match="is a directory, not a regular file. To fix: give the file inside"):
        read_table(tmp_path)
    with pytest.raises(DataValidationError, match="/dev/null: is a character device"):
        read_input_bytes("/dev/null")
    with pytest.raises(FileNotFoundError, match=r"no such file: --splits .*absent\.csv; get it from there"):
        check_input_file(tmp_path / "absent.csv", what="--splits", hint="get it from there")
    (tmp_path / "a_file").write_text("x")
    with pytest.raises(FileNotFoundError, match="no such file"):
        read_table(tmp_path / "a_file" / "rows.csv")


def test_an_unreadable_file_is_one_error_that_says_how_to_fix_it():
    path = shared_directory() / "rows.csv"
    path.write_text("question,answer\nq,a\n")
    path.chmod(0)
    with as_another_user():
        for reader in (check_input_file, read_input_bytes, read_table):
            with pytest.raises(DataValidationError, match=r"rows\.csv: permission denied\. To fix: .*chmod u\+r"):
                reader(path)


def test_a_latin1_file_is_named_by_row_and_column():
    path = Path(tempfile.mkdtemp()) / "latin1.csv"
    path.write_bytes("question,answer\nWhere?,Sofia\nWhat?,café au lait\n".encode("latin-1"))
    with pytest.raises(DataValidationError, match=r"latin1\.csv, row 1 \(line 3\) \[.*\], column 'answer': not UTF-8 "
                                                  r"text \(byte 0xe9 at line 3, character 10\)\. To fix: save the file "
                                                  r"as UTF-8") as error:
        read_table(path)
    assert (error.value.row, error.value.column) == (1, "answer")
    path.write_bytes(b"name: caf\xe9\n")
    with pytest.raises(DataValidationError, match=r"line 1: not UTF-8 text \(byte 0xe9 at line 1, character 10\)"):
        read_input_text(path)


def test_an_empty_file_says_so(tmp_path):
    (tmp_path / "empty.csv").write_bytes(b"")
    with pytest.raises(DataValidationError, match=r"empty\.csv: the file is empty"):
        read_table(tmp_path / "empty.csv")


@pytest.mark.parametrize("cells, kind", [([b"bytes", b"c"], "bytes"), ([{"k": 1}, {"k": 2}], "dict"),
                                         ([[1, 2], [3]], "ndarray")])
def test_a_parquet_cell_that_is_not_text_is_refused_by_row_and_column(tmp_path, cells, kind):
    pytest.importorskip("pyarrow")
    path = tmp_path / "rows.parquet"
    pd.DataFrame({"question": ["q0", "q1", "q2"], "answer": [None, *cells]}).to_parquet(path)
    with pytest.raises(DataValidationError, match=rf"rows\.parquet, row 1 .*, column 'answer': a {kind} cell"):
        read_table(path)


def test_parquet_numbers_and_missing_values_read_as_a_csv_would(tmp_path):
    pytest.importorskip("pyarrow")
    path = tmp_path / "rows.parquet"
    pd.DataFrame({"answer": ["a", None], "n": [1.0, float("nan")], "k": [3, 4]}).to_parquet(path)
    assert read_table(path).frame.values.tolist() == [["a", "1.0", "3"], ["", "", "4"]]


CELLS = ["=1+1", "=HYPERLINK(\"http://x\",\"y\")", "+cmd|' /C calc'!A0", "-2+3", "@SUM(A1)", " =1", "\t=1",
         "'=1+1", "''@x", "- yes", "-", "-5", "+1.5e3", "'tis", "plain", "", "0"]


def test_formula_cells_are_marked_as_text_and_read_back_exactly(tmp_path):
    safe = spreadsheet_safe(pd.DataFrame({"cell": CELLS, "number": range(len(CELLS))}))
    assert safe["cell"].tolist()[:10] == ["'" + cell for cell in CELLS[:10]]
    assert safe["cell"].tolist()[10:] == CELLS[10:]  # numbers, a lone dash and plain text as they were
    assert safe["number"].tolist() == list(range(len(CELLS)))
    path = tmp_path / "out.csv"
    safe.to_csv(path, index=False)
    assert read_table(path).frame["cell"].tolist() == CELLS
