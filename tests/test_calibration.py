"""caplib.calibration (Sec. 8.2): thresholds recovered on synthetic data with known bands, the component model, save and
load, the refusal of another backbone's calibration, ``caplib calibrate`` and ``score --classify``, and the shipped
calibration of the offline profile."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import cohen_kappa_score, f1_score

from caplib.calibration import (
    FEATURES,
    STRUCTURES,
    CalibrationMismatch,
    ComponentLabeler,
    Provenance,
    ThresholdLabeler,
    classify,
    compare_labelers,
    fit_scored_file,
    load,
    measure_of,
    paired_difference,
    shipped_path,
)
from caplib.cli import main
from caplib.taxonomy import LABELS

SIGNATURE = "cap|caplib:0.1.0|nli:builtin:offline-nli#sha256:0123456789ab|rev:local|statements:given|alpha:0.85|lam:0.3"
OTHER_BACKBONE = SIGNATURE.replace("0123456789ab", "ba9876543210")


def banded(structure: str, cuts: list[float], n: int = 300, seed: int = 0) -> tuple[np.ndarray, list[str]]:
    """Uniform scores labelled by known bands of ``STRUCTURES[structure]``; a shared band draws one of its classes
    at random for each row."""
    rng = np.random.default_rng(seed)
    scores = rng.uniform(0, 1, n)
    tiers = STRUCTURES[structure]
    return scores, [tiers[band][rng.integers(len(tiers[band]))] for band in np.searchsorted(cuts, scores, "right")]


def midpoint(scores: np.ndarray, cut: float) -> float:
    """Where a fitted cut must lie when the data separate the bands at ``cut``: halfway between the neighbours."""
    return float((scores[scores < cut].max() + scores[scores >= cut].min()) / 2)


# ---------------------------------------------------------------------------------------------------------------
# Thresholds


@pytest.mark.parametrize("objective", ["accuracy", "quadratic"])
def test_known_severity_bands_are_recovered_and_their_top_tier_stays_shared(objective):
    cuts = [0.1, 0.25, 0.4, 0.6, 0.75]
    scores, labels = banded("severity", cuts)
    labeler = ThresholdLabeler("auto", objective).fit(scores, labels)
    assert labeler.structure == "severity"  # the top tier's three classes are mixed at random: not separable
    assert labeler.cuts == pytest.approx([midpoint(scores, cut) for cut in cuts], abs=1e-12)
    assert labeler.classes[:5] == ("contradictory", "invalid", "overinclusive_invalid", "partial",
                                   "overinclusive_valid")
    assert labeler.classes[5] in ("exact", "equivalent", "alternative_correct")
    if objective == "accuracy":  # the shared band predicts its majority class
        top = pd.Series([label for label, s in zip(labels, scores) if s >= cuts[-1]]).value_counts()
        assert labeler.classes[5] == top.index[0]


@pytest.mark.parametrize("objective", ["accuracy", "quadratic"])
def test_eight_separated_bands_split_the_top_tier(objective):
    cuts = [0.1, 0.2, 0.3, 0.45, 0.55, 0.7, 0.85]
    scores, labels = banded("labels", cuts)
    labeler = ThresholdLabeler("auto", objective).fit(scores, labels)
    assert labeler.structure == "labels" and labeler.cv["fold_difference"] > labeler.cv["fold_se"]
    assert labeler.cuts == pytest.approx([midpoint(scores, cut) for cut in cuts], abs=1e-12)
    assert labeler.classes == tuple(reversed(LABELS))
    assert (labeler.predict(scores) == np.asarray(labels, dtype=object)).all()


def test_the_fitted_cuts_maximise_accuracy_exactly_on_noisy_data():
    # brute force over every placement of 2 cuts (3 bands: invalid < partial < exact) on 30 noisy rows
    rng = np.random.default_rng(3)
    scores = np.round(rng.uniform(0, 1, 30), 3)
    labels = [["invalid", "partial", "exact"][min(2, max(0, int(3 * s + rng.normal(0, 0.5))))] for s in scores]
    labeler = ThresholdLabeler("severity", "accuracy").fit(scores, labels)
    truth = np.asarray(labels, dtype=object)
    found = np.mean(labeler.predict(scores) == truth)
    grid = np.r_[-1.0, np.unique(scores) + 1e-6]
    best = max(np.mean(np.where(scores < a, "invalid", np.where(scores < b, "partial", "exact")) == truth)
               for a in grid for b in grid if a <= b)
    assert found == pytest.approx(best)


def test_the_uniform_bins_are_the_papers():
    uniform = ThresholdLabeler.uniform()
    scores = [0.0, 0.124, 0.125, 0.3, 0.45, 0.55, 0.7, 0.8, 0.875, 1.0]
    assert uniform.predict(scores).tolist() == [
        "contradictory", "contradictory", "invalid", "overinclusive_invalid", "partial", "overinclusive_valid",
        "alternative_correct", "equivalent", "exact", "exact"]
    assert uniform.depends_on == ()  # a fixed rule: any backbone
    with pytest.raises(ValueError, match="no band shares"):
        uniform.predict_proba(scores)
    fitted = ThresholdLabeler.uniform().fit([0.05, 0.06, 0.07, 0.95], ["contradictory", "invalid", "contradictory",
                                                                        "exact"])
    assert fitted.cuts == uniform.cuts  # fitting a fixed rule only counts its bands
    # add-one smoothing over 8 classes: band [0, 0.125) holds 2 contradictory and 1 invalid
    assert fitted.confidence([0.01]).tolist() == pytest.approx([(2 + 1) / (3 + 8)])


def test_bad_inputs_are_named():
    with pytest.raises(ValueError, match="bands must be"):
        ThresholdLabeler("tiers")
    with pytest.raises(ValueError, match="not fitted"):
        ThresholdLabeler().predict([0.5])
    with pytest.raises(ValueError, match="finite"):
        ThresholdLabeler().fit([0.1, float("nan")], ["exact", "invalid"])
    with pytest.raises(ValueError, match=r"labels\[1\]: unknown taxonomy label .bogus."):
        ThresholdLabeler().fit([0.1, 0.2], ["exact", "bogus"])


# ---------------------------------------------------------------------------------------------------------------
# Component model


def components_frame(n: int = 240, seed: int = 1) -> tuple[pd.DataFrame, list[str]]:
    """Four classes, each with its own mean of the eight features (well apart), plus noise."""
    rng = np.random.default_rng(seed)
    classes = ["exact", "partial", "invalid", "contradictory"]
    centres = rng.uniform(0, 1, (len(classes), len(FEATURES)))
    labels = [classes[i % len(classes)] for i in range(n)]
    values = centres[[classes.index(c) for c in labels]] + rng.normal(0, 0.05, (n, len(FEATURES)))
    return pd.DataFrame(values, columns=list(FEATURES)), labels


def test_the_component_model_learns_separable_classes_and_gives_probabilities():
    frame, labels = components_frame()
    labeler = ComponentLabeler().fit(frame, labels)
    assert (labeler.predict(frame) == np.asarray(labels, dtype=object)).mean() > 0.97
    proba = labeler.predict_proba(frame)
    assert list(proba.columns) == list(LABELS) and np.allclose(proba.sum(axis=1), 1.0)
    never_seen = ["equivalent", "alternative_correct", "overinclusive_valid", "overinclusive_invalid"]
    assert (proba[never_seen] == 0).all().all()
    assert np.allclose(labeler.confidence(frame), proba.max(axis=1))


def test_two_classes_keep_their_names_whatever_the_alphabet_says():
    # scikit-learn sorts classes by name (alternative_correct < equivalent), Eq. 1 the other way round
    frame, _ = components_frame(n=40)
    labels = ["equivalent" if value > 0.5 else "alternative_correct" for value in frame["cap_d_forward"]]
    frame["cap_d_forward"] = np.where(np.array(labels) == "equivalent", 0.9, 0.1)
    labeler = ComponentLabeler().fit(frame, labels)
    assert labeler.predict(frame).tolist() == labels


def test_the_component_model_names_missing_components():
    with pytest.raises(ValueError, match="--components"):
        ComponentLabeler().fit(pd.DataFrame({"cap": [0.1, 0.9]}), ["invalid", "exact"])


# ---------------------------------------------------------------------------------------------------------------
# Files: save, load, refusal


@pytest.fixture()
def fitted_labelers():
    provenance = Provenance(cap_signature=SIGNATURE, data="scored.csv#sha256:000000000000", split="validation",
                            n=240, row_ids=tuple(range(10, 250)))
    frame, labels = components_frame()
    frame["cap"] = 0.85 * frame["cap_d_forward"].clip(0, 1) + 0.15 * frame["cap_d_backward"].clip(0, 1)
    return frame, {"thresholds": ThresholdLabeler().fit(frame["cap"], labels, provenance),
                   "components": ComponentLabeler().fit(frame, labels, provenance)}


@pytest.mark.parametrize("kind", ["thresholds", "components"])
def test_save_and_load_round_trip(fitted_labelers, kind, tmp_path):
    frame, labelers = fitted_labelers
    labeler = labelers[kind]
    labeler.save(tmp_path / "calibration.json")
    again = load(tmp_path / "calibration.json", cap_signature=SIGNATURE)
    assert type(again) is type(labeler) and again.provenance == labeler.provenance
    assert str(again.signature()) == str(labeler.signature())
    assert "nli:builtin:offline-nli#sha256:0123456789ab" in str(again.signature())
    assert "split:validation" in str(again.signature()) and "n:240" in str(again.signature())
    inputs = frame if kind == "components" else frame["cap"]
    assert again.predict(inputs).tolist() == labeler.predict(inputs).tolist()
    pd.testing.assert_frame_equal(again.predict_proba(inputs), labeler.predict_proba(inputs))
    assert type(labeler).load(tmp_path / "calibration.json").provenance.row_ids == tuple(range(10, 250))
    document = json.loads((tmp_path / "calibration.json").read_text())
    assert document["fitted_for"]["backbone"] == "builtin:offline-nli#sha256:0123456789ab"
    assert document["fitted_for"]["row_ids"] == "10-249"


def test_a_calibration_of_another_backbone_is_refused(fitted_labelers, tmp_path):
    frame, labelers = fitted_labelers
    labelers["components"].save(tmp_path / "calibration.json")
    with pytest.raises(CalibrationMismatch, match="0123456789ab.*ba9876543210"):
        load(tmp_path / "calibration.json", cap_signature=OTHER_BACKBONE)
    with pytest.raises(CalibrationMismatch, match="lam 0.3, but these scores have lam 0.5"):
        classify(frame, labelers["components"], SIGNATURE.replace("lam:0.3", "lam:0.5"))
    with pytest.raises(CalibrationMismatch, match="alpha"):  # thresholds live on CAP, which alpha moves
        classify(frame, labelers["thresholds"], SIGNATURE.replace("alpha:0.85", "alpha:0.7"))
    # the component model reads no CAP, so alpha does not concern it
    assert len(classify(frame, labelers["components"], SIGNATURE.replace("alpha:0.85", "alpha:0.7"))) == len(frame)
    with pytest.raises(CalibrationMismatch, match="names no backbone"):
        classify(frame, ThresholdLabeler().fit(frame["cap"], labelers["components"].predict(frame)), SIGNATURE)
    with pytest.raises(ValueError, match="not a caplib calibration"):
        (tmp_path / "other.json").write_text('{"format": "something"}')
        load(tmp_path / "other.json")


# ---------------------------------------------------------------------------------------------------------------
# Judging a labeler


def test_measures_from_a_confusion_matrix_agree_with_scikit_learn():
    rng = np.random.default_rng(5)
    truth = rng.choice(LABELS, 200)
    predicted = np.where(rng.uniform(size=200) < 0.6, truth, rng.choice(LABELS[:5], 200))
    confusion = pd.crosstab(pd.Categorical(truth, LABELS), pd.Categorical(predicted, LABELS), dropna=False).to_numpy()
    present = sorted(set(truth) | set(predicted))
    assert measure_of(confusion, "accuracy") == pytest.approx(np.mean(truth == predicted))
    assert measure_of(confusion, "macro_f1") == pytest.approx(f1_score(truth, predicted, labels=present,
                                                                       average="macro"))
    for measure, weights in (("kappa", None), ("linear", "linear"), ("quadratic", "quadratic")):
        assert measure_of(confusion, measure) == pytest.approx(
            cohen_kappa_score(truth, predicted, labels=list(LABELS), weights=weights))
    delta, low, high = paired_difference(truth, truth, predicted, "accuracy", n_resamples=200)
    assert delta == pytest.approx(1 - np.mean(truth == predicted)) and low < delta < high


def test_a_labeler_is_never_judged_on_rows_it_was_fitted_on():
    rows = pd.DataFrame({"row_id": [0, 1, 2, 3], "cap": [0.1, 0.2, 0.8, 0.9],
                         "label_semantic": ["invalid", "invalid", "exact", "exact"]})
    with pytest.raises(ValueError, match="both the fitting and the evaluation"):
        compare_labelers(rows, rows.iloc[2:])


# ---------------------------------------------------------------------------------------------------------------
# Command line


def write_scored(tmp_path, frame, signature=SIGNATURE):
    path = tmp_path / "scored.csv"
    frame.to_csv(path, index=False)
    path.with_name("scored.csv.signature.json").write_text(json.dumps(
        {"metrics": {"cap": {"status": "scored", "signature": signature}}}))
    return path


def test_calibrate_fits_on_the_named_split_only(fitted_labelers, tmp_path, capsys):
    frame, _ = fitted_labelers
    frame = frame.assign(row_id=range(len(frame)), label_semantic=components_frame()[1])
    scored = write_scored(tmp_path, frame)
    splits = tmp_path / "splits.csv"
    pd.DataFrame({"row_id": frame["row_id"], "split": ["validation"] * 40 + ["test"] * 200}).to_csv(splits, index=False)
    assert main(["calibrate", str(scored), "--splits", str(splits), "--split", "validation", "-o",
                 str(tmp_path / "c.json")]) == 0
    labeler = load(tmp_path / "c.json", cap_signature=SIGNATURE)
    assert labeler.method == "components" and labeler.provenance.row_ids == tuple(range(40))
    assert labeler.provenance.splits.startswith("splits.csv#sha256:")
    assert main(["calibrate", str(scored), "--method", "thresholds", "-o", str(tmp_path / "t.json")]) == 0
    assert load(tmp_path / "t.json").provenance.n == 240  # no split named: every row
    assert main(["calibrate", str(scored), "--split", "validation", "-o", str(tmp_path / "x.json")]) == 2
    assert "no split column" in capsys.readouterr().err
    scored.with_name("scored.csv.signature.json").unlink()
    assert main(["calibrate", str(scored), "-o", str(tmp_path / "y.json")]) == 2
    assert "backbone its CAP scores came from is unknown" in capsys.readouterr().err


@pytest.mark.usefixtures("one_torch_thread")
def test_score_classify_refuses_a_calibration_of_another_backbone(tmp_path, capsys):
    # the shipped calibration names the offline backbone; scores of any other NLI model must not use it
    from tests.test_cli import write_correctness
    from tests.tiny_models import build_nli_checkpoint
    import yaml

    from caplib.profiles import load_profile

    data = yaml.safe_load(load_profile("offline").source.read_text())
    data["name"], data["nli"]["model"] = "tiny", str(build_nli_checkpoint(tmp_path / "model"))
    (tmp_path / "tiny.yaml").write_text(yaml.safe_dump(data))
    source = write_correctness(tmp_path / "in.csv")
    common = ["score", str(source), "--profile", str(tmp_path / "tiny.yaml"), "--cache-dir", str(tmp_path / "cache"),
              "--no-progress"]
    assert main([*common, "-o", str(tmp_path / "out.csv"), "--classify", str(shipped_path())]) == 2
    error = capsys.readouterr().err
    assert "fitted for CAP scores with nli builtin:offline-nli#sha256:" in error
    assert f"but these scores have nli {tmp_path / 'model'}" in error or "but these scores have nli " in error
    assert not (tmp_path / "out.csv").exists()
    # a calibration fitted on this backbone's scores applies: cap_label and its confidence are written
    assert main([*common, "-o", str(tmp_path / "scored.csv"), "--components"]) == 0
    assert main(["calibrate", str(tmp_path / "scored.csv"), "-o", str(tmp_path / "own.json")]) == 0
    assert main([*common, "-o", str(tmp_path / "out.csv"), "--classify", str(tmp_path / "own.json")]) == 0
    out = pd.read_csv(tmp_path / "out.csv")
    assert {"cap_label", "cap_label_confidence"} <= set(out.columns) and "cap_d_forward" not in out.columns
    assert set(out["cap_label"]) <= set(LABELS) and out["cap_label_confidence"].between(0, 1).all()
    sidecar = json.loads((tmp_path / "out.csv.signature.json").read_text())
    assert sidecar["classify"]["signature"].startswith("calibration|method:components|")


# ---------------------------------------------------------------------------------------------------------------
# The offline profile's shipped calibration


def test_the_shipped_calibration_was_fitted_on_validation_rows_only():
    from caplib.data import SAMPLE_DIR

    labeler = load(shipped_path())
    splits = pd.read_csv(SAMPLE_DIR / "cap_correctness_splits.csv").set_index("row_id")["split"]
    assert labeler.provenance.split == "validation" and labeler.provenance.n == len(labeler.provenance.row_ids)
    assert set(splits.loc[list(labeler.provenance.row_ids)]) == {"validation"}
    assert sorted(labeler.provenance.row_ids) == sorted(splits.index[splits == "validation"])


def offline_backbone_identity() -> str:
    from caplib.checkpoints import BUILTIN_OFFLINE_NLI, CheckpointNotAvailable, resolve_checkpoint

    try:
        return resolve_checkpoint(BUILTIN_OFFLINE_NLI).identity
    except CheckpointNotAvailable:
        pytest.skip("the offline backbone is not built here")


def test_the_profile_calibration_is_fitted_for_the_backbone_built_here():
    from caplib.calibration import for_this_backbone

    identity = offline_backbone_identity()
    path = for_this_backbone()
    assert load(path).provenance.backbone == identity
    assert (path == shipped_path()) == (load(shipped_path()).provenance.backbone == identity)


def test_another_backbone_gets_its_own_calibration_in_the_cache_and_the_shipped_file_is_untouched(
        tmp_path, monkeypatch):
    import types

    import caplib.calibration.shipped as shipped
    import caplib.checkpoints as checkpoints

    before = shipped_path().read_bytes()
    identity = "builtin:offline-nli#sha256:ffffffffffff"  # a machine whose training floats differ
    monkeypatch.setattr(checkpoints, "resolve_checkpoint", lambda *a, **k: types.SimpleNamespace(identity=identity))
    monkeypatch.setenv("CAPLIB_CACHE_DIR", str(tmp_path))
    fits: list[Path] = []

    def build_offline(output, runtime=None):
        fits.append(Path(output))
        labeler = load(shipped_path())
        labeler.provenance = dataclasses.replace(labeler.provenance,
                                                 cap_signature=labeler.provenance.cap_signature.replace(
                                                     labeler.provenance.backbone, identity))
        labeler.save(output)
        return labeler

    monkeypatch.setattr(shipped, "build_offline", build_offline)
    first = shipped.for_this_backbone()
    assert first == tmp_path / "calibration" / "offline-ffffffffffff.json" and load(first).provenance.backbone == identity
    assert shipped.for_this_backbone() == first and len(fits) == 1  # fitted once, then reused
    assert shipped_path().read_bytes() == before


@pytest.mark.slow
def test_refitting_the_shipped_calibration_reproduces_it(tmp_path):
    # stale against the code or the sample (not only the backbone): refit from scratch and compare every number
    identity = offline_backbone_identity()
    from caplib.calibration import build_offline
    from caplib.runtime import Runtime

    shipped = load(shipped_path())
    if shipped.provenance.backbone != identity:
        pytest.skip("another backbone: test_the_shipped_calibration_matches_the_offline_backbone says so")
    again = build_offline(tmp_path / "again.json", runtime=Runtime(progress=False))
    assert again.provenance.row_ids == shipped.provenance.row_ids and again.classes == shipped.classes
    np.testing.assert_allclose(again.coef, shipped.coef, atol=1e-6)
    np.testing.assert_allclose(again.intercept, shipped.intercept, atol=1e-6)
