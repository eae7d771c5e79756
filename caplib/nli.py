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

* Truncation: pairs longer than ``max_length`` are cut with ``truncation="longest_first"`` (tokens
  are removed from the longer of the two statements first). Truncated pairs are counted
  (``NLIScorer.last_stats["truncated"]``) and a warning is logged; long inputs never crash.
* Batching: identical pairs are scored once; unique pairs are sorted by tokenized length (longest
  first, so memory problems show at once) and padded per batch. On CUDA a batch that runs out of
  memory is split in halves. Results do not depend on batch size or input order beyond float
  rounding (below 1e-5 on CPU).
* CPU parallelism: on CPU, batches run concurrently on ``cpu_workers`` threads, each with its share
  of torch's intra-op threads (default: as many workers as torch threads, at most
  ``MAX_AUTO_CPU_WORKERS``, one thread each). Independent batches keep every core busy through the
  many small, poorly parallel operations of a transformer layer; on 2 cores this scores the
  DeBERTa-v2 benchmark model ~1.5x faster than 2 threads working on one batch at a time
  (``benchmarks/README.md``). Padding is done before the threads start; torch's thread count is
  restored afterwards.
* Precision: ``dtype="auto"`` is float16 autocast on CUDA (as in the paper) and float32 on CPU;
  ``"bfloat16"`` is selectable where supported. Always under ``torch.inference_mode``.
* Model files are resolved first (:func:`resolve_checkpoint`) and loaded later, on the first pair
  not found in the cache. A Hub id is looked up in the local Hugging Face cache only when
  ``HF_HUB_OFFLINE``/``TRANSFORMERS_OFFLINE`` is set; when it is missing there the result is one
  :class:`CheckpointNotAvailable` that says how to fetch it. Nothing waits on the network.
* Hub ids need a pinned ``revision`` (a commit hash, or an explicit branch name such as
  ``"main"``); ``allow_unpinned=True`` uses ``"main"``. The commit actually used is always
  recorded in :meth:`NLIScorer.signature`.
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
from collections.abc import Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from caplib.cache import ContentCache

__all__ = [
    "LABEL_ORDER",
    "BUILTIN_OFFLINE_NLI",
    "Checkpoint",
    "CheckpointNotAvailable",
    "LabelMappingError",
    "NLIScorer",
    "label_columns",
    "resolve_checkpoint",
]

logger = logging.getLogger(__name__)

#: Column order of every probability array returned by caplib.
LABEL_ORDER: tuple[str, ...] = ("entailment", "neutral", "contradiction")
#: The offline profile's NLI backbone, trained locally by ``caplib.offline_nli``.
BUILTIN_OFFLINE_NLI = "builtin:offline-nli"
#: Upper bound of the default ``cpu_workers``: each worker holds one batch's activations (up to
#: ~1-2 GB for 16 pairs of 512 tokens through a large DeBERTa), so many-core machines do not get one
#: worker per core unless asked.
MAX_AUTO_CPU_WORKERS = 4

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
_DTYPES = {"float32": "float32", "fp32": "float32", "float16": "float16", "fp16": "float16",
           "bfloat16": "bfloat16", "bf16": "bfloat16"}
_TRUNCATIONS = ("longest_first", "only_first", "only_second")
# Files a sequence-classification checkpoint needs (config, tokenizer); weights are fetched separately
# so that a repository holding both safetensors and .bin weights is downloaded once, not twice.
_META_PATTERNS = ["*.json", "*.model", "*.txt"]
_WEIGHT_PATTERNS = (["model*.safetensors"], ["pytorch_model*.bin"])
_TRUE = {"1", "true", "yes", "on"}


class CheckpointNotAvailable(RuntimeError):
    """The model files are not on this machine and cannot (or may not) be downloaded now."""


class LabelMappingError(ValueError):
    """A checkpoint's ``id2label`` cannot be read as entailment / neutral / contradiction."""


@dataclass(frozen=True)
class Checkpoint:
    """Where a model's files are, and what identifies their content.

    Attributes:
        model: the model as given (Hub id, local directory or ``builtin:`` name).
        path: local directory holding ``config.json``, tokenizer and weights.
        revision: the requested Hub revision (None for local directories).
        commit: the Hub commit the files come from (None for local directories).
        fingerprint: ``commit`` for Hub files, else SHA-256 of the directory's files.
    """

    model: str
    path: Path
    revision: str | None
    commit: str | None
    fingerprint: str

    @property
    def identity(self) -> str:
        """``model@commit`` for Hub files, ``model#sha256:<12 hex>`` for local ones."""
        if self.commit is not None:
            return f"{self.model}@{self.commit}"
        return f"{self.model}#sha256:{self.fingerprint[:12]}"


def _hub_offline() -> bool:
    from huggingface_hub import constants

    flags = (os.environ.get("HF_HUB_OFFLINE", ""), os.environ.get("TRANSFORMERS_OFFLINE", ""))
    return constants.HF_HUB_OFFLINE or any(flag.strip().lower() in _TRUE for flag in flags)


def _directory_fingerprint(path: Path) -> str:
    """SHA-256 over the names and contents of the files directly inside ``path``."""
    digest = hashlib.sha256()
    for file in sorted(p for p in path.iterdir() if p.is_file()):
        digest.update(file.name.encode("utf-8") + b"\x00")
        with file.open("rb") as handle:
            for block in iter(lambda: handle.read(1 << 20), b""):
                digest.update(block)
    return digest.hexdigest()


def _has_weights(path: Path) -> bool:
    return any(any(path.glob(pattern)) for patterns in _WEIGHT_PATTERNS for pattern in patterns)


def _local_checkpoint(model: str, path: Path) -> Checkpoint:
    if not (path / "config.json").is_file():
        raise CheckpointNotAvailable(
            f"{path} is not a model directory (no config.json); pass a directory written by "
            f"save_pretrained(), or a Hugging Face Hub id"
        )
    if not _has_weights(path):
        raise CheckpointNotAvailable(f"{path} has a config.json but no model weights (*.safetensors or *.bin)")
    return Checkpoint(model, path.resolve(), None, None, _directory_fingerprint(path))


def _offline_nli_checkpoint() -> Checkpoint:
    missing = (
        f"offline NLI backbone not built yet: run `make book` or `python -m caplib.offline_nli train` "
        f"(needed by model {BUILTIN_OFFLINE_NLI!r}, the NLI model of the offline profile)"
    )
    try:
        from caplib import offline_nli
    except ModuleNotFoundError as exc:
        if exc.name != "caplib.offline_nli":
            raise
        raise CheckpointNotAvailable(missing) from exc
    path = Path(offline_nli.artifact_dir())
    if not (path / "config.json").is_file():
        raise CheckpointNotAvailable(f"{missing}; expected it in {path}")
    return _local_checkpoint(BUILTIN_OFFLINE_NLI, path)


def _fetch_instructions(model: str, revision: str) -> str:
    from huggingface_hub import constants

    return (
        f"fetch it once on a machine with network access: `huggingface-cli download {model} --revision "
        f"{revision}` and copy that machine's Hugging Face cache ({constants.HF_HUB_CACHE} here) to this one "
        f"(or point HF_HOME at a copy), or save the model with save_pretrained() and pass its directory"
    )


def _hub_checkpoint(model: str, revision: str, local_files_only: bool) -> Checkpoint:
    from huggingface_hub import snapshot_download
    from huggingface_hub.errors import HFValidationError, HfHubHTTPError, LocalEntryNotFoundError, OfflineModeIsEnabled

    failure = (HfHubHTTPError, LocalEntryNotFoundError, OfflineModeIsEnabled, OSError)
    where = "not in the local Hugging Face cache and downloads are off (HF_HUB_OFFLINE=1)" if local_files_only \
        else "not in the local Hugging Face cache and could not be downloaded"
    try:
        path = Path(snapshot_download(model, revision=revision, allow_patterns=_META_PATTERNS,
                                      local_files_only=local_files_only))
        for patterns in _WEIGHT_PATTERNS:
            if _has_weights(path):
                break
            path = Path(snapshot_download(model, revision=revision, allow_patterns=patterns,
                                          local_files_only=local_files_only))
    except HFValidationError as exc:
        raise ValueError(f"{model!r} is neither an existing local directory nor a valid Hub id ({exc})") from exc
    except failure as exc:
        raise CheckpointNotAvailable(
            f"checkpoint {model} (revision {revision}) is {where} ({type(exc).__name__}); "
            f"{_fetch_instructions(model, revision)}"
        ) from None
    if not (path / "config.json").is_file() or not _has_weights(path):
        raise CheckpointNotAvailable(
            f"checkpoint {model} (revision {revision}) is only partly in the local cache ({path} lacks "
            f"config.json or weights); {_fetch_instructions(model, revision)}"
        )
    commit = path.name  # snapshots/<commit hash>
    return Checkpoint(model, path, revision, commit, commit)


def resolve_checkpoint(
    model: str | os.PathLike[str],
    revision: str | None = None,
    *,
    allow_unpinned: bool = False,
    local_files_only: bool | None = None,
) -> Checkpoint:
    """Find a checkpoint's files on this machine (downloading a Hub id only when allowed).

    Args:
        model: a local directory written by ``save_pretrained``, a Hub id, or ``"builtin:offline-nli"``.
        revision: Hub commit hash or branch/tag; required for Hub ids unless ``allow_unpinned``.
        allow_unpinned: use ``"main"`` when ``revision`` is None (the commit used is still recorded).
        local_files_only: never download; default: True when ``HF_HUB_OFFLINE`` or
            ``TRANSFORMERS_OFFLINE`` is set.

    Example:
        >>> resolve_checkpoint("cross-encoder/nli-deberta-v3-large", revision="main").commit  # doctest: +SKIP
        '<the 40-hex commit the local cache holds for main>'

    Raises:
        CheckpointNotAvailable: the files are not here and may not or could not be downloaded.
        ValueError: a Hub id without revision (and ``allow_unpinned=False``), or a malformed model name.
    """
    name = os.fspath(model)
    if name.startswith("builtin:"):
        if name != BUILTIN_OFFLINE_NLI:
            raise ValueError(f"unknown builtin model {name!r}; the only builtin NLI model is {BUILTIN_OFFLINE_NLI!r}")
        return _offline_nli_checkpoint()
    path = Path(name).expanduser()
    if path.exists():
        if not path.is_dir():
            raise CheckpointNotAvailable(f"{path} is a file; pass the model directory that holds config.json")
        return _local_checkpoint(name, path)
    if name.startswith((".", "/", "~")) or name.count("/") > 1 or "\\" in name:
        raise CheckpointNotAvailable(f"model directory {path} does not exist")
    if revision is None:
        if not allow_unpinned:
            raise ValueError(
                f"Hub model {name!r} has no pinned revision: pass revision=<commit hash> (the folder name under "
                f"snapshots/ in the Hugging Face cache, or the hash shown on the model page), or "
                f"allow_unpinned=True to use 'main' (the signature then records the commit actually used); with "
                f"`caplib score`: --allow-unpinned, or write the commit as the profile's revision"
            )
        revision = "main"
    offline = _hub_offline() if local_files_only is None else local_files_only
    return _hub_checkpoint(name, revision, offline)


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


def _device_name(device: Any) -> str:
    import torch

    if device is None:
        return "cuda" if torch.cuda.is_available() else "cpu"
    return str(torch.device(device))


class NLIScorer:
    """Batched, cached NLI over one checkpoint; ``predict`` returns probabilities in ``LABEL_ORDER``.

    Args:
        model: Hub id, local ``save_pretrained`` directory, or ``"builtin:offline-nli"``.
        revision: Hub commit hash or branch; required for Hub ids unless ``allow_unpinned=True``.
        device: ``"cpu"``, ``"cuda"``, ``"cuda:1"``...; default CUDA when available.
        batch_size: pairs per forward pass (paper: 16).
        dtype: ``"auto"`` (float16 autocast on CUDA as in the paper, float32 on CPU), ``"float32"``,
            ``"float16"`` (CUDA only) or ``"bfloat16"``.
        max_length: maximum joint length of a (premise, hypothesis) pair in tokens (paper: 512).
        truncation: the tokenizer's truncation strategy for longer pairs (default ``"longest_first"``).
        cache: store probabilities on disk (:class:`caplib.cache.ContentCache`, namespace ``"nli"``).
        cache_dir: cache directory; default :func:`caplib.cache.default_cache_dir`.
        progress: show a tqdm bar when a run takes more than a second.
        cpu_workers: batches scored concurrently on CPU (ignored on CUDA); default
            ``min(torch.get_num_threads(), MAX_AUTO_CPU_WORKERS)``, the torch threads shared among them.
        allow_unpinned, local_files_only: see :func:`resolve_checkpoint`.

    Example:
        >>> scorer = NLIScorer("cross-encoder/nli-deberta-v3-large", revision="main")  # doctest: +SKIP
        >>> scorer.predict(["A man sleeps."], ["A person sleeps."]).shape  # doctest: +SKIP
        (1, 3)
    """

    def __init__(
        self,
        model: str | os.PathLike[str],
        revision: str | None = None,
        device: Any = None,
        batch_size: int = 16,
        dtype: str = "auto",
        max_length: int = 512,
        cache: bool = True,
        progress: bool = True,
        *,
        truncation: str = "longest_first",
        cache_dir: Path | str | None = None,
        cpu_workers: int | None = None,
        allow_unpinned: bool = False,
        local_files_only: bool | None = None,
    ):
        if batch_size < 1:
            raise ValueError(f"batch_size must be a positive integer, got {batch_size}")
        if cpu_workers is not None and cpu_workers < 1:
            raise ValueError(f"cpu_workers must be a positive integer or None, got {cpu_workers}")
        if max_length < 8:
            raise ValueError(f"max_length must be at least 8 tokens, got {max_length}")
        if truncation not in _TRUNCATIONS:
            raise ValueError(f"truncation must be one of {_TRUNCATIONS}, got {truncation!r}")
        self.checkpoint = resolve_checkpoint(model, revision, allow_unpinned=allow_unpinned,
                                             local_files_only=local_files_only)
        self.columns = label_columns(_read_id2label(self.checkpoint), self.checkpoint.model)
        self.device = _device_name(device)
        self.dtype = self._effective_dtype(dtype)
        self.batch_size = batch_size
        self.max_length = max_length
        self.truncation = truncation
        self.progress = progress
        self.cpu_workers = cpu_workers
        self.last_stats: dict[str, int] = {}
        self._cache = ContentCache("nli", self.settings(), cache_dir) if cache else None
        self._model: Any = None
        self._tokenizer: Any = None

    def _effective_dtype(self, dtype: str) -> str:
        import torch

        on_cuda = self.device.startswith("cuda")
        if dtype == "auto":
            return "float16" if on_cuda else "float32"
        if dtype not in _DTYPES:
            raise ValueError(f"dtype must be 'auto' or one of {sorted(_DTYPES)}, got {dtype!r}")
        name = _DTYPES[dtype]
        if name == "float16" and not on_cuda:
            raise ValueError(f"float16 autocast needs a CUDA device (device is {self.device}); use 'float32' or "
                             f"'bfloat16' on CPU")
        if name == "bfloat16" and on_cuda and not torch.cuda.is_bf16_supported():
            raise ValueError(f"{self.device} does not support bfloat16; use 'float16' or 'float32'")
        return name

    def settings(self) -> dict[str, Any]:
        """Everything that changes the probabilities, the key of the cache.

        The checkpoint enters by content (Hub commit, or SHA-256 of a local directory's files), not by
        name or path: a moved or copied model keeps its cached probabilities, a retrained one does not.
        """
        return {
            "checkpoint": self.checkpoint.fingerprint,
            "dtype": self.dtype,
            "device_type": self.device.split(":")[0],
            "max_length": self.max_length,
            "truncation": self.truncation,
            "label_order": list(LABEL_ORDER),
        }

    def signature(self) -> str:
        """The NLI part of a settings signature, e.g. ``nli:cross-encoder/...@<commit>|rev:main|dtype:float16|...``."""
        revision = self.checkpoint.revision if self.checkpoint.revision is not None else "local"
        return (
            f"nli:{self.checkpoint.identity}|rev:{revision}|dtype:{self.dtype}|max_length:{self.max_length}"
            f"|truncation:{self.truncation}"
        )

    def load(self) -> None:
        """Load tokenizer and model now (otherwise done on the first pair missing from the cache)."""
        if self._model is not None:
            return
        from transformers import AutoModelForSequenceClassification, AutoTokenizer

        path = self.checkpoint.path
        self._tokenizer = AutoTokenizer.from_pretrained(path, local_files_only=True)
        # Pairs are tokenized once (lengths are needed for sorting) and padded per batch with .pad();
        # transformers' advice to re-tokenize with __call__ instead does not apply.
        self._tokenizer.deprecation_warnings["Asking-to-pad-a-fast-tokenizer"] = True
        model = AutoModelForSequenceClassification.from_pretrained(path, local_files_only=True)
        self._model = model.eval().to(self.device)

    def predict(self, premises: Sequence[str], hypotheses: Sequence[str]) -> np.ndarray:
        """Probabilities of ``premise -> hypothesis`` for every pair, shape ``(n, 3)``, columns ``LABEL_ORDER``.

        ``last_stats`` then holds counts of this call: ``pairs``, ``unique``, ``cached``, ``computed``,
        ``truncated`` (unique pairs longer than ``max_length``, cut by ``truncation``) and ``cpu_workers``
        (batches that ran at a time; 0 when every pair came from the cache).
        """
        premises, hypotheses = list(premises), list(hypotheses)
        if len(premises) != len(hypotheses):
            raise ValueError(f"got {len(premises)} premises but {len(hypotheses)} hypotheses; they are pairs")
        for name, texts in (("premise", premises), ("hypothesis", hypotheses)):
            for index, text in enumerate(texts):
                if not isinstance(text, str):
                    raise ValueError(f"{name} {index} is {text!r} ({type(text).__name__}); "
                                     f"every {name} must be a string")
        pairs = list(zip(premises, hypotheses))
        unique = list(dict.fromkeys(pairs))
        items = [json.dumps(pair, ensure_ascii=False) for pair in unique]
        values: dict[str, list[float]] = self._cache.get_many(items) if self._cache is not None else {}
        cached = len(values)
        todo = [i for i, item in enumerate(items) if item not in values]
        workers = 0
        if todo:
            probs, truncated, workers = self._compute([unique[i] for i in todo])
            computed = {items[i]: [*map(float, row), float(cut)] for i, row, cut in zip(todo, probs, truncated)}
            if self._cache is not None:
                self._cache.put_many(computed)
            values.update(computed)
        table = np.array([values[item] for item in items], dtype=np.float64).reshape(len(items), 4)
        n_truncated = int(table[:, 3].sum())
        self.last_stats = {"pairs": len(pairs), "unique": len(unique), "cached": cached,
                           "computed": len(todo), "truncated": n_truncated, "cpu_workers": workers}
        if n_truncated:
            logger.warning("%d of %d unique NLI pairs exceed max_length=%d tokens and were truncated (%s)",
                           n_truncated, len(unique), self.max_length, self.truncation)
        position = {pair: i for i, pair in enumerate(unique)}
        return table[[position[pair] for pair in pairs], :3]

    def _compute(self, pairs: list[tuple[str, str]]) -> tuple[np.ndarray, np.ndarray, int]:
        """Probabilities (LABEL_ORDER) and truncation flags of unique pairs, in their given order, and the
        number of batches that ran concurrently."""
        from tqdm.auto import tqdm

        self.load()
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
        order = sorted(range(len(pairs)), key=lambda i: (-lengths[i], i))  # longest first, ties by position
        probs = np.empty((len(pairs), len(LABEL_ORDER)), dtype=np.float64)
        batches = [order[start : start + self.batch_size] for start in range(0, len(order), self.batch_size)]
        workers, threads = self._cpu_plan(len(batches))
        bar = tqdm(total=len(pairs), desc="NLI", unit="pair", delay=1.0, disable=not self.progress)
        padded = [self._pad([features[i] for i in batch]) for batch in batches]
        with bar, _torch_threads(threads), ThreadPoolExecutor(workers) as pool:
            # map() yields in submission order, so results land in their rows however threads interleave
            for batch, rows in zip(batches, pool.map(self._forward, padded)):
                probs[batch] = rows
                bar.update(len(batch))
        return probs, lengths > self.max_length, workers

    def _cpu_plan(self, n_batches: int) -> tuple[int, int]:
        """(concurrent batches, torch threads while they run): one worker off CPU or for one batch."""
        import torch

        threads = torch.get_num_threads()
        if self.device != "cpu" or n_batches < 2:
            return 1, threads
        workers = self.cpu_workers if self.cpu_workers is not None else min(threads, MAX_AUTO_CPU_WORKERS)
        workers = max(1, min(workers, n_batches))
        return workers, max(1, threads // workers)

    def _pad(self, features: list[dict[str, list[int]]]) -> dict[str, Any]:
        """One batch as tensors, padded to its longest pair."""
        return dict(self._tokenizer.pad(features, padding=True, return_tensors="pt"))

    def _forward(self, encoded: dict[str, Any]) -> np.ndarray:
        """Probabilities (LABEL_ORDER) of one padded batch; on CUDA out of memory, in two halves."""
        import torch

        try:
            on_device = {key: value.to(self.device) for key, value in encoded.items()}
            with torch.inference_mode(), self._autocast():
                logits = self._model(**on_device).logits
            return logits.float().softmax(dim=-1)[:, self.columns].cpu().numpy()
        except torch.OutOfMemoryError:
            size = len(encoded["input_ids"])
            if size == 1:
                raise
            torch.cuda.empty_cache()
            halves = ({key: value[: size // 2] for key, value in encoded.items()},
                      {key: value[size // 2 :] for key, value in encoded.items()})
            return np.concatenate([self._forward(half) for half in halves])

    def _autocast(self) -> contextlib.AbstractContextManager[Any]:
        import torch

        if self.dtype == "float32":
            return contextlib.nullcontext()
        return torch.autocast(device_type=self.device.split(":")[0], dtype=getattr(torch, self.dtype))


@contextlib.contextmanager
def _torch_threads(n: int) -> Iterator[None]:
    """Torch's intra-op thread count set to ``n`` inside the block, restored after."""
    import torch

    previous = torch.get_num_threads()
    if n != previous:
        torch.set_num_threads(n)
    try:
        yield
    finally:
        if torch.get_num_threads() != previous:
            torch.set_num_threads(previous)
