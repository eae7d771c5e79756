"""The datasets a profile reads: the bundled sample, or the official files in its data directory (App. B).

:func:`load_dataset` is what chapters and scripts call: a profile with ``data: sample`` (offline) reads the bundled
sample (:func:`caplib.data.load_sample`); one with a data directory (paper: ``data/official/``, filled by
``caplib fetch``) reads the official CSVs there with their splits. The paper names CAP-Statements splits but
publishes no split file, so :func:`ensure_statement_splits` writes one beside the data, drawn as the authors draw
theirs (:func:`statement_splits`: 20 % held out and halved, stratified by language, seed 42). Parsing and validating a file is :mod:`caplib.data`'s.

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
from caplib.profiles import available_profiles, load_profile

__all__ = ["OFFICIAL_DIR", "PAPER_STATEMENT_SPLITS", "STATEMENT_SPLIT_SEED", "STATEMENTS_SPLITS_FILE", "ensure_statement_splits",
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
#: The seed of the authors' CAP-Statements split (their configs/default.yaml).
STATEMENT_SPLIT_SEED = 42


def statement_splits(frame: pd.DataFrame, seed: int = STATEMENT_SPLIT_SEED, holdout: float = 0.2,
                     stratify: str = "language") -> pd.Series:
    """The train / validation / test split of CAP-Statements as the authors describe it (their configuration: 20 %
    held out, the held-out part halved into validation and test, stratified by ``language``, seed 42).

    Drawn with scikit-learn's ``train_test_split`` over the rows in file order, as the authors do: first
    ``test_size=holdout``, then the held-out rows with ``test_size=0.5``, both with ``random_state=seed`` and
    stratified by the ``stratify`` column (in the official file every row's language is English, so the
    stratification changes nothing but the random stream). On the official 11,000 rows: 8,800 / 1,100 / 1,100 (Tab. 1).
    A frame without the ``stratify`` column (the bundled sample has one) is split without stratification.

    Example:
        >>> rows = pd.DataFrame({"id": [str(i) for i in range(20)], "language": ["English"] * 20})
        >>> statement_splits(rows).value_counts().sort_index().to_dict()
        {'test': 2, 'train': 16, 'validation': 2}
    """
    from sklearn.model_selection import train_test_split

    def strata(rows: pd.DataFrame) -> pd.Series | None:
        return rows[stratify].str.strip() if stratify in rows.columns else None

    positions = frame.reset_index(drop=True)
    train, held_out = train_test_split(positions, test_size=holdout, random_state=seed, stratify=strata(positions))
    validation, test = train_test_split(held_out, test_size=0.5, random_state=seed, stratify=strata(held_out))
    split = pd.Series("train", index=positions.index, dtype="str")
    split[validation.index] = "validation"
    split[test.index] = "test"
    return split.set_axis(frame.index)


def ensure_statement_splits(data_dir: str | Path, seed: int = STATEMENT_SPLIT_SEED) -> Path | None:
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
    gets the authors' split of :func:`ensure_statement_splits`, written beside it.

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
        named = profile if isinstance(profile, str) and profile in available_profiles() else settings.source
        raise FileNotFoundError(f"{source} not found: run `caplib fetch --profile {named}` (it downloads "
                                f"{OFFICIAL_URLS[file]} and the other official files into {settings.data_dir}; "
                                f"`--mirror DIR` copies them from a local copy of the authors' repository)")
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
