"""Seq2seq QA -> statement reformulation (Sec. 4; the paper: mT5-small fine-tuned on CAP-Statements, beam 4,
at most 512 output tokens, App. C.2)."""

from __future__ import annotations

import logging
import os
from collections.abc import Sequence
from typing import Any

from caplib.batching import TILE_GRANULARITY, TILE_ROWS, Tile, fixed_shape_tiles, map_tiles, out_of_memory
from caplib.cache import cached_values
from caplib.checkpoints import pick_device, resolve_checkpoint
from caplib.runtime import Runtime
from caplib.signature import Signature
from caplib.statements.inputs import INPUT_TEMPLATE, check_pairs, format_input

logger = logging.getLogger(__name__)


#: Name of the JSON manifest that :func:`finetune` writes next to the best checkpoint.
MANIFEST_NAME = "caplib_statements.json"


def generate_batched(model: Any, tokenizer: Any, inputs: list[str], *, num_beams: int, max_length: int,
                     device: str, progress: bool, max_input_length: int | None = None,
                     max_new_tokens: int | None = None) -> tuple[list[str], int]:
    """Beam-search outputs of unique ``inputs`` (in their order) and the number of inputs cut at ``max_input_length``
    tokens (default ``max_length``). Outputs stop at ``max_length`` decoder tokens, or after ``max_new_tokens`` new
    ones when that is given (the authors' generation: 128-token inputs, up to 512 new tokens).

    Every input is encoded in a tile of ``TILE_ROWS`` rows padded to its own length rounded up
    (:mod:`caplib.batching`), so each decoding step runs in the same shape whatever else is generated with it:
    an output depends on its input and the settings alone, never on batching, order or the cache.
    """
    import torch
    from tqdm import tqdm

    longest = max_input_length or max_length
    lengths = [len(ids) for ids in tokenizer(inputs, verbose=False)["input_ids"]]
    outputs: list[str] = [""] * len(inputs)

    def run(tile: Tile) -> list[str]:
        encoded = tokenizer([inputs[i] for i in tile.filled(TILE_ROWS)], padding="max_length", truncation=True,
                            max_length=tile.length, return_tensors="pt").to(device)
        try:
            with torch.inference_mode():
                cap = {"max_length": None, "max_new_tokens": max_new_tokens} if max_new_tokens else \
                    {"max_length": max_length, "max_new_tokens": None}
                generated = model.generate(**encoded, num_beams=num_beams, **cap, do_sample=False,
                                           num_return_sequences=1)
        except torch.OutOfMemoryError as error:
            raise out_of_memory(error, "statements", TILE_ROWS, tile.length, device) from None
        texts = tokenizer.batch_decode(generated[: len(tile.members)], skip_special_tokens=True)
        return [" ".join(text.split()) for text in texts]

    tiles = fixed_shape_tiles([min(length, longest) for length in lengths], max_length=longest)
    with tqdm(total=len(inputs), desc="statements", unit="pair", delay=1.0, disable=not progress) as bar:
        # one tile at a time (on CPU on one torch thread: map_tiles), as generate() keeps state between steps
        for tile, texts in zip(tiles, map_tiles(lambda position: run(tiles[position]), len(tiles),
                                                device.split(":")[0], cpu_workers=1)):
            for index, text in zip(tile.members, texts):
                outputs[index] = text
            bar.update(len(tile.members))
    return outputs, sum(length > longest for length in lengths)


class Seq2SeqStatementGenerator:
    """QA -> statement with a Hugging Face seq2seq checkpoint (Sec. 4; decoding as in App. C.2).

    Args:
        model: Hub id (with pinned ``revision``) or a local ``save_pretrained`` directory, e.g. one
            written by :func:`finetune`. Files are resolved first
            (:func:`caplib.checkpoints.resolve_checkpoint`, never a download: a checkpoint not on this machine
            raises :class:`caplib.checkpoints.CheckpointNotAvailable` saying how to fetch it) and loaded on the
            first input missing from the cache.
        revision: Hub commit hash or branch; required for Hub ids unless ``runtime.allow_unpinned``.
        num_beams: beam width (paper: 4).
        max_length: longest input and output in tokens (paper: 512 output tokens). Longer inputs are
            truncated (counted in ``last_stats["truncated"]``, with a warning).
        max_input_length, max_new_tokens: when given, inputs are cut at ``max_input_length`` tokens and outputs at
            ``max_new_tokens`` new tokens instead (the authors' generation of the released statements: 128, 512).
        runtime: device (default CUDA when available), the disk cache of statements (namespace ``"statements"``, keyed by checkpoint content, revision, decoding
            settings and input) and progress bars (:class:`caplib.runtime.Runtime`).

    Example:
        >>> gen = Seq2SeqStatementGenerator("models/statements")  # doctest: +SKIP
        >>> gen.generate(["Who wrote Hamlet?"], ["Shakespeare"])  # doctest: +SKIP
        ['Shakespeare wrote Hamlet.']
    """

    def __init__(
        self,
        model: str | os.PathLike[str],
        revision: str | None = None,
        *,
        num_beams: int = 4,
        max_length: int = 512,
        runtime: Runtime | None = None,
        max_input_length: int | None = None,
        max_new_tokens: int | None = None,
    ):
        runtime = runtime if runtime is not None else Runtime()
        if num_beams < 1 or max_length < 2 or (max_input_length or 2) < 2 or (max_new_tokens or 1) < 1:
            raise ValueError(f"num_beams must be >= 1, max_length and max_input_length >= 2, max_new_tokens >= 1; got "
                             f"num_beams={num_beams}, max_length={max_length}, max_input_length={max_input_length}, "
                             f"max_new_tokens={max_new_tokens}")
        self.max_input_length, self.max_new_tokens = max_input_length, max_new_tokens
        self.checkpoint = resolve_checkpoint(model, revision, allow_unpinned=runtime.allow_unpinned)
        self.device = pick_device(runtime.device)
        self.num_beams, self.max_length, self.progress = num_beams, max_length, runtime.progress
        self.last_stats: dict[str, int] = {}
        self._cache = runtime.content_cache("statements", self.settings())
        self._model: Any = None
        self._tokenizer: Any = None

    def settings(self) -> dict[str, Any]:
        """Everything that changes the statements (the cache key and the signature)."""
        return {
            "model": self.checkpoint.model,
            "revision": self.checkpoint.revision,
            "fingerprint": self.checkpoint.fingerprint,
            "input_template": INPUT_TEMPLATE,
            "num_beams": self.num_beams,
            "max_length": self.max_length,
            **({"max_input_length": self.max_input_length} if self.max_input_length else {}),
            **({"max_new_tokens": self.max_new_tokens} if self.max_new_tokens else {}),
            "do_sample": False,
            "device_type": self.device.split(":")[0],
            "tile": [TILE_ROWS, TILE_GRANULARITY],
        }

    def signature(self) -> Signature:
        """e.g. ``statements:google/mt5-small@<commit>|rev:main|beams:4|max_length:512``."""
        revision = self.checkpoint.revision if self.checkpoint.revision is not None else "local"
        limits = ((("max_input", str(self.max_input_length)),) if self.max_input_length else ()) + \
            ((("max_new", str(self.max_new_tokens)),) if self.max_new_tokens else (("max_length", str(self.max_length)),))
        return Signature("statements", (("rev", revision), ("beams", str(self.num_beams)), *limits),
                         value=self.checkpoint.identity)

    def load(self) -> None:
        """Load tokenizer and model now (otherwise done on the first input not found in the cache)."""
        if self._model is not None:
            return
        from transformers import AutoModelForSeq2SeqLM, AutoTokenizer

        self._tokenizer = AutoTokenizer.from_pretrained(self.checkpoint.path, local_files_only=True)
        model = AutoModelForSeq2SeqLM.from_pretrained(self.checkpoint.path, local_files_only=True)
        self._model = model.eval().to(self.device)

    def generate(self, questions: Sequence[str], answers: Sequence[str]) -> list[str]:
        """One statement per (question, answer) pair; identical inputs are generated once.

        ``last_stats`` then holds counts of this call: ``pairs``, ``unique``, ``cached``, ``computed``,
        ``truncated``.
        """
        questions, answers = check_pairs(questions, answers)
        inputs = [format_input(q, a) for q, a in zip(questions, answers)]
        truncated = 0

        def compute(todo: list[str]) -> list[str]:
            nonlocal truncated
            self.load()
            outputs, truncated = generate_batched(
                self._model, self._tokenizer, todo, num_beams=self.num_beams,
                max_length=self.max_length, device=self.device, progress=self.progress,
                max_input_length=self.max_input_length, max_new_tokens=self.max_new_tokens)
            return outputs

        statements, stats = cached_values(self._cache, inputs, compute)
        if truncated:
            logger.warning("%d of %d new inputs exceed %d tokens and were truncated", truncated,
                           stats.computed, self.max_input_length or self.max_length)
        self.last_stats = {"pairs": stats.items, "unique": stats.unique, "cached": stats.cached,
                           "computed": stats.computed, "truncated": truncated}
        return statements
