"""Input files, checked one way for every command: what kind of file it is, whether it can be read, its encoding,
and the names of its rows and columns in every error.

Every file a ``caplib`` command reads (the CSV or Parquet to score, a scored file, a splits file, a profile, a
calibration, a signature file) goes through :func:`read_input_bytes` (or :func:`check_input_file` when a library
opens it): only a regular file is opened, so a named pipe, socket or device never blocks a command, and a missing,
unreadable or directory path is one line that says so. Tables (CSV, Parquet) are read by :func:`read_table` into a
:class:`Table` of strings whose :meth:`Table.error` names the file, the row (0-based data row, header excluded, with
its editor line) and the column.

Spreadsheets run a cell that starts with ``=``, ``+``, ``-``, ``@`` (after blanks) as a formula. caplib writes such a
text cell with a leading ``'`` (the spreadsheets' own mark of text; :func:`spreadsheet_safe`) and reads a CSV cell of
that form without it, so a file written by ``caplib score`` reads back exactly as its input was read.

Example:
    >>> import tempfile
    >>> path = Path(tempfile.mkdtemp()) / "rows.csv"
    >>> _ = path.write_text("question,answer\\nWhat is 1+1?,=1+1\\n")
    >>> table = read_table(path)
    >>> table.frame["answer"].tolist(), spreadsheet_safe(table.frame)["answer"].tolist()
    (['=1+1'], ["'=1+1"])
    >>> str(table.error("not an answer", "write a number", rows=[0], column="answer"))  # doctest: +ELLIPSIS
    "...rows.csv, row 0 (line 2) [rows count from 0 after the header, like row_id], column 'answer': not an ..."
"""

from __future__ import annotations

import csv
import io
import os
import re
import stat
from collections.abc import Sequence
from pathlib import Path

import pandas as pd

__all__ = ["DataValidationError", "Table", "check_input_file", "read_input_bytes", "read_input_text", "read_table",
           "spreadsheet_safe", "table_from_csv_bytes"]

_KINDS = ((stat.S_ISFIFO, "named pipe (FIFO)"), (stat.S_ISSOCK, "socket"), (stat.S_ISCHR, "character device"),
          (stat.S_ISBLK, "block device"))
# the start of a text cell a spreadsheet would run: =, @, or + / - not starting a plain number, after blanks
_FORMULA_START = r"\s*(?:[=@]|[+\-](?!\s*$)(?!(?:\d+\.?\d*|\.\d+)(?:[eE][+\-]?\d+)?\s*$))"
_FORMULA = re.compile("'*" + _FORMULA_START, re.DOTALL)  # a cell to mark (one marked already gets one ' more)
_MARKED = re.compile("'+" + _FORMULA_START, re.DOTALL)  # a marked cell: read without its first quote


class DataValidationError(ValueError):
    """A data file (or frame) breaks its schema, or cannot be read as one.

    Attributes:
        file: path or URL of the offending file (``"<DataFrame>"`` for in-memory frames).
        row: 0-based ``row_id`` of the first offending data row (header excluded), or None.
        column: the offending column, or None.
    """

    def __init__(self, message: str, *, file: str | None = None, row: int | None = None,
                 column: str | None = None) -> None:
        super().__init__(message)
        self.file, self.row, self.column = file, row, column


def _label(path: Path, what: str) -> str:
    return f"{what} {path}" if what else str(path)


def _kind(mode: int) -> str | None:
    """What a non-regular file is ("named pipe (FIFO)", ...), None for a regular file."""
    if stat.S_ISREG(mode):
        return None
    if stat.S_ISDIR(mode):
        return "directory"
    return next((name for test, name in _KINDS if test(mode)), "special file")


def _refuse(path: Path, what: str, kind: str) -> DataValidationError:
    fix = ("give the file inside it to read" if kind == "directory" else
           "caplib reads regular files only (reading a pipe or device could block for ever): save the data to a "
           "file and give that file's path")
    return DataValidationError(f"{_label(path, what)}: is a {kind}, not a regular file. To fix: {fix}.", file=str(path))


def _unreadable(path: Path, what: str, error: OSError) -> DataValidationError:
    if isinstance(error, PermissionError):
        return DataValidationError(f"{_label(path, what)}: permission denied. To fix: make it readable for this user "
                                   f"(e.g. chmod u+r {path}) or give a copy that is.", file=str(path))
    return DataValidationError(f"{_label(path, what)}: cannot be read ({error.strerror or error}). To fix: check the "
                               f"path and the file.", file=str(path))


def check_input_file(path: str | os.PathLike[str], *, what: str = "", hint: str | None = None) -> Path:
    """``path`` (user home expanded) when it is a regular file this process may read; checked without reading it (a
    pipe or device is never opened).

    ``what`` names the file in messages (e.g. ``"--splits"``); ``hint`` is added to a missing file's message (where
    to get it).

    Example:
        >>> check_input_file("/dev/null")  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        caplib.inputs.DataValidationError: /dev/null: is a character device, not a regular file. To fix: ...

    Raises:
        FileNotFoundError: no such file.
        DataValidationError: a directory, pipe, socket or device; not readable.
    """
    path = Path(path).expanduser()
    try:
        mode = path.stat().st_mode
    except (FileNotFoundError, NotADirectoryError):
        raise FileNotFoundError(f"no such file: {_label(path, what)}" + (f"; {hint}" if hint else "")) from None
    except OSError as error:
        raise _unreadable(path, what, error) from None
    kind = _kind(mode)
    if kind is not None:
        raise _refuse(path, what, kind)
    try:  # a regular file: opening it does not block, and says whether this process may read it
        os.close(os.open(path, os.O_RDONLY | os.O_NONBLOCK))
    except OSError as error:
        raise _unreadable(path, what, error) from None
    return path


def read_input_bytes(path: str | os.PathLike[str], *, what: str = "", hint: str | None = None) -> bytes:
    """The bytes of a regular file, checked as :func:`check_input_file` does; the kind is checked again on the open
    file (opened without blocking), so a path swapped for a pipe in between cannot block the read either.

    Raises:
        FileNotFoundError: no such file.
        DataValidationError: a directory, pipe, socket or device; not readable.
    """
    path = check_input_file(path, what=what, hint=hint)
    try:
        descriptor = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except FileNotFoundError:
        raise FileNotFoundError(f"no such file: {_label(path, what)}" + (f"; {hint}" if hint else "")) from None
    except OSError as error:
        raise _unreadable(path, what, error) from None
    with os.fdopen(descriptor, "rb") as handle:
        kind = _kind(os.fstat(descriptor).st_mode)
        if kind is not None:
            raise _refuse(path, what, kind)
        try:
            return handle.read()
        except OSError as error:
            raise _unreadable(path, what, error) from None


def _position(raw: bytes, offset: int) -> tuple[int, int]:
    """(line, character) of byte ``offset``, both from 1."""
    line_start = raw.rfind(b"\n", 0, offset) + 1
    return raw.count(b"\n", 0, offset) + 1, len(raw[line_start:offset].decode("utf-8", "replace")) + 1


def _not_utf8(name: str, raw: bytes, error: UnicodeDecodeError, where: str | None = None, row: int | None = None,
              column: str | None = None) -> DataValidationError:
    """``where``: the file, row and column of the bad byte, when known (else the file and line)."""
    line, character = _position(raw, error.start)
    return DataValidationError(
        f"{where or f'{name}, line {line}'}: not UTF-8 text (byte 0x{raw[error.start]:02x} at line {line}, "
        f"character {character}). To fix: save the file as UTF-8, e.g. `iconv -f latin1 -t utf-8 {name} > "
        f"utf8.csv` for a Latin-1 file.", file=name, row=row, column=column)


def read_input_text(path: str | os.PathLike[str], *, what: str = "", hint: str | None = None) -> str:
    """The UTF-8 text of a regular file (a byte order mark dropped), read by :func:`read_input_bytes`.

    Raises:
        FileNotFoundError: no such file.
        DataValidationError: not a readable regular file, or not UTF-8 (naming line and character).
    """
    raw = read_input_bytes(path, what=what, hint=hint)
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        raise _not_utf8(_label(Path(path).expanduser(), what), raw, error) from None


class Table:
    """A table read as strings, with the editor line on which each data row starts.

    Attributes:
        name: the file (or URL) it was read from.
        header: the column names as written.
        lines: the 1-based line of each data row.
        frame: the cells, all strings (index: 0-based data row).
    """

    def __init__(self, name: str, header: list[str], rows: list[list[str]], lines: list[int]) -> None:
        self.name, self.header, self.lines = name, header, lines
        self.frame = pd.DataFrame(rows, columns=header, dtype=str)

    def where(self, rows: Sequence[int] = (), column: str | None = None) -> str:
        """``FILE, row R (line L) [...], column 'C'``: the first offending rows (with their lines) and the column."""
        where = [self.name]
        if rows:
            shown = ", ".join(f"{r} (line {self.lines[r]})" if 0 <= r < len(self.lines) else str(r)
                              for r in rows[:5])
            more = f" and {len(rows) - 5} more" if len(rows) > 5 else ""
            where.append(f"row {shown}{more} [rows count from 0 after the header, like row_id]")
        if column is not None:
            where.append(f"column {column!r}")
        return ", ".join(where)

    def error(self, problem: str, fix: str, *, rows: Sequence[int] = (), column: str | None = None
              ) -> DataValidationError:
        """An error naming this file, the first offending rows (with their lines) and the column."""
        return DataValidationError(f"{self.where(rows, column)}: {problem}. To fix: {fix}.",
                                   file=self.name, row=rows[0] if rows else None, column=column)

    def check_unique_header(self) -> None:
        """Refuse a header that names a column twice (the column is ambiguous)."""
        duplicated = sorted({c for c in self.header if self.header.count(c) > 1})
        if duplicated:
            raise self.error(f"duplicated header column(s) {duplicated}", "keep one column of each name",
                             column=duplicated[0])

    def numbers(self, column: str, rows: pd.Index | None = None) -> pd.Series:
        """``column`` (of ``rows``, default all) as finite floats; anything else raises naming its rows."""
        cells = self.frame[column] if rows is None else self.frame.loc[rows, column]
        values = pd.to_numeric(cells, errors="coerce").astype(float)
        bad = cells.index[~values.map(lambda value: bool(pd.notna(value) and abs(value) != float("inf")))].tolist()
        if bad:
            raise self.error(f"{cells.loc[bad[0]]!r} is not a finite number ({len(bad)} such row(s))",
                             "rescore these rows, or drop them", rows=bad, column=column)
        return values


def table_from_csv_bytes(raw: bytes, name: str) -> Table:
    """A CSV's bytes as a :class:`Table` (UTF-8, a byte order mark dropped; blank lines skipped, as pandas does, so
    that row numbers match pandas' row positions); cells marked ``'`` as text by :func:`spreadsheet_safe` are read
    without the mark.

    Raises:
        DataValidationError: not UTF-8 (naming row and column), malformed CSV, rows of the wrong width, no header.
    """
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        # parse once more with the bad bytes kept as stand-ins, to name the row and column that hold them
        header, rows, lines = _parse_csv(raw.decode("utf-8-sig", "surrogateescape"), name)
        bad = re.compile("[\udc80-\udcff]")
        for row, record in enumerate(rows):
            column = next((header[i] for i, cell in enumerate(record) if bad.search(cell)), None)
            if column is not None:
                where = Table(name, header, [], lines).where([row], column)
                raise _not_utf8(name, raw, error, where, row, column) from None
        raise _not_utf8(name, raw, error) from None
    table = Table(name, *_parse_csv(text, name))
    for position in range(len(table.header)):
        cells = table.frame.iloc[:, position]
        marked = cells.map(lambda cell: _MARKED.match(cell) is not None).astype(bool)
        if marked.any():
            table.frame.iloc[marked.to_numpy().nonzero()[0], position] = cells[marked].str.slice(1).to_numpy()
    return table


def _parse_csv(text: str, name: str) -> tuple[list[str], list[list[str]], list[int]]:
    """(header, rows, the line on which each row starts) of a CSV text."""
    reader = csv.reader(io.StringIO(text, newline=""))
    header: list[str] | None = None
    rows: list[list[str]] = []
    lines: list[int] = []
    previous_line = 0
    try:
        for record in reader:
            start, previous_line = previous_line + 1, reader.line_num
            if not record:  # blank line: skipped, as pandas does, so row_id matches pandas' row positions
                continue
            if header is None:
                header = record
                continue
            if len(record) != len(header):
                table = Table(name, header, [], lines + [start])
                raise table.error(f"the row has {len(record)} fields but the header has {len(header)}",
                                  "quote cells that contain commas or line breaks, and give every row "
                                  "one cell per header column", rows=[len(rows)])
            rows.append(record)
            lines.append(start)
    except csv.Error as exc:
        raise DataValidationError(f"{name}, line {reader.line_num}: malformed CSV ({exc}). To fix: check the "
                                  f"quoting on that line.", file=name) from exc
    if header is None:
        raise DataValidationError(f"{name}: the file is empty (no header, no rows). To fix: give a CSV whose first "
                                  f"line names its columns.", file=name)
    return header, rows, lines


def _parquet_table(raw: bytes, name: str) -> Table:
    """A Parquet file as strings, like a CSV: a missing value is an empty cell, a number is written as Python does
    (a whole float as ``1.0``); bytes, lists, dicts and other non-scalar cells are refused, naming row and column.
    "Lines" are data rows + 2, as in a CSV with a one-line header."""
    try:
        frame = pd.read_parquet(io.BytesIO(raw))
    except (ImportError, ValueError, OSError) as exc:
        raise DataValidationError(f"{name}: not a readable Parquet file ({exc}). To fix: write it with pandas or "
                                  f"pyarrow, or give a CSV.", file=name) from exc
    header = [str(column) for column in frame.columns]
    lines = list(range(2, len(frame) + 2))
    columns = []
    for column, values in zip(header, (frame.iloc[:, position].astype(object) for position in range(len(header)))):
        cells = []
        for row, value in enumerate(values):
            if isinstance(value, str):
                cells.append(value)
            elif isinstance(value, (bytes, bytearray, memoryview)) or not pd.api.types.is_scalar(value):
                raise Table(name, header, [], lines).error(
                    f"a {type(value).__name__} cell ({str(value)[:40]}), not text or a number",
                    "store the column as text (decode bytes; write lists and dicts as JSON strings), or give a CSV",
                    rows=[row], column=column)
            else:
                cells.append("" if pd.isna(value) else str(value))
        columns.append(cells)
    return Table(name, header, [list(row) for row in zip(*columns)] if columns else [], lines)


def read_table(path: str | os.PathLike[str], *, what: str = "", hint: str | None = None) -> Table:
    """A local CSV (or ``.parquet``) file as a :class:`Table` of strings, every value as written.

    Example:
        >>> read_table("/no/such.csv")
        Traceback (most recent call last):
        FileNotFoundError: no such file: /no/such.csv

    Raises:
        FileNotFoundError: no such file (``hint`` says where to get it).
        DataValidationError: not a readable regular file, not UTF-8, malformed, or (Parquet) a cell that is not text.
    """
    raw = read_input_bytes(path, what=what, hint=hint)
    name = _label(Path(path).expanduser(), what)
    if Path(path).suffix.lower() == ".parquet":
        return _parquet_table(raw, name)
    return table_from_csv_bytes(raw, name)


def spreadsheet_safe(frame: pd.DataFrame) -> pd.DataFrame:
    """``frame`` with every text cell that a spreadsheet would run as a formula (``=``, ``@``, or ``+``/``-`` not
    starting a plain number, after blanks) marked as text with a leading ``'``; a cell already of the form ``'...``
    gets one more, so that :func:`read_table` gives back exactly the cell. Numbers are left as they are.

    Example:
        >>> spreadsheet_safe(pd.DataFrame({"a": ["=HYPERLINK(x)", "-5", "- yes", "'=1", "ok"]}))["a"].tolist()
        ["'=HYPERLINK(x)", '-5', "'- yes", "''=1", 'ok']
    """
    safe = frame.copy()
    for column in safe.columns:
        values = safe[column]
        if pd.api.types.is_numeric_dtype(values.dtype):
            continue
        marked = values.map(lambda value: isinstance(value, str) and _FORMULA.match(value) is not None).astype(bool)
        if marked.any():
            safe[column] = values.astype(object).where(~marked, "'" + values[marked].astype(str))
    return safe
