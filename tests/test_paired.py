"""Paired tests of two metrics (``caplib.evaluation.paired_bootstrap``, ``paired_randomization``, ``caplib compare``):
checked against a brute-force computation that materializes every resample and measures it with scipy and an
explicit pair count, and for calibration under a null built by swapping the two metrics' columns."""

from __future__ import annotations

import json
import re

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from caplib.cli import main
from caplib.evaluation import paired_bootstrap, paired_randomization
from caplib.taxonomy import HARD_PAIRS, LABELS, SEVERITY, STRICT_PAIRS

CLASS = {label: index for index, label in enumerate(LABELS)}
STRICT = np.zeros((len(LABELS), len(LABELS)), dtype=bool)
for _higher, _lower in STRICT_PAIRS:
    STRICT[CLASS[_higher], CLASS[_lower]] = True


def _data(seed: int, per_class: int, noise: tuple[float, float] = (0.6, 1.2)):
    """Labels (``per_class`` of each class) and two metrics, a less noisy than b, on a coarse grid (ties)."""
    rng = np.random.default_rng(seed)
    labels = np.repeat(LABELS, per_class)
    severity = np.array([SEVERITY[label] for label in labels], dtype=float)
    a = np.round(severity + rng.normal(0, noise[0], len(labels)), 1)
    b = np.round(severity + rng.normal(0, noise[1], len(labels)), 1)
    return labels, a, b


def _brute(scores: np.ndarray, labels: np.ndarray) -> dict[str, float]:
    """Spearman (scipy), pairwise accuracy (Eq. 8) and the hard pairs, counted over the full pair matrix."""
    classes = np.array([CLASS[label] for label in labels])
    greater = scores[:, None] > scores[None, :]
    strict = STRICT[classes[:, None], classes[None, :]]
    result = {"spearman": stats.spearmanr(scores, [SEVERITY[label] for label in labels]).statistic,
              "pairwise_accuracy": (greater & strict).sum() / strict.sum()}
    for higher, lower in HARD_PAIRS:
        pair = (classes[:, None] == CLASS[higher]) & (classes[None, :] == CLASS[lower])
        name = f"Acc {'>'.join(_short(label) for label in (higher, lower))}"
        result[name] = (greater & pair).sum() / pair.sum()
    return result


def _short(label: str) -> str:
    return {"equivalent": "Eq", "partial": "Part", "overinclusive_valid": "OV", "overinclusive_invalid": "OI",
            "alternative_correct": "Alt", "invalid": "Inv"}[label]


def test_paired_bootstrap_equals_a_brute_force_computation():
    labels, a, b = _data(seed=3, per_class=15)
    n, resamples, seed = len(labels), 200, 11
    table = paired_bootstrap(a, b, labels, n_resamples=resamples, seed=seed, names=("a", "b"))
    # the documented resampling: n indices drawn with replacement per resample from default_rng(seed)
    indices = np.random.default_rng(seed).integers(0, n, size=(resamples, n))
    brute = pd.DataFrame([{name: x - y for (name, x), y in zip(_brute(a[row], labels[row]).items(),
                                                                 _brute(b[row], labels[row]).values())}
                          for row in indices])
    point_a, point_b = _brute(a, labels), _brute(b, labels)
    assert list(table.index) == list(point_a)
    for name in table.index:
        differences = brute[name].to_numpy()
        assert table.loc[name, "a"] == pytest.approx(point_a[name], abs=1e-12)
        assert table.loc[name, "delta"] == pytest.approx(point_a[name] - point_b[name], abs=1e-12)
        low, high = np.percentile(differences, [2.5, 97.5])
        assert (table.loc[name, "low"], table.loc[name, "high"]) == pytest.approx((low, high), abs=1e-12)
        centred = np.abs(differences - differences.mean())
        expected = (1 + np.sum(centred >= abs(point_a[name] - point_b[name]) - 1e-12)) / (1 + resamples)
        assert table.loc[name, "p_value"] == pytest.approx(expected, abs=1e-12)


def test_paired_randomization_equals_a_brute_force_computation():
    labels, a, b = _data(seed=4, per_class=6)
    n, trials, seed = len(labels), 300, 5
    table = paired_randomization(a, b, labels, statistics=("spearman", "pairwise_accuracy", "Acc OV>Part"),
                                 n_trials=trials, seed=seed, names=("a", "b"))
    # the documented test: each example's two scores (as mid-ranks / n) swapped with probability 1/2 per trial
    ranks_a, ranks_b = stats.rankdata(a) / n, stats.rankdata(b) / n
    swaps = np.random.default_rng(seed).integers(2, size=(trials, n)).astype(bool)
    for name in table.index:
        observed = _brute(a, labels)[name] - _brute(b, labels)[name]
        null = np.array([_brute(np.where(swap, ranks_b, ranks_a), labels)[name]
                         - _brute(np.where(swap, ranks_a, ranks_b), labels)[name] for swap in swaps])
        expected = (1 + np.sum(np.abs(null) >= abs(observed) - 1e-12)) / (1 + trials)
        assert table.loc[name, "delta"] == pytest.approx(observed, abs=1e-12)
        assert table.loc[name, "p_value"] == pytest.approx(expected, abs=1e-12)


def test_p_values_are_uniform_under_a_null_built_by_swapping_columns():
    """Two metrics of different quality, each row's pair of scores swapped with probability 1/2: the two columns are
    then exchangeable (H0 true), so over 200 seeds the p-values must look uniform (KS test p > 0.01)."""
    p_values: dict[tuple[str, str], list[float]] = {}
    for seed in range(200):
        labels, x, y = _data(seed=1000 + seed, per_class=20)
        swap = np.random.default_rng(seed).integers(2, size=len(labels)).astype(bool)
        a, b = np.where(swap, y, x), np.where(swap, x, y)
        statistics = ("spearman", "pairwise_accuracy")
        tables = {"bootstrap": paired_bootstrap(a, b, labels, statistics, n_resamples=500, seed=seed),
                  "randomization": paired_randomization(a, b, labels, statistics, n_trials=500, seed=seed)}
        for test, table in tables.items():
            for name in statistics:
                p_values.setdefault((test, name), []).append(table.loc[name, "p_value"])
    for key, values in p_values.items():
        assert stats.kstest(values, "uniform").pvalue > 0.01, key


def test_a_real_difference_is_found():
    labels, a, b = _data(seed=8, per_class=40, noise=(0.3, 1.5))
    for table in (paired_bootstrap(a, b, labels, ("spearman",), n_resamples=1000),
                  paired_randomization(a, b, labels, ("spearman",), n_trials=1000)):
        assert table.loc["spearman", "delta"] > 0.1 and table.loc["spearman", "p_value"] < 0.01


def test_a_rare_class_leaves_its_hard_pair_without_an_interval_when_asked():
    labels, a, b = _data(seed=2, per_class=10)
    keep = np.r_[np.flatnonzero(labels != "partial"), np.flatnonzero(labels == "partial")[:1]]  # one partial row
    labels, a, b = labels[keep], a[keep], b[keep]
    with pytest.raises(ValueError, match="undefined on"):
        paired_bootstrap(a, b, labels, ("Acc OV>Part",), n_resamples=200)
    table = paired_bootstrap(a, b, labels, ("spearman", "Acc OV>Part"), n_resamples=200, undefined="nan")
    assert np.isnan(table.loc["Acc OV>Part", "p_value"]) and not np.isnan(table.loc["Acc OV>Part", "delta"])
    assert 0 < table.attrs["undefined"]["Acc OV>Part"] < 200 and np.isfinite(table.loc["spearman", "p_value"])


def _scored(path, labels, a, b, split=None):
    frame = pd.DataFrame({"row_id": range(len(labels)), "label_semantic": labels, "cap": a, "bertscore": b})
    if split is not None:
        frame["split"] = split
    frame.to_csv(path, index=False)
    return path


def test_compare_command_prints_both_tests_and_their_signatures(tmp_path, capsys):
    labels, a, b = _data(seed=5, per_class=20)
    split = np.where(np.arange(len(labels)) % 4 == 0, "validation", "test")
    scored = _scored(tmp_path / "scored.csv", labels, a, b, split)
    args = [str(scored), "--metrics", "cap,bertscore", "--split", "test", "--resamples", "300", "--trials", "300"]
    assert main(["compare", *args, "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    test = split == "test"
    expected = paired_bootstrap(a[test], b[test], labels[test], n_resamples=300, names=("cap", "bertscore"))
    randomization = paired_randomization(a[test], b[test], labels[test], n_trials=300, names=("cap", "bertscore"))
    assert report["rows"] == int(test.sum()) and report["metrics"] == ["cap", "bertscore"]
    for record in report["statistics"]:
        name = record["statistic"]
        assert record["delta"] == pytest.approx(expected.loc[name, "delta"], abs=1e-12)
        assert (record["low"], record["high"]) == pytest.approx(tuple(expected.loc[name, ["low", "high"]]))
        assert record["p_value"] == pytest.approx(expected.loc[name, "p_value"])
        assert record["randomization_p_value"] == pytest.approx(randomization.loc[name, "p_value"])
    assert report["signatures"] == [expected.attrs["signature"], randomization.attrs["signature"]]
    assert main(["compare", *args]) == 0
    printed = capsys.readouterr().out
    assert "p-value" in printed and "AR p-value" in printed and "95% low" in printed
    assert expected.attrs["signature"] in printed and "Acc OV>Part" in printed


@pytest.mark.parametrize("extra, message", [
    (["--metrics", "cap"], "two score columns"),
    (["--metrics", "cap,comet"], r"no column\(s\) \['comet'\]"),
    (["--metrics", "cap,bertscore", "--split", "test"], "no split column"),
    (["--metrics", "cap,bertscore", "--statistics", "bleu"], "unknown statistic"),
    (["--metrics", "cap,bertscore", "--resamples", "0"], "--resamples must be positive"),
])
def test_compare_command_says_what_is_wrong(tmp_path, capsys, extra, message):
    labels, a, b = _data(seed=6, per_class=5)
    scored = _scored(tmp_path / "scored.csv", labels, a, b)
    assert main(["compare", str(scored), *extra]) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err and re.search(message, err), err
