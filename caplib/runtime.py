"""How models run: the settings that decide speed and placement but never a score.

One :class:`Runtime` value travels from the command line or a chapter through ``caplib.scoring.score_frame`` to
every scorer (``CAPScorer``, ``NLIScorer``, the statement generator, BERTScore, COMET), instead of eight loose
keyword arguments. Settings that change a number (model, revision, alpha, lam, max length) belong to the profile
and to each score's signature, never here. The exceptions, ``dtype`` and ``nli_backend``, change probabilities by
float rounding only and are therefore recorded in the NLI signature and cache key as well.

Example:
    >>> runtime = Runtime(device="cpu", cpu_workers=2)
    >>> runtime.replace(progress=False).progress, runtime.cpu_workers
    (False, 2)
"""

from __future__ import annotations

import dataclasses
import os
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from caplib.cache import ContentCache

__all__ = ["BATCH_SIZE_IGNORED", "NLI_BACKENDS", "Runtime"]

#: How the NLI model runs: torch (exact, any device), or ONNX Runtime on the CPU (opt-in): float32, or its linear
#: layers' weights dynamically quantized to int8 (the fast CPU path).
NLI_BACKENDS = ("torch", "onnxruntime", "onnxruntime-int8")

#: Why a batch size given at run time changes nothing.
BATCH_SIZE_IGNORED = ("batch_size is ignored: caplib computes every input in a fixed tile so that no score depends "
                      "on batching (the NLI tile is the profile's nli.batch_size, recorded in the signature)")


@dataclass(frozen=True)
class Runtime:
    """Where and how models run (never what they compute).

    Attributes:
        device: ``"cpu"``, ``"cuda"``, ``"cuda:1"``...; None: CUDA when available.
        dtype: NLI precision, ``"auto"`` (float16 autocast on CUDA as in App. C.2, float32 on CPU), ``"float32"``,
            ``"float16"`` or ``"bfloat16"``; None: the profile's.
        batch_size: deprecated and ignored (a :class:`FutureWarning` says so): every model runs its inputs in fixed
            tiles (:mod:`caplib.batching`) so that no score depends on batching; the NLI tile is the profile's
            ``nli.batch_size``, a setting of the score recorded in its signature.
        nli_backend: ``"torch"`` (default, exact float32), ``"onnxruntime"`` (the same NLI checkpoint exported
            once to ONNX, run by ONNX Runtime on the CPU; probabilities within ~1e-5 of torch's) or
            ``"onnxruntime-int8"`` (that export with int8 weights: the fast CPU path, not bit-equal; fidelity in
            ``benchmarks/README.md``). Each has its own signature and cache key; ``pip install caplib[onnx]``.
        cpu_workers: tiles (:mod:`caplib.batching`) scored at a time on CPU, each on one torch thread; None:
            ``min(torch threads, 8)``. Changes speed, never a score.
        cache: keep model outputs on disk by content (:mod:`caplib.cache`).
        cache_dir: where; None: :func:`caplib.cache.default_cache_dir`.
        progress: show progress bars on long work.
        allow_unpinned: accept a Hub model without a pinned revision and load ``main`` (the signature records
            the commit used).
    """

    device: str | None = None
    dtype: str | None = None
    batch_size: int | None = None
    cpu_workers: int | None = None
    cache: bool = True
    cache_dir: str | os.PathLike[str] | None = None
    progress: bool = True
    allow_unpinned: bool = False
    nli_backend: str = "torch"

    def __post_init__(self) -> None:
        if self.batch_size is not None:
            warnings.warn(BATCH_SIZE_IGNORED, FutureWarning, stacklevel=3)
        for name in ("batch_size", "cpu_workers"):
            value = getattr(self, name)
            if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 1):
                raise ValueError(f"{name} must be a positive integer or None, got {value!r}")
        if self.nli_backend not in NLI_BACKENDS:
            raise ValueError(f"nli_backend must be one of {', '.join(NLI_BACKENDS)}, got {self.nli_backend!r}")

    def replace(self, **changes: Any) -> Runtime:
        """A copy with some settings changed."""
        return dataclasses.replace(self, **changes)

    @property
    def cache_path(self) -> Path | None:
        """``cache_dir`` as a path (None: the default cache directory)."""
        return None if self.cache_dir is None else Path(self.cache_dir).expanduser()

    def content_cache(self, namespace: str, settings: dict[str, Any]) -> ContentCache | None:
        """The disk cache of ``namespace`` under ``settings`` (:class:`caplib.cache.ContentCache`), None when off.

        Example:
            >>> Runtime(cache=False).content_cache("nli", {}) is None
            True
        """
        return ContentCache(namespace, settings, self.cache_path) if self.cache else None
