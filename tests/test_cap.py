"""caplib.cap (Eq. 2-3, App. A) and caplib.profiles, with a tiny locally built NLI checkpoint."""

from __future__ import annotations

import os

import numpy as np
import pandas as pd
import pytest
import yaml

os.environ["HF_HUB_OFFLINE"] = "1"
os.environ["TRANSFORMERS_OFFLINE"] = "1"

from caplib import __version__  # noqa: E402
from caplib.cap import COMPONENT_COLUMNS, CAPScorer, cap, directional_score  # noqa: E402
from caplib.checkpoints import CheckpointNotAvailable  # noqa: E402
from caplib.nli import NLIScorer  # noqa: E402
from caplib.profiles import (PROFILE_DIR, Profile, ProfileError, available_profiles, load_profile,  # noqa: E402
                             on_official_rows)
from caplib.runtime import Runtime  # noqa: E402
from tests.tiny_models import build_nli_checkpoint, corpus  # noqa: E402

torch = pytest.importorskip("torch")


pytestmark = pytest.mark.usefixtures("one_torch_thread")


@pytest.fixture(scope="module")
def checkpoint(tmp_path_factory):
    return build_nli_checkpoint(tmp_path_factory.mktemp("cap") / "model")


@pytest.fixture()
def scorer(checkpoint):
    return CAPScorer(nli_model=checkpoint, runtime=Runtime(cache=False, progress=False))


# ----------------------------------------------------------------------------------------------- Eq. 2-3


def test_cap_matches_hand_computation():
    forward = [[0.90, 0.08, 0.02], [0.01, 0.02, 0.97]]  # s_g -> s_p: equivalent, contradictory
    backward = [[0.20, 0.70, 0.10], [0.00, 0.03, 0.97]]  # s_p -> s_g
    # D = P_e + 0.3 P_n; CAP = 0.85 D_fwd + 0.15 D_bwd
    expected = [0.85 * (0.90 + 0.3 * 0.08) + 0.15 * (0.20 + 0.3 * 0.70),
                0.85 * (0.01 + 0.3 * 0.02) + 0.15 * (0.00 + 0.3 * 0.03)]
    np.testing.assert_allclose(cap(forward, backward), expected, rtol=0, atol=1e-12)
    np.testing.assert_allclose(cap(forward, backward), [0.8469, 0.01495], atol=1e-12)
    np.testing.assert_allclose(directional_score(forward, 0.3), [0.924, 0.016], atol=1e-12)


def test_special_cases_of_alpha_and_lam():
    forward, backward = np.array([[0.5, 0.3, 0.2]]), np.array([[0.1, 0.6, 0.3]])
    assert cap(forward, backward, alpha=1.0, lam=0.0)[0] == pytest.approx(0.5)  # forward entailment only
    assert cap(forward, backward, alpha=0.0, lam=0.0)[0] == pytest.approx(0.1)  # backward entailment only
    assert cap(forward, backward, alpha=0.5, lam=1.0)[0] == pytest.approx(0.5 * 0.8 + 0.5 * 0.7)  # 1 - P_contra
    assert cap([[1, 0, 0]], [[1, 0, 0]])[0] == pytest.approx(1.0)  # maximum: entailment both ways (App. A)
    assert cap([[0, 0, 1]], [[0, 0, 1]])[0] == pytest.approx(0.0)  # minimum: contradiction both ways


def test_boundedness_on_random_probabilities():
    # App. A: CAP in [0, 1] for every alpha, lam in [0, 1] and every pair of distributions.
    rng = np.random.default_rng(0)
    for _ in range(50):
        forward, backward = rng.dirichlet([0.3, 0.3, 0.3], 200), rng.dirichlet([1, 1, 1], 200)
        alpha, lam = rng.uniform(0, 1, 2)
        values = cap(forward, backward, alpha=alpha, lam=lam)
        assert values.min() >= 0.0 and values.max() <= 1.0
        # CAP is monotone in lam (adds non-negative neutral mass)
        assert np.all(cap(forward, backward, alpha=alpha, lam=1.0) >= values - 1e-12)


@pytest.mark.parametrize(
    ("forward", "message"),
    [
        ([[0.5, 0.5]], r"shape \(n, 3\)"),
        ([[0.5, 0.4, 0.2]], "not a probability distribution"),
        ([[1.2, -0.1, -0.1]], "not a probability distribution"),
        ([[np.nan, 0.5, 0.5]], "not a probability distribution"),
    ],
)
def test_invalid_probabilities_are_rejected(forward, message):
    with pytest.raises(ValueError, match=message):
        cap(forward, [[1.0, 0.0, 0.0]])


def test_invalid_weights_and_shapes_are_rejected():
    good = [[0.2, 0.3, 0.5]]
    with pytest.raises(ValueError, match=r"alpha must be a number in \[0, 1\]"):
        cap(good, good, alpha=1.5)
    with pytest.raises(ValueError, match=r"lam must be a number in \[0, 1\]"):
        directional_score(good, lam=-0.1)
    with pytest.raises(ValueError, match="pair up"):
        cap(good, good * 2)


# ----------------------------------------------------------------------------------------------- CAPScorer


def test_score_is_eq3_over_both_nli_directions(scorer, checkpoint):
    sentences = corpus()
    golds, candidates = sentences[:12], sentences[100:112]
    values = scorer.score(golds, candidates)
    reference_nli = NLIScorer(checkpoint, runtime=Runtime(cache=False, progress=False))
    forward = reference_nli.predict(golds, candidates)
    backward = reference_nli.predict(candidates, golds)
    expected = 0.85 * (forward[:, 0] + 0.3 * forward[:, 1]) + 0.15 * (backward[:, 0] + 0.3 * backward[:, 1])
    np.testing.assert_allclose(values, expected, atol=1e-6)
    assert scorer.nli.last_stats["pairs"] == 24  # both directions went through one NLI call


def test_components(scorer):
    sentences = corpus()
    golds = sentences[:6]
    candidates = sentences[:3] + sentences[200:203]  # the first three are exact copies of their gold
    frame = scorer.components(golds, candidates)
    assert isinstance(frame, pd.DataFrame) and tuple(frame.columns) == COMPONENT_COLUMNS
    assert scorer.nli.last_stats["unique"] == 9  # (g, g) is the same pair in both directions
    np.testing.assert_allclose(frame.cap, 0.85 * frame.cap_d_forward + 0.15 * frame.cap_d_backward, atol=1e-12)
    np.testing.assert_allclose(frame.cap_d_forward, frame.cap_p_entail_fwd + 0.3 * frame.cap_p_neutral_fwd, atol=1e-12)
    np.testing.assert_allclose(frame[["cap_p_entail_bwd", "cap_p_neutral_bwd", "cap_p_contra_bwd"]].sum(axis=1), 1,
                               atol=1e-6)
    np.testing.assert_allclose(frame.cap_d_forward[:3], frame.cap_d_backward[:3], atol=1e-12)  # s_g == s_p
    np.testing.assert_allclose(frame.cap, scorer.score(golds, candidates), atol=0)


def test_several_golds_take_the_maximum(scorer):
    sentences = corpus()
    candidates = [sentences[10], sentences[11]]
    singles = {g: scorer.score([g], [candidates[0]])[0] for g in sentences[20:23]}
    frame = scorer.components([sentences[20:23], sentences[40]], candidates)
    best = max(singles, key=singles.get)
    assert frame.cap[0] == pytest.approx(singles[best], abs=1e-6)
    assert frame.cap_gold_index.tolist() == [sentences[20:23].index(best), 0]
    assert frame.cap[1] == pytest.approx(scorer.score([sentences[40]], [candidates[1]])[0], abs=1e-6)
    with pytest.raises(ValueError, match="empty list"):
        scorer.score([[]], ["x"])
    for shift in range(3):  # the best gold in every position: the maximum, never simply the first gold
        golds = sentences[20:23][shift:] + sentences[20:23][:shift]
        rotated = scorer.components([golds], [candidates[0]])
        assert rotated.cap[0] == pytest.approx(singles[best], abs=1e-6)
        assert rotated.cap_gold_index[0] == golds.index(best)


def test_a_tie_between_golds_goes_to_the_first_of_them(scorer):
    """Issue 34, mutant: with ``>=`` for ``>`` in the maximum over golds, a tie went to the last gold, not the first
    that the module docstring promises."""
    sentences = corpus()
    a, b, candidate = sentences[20], sentences[21], sentences[10]
    better = 0 if scorer.score([a], [candidate])[0] >= scorer.score([b], [candidate])[0] else 1
    frame = scorer.components([[a, a], [b, b, b], [a, b, a, b]], [candidate] * 3)
    assert frame.cap_gold_index.tolist() == [0, 0, better]


class CountingGenerator:
    """A stand-in statement generator: '<answer> answers <question>' and a log of what it was asked."""

    def __init__(self):
        self.calls: list[list[tuple[str, str]]] = []

    def generate(self, questions, answers):
        self.calls.append(list(zip(questions, answers)))
        return [f"{answer} answers {question}" for question, answer in zip(questions, answers)]


def test_score_answers_generates_each_statement_once(checkpoint):
    generator = CountingGenerator()
    scorer = CAPScorer(nli_model=checkpoint, statement_model=generator, runtime=Runtime(cache=False, progress=False))
    questions = ["Where is Sofia?"] * 3 + ["What melts?"]
    golds = ["Bulgaria", "Bulgaria", ["Bulgaria", "the Balkans"], "ice"]
    answers = ["Bulgaria", "Romania", "Bulgaria", "iron"]
    frame = scorer.answer_components(questions, golds, answers)
    assert len(generator.calls) == 1
    assert sorted(generator.calls[0]) == sorted({("Where is Sofia?", "Bulgaria"), ("Where is Sofia?", "Romania"),
                                                 ("Where is Sofia?", "the Balkans"), ("What melts?", "ice"),
                                                 ("What melts?", "iron")})
    statements = generator.generate(questions, answers)
    expected = scorer.score([generator.generate([q], [g if isinstance(g, str) else g[0]])[0]
                             for q, g in zip(questions, golds)], statements)
    np.testing.assert_allclose(frame.cap[[0, 1, 3]], expected[[0, 1, 3]], atol=1e-6)
    assert frame.cap[2] >= expected[2] - 1e-9  # max over two golds
    assert frame.cap_hypothesis.tolist() == statements
    assert frame.cap_premise[0] == "Bulgaria answers Where is Sofia?"


def test_score_answers_without_statement_model(scorer):
    with pytest.raises(ValueError, match="needs a statement model"):
        scorer.score_answers(["q"], ["g"], ["a"])
    values = scorer.score_answers(["q"], ["g"], ["a"], statement_generator=CountingGenerator())
    assert values.shape == (1,)


def test_statement_model_directory_becomes_a_seq2seq_generator(checkpoint, tmp_path):
    statements = pytest.importorskip("caplib.statements")
    from tests.tiny_seq2seq import build_tiny_mt5

    model_dir = build_tiny_mt5(tmp_path / "mt5")
    scorer = CAPScorer(nli_model=checkpoint, statement_model=model_dir, runtime=Runtime(device="cpu", cache=False, progress=False))
    generator = scorer.statement_generator
    assert isinstance(generator, statements.Seq2SeqStatementGenerator)
    assert generator.device == "cpu" and generator.checkpoint.path == model_dir.resolve()
    assert f"|{str(generator.signature())}|" in str(scorer.signature())
    template = CAPScorer(nli_model=checkpoint, statement_model="builtin:template", runtime=Runtime(cache=False))
    assert "|statements:template|" in str(template.signature())


def test_empty_input(scorer):
    assert scorer.score([], []).shape == (0,)
    assert list(scorer.components([], []).columns) == list(COMPONENT_COLUMNS)


def test_signature_records_every_setting(checkpoint):
    scorer = CAPScorer(nli_model=checkpoint, alpha=0.7, lam=0.2, runtime=Runtime(cache=False, device="cpu"))
    signature = str(scorer.signature())
    for part in (f"caplib:{__version__}", "#sha256:", "statements:given", "alpha:0.7", "lam:0.2", "dtype:float32",
                 "max_length:512", f"torch:{torch.__version__}"):
        assert part in signature, part
    import transformers

    assert f"transformers:{transformers.__version__}" in signature


# ----------------------------------------------------------------------------------------------- profiles


def test_bundled_profiles():
    assert available_profiles() == ["offline", "offline-official", "paper", "released"]
    paper = load_profile("paper")
    assert (paper.nli_model, paper.alpha, paper.lam, paper.batch_size, paper.dtype, paper.max_length) == (
        "cross-encoder/nli-deberta-v3-large", 0.85, 0.30, 16, "auto", 512)  # auto: float16 on CUDA, float32 on CPU
    assert paper.nli_revision == "bab4bc7178836f731dcfd18c06ca9def0a137712"  # the authors' commit, as they name it
    assert paper.statement_base_model == "google/mt5-small"
    assert paper.metric_options("comet")["model"] == "Unbabel/wmt22-comet-da"
    assert paper.metric_options("bertscore")["model"] == "roberta-large"
    offline = load_profile("offline")
    assert (offline.nli_model, offline.statement_model) == ("builtin:offline-nli", "builtin:template")
    assert offline.metric_options("bertscore") == {"model": "offline"}
    with pytest.raises(ProfileError, match="no profile 'nope'"):
        load_profile("nope")


def test_a_profile_extends_a_bundled_one_key_by_key(tmp_path):
    official, offline = load_profile("offline-official"), load_profile("offline")
    # offline-official is offline with the official data: every model and setting is offline's
    assert official.data_dir == (PROFILE_DIR.parent.parent / "data" / "official").resolve()
    assert offline.data_dir is None and official.name == "offline-official"
    for field in ("alpha", "lam", "nli_model", "batch_size", "dtype", "max_length", "statement_model", "baselines"):
        assert getattr(official, field) == getattr(offline, field), field
    (tmp_path / "mine.yaml").write_text("extends: offline\nname: mine\ncap: {alpha: 0.5, lam: 0.1}\n")
    mine = load_profile(tmp_path / "mine.yaml")
    assert (mine.name, mine.alpha, mine.lam, mine.nli_model) == ("mine", 0.5, 0.1, "builtin:offline-nli")
    (tmp_path / "unknown.yaml").write_text("extends: ofline\nname: x\n")
    with pytest.raises(ProfileError, match="extends must name a bundled profile"):
        load_profile(tmp_path / "unknown.yaml")
    (tmp_path / "partial.yaml").write_text("extends: offline\ncap: {alpha: 0.5}\n")  # a section is replaced whole
    with pytest.raises(ProfileError, match="section 'cap' must have exactly the keys"):
        load_profile(tmp_path / "partial.yaml")


def test_on_official_rows_keeps_a_profiles_models_and_gives_them_the_official_rows(tmp_path):
    assert on_official_rows("offline").name == on_official_rows("released").name == "offline-official"
    assert on_official_rows("paper") == load_profile("paper")
    mine = write_profile(tmp_path / "mine.yaml", name="mine", cap__alpha=0.6)  # the bundled sample's data
    moved = on_official_rows(mine)
    assert (moved.name, moved.alpha, moved.data_dir) == ("mine-official", 0.6, load_profile("paper").data_dir)


def test_paper_profile_refuses_unpinned_hub_model(tmp_path):
    import yaml

    settings = yaml.safe_load(load_profile("paper").source.read_text())
    settings["nli"]["revision"] = None  # pinned by neither the YAML nor a lock: never an invented commit
    (tmp_path / "unpinned.yaml").write_text(yaml.safe_dump(settings))
    assert load_profile(tmp_path / "unpinned.yaml").nli_revision is None
    with pytest.raises(ValueError, match="no pinned revision"):
        CAPScorer.from_profile(tmp_path / "unpinned.yaml", runtime=Runtime(device="cpu", dtype="float32"))


def test_offline_profile_without_backbone(monkeypatch, tmp_path):
    monkeypatch.setenv("CAPLIB_OFFLINE_NLI_DIR", str(tmp_path / "missing"))  # caplib.offline_nli.artifact_dir()
    with pytest.raises(CheckpointNotAvailable, match="no offline NLI backbone in"):
        CAPScorer.from_profile("offline")


def write_profile(path, **changes):
    data = yaml.safe_load(load_profile("offline").source.read_text())
    for dotted, value in changes.items():
        section, _, key = dotted.partition("__")
        if key:
            data[section][key] = value
        else:
            data[section] = value
    path.write_text(yaml.safe_dump(data))
    return path


def test_from_profile_file(checkpoint, tmp_path):
    profile_file = write_profile(tmp_path / "mine.yaml", name="mine", nli__model=str(checkpoint),
                                 cap__alpha=0.6, nli__batch_size=4)
    profile = load_profile(profile_file)
    assert isinstance(profile, Profile) and profile.name == "mine"
    scorer = CAPScorer.from_profile(profile, runtime=Runtime(cache=False, progress=False))
    assert (scorer.alpha, scorer.lam, scorer.nli.batch_size) == (0.6, 0.3, 4)
    assert "alpha:0.6" in str(scorer.signature())


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"cap__alpha": 1.5}, r"cap.alpha must lie in \[0, 1\]"),
        ({"nli__batch_size": 0}, "nli.batch_size must be a positive integer"),
        ({"nli__revision": 123}, "nli.revision must be str"),
        ({"nli__extra": 1}, "unknown \\['extra'\\]"),
        ({"baselines": {"blue": {}}}, "baselines.blue is not a metric"),
        ({"name": None, "cap": "x"}, "'cap' must be a mapping"),
    ],
)
def test_malformed_profiles_name_file_and_key(tmp_path, changes, message):
    profile_file = write_profile(tmp_path / "bad.yaml", **changes)
    with pytest.raises(ProfileError, match=message) as raised:
        load_profile(profile_file)
    assert "bad.yaml" in str(raised.value)


def test_device_keyword_of_the_previous_readme_still_works_and_warns(checkpoint):
    with pytest.warns(DeprecationWarning, match="runtime=Runtime"):
        scorer = CAPScorer(nli_model=checkpoint, device="cpu", runtime=Runtime(cache=False, progress=False))
    assert scorer.runtime.device == "cpu" and scorer.runtime.cache is False
    plain = CAPScorer(nli_model=checkpoint, runtime=Runtime(device="cpu", cache=False, progress=False))
    gold, candidate = ["Water boils at 100 degrees."], ["Water boils at 0 degrees."]
    np.testing.assert_array_equal(scorer.score(gold, candidate), plain.score(gold, candidate))
