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

import csv
import json
from pathlib import Path
from typing import Sequence

import pandas as pd

__all__ = ["read_scored", "release_scores", "scored_columns"]


def release_scores(path: str | Path) -> pd.DataFrame | None:
    """The release's ``scores.json`` at ``path`` as a scored frame (``label`` renamed ``label_semantic``), or None
    when ``path`` is not such a file (a CSV written by ``caplib score``).

    Example:
        >>> release_scores("scored.csv") is None
        True
    """
    from caplib.release import is_scores_file, load_scores

    path = Path(path)
    if path.suffix.lower() != ".json" or not path.is_file():
        return None
    try:
        shaped = is_scores_file(json.loads(path.read_text(encoding="utf-8")))
    except (UnicodeDecodeError, json.JSONDecodeError):
        shaped = False
    if not shaped:
        raise ValueError(f"{path}: a JSON file that is not the release's scores.json (parallel arrays with row_id, "
                         f"label and metrics); give a CSV written by `caplib score` or the release's scores.json")
    frame = load_scores(path).rename(columns={"label": "label_semantic"})
    return frame.drop(columns=[c for c in frame.columns if c.startswith(("pe_", "pn_", "pc_"))])


def scored_columns(path: str | Path) -> list[str]:
    """The columns of a scored file (a ``caplib score`` CSV or the release's scores.json), without reading its rows
    beyond what the format needs.

    Example:
        >>> import tempfile
        >>> scored = Path(tempfile.mkdtemp()) / "scored.csv"
        >>> _ = scored.write_text("row_id,label_semantic,cap\n0,exact,0.9\n")
        >>> scored_columns(scored)
        ['row_id', 'label_semantic', 'cap']
    """
    released = release_scores(path)
    return list(released.columns) if released is not None else list(pd.read_csv(path, nrows=0).columns)


def read_scored(path: str | Path, label_column: str, columns: Sequence[str], *, splits: str | Path | None = None,
                split: str | None = None) -> tuple[pd.DataFrame, int]:
    """The labelled rows of a CSV written by ``caplib score``, ``columns`` as numbers, and how many rows had no label.

    Used by ``caplib evaluate``, ``caplib compare`` and ``caplib calibrate``, so that all three read a scored file
    (or the release's scores.json, :func:`release_scores`) the same way: a header naming a column twice is refused; ``splits`` (a ``row_id,split`` CSV, joined on the
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
    released = release_scores(path)
    if released is not None:
        frame = released.astype(str)
    else:
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
