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
# A metric respects the taxonomy when its scores follow this order (*monotonicity*). This chapter shows the classes,
# the severity map that turns Eq. 1 into numbers (App. C.2), and the class pairs that the protocol compares.

# %% tags=["parameters", "hide-input"]
profile = "offline"  # unused here: the taxonomy is the same in every profile
record_to = "01_taxonomy.numbers.json"  # where this chapter records its key numbers

# %% [markdown]
# **Run this chapter with other parameters** (open the first folded cell above for all of them and their defaults):
# `papermill notebooks/01_taxonomy.ipynb out.ipynb -p profile offline`.
# Strings and numbers go with `-p NAME VALUE`; lists go as YAML with `-y 'NAME: [a, b]'`. A parameter that
# cannot be used stops the chapter at once with one line naming it and its valid values. `make book`
# runs every chapter with its defaults (`make book PROFILE=paper` for the paper's setup).

# %% tags=["hide-input"]
import pandas as pd
from IPython.display import Markdown, display

from caplib import book, plots
from caplib.taxonomy import (ABBREVIATIONS, DEFINITIONS, HARD_PAIRS, INSTRUCTIONS, LABELS, SEPARABILITY_PAIRS,
                             SEVERITY, STRICT_PAIRS)

# a bad parameter stops the chapter here with one line naming it and its valid values, before any work
book.check_parameters(profile=profile)
book.setup();  # (the semicolon: no model runs here, so the runtime it returns is not shown)

# %% [markdown]
# ## The eight classes
# Definitions of Tab. 7, the severity of App. C.2 ("Ordinal rank"), the abbreviation used in the paper's tables, and
# the class-specific instruction (Tab. 18) with which the paper's pipeline generated a candidate of that class.

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
        ("Paris, Berlin, Sofia, all of which have a population over 1.2 million people", "overinclusive_valid",
         "poster (its own text; Berlin for Rome)"),
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
# C(8, 2) − 3 = 25 pairs are the **strictly ordered pairs** over which monotonicity violations are counted
# (App. C.1). Four neighbouring pairs are singled out as **hard** (Tab. 4), and six pairs describe the
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
# `overinclusive_valid`, `partial` and everything below — a demanding target for any reference-based metric, since a
# valid alternative need not share a single word with the gold. The paper's CAP fails exactly there (Sec. 7.2).

# %%
numbers = {
    "n_labels": len(LABELS),
    "n_strict_pairs": len(STRICT_PAIRS),
    "n_hard_pairs": len(HARD_PAIRS),
    "n_separability_pairs": len(SEPARABILITY_PAIRS),
    "severity": dict(SEVERITY),
}
book.record(numbers, record_to)
numbers

# %% [markdown]
# ## Exercises
# 1. Application preferences may swap `overinclusive_valid` and `partial` (Sec. 3). How many of the 25 strict pairs
#    change? (Hint: only one pair involves both; but the severity gaps of others move too.)
# 2. Give `invalid` and `contradictory` the same severity (Eq. 1 writes `≥`). How many strict pairs remain?
# 3. Write a ninth class for answers that hedge ("it might be X or Y") and place it in the order. Which existing
#    pairs would become ambiguous?
