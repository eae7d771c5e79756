# %% [markdown]
# # 1. The semantic-correctness taxonomy
#
# **The paper's claim (Sec. 3).** Correctness of an open-ended answer is not binary. Relative to a gold answer
# under the same question, an answer falls into one of eight classes, and the classes are *ordered* (Eq. 1):
#
# $$
# \begin{aligned}
# \texttt{exact} &\approx \texttt{equivalent} \approx \texttt{alternative_correct} \\
# &\geq \texttt{overinclusive_valid} > \texttt{partial} > \texttt{overinclusive_invalid} \\
# &> \texttt{invalid} \geq \texttt{contradictory} \qquad \text{(Eq. 1)}
# \end{aligned}
# $$
#
# A metric respects the taxonomy when its scores follow this order (*monotonicity*). This chapter shows the
# classes, the severity map that turns Eq. 1 into numbers (App. C.2), and the class pairs that the protocol
# compares.

# %% tags=["parameters", "hide-input"]
profile = "offline"  # unused here: the taxonomy is the same in every profile
record_to = "01_taxonomy.numbers.json"  # where this chapter records its key numbers

# %% [markdown]
# **Run this chapter with other parameters** (open the first folded cell above for all of them and their
# defaults): `papermill notebooks/01_taxonomy.ipynb out.ipynb -p profile offline`. Strings and numbers go with
# `-p NAME VALUE`; lists go as YAML with `-y 'NAME: [a, b]'`. A parameter that cannot be used stops the
# chapter at once with one line naming it and its valid values. `make book` runs every chapter with its
# defaults (`make book PROFILE=paper` for the paper's setup).
# Each run writes the numbers it records to the file `record_to` names, in the folder papermill runs in
# (`-p record_to PATH` puts it elsewhere), and a misspelt parameter name stops the chapter like a bad value.

# %% tags=["hide-input"]
import itertools

import numpy as np
import pandas as pd
from IPython.display import Markdown, display

from caplib import book, paper, plots
from caplib.taxonomy import (ABBREVIATIONS, DEFINITIONS, HARD_PAIRS, INSTRUCTIONS, LABELS, SEPARABILITY_PAIRS,
                             SEVERITY, STRICT_PAIRS)

# a bad parameter stops the chapter here with one line naming it and its valid values, before any work
book.check_parameters(profile=profile)
book.setup();  # (the semicolon: no model runs here, so the runtime it returns is not shown)

# %% [markdown]
# ## The eight classes
# Definitions of Tab. 7, the severity of App. C.2 ("Ordinal rank"), the abbreviation used in the paper's
# tables, and the class-specific instruction (Tab. 18) with which the paper's pipeline generated a candidate
# of that class.

# %%
classes = pd.DataFrame(
    {
        "class": LABELS,
        "abbr.": [ABBREVIATIONS[c] for c in LABELS],
        "severity": [SEVERITY[c] for c in LABELS],
        "definition (Tab. 7)": [DEFINITIONS[c] for c in LABELS],
        "generation instruction (Tab. 18)": [INSTRUCTIONS[c] for c in LABELS],
    }
)
classes.style.hide(axis="index")

# %% [markdown]
# ## A worked example (the poster's "cities in Europe")
# Question *"Name 3 cities in Europe"*, gold *"Paris, Rome, Sofia"*. The poster labels three predictions; the
# remaining rows are our own illustrations of the other classes, written to the definitions above.

# %%
example = pd.DataFrame(
    [
        ("Paris, Rome, Sofia", "exact", "ours"),
        ("Rome, Sofia and Paris", "equivalent", "ours"),
        ("Madrid, Vienna, Prague", "alternative_correct", "ours"),
        ("Paris, Berlin, Sofia, all of which have a population over 1.2 million people",
         "overinclusive_valid", "poster (its own text; Berlin for Rome)"),
        ("Oslo, Amsterdam", "partial", "poster"),
        ("Paris, Berlin, Tokyo", "overinclusive_invalid", "poster (Tokyo is not in Europe)"),
        ("Cairo, Lagos, Nairobi", "invalid", "ours"),
        ("There are no cities in Europe", "contradictory", "ours (rejects the premise)"),
    ],
    columns=["predicted answer", "class", "source"],
)
example.style.hide(axis="index")

# %% [markdown]
# ## The ordering as numbers
# Ties (exact, equivalent, alternative-correct all at severity 6) contribute no strict pair. The remaining
# $\binom{8}{2} - 3 = 25$ pairs are the **strictly ordered pairs** over which monotonicity violations are
# counted (App. C.1). Four neighbouring pairs are singled out as **hard** (Tab. 4), and six pairs describe the
# separability profile of Tab. 3.

# %%
plots.taxonomy_order()

# %%
pairs = pd.DataFrame(STRICT_PAIRS, columns=["higher", "lower"])
pairs["severity gap"] = [SEVERITY[h] - SEVERITY[l] for h, l in STRICT_PAIRS]
pairs["hard (Tab. 4)"] = [(h, l) in HARD_PAIRS for h, l in STRICT_PAIRS]
pairs["separability (Tab. 3)"] = [(h, l) in SEPARABILITY_PAIRS for h, l in STRICT_PAIRS]
display(Markdown(f"**{len(pairs)} strictly ordered pairs**, {int(pairs['hard (Tab. 4)'].sum())} hard, "
                 f"{int(pairs['separability (Tab. 3)'].sum())} in Tab. 3."))
pairs.style.hide(axis="index")

# %% [markdown]
# Note the asymmetry built into Eq. 1: `alternative_correct` sits in the top tier, so it must beat
# `overinclusive_valid`, `partial` and everything below — a demanding target for any reference-based metric,
# since a valid alternative need not share a single word with the gold. The paper's CAP fails exactly there
# (Sec. 7.2).

# %%
numbers = {
    "n_labels": len(LABELS),
    "n_strict_pairs": len(STRICT_PAIRS),
    "n_hard_pairs": len(HARD_PAIRS),
    "n_separability_pairs": len(SEPARABILITY_PAIRS),
    "severity": dict(SEVERITY),
}
display(Markdown(book.record(numbers, record_to)))

# %% [markdown]
# ## Exercises
# Each says whether it needs parameters only or a code edit. This chapter's only parameter, `profile`, changes
# nothing here, so all three need a code edit: a copy of `SEVERITY` with other values, or a few lines over the
# pairs above. The solutions below compute the answers from this chapter's severity map and pairs and from the
# paper's own tables (`caplib.paper`); open them after trying.
#
# 1. *(a code edit)* Sec. 3 lets applications swap `overinclusive_valid` and `partial`. Swap their severities
#    (5 and 4). How many of the 25 strict pairs above flip direction, and how many keep it but change their
#    severity gap? The paper's CAP puts partial far above overinclusive-valid (Tab. 17: 83.61 against 50.07;
#    Tab. 4: OV > Part 16.34): how many of its Tab. 17 violations remain under the swapped order?
# 2. *(a code edit)* Eq. 1 writes $\geq$ twice (the top tier $\geq$ `overinclusive_valid`, `invalid` $\geq$
#    `contradictory`), but the severity map of App. C.2 makes both strict. Make both ties. How many strict
#    pairs, hard pairs and separability pairs remain, and how many of the paper's Tab. 17 violations (4 of 25
#    under both label sources) survive?
# 3. *(a code edit)* A metric that orders the eight class means at random: how many of the 25 pairs does it
#    violate on average, and how often does it do as well as the paper's CAP (4 of 25, Tab. 14), COMET (9) or
#    ROUGE-L (12)? Enumerate all $8! = 40{,}320$ orders of the class means.

# %% tags=["hide-cell"]
def strict_pairs(severity):
    """(higher, lower) for every two classes of different severity (App. C.1), for any severity map."""
    return [(a, b) if severity[a] > severity[b] else (b, a)
            for a, b in itertools.combinations(LABELS, 2) if severity[a] != severity[b]]


def violated(means, severity):
    """The strict pairs whose higher class does not score above the lower one (a tie counts: App. C.1)."""
    return [(high, low) for high, low in strict_pairs(severity) if means[high] <= means[low]]


tab17 = {source: paper.reported_class_means(17, source) for source in ("Synthetic", "Annotator")}
eq1 = set(strict_pairs(SEVERITY))
swapped = {**SEVERITY, "overinclusive_valid": SEVERITY["partial"], "partial": SEVERITY["overinclusive_valid"]}
flipped = [pair for pair in strict_pairs(swapped) if pair[::-1] in eq1]
regapped = [(h, l) for h, l in strict_pairs(swapped)
            if (h, l) in eq1 and swapped[h] - swapped[l] != SEVERITY[h] - SEVERITY[l]]
ties = {**SEVERITY, "overinclusive_valid": SEVERITY["exact"], "contradictory": SEVERITY["invalid"]}
tied_pairs = set(strict_pairs(ties))
ov_part = paper.load_table(4).set_index("metric").loc["CAP", "OV>Part"]
lines = [
    f"1. Swapping the two severities flips **{len(flipped)}** pair "
    f"({', '.join(f'{h} > {l}' for h, l in flipped)}) and changes the gap of **{len(regapped)}** more (every "
    f"other pair that involves one of the two classes); the other {len(eq1) - len(flipped) - len(regapped)} "
    f"are untouched. The paper's Tab. 17 violations go from "
    + " / ".join(f"{len(violated(m, SEVERITY))} to {len(violated(m, swapped))}" for m in tab17.values())
    + " (synthetic / annotator labels): under the swapped order partial above overinclusive-valid is what "
    f"the taxonomy asks for, and Tab. 4's hard pair becomes Part > OV, about {100 - ov_part:.2f} for CAP "
    f"instead of {ov_part:.2f} (ties aside): CAP's worst hard pair rests on an order the paper itself calls "
    "adjustable.",
    f"2. With both ≥ as ties, **{len(tied_pairs)}** strict pairs remain (of {len(eq1)}), "
    f"{sum(pair in tied_pairs for pair in HARD_PAIRS)} of the {len(HARD_PAIRS)} hard pairs and "
    f"{sum(pair in tied_pairs for pair in SEPARABILITY_PAIRS)} of the {len(SEPARABILITY_PAIRS)} separability "
    f"pairs (Equivalent > OV becomes a tie). Of the paper's Tab. 17 violations, "
    + " / ".join(f"{len(violated(m, ties))} of {len(violated(m, SEVERITY))}" for m in tab17.values())
    + " survive (synthetic / annotator): alternative-correct below overinclusive-valid is no longer a "
      "violation, so a violation rate over 25 pairs depends on reading Eq. 1's ≥ as strict.",
]
# exercise 3: every order of the class means, each pair checked at once (40,320 x 25 comparisons)
ranks = np.array(list(itertools.permutations(range(len(LABELS)))))
position = {label: i for i, label in enumerate(LABELS)}
random_violations = sum((ranks[:, position[h]] <= ranks[:, position[l]]).astype(int) for h, l in STRICT_PAIRS)
tab14 = paper.load_table(14).set_index("metric")["violations"]
as_good = pd.DataFrame({"violations (Tab. 14)": tab14,
                        "random orders doing as well (%)": [100 * (random_violations <= v).mean()
                                                            for v in tab14]})
lines.append(
    f"3. Over all {len(ranks):,} orders a random metric violates **{random_violations.mean():.1f}** of the "
    f"{len(STRICT_PAIRS)} pairs on average (each pair is inverted half the time). "
    f"The table gives, for each metric of Tab. 14, the share of random orders with at most its count: "
    f"ROUGE-L's 12 is what a coin would give, CAP's 4 is beaten or matched by "
    f"{100 * (random_violations <= 4).mean():.2f}% of random orders. Class means are not independent coins "
    f"(ties and near-ties matter), so read it as a scale, not a test.")
display(Markdown("**Solutions.**\n\n" + "\n".join(lines)))
display(as_good.style.format({"random orders doing as well (%)": "{:.2f}"}))
