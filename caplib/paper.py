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

import numpy as np
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


def _check(tables: str, claim: str, stated: Any, computed: Any, note: str = "") -> dict[str, Any]:
    consistent = bool(np.isclose(float(stated), float(computed))) if isinstance(stated, (int, float)) \
        else stated == computed
    return {"tables": tables, "claim": claim, "stated": stated, "computed": computed, "consistent": consistent,
            "note": note}


def consistency_checks(directory: Path | None = None) -> pd.DataFrame:
    """Re-derive what the paper states from its own tables; one row per check (the book's appendix).

    Columns: ``tables``, ``claim``, ``stated`` (what the text or another table says), ``computed`` (what the
    table itself gives under caplib's protocol), ``consistent`` and ``note``. Inconsistencies are reported, not
    hidden: data/paper/README.md explains each.

    Example:
        >>> checks = consistency_checks()
        >>> bool(checks.loc[checks["claim"].str.startswith("Tab. 5 GPT-4o"), "consistent"].item())
        True
    """
    from caplib.evaluation import monotonicity_violations  # local: evaluation is heavier than paper

    def table(number: int) -> pd.DataFrame:
        return load_table(number, directory)

    rows: list[dict[str, Any]] = []
    tab1 = table(1).set_index("dataset")
    rows.append(_check("1", "CAP-Correctness has 8,827 examples (Sec. 5)", 8827,
                       int(tab1.loc["CAP-Correctness", ["validation", "test"]].sum())))
    rows.append(_check("1", "CAP-Statements has 11,000 triples (Sec. 5)", 11000,
                       int(tab1.loc["CAP-Statements", ["train", "validation", "test"]].sum())))
    tab2, tab13 = table(2).set_index("metric"), table(13).set_index("metric")
    for metric in tab2.index:
        for stat in ("spearman", "kendall"):
            rows.append(_check("2, 13", f"Tab. 13 {metric} {stat} point estimate equals Tab. 2",
                               float(tab2.loc[metric, stat]), float(tab13.loc[metric, stat])))
            inside = bool(tab13.loc[metric, f"{stat}_low"] <= tab13.loc[metric, stat] <= tab13.loc[metric, f"{stat}_high"])
            rows.append(_check("13", f"Tab. 13 {metric} {stat} lies inside its 95% CI", True, inside))
    tab14 = table(14).set_index("metric")
    for metric in tab14.index:
        rows.append(_check("14", f"Tab. 14 {metric} rate = count / 25", float(tab14.loc[metric, "violation_rate"]),
                           round(100 * tab14.loc[metric, "violations"] / tab14.loc[metric, "violations_total"], 2)))
    rows.append(_check("14", "CAP violates 4/25 pairs (Sec. 7.2)", 4, int(tab14.loc["CAP", "violations"])))
    rows.append(_check("14", "COMET violates 9/25 pairs (Sec. 7.2)", 9, int(tab14.loc["COMET", "violations"])))
    tab3, tab4 = table(3).set_index(["higher", "lower"]), table(4).set_index("metric")
    rows.append(_check("3, 4", "Tab. 3 CAP AUC OV>OI equals Tab. 4 CAP OV>OI",
                       float(tab3.loc[("overinclusive_valid", "overinclusive_invalid"), "cap_auc"]),
                       float(tab4.loc["CAP", "OV>OI"])))
    below = sorted(tab4.index[tab4["OV>Part"] < 50])
    rows.append(_check("4", "'All metrics except METEOR fall below chance' on OV>Part (Sec. 7.3)",
                       "all but METEOR", "all but METEOR" if below == sorted(set(tab4.index) - {"METEOR"})
                       else f"below 50: {', '.join(below)}",
                       "BLEU's printed OV>Part (51.42) is above chance"))
    for number, stated in ((5, {"GPT-4o": 4, "Gemini Flash": 6, "Qwen 3": 2}), (17, {"Synthetic": 4, "Annotator": 4})):
        for column, count in stated.items():
            rows.append(_check(str(number), f"Tab. {number} {column}: {count}/25 violations from its class means",
                               count, len(monotonicity_violations(reported_class_means(number, column, directory)))))
    tab6 = table(6)
    for column in ("GPT-4o", "Gemini Flash", "Qwen 3"):
        rows.append(_check("6", f"Tab. 6 {column}: answers to the 1,000 sampled questions (Sec. 7.4)", 1000,
                           int(tab6[column].sum()), "each column sums to 999"))
    tab8 = table(8).set_index("key")
    for key, text in (("kappa", 0.779), ("linear", 0.825), ("quadratic", 0.879)):
        rows.append(_check("8", f"Tab. 8 {key} equals the text of B.3", text, float(tab8.loc[key, "score"]) / 100))
    tab12 = table(12)
    best = tab12.sort_values(["spearman", "pairwise_accuracy"], ascending=False).iloc[0]
    rows.append(_check("12", "alpha = 0.85, lambda = 0.30 has the best Spearman (App. C.3)", "0.85/0.3",
                       f"{best['alpha']:g}/{best['lam']:g}"))
    rows.append(_check("12", "the sweep includes a unidirectional alpha = 1 variant (App. C.3)", True,
                       bool((tab12["alpha"] == 1.0).any()), "Tab. 12 has no alpha = 1 row"))
    tab16 = table(16).set_index("key")
    for key, stats in (("synthetic", (66.87, 54.69, 84.87)), ("human", (69.89, 57.34, 87.16))):
        for stat, value in zip(("spearman", "kendall", "pairwise_accuracy"), stats):
            rows.append(_check("16", f"Tab. 16 {key} {stat} equals the text of App. E", value,
                               float(tab16.loc[key, stat])))
    return pd.DataFrame(rows)
