"""The paper's reported numeric tables as data (``data/paper/``), for comparing reproduced numbers.

Every numeric table of the paper (Tab. 1-6, 8, 12-17) is one CSV file, indexed by
``data/paper/tables.yaml`` (file, caption, section, scale, notes). Values are exactly as printed:
percentages x100, counts as integers, "4/25" split into ``violations`` and ``violations_total``,
confidence intervals as ``*_low`` / ``*_high`` columns. Class rows carry the canonical label
(``label``, as in ``caplib.taxonomy.LABELS``) and the printed row name (``printed``).

Example:
    >>> load_table(2).set_index("metric").loc["CAP", "spearman"]
    60.37
    >>> caption(14)[:23]
    'Monotonicity violations'
    >>> reported_class_means(5, "GPT-4o")["alternative_correct"]
    31.59
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import Any

import pandas as pd
import yaml

from caplib.taxonomy import normalize_label

#: Where the tables live: ``data/paper/`` of the repository (editable / source installs).
PAPER_DIR: Path = Path(__file__).resolve().parent.parent / "data" / "paper"

#: The table numbers available, in the paper's order (Tab. 7, 9, 10, 11, 18 hold no numbers).
TABLES: tuple[int, ...] = (1, 2, 3, 4, 5, 6, 8, 12, 13, 14, 15, 16, 17)

# Tables of per-class mean scores (rows: taxonomy classes with a ``label`` column).
_CLASS_MEAN_TABLES: tuple[int, ...] = (5, 17)


@lru_cache(maxsize=None)
def _index(directory: Path) -> dict[int, dict[str, Any]]:
    path = directory / "tables.yaml"
    if not path.is_file():
        raise FileNotFoundError(f"{path} not found: the paper tables ship in data/paper/ of the caplib repository")
    with path.open(encoding="utf-8") as handle:
        return {int(number): entry for number, entry in yaml.safe_load(handle).items()}


def _entry(number: int, directory: Path | None) -> dict[str, Any]:
    if number not in TABLES:
        raise ValueError(f"the paper has no numeric table {number!r}; available: {', '.join(map(str, TABLES))}")
    return _index(Path(directory) if directory is not None else PAPER_DIR)[number]


def load_table(number: int, directory: Path | None = None) -> pd.DataFrame:
    """Table ``number`` as printed in the paper (a fresh frame; columns described in tables.yaml).

    Example:
        >>> load_table(1).set_index("dataset").loc["CAP-Statements"].tolist()
        [8800.0, 1100.0, 1100.0]
    """
    root = Path(directory) if directory is not None else PAPER_DIR
    return pd.read_csv(root / _entry(number, directory)["file"], keep_default_na=False, na_values=[""])


def caption(number: int, directory: Path | None = None) -> str:
    """The caption of table ``number`` as printed.

    Example:
        >>> caption(1)
        'Dataset statistics.'
    """
    return str(_entry(number, directory)["caption"])


def reported_class_means(number: int, column: str, directory: Path | None = None) -> dict[str, float]:
    """Per-class mean CAP scores of Tab. 5 or 17 in one column, keyed by canonical label (as printed, x100).

    The mapping plugs into ``caplib.evaluation.monotonicity_violations``.

    Example:
        >>> means = reported_class_means(17, "Synthetic")
        >>> means["partial"], means["overinclusive_valid"]
        (83.61, 50.07)

    Raises:
        ValueError: a table without per-class means, or a column the table does not have.
    """
    if number not in _CLASS_MEAN_TABLES:
        raise ValueError(f"table {number} holds no per-class means; tables that do: {_CLASS_MEAN_TABLES}")
    table = load_table(number, directory)
    value_columns = [name for name in table.columns if name not in ("label", "printed")]
    if column not in value_columns:
        raise ValueError(f"table {number} has no column {column!r}; columns: {', '.join(value_columns)}")
    return {normalize_label(label): float(value) for label, value in zip(table["label"], table[column])}
