# %% [markdown]
# # 7. Generalization to LLM answers
#
# **The paper's claim (Sec. 7.4, RQ3).** On free-form answers written zero-shot by GPT-4o, Gemini 2.0 Flash and
# Qwen3-8B-Instruct to 1,000 CAP-Correctness questions and labelled by humans, (1) all eight classes occur (Tab. 6)
# and (2) CAP's class means largely follow Eq. 1: 4, 6 and 2 violations of the 25 strict pairs (Tab. 5). The most
# consistent deviation is alternative-correct scoring too low.
#
# This chapter recomputes those violation counts from the paper's own class means, runs the same analysis on the
# bundled LLM-answers sample, and shows the answer-collection code for readers who want to add models.

# %% tags=["parameters", "hide-input"]
profile = "offline"
llm_answers_path = None  # CSV with question, gold_answer, answer, model, label_semantic (None: the bundled sample)
seed = 0
device = None
dtype = None  # NLI precision; None: the profile's ("auto": float16 on CUDA as in App. C.2, float32 on CPU)
allow_unpinned = False  # True: load Hub models pinned by neither profile nor lock (main; commit recorded)
row_limit = None
metrics = ["cap", "rouge_l", "bertscore"]
llm_endpoint = None  # e.g. "http://127.0.0.1:8000/v1" to collect new answers from an OpenAI-compatible server
llm_model = None  # the model name that endpoint serves
record_to = "07_llm_generalization.numbers.json"

# %% [markdown]
# **Run this chapter with other parameters** (open the first folded cell above for all of them and their defaults):
# `papermill notebooks/07_llm_generalization.ipynb out.ipynb -p profile offline -p seed 1 -y 'metrics: [cap, rouge_l]'`.
# Strings and numbers go with `-p NAME VALUE`; lists go as YAML with `-y 'NAME: [a, b]'`. A parameter that
# cannot be used stops the chapter at once with one line naming it and its valid values. `make book`
# runs every chapter with its defaults (`make book PROFILE=paper` for the paper's setup).

# %% tags=["hide-input"]
import pandas as pd
from IPython.display import Markdown, display

from caplib import book, data, paper, plots
from caplib.evaluation import class_means, monotonicity_violations
from caplib.llm_answers import ANSWER_PROMPT, OpenAICompatibleClient, collect_answers
from caplib.taxonomy import ABBREVIATIONS, LABELS, STRICT_PAIRS

# a bad parameter stops the chapter here with one line naming it and its valid values, before any work
book.check_parameters(profile=profile, seed=seed, row_limit=row_limit, metrics=metrics)
runtime = book.setup(device, allow_unpinned, dtype)
numbers = {"profile": profile, "skipped": {}}

# %% [markdown]
# ## The paper's Tab. 5 and Tab. 6, re-checked
# The violation counts the paper states follow from its printed class means:

# %%
tab5, tab6 = paper.load_table(5), paper.load_table(6)
models = [column for column in tab5.columns if column not in ("label", "printed")]
stated = {"GPT-4o": 4, "Gemini Flash": 6, "Qwen 3": 2}  # Sec. 7.4
recomputed = {}
for model in models:
    pairs = monotonicity_violations(paper.reported_class_means(5, model))
    recomputed[model] = pairs
check = pd.DataFrame(
    {
        "stated (Sec. 7.4)": [stated[m] for m in models],
        "recomputed from Tab. 5": [len(recomputed[m]) for m in models],
        "violating pairs": [", ".join(f"{ABBREVIATIONS[h]}≤{ABBREVIATIONS[l]}" for h, l in recomputed[m])
                            for m in models],
        "answers (Tab. 6)": [int(tab6[m].sum()) for m in models],
    },
    index=models,
)
numbers["paper_violations_recomputed"] = {m: len(recomputed[m]) for m in models}
numbers["paper_tab6_totals"] = {m: int(tab6[m].sum()) for m in models}
check

# %% [markdown]
# All three counts agree with the text. Two details the prose does not mention: GPT-4o's four violations include
# partial ≤ overinclusive-invalid, and each model's Tab. 6 column sums to **999**, not the 1,000 sampled questions
# (see the reported-numbers appendix).

# %%
plots.counts_bar(tab6.set_index("label")[models].sum(axis=1), "Tab. 6: human labels of 2,997 LLM answers")

# %% [markdown]
# ## The bundled LLM answers
# `data/sample/llm_answers.csv`: one LLM answered 128 sample questions zero-shot with the App. C.2 prompt, seeing
# only the question; a separate blind pass labelled each answer with the taxonomy (see `data/README.md`). CAP needs
# statements for these free-form answers, so they are generated with the profile's statement generator, as the
# paper does with its mT5 model.

# %%
answers = data.load_llm_answers(llm_answers_path) if llm_answers_path else data.load_sample("llm_answers")
if row_limit is not None:
    answers = answers.head(row_limit)
counts = answers["label_semantic"].value_counts().reindex(LABELS, fill_value=0)
present = [label for label in LABELS if counts[label] > 0]
numbers["counts"] = {label: int(counts[label]) for label in LABELS}
numbers["models"] = sorted(answers["model"].unique())
display(Markdown(f"**{len(answers)} answers** from {', '.join(numbers['models'])}; "
                 f"{len(present)} of 8 classes occur."))
display(plots.counts_bar(counts, "Bundled LLM answers per class (blind labels)"))

# %%
scores = book.score_rows(answers, profile, metrics, regenerate_statements=True, runtime=runtime)
numbers["signatures"], numbers["skipped"] = scores.signatures, scores.skipped
if scores.notes:
    display(Markdown(scores.notes))
scored_metrics, labels = scores.run, scores.frame["label_semantic"]
table = pd.DataFrame({m: class_means(scores.frame[m], labels) for m in scored_metrics})
table = table.reindex(present)
table["n"] = counts[present]
(table[scored_metrics] * 100).round(2).assign(n=table["n"])

# %% [markdown]
# With fewer than eight classes present, only the strict pairs whose two classes both occur can be compared
# (`missing="skip"`): the count below is out of that number, not out of 25.

# %%
comparable = [(h, l) for h, l in STRICT_PAIRS if h in present and l in present]
summary = {}
for metric in scored_metrics:
    measures = book.class_summary(scores.frame[metric], labels, missing="skip")
    violated, means = measures.pop("violations"), measures.pop("class_means")
    summary[metric] = {"violations": len(violated), "comparable_pairs": len(comparable), "violating_pairs": violated,
                       **measures, "class_means": means}
numbers["sample"] = summary
pd.DataFrame({m: {k: v for k, v in s.items() if k not in ("class_means",)} for m, s in summary.items()}).T

# %% [markdown]
# Read this against Tab. 5 with care: the sample is small (128 answers), one LLM wrote it, and strong LLMs rarely
# give invalid or contradictory answers to exam questions, so the lower classes are thin or absent. What carries
# over is the question the paper asks — does CAP keep the top-tier classes above partial answers, and does
# alternative-correct fall below its intended tier?

# %% [markdown]
# ## Adding a model
# Answers are collected with the App. C.2 prompt, zero-shot, temperature 0.0, at most 256 tokens, through any
# client with a `complete(system, user, *, temperature, max_tokens)` method: `OpenAICompatibleClient` for vLLM,
# llama.cpp, Ollama or OpenAI, or `TransformersChatClient` for a local Hugging Face chat model. Label the answers in a
# separate blind pass before scoring them; never edit an answer after generation.

# %%
print(ANSWER_PROMPT)
if llm_endpoint and llm_model:
    new = collect_answers(list(answers["question"]), OpenAICompatibleClient(llm_endpoint, model=llm_model),
                          model=llm_model)
    new.to_csv(f"llm_answers_{llm_model.replace('/', '_')}.csv", index=False)
    display(new.head())
else:
    display(Markdown("Set `llm_endpoint` and `llm_model` in the parameters cell to collect answers from a server; "
                     "nothing is collected in this run."))

# %%
book.record(numbers, record_to)
{k: v for k, v in numbers.items() if k != "sample"}

# %% [markdown]
# ## Exercises
# 1. Which of GPT-4o's four violations would disappear if alternative-correct were moved one tier down (severity 5)?
#    Recompute with `monotonicity_violations` on a modified mapping.
# 2. Add `"bleu"` and `"meteor"` to `metrics`: do lexical metrics order the LLM answers' classes better or worse
#    than CAP?
# 3. Serve a local model with an OpenAI-compatible server, set `llm_endpoint` and `llm_model`, and label its answers
#    blind: do all eight classes appear?
