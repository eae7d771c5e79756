"""A file written by ``caplib score``, read back: the one reader of ``caplib evaluate``, ``compare`` and ``calibrate``.

The release's ``scores.json`` (:mod:`caplib.release`, recognised by its shape) is read as such a file too: its rows
with ``row_id``, ``split``, ``label_semantic`` (its ``label``), ``dataset`` and one column per released metric.

Example:
    >>> import tempfile
    >>> scored = Path(tempfile.mkdtemp()) / "scored.csv"
    >>> _ = scored.write_text("row_id,label_semantic,cap\\n0,exact,0.9\\n1,Contra,0.1\\n")
    >>> read_scored(scored, "label_semantic", ["cap"])[0]["cap"].tolist()
    [0.9, 0.1]
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Callable, Sequence, Union

import pandas as pd

from caplib.data import normalize_labels, splits_of_rows
from caplib.inputs import Table, check_input_file, read_input_text, read_table

__all__ = ["read_scored", "release_scores"]


def _dropped_rows(path: str | Path) -> list[int]:
    """The row ids ``caplib score`` left out of ``path`` with a reason (its signature file's ``dropped_rows``)."""
    sidecar = Path(f"{path}.signature.json")
    if not sidecar.is_file():
        return []
    try:
        return [int(row) for row in json.loads(read_input_text(sidecar)).get("dropped_rows", {})]
    except (json.JSONDecodeError, AttributeError, ValueError):
        return []  # not a signature file of caplib's: no row is excused


def release_scores(path: str | Path) -> pd.DataFrame | None:
    """The release's ``scores.json`` at ``path`` as a scored frame (``label`` renamed ``label_semantic``), or None
    when ``path`` is not such a file (a CSV written by ``caplib score``).

    Example:
        >>> release_scores("scored.csv") is None
        True
    """
    from caplib.release import PROBABILITY_KEYS, load_scores

    path = Path(path)
    if path.suffix.lower() != ".json":
        return None
    check_input_file(path)  # a regular, readable file: the release's reader parses it once (ReleaseError otherwise)
    return load_scores(path).rename(columns={"label": "label_semantic"}).drop(columns=list(PROBABILITY_KEYS))


#: The number columns to read: names, or a function of the header that picks them (``caplib evaluate``'s default).
Columns = Union[Sequence[str], Callable[[Sequence[str]], Sequence[str]]]


def read_scored(path: str | Path, label_column: str, columns: Columns, *, splits: str | Path | None = None,
                split: str | None = None, integer_row_ids: bool = False) -> tuple[pd.DataFrame, int]:
    """The labelled rows of a CSV written by ``caplib score``, ``columns`` as numbers, and how many rows had no label.

    Used by ``caplib evaluate``, ``caplib compare`` and ``caplib calibrate``, so that all three read a scored file
    (or the release's scores.json, :func:`release_scores`) the same way, through ``caplib.inputs`` (a regular,
    readable, UTF-8 file; every error names file, row and column; rows count from 0 after the header, the frame's index): a header naming a column twice is refused;
    ``splits`` (a ``row_id,split`` CSV, joined on the file's ``row_id``) replaces the file's own ``split`` column and
    must list every row of the file exactly once and no other (as ``caplib.data.load_correctness(splits=)`` checks);
    ``split`` keeps that split's rows; rows with an empty label are left out and counted; a label that is not the
    taxonomy's, or a value of ``columns`` that is not a finite number, fails naming its row and column. Labels come
    back in canonical spelling. ``integer_row_ids``: the file's ``row_id``, when it has one, must be row numbers and
    comes back as ints (a calibration records them); with ``splits`` it must be there and be row numbers.

    Example:
        >>> import tempfile
        >>> scored = Path(tempfile.mkdtemp()) / "scored.csv"
        >>> _ = scored.write_text("row_id,split,label_semantic,cap\\n0,test,exact,0.9\\n1,test,,0.5\\n2,dev,Contra,0.1\\n")
        >>> frame, unlabelled = read_scored(scored, "label_semantic", ["cap"], split="test")
        >>> frame["cap"].tolist(), unlabelled
        ([0.9], 1)

    Raises:
        FileNotFoundError: no such file.
        caplib.data.DataValidationError (a ValueError): anything else above.
    """
    released = release_scores(path)
    if released is not None:  # the release's scores.json, as a table of strings (floats written as Python does)
        table = Table(str(path), list(released.columns), released.astype(str).values.tolist(),
                      list(range(2, len(released) + 2)))
    else:
        table = read_table(path)
    table.check_unique_header()
    frame = table.frame
    if label_column not in frame.columns:
        raise table.error(f"no label column {label_column!r}; columns are {list(frame.columns)}",
                          "name the label column with --label-column", column=label_column)
    columns = list(columns(table.header) if callable(columns) else columns)
    absent = [name for name in columns if name not in frame.columns]
    if absent:
        raise table.error(f"no column(s) {absent}; columns are {list(frame.columns)}",
                          "score the file with these metrics (`caplib score --metrics ...`) or name others",
                          column=absent[0])
    if splits is not None:
        frame["split"] = splits_of_rows(table, _row_ids(table, "--splits joins on it"), splits,
                                        dropped=_dropped_rows(path))
    elif integer_row_ids and "row_id" in frame.columns:
        _row_ids(table, "a calibration records it")
    if split is not None:
        if "split" not in frame.columns:
            raise table.error(f"no split column, so there is no {split!r} split",
                              "pass --splits SPLITS.csv (row_id,split) or leave out --split to use every row")
        if split not in set(frame["split"]):
            raise table.error(f"no row of split {split!r}; splits found: {sorted(set(frame['split']) - {''})}",
                              "name one of those splits")
        frame = frame[frame["split"] == split]
    labels = normalize_labels(table, label_column, allow_empty=True).loc[frame.index]
    unlabelled = labels.isna()
    frame = frame[~unlabelled].copy()
    frame[label_column] = labels[~unlabelled]
    for column in columns:
        frame[column] = table.numbers(column, frame.index)
    if integer_row_ids and "row_id" in frame.columns:
        frame["row_id"] = [int(value) for value in frame["row_id"]]
    return frame, int(unlabelled.sum())


def _row_ids(table: Table, why: str) -> list[int]:
    """The file's ``row_id`` column as non-negative integers (as ``caplib score`` writes it)."""
    if "row_id" not in table.frame.columns:
        raise table.error(f"no row_id column ({why})", "score the file with `caplib score`, which writes it",
                          column="row_id")
    cells = table.frame["row_id"].str.strip()
    bad = table.frame.index[~cells.str.fullmatch(r"\d+")].tolist()
    if bad:
        raise table.error(f"row_id {table.frame.at[bad[0], 'row_id']!r} is not a row number ({why})",
                          "give every row a non-negative whole row_id, as `caplib score` writes it", rows=bad,
                          column="row_id")
    return [int(value) for value in cells]
