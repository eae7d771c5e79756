"""Length-sorted batching with out-of-memory halving: the one batching helper of every model caplib runs.

Inputs are sorted by token length, longest first (so a batch too large for the device fails at once, not at the
end of a long run), and cut into batches of similar length, which keeps padding small (bert_score does the same).
Ties keep a stable order given by the caller, so batches and hence results do not depend on input order. On a
CUDA out-of-memory error a batch is run again in two halves, recursively.

Example:
    >>> length_sorted_batches([3, 9, 5, 9], batch_size=2)
    [[1, 3], [2, 0]]
    >>> length_sorted_batches([3, 9, 5, 9], batch_size=2, tiebreak=["a", "z", "b", "c"])
    [[3, 1], [2, 0]]
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, TypeVar

__all__ = ["length_sorted_batches", "run_halving_on_oom"]

R = TypeVar("R")


def length_sorted_batches(lengths: Sequence[int], batch_size: int,
                          tiebreak: Sequence[Any] | None = None) -> list[list[int]]:
    """Indices of the inputs in batches of at most ``batch_size``, longest first; ties by ``tiebreak``, else position."""
    if batch_size < 1:
        raise ValueError(f"batch_size must be a positive integer, got {batch_size}")
    keys = range(len(lengths)) if tiebreak is None else tiebreak
    order = sorted(range(len(lengths)), key=lambda i: (-lengths[i], keys[i], i))
    return [order[start : start + batch_size] for start in range(0, len(order), batch_size)]


def run_halving_on_oom(run: Callable[[list[int]], Sequence[R]], batch: list[int]) -> list[R]:
    """``run(batch)`` as a list; on ``torch.OutOfMemoryError`` the two halves of ``batch`` separately (recursively).

    Example:
        >>> run_halving_on_oom(lambda batch: [i * 10 for i in batch], [1, 2, 3])
        [10, 20, 30]
    """
    import torch

    try:
        return list(run(batch))
    except torch.OutOfMemoryError:
        if len(batch) == 1:
            raise
        if torch.cuda.is_available():
            torch.cuda.empty_cache()
        half = len(batch) // 2
        return run_halving_on_oom(run, batch[:half]) + run_halving_on_oom(run, batch[half:])
