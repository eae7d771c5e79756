"""A file written by ``caplib score``, read back: the one reader of ``caplib evaluate``, ``compare`` and ``calibrate``.

Example:
    >>> import tempfile
    >>> scored = Path(tempfile.mkdtemp()) / "scored.csv"
    >>> _ = scored.write_text("row_id,label_semantic,cap\\n0,exact,0.9\\n1,Contra,0.1\\n")
    >>> read_scored(scored, "label_semantic", ["cap"])[0]["cap"].tolist()
    [0.9, 0.1]
"""

from __future__ import annotations

import csv
from pathlib import Path
from typing import Sequence

import pandas as pd

__all__ = ["read_scored"]


def read_scored(path: str | Path, label_column: str, columns: Sequence[str], *, splits: str | Path | None = None,
                split: str | None = None) -> tuple[pd.DataFrame, int]:
    """The labelled rows of a CSV written by ``caplib score``, ``columns`` as numbers, and how many rows had no label.

    Used by ``caplib evaluate``, ``caplib compare`` and ``caplib calibrate``, so that all three read a scored file
    the same way: a header naming a column twice is refused; ``splits`` (a ``row_id,split`` CSV, joined on the
    file's ``row_id``) replaces the file's own ``split`` column; ``split`` keeps that split's rows; rows with an
    empty label are left out and counted; a value of ``columns`` that is not a number fails, naming row and column.

    Example:
        >>> import tempfile
        >>> scored = Path(tempfile.mkdtemp()) / "scored.csv"
        >>> _ = scored.write_text("row_id,split,label_semantic,cap\\n0,test,exact,0.9\\n1,test,,0.5\\n2,dev,Contra,0.1\\n")
        >>> frame, unlabelled = read_scored(scored, "label_semantic", ["cap"], split="test")
        >>> frame["cap"].tolist(), unlabelled
        ([0.9], 1)

    Raises:
        ValueError: a repeated or missing column, an unknown split, a value that is not a number.
    """
    path = Path(path)
    with open(path, newline="", encoding="utf-8") as handle:
        header = next(csv.reader(handle), [])
    repeated = sorted({name for name in header if header.count(name) > 1})
    if repeated:
        raise ValueError(f"{path}: column(s) {repeated} appear more than once in the header; keep one of each")
    frame = pd.read_csv(path, dtype=str, keep_default_na=False)
    if label_column not in frame.columns:
        raise ValueError(f"{path}: no label column {label_column!r}; columns are {list(frame.columns)}")
    absent = [name for name in columns if name not in frame.columns]
    if absent:
        raise ValueError(f"{path}: no column(s) {absent}; columns are {list(frame.columns)}")
    if splits is not None:
        table = pd.read_csv(splits, dtype=str, keep_default_na=False)
        if not {"row_id", "split"} <= set(table.columns) or "row_id" not in frame.columns:
            raise ValueError(f"--splits {splits}: needs the columns row_id and split, and {path} a row_id column to "
                             f"join on (`caplib score` writes it)")
        frame = frame.drop(columns=["split"], errors="ignore").merge(table[["row_id", "split"]], on="row_id",
                                                                     how="left").fillna({"split": ""})
    if split is not None:
        if "split" not in frame.columns:
            raise ValueError(f"{path}: no split column, so there is no {split!r} split; pass --splits SPLITS.csv "
                             f"(row_id,split) or leave out --split to use every row")
        if split not in set(frame["split"]):
            raise ValueError(f"{path}: no row of split {split!r}; splits found: {sorted(set(frame['split']) - {''})}")
        frame = frame[frame["split"] == split]
    unlabelled = frame[label_column].str.strip() == ""
    frame = frame[~unlabelled].copy()
    for column in columns:
        values = pd.to_numeric(frame[column], errors="coerce")
        bad = frame.index[values.isna()].tolist()
        if bad:
            raise ValueError(f"{path}: row {bad[0]} (0-based data row), column {column!r}: "
                             f"{frame.at[bad[0], column]!r} is not a number; {len(bad)} such row(s)")
        frame[column] = values
    return frame, int(unlabelled.sum())
