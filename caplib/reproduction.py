"""Re-deriving the paper's tables from the authors' release: the protocol's tables recomputed from the released
per-row scores (:mod:`caplib.release`), and every printed number of the paper that those scores determine set beside
its recomputation (:func:`paper_against_release`).

What the release's scores determine, and where (printed x100 with two decimals unless said):

- Tab. 2 (Spearman, Kendall tau-b, pairwise accuracy) and Tab. 13 (the same with 95% CIs) on the test split, for
  CAP, BLEU, ROUGE-L, METEOR and BERTScore (the release has no COMET column);
- Tab. 3 (CAP's AUC per class pair) and Tab. 4 (hard-pair accuracy) on the test split;
- Tab. 12 (CAP's alpha/lambda sweep: Spearman, pairwise accuracy, violations), recomputed from the released NLI
  probabilities on the validation split, the 1,000 held-out rows the paper selected the weights on (App. C.3);
- Tab. 14 (monotonicity violations out of 25 and their rate) on the test split;
- Tab. 8 (Cohen's kappa, linear and quadratic weighted, of the synthetic against the manual labels), Tab. 16
  (CAP's Spearman, Kendall and pairwise accuracy on the 1,638 rows with a manual label, under each label source)
  and Tab. 17 (CAP's class means there, under each source), with the labels of CAP-Correctness.csv.

Not determined by the release: COMET's numbers (no column), Tab. 5/6 (LLM answers), Tab. 1 and 15 (data and
annotation statistics).

Example:
    >>> frame = pd.DataFrame({"table": [2], "row": ["CAP"], "column": ["spearman"], "printed": [60.37],
    ...                       "recomputed": [0.6038337709]})
    >>> at_print_precision(frame)[["recomputed", "difference", "equal"]].values.tolist()
    [[60.38, 0.01, False]]
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pandas as pd

from caplib import paper
from caplib.evaluation import agreement, pair_name
from caplib.evaluation.concordance import by_label_source
from caplib.evaluation.tables import protocol_tables
from caplib.plots import PRINTED_METRIC
from caplib.release import PROBABILITY_KEYS, SCORE_METRICS
from caplib.sweep import sweep
from caplib.taxonomy import HARD_PAIRS, LABELS

#: Tables printed with one decimal (the rest with two).
_ONE_DECIMAL = {8: 1}

__all__ = ["RELEASE_SEED", "at_print_precision", "paper_against_release", "release_tables"]

#: The seed of the authors' bootstrap (their configs/default.yaml): with it, caplib draws their resamples.
RELEASE_SEED = 42
_PRINTED = {metric: PRINTED_METRIC.get(metric, metric) for metric in SCORE_METRICS}


def release_tables(scores: pd.DataFrame, *, split: str = "test", n_resamples: int = 10_000,
                   seed: int = RELEASE_SEED) -> dict[str, pd.DataFrame]:
    """:func:`caplib.evaluation.tables.protocol_tables` of every released metric on the rows of ``split`` of the
    release's scores (:func:`caplib.release.load_scores`), CAP as the reference of the paired differences: the
    tables of the release's ``results.json``, recomputed.

    Example:
        >>> tables = release_tables(load_scores("data/official/scores.json"))  # doctest: +SKIP
        >>> tables["correlations"].set_index("metric").loc["cap", "spearman"]  # doctest: +SKIP
        0.6038337709183791
    """
    rows = scores[scores["split"] == split]
    metrics = [metric for metric in scores.attrs.get("metrics", SCORE_METRICS) if metric in rows.columns]
    return protocol_tables({metric: rows[metric].to_numpy(dtype=float) for metric in metrics}, rows["label"],
                           n_resamples=n_resamples, seed=seed, reference="cap")


def _long(number: int, values: Mapping[tuple[str, str], float]) -> list[dict[str, object]]:
    """Rows of one table: the printed value of each (row, column) beside the recomputed one (NaN: not determined)."""
    table = paper.load_table(number)
    key = {2: "metric", 3: "comparison", 4: "metric", 8: "key", 13: "metric", 14: "metric", 16: "key",
           17: "label"}[number]
    records = []
    for _, printed in table.iterrows():
        for column in table.columns:
            if column in (key, "higher", "lower", "printed", "label_source", "violations_total", "agreement_metric"):
                continue
            records.append({"table": number, "row": str(printed[key]), "column": column,
                            "printed": float(printed[column]),
                            "recomputed": values.get((str(printed[key]), column), np.nan)})
    return records


def paper_against_release(tables: Mapping[str, pd.DataFrame], scores: pd.DataFrame,
                          correctness: pd.DataFrame | None = None) -> pd.DataFrame:
    """Every printed number of Tab. 2, 3, 4, 12, 13, 14 (and 8, 16, 17 with ``correctness``, the CAP-Correctness rows
    with ``label_semantic_manual``) beside its recomputation from the release (fractions, as computed; counts as
    counts), one row each: ``table``, ``row``, ``column``, ``printed``, ``recomputed`` (NaN where the release does
    not determine it: COMET). ``tables`` are :func:`release_tables` of the test split; ``scores`` the release's
    per-row scores (for the sweep of Tab. 12 on its validation rows, and the labels of Tab. 16/17).
    :func:`at_print_precision` rounds and compares.

    Example:
        >>> rows = paper_against_release(release_tables(scores), scores, correctness)  # doctest: +SKIP
        >>> sorted(rows.table.unique())  # doctest: +SKIP
        [2, 3, 4, 8, 12, 13, 14, 16, 17]
    """
    correlations = tables["correlations"].set_index("metric")
    pairs = tables["class_pairs"].set_index(["metric", "better", "worse"])
    monotonicity = tables["monotonicity"].set_index("metric")
    values: dict[tuple[str, str], float] = {}
    for metric, printed in _PRINTED.items():
        if metric not in correlations.index:
            continue
        row = correlations.loc[metric]
        for column in ("spearman", "kendall", "pairwise_accuracy"):
            values[printed, column] = float(row[column])
        for column in ("spearman", "kendall"):
            values[printed, f"{column}_low"], values[printed, f"{column}_high"] = (float(row[f"{column}_ci_low"]),
                                                                                   float(row[f"{column}_ci_high"]))
        for higher, lower in HARD_PAIRS:
            values[printed, pair_name(higher, lower)] = float(
                pairs.loc[(metric, higher, lower), "accuracy"])
        values[printed, "violations"] = float(monotonicity.loc[metric, "mean_violations"])
        values[printed, "violation_rate"] = float(monotonicity.loc[metric, "mean_violation_rate"])
    records = []
    for number in (2, 4, 13, 14):
        records += _long(number, values)
    auc = {}
    for _, printed in paper.load_table(3).iterrows():
        key = ("cap", printed["higher"], printed["lower"])
        auc[str(printed["comparison"]), "cap_auc"] = float(pairs.loc[key, "auc"]) if key in pairs.index else np.nan
    records += _long(3, auc)
    records += _sweep_rows(scores)
    if correctness is not None:
        records += _label_source_rows(scores, correctness)
    frame = pd.DataFrame(records)
    return frame.sort_values("table", kind="stable").reset_index(drop=True)


def _sweep_rows(scores: pd.DataFrame) -> list[dict[str, object]]:
    """Tab. 12 from the released probabilities of the validation rows (App. C.3)."""
    rows = scores[scores["split"] == "validation"]
    probabilities = rows[list(PROBABILITY_KEYS)].to_numpy(dtype=float)
    table = paper.load_table(12)
    grid = sweep(probabilities[:, :3], probabilities[:, 3:], rows["label"].tolist(),
                 alphas=sorted(set(table.alpha)), lams=sorted(set(table.lam))).set_index(["alpha", "lam"])
    records = []
    for _, printed in table.iterrows():
        setting = (float(printed.alpha), float(printed.lam))
        for column in ("spearman", "pairwise_accuracy", "violations"):
            records.append({"table": 12, "row": f"alpha={setting[0]:g}, lam={setting[1]:g}", "column": column,
                            "printed": float(printed[column]), "recomputed": float(grid.loc[setting, column])})
    return records


def _label_source_rows(scores: pd.DataFrame, correctness: pd.DataFrame) -> list[dict[str, object]]:
    """Tab. 8 (the two label sources' agreement), 16 and 17 (CAP under each) on the rows with a manual label."""
    manual = correctness.dropna(subset=["label_semantic_manual"]).set_index("row_id")["label_semantic_manual"]
    rows = scores.set_index("row_id").join(manual, how="inner")
    kappas = agreement(rows["label"], rows["label_semantic_manual"])
    values: dict[tuple[str, str], float] = {(key, "score"): kappas[key] for key in ("kappa", "linear", "quadratic")}
    table = by_label_source({"cap": rows["cap"]}, {"synthetic": rows["label"], "human": rows["label_semantic_manual"]}
                            ).set_index("source")
    for key, name in (("synthetic", "Synthetic"), ("human", "Annotator")):
        line = table.loc[key]
        values |= {(key, column): float(line[column]) for column in ("spearman", "kendall", "pairwise_accuracy")}
        values |= {(label, name): float(line[f"mean {label}"]) for label in LABELS
                   if pd.notna(line.get(f"mean {label}"))}
    return _long(8, values) + _long(16, values) + _long(17, values)


def at_print_precision(frame: pd.DataFrame) -> pd.DataFrame:
    """``frame`` (:func:`paper_against_release`) with ``recomputed`` on the paper's scale and precision (x100 with two
    decimals, one for Tab. 8; counts as counts), ``difference`` (recomputed - printed) and ``equal`` (the same printed number).

    Example:
        >>> frame = pd.DataFrame({"table": [14], "row": ["CAP"], "column": ["violations"], "printed": [4.0],
        ...                       "recomputed": [4.0]})
        >>> at_print_precision(frame)["equal"].tolist()
        [True]
    """
    counts = frame["column"].eq("violations")
    places = frame["table"].map(lambda number: _ONE_DECIMAL.get(number, 2))
    scaled = np.where(counts, frame["recomputed"], [round(value * 100, int(p)) if pd.notna(value) else np.nan
                                                    for value, p in zip(frame["recomputed"], places)])
    out = frame.assign(recomputed=scaled)
    out["difference"] = np.round(out["recomputed"] - out["printed"], 2)
    out["equal"] = out["difference"].eq(0)
    return out
