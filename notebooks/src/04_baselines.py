# %% [markdown]
# # 4. CAP against established metrics
#
# **The paper's claim (Sec. 7.1, App. D.1).** On the 7,827-example test split of CAP-Correctness, lexical metrics
# (BLEU, ROUGE-L, METEOR) and BERTScore barely follow the taxonomy's ordering (Spearman's $\rho$ 10.95 to 16.67,
# pairwise accuracy 51.57 to 56.18 against a chance level of 50), COMET does better ($\rho$ 26.9, pairwise accuracy
# 61.1), and CAP is
# in "a markedly different regime" ($\rho$ 60.4, pairwise accuracy 77.7). CAP's 95% bootstrap intervals are well
# separated from every baseline's (Tab. 13). Fig. 3 shows why: CAP's per-class scores form bands ordered down the
# taxonomy, while the baselines' distributions overlap. Correlations, accuracies and intervals are ×100 here, as in
# the paper's tables.
#
# This chapter scores every metric on the test split, lists which checkpoint each one used (its *signature*) and
# which could not run here and why, and puts Tab. 2 and Tab. 13 beside this run's numbers. The protocol
# (Sec. 6.2, App. C.1) is `caplib.evaluation`: Spearman's $\rho$ and Kendall's $\tau_b$ between scores and the
# severity ranks $r(c)$ of App. C.2, and pairwise accuracy over all example pairs $(a, b)$ from the 25 strictly
# ordered class pairs, those with $r(c_a) > r(c_b)$ (a tie counts as a miss):
#
# $$\mathrm{PairAcc}(m) = \mathbb{E}_{(a, b) \sim \mathcal{D}} \left[ \mathbb{1}\{ m(a) > m(b) \} \right] \qquad
# \text{(Eq. 8)}$$

# %% tags=["parameters", "hide-input"]
profile = "offline"  # "offline" (packaged models, bundled sample) or "paper" (official data, Hub checkpoints)
data_path = None  # CAP-Correctness CSV; None: the profile's (offline: bundled sample; paper: data/official/)
splits_path = None  # its row_id,split file; None: the profile's default
split = "test"  # the paper's headline split (Sec. 6.3)
seed = 0  # bootstrap seed (App. D.1)
n_resamples = 1000  # bootstrap resamples (paper: 10,000)
confidence = 0.95  # bootstrap interval (App. D.1)
device = None  # None: CUDA when available, else CPU
dtype = None  # NLI precision; None: the profile's ("auto": float16 on CUDA as in App. C.2, float32 on CPU)
allow_unpinned = False  # True: load Hub models pinned by neither profile nor lock (main; commit recorded)
row_limit = None  # smoke runs: only the first N rows of the split
metrics = ["cap", "bleu", "rouge_l", "meteor", "bertscore", "comet", "em", "acc"]
shortcut = True  # also report the shortcut baseline: what surface cues alone achieve (caplib.shortcut)
record_to = "04_baselines.numbers.json"  # where this chapter records its key numbers

# %% [markdown]
# **Run this chapter with other parameters** (open the first folded cell above for all of them and their defaults):
# `papermill notebooks/04_baselines.ipynb out.ipynb -p profile offline -p split validation -p n_resamples 200 -y 'metrics: [cap, bleu, bertscore]'`.
# Strings and numbers go with `-p NAME VALUE`; lists go as YAML with `-y 'NAME: [a, b]'`. A parameter that
# cannot be used stops the chapter at once with one line naming it and its valid values. `make book`
# runs every chapter with its defaults (`make book PROFILE=paper` for the paper's setup).
# Each run writes the numbers it records to the file `record_to` names, in the folder papermill runs in
# (`-p record_to PATH` puts it elsewhere), and a misspelt parameter name stops the chapter like a bad value.

# %% tags=["hide-input"]
import numpy as np
import pandas as pd
from IPython.display import HTML, Markdown, display

from caplib import book, evaluation, paper, plots
from caplib.taxonomy import LABELS

# a bad parameter stops the chapter here with one line naming it and its valid values, before any work
book.check_parameters(profile=profile, split=split, seed=seed, n_resamples=n_resamples, confidence=confidence,
                      row_limit=row_limit, metrics=metrics)
runtime = book.setup(device, allow_unpinned, dtype)

STRING_METRICS = ("bleu", "rouge_l", "meteor")  # no model: only the data can move them


# %% [markdown]
# ## Data and scores
# The offline profile reads the bundled sample (`data/sample/cap_correctness.csv`: real ARC, OpenBookQA and MMLU
# test questions, each with 8 authored candidates, one per class; about one question in six is in the validation
# split), the paper profile the official `CAP-Correctness.csv` with its splits file from `data/official/`.
# CAP scores the rows' own premise/hypothesis statements (the released CAP-Correctness carries them; Sec. 6.3); the
# other metrics compare the gold answer with the candidate answer (App. C.2).

# %%
scores = book.score_split(profile, metrics, split=split, row_limit=row_limit, data_path=data_path,
                          splits_path=splits_path, runtime=runtime, shortcut_seed=seed if shortcut else None)
metrics, run = list(scores.metrics), scores.run  # asked for (with the shortcut baseline), and those that ran
numbers = {"profile": profile, "split": split, "scale": "x100", **scores.numbers}
if scores.available:
    numbers["class_counts"] = scores.class_counts
    differs = scores.differences_from_paper(profile)  # why this run's numbers may differ from the paper's
display(Markdown(scores.summary))

# %% [markdown]
# **The shortcut baseline.** Class-conditioned generation leaves surface traces in any such dataset (the paper's
# included): contradictions carry negation words, partials are shorter than the gold, overinclusive answers longer.
# `Shortcut` measures how far those traces go: a logistic regression on surface features of gold and answer
# (lengths and their ratio, word overlap with the gold, negation words, list markers, numbers; never the
# question, a model or the label; `caplib.shortcut.FEATURES`), fitted out of fold with folds grouped by
# question, scoring each row with its expected severity. It is a lower bar every metric should clear, not a
# metric: it is fitted on the labels of the other questions.

# %% [markdown]
# ## Which model each metric used, and which could not run
# Every score carries a signature naming the package versions, checkpoints and settings that produced it
# (sacrebleu style). The paper's setup (App. C.2): nltk `sentence_bleu` and `meteor_score` on lower-cased text
# tokenized as the `word_tokenize` of nltk `3.9` (`tok:nltk-3.9`), `rouge_score` rougeL with Porter stemming (`stem:yes`) —
# the settings under which these three equal the authors' released per-row scores — BERTScore F1 with roberta-large,
# COMET `Unbabel/wmt22-comet-da`, CAP with
# `cross-encoder/nli-deberta-v3-large` at $\alpha = 0.85$, $\lambda = 0.30$. Offline, BERTScore runs on
# all-MiniLM-L6-v2 and CAP on the NLI cross-encoder trained locally (`caplib.offline_nli`); COMET has no offline
# checkpoint. A metric that cannot run is skipped with its reason, never given a made-up score.

# %%
if scores.available:
    status = pd.DataFrame(
        [(metric, "scored", scores.signatures[metric]) if metric in run
         else (metric, "skipped", scores.skipped[metric]) for metric in metrics],
        columns=["metric", "status", "signature / reason"],
    )
    if "cap" in scores.scored.metrics:
        given = scores.scored.metrics["cap"].get("statements", "none (skipped)")
        display(Markdown(f"CAP's statements: {given}."))
    display(status.style.hide(axis="index").set_properties(**{"text-align": "left"})
            .set_properties(subset=["signature / reason"], **{"word-break": "break-all"}))  # one unbroken string

# %% [markdown]
# ## Tab. 2: rank correlation and pairwise accuracy
# Values ×100 as the paper prints them. EM and ACC (Q-CARE's exact match and containment accuracy) are not in the
# paper's tables; they are shown as two more reference points. Both are 0/1 scores, and pairwise accuracy counts a
# tie as a miss (Eq. 8), so their pairwise accuracy is low even where their rank correlation is not: EM is 1 on
# `exact` rows and 0 almost everywhere else, and separating the top class from the rest alone buys a sizeable
# $\rho$.

# %%
if scores.available:
    table = evaluation.report(scores.frame, run, "label_semantic")
    numbers["signatures"]["evaluation"] = table.attrs["signature"]
    reported = paper.load_table(2).set_index("metric")
    headers = {"spearman": "Spearman ρ", "kendall": "Kendall τ", "pairwise_accuracy": "Pairwise Acc."}
    tab2 = pd.DataFrame(index=[plots.PRINTED_METRIC[m] for m in metrics])
    for column, header in headers.items():
        tab2[(header, "paper")] = reported[column].reindex(tab2.index)
        tab2[(header, "this run")] = [100 * table.loc[m, column] if m in run else float("nan")
                                      for m in metrics]
    tab2.columns = pd.MultiIndex.from_tuples(tab2.columns)
    numbers["tab2"] = {m: {c: 100 * float(table.loc[m, c]) for c in headers} for m in run}
    display(tab2.style.format("{:.2f}", na_rep="–"))

# %%
if scores.available:
    def gap(m, column="spearman"):
        """This run minus the paper for metric ``m``, x100 (NaN where either has no value)."""
        theirs = reported[column].get(plots.PRINTED_METRIC[m], float("nan"))
        return 100 * table.loc[m, column] - theirs if m in run else float("nan")

    def versus(m, column, name):
        """'<name> is d below/above the paper's (ours vs theirs)', x100."""
        ours, d = 100 * table.loc[m, column], gap(m, column)
        side = "below" if d < 0 else "above"
        return f"{name} is {abs(d):.2f} {side} the paper's ({ours:.2f} vs {ours - d:.2f})"

    said = []
    if "cap" in run and pd.notna(gap("cap")):
        causes = [differs[k] for k in ("data", "cap") if k in differs]
        said.append(versus("cap", "spearman", "CAP's ρ") + " and "
                    f"{versus('cap', 'pairwise_accuracy', 'its pairwise accuracy')}; "
                    + (f"what differs: {' and '.join(causes)}." if causes else "data and backbone are the "
                       "paper's, so the difference is sampling or software (the signatures above)."))
    strings = [m for m in STRING_METRICS if m in run and pd.notna(gap(m))]
    if strings:
        spread = [gap(m) for m in strings]
        names = ", ".join(plots.PRINTED_METRIC[m] for m in strings)
        said.append(f"{names} uses no model, so only the data move it: its ρ is {spread[0]:+.2f} from the "
                    "paper's." if len(strings) == 1 else
                    f"{names} use no model, so only the data move them: their ρ lies {min(spread):+.2f} to "
                    f"{max(spread):+.2f} from the paper's.")
    if "bertscore" in run and pd.notna(gap("bertscore")):
        said.append(f"BERTScore's ρ is {gap('bertscore'):+.2f} from the paper's"
                    + (f", with {differs['bertscore']}" if "bertscore" in differs else "") + ".")
    if "comet" in differs:
        said.append(differs["comet"] + ", so its row holds the paper's numbers only.")
    if scores.caution:
        display(Markdown("Too few rows per class to weigh this run against the paper (the caution above)."))
    elif said:
        display(Markdown("**Why this run and the paper differ here.** " + " ".join(said)
                         + " The Discussion below weighs these causes."))

# %% [markdown]
# The same numbers as bars: does CAP stand apart from the baselines in this run as it does in the paper?

# %%
if scores.available:
    bars = tab2["Spearman ρ"].dropna(how="all")
    fig = plots.grouped_bars(bars, "Spearman's rho x100 (Tab. 2): paper vs this run", ylabel="rho x100")
    display(fig)

# %% [markdown]
# ## Tab. 13: bootstrap confidence intervals
# Percentile bootstrap over examples (App. D.1): `n_resamples` resamples of the rows with replacement from
# `numpy.random.default_rng(seed)`, the interval between the 2.5th and 97.5th percentiles of the resampled
# statistic. The paper used 10,000 resamples of 7,827 rows. An interval's width shrinks like $1/\sqrt{n}$ in the
# number of rows $n$, so a smaller sample gives wider intervals; the sentence under the table compares the widths.
# When some resample leaves a statistic undefined (a tiny `row_limit` run, where a resample can hold a constant 0/1
# score), the interval is left empty and its reason recorded under `skipped`.

# %%
if scores.available:
    for m in run:
        for name in ("spearman", "kendall"):
            try:
                _, low, high = evaluation.bootstrap_ci(name, scores.frame[m], scores.frame["label_semantic"],
                                                       n_resamples=n_resamples, confidence=confidence,
                                                       seed=seed)
            except ValueError as error:
                low = high = float("nan")
                numbers["skipped"][f"bootstrap {name} {m}"] = str(error)
            table.loc[m, f"{name}_low"], table.loc[m, f"{name}_high"] = low, high
    reported13 = paper.load_table(13).set_index("metric")
    tab13 = pd.DataFrame(index=[plots.PRINTED_METRIC[m] for m in metrics])
    for name, header in (("spearman", "Spearman ρ x100"), ("kendall", "Kendall τ x100")):
        columns = (name, f"{name}_low", f"{name}_high")
        for source in ("paper", "this run"):
            if source == "paper":
                point, low, high = (reported13[c].reindex(tab13.index) for c in columns)
            else:
                point, low, high = ([100 * table.loc[m, c] if m in run else float("nan") for m in metrics]
                                    for c in columns)
            tab13[(header, source)] = [("–" if pd.isna(p) else f"{p:.2f}" if pd.isna(lo) else
                                        f"{p:.2f} [{lo:.2f}, {hi:.2f}]")
                                       for p, lo, hi in zip(point, low, high)]
    tab13.columns = pd.MultiIndex.from_tuples(tab13.columns)
    recorded = ("spearman", "spearman_low", "spearman_high", "kendall", "kendall_low", "kendall_high")
    numbers["tab13"] = {m: {c: 100 * float(table.loc[m, c]) for c in recorded} for m in run}
    numbers["n_resamples"], numbers["seed"], numbers["confidence"] = n_resamples, seed, confidence
    display(Markdown(f"{n_resamples} resamples, seed {seed}, {confidence:.0%} percentile intervals."))
    display(tab13.style)

# %%
if scores.available and not scores.caution:
    widths = pd.DataFrame(
        {"this run": [100 * (table.loc[m, "spearman_high"] - table.loc[m, "spearman_low"]) for m in run],
         "paper": [reported13["spearman_high"].get(plots.PRINTED_METRIC[m], float("nan"))
                   - reported13["spearman_low"].get(plots.PRINTED_METRIC[m], float("nan")) for m in run]},
        index=run).dropna()
    if len(widths):
        ratio = (widths["this run"] / widths["paper"]).mean()
        expected = np.sqrt(book.PAPER_TEST_ROWS / len(scores.frame))  # width ~ 1/sqrt(rows)
        cap_widths = (f"CAP: {widths.loc['cap', 'this run']:.2f} against {widths.loc['cap', 'paper']:.2f}"
                      if "cap" in widths.index else "CAP did not run")
        explained = ("most of the widening is the smaller sample" if abs(ratio - expected) < 0.25 * expected
                     else "the sample size does not explain it all; the scores' spread differs too")
        display(Markdown(
            f"**Why the intervals differ from the paper's.** Over the {len(widths)} "
            f"metric{'s' if len(widths) > 1 else ''} in both tables, this run's Spearman intervals are on "
            f"average {ratio:.1f} times as wide as the paper's ({cap_widths}). The sample size alone "
            f"predicts √({book.PAPER_TEST_ROWS:,} / {len(scores.frame):,}) = {expected:.1f}: {explained} (how much the "
            "resampling itself moves the ends: exercise 1). The centres differ as in Tab. 2."))

# %% [markdown]
# Are CAP's intervals separated from every baseline's, as in the paper? Checked on Spearman's $\rho$: CAP's interval
# lies *above* a baseline's (CAP's lower end above the baseline's upper end), *below* it, or the two overlap.

# %%
if "cap" in run:
    cap_low, cap_high = table.loc["cap", "spearman_low"], table.loc["cap", "spearman_high"]
    position = {m: "above" if cap_low > table.loc[m, "spearman_high"] else
                "below" if cap_high < table.loc[m, "spearman_low"] else "overlap"
                for m in run if m != "cap" and pd.notna(table.loc[m, "spearman_high"]) and pd.notna(cap_low)}
    numbers["cap_ci_position"] = position
    best = max([m for m in run if m != "shortcut"], key=lambda m: table.loc[m, "spearman"])
    numbers["best_by_spearman"] = best
    in_paper = [m for m in position if plots.PRINTED_METRIC[m] in reported13.index]
    overlaps = [plots.PRINTED_METRIC[m] for m in in_paper if position[m] != "above"]
    why = ""
    if in_paper and not scores.caution:
        why = (f" Of the paper's baselines that ran here, CAP is above {len(in_paper) - len(overlaps)} of "
               f"{len(in_paper)}; ")
        why += (f"{', '.join(overlaps)} {'reaches' if len(overlaps) == 1 else 'reach'} into its interval, "
                "which this run's smaller sample makes wider than the paper's (Tab. 13)." if overlaps else
                "any overlap is with a metric that has no row in Tab. 13.")
    display(Markdown(
        f"Highest Spearman's ρ in this run: **{plots.PRINTED_METRIC[best]}** "
        f"({100 * table.loc[best, 'spearman']:.2f}). CAP's interval versus the baselines': "
        + "; ".join(f"{where} {', '.join(plots.PRINTED_METRIC[m] for m, w in position.items() if w == where)}"
                    for where in ("above", "overlap", "below") if where in position.values())
        + " (the paper: above all five)." + why))
elif scores.available:
    display(Markdown(scores.not_run("cap")))

# %% [markdown]
# ## Which differences are significant: paired tests
# Two intervals that overlap do not mean two metrics are indistinguishable, and two that do not overlap are a
# stricter test than needed: both metrics score the *same* rows, so the question is the interval of their
# *difference*. A paired bootstrap draws the same resamples for both metrics and measures the difference on each
# (`caplib.evaluation.paired_bootstrap`, as sacrebleu's paired bootstrap compares two systems); an approximate
# randomization test swaps each row's two scores (as ranks) at random and asks how often a difference as large
# arises by chance (`paired_randomization`). Below, CAP minus each other metric, ×100, with the paired 95% interval
# and both p-values (`n_resamples` resamples and as many trials, `seed`); a difference is called significant when
# both p-values are below 0.05. The same test runs from the command line:
# `caplib compare scores.csv --metrics cap,bertscore --label-column label_semantic`. The paper reports no paired
# test; its CAP-versus-baseline gaps (Tab. 13) are far wider than its intervals.

# %%
if "cap" in run and len(run) > 1:
    paired = evaluation.paired_report(scores.frame, "cap", [m for m in run if m != "cap"], "label_semantic",
                                      n_resamples=n_resamples, confidence=confidence, seed=seed)
    numbers["paired"] = {m: {s: {k: (100 * v if k in ("delta", "low", "high") else v)
                                 for k, v in paired.loc[(m, s)].items()} for s in paired.loc[m].index}
                         for m in paired.index.unique("metric")}
    numbers["signatures"]["paired"] = paired.attrs["signatures"]
    printed = {**plots.PRINTED_METRIC, "spearman": "Spearman ρ", "pairwise_accuracy": "Pairwise accuracy"}
    shown = pd.DataFrame({
        (printed.get(s, s), column): [
            f"{100 * paired.loc[(m, s), 'delta']:+.1f} [{100 * paired.loc[(m, s), 'low']:+.1f}, "
            f"{100 * paired.loc[(m, s), 'high']:+.1f}]" if column == "CAP − metric [95% CI]" else
            " / ".join(f"≤{1 / (1 + n_resamples):.4f}" if p <= 1 / (1 + n_resamples) else f"{p:.3f}"  # the floor
                       for p in paired.loc[(m, s), ["p_value", "randomization_p_value"]])
            for m in paired.index.unique("metric")]
        for s in paired.index.unique("statistic") for column in ("CAP − metric [95% CI]", "p (bootstrap / AR)")},
        index=[plots.PRINTED_METRIC[m] for m in paired.index.unique("metric")])
    display(shown.style)
    display(Markdown(scores.caution or evaluation.paired_summary(paired, "CAP", printed)))
elif scores.available:
    display(Markdown("Only CAP ran: there is no pair to compare." if "cap" in run else scores.not_run("cap")))

# %% [markdown]
# ## Fig. 3: score distributions per class
# One panel per metric, classes top-down in the order of Eq. 1. A metric that follows the taxonomy shows boxes
# drifting left as one reads down; the paper's Fig. 3 shows this for CAP and a collapsed, overlapping picture for
# COMET. EM and ACC are 0/1 scores, so their boxes are degenerate: read the dots. Unlike the tables, the figures
# show the metrics' raw scores in $[0, 1]$ (the tables' values are a hundred times theirs).

# %%
if scores.available:
    display(Markdown("Choose the metric in the menu; hover over a dot to read its question, gold answer, "
                     "answer and its score under every metric. The static figure (all panels) follows, "
                     "folded."))
    display(HTML(plots.to_html(plots.interactive_distributions(scores.frame, run))))

# %% tags=["hide-output"]
if scores.available:
    display(plots.class_distributions(scores.frame, run, columns=4))

# %% [markdown]
# ## Discussion
# **Why the numbers differ from the paper's.** Three things change in the offline profile, and each moves the
# numbers: (1) the data: about a hundred test questions × 8 candidates written for this book to the paper's
# instructions (Tab. 18), with exactly one candidate per class per question, instead of 7,827 rows from the paper's
# Claude Haiku pipeline; (2) CAP's NLI backbone: the offline MiniLM cross-encoder of chapter 3 (all-MiniLM-L6-v2
# fine-tuned here on an NLI corpus authored for this book, pairs derived from QA questions by rules, and a sample of
# SNLI), not `nli-deberta-v3-large` trained on SNLI/MNLI/FEVER/ANLI; (3) BERTScore's
# encoder (MiniLM instead of roberta-large), and no COMET at all. Small samples also make every statistic noisy: the
# intervals above are the honest error bars. What should carry over is the *pattern*: lexical metrics close to the
# chance level of 50 in pairwise accuracy, and CAP clearly above them. The verdict below follows the paired tests
# above, not the order of the point values.

# %%
if "cap" in run:
    ranked = sorted(run, key=lambda m: -table.loc[m, "pairwise_accuracy"])
    paper_ranked = paper.load_table(2).sort_values("pairwise_accuracy", ascending=False)
    if "paired" in numbers:  # the verdict is the paired test's (both p-values below 0.05), not the ranking's
        tested = paired.xs("pairwise_accuracy", level="statistic")
        groups = {"ahead of": tested.index[tested["significant"] & (tested["delta"] > 0)],
                  "behind": tested.index[tested["significant"] & (tested["delta"] < 0)],
                  "not distinguishable from": tested.index[~tested["significant"].astype(bool)]}
        verdict = ("By the paired tests on pairwise accuracy, CAP is "
                   + "; ".join(f"{words} " + ", ".join(
                       f"{plots.PRINTED_METRIC[m]}" + ("" if words == "ahead of" else
                                                      f" ({100 * tested.loc[m, 'delta']:+.1f} "
                                                      f"[{100 * tested.loc[m, 'low']:+.1f}, "
                                                      f"{100 * tested.loc[m, 'high']:+.1f}])")
                       for m in members) for words, members in groups.items() if len(members)) + ". "
                   + ("So CAP is ahead of every metric here, as it is of every baseline in the paper."
                      if len(groups["ahead of"]) == len(tested) else
                      "So this run does **not** show CAP ahead of every metric, as the paper does."))
        if "shortcut" in run:
            verdict += (f" Counted in class pairs (chapter 5), the shortcut baseline violates "
                        f"{int(table.loc['shortcut', 'violations'])} and CAP {int(table.loc['cap', 'violations'])}.")
    else:
        verdict = "Only CAP ran: there is nothing to compare it with."
    display(Markdown(
        "Pairwise accuracy in this run, best first: "
        + ", ".join(f"{plots.PRINTED_METRIC[m]} {100 * table.loc[m, 'pairwise_accuracy']:.1f}"
                    for m in ranked)
        + ". The paper's order (Tab. 2): "
        + ", ".join(f"{m} {v:.1f}" for m, v in zip(paper_ranked["metric"], paper_ranked["pairwise_accuracy"]))
        + ". " + (scores.caution or verdict)))

# %% [markdown]
# **Does CAP add anything over surface cues?** CAP against the shortcut baseline, measure by measure (Tab. 2's
# correlations and pairwise accuracy, the violation count, Tab. 4's hard pairs and Tab. 3's AUCs): where the paired
# tests above test a measure, their verdict; elsewhere the point values, marked untested:

# %%
if "cap" in run and "shortcut" in run:
    # Tab. 2's protocol report and the paired tests, computed above: a tested measure is decided by its test
    verdict, text = book.against_shortcut(table, paired=paired if "paired" in numbers else None)
    numbers["cap_vs_shortcut"] = verdict
    display(Markdown(text))

# %%
display(Markdown(book.record(numbers, record_to)))

# %% [markdown]
# ## Exercises
# Each says whether it needs parameters only or a code edit. The solutions below are computed from this run's
# scores (exercise 2 also scores the other split, a few seconds offline); open them after trying.
#
# 1. **How stable are the interval ends?** *(parameters only: `-p n_resamples 10000 -p seed 1`)* Tab. 13 gives
#    CAP's Spearman interval from `n_resamples` resamples with seed `seed`; the paper drew 10,000. Rerun with
#    10,000 resamples and another seed: how far do the two ends move, next to the interval's width? To how many
#    decimals is this run's interval worth reporting?
# 2. **Is CAP's lead larger on the validation split?** *(parameters only: `-p split validation`)* The paper chose
#    $\alpha$, $\lambda$ and the NLI backbone on its validation split (Sec. 6.3), and the offline backbone's
#    training corpus was revised after a look at the sample's validation split (`data/nli/README.md`). Is CAP's
#    lead in $\rho$ and pairwise accuracy over the best of the paper's baselines larger there than in Tab. 2?
#    Is the difference in CAP's $\rho$ beyond the validation split's interval, with about a fifth as many rows?
# 3. **Why can a 0/1 score rank well but pair badly?** *(a code edit: pass `ties="half"` to
#    `evaluation.pairwise_accuracy`)* In Tab. 2, EM's $\rho$ is close to CAP's while its pairwise accuracy is far
#    below the chance level of 50. Eq. 8 counts a tie as a miss; count it as one half instead (as an AUC does).
#    How much do EM, ACC and CAP move, and what share of the ordered pairs does each tie?
# 4. **Where does a one-line rule fail?** *(parameters only: `-y 'metrics: [cap, em, acc]'`)* ACC is 1 when the
#    gold is contained in the answer or the answer in the gold. In its Fig. 3 panel, which classes get 1 most of
#    the time, and which ordered class pairs of Eq. 1 does that invert?

# %% tags=["hide-cell"]
solutions = []
if not scores.available:
    solutions.append(f"No solution can be computed: {scores.reason}.")
else:
    labels = scores.frame["label_semantic"]

    # 1. the Spearman interval of CAP (else the best metric) under other seeds and resample counts
    focus = "cap" if "cap" in run else max(run, key=lambda m: table.loc[m, "spearman"])
    ends, failed = {}, None
    for count, draw in ((n_resamples, seed), (n_resamples, seed + 1), (10_000, seed), (10_000, seed + 1)):
        try:
            _, low, high = evaluation.bootstrap_ci("spearman", scores.frame[focus], labels, n_resamples=count,
                                                   confidence=confidence, seed=draw)
        except ValueError as error:
            low = high = float("nan")
            failed = str(error)
        ends[f"{count:,} resamples, seed {draw}"] = (100 * low, 100 * high)
    ends = pd.DataFrame(ends, index=["low", "high"]).T
    if failed is None:
        move = float((ends - ends.iloc[0]).abs().max().max())
        width = float((ends["high"] - ends["low"]).mean())
        digits = 2 if move < 0.05 else 1 if move < 0.5 else 0
        precision = ("whole points", "one decimal", "two decimals")[digits]
        display(Markdown(f"**Solution 1.** {plots.PRINTED_METRIC[focus]}'s Spearman interval (×100) under "
                         "four settings of the bootstrap:"))
        display(ends.style.format("{:.2f}"))
        solutions.append(
            f"1. The ends move by at most {move:.2f} across seeds and resample counts, against an interval "
            f"{width:.2f} wide: the interval is a property of the {len(scores.frame):,} rows, not of the "
            f"resampling, and it is worth reporting to {precision} "
            + ("(the paper's two decimals hold)." if digits == 2 else
               "(two decimals would promise more than the bootstrap can keep).")
            + " Only more rows make it narrower.")
    else:
        solutions.append(f"1. The bootstrap is undefined on these rows ({failed}): too few rows for an "
                         "interval.")

    # 2. the other split, scored the same way
    other = {"test": "validation", "validation": "test"}.get(split)
    ran = [m for m in run if m != "shortcut"]
    there = None
    if other is None:
        solutions.append("2. This run scores every row (`split = None`): the comparison needs two splits.")
    elif "cap" not in run or len(ran) < 2:
        solutions.append("2. CAP and at least one baseline must run for this comparison; "
                         f"this run scored {', '.join(run) or 'nothing'}.")
    else:
        there = book.score_split(profile, ran, split=other, row_limit=row_limit, data_path=data_path,
                                 splits_path=splits_path, runtime=runtime)
        if not there.available or there.caution or scores.caution:
            solutions.append(f"2. The two splits cannot be compared here: "
                             f"{there.reason or there.caution or scores.caution}")
            there = None
    if there is not None:
        lead, frames = {}, {split: scores.frame, other: there.frame}
        there_table = evaluation.report(there.frame, there.run, "label_semantic")
        for name, rows in ((split, table), (other, there_table)):
            rivals = [m for m in rows.index if m != "cap"]  # the paper's baselines when any ran, else any
            rivals = [m for m in rivals if plots.PRINTED_METRIC[m] in reported.index] or rivals
            rival = max(rivals, key=lambda m: rows.loc[m, "spearman"])
            # CAP minus its best rival on this split, with the paired interval of that difference
            tested = evaluation.paired_bootstrap(frames[name]["cap"], frames[name][rival],
                                                 frames[name]["label_semantic"], ("spearman", "pairwise_accuracy"),
                                                 n_resamples=min(n_resamples, 1000) or 1000, seed=seed,
                                                 names=("cap", rival), undefined="nan")
            lead[name] = {"rows": int(rows.loc["cap", "n"]), "best baseline": plots.PRINTED_METRIC[rival]}
            for column, short in (("spearman", "ρ"), ("pairwise_accuracy", "PairAcc")):
                lead[name][f"CAP {short}"] = 100 * rows.loc["cap", column]
                lead[name][f"{short} lead"] = 100 * tested.loc[column, "delta"]
                lead[name][f"{short} lead 95% CI"] = (f"[{100 * tested.loc[column, 'low']:.2f}, "
                                                      f"{100 * tested.loc[column, 'high']:.2f}]")
                lead[name][f"_{short} interval"] = (100 * tested.loc[column, "low"], 100 * tested.loc[column, "high"])
        lead = pd.DataFrame(lead).T
        display(Markdown("**Solution 2.** CAP's lead over the best of the paper's baselines (by ρ) on each split, "
                         "with the paired 95% interval of the lead (×100):"))
        display(lead.drop(columns=[c for c in lead.columns if c.startswith("_")]).style.format(
            {c: "{:.2f}" for c in lead.columns if c.endswith(("ρ", "lead", "PairAcc"))}))
        change = lead.loc["validation", "ρ lead"] - lead.loc["test", "ρ lead"]
        low, high = lead.loc["validation", "_ρ interval"]
        if np.isnan(low):
            reading = "The validation lead has no interval on these rows, so the two cannot be weighed."
        elif low <= lead.loc["test", "ρ lead"] <= high:
            reading = ("The test lead lies inside it: the two splits' leads do not differ beyond what the validation "
                       "split's few rows leave open. A larger lead on validation is the trace that choices made there "
                       "would leave; " + ("this run's is larger, but within sampling noise, so it is no evidence of "
                                          "one." if change > 0 else "this run's is not even larger."))
        else:
            reading = ("The test lead lies outside it: the two splits' leads differ by more than sampling noise, "
                       + ("the validation lead being the larger: the trace that choices made on validation would "
                          "leave." if change > 0 else "the validation lead being the smaller: no trace of choices "
                                                      "made there."))
        solutions.append(
            f"2. CAP's lead in ρ over the best baseline is {lead.loc['test', 'ρ lead']:.2f} on test and "
            f"{lead.loc['validation', 'ρ lead']:.2f} on validation ({change:+.2f}); in pairwise accuracy "
            f"{lead.loc['test', 'PairAcc lead']:.2f} and {lead.loc['validation', 'PairAcc lead']:.2f}. The validation "
            f"lead's paired interval is [{low:.2f}, {high:.2f}] ({int(lead.loc['validation', 'rows'])} rows). "
            + reading)

    # 3. ties: Eq. 8 (a tie is a miss) against ties counting one half
    tie_rows = {}
    for m in [m for m in ("em", "acc", "cap") if m in run]:
        try:
            zero, half = (evaluation.pairwise_accuracy(scores.frame[m], labels, ties=rule)
                          for rule in ("zero", "half"))
        except ValueError:  # no ordered pair in a tiny row_limit run
            continue
        tie_rows[plots.PRINTED_METRIC[m]] = {"Eq. 8 (tie = miss)": 100 * zero, "tie = 1/2": 100 * half,
                                             "tied pairs (%)": 200 * (half - zero)}
    if tie_rows:
        ties = pd.DataFrame(tie_rows).T
        climbed = [name for name, row in ties.iterrows()
                   if row["Eq. 8 (tie = miss)"] < 50 <= row["tie = 1/2"]]
        display(Markdown("**Solution 3.** Pairwise accuracy (×100) with ties as misses and as halves:"))
        display(ties.style.format("{:.2f}"))
        moves = "; ".join(f"{name} ties on {row['tied pairs (%)']:.1f}% of the ordered pairs and moves from "
                          f"{row['Eq. 8 (tie = miss)']:.2f} to {row['tie = 1/2']:.2f}"
                          for name, row in ties.iterrows())
        climb = f"; counted as halves, {' and '.join(climbed)} climb above the chance level of 50"
        solutions.append(
            f"3. {moves}. A 0/1 score ties whenever both answers get the same score and Eq. 8 counts every "
            f"tie against it, while a continuous score such as CAP hardly ties{climb if climbed else ''}. "
            "Spearman's ρ gives tied scores mid-ranks and never punished them: that is how a 0/1 score can "
            "rank well and pair badly.")
    else:
        solutions.append("3. Neither EM, ACC nor CAP ran here: add them to `metrics`.")

    # 4. where ACC says 1, and the pairs of Eq. 1 that it inverts
    if "acc" in run:
        share = pd.Series(evaluation.class_means(scores.frame["acc"], labels)).reindex(LABELS) * 100
        inverted = evaluation.monotonicity_violations(share.dropna().to_dict(), missing="skip")
        high = share[share >= 50].dropna()
        display(Markdown("**Solution 4.** Share of rows with ACC = 1, per class "
                         "(%; – where a class is absent):"))
        display(share.to_frame("ACC = 1 (%)").style.format("{:.1f}", na_rep="–"))
        mostly = ", ".join(f"{c} ({v:.1f}%)" for c, v in high.items()) or "no class"
        pairs = ", ".join(evaluation.pair_name(*p) for p in inverted) or "none"
        solutions.append(
            f"4. ACC is 1 on most rows of {mostly}: there one string holds the other (an overinclusive "
            "answer copies the gold and adds to it, valid or not; a partial one is often a piece of it), "
            "while a rewording (equivalent) or another valid answer (alternative_correct) rarely does. So "
            f"containment inverts {len(inverted)} ordered class pairs: {pairs}. It rewards copying the gold, "
            "not meaning the same.")
    else:
        solutions.append("4. ACC was not scored in this run: add `acc` to `metrics`.")
display(Markdown("\n".join(solutions)))
