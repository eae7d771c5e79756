"""The datasets a profile reads: the bundled sample, or the official files in its data directory (App. B).

:func:`load_dataset` is what chapters and scripts call: a profile with ``data: sample`` (offline) reads the bundled
sample (:func:`caplib.data.load_sample`); one with a data directory (paper: ``data/official/``, filled by
``caplib fetch``) reads the official CSVs there with their splits. The paper names CAP-Statements splits but
publishes no split file, so :func:`ensure_statement_splits` writes a seeded one with the paper's proportions
(:func:`statement_splits`) beside the data. Parsing and validating a file is :mod:`caplib.data`'s.

Example:
    >>> len(load_dataset("cap_correctness", "offline"))
    1024
"""

from __future__ import annotations

from pathlib import Path
from types import MappingProxyType
from typing import Mapping

import pandas as pd

from caplib.data import OFFICIAL_URLS, SAMPLE_DIR, load_correctness, load_sample, load_statements
from caplib.files import write_atomically
from caplib.profiles import load_profile

__all__ = ["OFFICIAL_DIR", "PAPER_STATEMENT_SPLITS", "STATEMENTS_SPLITS_FILE", "ensure_statement_splits",
           "load_dataset", "load_dataset_or_reason", "statement_splits"]

#: Where the paper profile's official files go (``data: ../../data/official`` in ``caplib/profiles/paper.yaml``).
OFFICIAL_DIR: Path = SAMPLE_DIR.parent / "official"
#: The CAP-Statements split caplib writes when the official data has none (:func:`ensure_statement_splits`).
STATEMENTS_SPLITS_FILE = "CAP-Statements-splits.csv"
_LOADERS = MappingProxyType({"cap_correctness": load_correctness, "cap_statements": load_statements})
_OFFICIAL_FILES: Mapping[str, tuple[str, str | None]] = MappingProxyType(
    {"cap_correctness": ("CAP-Correctness.csv", "CAP-Correctness-splits.csv"),
     "cap_statements": ("CAP-Statements.csv", STATEMENTS_SPLITS_FILE)}
)
#: CAP-Statements split sizes of the paper (Tab. 1: 80 / 10 / 10 of 11,000).
PAPER_STATEMENT_SPLITS: Mapping[str, int] = MappingProxyType({"train": 8800, "validation": 1100, "test": 1100})


def statement_splits(frame: pd.DataFrame, seed: int = 0) -> pd.Series:
    """A deterministic, seeded train / validation / test split of CAP-Statements with the paper's proportions.

    The paper names train / dev / test splits of 8,800 / 1,100 / 1,100 (Tab. 1) but publishes no split file, so
    when the official CSV has neither a ``split`` column nor a splits file caplib draws one: the sizes scale with
    the number of rows (exactly the paper's for 11,000 rows), and every question type (Tab. 9) is split in the
    same proportions (stratified; largest remainders give each split its exact total). Rows are ordered by ``id``
    before drawing, so the split depends on the content, not the file's row order.

    Example:
        >>> rows = pd.DataFrame({"id": [str(i) for i in range(20)], "label_question_type": ["short-question"] * 20})
        >>> statement_splits(rows).value_counts().sort_index().to_dict()
        {'test': 2, 'train': 16, 'validation': 2}
    """
    import numpy as np

    total = sum(PAPER_STATEMENT_SPLITS.values())
    targets = {name: round(len(frame) * size / total) for name, size in PAPER_STATEMENT_SPLITS.items()
               if name != "train"}
    types = sorted(frame["label_question_type"].unique())
    sizes = {kind: int((frame["label_question_type"] == kind).sum()) for kind in types}
    quota = {kind: {} for kind in types}
    for name, target in targets.items():
        exact = {kind: sizes[kind] * target / len(frame) for kind in types}
        floors = {kind: int(exact[kind]) for kind in types}
        for kind in sorted(types, key=lambda k: (floors[k] - exact[k], k))[:target - sum(floors.values())]:
            floors[kind] += 1
        for kind in types:
            quota[kind][name] = floors[kind]
    rng = np.random.default_rng(seed)
    split = pd.Series("train", index=frame.index, dtype="str")
    for kind in types:
        rows = frame.index[frame["label_question_type"] == kind]
        ordered = rows[np.argsort(frame.loc[rows, "id"].to_numpy(), kind="stable")]
        shuffled = ordered[rng.permutation(len(ordered))]
        test, validation = quota[kind]["test"], quota[kind]["validation"]
        split[shuffled[:test]] = "test"
        split[shuffled[test:test + validation]] = "validation"
    return split


def ensure_statement_splits(data_dir: str | Path, seed: int = 0) -> Path | None:
    """Write ``CAP-Statements-splits.csv`` (``id,split``, :func:`statement_splits`) beside the official
    CAP-Statements when the CSV has no ``split`` column and no splits file is there; returns the splits file, or
    None when the CSV carries its own split column.

    Raises:
        FileNotFoundError: no ``CAP-Statements.csv`` in ``data_dir``.
    """
    data_dir = Path(data_dir)
    target = data_dir / STATEMENTS_SPLITS_FILE
    frame = load_statements(data_dir / "CAP-Statements.csv", splits=target if target.is_file() else None)
    if target.is_file():
        return target
    if "split" in frame.columns:
        return None
    rows = frame.assign(split=statement_splits(frame, seed))[["id", "split"]]
    write_atomically(target, lambda path: rows.to_csv(path, index=False))
    return target


def load_dataset(name: str, profile: object = "offline", path: str | Path | None = None,
                 splits: str | Path | None = None) -> pd.DataFrame:
    """The rows a chapter works on: ``path`` if given, else the profile's data.

    ``profile`` is a profile name, a profile YAML path or a :class:`caplib.profiles.Profile`. A profile with
    ``data: sample`` (offline) reads the bundled sample (:func:`load_sample`); one with a data directory (paper:
    ``data/official/``) reads the official files there, with their splits file; CAP-Statements without a split
    gets the seeded one of :func:`ensure_statement_splits`, written beside it.

    Example:
        >>> load_dataset("cap_correctness", "offline")["split"].unique().tolist()  # doctest: +SKIP
        ['test', 'validation']

    Raises:
        FileNotFoundError: the official file is absent; the message names the URL and ``caplib fetch``.
    """
    if name not in _OFFICIAL_FILES:
        raise ValueError(f"unknown dataset {name!r}; choose from {', '.join(_OFFICIAL_FILES)}")
    loader = _LOADERS[name]
    if path is not None:
        return loader(path, splits=splits)
    settings = load_profile(profile)  # type: ignore[arg-type]
    if settings.data_dir is None:
        return load_sample(name)
    file, splits_file = _OFFICIAL_FILES[name]
    source = settings.data_dir / file
    if not source.is_file():
        named = profile if isinstance(profile, str) and profile in ("paper", "offline") else settings.source
        raise FileNotFoundError(f"{source} not found: run `caplib fetch --profile {named}` (it downloads "
                                f"{OFFICIAL_URLS[file]} and the other official files into {settings.data_dir})")
    if splits is None and name == "cap_statements":
        splits = ensure_statement_splits(settings.data_dir)
    elif splits is None and splits_file and (settings.data_dir / splits_file).is_file():
        splits = settings.data_dir / splits_file
    return loader(source, splits=splits)


def load_dataset_or_reason(name: str, profile: object = "offline", path: str | Path | None = None,
                           splits: str | Path | None = None) -> tuple[pd.DataFrame | None, str | None]:
    """:func:`load_dataset`, or ``(None, reason)`` when the files cannot be read (absent, or a URL that does not
    answer): a chapter then skips what needs them and says why (:func:`caplib.book.unavailable_note`), never
    inventing a number.

    Example:
        >>> frame, reason = load_dataset_or_reason("cap_correctness", "offline")
        >>> len(frame), reason
        (1024, None)
    """
    try:
        return load_dataset(name, profile, path, splits), None
    except (FileNotFoundError, ConnectionError) as error:
        return None, str(error)
