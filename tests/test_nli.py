"""caplib.nli on tiny locally built DeBERTa-v2 checkpoints: label mapping, batching, truncation, offline behaviour."""

from __future__ import annotations

import os
import time
from pathlib import Path

import numpy as np
import pytest

os.environ["HF_HUB_OFFLINE"] = "1"
os.environ["TRANSFORMERS_OFFLINE"] = "1"

from caplib.checkpoints import BUILTIN_OFFLINE_NLI, CheckpointNotAvailable, resolve_checkpoint  # noqa: E402
from caplib.nli import LABEL_ORDER, LabelMappingError, NLIScorer, label_columns  # noqa: E402
from caplib.runtime import Runtime  # noqa: E402
from tests.tiny_models import build_nli_checkpoint, corpus, permute_labels, relabel  # noqa: E402

torch = pytest.importorskip("torch")


pytestmark = pytest.mark.usefixtures("one_torch_thread")


@pytest.fixture(scope="module")
def checkpoint(tmp_path_factory):
    """Tiny NLI model with the label order of cross-encoder/nli-deberta-v3-large: contradiction, entailment, neutral."""
    return build_nli_checkpoint(tmp_path_factory.mktemp("nli") / "model")


@pytest.fixture(scope="module")
def pairs():
    sentences = corpus()
    rng = np.random.default_rng(0)
    premises = [sentences[i] for i in rng.integers(0, len(sentences), 24)]
    hypotheses = [sentences[i] for i in rng.integers(0, len(sentences), 24)]
    return premises, hypotheses


def direct_probabilities(model_dir, premises, hypotheses):
    """Reference: one pair at a time, plain transformers, columns picked by label name."""
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(model_dir)
    model = AutoModelForSequenceClassification.from_pretrained(model_dir).eval()
    by_name = {name: int(index) for index, name in model.config.id2label.items()}
    rows = []
    with torch.no_grad():
        for premise, hypothesis in zip(premises, hypotheses):
            logits = model(**tokenizer(premise, hypothesis, return_tensors="pt")).logits[0]
            probs = logits.softmax(-1).numpy()
            rows.append([probs[by_name[label]] for label in LABEL_ORDER])
    return np.array(rows)


def test_label_columns_of_the_paper_checkpoint():
    # cross-encoder/nli-deberta-v3-large: {0: contradiction, 1: entailment, 2: neutral}
    assert label_columns({0: "contradiction", 1: "entailment", 2: "neutral"}) == [1, 2, 0]
    assert label_columns({"0": "ENTAILMENT", "1": "Neutral", "2": "CONTRADICTION"}) == [0, 1, 2]


@pytest.mark.parametrize(
    "id2label",
    [
        {0: "LABEL_0", 1: "LABEL_1", 2: "LABEL_2"},
        {0: "entailment", 1: "not_entailment"},
        {0: "entailment", 1: "entailment", 2: "contradiction"},
        {0: "entailment", 1: "neutral", 2: "contradiction", 3: "other"},
    ],
)
def test_unmappable_labels_raise_clearly(id2label):
    expected = r"id2label .* cannot be mapped to \['entailment', 'neutral', 'contradiction'\]"
    with pytest.raises(LabelMappingError, match=expected):
        label_columns(id2label, "some/model")


def test_scorer_matches_plain_transformers(checkpoint, pairs):
    premises, hypotheses = pairs
    scorer = NLIScorer(checkpoint, runtime=Runtime(cache=False, progress=False))
    probs = scorer.predict(premises, hypotheses)
    assert probs.shape == (24, 3)
    np.testing.assert_allclose(probs, direct_probabilities(checkpoint, premises, hypotheses), atol=1e-5)
    np.testing.assert_allclose(probs.sum(axis=1), 1.0, atol=1e-6)
    assert probs.std(axis=0).min() > 1e-3  # the random model is not constant: the comparisons above mean something


def test_permuted_label_order_gives_the_same_columns(checkpoint, pairs, tmp_path):
    premises, hypotheses = pairs
    # new output j = old output order[j]: (entailment, neutral, contradiction) instead of (contra, entail, neutral)
    permuted = permute_labels(checkpoint, tmp_path / "permuted", order=[1, 2, 0])
    from transformers import AutoConfig

    assert AutoConfig.from_pretrained(permuted).id2label == {0: "entailment", 1: "neutral", 2: "contradiction"}
    original = NLIScorer(checkpoint, runtime=Runtime(cache=False, progress=False)).predict(premises, hypotheses)
    reordered = NLIScorer(permuted, runtime=Runtime(cache=False, progress=False)).predict(premises, hypotheses)
    np.testing.assert_allclose(reordered, original, atol=1e-6)


def test_relabelled_checkpoint_changes_columns(checkpoint, pairs, tmp_path):
    # Same weights, different names: the columns must follow the names (nothing is hard-coded by index).
    premises, hypotheses = pairs
    renamed = relabel(checkpoint, tmp_path / "renamed", {0: "entailment", 1: "neutral", 2: "contradiction"})
    original = NLIScorer(checkpoint, runtime=Runtime(cache=False, progress=False)).predict(premises, hypotheses)
    swapped = NLIScorer(renamed, runtime=Runtime(cache=False, progress=False)).predict(premises, hypotheses)
    # original columns (E, N, C) are logits (1, 2, 0); renamed reads logits (0, 1, 2) as (E, N, C)
    np.testing.assert_allclose(swapped, original[:, [2, 0, 1]], atol=1e-6)


def test_unmappable_checkpoint_fails_at_construction(checkpoint, tmp_path):
    generic = relabel(checkpoint, tmp_path / "generic", {0: "LABEL_0", 1: "LABEL_1", 2: "LABEL_2"})
    with pytest.raises(LabelMappingError, match="LABEL_0"):
        NLIScorer(generic, runtime=Runtime(cache=False))


def _scorer(checkpoint, **runtime):
    return NLIScorer(checkpoint, runtime=Runtime(**{"cache": False, "progress": False, **runtime}))


def test_a_pairs_probabilities_do_not_depend_on_batching_order_workers_or_cache(checkpoint, pairs, tmp_path):
    """Bit for bit (issue 15, item 7): the pairs sharing a call, their order, the CPU workers, the cache state."""
    premises, hypotheses = pairs
    reference = _scorer(checkpoint).predict(premises, hypotheses)
    permutation = np.random.default_rng(1).permutation(len(premises))
    shuffled = _scorer(checkpoint).predict([premises[i] for i in permutation], [hypotheses[i] for i in permutation])
    np.testing.assert_array_equal(shuffled, reference[permutation])
    for size in (1, 7, 16, 64):  # a caller scoring its rows in chunks of 1, 7, 16, 64
        chunks = [_scorer(checkpoint).predict(premises[start : start + size], hypotheses[start : start + size])
                  for start in range(0, len(premises), size)]
        np.testing.assert_array_equal(np.vstack(chunks), reference)
    previous = torch.get_num_threads()
    try:
        for threads, workers in ((1, 1), (1, 3), (2, None), (2, 1), (4, 2)):  # torch threads, CPU workers
            torch.set_num_threads(threads)
            scored = _scorer(checkpoint, cpu_workers=workers).predict(premises, hypotheses)
            np.testing.assert_array_equal(scored, reference, err_msg=f"{threads} threads, {workers} workers")
    finally:
        torch.set_num_threads(previous)
    cached = Runtime(cache_dir=tmp_path, progress=False)
    NLIScorer(checkpoint, runtime=cached).predict(premises[::2], hypotheses[::2])  # half the pairs cached
    half = NLIScorer(checkpoint, runtime=cached)
    np.testing.assert_array_equal(half.predict(premises, hypotheses), reference)
    assert (half.last_stats["cached"], half.last_stats["computed"]) == (12, 12)
    warm = NLIScorer(checkpoint, runtime=cached)
    np.testing.assert_array_equal(warm.predict(premises, hypotheses), reference)
    assert warm.last_stats["computed"] == 0


def test_every_forward_pass_is_a_tile_of_batch_size_rows_padded_by_length(checkpoint, pairs, monkeypatch):
    premises, hypotheses = pairs
    scorer = NLIScorer(checkpoint, batch_size=4, runtime=Runtime(cache=False, progress=False))
    scorer.load()
    model, shapes = scorer._model, []
    monkeypatch.setattr(scorer, "_model", lambda **encoded: shapes.append(tuple(encoded["input_ids"].shape))
                        or model(**encoded))
    probs = scorer.predict(premises[:5], hypotheses[:5])
    lengths = [len(scorer._tokenizer(p, h)["input_ids"]) for p, h in zip(premises[:5], hypotheses[:5])]
    buckets = [8 * -(-n // 8) for n in lengths]  # each pair's own length rounded up to 8 tokens
    expected = sorted((4, bucket) for bucket in set(buckets) for _ in range(-(-buckets.count(bucket) // 4)))
    assert sorted(shapes) == expected
    np.testing.assert_allclose(probs, direct_probabilities(checkpoint, premises[:5], hypotheses[:5]), atol=1e-5)
    assert "batch:4" in str(scorer.signature()) and scorer.settings()["tile"] == [4, 8]
    with pytest.raises(ValueError, match="batch_size must be a positive integer"):
        NLIScorer(checkpoint, batch_size=0)


def test_concurrent_cpu_tiles_give_the_same_probabilities(checkpoint, pairs):
    premises, hypotheses = pairs
    reference = NLIScorer(checkpoint, batch_size=4, runtime=Runtime(cpu_workers=1, cache=False, progress=False))
    expected = reference.predict(premises, hypotheses)
    assert reference.last_stats["cpu_workers"] == 1
    scorer = NLIScorer(checkpoint, batch_size=4, runtime=Runtime(cpu_workers=3, cache=False, progress=False))
    for _ in range(2):  # same numbers however the threads interleave
        np.testing.assert_array_equal(scorer.predict(premises, hypotheses), expected)
    assert scorer.last_stats["cpu_workers"] == 3
    few = NLIScorer(checkpoint, runtime=Runtime(cpu_workers=8, cache=False, progress=False))
    few.predict(premises[:2], hypotheses[:2])
    assert few.last_stats["cpu_workers"] <= 2  # never more workers than tiles


def test_every_cpu_tile_runs_on_one_torch_thread_and_the_count_is_restored(checkpoint, pairs, monkeypatch):
    premises, hypotheses = pairs
    scorer = NLIScorer(checkpoint, batch_size=6, runtime=Runtime(cpu_workers=2, cache=False, progress=False))
    seen = []
    forward = scorer._forward
    monkeypatch.setattr(scorer, "_forward", lambda features: seen.append(torch.get_num_threads()) or forward(features))
    previous = torch.get_num_threads()
    torch.set_num_threads(4)
    try:
        scorer.predict(premises, hypotheses)
        assert torch.get_num_threads() == 4  # restored
    finally:
        torch.set_num_threads(previous)
    assert len(seen) > 1 and set(seen) == {1}  # one thread per tile: numbers never depend on the thread count
    with pytest.raises(ValueError, match="cpu_workers must be a positive integer"):
        NLIScorer(checkpoint, runtime=Runtime(cpu_workers=0))


def test_duplicates_are_scored_once(checkpoint, pairs):
    premises, hypotheses = pairs
    scorer = NLIScorer(checkpoint, runtime=Runtime(cache=False, progress=False))
    probs = scorer.predict(premises[:5] * 3, hypotheses[:5] * 3)
    assert scorer.last_stats == {"pairs": 15, "unique": 5, "cached": 0, "computed": 5, "truncated": 0,
                                 "chunked": 0, "cpu_workers": 1}  # one torch thread in this module: one worker
    np.testing.assert_array_equal(probs[:5], probs[5:10])
    np.testing.assert_array_equal(probs[:5], probs[10:])


def test_long_input_is_truncated_and_counted(checkpoint):
    scorer = NLIScorer(checkpoint, runtime=Runtime(cache=False, progress=False))
    scorer.load()
    long_premise = " ".join(corpus() * 3)  # thousands of tokens
    assert len(scorer._tokenizer(long_premise, verbose=False)["input_ids"]) > 2000
    probs = scorer.predict([long_premise, "Water boils at 100 degrees."], ["Ice melts when heated.", "Ice melts."])
    assert scorer.last_stats["truncated"] == 1
    assert np.isfinite(probs).all()
    np.testing.assert_allclose(probs.sum(axis=1), 1.0, atol=1e-6)
    # the truncated pair is exactly what the model sees after longest_first truncation to 512 tokens
    encoded = scorer._tokenizer(long_premise, "Ice melts when heated.", truncation="longest_first", max_length=512)
    assert len(encoded["input_ids"]) == 512


def test_cache_makes_the_second_run_free(checkpoint, pairs, tmp_path):
    premises, hypotheses = pairs
    import shutil

    first = NLIScorer(checkpoint, runtime=Runtime(cache=True, cache_dir=tmp_path / "cache", progress=False))
    expected = first.predict(premises, hypotheses)
    copy = shutil.copytree(checkpoint, tmp_path / "copy")  # same content elsewhere: same cache entries
    second = NLIScorer(copy, runtime=Runtime(cache=True, cache_dir=tmp_path / "cache", progress=False))
    again = second.predict(premises, hypotheses)
    np.testing.assert_array_equal(again, expected)
    assert second.last_stats["cached"] == second.last_stats["unique"] and second.last_stats["computed"] == 0
    assert second._model is None  # nothing was loaded
    third = NLIScorer(checkpoint, max_length=256, runtime=Runtime(cache=True, cache_dir=tmp_path / "cache", progress=False))
    third.predict(premises, hypotheses)
    assert third.last_stats["cached"] == 0  # other settings, other keys


def test_cache_recomputes_a_corrupted_entry(checkpoint, pairs, tmp_path):
    import sqlite3

    premises, hypotheses = pairs
    scorer = NLIScorer(checkpoint, runtime=Runtime(cache=True, cache_dir=tmp_path, progress=False))
    expected = scorer.predict(premises[:4], hypotheses[:4])
    with sqlite3.connect(tmp_path / "nli.sqlite3") as connection:
        connection.execute("UPDATE entries SET value = '[0.0, 0.0, 1.0, 0.0]' WHERE rowid = 1")
    connection.close()
    rerun = NLIScorer(checkpoint, runtime=Runtime(cache=True, cache_dir=tmp_path, progress=False))
    np.testing.assert_allclose(rerun.predict(premises[:4], hypotheses[:4]), expected, atol=1e-6)
    assert rerun.last_stats["computed"] == 1 and rerun.last_stats["cached"] == 3


def test_uncached_hub_id_offline_fails_fast_and_clearly():
    start = time.perf_counter()
    with pytest.raises(CheckpointNotAvailable) as raised:
        NLIScorer("caplib-tests/no-such-nli-model", revision="main", runtime=Runtime(cache=False))
    assert time.perf_counter() - start < 10
    message = str(raised.value)
    assert "caplib-tests/no-such-nli-model" in message
    assert "python -m caplib.checkpoints fetch caplib-tests/no-such-nli-model --revision main" in message
    assert raised.value.__cause__ is None and raised.value.__suppress_context__  # one error, not a chain


def test_unpinned_hub_id_is_refused():
    """NLIScorer resolves through caplib.checkpoints with the runtime's allow_unpinned (tested there in full)."""
    with pytest.raises(ValueError, match="no pinned revision"):
        NLIScorer("cross-encoder/nli-deberta-v3-large", runtime=Runtime(cache=False))
    with pytest.raises(CheckpointNotAvailable, match="revision main"):
        NLIScorer("caplib-tests/no-such-nli-model", runtime=Runtime(cache=False, allow_unpinned=True))


def test_missing_local_directory(tmp_path):
    with pytest.raises(CheckpointNotAvailable, match="does not exist"):
        NLIScorer(str(tmp_path / "absent" / "model"), runtime=Runtime(cache=False))
    (tmp_path / "empty").mkdir()
    with pytest.raises(CheckpointNotAvailable, match="no config.json"):
        NLIScorer(tmp_path / "empty", runtime=Runtime(cache=False))


def test_builtin_offline_backbone(checkpoint, tmp_path, monkeypatch):
    monkeypatch.setenv("CAPLIB_OFFLINE_NLI_DIR", str(tmp_path / "not-built"))  # caplib.offline_nli.artifact_dir()
    with pytest.raises(CheckpointNotAvailable, match=r"no offline NLI backbone in .*: \$CAPLIB_OFFLINE_NLI_DIR names it; build one there"):
        resolve_checkpoint(BUILTIN_OFFLINE_NLI)
    monkeypatch.setenv("CAPLIB_OFFLINE_NLI_DIR", str(checkpoint))
    resolved = resolve_checkpoint(BUILTIN_OFFLINE_NLI)
    assert resolved.path == checkpoint.resolve() and resolved.identity.startswith("builtin:offline-nli#sha256:")


def test_settings_and_signature(checkpoint):
    scorer = NLIScorer(checkpoint, runtime=Runtime(cache=False, device="cpu"))
    assert scorer.dtype == "float32" and scorer.columns == [1, 2, 0]
    signature = str(scorer.signature())
    assert "#sha256:" in signature and "dtype:float32" in signature and "max_length:512" in signature
    assert "truncation:longest_first" in signature
    with pytest.raises(ValueError, match="float16 autocast needs a CUDA device"):
        NLIScorer(checkpoint, runtime=Runtime(cache=False, device="cpu", dtype="float16"))
    assert NLIScorer(checkpoint, runtime=Runtime(cache=False, device="cpu", dtype="bf16")).dtype == "bfloat16"


def test_a_tile_out_of_memory_is_a_clear_error_not_a_smaller_shape(checkpoint, pairs, monkeypatch):
    # CUDA's answer to a tile that does not fit, simulated: splitting it would change the numbers, so caplib says so
    from caplib.batching import TileOutOfMemory

    premises, hypotheses = pairs
    scorer = NLIScorer(checkpoint, runtime=Runtime(cache=False, progress=False))
    scorer.load()

    def out_of_memory(**encoded):
        raise torch.OutOfMemoryError("CUDA out of memory (simulated)")

    monkeypatch.setattr(scorer, "_model", out_of_memory)
    with pytest.raises(TileOutOfMemory, match=r"a tile of 16 inputs x \d+ tokens does not fit.*simulated"):
        scorer.predict(premises, hypotheses)


def test_truncation_counts_exactly_the_pairs_over_max_length(checkpoint):
    """A pair of exactly max_length tokens is not truncated; one token more is (kills a >= / > mutant)."""
    premise, hypothesis = "Water boils at one hundred degrees at sea level.", "Ice melts."
    probe = NLIScorer(checkpoint, runtime=Runtime(cache=False, progress=False))
    probe.load()
    length = len(probe._tokenizer(premise, hypothesis, verbose=False)["input_ids"])
    for max_length, expected in ((length, 0), (length - 1, 1), (length + 1, 0)):
        scorer = NLIScorer(checkpoint, max_length=max_length, runtime=Runtime(cache=False, progress=False))
        scorer.predict([premise], [hypothesis])
        assert scorer.last_stats["truncated"] == expected, (max_length, length)


def test_two_checkpoints_sharing_a_cache_directory_keep_their_own_probabilities(checkpoint, pairs, tmp_path):
    """The cache key holds the checkpoint's fingerprint: another model never reads this one's entries."""
    premises, hypotheses = pairs
    other = build_nli_checkpoint(tmp_path / "other", seed=1)
    shared = Runtime(cache=True, cache_dir=tmp_path / "cache", progress=False)
    NLIScorer(checkpoint, runtime=shared).predict(premises, hypotheses)  # fills the cache with the first model
    cached = NLIScorer(other, runtime=shared).predict(premises, hypotheses)
    fresh = NLIScorer(other, runtime=Runtime(cache=False, progress=False)).predict(premises, hypotheses)
    np.testing.assert_array_equal(cached, fresh)
    assert not np.allclose(fresh, NLIScorer(checkpoint, runtime=Runtime(cache=False, progress=False))
                           .predict(premises, hypotheses))


def test_the_onnxruntime_backend_gives_the_probabilities_of_the_model(checkpoint, pairs, tmp_path):
    """The opt-in fast CPU path: the same checkpoint exported once to ONNX and run by ONNX Runtime, against the
    one-pair-at-a-time transformers reference; its own signature and cache key; the export reused."""
    pytest.importorskip("onnxruntime", reason="ONNX Runtime is not installed (pip install 'caplib[onnx]')")
    premises, hypotheses = pairs
    runtime = Runtime(device="cpu", cache_dir=tmp_path, progress=False, nli_backend="onnxruntime")
    scorer = NLIScorer(checkpoint, runtime=runtime, batch_size=4)
    probabilities = scorer.predict(premises, hypotheses)
    assert np.abs(probabilities - direct_probabilities(checkpoint, premises, hypotheses)).max() < 1e-5
    exported = list((tmp_path / "onnx").glob("*.onnx"))
    assert len(exported) == 1 and scorer.last_stats["computed"] == len(set(zip(premises, hypotheses)))
    exact = NLIScorer(checkpoint, runtime=runtime.replace(nli_backend="torch"), batch_size=4)
    assert "|backend:onnxruntime" in str(scorer.signature()) and "backend" not in str(exact.signature())
    assert scorer.settings() != exact.settings()  # never mixed in the cache with torch's probabilities
    exact.predict(premises, hypotheses)
    assert exact.last_stats["computed"] == scorer.last_stats["computed"]  # nothing read from the ONNX entries
    modified = exported[0].stat().st_mtime_ns
    again = NLIScorer(checkpoint, runtime=runtime.replace(cache=False), batch_size=4)
    assert np.array_equal(again.predict(premises, hypotheses), probabilities)  # deterministic, same tiles
    assert exported[0].stat().st_mtime_ns == modified  # exported once per checkpoint
    with pytest.raises(ValueError, match="runs float32 on the CPU"):
        NLIScorer(checkpoint, runtime=runtime.replace(dtype="bfloat16"))
    # the fast CPU path: int8 weights of the same export, quantized once; probabilities close, not equal
    fast = NLIScorer(checkpoint, runtime=runtime.replace(nli_backend="onnxruntime-int8"), batch_size=4)
    quantized = fast.predict(premises, hypotheses)
    assert list((tmp_path / "onnx").glob("*.int8.onnx")) and "|backend:onnxruntime-int8" in str(fast.signature())
    assert np.allclose(quantized.sum(axis=1), 1) and 0 < np.abs(quantized - probabilities).max() < 0.2


def _build_int8_session(checkpoint: str, directory: str) -> int:
    from caplib.checkpoints import resolve_checkpoint
    from caplib.nli import onnx_session

    session = onnx_session(checkpoint, resolve_checkpoint(checkpoint).fingerprint, Path(directory), int8=True)
    return len(session.get_inputs())


def test_actors_starting_together_export_and_quantize_once(checkpoint, tmp_path):
    """Two processes (as two Ray actors on a cold cache) build the int8 session at once: before the lock, ONNX
    Runtime's quantizer in one removed the other's shape-inference file and the job failed."""
    pytest.importorskip("onnxruntime", reason="ONNX Runtime is not installed (pip install 'caplib[onnx]')")
    import multiprocessing

    with multiprocessing.get_context("spawn").Pool(2) as pool:
        inputs = pool.starmap(_build_int8_session, [(str(checkpoint), str(tmp_path))] * 2)
    assert inputs == [2, 2]  # input_ids and attention_mask (the tiny DeBERTa has no token types)
    assert sorted(path.name.split(".", 1)[1] for path in (tmp_path / "onnx").glob("*.onnx")) == ["int8.onnx", "onnx"]
