"""Long inputs in caplib.nli: ``long_inputs="chunk"`` scores a pair longer than max_length in sentence chunks
(max entailment over premise chunks, mean over hypothesis chunks), counts it, and signs it; tiny local model."""

from __future__ import annotations

import os

import numpy as np
import pytest

os.environ["HF_HUB_OFFLINE"] = "1"
os.environ["TRANSFORMERS_OFFLINE"] = "1"

from caplib.cap import CAPScorer, cap  # noqa: E402
from caplib.nli import NLIScorer  # noqa: E402
from caplib.runtime import Runtime  # noqa: E402
from tests.tiny_models import build_nli_checkpoint, corpus  # noqa: E402

torch = pytest.importorskip("torch")

pytestmark = pytest.mark.usefixtures("one_torch_thread")

GOLD = "Water boils at 100 degrees."


@pytest.fixture(scope="module")
def checkpoint(tmp_path_factory):
    return build_nli_checkpoint(tmp_path_factory.mktemp("chunks") / "model")


def _nli(checkpoint, **settings):
    return NLIScorer(checkpoint, runtime=Runtime(cache=False, progress=False), **settings)


def _text(scorer, tokens):
    """Corpus sentences, joined by single spaces, until the text has more than ``tokens`` tokens."""
    scorer.load()
    sentences = corpus()
    for n in range(1, len(sentences) + 1):
        text = " ".join(sentences[:n])
        if scorer._token_count(text) > tokens:
            return text
    raise AssertionError("corpus too short")


def _by_hand(reference, premise_chunks, hypothesis_chunks):
    """max entailment over premise chunks for each hypothesis chunk, then the mean over hypothesis chunks."""
    rows = []
    for hypothesis in hypothesis_chunks:
        probs = reference.predict(premise_chunks, [hypothesis] * len(premise_chunks))
        assert reference.last_stats["truncated"] == 0  # every chunk pair fits
        rows.append(probs[int(np.argmax(probs[:, 0]))])
    return np.mean(rows, axis=0)


def test_a_2000_token_candidate_is_chunked_not_truncated_and_equals_max_over_chunks(checkpoint):
    scorer = CAPScorer(checkpoint, runtime=Runtime(cache=False, progress=False), long_inputs="chunk")
    candidate = _text(scorer.nli, 2000)
    frame = scorer.components([GOLD], [candidate])
    assert scorer.nli.last_stats["chunked"] == 2 and scorer.nli.last_stats["truncated"] == 0  # both directions
    budget = 512 - 3 - scorer.nli._token_count(GOLD)  # [CLS] gold [SEP] chunk [SEP]
    chunks = scorer.nli.chunks(candidate, budget)
    assert len(chunks) >= 4 and " ".join(chunks) == candidate  # whole sentences, nothing lost
    assert all(scorer.nli._token_count(chunk) <= budget for chunk in chunks)
    reference = _nli(checkpoint)  # plain predictions of each chunk pair, which fits
    backward = _by_hand(reference, chunks, [GOLD])  # candidate -> gold: the chunk that entails the gold most
    forward = _by_hand(reference, [GOLD], chunks)  # gold -> candidate: the mean over the candidate's chunks
    np.testing.assert_allclose(frame[["cap_p_entail_bwd", "cap_p_neutral_bwd", "cap_p_contra_bwd"]].to_numpy()[0],
                               backward, rtol=0, atol=1e-12)
    np.testing.assert_allclose(frame[["cap_p_entail_fwd", "cap_p_neutral_fwd", "cap_p_contra_fwd"]].to_numpy()[0],
                               forward, rtol=0, atol=1e-12)
    assert frame["cap"][0] == pytest.approx(cap([forward], [backward])[0], abs=1e-12)
    truncating = CAPScorer(checkpoint, runtime=Runtime(cache=False, progress=False))
    assert truncating.score([GOLD], [candidate])[0] != pytest.approx(frame["cap"][0], abs=1e-6)
    assert truncating.nli.last_stats["truncated"] == 2 and truncating.nli.last_stats["chunked"] == 0


def test_two_long_statements_are_both_chunked_to_half_the_budget(checkpoint):
    scorer = _nli(checkpoint, long_inputs="chunk")
    premise, hypothesis = _text(scorer, 600), " ".join(reversed(_text(scorer, 600).split(". ")))
    probs = scorer.predict([premise], [hypothesis])
    total = 512 - 3
    expected = _by_hand(_nli(checkpoint), scorer.chunks(premise, total - total // 2),
                        scorer.chunks(hypothesis, total // 2))
    np.testing.assert_allclose(probs[0], expected, rtol=0, atol=1e-12)
    np.testing.assert_allclose(probs.sum(axis=1), 1.0, atol=1e-9)


def test_short_pairs_are_the_same_in_both_modes(checkpoint):
    premises, hypotheses = corpus()[:6], corpus()[10:16]
    np.testing.assert_array_equal(_nli(checkpoint, long_inputs="chunk").predict(premises, hypotheses),
                                  _nli(checkpoint).predict(premises, hypotheses))


def test_a_chunk_that_cannot_fit_is_truncated_and_counted(checkpoint):
    scorer = _nli(checkpoint, long_inputs="chunk")
    word = "Waterboilsatonehundreddegrees" * 60  # one word of far more than 512 tokens: no sentence to cut at
    probs = scorer.predict([word, GOLD], [GOLD, GOLD])
    assert scorer.last_stats["chunked"] == 1 and scorer.last_stats["truncated"] == 1
    assert np.isfinite(probs).all()


def test_chunking_is_a_setting_of_the_signature_and_the_cache(checkpoint, tmp_path):
    truncating = NLIScorer(checkpoint, runtime=Runtime(cache_dir=tmp_path, progress=False))
    chunking = NLIScorer(checkpoint, runtime=Runtime(cache_dir=tmp_path, progress=False), long_inputs="chunk")
    assert "long_inputs" not in str(truncating.signature()) and "long_inputs" not in truncating.settings()
    assert "|truncation:longest_first|long_inputs:chunk|batch:16" in str(chunking.signature())
    assert chunking.settings()["long_inputs"] == "chunk"
    long_text = _text(truncating, 700)
    cut = truncating.predict([long_text], [GOLD])
    chunked = chunking.predict([long_text], [GOLD])
    assert chunking.last_stats["cached"] == 0 and not np.allclose(cut, chunked)  # its own cache entries
    again = NLIScorer(checkpoint, runtime=Runtime(cache_dir=tmp_path, progress=False), long_inputs="chunk")
    np.testing.assert_array_equal(again.predict([long_text], [GOLD]), chunked)
    assert again.last_stats["cached"] == 1 and again.last_stats["chunked"] == 1  # counted from the cache too
    with pytest.raises(ValueError, match="long_inputs must be one of"):
        _nli(checkpoint, long_inputs="drop")
