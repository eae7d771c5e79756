"""score_frame: rows in, one column per metric out, CAP from given or generated statements, skips with reasons."""

import numpy as np
from pathlib import Path

import pandas as pd
import pytest

from caplib import baselines
from caplib.cap import COMPONENT_COLUMNS, CAPScorer
from caplib.runtime import Runtime
from caplib.scoring import score_frame
from tests.tiny_models import build_nli_checkpoint

COMPONENTS = [column for column in COMPONENT_COLUMNS if column != "cap"]
ROWS = pd.DataFrame(
    {
        "question": ["What is the capital of France?", "Which gas do plants release during photosynthesis?"],
        "gold_answer": ["Paris", "oxygen"],
        "answer": ["Paris", "carbon dioxide"],
        "premise": ["The capital of France is Paris.", "Plants release oxygen during photosynthesis."],
        "hypothesis": ["The capital of France is Paris.", "Plants release carbon dioxide during photosynthesis."],
    }
)


@pytest.fixture(scope="module")
def offline_backbone(tmp_path_factory):
    """A tiny, seeded, random 3-label checkpoint standing in for the offline backbone: same code path."""
    path = build_nli_checkpoint(tmp_path_factory.mktemp("backbone"))
    patcher = pytest.MonkeyPatch()
    patcher.setenv("CAPLIB_OFFLINE_NLI_DIR", str(path))
    patcher.setenv("CAPLIB_CACHE_DIR", str(tmp_path_factory.mktemp("cache")))
    yield path
    patcher.undo()


def test_baseline_columns_equal_direct_calls():
    scored = score_frame(ROWS, "offline", metrics=("em", "acc", "rouge_l"), runtime=Runtime(progress=False))
    for metric in ("em", "acc", "rouge_l"):
        expected = baselines.score(metric, list(ROWS["gold_answer"]), list(ROWS["answer"]))
        assert np.allclose(scored.frame[metric], expected)
    assert scored.frame["em"].tolist() == [1.0, 0.0]
    assert set(scored.signatures) == {"em", "acc", "rouge_l"} and scored.skipped == {}
    assert list(scored.frame.columns[: len(ROWS.columns)]) == list(ROWS.columns)  # input rows kept as they are


def test_comet_is_skipped_offline_with_a_reason_and_no_column():
    scored = score_frame(ROWS, "offline", metrics=("comet",), runtime=Runtime(progress=False))
    assert "comet" not in scored.frame.columns
    assert "COMET" in scored.skipped["comet"]


def test_cap_scores_the_given_statements(offline_backbone):
    scored = score_frame(ROWS, "offline", metrics=("cap",), runtime=Runtime(progress=False))
    direct = CAPScorer(nli_model=str(offline_backbone), runtime=Runtime(progress=False, cache=False)).score(
        ROWS["premise"], ROWS["hypothesis"])
    assert np.allclose(scored.frame["cap"], direct, atol=1e-6)
    assert scored.metrics["cap"]["statements"].startswith("input columns premise")
    assert {"cap_d_forward", "cap_d_backward", "cap_p_entail_fwd"} <= set(scored.frame.columns)


def test_cap_regenerates_statements_with_the_profiles_generator(offline_backbone):
    bare = ROWS.drop(columns=["premise", "hypothesis"])
    scored = score_frame(bare, "offline", metrics=("cap",), runtime=Runtime(progress=False))
    assert scored.metrics["cap"]["statements"] == "regenerated with builtin:template"
    assert scored.frame["cap_premise"].tolist()[1].endswith("oxygen during photosynthesis.")
    assert ((scored.frame["cap"] >= 0) & (scored.frame["cap"] <= 1)).all()


def test_cap_without_backbone_is_skipped_not_faked(monkeypatch, tmp_path):
    monkeypatch.setenv("CAPLIB_OFFLINE_NLI_DIR", str(tmp_path / "absent"))
    scored = score_frame(ROWS, "offline", metrics=("cap", "em"), runtime=Runtime(progress=False))
    assert "cap" not in scored.frame.columns and "no offline NLI backbone in" in scored.skipped["cap"]
    assert "em" in scored.frame.columns


def test_unknown_metric_is_an_error():
    with pytest.raises(ValueError, match="unknown metric"):
        score_frame(ROWS, "offline", metrics=("bleurt",))


def test_baseline_scores_are_cached_by_content(tmp_path, monkeypatch):
    calls = []
    real = baselines.score

    def counting(metric, golds, predictions, **kwargs):
        calls.append(len(golds))
        return real(metric, golds, predictions, **kwargs)

    monkeypatch.setattr(baselines, "score", counting)
    first = score_frame(ROWS, "offline", metrics=("rouge_l",), runtime=Runtime(cache_dir=str(tmp_path), progress=False))
    more = pd.concat([ROWS, ROWS.assign(answer=["Lyon", "oxygen gas"])], ignore_index=True)
    second = score_frame(more, "offline", metrics=("rouge_l",), runtime=Runtime(cache_dir=str(tmp_path), progress=False))
    assert calls == [2, 2]  # the second call computes only the two new rows
    assert np.allclose(second.frame["rouge_l"][:2], first.frame["rouge_l"])
    assert np.allclose(second.frame["rouge_l"], real("rouge_l", list(more["gold_answer"]), list(more["answer"])))


def test_baseline_cache_keys_cannot_collide(tmp_path):
    # With texts joined by a separator, these two rows shared one cache key and row 0 got row 1's BLEU.
    rows = pd.DataFrame({"question": ["q", "q"], "gold_answer": ["the cat sat\x1fon the mat", "the cat sat"],
                         "answer": ["the cat", "on the mat\x1fthe cat"]})
    cached = score_frame(rows, "offline", metrics=("bleu",), runtime=Runtime(cache_dir=str(tmp_path), progress=False))
    expected = baselines.score("bleu", list(rows["gold_answer"]), list(rows["answer"]))
    assert expected[0] != pytest.approx(expected[1])
    assert cached.frame["bleu"].tolist() == pytest.approx(expected.tolist(), abs=0)


def test_baseline_cache_key_holds_the_question(tmp_path, monkeypatch):
    """Rows with the same gold and answer but different questions must not share a cached baseline score
    (COMET reads the question); a metric that depends on the question shows it through score_frame's cache."""
    real = baselines.score

    def by_question(metric, golds, answers, questions=None, **options):
        if metric != "em":
            return real(metric, golds, answers, questions=questions, **options)
        return np.array([len(q) for q in questions], dtype=float)

    monkeypatch.setattr(baselines, "score", by_question)
    rows = pd.DataFrame({"question": ["Why?", "Why is the sky blue?"], "gold_answer": ["light", "light"],
                         "answer": ["light", "light"]})
    runtime = Runtime(cache=True, cache_dir=tmp_path, progress=False)
    for _ in range(2):  # cold, then from the cache
        scored = score_frame(rows, "offline", ["em"], runtime=runtime)
        assert scored.frame["em"].tolist() == [4.0, 20.0]


def test_a_baseline_option_keys_its_cache_entries(tmp_path):
    """Issue 34, mutant: baseline cache entries keyed by the metric's name alone (not its signature) gave a
    ``rouge_l: {stem: true}`` run the cached stem:no value while its signature said stem:yes."""
    import yaml

    from caplib.profiles import load_profile

    def profile_with(stem: bool) -> Path:
        data = yaml.safe_load(load_profile("offline").source.read_text())
        data["name"], data["baselines"]["rouge_l"] = f"stem-{stem}", {"stem": stem}
        (tmp_path / f"stem-{stem}.yaml").write_text(yaml.safe_dump(data))
        return tmp_path / f"stem-{stem}.yaml"

    stemmed = profile_with(True)
    rows = pd.DataFrame({"question": ["What were the cats doing?"], "gold_answer": ["the cats were running"],
                         "answer": ["the cat runs"]})
    runtime = Runtime(cache_dir=str(tmp_path / "cache"), progress=False)
    plain = score_frame(rows, profile_with(False), ["rouge_l"], runtime=runtime)  # fills the cache with stem:no
    stem = score_frame(rows, stemmed, ["rouge_l"], runtime=runtime)
    expected = {flag: baselines.score("rouge_l", list(rows.gold_answer), list(rows.answer), stem=flag)[0]
                for flag in (False, True)}
    assert expected[True] > expected[False]  # stemming matters on this row (cat/cats, runs/running)
    assert plain.frame["rouge_l"][0] == expected[False] and "stem:no" in str(plain.signatures["rouge_l"])
    assert stem.frame["rouge_l"][0] == expected[True] and "stem:yes" in str(stem.signatures["rouge_l"])


@pytest.mark.slow
def test_scores_do_not_depend_on_companions_order_workers_or_cache(offline_backbone, tmp_path):
    """Issue 15, item 7, through the public entry point: CAP (tiny backbone), BERTScore (packaged MiniLM) and BLEU
    of 32 rows of the bundled sample, bit for bit, however they are scored."""
    from caplib.data import load_sample

    rows = load_sample("cap_correctness").iloc[::32].reset_index(drop=True)
    metrics = ("cap", "bertscore", "bleu")

    def scored(frame, **runtime):
        settings = {"cache": False, "progress": False, **runtime}
        result = score_frame(frame, "offline", metrics, runtime=Runtime(**settings))
        assert not result.skipped
        return result.frame[["cap", *COMPONENTS, "bertscore", "bleu"]]

    reference = scored(rows)
    order = np.random.default_rng(3).permutation(len(rows))
    pd.testing.assert_frame_equal(scored(rows.iloc[order]).sort_index(), reference, check_exact=True)
    for size in (1, 7, 16):  # the rows handed over in chunks
        parts = [scored(rows.iloc[start : start + size]) for start in range(0, len(rows), size)]
        pd.testing.assert_frame_equal(pd.concat(parts), reference, check_exact=True)
    for workers in (1, 2):
        pd.testing.assert_frame_equal(scored(rows, cpu_workers=workers), reference, check_exact=True)
    cache = {"cache": True, "cache_dir": str(tmp_path)}
    scored(rows.iloc[::2], **cache)  # half the rows cached
    pd.testing.assert_frame_equal(scored(rows, **cache), reference, check_exact=True)  # half-filled
    pd.testing.assert_frame_equal(scored(rows, **cache), reference, check_exact=True)  # warm
