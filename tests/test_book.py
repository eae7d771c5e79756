"""caplib.book, the chapters' glue: small in-memory frames, metrics that need no model, and a tiny local NLI
checkpoint where CAP is needed."""

from __future__ import annotations

import json
import warnings
from dataclasses import replace

import numpy as np
import pandas as pd
import pytest
import yaml

from caplib import book
from caplib.cap import COMPONENT_COLUMNS, cap
from caplib.profiles import load_profile
from caplib.runtime import Runtime
from caplib.scoring import ScoredFrame, score_frame
from caplib.statements import TemplateStatementGenerator
from caplib.taxonomy import LABELS

NO_CACHE = Runtime(cache=False, progress=False)

ROWS = pd.DataFrame({
    "question": ["Capital of France?", "Capital of Italy?", "Largest planet?", "Boiling point of water?"],
    "gold_answer": ["Paris", "Rome", "Jupiter", "100 degrees"],
    "answer": ["Paris", "Milan", "Jupiter is the largest", "0 degrees"],
    "label_semantic": ["exact", "invalid", "overinclusive_valid", "contradictory"],
    "split": ["test"] * 4,
})


# ----------------------------------------------------------------------------------------------- setup, notes, files


def test_setup_selects_the_headless_backend_and_caplib_never_loads_the_notebook_progress_bar():
    import subprocess
    import sys

    import matplotlib

    book.setup()
    book.setup()  # twice is harmless
    assert matplotlib.get_backend().lower() == "agg"
    # tqdm.auto in a kernel without ipywidgets prints a TqdmWarning block into a chapter (chapter 7 had one): caplib's
    # progress bars are plain tqdm (off in chapters), so importing what shows them loads no notebook bar
    probe = ("import sys, caplib.book, caplib.llm_answers, caplib.nli, caplib.baselines.neural, caplib.fetch, "
             "caplib.statements.seq2seq; print('tqdm.autonotebook' in sys.modules or 'tqdm.auto' in sys.modules)")
    assert subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True).stdout.strip() == "False"


def test_unavailable_note_names_the_dataset_the_reason_and_the_official_files():
    from caplib.data import OFFICIAL_URLS

    note = book.unavailable_note("CAP-Correctness", "data/official/CAP-Correctness.csv not found")
    assert note.startswith("**CAP-Correctness is not available")
    assert "> data/official/CAP-Correctness.csv not found" in note
    assert all(url in note for url in OFFICIAL_URLS.values())


def test_record_writes_indented_json_with_numpy_numbers_as_floats(tmp_path):
    target = tmp_path / "numbers.json"
    book.record({"n": 3, "mean": np.float64(0.25), "count": np.int64(2), "names": ["a"]}, target)
    assert json.loads(target.read_text()) == {"n": 3, "mean": 0.25, "count": 2.0, "names": ["a"]}
    assert target.read_text().startswith('{\n  "n": 3')


def test_load_datasets_selects_the_split_and_keeps_the_whole_files():
    datasets = book.load_datasets("offline", "validation", row_limit=7)
    assert len(datasets.correctness) == 7 and len(datasets.statements) == 7
    assert set(datasets.correctness["split"]) == {"validation"}
    assert len(datasets.full_correctness) > 7 and set(datasets.full_correctness["split"]) == {"test", "validation"}
    assert datasets.skipped == {} and datasets.notes == []


def test_load_datasets_gives_the_reason_for_a_missing_file(tmp_path):
    datasets = book.load_datasets("offline", data_path=tmp_path / "absent.csv")
    assert datasets.correctness is None and datasets.full_correctness is None
    assert datasets.statements is not None
    assert list(datasets.skipped) == ["CAP-Correctness"] and "absent.csv" in datasets.skipped["CAP-Correctness"]
    assert len(datasets.notes) == 1 and datasets.notes[0].startswith("**CAP-Correctness is not available")
    with pytest.raises(ValueError, match="no profile 'mine'"):
        book.load_datasets("mine")


# ----------------------------------------------------------------------------------------------- scoring a split


def test_score_rows_records_signatures_as_text_skips_with_reasons_and_counts_classes():
    scores = book.score_rows(ROWS, "offline", ["rouge_l", "comet", "em"], runtime=NO_CACHE, split="test")
    assert scores.available and scores.run == ["rouge_l", "em"]
    assert scores.frame["em"].tolist() == [1.0, 0.0, 0.0, 0.0]
    assert scores.frame["rouge_l"].tolist() == pytest.approx([1.0, 0.0, 0.4, 0.5])  # F1 of the tokens LCS
    assert scores.signatures == {"rouge_l": str(scores.scored.signatures["rouge_l"]), "em": "em|norm:squad"}
    assert all(isinstance(value, str) for value in scores.signatures.values())
    assert list(scores.skipped) == ["comet"]
    assert scores.numbers == {"signatures": scores.signatures, "skipped": scores.skipped, "n_rows": 4}
    scores.numbers["signatures"]["evaluation"] = "x"  # a fresh dict on every call: recording does not alias
    assert "evaluation" not in scores.numbers["signatures"]
    assert scores.class_counts == {label: int(label in set(ROWS["label_semantic"])) for label in LABELS}
    summary = scores.summary
    assert summary.startswith("**4 rows** of split `test`; classes: {'exact': 1, ")
    assert "Scored: rouge_l, em." in summary and "\n\n**comet skipped**: " in summary
    assert scores.notes.startswith("**comet skipped**: ")
    assert scores.not_run("comet") == f"**COMET did not run here**: {scores.skipped['comet']}."
    assert scores.not_run("cap") == "**CAP did not run here**: not in `metrics`."


def test_score_rows_summary_says_when_rows_were_cut_or_had_no_split():
    scores = book.score_rows(ROWS.drop(columns="split").head(2), "offline", ["em"], runtime=NO_CACHE, split="test",
                             row_limit=2)
    assert scores.summary.startswith("**2 rows** of split `test` (no splits file given: all rows), first 2 only "
                                     "(`row_limit`); ")
    assert scores.notes == "" and "Scored: em.\n\n**Too few rows for a conclusion**: exact 1, equivalent 0, " in scores.summary
    assert scores.caution.endswith("no comparison with the paper is drawn from them.")
    unlabelled = book.score_rows(ROWS.drop(columns="label_semantic"), "offline", ["em"], runtime=NO_CACHE)
    assert unlabelled.class_counts == {} and unlabelled.summary == "**4 rows**. Scored: em."


def test_the_summary_says_how_many_nli_pairs_were_truncated():
    scores = book.score_rows(ROWS, "offline", ["em"], runtime=NO_CACHE)
    scored = ScoredFrame(scores.scored.frame, {**scores.scored.metrics, "cap": {
        "status": "scored", "signature": None, "truncated_pairs": 3}})
    truncated = replace(scores, scored=scored)
    assert truncated.notes == "3 NLI pair(s) exceed the model's max_length and were truncated."
    assert truncated.summary.endswith(truncated.notes) and "truncated" not in scores.summary


def test_score_split_selects_the_split_of_the_bundled_sample():
    scores = book.score_split("offline", ["em"], split="validation", row_limit=16, runtime=NO_CACHE)
    assert scores.numbers["n_rows"] == 16 and set(scores.rows["split"]) == {"validation"}
    assert sum(scores.class_counts.values()) == 16
    assert scores.frame["em"].isin([0.0, 1.0]).all()


def test_score_split_without_data_computes_nothing_and_says_why(tmp_path):
    scores = book.score_split("offline", ["em"], data_path=tmp_path / "absent.csv", runtime=NO_CACHE)
    assert not scores.available and scores.run == [] and scores.class_counts == {}
    assert scores.numbers == {"signatures": {}, "skipped": {"data": scores.reason}}
    assert "absent.csv" in scores.reason
    assert scores.summary == f"**No data, nothing computed.** {scores.reason}."
    assert scores.not_run("cap") == f"**CAP did not run here**: {scores.reason}."
    with pytest.raises(ValueError, match="nothing was scored"):
        scores.frame


def test_class_summary_computes_the_protocol_measures():
    scores = [0.9, 0.8, 0.3, 0.5, 0.1]
    labels = ["exact", "exact", "partial", "invalid", "invalid"]
    summary = book.class_summary(scores, labels, missing="skip")
    assert summary["class_means"] == pytest.approx({"exact": 0.85, "partial": 0.3, "invalid": 0.3})
    # 2 x 1 exact>partial + 2 x 2 exact>invalid + 1 x 2 partial>invalid = 8 pairs; 0.3 < 0.5 misses one
    assert summary["pairwise_accuracy"] == pytest.approx(7 / 8)
    assert summary["violations"] == [["partial", "invalid"]]  # equal means: a violation (<=)
    assert -1 <= summary["kendall"] <= summary["spearman"] <= 1
    with pytest.raises(ValueError):
        book.class_summary(scores, labels)  # missing="raise": five classes are absent


def test_beside_paper_puts_the_papers_rows_first_and_takes_this_run_minus_paper():
    run = pd.DataFrame({"spearman": [44.254, 42.258], "kendall": [34.891, 37.796]}, index=["cap", "em"])
    beside = book.beside_paper(2, run, ["spearman"])
    assert list(beside.index) == ["BLEU", "ROUGE-L", "METEOR", "BERTScore", "COMET", "CAP", "EM"]
    assert list(beside.columns) == [("spearman", part) for part in ("paper", "this run", "difference")]
    assert beside.loc["CAP"].tolist() == [60.37, 44.25, -16.12]  # 44.254 - 60.37 = -16.116
    assert np.isnan(beside.loc["COMET", ("spearman", "this run")])  # the paper's metric this run lacks
    assert np.isnan(beside.loc["EM", ("spearman", "paper")])  # this run's metric the paper lacks
    assert book.beside_paper(2, None) is None and book.beside_paper(2, run.iloc[0:0]) is None


def test_beside_paper_generalises_to_keyed_and_multi_keyed_rows_and_keeps_counts_whole():
    agreement = pd.DataFrame({"score": [96.978, 97.168, 97.563]}, index=["kappa", "linear", "quadratic"])
    tab8 = book.beside_paper(8, agreement, index="key", decimals=1)  # Tab. 8 prints one decimal
    assert tab8.loc["kappa"].tolist() == [77.9, 97.0, 19.1]  # 96.978 - 77.9 = 19.078
    grid = pd.DataFrame({"alpha": [0.3, 0.85, 1.0], "lam": [0.0, 0.3, 0.7], "spearman": [37.40, 42.71, 50.80],
                         "violations": [7, 6, 3]}).set_index(["alpha", "lam"])
    tab12 = book.beside_paper(12, grid, ["spearman", "violations"], index=["alpha", "lam"],
                              decimals={"violations": 0}, extra_rows=False)
    # the paper's five settings in its order, not this run's extra (1.0, 0.7)
    assert tab12.index.tolist() == [(0.3, 0.0), (0.5, 0.0), (0.5, 0.3), (0.7, 0.3), (0.85, 0.3)]
    assert tab12.loc[(0.3, 0.0)].tolist() == [54.20, 37.40, -16.80, 4, 7, 3]
    assert str(tab12[("violations", "difference")].dtype) == "Int64"
    assert tab12[("violations", "this run")].isna().tolist() == [False, True, True, True, False]
    classes = pd.DataFrame({"Synthetic": [41.21, 90.42]}, index=["overinclusive_valid", "exact"])
    tab17 = book.beside_paper(17, classes, index="label")
    assert tab17.index[-1] == "alternative_correct"  # the paper's row order (Alt. printed last)
    assert tab17.loc["overinclusive_valid", "Synthetic"].tolist() == [50.07, 41.21, -8.86]
    text = pd.DataFrame({"BLEU": [96.64], "EM": [76.7]}, index=["statements"])  # numbers printed in the text
    ours = pd.DataFrame({"BLEU": [66.316], "EM": [68.18]}, index=["statements"])
    assert book.beside_paper(text, ours, decimals={"EM": 1}).loc["statements"].tolist() == [
        96.64, 66.32, -30.32, 76.7, 68.2, -8.5]


def test_probabilities_splits_the_component_columns_by_direction():
    frame = pd.DataFrame([[0.7, 0.2, 0.1, 0.1, 0.3, 0.6], [0.2, 0.5, 0.3, 0.6, 0.3, 0.1]],
                         columns=list(COMPONENT_COLUMNS[3:]))
    forward, backward = book.probabilities(frame)
    assert forward.tolist() == [[0.7, 0.2, 0.1], [0.2, 0.5, 0.3]]
    assert backward.tolist() == [[0.1, 0.3, 0.6], [0.6, 0.3, 0.1]]
    assert cap(forward, backward, alpha=1.0, lam=0.0).tolist() == [0.7, 0.2]


# ----------------------------------------------------------------------------------------------- one CAP scorer


@pytest.fixture(scope="module")
def profile(tmp_path_factory):
    """The offline profile with a tiny local NLI checkpoint (random weights, deterministic) and template statements."""
    pytest.importorskip("torch")
    from tests.tiny_models import build_nli_checkpoint

    directory = tmp_path_factory.mktemp("book")
    data = yaml.safe_load(load_profile("offline").source.read_text())
    data["name"], data["nli"]["model"] = "tiny", str(build_nli_checkpoint(directory / "nli"))
    (directory / "tiny.yaml").write_text(yaml.safe_dump(data))
    return load_profile(directory / "tiny.yaml")


@pytest.fixture()
def statement_rows():
    generate = TemplateStatementGenerator().generate
    return ROWS.assign(premise=generate(list(ROWS["question"]), list(ROWS["gold_answer"])),
                       hypothesis=generate(list(ROWS["question"]), list(ROWS["answer"])))


@pytest.mark.usefixtures("one_torch_thread")
def test_a_held_scorer_gives_what_score_frame_builds_itself(profile, statement_rows):
    scorer, missing = book.cap_scorer(profile, NO_CACHE)
    assert missing is None
    for regenerate in (False, True):
        mine = score_frame(statement_rows, profile, ("cap",), regenerate_statements=regenerate, cap_scorer=scorer)
        theirs = score_frame(statement_rows, profile, ("cap",), regenerate_statements=regenerate, runtime=NO_CACHE)
        assert str(mine.signatures["cap"]) == str(theirs.signatures["cap"])
        assert mine.metrics["cap"]["statements"].startswith("regenerated" if regenerate else "input columns")
        columns = list(COMPONENT_COLUMNS)
        np.testing.assert_allclose(mine.frame[columns].to_numpy(), theirs.frame[columns].to_numpy(), atol=1e-6)
        assert mine.frame.index.equals(statement_rows.index)
    given = score_frame(statement_rows, profile, ("cap",), cap_scorer=scorer)
    assert "|statements:given|" in str(given.signatures["cap"])
    assert "|statements:template|" in str(scorer.signature())  # the scorer itself keeps its generator


@pytest.mark.usefixtures("one_torch_thread")
def test_cap_scorer_and_its_statement_generator(profile, monkeypatch, tmp_path):
    scorer, _ = book.cap_scorer(profile, NO_CACHE, alpha=0.5)
    assert scorer.alpha == 0.5 and "|alpha:0.5|" in str(scorer.signature())
    generator, reason = book.statement_generator(scorer)
    assert isinstance(generator, TemplateStatementGenerator) and reason is None
    assert generator is scorer.statement_generator  # built once, reused
    assert book.statement_generator(None, "no NLI model") == (None, "no NLI model")
    monkeypatch.setenv("CAPLIB_OFFLINE_NLI_DIR", str(tmp_path / "missing"))  # caplib.offline_nli.artifact_dir()
    scorer, missing = book.cap_scorer("offline", NO_CACHE)
    assert scorer is None and "no offline NLI backbone in" in missing


def test_with_shortcut_adds_a_metric_or_records_why_not():
    from caplib.shortcut import shortcut_scores

    rows = pd.concat([ROWS.assign(question=ROWS.question + f" ({k})") for k in range(3)], ignore_index=True)
    scores = book.score_rows(rows, "offline", ["em"], runtime=NO_CACHE).with_shortcut(seed=1)
    assert scores.run == ["em", "shortcut"] and scores.signatures["shortcut"].startswith("shortcut|features:17")
    expected = shortcut_scores(rows.gold_answer.tolist(), rows.answer.tolist(), rows.label_semantic.tolist(),
                               rows.question.tolist(), seed=1)
    np.testing.assert_array_equal(scores.frame["shortcut"].to_numpy(), expected)
    unlabelled = book.score_rows(ROWS.drop(columns=["label_semantic"]), "offline", ["em"], runtime=NO_CACHE)
    skipped = unlabelled.with_shortcut()
    assert skipped.run == ["em"] and "label_semantic" in skipped.skipped["shortcut"]
