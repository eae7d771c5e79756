"""NLI probabilities from any Hugging Face sequence-classification checkpoint (Sec. 4, App. C.2).

An NLI model maps an ordered statement pair (premise -> hypothesis) to a distribution over
entailment, neutral and contradiction. :class:`NLIScorer` returns those probabilities as an
``(n, 3)`` array whose columns are always ``LABEL_ORDER`` = (entailment, neutral, contradiction),
whatever order the checkpoint's head uses: the order is read from ``id2label`` in its
``config.json`` (cross-encoder/nli-deberta-v3-large is ``{0: contradiction, 1: entailment,
2: neutral}``); a head whose labels cannot be read as those three raises :class:`LabelMappingError`.

Settings of the paper (App. C.2): inputs are (premise, hypothesis) pairs of at most 512 tokens,
probabilities are the softmax of the classification head, inference in mixed precision
(``torch.float16``) with batch size 16. Here:

* Long inputs (``long_inputs``): a pair longer than ``max_length`` is, with ``"truncate"`` (the default, as in
  the paper: App. C.2 names a maximum joint length of 512 tokens), cut with ``truncation="longest_first"`` (tokens
  are removed from the longer of the two statements first); truncated pairs are counted
  (``NLIScorer.last_stats["truncated"]``) and a warning is logged; long inputs never crash. With ``"chunk"``
  (SummaC, Laban et al. 2022; AlignScore) the longer statement is split into chunks of whole sentences that fit
  beside the other (:meth:`NLIScorer.chunks`; both are split, to half the budget each, when the shorter one takes
  more than half), every (premise chunk, hypothesis chunk) pair is scored, and the pair's probabilities are

      probs(P, H) = mean over hypothesis chunks H_j of probs(P_i*, H_j),  i* = argmax_i P_entailment(P_i, H_j)

  (the premise chunk that entails the hypothesis chunk most, first on ties: max entailment over the premise side;
  the mean over the hypothesis side, whose every chunk must hold; a distribution, as it is a mean of rows).
  Chunked pairs are counted in ``last_stats["chunked"]``; a chunk that still does not fit (one sentence-less
  word run longer than the budget) is truncated and counted in ``last_stats["truncated"]``. ``"truncate"`` keeps
  the signature and cache keys of earlier caplib versions; ``"chunk"`` adds ``long_inputs:chunk`` to both.
* Batching: identical pairs are scored once; every unique pair is computed in a tile of exactly ``batch_size``
  rows (default 16, App. C.2) padded to its own length rounded up to 8 tokens (:mod:`caplib.batching`), so a
  pair's probabilities are a function of the pair and the settings alone, bit for bit: they do not depend on
  which pairs share its call, their order, the CPU workers or what the cache held. ``batch_size`` is therefore a
  setting of the score (in the signature and the cache key), not a speed knob. A tile that runs out of CUDA
  memory raises :class:`caplib.batching.TileOutOfMemory` (splitting it would change its shape).
* CPU parallelism: on CPU, tiles run concurrently on ``cpu_workers`` threads with one torch thread each (default:
  one worker per torch thread, at most ``caplib.batching.MAX_AUTO_CPU_WORKERS``), :func:`caplib.batching.map_tiles`.
  Independent tiles keep every core busy through the many small, poorly parallel operations of a transformer
  layer; on 2 cores this scores the DeBERTa-v2 benchmark model ~1.5x faster than 2 threads working on one batch at
  a time (``benchmarks/README.md``), and one thread per tile keeps the numbers independent of the thread count.
  Padding is done before the threads start. The cache loop is :func:`caplib.cache.cached_values`.
* Precision: ``dtype="auto"`` is float16 autocast on CUDA (as in the paper) and float32 on CPU;
  ``"bfloat16"`` is selectable where supported. Always under ``torch.inference_mode``.
* Model files are resolved first (:func:`caplib.checkpoints.resolve_checkpoint`, which never downloads:
  a checkpoint missing from this machine raises :class:`caplib.checkpoints.CheckpointNotAvailable` saying
  how to fetch it) and loaded later, on the first pair not found in the cache.
* Hub ids need a pinned ``revision`` (a commit hash, or an explicit branch name such as
  ``"main"``); ``Runtime(allow_unpinned=True)`` uses ``"main"``. The commit actually used is always
  recorded in :meth:`NLIScorer.signature`.
* Runtime settings (device, dtype, CPU workers, cache, progress) come in one
  :class:`caplib.runtime.Runtime`.
* Probabilities are cached on disk (:mod:`caplib.cache`) by checkpoint content and settings.

Example:
    >>> scorer = NLIScorer("path/to/nli-checkpoint")  # doctest: +SKIP
    >>> scorer.predict(["Water boils at 100 C."], ["Water boils at 0 C."]).round(2)  # doctest: +SKIP
    array([[0.  , 0.01, 0.99]], dtype=float32)
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from caplib.batching import TILE_GRANULARITY, TILE_ROWS, fixed_shape_tiles, map_tiles, out_of_memory, tile_workers
from caplib.cache import cached_values, default_cache_dir
from caplib.checkpoints import Checkpoint, pick_device, resolve_checkpoint, resolve_dtype
from caplib.files import exclusive, write_atomically
from caplib.runtime import Runtime
from caplib.signature import Signature

__all__ = [
    "LABEL_ORDER",
    "LONG_INPUTS",
    "PROBABILITY_COLUMNS",
    "LabelMappingError",
    "NLIScorer",
    "label_columns",
]

logger = logging.getLogger(__name__)

#: Column order of every probability array returned by caplib.
LABEL_ORDER: tuple[str, ...] = ("entailment", "neutral", "contradiction")
#: Short names of the three probabilities in column names (``cap_p_entail_fwd``...), in ``LABEL_ORDER``.
PROBABILITY_COLUMNS: tuple[str, ...] = ("entail", "neutral", "contra")

# Spellings of the three NLI labels found in id2label of public checkpoints (MNLI/SNLI/XNLI heads).
_LABEL_ALIASES = {
    "entailment": "entailment",
    "entail": "entailment",
    "entails": "entailment",
    "entailed": "entailment",
    "neutral": "neutral",
    "contradiction": "contradiction",
    "contradict": "contradiction",
    "contradicts": "contradiction",
    "contradictory": "contradiction",
}
_TRUNCATIONS = ("longest_first", "only_first", "only_second")
#: What :class:`NLIScorer` does with a pair longer than ``max_length`` (module docstring): the paper's first.
LONG_INPUTS: tuple[str, ...] = ("truncate", "chunk")


class LabelMappingError(ValueError):
    """A checkpoint's ``id2label`` cannot be read as entailment / neutral / contradiction."""


def label_columns(id2label: Mapping[Any, str], model: str = "checkpoint") -> list[int]:
    """Logit indices of entailment, neutral and contradiction (``LABEL_ORDER``) in a head's output.

    Example:
        >>> label_columns({0: "contradiction", 1: "entailment", 2: "neutral"})
        [1, 2, 0]

    Raises:
        LabelMappingError: not exactly three labels that read as the three NLI labels.
    """
    found: dict[str, int] = {}
    for index, label in id2label.items():
        canonical = _LABEL_ALIASES.get(re.sub(r"[^a-z]", "", str(label).lower()))
        if canonical is None or canonical in found:
            break
        found[canonical] = int(index)
    if len(id2label) != len(LABEL_ORDER) or set(found) != set(LABEL_ORDER):
        raise LabelMappingError(
            f"{model}: id2label {dict(id2label)} cannot be mapped to {list(LABEL_ORDER)}; caplib needs a 3-way NLI "
            f"head whose labels read entailment, neutral and contradiction (in any order). If the labels are "
            f"generic (LABEL_0, ...), write the names used in training into id2label/label2id of config.json"
        )
    return [found[label] for label in LABEL_ORDER]


def _read_id2label(checkpoint: Checkpoint) -> dict[str, str]:
    config_file = checkpoint.path / "config.json"
    config = json.loads(config_file.read_text(encoding="utf-8"))
    if "id2label" not in config:
        raise LabelMappingError(f"{checkpoint.model}: {config_file} has no id2label; caplib cannot tell which "
                                f"output is entailment, neutral or contradiction")
    return config["id2label"]


class NLIScorer:
    """Batched, cached NLI over one checkpoint; ``predict`` returns probabilities in ``LABEL_ORDER``.

    Args:
        model: Hub id, local ``save_pretrained`` directory, or ``"builtin:offline-nli"``
            (:func:`caplib.checkpoints.resolve_checkpoint`; never downloads).
        revision: Hub commit hash or branch; required for Hub ids unless ``runtime.allow_unpinned``.
        max_length: maximum joint length of a (premise, hypothesis) pair in tokens (paper: 512).
        truncation: the tokenizer's truncation strategy for longer pairs (default ``"longest_first"``).
        long_inputs: ``"truncate"`` (default, the paper's) or ``"chunk"`` (sentence chunks of the longer
            statement, aggregated as in the module docstring); part of the signature and cache key when ``"chunk"``.
        batch_size: rows of every forward pass (paper: 16), a fixed tile whatever the number of pairs
            (:mod:`caplib.batching`); part of the signature.
        runtime: where and how the model runs (:class:`caplib.runtime.Runtime`): device (default CUDA when
            available), dtype (``"auto"``: float16 autocast on CUDA as in the paper, float32 on CPU), CPU workers (default ``min(torch threads, MAX_AUTO_CPU_WORKERS)``,
            one torch thread each), the disk cache (namespace ``"nli"``) and progress bars.

    Example:
        >>> scorer = NLIScorer("cross-encoder/nli-deberta-v3-large", revision="main")  # doctest: +SKIP
        >>> scorer.predict(["A man sleeps."], ["A person sleeps."]).shape  # doctest: +SKIP
        (1, 3)
    """

    def __init__(
        self,
        model: str | os.PathLike[str],
        revision: str | None = None,
        *,
        max_length: int = 512,
        truncation: str = "longest_first",
        batch_size: int = TILE_ROWS,
        runtime: Runtime | None = None,
        long_inputs: str = "truncate",
    ):
        runtime = runtime if runtime is not None else Runtime()
        if max_length < 8:
            raise ValueError(f"max_length must be at least 8 tokens, got {max_length}")
        if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1:
            raise ValueError(f"batch_size must be a positive integer, got {batch_size!r}")
        if truncation not in _TRUNCATIONS:
            raise ValueError(f"truncation must be one of {_TRUNCATIONS}, got {truncation!r}")
        if long_inputs not in LONG_INPUTS:
            raise ValueError(f"long_inputs must be one of {LONG_INPUTS}, got {long_inputs!r}")
        self.checkpoint: Checkpoint = resolve_checkpoint(model, revision, allow_unpinned=runtime.allow_unpinned)
        self.columns = label_columns(_read_id2label(self.checkpoint), self.checkpoint.model)
        self.device = pick_device(runtime.device)
        self.dtype = resolve_dtype(runtime.dtype or "auto", self.device)
        self.batch_size = batch_size
        self.max_length = max_length
        self.truncation = truncation
        self.long_inputs = long_inputs
        self.progress = runtime.progress
        self.cpu_workers = runtime.cpu_workers
        self.backend = runtime.nli_backend
        if self.backend != "torch" and (self.device != "cpu" or self.dtype != "float32"):
            raise ValueError(f"nli_backend {self.backend!r} runs float32 on the CPU; got device {self.device}, "
                             f"dtype {self.dtype} (use the torch backend there)")
        self._onnx_dir = runtime.cache_path or default_cache_dir()
        self.last_stats: dict[str, int] = {}
        self._cache = runtime.content_cache("nli", self.settings())
        self._model: Any = None
        self._tokenizer: Any = None

    def settings(self) -> dict[str, Any]:
        """Everything that changes the probabilities, the key of the cache.

        The checkpoint enters by content (Hub commit, or SHA-256 of a local directory's files), not by
        name or path: a moved or copied model keeps its cached probabilities, a retrained one does not.
        ``long_inputs`` enters only when it is ``"chunk"``, so truncated probabilities keep their earlier keys.
        """
        chunking = {"long_inputs": self.long_inputs} if self.long_inputs != "truncate" else {}
        return {
            "checkpoint": self.checkpoint.fingerprint,
            "dtype": self.dtype,
            "device_type": self.device.split(":")[0],
            "max_length": self.max_length,
            "truncation": self.truncation,
            "label_order": list(LABEL_ORDER),
            "tile": [self.batch_size, TILE_GRANULARITY],
            **chunking,
            **({"backend": self.backend} if self.backend != "torch" else {}),
        }

    def signature(self) -> Signature:
        """The NLI part of a settings signature: ``nli:cross-encoder/...@<commit>|rev:main|...|batch:16``."""
        revision = self.checkpoint.revision if self.checkpoint.revision is not None else "local"
        chunking = (("long_inputs", self.long_inputs),) if self.long_inputs != "truncate" else ()
        return Signature("nli", (("rev", revision), ("dtype", self.dtype), ("max_length", str(self.max_length)),
                                 ("truncation", self.truncation), *chunking,
                                 ("batch", str(self.batch_size)),
                                 *((("backend", self.backend),) if self.backend != "torch" else ())),
                         value=self.checkpoint.identity)

    def load(self) -> None:
        """Load tokenizer and model now (otherwise done on the first pair missing from the cache)."""
        if self._model is not None:
            return
        from transformers import AutoModelForSequenceClassification, AutoTokenizer

        path = self.checkpoint.path
        self._tokenizer = AutoTokenizer.from_pretrained(path, local_files_only=True)
        # Pairs are tokenized once (lengths are needed for tiling) and padded per tile with .pad();
        # transformers' advice to re-tokenize with __call__ instead does not apply.
        self._tokenizer.deprecation_warnings["Asking-to-pad-a-fast-tokenizer"] = True
        if self.backend != "torch":
            self._model = onnx_session(path, self.checkpoint.fingerprint, self._onnx_dir,
                                       int8=self.backend == "onnxruntime-int8")
            return
        model = AutoModelForSequenceClassification.from_pretrained(path, local_files_only=True)
        self._model = model.eval().to(self.device)

    def predict(self, premises: Sequence[str], hypotheses: Sequence[str]) -> np.ndarray:
        """Probabilities of ``premise -> hypothesis`` for every pair, shape ``(n, 3)``, columns ``LABEL_ORDER``.

        ``last_stats`` then holds counts of this call: ``pairs``, ``unique``, ``cached``, ``computed``,
        ``truncated`` (unique pairs cut by ``truncation``: those longer than ``max_length`` with
        ``long_inputs="truncate"``, those with a chunk that still did not fit with ``"chunk"``), ``chunked`` (unique
        pairs longer than ``max_length`` scored by chunks) and ``cpu_workers`` (tiles that ran at a time; 0 when
        every pair came from the cache).
        """
        premises, hypotheses = list(premises), list(hypotheses)
        if len(premises) != len(hypotheses):
            raise ValueError(f"got {len(premises)} premises but {len(hypotheses)} hypotheses; they are pairs")
        for name, texts in (("premise", premises), ("hypothesis", hypotheses)):
            for index, text in enumerate(texts):
                if not isinstance(text, str):
                    raise ValueError(f"{name} {index} is {text!r} ({type(text).__name__}); "
                                     f"every {name} must be a string")
        workers = 0

        def compute(todo: list[tuple[str, str]]) -> list[list[float]]:
            nonlocal workers
            probs, flags, workers = self._compute(todo)
            return [[*map(float, row), float(flag)] for row, flag in zip(probs, flags)]

        values, stats = cached_values(self._cache, list(zip(premises, hypotheses)), compute)
        table = np.array(values, dtype=np.float64).reshape(len(values), 4)
        # the 4th value: 0 fits, 1 longer than max_length (truncated, or chunked), 2 chunked with a chunk truncated
        flags = np.array(list({pair: flag for pair, flag in zip(zip(premises, hypotheses), table[:, 3])}.values()))
        chunking = self.long_inputs == "chunk"
        n_long, n_cut = int((flags >= 1).sum()), int((flags == 2).sum())
        n_truncated, n_chunked = (n_cut, n_long) if chunking else (n_long, 0)
        self.last_stats = {"pairs": stats.items, "unique": stats.unique, "cached": stats.cached,
                           "computed": stats.computed, "truncated": n_truncated, "chunked": n_chunked,
                           "cpu_workers": workers}
        if n_truncated:
            logger.warning("%d of %d unique NLI pairs exceed max_length=%d tokens%s and were truncated (%s)",
                           n_truncated, stats.unique, self.max_length, " even in chunks" if chunking else "",
                           self.truncation)
        if n_chunked:
            logger.info("%d of %d unique NLI pairs exceed max_length=%d tokens and were scored in sentence chunks",
                        n_chunked, stats.unique, self.max_length)
        return table[:, :3]

    def chunks(self, text: str, budget: int) -> list[str]:
        """``text`` as consecutive chunks of whole sentences of at most ``budget`` tokens each (no special
        tokens); a sentence longer than the budget is cut between words, and a single word longer than it
        stays one (too long) chunk. Sentences are :func:`caplib.decompose.split_sentences`'.

        Example:
            >>> NLIScorer("path/to/nli-checkpoint").chunks("A b c. D e f. G h.", budget=6)  # doctest: +SKIP
            ['A b c.', 'D e f.', 'G h.']
        """
        from caplib.decompose import split_sentences

        self.load()
        size = self._token_count
        pieces: list[str] = []
        for sentence in split_sentences(text) or [text]:
            pieces += [sentence] if size(sentence) <= budget else sentence.split()
        chunks: list[str] = []
        for piece in pieces:
            joined = f"{chunks[-1]} {piece}" if chunks else piece
            if chunks and size(joined) <= budget:
                chunks[-1] = joined
            else:
                chunks.append(piece)
        return chunks

    def _token_count(self, text: str) -> int:
        return len(self._tokenizer(text, add_special_tokens=False, verbose=False)["input_ids"])

    def _chunk_plan(self, premise: str, hypothesis: str) -> tuple[list[str], list[str]]:
        """(premise chunks, hypothesis chunks) of a pair longer than ``max_length`` (module docstring)."""
        total = self.max_length - self._tokenizer.num_special_tokens_to_add(pair=True)
        n_premise, n_hypothesis = self._token_count(premise), self._token_count(hypothesis)
        # the longer statement in chunks beside the whole shorter one, unless that takes more than half the budget
        if n_premise >= n_hypothesis and n_hypothesis <= total // 2:
            return self.chunks(premise, total - n_hypothesis), [hypothesis]
        if n_hypothesis > n_premise and n_premise <= total // 2:
            return [premise], self.chunks(hypothesis, total - n_premise)
        return self.chunks(premise, total - total // 2), self.chunks(hypothesis, total // 2)

    def _compute(self, pairs: list[tuple[str, str]]) -> tuple[np.ndarray, np.ndarray, int]:
        """Probabilities (LABEL_ORDER), long-input flags (0 fits, 1 longer than max_length, 2 chunked but a chunk
        was truncated) of unique pairs, in their given order, and the number of tiles that ran concurrently."""
        self.load()
        if self.long_inputs == "truncate":
            probs, too_long, workers = self._score_pairs(pairs)
            return probs, too_long.astype(int), workers
        special = self._tokenizer.num_special_tokens_to_add(pair=True)
        long = [special + self._token_count(p) + self._token_count(h) > self.max_length for p, h in pairs]
        plans = {i: self._chunk_plan(*pairs[i]) for i, is_long in enumerate(long) if is_long}
        wanted = [pair for pair, is_long in zip(pairs, long) if not is_long]
        wanted += [(p, h) for premises, hypotheses in plans.values() for h in hypotheses for p in premises]
        unique = list(dict.fromkeys(wanted))
        scored, cut, workers = self._score_pairs(unique)
        row = {pair: (scored[i], bool(cut[i])) for i, pair in enumerate(unique)}
        probs = np.empty((len(pairs), len(LABEL_ORDER)), dtype=np.float64)
        flags = np.zeros(len(pairs), dtype=int)
        for i, pair in enumerate(pairs):
            if i not in plans:
                probs[i] = row[pair][0]
                continue
            premises, hypotheses = plans[i]
            best = [max(premises, key=lambda p: (row[(p, h)][0][0], -premises.index(p))) for h in hypotheses]
            probs[i] = np.mean([row[(p, h)][0] for p, h in zip(best, hypotheses)], axis=0)
            flags[i] = 2 if any(row[(p, h)][1] for p in premises for h in hypotheses) else 1
        return probs, flags, workers

    def _score_pairs(self, pairs: list[tuple[str, str]]) -> tuple[np.ndarray, np.ndarray, int]:
        """Probabilities (LABEL_ORDER) and truncation flags of unique pairs, in their given order, and the
        number of tiles that ran concurrently."""
        import torch
        from tqdm import tqdm

        premises, hypotheses = [p for p, _ in pairs], [h for _, h in pairs]
        # Tokenize once, untruncated (for the lengths), then re-tokenize only the pairs that are too long.
        encoded = self._tokenizer(premises, hypotheses, verbose=False)
        features = [{key: encoded[key][i] for key in encoded} for i in range(len(pairs))]
        lengths = np.array([len(feature["input_ids"]) for feature in features])
        too_long = np.flatnonzero(lengths > self.max_length).tolist()
        if too_long:
            cut = self._tokenizer([premises[i] for i in too_long], [hypotheses[i] for i in too_long],
                                  truncation=self.truncation, max_length=self.max_length)
            for j, i in enumerate(too_long):
                features[i] = {key: cut[key][j] for key in cut}
        probs = np.empty((len(pairs), len(LABEL_ORDER)), dtype=np.float64)
        # every pair in a tile of batch_size rows x its own padded length: scores do not depend on batching
        tiles = fixed_shape_tiles(np.minimum(lengths, self.max_length).tolist(), self.batch_size,
                                  max_length=self.max_length)
        workers = tile_workers(len(tiles), self.device, self.cpu_workers)
        bar = tqdm(total=len(pairs), desc="NLI", unit="pair", delay=1.0, disable=not self.progress)
        # Padded before the threads start (the tokenizer is not shared between threads).
        padded = [self._pad([features[i] for i in tile.filled(self.batch_size)], tile.length) for tile in tiles]

        def run(position: int) -> np.ndarray:
            try:
                return self._forward(padded[position])[: len(tiles[position].members)]
            except torch.OutOfMemoryError as error:
                raise out_of_memory(error, "NLI", self.batch_size, tiles[position].length, self.device) from None

        with bar:
            for tile, rows in zip(tiles, map_tiles(run, len(tiles), self.device, workers)):
                probs[tile.members] = rows
                bar.update(len(tile.members))
        return probs, lengths > self.max_length, workers

    def _pad(self, features: list[dict[str, list[int]]], length: int) -> dict[str, Any]:
        """One tile as tensors, padded to ``length`` tokens."""
        return dict(self._tokenizer.pad(features, padding="max_length", max_length=length, return_tensors="pt"))

    def _forward(self, encoded: dict[str, Any]) -> np.ndarray:
        """Probabilities (LABEL_ORDER) of one padded tile."""
        import torch

        if self.backend != "torch":
            names = [node.name for node in self._model.get_inputs()]
            logits = torch.from_numpy(self._model.run(None, {name: encoded[name].numpy() for name in names})[0])
        else:
            on_device = {key: value.to(self.device) for key, value in encoded.items()}
            with torch.inference_mode(), self._autocast():
                logits = self._model(**on_device).logits
        return logits.float().softmax(dim=-1)[:, self.columns].cpu().numpy()

    def _autocast(self) -> contextlib.AbstractContextManager[Any]:
        import torch

        if self.dtype == "float32":
            return contextlib.nullcontext()
        return torch.autocast(device_type=self.device.split(":")[0], dtype=getattr(torch, self.dtype))


def onnx_session(path: str | os.PathLike[str], fingerprint: str, directory: Path, int8: bool = False) -> Any:
    """An ONNX Runtime session (CPU, one thread: caplib runs ``cpu_workers`` tiles at a time) of the NLI checkpoint at
    ``path``, exported once to ``directory/onnx/<fingerprint hash>.onnx`` (torch's TorchScript-based exporter,
    opset 17, batch and sequence axes dynamic, eager attention so that no mask branch is traced away) and reused.
    ``int8``: that export with the weights of its matrix products quantized to int8 once (ONNX Runtime's
    ``quantize_dynamic``, per tensor, its default; activations quantized per call), ``<hash>.int8.onnx``.

    Raises:
        ValueError: onnxruntime or onnx is not installed (``pip install caplib[onnx]``).
    """
    try:
        import onnxruntime
    except ImportError:
        raise ValueError("nli_backend 'onnxruntime' needs onnxruntime and onnx: pip install 'caplib[onnx]'") from None
    target = Path(directory) / "onnx" / f"{hashlib.sha256(fingerprint.encode()).hexdigest()[:16]}.onnx"
    with exclusive(target):  # Ray actors starting together: one exports and quantizes, the others wait for it
        if not target.is_file():
            _export_onnx(path, target)
        if int8:
            target = _quantized(target)
    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads = options.inter_op_num_threads = 1
    return onnxruntime.InferenceSession(str(target), options, providers=["CPUExecutionProvider"])


def _quantized(exported: Path) -> Path:
    """``<hash>.int8.onnx`` beside the export, made once (the caller holds the lock: ONNX Runtime writes a shape
    inference file beside its input)."""
    from onnxruntime.quantization import QuantType, quantize_dynamic

    quantized = exported.with_suffix(".int8.onnx")
    if not quantized.is_file():
        root, level = logging.getLogger(), logging.getLogger().level
        root.setLevel(logging.ERROR)  # its advice to pre-process models is logged on the root logger
        try:
            write_atomically(quantized, lambda temporary: quantize_dynamic(
                str(exported), str(temporary), weight_type=QuantType.QInt8, per_channel=False))
        finally:
            root.setLevel(level)
    return quantized


def _export_onnx(path: str | os.PathLike[str], target: Path) -> None:
    import inspect
    import warnings

    import torch
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(path, local_files_only=True)
    model = AutoModelForSequenceClassification.from_pretrained(path, local_files_only=True,
                                                               attn_implementation="eager").eval()
    example = dict(tokenizer(["A short premise.", "A longer premise, so that the first row is padded."],
                             ["A hypothesis.", "Another hypothesis."], padding=True, return_tensors="pt"))
    # the exporter names the graph's inputs in the order of forward()'s parameters
    names = [name for name in inspect.signature(model.forward).parameters if name in example]
    axes = {name: {0: "rows", 1: "tokens"} for name in names}
    try:
        import onnx  # noqa: F401  (the exporter needs it)
    except ImportError:
        raise ValueError("nli_backend 'onnxruntime' needs onnxruntime and onnx: pip install 'caplib[onnx]'") from None

    def export(temporary: Path) -> None:
        with warnings.catch_warnings(), torch.inference_mode():
            warnings.simplefilter("ignore")  # tracer warnings about python values in the graph (checked in tests)
            torch.onnx.export(model, (), str(temporary), kwargs={name: example[name] for name in names},
                              input_names=names, output_names=["logits"], dynamic_axes={**axes, "logits": {0: "rows"}},
                              opset_version=17, dynamo=False)

    write_atomically(target, export)
