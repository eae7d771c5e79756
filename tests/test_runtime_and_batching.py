"""caplib.runtime, caplib.batching and caplib.cache.cached_values: the shared plumbing of every scorer."""

from __future__ import annotations

import pytest

from caplib.batching import length_sorted_batches, run_halving_on_oom
from caplib.cache import ContentCache, cached_values
from caplib.runtime import Runtime


def test_runtime_validates_and_copies():
    runtime = Runtime(batch_size=4)
    assert runtime.replace(device="cpu") == Runtime(device="cpu", batch_size=4) and runtime.device is None
    for bad in (0, -1, True, 2.5):
        with pytest.raises(ValueError, match="positive integer"):
            Runtime(cpu_workers=bad)
    assert Runtime(cache_dir="~/x").cache_path.name == "x" and Runtime().cache_path is None


def test_batches_are_longest_first_and_stable():
    lengths = [5, 1, 5, 3, 9, 3]
    batches = length_sorted_batches(lengths, 2)
    assert batches == [[4, 0], [2, 3], [5, 1]]
    assert sorted(i for batch in batches for i in batch) == list(range(6))
    # the order of the inputs does not change which inputs share a batch
    texts = ["e", "a", "c", "b", "f", "d"]
    permuted = [3, 0, 5, 1, 4, 2]
    grouped = {frozenset(texts[i] for i in b) for b in length_sorted_batches(lengths, 2, tiebreak=texts)}
    p_texts, p_lengths = [texts[i] for i in permuted], [lengths[i] for i in permuted]
    again = {frozenset(p_texts[i] for i in b) for b in length_sorted_batches(p_lengths, 2, tiebreak=p_texts)}
    assert grouped == again
    with pytest.raises(ValueError):
        length_sorted_batches(lengths, 0)


def test_out_of_memory_splits_in_halves_until_it_fits():
    torch = pytest.importorskip("torch")
    sizes = []

    def run(batch):
        sizes.append(len(batch))
        if len(batch) > 2:
            raise torch.OutOfMemoryError("simulated")
        return [i * i for i in batch]

    assert run_halving_on_oom(run, list(range(8))) == [i * i for i in range(8)]
    assert sizes == [8, 4, 2, 2, 4, 2, 2]

    def never(batch):
        raise torch.OutOfMemoryError("simulated")

    with pytest.raises(torch.OutOfMemoryError):
        run_halving_on_oom(never, [1, 2])


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
