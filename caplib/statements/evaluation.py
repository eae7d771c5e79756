"""Statement quality against references (Sec. 4: BLEU, ROUGE-L, Exact Match; Tab. 15's breakdown by question
type)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from types import MappingProxyType
from typing import Any

import numpy as np

#: ROUGE-L options of statement quality (Sec. 4) and of the fine-tuning's model selection: no stemming, as the
#: authors' statement code scores statements; the baseline comparison of answers stems (``caplib.baselines``).
STATEMENT_ROUGE_L: Mapping[str, Any] = MappingProxyType({"stem": False})


def evaluate_statements(predictions: Sequence[str], references: Sequence[str],
                        question_types: Sequence[str] | None = None) -> Any:
    """Surface agreement of generated statements with reference statements, overall and per question type.

    Columns (fractions in [0, 1]; the paper prints x100: BLEU 96.64, ROUGE-L 98.08, EM 76.7 %):

    * ``bleu``: **corpus** BLEU-4 (``nltk.translate.bleu_score.corpus_bleu``: n-gram counts pooled over
      all statements, uniform weights, no smoothing, case-sensitive), on the tokens of
      ``caplib.baselines``' ``"word"`` tokenizer. Corpus BLEU is the usual figure for generation
      quality; ``caplib.baselines.score("bleu")`` only gives per-sentence BLEU, hence the direct call.
      The paper does not say which of the two it reports.
    * ``sentence_bleu``: mean of ``caplib.baselines.score("bleu")`` (nltk ``sentence_bleu``,
      smoothing method1), the BLEU of the baseline comparison.
    * ``rouge_l``: mean ``caplib.baselines.score("rouge_l", **STATEMENT_ROUGE_L)`` (rouge_score rougeL
      F-measure, no stemming).
    * ``em``: mean ``caplib.baselines.score("em")`` (SQuAD normalization: case, punctuation and
      articles ignored); ``em_strict``: identical strings after whitespace normalization.
    * ``n``: statements in the row.

    Rows: ``"overall"``, then each question type present, in ``caplib.data.QUESTION_TYPES`` order.
    ``DataFrame.attrs["signature"]`` records the metric settings.

    Example:
        >>> table = evaluate_statements(["Paris is the capital of France."], ["Paris is the capital of France."])
        >>> table.loc["overall", ["bleu", "rouge_l", "em"]].tolist()
        [1.0, 1.0, 1.0]
    """
    import warnings

    import pandas as pd
    from nltk.translate.bleu_score import corpus_bleu

    from caplib.baselines import score, signature, tokenizer
    from caplib.data import QUESTION_TYPES, normalize_question_type

    predictions, references = list(predictions), list(references)
    if len(predictions) != len(references):
        raise ValueError(f"{len(predictions)} predictions but {len(references)} references; they must pair up")
    if not predictions:
        raise ValueError("no statements to evaluate")
    types = ["overall"] * len(predictions) if question_types is None else [
        normalize_question_type(t) for t in question_types]
    if len(types) != len(predictions):
        raise ValueError(f"{len(types)} question types for {len(predictions)} statements")
    tokenize = tokenizer("word")
    sentence_bleu = score("bleu", references, predictions)
    rouge_l = score("rouge_l", references, predictions, **STATEMENT_ROUGE_L)
    em = score("em", references, predictions)
    strict = np.array([" ".join(p.split()) == " ".join(r.split()) for p, r in zip(predictions, references)], float)
    groups = {"overall": np.arange(len(predictions))}
    for question_type in QUESTION_TYPES:
        members = np.flatnonzero(np.array(types) == question_type)
        if question_types is not None and members.size:
            groups[question_type] = members
    rows = {}
    for name, members in groups.items():
        with warnings.catch_warnings():  # nltk warns when a higher-order n-gram never matches
            warnings.simplefilter("ignore")
            bleu = corpus_bleu([[tokenize(references[i])] for i in members], [tokenize(predictions[i]) for i in members])
        rows[name] = {"n": int(members.size), "bleu": float(bleu), "sentence_bleu": float(sentence_bleu[members].mean()),
                      "rouge_l": float(rouge_l[members].mean()), "em": float(em[members].mean()),
                      "em_strict": float(strict[members].mean())}
    table = pd.DataFrame.from_dict(rows, orient="index")
    table.index.name = "question_type"
    table.attrs["signature"] = (f"bleu:corpus|tok:word|smooth:none|case:mixed; sentence_bleu:{signature('bleu')}; "
                                f"rouge_l:{signature('rouge_l', **STATEMENT_ROUGE_L)}; em:{signature('em')}")
    return table
