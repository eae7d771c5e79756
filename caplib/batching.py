"""Fixed-shape tiles: the one way every model in caplib groups its inputs, so that no score depends on batching.

A transformer's output for one input depends, in the last float digits, on the shape of the tensor it was computed
in: the padded length changes the order of the reductions in attention, and the number of rows changes which
matrix-multiplication kernel runs (measured on this project's CPU: up to 1.1e-6 on NLI probabilities between batch
sizes 1/7/16/64, and 1.8e-7 even between batches of equal-length pairs that need no padding). It does *not*
depend on the other rows' contents or on a row's position when the shape is fixed (measured: 0 difference over
373 repeats with random companions). So caplib never runs a batch whose shape depends on its companions:

* each input's padded length is its own token length rounded up to a multiple of ``granularity`` (at most
  ``max_length``): a function of the input alone;
* inputs of the same padded length are cut into tiles of exactly ``rows`` rows; a last, shorter tile is topped up
  with copies of its first input, whose outputs are discarded.

The number of threads that compute one product matters too (measured: BERTScore class means moved by 3e-10 between
one and two torch threads), so on CPU :func:`map_tiles` runs every tile on exactly one torch thread, several tiles
at a time (``cpu_workers``).

Every input is therefore computed in a tensor of shape ``(rows, its own padded length)`` by one thread, whatever
else is scored with it, in whatever order, by however many workers, with whatever the cache already held: its score
is a function of the input and the settings alone, bit for bit on a given machine and library stack. The cost against
length-sorted batches padded to their longest member is ~10% on CPU (``benchmarks/README.md``).

Example:
    >>> [(tile.members, tile.length) for tile in fixed_shape_tiles([3, 17, 5, 12], rows=2, granularity=8)]
    [([1], 24), ([3], 16), ([0, 2], 8)]
    >>> fixed_shape_tiles([3], rows=4, granularity=8)[0].filled(4)
    [0, 0, 0, 0]
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import TypeVar

__all__ = ["MAX_AUTO_CPU_WORKERS", "TILE_GRANULARITY", "TILE_ROWS", "Tile", "TileOutOfMemory", "fixed_shape_tiles",
           "map_tiles", "one_torch_thread", "out_of_memory", "tile_workers"]

R = TypeVar("R")

#: Rows of every forward pass unless a profile says otherwise: the paper's batch size (App. C.2).
TILE_ROWS = 16
#: Padded lengths are multiples of this many tokens.
TILE_GRANULARITY = 8
#: Upper bound of the default CPU workers: each holds one tile's activations (up to ~1-2 GB for 16 pairs of 512
#: tokens through a large DeBERTa), so many-core machines do not get one worker per core unless asked.
MAX_AUTO_CPU_WORKERS = 8


class TileOutOfMemory(MemoryError):
    """A tile does not fit in the device's memory (caplib does not split it: that would change its shape)."""


@dataclass(frozen=True)
class Tile:
    """Indices of up to ``rows`` inputs that share one padded ``length``."""

    members: list[int]
    length: int

    def filled(self, rows: int) -> list[int]:
        """The members, topped up to ``rows`` with copies of the first (their outputs are to be discarded)."""
        return self.members + [self.members[0]] * (rows - len(self.members))


def fixed_shape_tiles(lengths: Sequence[int], rows: int = TILE_ROWS, granularity: int = TILE_GRANULARITY,
                      max_length: int | None = None) -> list[Tile]:
    """Tiles of the inputs whose token counts are ``lengths``: longest padded length first (a tile too large for
    the device fails at once, not at the end of a long run), inputs in their given order within a length."""
    if rows < 1 or granularity < 1:
        raise ValueError(f"rows and granularity must be positive integers, got {rows} and {granularity}")
    by_length: dict[int, list[int]] = {}
    for index, length in enumerate(lengths):
        padded = granularity * math.ceil(max(length, 1) / granularity)
        by_length.setdefault(padded if max_length is None else min(padded, max_length), []).append(index)
    return [Tile(members[start : start + rows], length)
            for length, members in sorted(by_length.items(), reverse=True)
            for start in range(0, len(members), rows)]


def out_of_memory(error: BaseException, what: str, rows: int, length: int, device: str) -> TileOutOfMemory:
    """The error to raise when a tile of ``rows`` x ``length`` tokens ran out of memory on ``device``."""
    return TileOutOfMemory(f"{what}: a tile of {rows} inputs x {length} tokens does not fit in the memory of "
                           f"{device} ({str(error).splitlines()[0][:160]}). caplib runs every input in a fixed "
                           f"shape so that scores do not depend on batching, and does not split a tile; free "
                           f"memory on the device, use a smaller rows setting in the profile (nli.batch_size; this "
                           f"changes the signature), or run on --device cpu")


def tile_workers(n_tiles: int, device: str, cpu_workers: int | None = None) -> int:
    """How many tiles :func:`map_tiles` runs at a time: one off CPU; on CPU ``cpu_workers``, by default one per
    torch thread (at most ``MAX_AUTO_CPU_WORKERS``), never more than there are tiles.

    Example:
        >>> tile_workers(10, "cuda"), tile_workers(10, "cpu", 3), tile_workers(2, "cpu", 3)
        (1, 3, 2)
    """
    import torch

    if device != "cpu":
        return 1
    workers = cpu_workers if cpu_workers is not None else min(torch.get_num_threads(), MAX_AUTO_CPU_WORKERS)
    return max(1, min(workers, n_tiles))


def map_tiles(function: Callable[[int], R], n_tiles: int, device: str, cpu_workers: int | None = None) -> Iterator[R]:
    """``function(i)`` for every tile index ``i``, yielded in order. On CPU each call runs on one torch thread,
    :func:`tile_workers` calls at a time (so a result never depends on the thread count); torch's thread count is
    restored when the iteration ends.

    Example:
        >>> list(map_tiles(lambda i: i * i, 4, "cpu", cpu_workers=2))
        [0, 1, 4, 9]
    """
    workers = tile_workers(n_tiles, device, cpu_workers)
    with one_torch_thread(device == "cpu"), ThreadPoolExecutor(workers) as pool:
        yield from pool.map(function, range(n_tiles))  # in submission order, however threads interleave


@contextlib.contextmanager
def one_torch_thread(active: bool = True) -> Iterator[None]:
    """Torch's intra-op thread count set to 1 inside the block (when ``active``), restored after: for CPU work
    whose numbers must not depend on the thread count.

    Example:
        >>> import torch
        >>> with one_torch_thread():
        ...     torch.get_num_threads()
        1
    """
    import torch

    previous = torch.get_num_threads()
    if active and previous != 1:
        torch.set_num_threads(1)
    try:
        yield
    finally:
        if torch.get_num_threads() != previous:
            torch.set_num_threads(previous)
