"""caplib.runtime, caplib.batching and caplib.cache.cached_values: the shared plumbing of every scorer."""

from __future__ import annotations

import random

import pytest

from caplib.batching import fixed_shape_tiles
from caplib.cache import ContentCache, cached_values
from caplib.runtime import Runtime


def test_runtime_validates_and_copies():
    runtime = Runtime(cpu_workers=2)
    assert runtime.replace(device="cpu") == Runtime(device="cpu", cpu_workers=2) and runtime.device is None
    for bad in (0, -1, True, 2.5):
        with pytest.raises(ValueError, match="positive integer"):
            Runtime(cpu_workers=bad)
    assert Runtime(cache_dir="~/x").cache_path.name == "x" and Runtime().cache_path is None


def test_a_batch_size_given_at_run_time_is_ignored_with_a_warning():
    with pytest.warns(FutureWarning, match="batch_size is ignored"):
        Runtime(batch_size=4)


def test_tiles_pad_each_input_by_its_own_length_and_keep_every_input_once():
    lengths = [5, 1, 5, 3, 9, 3, 17, 16, 8]
    tiles = fixed_shape_tiles(lengths, rows=2, granularity=8)
    assert [(tile.members, tile.length) for tile in tiles] == [([6], 24), ([4, 7], 16), ([0, 1], 8), ([2, 3], 8),
                                                               ([5, 8], 8)]
    assert sorted(i for tile in tiles for i in tile.members) == list(range(len(lengths)))
    # an input's padded length depends on its own length only: not on the others, nor on their order
    for trial in range(20):
        order = random.Random(trial).sample(range(len(lengths)), k=random.Random(trial).randint(1, len(lengths)))
        padded = {order[i]: tile.length for tile in fixed_shape_tiles([lengths[j] for j in order], 2, 8)
                  for i in tile.members}
        assert padded == {j: 8 * -(-max(lengths[j], 1) // 8) for j in order}
    assert fixed_shape_tiles([700, 3], rows=4, granularity=8, max_length=512)[0].length == 512
    assert [tile.filled(3) for tile in fixed_shape_tiles([4, 4, 4, 4], rows=3)] == [[0, 1, 2], [3, 3, 3]]
    with pytest.raises(ValueError):
        fixed_shape_tiles(lengths, 0)


def test_cached_values_computes_each_distinct_item_once(tmp_path):
    cache = ContentCache("test", {"model": "m"}, tmp_path)
    calls = []

    def compute(todo):
        calls.append(list(todo))
        return [len("".join(item)) for item in todo]

    items = [("a", "bc"), ("a", "bc"), ("ab", "c"), ("x", "")]
    values, stats = cached_values(cache, items, compute)
    assert values == [3, 3, 3, 1] and calls == [[("a", "bc"), ("ab", "c"), ("x", "")]]
    assert (stats.items, stats.unique, stats.cached, stats.computed) == (4, 3, 0, 3)
    # ("a", "bc") and ("ab", "c") join to the same text but are different keys
    values, stats = cached_values(cache, [("ab", "c"), ("y", "z")], compute)
    assert values == [3, 2] and calls[-1] == [("y", "z")] and stats.cached == 1
    assert cached_values(None, ["q"], lambda todo: ["!"] * len(todo))[0] == ["!"]
    with pytest.raises(RuntimeError, match="computed 0 values for 1 items"):
        cached_values(None, ["q"], lambda todo: [])
