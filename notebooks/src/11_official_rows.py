# %% [markdown]
# # 11. Our scorers on the paper's rows
#
# **The question.** Every other chapter scores its rows with caplib's own scorers. The authors released, for the
# paper's own rows, the score every metric gave each row (their `docs/data/scores.json`: BLEU, ROUGE-L, METEOR,
# BERTScore and CAP with the NLI probabilities of both directions; see the appendix). Here caplib's scorers run on
# exactly those rows, the official test split of CAP-Correctness, and every score is set beside the released one:
#
# * **BLEU, ROUGE-L, METEOR** need no model, so caplib's and the authors' must be *the same numbers*, row by row
#   (the profile's settings: lower-cased text, nltk's word tokenizer, Porter stems for ROUGE-L, ten decimals as the
#   release writes them). What the protocol makes of them (Spearman's $\rho$, pairwise accuracy) must then agree too.
# * **BERTScore and CAP** run other models here than the paper's (the profile's: in the offline profile MiniLM for
#   BERTScore and the locally trained NLI backbone for CAP, where the paper has roberta-large and
#   nli-deberta-v3-large). They are compared by how alike they rank the rows and what the protocol makes of each: a
#   stand-in is as good as it orders the rows as the paper's model does.
#
# The paper's own backbone reaches $\rho$ 60.37 and pairwise accuracy 77.70 here (Tab. 2). Where the offline
# backbone falls short, the last sections show where: by class, and the rows it disagrees with most.

# %% tags=["parameters", "hide-input"]
profile = "offline"  # whose models score the official rows ("offline": the offline models, as offline-official)
released = "released"  # the profile of the authors' released per-row scores (caplib/profiles/released.yaml)
split = "test"  # the paper's headline split (Sec. 6.3)
row_limit = None  # smoke runs: only the first N rows of the split
seed = 0  # bootstrap seed of the intervals (App. D.1)
n_resamples = 1000  # bootstrap resamples (paper: 10,000); both sides share the same resamples
confidence = 0.95  # bootstrap interval
device = None  # None: CUDA when available, else CPU
dtype = None  # NLI precision; None: the profile's
nli_backend = None  # None: torch; "onnxruntime-int8": the fast CPU path (pip install 'caplib[onnx]')
record_to = "11_official_rows.numbers.json"  # where this chapter records its key numbers

# %% [markdown]
# **Run this chapter with other parameters** (open the first folded cell above for all of them and their defaults):
# `papermill notebooks/11_official_rows.ipynb out.ipynb -p profile offline -p split validation -p nli_backend onnxruntime-int8`.
# Strings and numbers go with `-p NAME VALUE`. A parameter that cannot be used stops the chapter at once with one
# line naming it and its valid values. The chapter needs the release's files in `data/official/` (`make book` copies
# them from a local copy of the authors' repository when there is one; else `caplib fetch --profile released`).
# Each run writes the numbers it records to the file `record_to` names.

# %% tags=["hide-input"]
import numpy as np
import pandas as pd
from IPython.display import HTML, Markdown, display

from caplib import book, paper, plots
from caplib.evaluation.concordance import by_label_source, concordance
from caplib.profiles import on_official_rows
from caplib.release import SCORE_METRICS
from caplib.taxonomy import LABELS

# a bad parameter stops the chapter here with one line naming it and its valid values, before any work
book.check_parameters(profile=profile, released=released, split=split, row_limit=row_limit, seed=seed,
                      n_resamples=n_resamples, confidence=confidence, nli_backend=nli_backend)
runtime = book.setup(device, False, dtype, nli_backend)
LEXICAL = [metric for metric in SCORE_METRICS if metric in ("bleu", "rouge_l", "meteor")]
MODELLED = [metric for metric in SCORE_METRICS if metric not in LEXICAL]  # BERTScore and CAP: a model each

# %% [markdown]
# ## The rows and both scorings
# The official CAP-Correctness rows of the split with the authors' splits file (the row without an answer is left
# out, as the authors leave it out), scored twice: by caplib with the profile's models, and read from the release.

# %%
models = on_official_rows(profile)
ours = book.score_split(models, list(SCORE_METRICS), split=split, row_limit=row_limit, runtime=runtime)
theirs = book.score_split(released, list(SCORE_METRICS), split=split, row_limit=row_limit, runtime=runtime)
numbers = {"profile": models.name, "released": released, "split": split, "scale": "x100", "row_limit": row_limit}
both = [metric for metric in SCORE_METRICS if ours.available and theirs.available
        and metric in ours.run and metric in theirs.run]
if both:
    frame = ours.frame.join(theirs.frame[both].add_suffix("_released"))
    labels = frame["label_semantic"]
    tables = concordance({m: frame[m] for m in both}, {m: frame[f"{m}_released"] for m in both}, labels,
                         n_resamples=n_resamples, confidence=confidence, seed=seed)
    numbers["n_rows"] = len(frame)
    numbers["signatures"] = {"caplib": ours.signatures, "released": theirs.signatures}
    display(Markdown(f"**caplib** ({models.name}: {models.description})\n\n{ours.summary}\n\n"
                     f"**Released** ({released}): {theirs.summary}"))
else:
    reasons = {**{f"caplib {k}": v for k, v in ours.skipped.items()},
               **{f"release {k}": v for k, v in theirs.skipped.items()}}
    display(Markdown("**Nothing to compare in this run.** "
                     + "; ".join(f"{where}: {why}" for where, why in reasons.items())
                     + ". The release's files come with `caplib fetch --profile released` (or `--mirror DIR` from "
                       "a local copy of the authors' repository); then `make book` runs this chapter on them."))


def shown(table: pd.DataFrame) -> pd.DataFrame:
    """The concordance table as printed: x100 with the intervals in brackets, per side."""
    out = pd.DataFrame(index=[plots.PRINTED_METRIC[m] for m in table["metric"]])
    out["rows equal (%)"] = 100 * table["rows_equal"].to_numpy()
    out["max |diff|"] = table["max_abs_difference"].to_numpy()
    out["ρ between the two"] = 100 * table["spearman"].to_numpy()
    for statistic, name in (("spearman", "ρ"), ("pairwise_accuracy", "PA")):
        for side, who in (("ours", "caplib"), ("theirs", "released")):
            point, low, high = (100 * table[f"{statistic}_{side}{end}"].to_numpy()
                                for end in ("", "_ci_low", "_ci_high"))
            out[f"{name} {who}"] = [f"{p:.2f} [{lo:.2f}, {hi:.2f}]" for p, lo, hi in zip(point, low, high)]
    out["violations caplib / released"] = [f"{a} / {b}" for a, b in zip(table["violations_ours"],
                                                                         table["violations_theirs"])]
    return out


# %% [markdown]
# ## BLEU, ROUGE-L and METEOR: the same numbers, row by row
# For each metric: the share of rows on which caplib's score equals the released one (to $10^{-6}$), the largest
# difference, and what the protocol makes of each side, Spearman's $\rho$ and pairwise accuracy (Eq. 8) with their
# bootstrap intervals, and the inverted class means out of 25 (x100; Tab. 2 prints
# BLEU 10.95, ROUGE-L 16.67 and METEOR 14.70 for $\rho$).

# %%
if both:
    metrics_table = tables["metrics"].set_index("metric")
    lexical = [m for m in LEXICAL if m in both]
    display(shown(tables["metrics"][tables["metrics"]["metric"].isin(lexical)]).style.format(
        {"rows equal (%)": "{:.2f}", "max |diff|": "{:.2g}", "ρ between the two": "{:.2f}"}))
    numbers["lexical"] = {m: {key: metrics_table.loc[m, key].item() for key in (
        "rows_equal", "rows_differing", "max_abs_difference", "spearman_ours", "spearman_theirs",
        "pairwise_accuracy_ours", "pairwise_accuracy_theirs")} for m in lexical}
    same = [plots.PRINTED_METRIC[m] for m in lexical if metrics_table.loc[m, "rows_differing"] == 0]
    apart = {plots.PRINTED_METRIC[m]: int(metrics_table.loc[m, "rows_differing"]) for m in lexical
             if metrics_table.loc[m, "rows_differing"]}
    display(Markdown(
        (f"**{', '.join(same)}: every one of the {len(frame):,} rows equal**, so the protocol's numbers are the "
         "released ones to the last digit. " if same else "")
        + ("".join(f"**{name}: {count:,} rows differ** by more than 1e-6 (largest difference above). "
                   for name, count in apart.items())
           + "A difference here is a difference of implementation: see `caplib.baselines` for the settings."
           if apart else "")))

# %% [markdown]
# ## BERTScore and CAP: other models, the same protocol
# The same table for the two metrics that need a model. "ρ between the two" is how alike the two models rank the
# rows; the protocol's columns say how well each one follows the taxonomy. The class means come after: a row per
# class, from the most correct (exact) down to the least (contradictory), caplib's beside the released.

# %%
modelled = [m for m in MODELLED if m in both] if both else []
if modelled:
    display(shown(tables["metrics"][tables["metrics"]["metric"].isin(modelled)]).style.format(
        {"rows equal (%)": "{:.2f}", "max |diff|": "{:.2g}", "ρ between the two": "{:.2f}"}))
    means = tables["class_means"][tables["class_means"]["metric"].isin(modelled)]
    wide = means.pivot(index="label", columns="metric", values=["ours", "theirs"]).reindex(
        [label for label in LABELS if label in set(means["label"])])
    wide.columns = [f"{plots.PRINTED_METRIC[m]} {'caplib' if side == 'ours' else 'released'}"
                    for side, m in wide.columns]
    display(wide.style.format("{:.3f}"))
    numbers["modelled"] = {m: {key: metrics_table.loc[m, key].item() for key in (
        "spearman", "spearman_ours", "spearman_theirs", "pairwise_accuracy_ours", "pairwise_accuracy_theirs",
        "violations_ours", "violations_theirs")} for m in modelled}
    numbers["class_means"] = {m: {side: means[means["metric"] == m].set_index("label")[side].to_dict()
                                  for side in ("ours", "theirs")} for m in modelled}
    if "cap" in modelled:
        display(plots.grouped_bars(wide[[c for c in wide.columns if c.startswith("CAP")]],
                                   "CAP's class means: caplib's backbone beside the paper's", ylabel="mean CAP"))
elif both:
    display(Markdown("Neither BERTScore nor CAP ran in both scorings: "
                     + "; ".join(f"{m}: {ours.skipped.get(m) or theirs.skipped.get(m)}" for m in MODELLED)))

# %% [markdown]
# ## CAP, row by row
# Each point is one row: the paper's CAP (released, nli-deberta-v3-large) across, caplib's up. On the diagonal the
# two agree; hover a point for its question, answers and class. A stand-in backbone that follows the paper's would
# put each class's cloud where the paper's does; the clouds that lie across the diagonal are the classes it
# scores differently.

# %%
if "cap" in modelled:
    display(HTML(plots.to_html(plots.interactive_scatter(
        frame, "cap_released", "cap", x_title="CAP, released (paper's backbone)",
        y_title=f"CAP, caplib ({models.name})", title="CAP per row: the paper's backbone and caplib's"))))
    gap = (frame["cap"] - frame["cap_released"]).abs()
    by_class = pd.DataFrame({"rows": labels.value_counts(), "mean |diff|": gap.groupby(labels).mean(),
                             "rows |diff| > 0.5 (%)": 100 * (gap > 0.5).groupby(labels).mean(),
                             "mean caplib − released": (frame["cap"] - frame["cap_released"]).groupby(labels).mean()}
                            ).reindex([label for label in LABELS if label in set(labels)])
    display(by_class.style.format({"mean |diff|": "{:.3f}", "rows |diff| > 0.5 (%)": "{:.1f}",
                                   "mean caplib − released": "{:+.3f}"}))
    numbers["cap_gap_by_class"] = by_class.to_dict(orient="index")
    worst = by_class["mean |diff|"].idxmax()
    display(Markdown(f"The two backbones part most on **{worst}** rows (mean |difference| "
                     f"{by_class.loc[worst, 'mean |diff|']:.3f}); on average caplib's CAP is "
                     + ("higher" if by_class.loc[worst, "mean caplib − released"] > 0 else "lower")
                     + " there."))

# %% [markdown]
# ### Where they disagree most
# The rows with the largest difference between the two CAPs, with the statements both NLI models read (the release's
# premise and hypothesis) and the entailment probability each gave, gold -> prediction.

# %%
if "cap" in modelled:
    released_rows = theirs.frame
    top = gap.nlargest(12).index
    table = pd.DataFrame({
        "class": labels[top], "gold statement": frame.loc[top, "premise"],
        "answer statement": frame.loc[top, "hypothesis"],
        "CAP caplib": frame.loc[top, "cap"], "CAP released": frame.loc[top, "cap_released"],
        "P(ent) caplib": frame.loc[top, "cap_p_entail_fwd"],
        "P(ent) released": released_rows.loc[top, "cap_p_entail_fwd"],
    }).set_index(frame.loc[top, "row_id"].rename("row_id"))
    display(table.style.format({column: "{:.3f}" for column in table.columns if column.startswith(("CAP", "P("))}))

# %% [markdown]
# ## CAP under each label source (Tab. 16)
# The paper checks that CAP's ranking does not depend on who labelled the rows: on the rows annotators also
# labelled, CAP's $\rho$, $\tau$ and pairwise accuracy against the synthetic labels and against the annotators' ones
# (Tab. 16: 66.87 and 69.89 for $\rho$, on all 1,638 such rows). Here: both CAPs, on this split's rows
# with both labels.

# %%
if "cap" in modelled and "label_semantic_manual" in frame.columns:
    sources = by_label_source({"caplib": frame["cap"], "released": frame["cap_released"]},
                              {"synthetic": frame["label_semantic"], "annotators": frame["label_semantic_manual"]})
    display(sources.set_index(["metric", "source"])[["n", "spearman", "kendall", "pairwise_accuracy"]]
            .mul([1, 100, 100, 100]).style.format({"n": "{:.0f}", "spearman": "{:.2f}", "kendall": "{:.2f}",
                                                    "pairwise_accuracy": "{:.2f}"}))
    numbers["label_sources"] = {f"{row.metric} {row.source}": {"n": int(row.n), "spearman": row.spearman,
                                                                "kendall": row.kendall,
                                                                "pairwise_accuracy": row.pairwise_accuracy}
                                for row in sources.itertuples()}
    paper_sources = paper.load_table(16)
    display(Markdown("The paper's Tab. 16 for comparison (its own CAP, all rows with a manual label):"))
    display(paper_sources)

# %%
display(Markdown(book.record(numbers, record_to)))
