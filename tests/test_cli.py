"""The ``caplib`` command line on tiny CSVs with a tiny locally built NLI checkpoint."""

from __future__ import annotations

import csv
import json
import os
import re
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest
from scipy import stats

os.environ["HF_HUB_OFFLINE"] = "1"
os.environ["TRANSFORMERS_OFFLINE"] = "1"

from caplib.runtime import Runtime  # noqa: E402
from caplib.cap import CAPScorer  # noqa: E402
from caplib.cli import main  # noqa: E402
from caplib.data import CORRECTNESS_COLUMNS  # noqa: E402
from caplib.profiles import ProfileError, load_profile  # noqa: E402
from caplib.taxonomy import SEVERITY  # noqa: E402
from tests.tiny_models import tiny_profile  # noqa: E402

torch = pytest.importorskip("torch")

# (question, gold, answer, hypothesis = answer statement, premise = gold statement, label): one row per class.
ROWS = [
    ("Where is Sofia?", "Bulgaria", "Bulgaria", "Sofia is in Bulgaria.", "Sofia is in Bulgaria.", "exact"),
    ("Where is Sofia?", "Bulgaria", "in Bulgaria", "Sofia is located in Bulgaria.", "Sofia is in Bulgaria.",
     "equivalent"),
    ("Name a planet.", "Mars", "Venus", "Venus is a planet.", "Mars is a planet.", "alternative_correct"),
    ("What melts?", "ice", "ice, which is frozen water", "Ice, which is frozen water, melts.", "Ice melts.",
     "overinclusive_valid"),
    ("Name two metals.", "iron and gold", "iron", "Iron is a metal.", "Iron and gold are metals.", "partial"),
    ("Name two metals.", "iron and gold", "iron and salt", "Iron and salt are metals.", "Iron and gold are metals.",
     "overinclusive_invalid"),
    ("What boils at 100 degrees?", "water", "iron", "Iron boils at 100 degrees.", "Water boils at 100 degrees.",
     "invalid"),
    ("Does the sun reflect light?", "no", "yes", "The sun reflects light.", "The sun does not reflect light.",
     "contradictory"),
]


def write_correctness(path, rows=ROWS, header=CORRECTNESS_COLUMNS):
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(header)
        for question, gold, answer, hypothesis, premise, label in rows:
            record = {"question": question, "dataset": "ARC", "gold_answer": gold, "answer": answer,
                      "hypothesis": hypothesis, "premise": premise, "label_semantic": label,
                      "label_semantic_manual": ""}
            writer.writerow([record[column] for column in header])
    return path


def write_with_cell(path, row, field, value):
    """ROWS written as CAP-Correctness with one cell changed: ``field`` indexes (question, gold, answer, hypothesis,
    premise, label)."""
    rows = [tuple(value if (i, j) == (row, field) else cell for j, cell in enumerate(r)) for i, r in enumerate(ROWS)]
    return write_correctness(path, rows=rows)


pytestmark = pytest.mark.usefixtures("one_torch_thread")


@pytest.fixture(scope="module")
def profile(tmp_path_factory):
    """The offline profile with the tiny checkpoint as NLI model."""
    return tiny_profile(tmp_path_factory.mktemp("cli"))


def run(*args):
    return main([str(arg) for arg in args])


def test_score_writes_columns_and_signatures(profile, tmp_path, capsys):
    source = write_correctness(tmp_path / "in.csv")
    out = tmp_path / "out.csv"
    arguments = ("score", source, "-o", out, "--profile", profile, "--metrics", "cap,rouge_l,em,comet",
                 "--components", "--cache-dir", tmp_path / "cache", "--no-progress",
                 "--cpu-workers", "2", "--batch-size", "4")  # 4 batches, 2 at a time
    # COMET was asked for and cannot run offline: the run fails and writes nothing, unless --allow-skip
    assert run(*arguments) == 3 and not out.exists()
    assert "cannot run comet" in capsys.readouterr().err
    status = run(*arguments, "--allow-skip")
    captured = capsys.readouterr()
    assert status == 0, captured.err
    frame = pd.read_csv(out, keep_default_na=False)
    assert list(frame.columns[: 1 + len(CORRECTNESS_COLUMNS)]) == ["row_id", *CORRECTNESS_COLUMNS]
    for column in ("cap", "rouge_l", "em", "cap_d_forward", "cap_p_contra_bwd"):
        assert column in frame.columns, column
    assert "comet" not in frame.columns  # no offline COMET: skipped, never faked
    # CAP scored the given statements, gold statement (premise) first; one batch at a time gives the same numbers
    settings = load_profile(profile)
    direct = CAPScorer(nli_model=settings.nli_model, batch_size=settings.batch_size,
                       runtime=Runtime(cache=False, progress=False, cpu_workers=1))
    np.testing.assert_allclose(frame.cap, direct.score(frame.premise, frame.hypothesis), atol=1e-6)
    assert frame.em.tolist() == [1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0]
    sidecar = json.loads((tmp_path / "out.csv.signature.json").read_text())
    assert sidecar["rows"] == 8 and sidecar["profile"]["name"] == "tiny"
    assert sidecar["metrics"]["cap"]["signature"] == str(direct.signature())
    assert sidecar["metrics"]["cap"]["statements"].startswith("input columns premise")
    assert sidecar["metrics"]["rouge_l"]["signature"].startswith("rouge_l|")
    assert sidecar["metrics"]["comet"]["status"] == "skipped" and sidecar["metrics"]["comet"]["reason"]
    assert f"cap: {str(direct.signature())}" in captured.out
    assert "skipped comet" in captured.err


def test_evaluate_reports_the_protocol(profile, tmp_path, capsys):
    source = write_correctness(tmp_path / "in.csv")
    out = tmp_path / "out.csv"
    assert run("score", source, "-o", out, "--profile", profile, "--metrics", "cap,em", "--no-cache",
               "--no-progress") == 0
    capsys.readouterr()
    assert run("evaluate", out, "--label-column", "label_semantic", "--json") == 0
    report = json.loads(capsys.readouterr().out)
    by_metric = {row["metric"]: row for row in report["metrics"]}
    assert set(by_metric) == {"cap", "em"}
    frame = pd.read_csv(out)
    ranks = [SEVERITY[label] for label in frame.label_semantic]
    assert by_metric["cap"]["spearman"] == pytest.approx(stats.spearmanr(frame.cap, ranks)[0], abs=1e-12)
    assert by_metric["em"]["n"] == 8
    assert run("evaluate", out) == 0
    assert "spearman" in capsys.readouterr().out


def test_rescoring_an_output_replaces_its_columns(profile, tmp_path, capsys):
    source = write_correctness(tmp_path / "in.csv")
    first, second = tmp_path / "first.csv", tmp_path / "second.csv"
    options = ("--profile", profile, "--no-cache", "--no-progress")
    assert run("score", source, "-o", first, "--metrics", "cap,em", *options) == 0
    assert run("score", first, "-o", second, "--metrics", "cap", *options) == 0
    assert "replacing the input's column(s) ['cap']" in capsys.readouterr().err
    before, after = pd.read_csv(first, keep_default_na=False), pd.read_csv(second, keep_default_na=False)
    assert after.columns.tolist() == [*before.columns.drop("cap"), "cap"]
    np.testing.assert_allclose(after.cap, before.cap, atol=1e-12)
    assert after.label_semantic.tolist() == [row[5] for row in ROWS]


def test_generic_csv_with_statement_columns(profile, tmp_path):
    source = tmp_path / "pairs.csv"
    pd.DataFrame({"premise": ["Ice melts.", "Iron is a metal."], "hypothesis": ["Ice melts.", "Salt is a metal."],
                  "note": ["a", "b"]}).to_csv(source, index=False)
    out = tmp_path / "pairs_out.csv"
    assert run("score", source, "-o", out, "--profile", profile, "--no-cache", "--no-progress") == 0
    frame = pd.read_csv(out)
    assert frame.columns.tolist() == ["row_id", "premise", "hypothesis", "note", "cap"]
    assert frame.cap.between(0, 1).all()


def test_regenerated_statements(profile, tmp_path):
    statements = pytest.importorskip("caplib.statements")
    if not hasattr(statements, "TemplateStatementGenerator"):
        pytest.skip("caplib.statements has no TemplateStatementGenerator yet")
    source = write_correctness(tmp_path / "in.csv")
    out = tmp_path / "out.csv"
    assert run("score", source, "-o", out, "--profile", profile, "--regenerate-statements", "--components",
               "--no-cache", "--no-progress") == 0
    frame = pd.read_csv(out, keep_default_na=False)
    generator = statements.TemplateStatementGenerator()
    assert frame.cap_hypothesis.tolist() == generator.generate(list(frame.question), list(frame.answer))
    assert frame.cap_premise.tolist() == generator.generate(list(frame.question), list(frame.gold_answer))
    sidecar = json.loads((tmp_path / "out.csv.signature.json").read_text())
    assert sidecar["metrics"]["cap"]["statements"] == "regenerated with builtin:template"


def expect_error(capsys, *args, contains):
    assert run(*args) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err
    for part in contains:
        assert re.search(part, err), (part, err)


def test_missing_column(profile, tmp_path, capsys):
    header = [c for c in CORRECTNESS_COLUMNS if c != "premise"]
    source = write_correctness(tmp_path / "in.csv", header=header)
    expect_error(capsys, "score", source, "-o", tmp_path / "o.csv", "--profile", profile,
                 contains=["in.csv", r"missing column\(s\) \['premise'\]", "column 'premise'"])
    generic = tmp_path / "generic.csv"
    generic.write_text("question,gold_answer\nq,g\n")
    expect_error(capsys, "score", generic, "-o", tmp_path / "o.csv", "--profile", profile,
                 contains=["generic.csv", "no columns to score", "column 'answer'"])


def test_empty_answer_in_a_correctness_file_drops_the_row_with_one_line(profile, tmp_path, capsys):
    # as the authors drop the release's one row without an answer (row 4306); the others keep their row_id
    source = write_with_cell(tmp_path / "in.csv", row=3, field=2, value="  ")  # answer
    assert run("score", source, "-o", tmp_path / "o.csv", "--profile", profile, "--metrics", "em") == 0
    err = capsys.readouterr().err
    assert re.search(r"^caplib: .*in\.csv: dropped 1 row\(s\) without an answer, row_id 3 \(line 5\)", err, re.M)
    assert "Traceback" not in err and "DroppedRowsWarning" not in err
    scored = pd.read_csv(tmp_path / "o.csv")
    assert scored.row_id.tolist() == [row for row in range(len(ROWS)) if row != 3]


def test_empty_answer_in_another_csv_is_an_error(profile, tmp_path, capsys):
    source = tmp_path / "in.csv"
    pd.DataFrame({"question": ["q1", "q2"], "gold_answer": ["a", "b"], "answer": ["a", " "]}).to_csv(source,
                                                                                                   index=False)
    expect_error(capsys, "score", source, "-o", tmp_path / "o.csv", "--profile", profile,
                 contains=[r"row(_id)? 1 \(line 3\)", "column 'answer'", "empty"])
    assert not (tmp_path / "o.csv").exists()


def test_unknown_label(profile, tmp_path, capsys):
    source = write_with_cell(tmp_path / "in.csv", row=6, field=5, value="sort of right")  # label_semantic
    expect_error(capsys, "score", source, "-o", tmp_path / "o.csv", "--profile", profile,
                 contains=[r"row(_id)? 6 \(line 8\)", "column 'label_semantic'", "'sort of right'"])


def test_bad_options(profile, tmp_path, capsys):
    source = write_correctness(tmp_path / "in.csv")
    expect_error(capsys, "score", source, "-o", tmp_path / "o.csv", "--profile", profile, "--metrics", "cap,blue",
                 contains=[r"unknown metric\(s\) \['blue'\]"])
    expect_error(capsys, "score", source, "-o", tmp_path / "o.csv", "--profile", "nope",
                 contains=["no profile 'nope'"])
    expect_error(capsys, "score", tmp_path / "absent.csv", "-o", tmp_path / "o.csv", "--profile", profile,
                 contains=["absent.csv"])
    expect_error(capsys, "evaluate", source, "--label-column", "label", contains=["no label column 'label'"])
    expect_error(capsys, "score", source, "-o", tmp_path / "o.csv", "--profile", profile, "--cpu-workers", "0",
                 contains=["cpu_workers must be a positive integer"])


def test_cache_clear(profile, tmp_path, capsys):
    source = write_correctness(tmp_path / "in.csv")
    cache_dir = tmp_path / "cache"
    assert run("score", source, "-o", tmp_path / "o.csv", "--profile", profile, "--cache-dir", cache_dir,
               "--no-progress") == 0
    capsys.readouterr()
    assert run("cache", "clear", "--cache-dir", cache_dir) == 0
    assert "removed 15 cached entries" in capsys.readouterr().out  # 8 rows x 2 directions, exact row once


def test_module_entry_point_exits_2_without_traceback(tmp_path):
    source = tmp_path / "bad.csv"
    source.write_text("question,gold\nq,g\n")
    result = subprocess.run([sys.executable, "-m", "caplib", "score", str(source), "-o", str(tmp_path / "o.csv")],
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 2
    assert "caplib: error:" in result.stderr and "Traceback" not in result.stderr


def test_evaluate_shortcut_adds_the_out_of_fold_surface_baseline(tmp_path, capsys):
    from caplib.shortcut import shortcut_scores

    out = write_correctness(tmp_path / "in.csv")
    frame = pd.read_csv(out, dtype=str, keep_default_na=False)
    frame["em"] = [1.0 if a == g else 0.0 for a, g in zip(frame.answer, frame.gold_answer)]
    frame.to_csv(out, index=False)
    assert run("evaluate", out, "--metrics", "em", "--shortcut", "--json", "--seed", "3") == 0
    captured = capsys.readouterr()
    by_metric = {row["metric"]: row for row in json.loads(captured.out)["metrics"]}
    expected = shortcut_scores(frame.gold_answer.tolist(), frame.answer.tolist(), frame.label_semantic.tolist(),
                               frame.question.tolist(), seed=3)
    ranks = [SEVERITY[label] for label in frame.label_semantic]
    assert set(by_metric) == {"em", "shortcut"}
    assert by_metric["shortcut"]["spearman"] == pytest.approx(stats.spearmanr(expected, ranks)[0], abs=1e-12)
    assert "shortcut|features:17" in captured.err
    frame.drop(columns=["question"]).to_csv(tmp_path / "noq.csv", index=False)
    expect_error(capsys, "evaluate", tmp_path / "noq.csv", "--metrics", "em", "--shortcut",
                 contains=["noq.csv", r"--shortcut needs column\(s\) \['question'\]"])


def test_unwritable_output_is_refused_before_any_model_loads(tmp_path, capsys, monkeypatch):
    import caplib.scoring

    def fail(*args, **kwargs):
        raise AssertionError("scoring started before the output path was checked")

    monkeypatch.setattr(caplib.scoring, "score_frame", fail)
    source = write_correctness(tmp_path / "in.csv")
    (tmp_path / "a_file").write_text("x")
    (tmp_path / "a_dir").mkdir()
    expect_error(capsys, "score", source, "-o", tmp_path / "a_file" / "out.csv", "--metrics", "em",
                 contains=[r"a_file is a file, not a directory"])
    expect_error(capsys, "score", source, "-o", tmp_path / "a_dir", "--metrics", "em", contains=["is a directory"])
    expect_error(capsys, "score", source, "-o", source, "--metrics", "em", contains=["is the input file", "--overwrite"])
    assert source.read_text().startswith("question,")  # the input is untouched


def test_overwrite_replaces_the_input_atomically(tmp_path, capsys):
    source = write_correctness(tmp_path / "in.csv")
    assert run("score", source, "-o", source, "--metrics", "em", "--overwrite", "--no-cache", "--no-progress") == 0
    assert pd.read_csv(source)["em"].tolist() == [1.0] + [0.0] * 7
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in.csv", "in.csv.signature.json"]  # no temporary left


def test_ctrl_c_is_one_line_and_status_130(tmp_path, capsys, monkeypatch):
    import caplib.scoring

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(caplib.scoring, "score_frame", interrupted)
    source = write_correctness(tmp_path / "in.csv")
    assert run("score", source, "-o", tmp_path / "out.csv", "--metrics", "em") == 130
    assert capsys.readouterr().err.strip() == "caplib: interrupted"
    assert not (tmp_path / "out.csv").exists()


def test_a_users_row_id_is_kept(tmp_path, capsys):
    source = tmp_path / "ids.csv"
    pd.DataFrame({"row_id": ["a17", "b3"], "question": ["Where is Sofia?", "Name a planet."],
                  "gold_answer": ["Bulgaria", "Mars"], "answer": ["Bulgaria", "Venus"]}).to_csv(source, index=False)
    assert run("score", source, "-o", tmp_path / "out.csv", "--metrics", "em", "--no-cache", "--no-progress") == 0
    out = pd.read_csv(tmp_path / "out.csv", dtype=str)
    assert out["row_id"].tolist() == ["a17", "b3"] and out["em"].tolist() == ["1.0", "0.0"]


def test_a_simple_file_with_six_schema_columns_is_accepted(tmp_path, capsys):
    """question,gold_answer,answer,premise,hypothesis,label_semantic is a valid scoring input, not a broken
    CAP-Correctness file (it used to fail with "missing dataset, label_semantic_manual")."""
    source = tmp_path / "simple.csv"
    pd.DataFrame([{"question": q, "gold_answer": g, "answer": a, "premise": p, "hypothesis": h,
                   "label_semantic": label} for q, g, a, h, p, label in ROWS]).to_csv(source, index=False)
    assert run("score", source, "-o", tmp_path / "out.csv", "--metrics", "em", "--no-cache", "--no-progress") == 0
    out = pd.read_csv(tmp_path / "out.csv")
    assert len(out) == 8 and out["em"].sum() == 1.0


def test_cache_clear_removes_only_caplibs_own_files_and_says_what_it_did(tmp_path, capsys):
    """Issue 34, item 8: a user's my_app.sqlite3 beside the cache was deleted, a directory named nli.sqlite3 gave a
    traceback and a file as --cache-dir gave status 0."""
    import sqlite3

    from caplib.cache import ContentCache

    ContentCache("nli", {}, tmp_path).put_many({"a": [0.1], "b": [0.2], "c": [0.3]})
    ContentCache("baselines", {}, tmp_path).put_many({"d": 1.0, "e": 0.0})
    with sqlite3.connect(tmp_path / "my_app.sqlite3") as connection:
        connection.execute("CREATE TABLE notes (text TEXT)")
        connection.execute("INSERT INTO notes VALUES ('keep me')")
    connection.close()
    mine = (tmp_path / "my_app.sqlite3").read_bytes()
    (tmp_path / "statements.sqlite3").mkdir()
    (tmp_path / "old.sqlite3").write_bytes(b"garbage" * 50)
    (tmp_path / "baselines.sqlite3.corrupt-12").write_bytes(b"set aside by an earlier run")
    assert run("cache", "clear", "--cache-dir", tmp_path) == 0
    captured = capsys.readouterr()
    assert "Traceback" not in captured.err
    assert (f"removed 5 cached entries in 2 file(s) from {tmp_path}: baselines.sqlite3, nli.sqlite3 (and 1 unreadable "
            f"file(s) set aside earlier)") in captured.out
    assert "left 3 file(s) that are not caplib's cache: my_app.sqlite3 (an SQLite database with the tables " \
           "['notes']); old.sqlite3 (not an SQLite database" in captured.out and "statements.sqlite3 (a directory)" \
           in captured.out
    assert sorted(path.name for path in tmp_path.iterdir()) == ["my_app.sqlite3", "old.sqlite3", "statements.sqlite3"]
    assert (tmp_path / "my_app.sqlite3").read_bytes() == mine
    expect_error(capsys, "cache", "clear", "--cache-dir", tmp_path / "old.sqlite3",
                 contains=[r"--cache-dir .*old\.sqlite3: is a file, not a directory"])


def test_score_survives_corrupt_cache_files(profile, tmp_path, capsys, caplog):
    source = write_correctness(tmp_path / "in.csv")
    cache = tmp_path / "cache"
    cache.mkdir()
    for name in ("nli.sqlite3", "baselines.sqlite3"):
        (cache / name).write_bytes(b"overwritten " * 300)
    assert run("score", source, "-o", tmp_path / "out.csv", "--profile", profile, "--metrics", "cap,em",
               "--cache-dir", cache, "--no-progress") == 0
    captured = capsys.readouterr()
    assert "Traceback" not in captured.err
    assert sum("moved it aside" in record.getMessage() for record in caplog.records) == 2  # one line per file
    assert len(list(cache.glob("*.corrupt-*"))) == 2
    fresh = tmp_path / "fresh.csv"
    assert run("score", source, "-o", fresh, "--profile", profile, "--metrics", "cap,em", "--no-cache",
               "--no-progress") == 0
    assert pd.read_csv(tmp_path / "out.csv")[["cap", "em"]].equals(pd.read_csv(fresh)[["cap", "em"]])


def test_batch_size_and_cpu_workers_change_no_score(profile, tmp_path, capsys):
    """Old command lines with --batch-size still run, are told it changes nothing, and give identical files."""
    source = write_correctness(tmp_path / "in.csv", rows=ROWS * 3)
    outputs = []
    for options in (("--batch-size", "1"), ("--batch-size", "7", "--cpu-workers", "2"), ("--batch-size", "64"), ()):
        outputs.append(tmp_path / f"out{len(outputs)}.csv")
        assert run("score", source, "-o", outputs[-1], "--profile", profile, "--metrics", "cap,bleu", "--components",
                   "--no-cache", *options) == 0
        assert ("changes nothing" in capsys.readouterr().err) == bool(options and options[0] == "--batch-size")
    assert len({path.read_bytes() for path in outputs}) == 1


def test_bad_arguments_are_named_before_any_work(tmp_path, capsys, monkeypatch):
    import caplib.scoring
    import torch

    monkeypatch.setattr(caplib.scoring, "score_frame", lambda *a, **k: pytest.fail("scoring started"))
    source = write_correctness(tmp_path / "in.csv")
    out = tmp_path / "out.csv"
    expect_error(capsys, "score", source, "-o", out, "--device", "tpu", contains=["--device 'tpu'|tpu"])
    if not torch.cuda.is_available():
        expect_error(capsys, "score", source, "-o", out, "--device", "cuda", contains=["no CUDA device here"])
    expect_error(capsys, "score", tmp_path, "-o", out, contains=["is a directory"])
    expect_error(capsys, "evaluate", tmp_path, contains=["is a directory"])
    scored = tmp_path / "scored.csv"
    scored.write_text("label_semantic,cap,cap\nexact,0.9,0.1\ninvalid,0.2,0.8\n")
    expect_error(capsys, "evaluate", scored, contains=[r"scored\.csv, column 'cap': duplicated header column\(s\) "
                                                       r"\['cap'\]"])
    scored.write_text("label_semantic,cap\nexact,0.9\ninvalid,0.2\n")
    expect_error(capsys, "evaluate", scored, "--bootstrap", "-5", contains=["--bootstrap must be 0"])


def test_debug_shows_the_traceback_that_the_plain_run_hides(tmp_path, capsys):
    source = write_correctness(tmp_path / "in.csv")
    expect_error(capsys, "score", source, "-o", tmp_path / "o.csv", "--metrics", "blue", contains=["unknown metric"])
    with pytest.raises(ValueError, match="unknown metric"):
        run("--debug", "score", source, "-o", tmp_path / "o.csv", "--metrics", "blue")


def test_score_cap_decomposed_on_statements_with_chunked_long_inputs(profile, tmp_path, capsys):
    """``--metrics cap,cap_decomposed`` on premise/hypothesis columns alone; ``--long-inputs chunk`` reaches the NLI
    scorer (signature) and the chunked pairs are reported; the scores equal the library's."""
    from caplib.cap_decomposed import DecomposedCAPScorer

    long_answer = " ".join(["Iron is a metal that rusts in water."] * 80)  # well over 512 tokens
    statements = pd.DataFrame({"premise": ["Iron and gold are metals.", "Ice melts."],
                               "hypothesis": ["Iron is a metal.", long_answer]})
    source, out = tmp_path / "st.csv", tmp_path / "out.csv"
    statements.to_csv(source, index=False)
    assert run("score", source, "-o", out, "--profile", profile, "--metrics", "cap,cap_decomposed",
               "--long-inputs", "chunk", "--no-cache", "--no-progress") == 0
    err = capsys.readouterr().err
    assert "scored in sentence chunks" in err and "truncated" not in err
    sidecar = json.loads((tmp_path / "out.csv.signature.json").read_text())
    assert "long_inputs:chunk" in sidecar["metrics"]["cap_decomposed"]["signature"]
    assert sidecar["metrics"]["cap"]["chunked_pairs"] == 2  # both directions of the long row
    scorer = DecomposedCAPScorer.from_profile(load_profile(profile), Runtime(cache=False, progress=False),
                                              statement_model=None, long_inputs="chunk")
    expected = scorer.score(statements["premise"], statements["hypothesis"])
    np.testing.assert_allclose(pd.read_csv(out)["cap_decomposed"], expected, rtol=0, atol=1e-9)


# ---------------------------------------------------------------------------------------------------------------
# Issue 34: what a hostile but fair user found (no model needed: hand-made scored files, em)

CAP_SIGNATURE = "cap|caplib:0.1.0|nli:tiny#sha256:0123456789ab|rev:local|statements:given|alpha:0.85|lam:0.3"


def write_scored(path, n=160, labels=None, caps=None, row_ids=None):
    """A file as `caplib score --metrics cap,em` writes it (row_id, label_semantic, cap, em), with its signature
    file: CAP rises with the label's severity rank, plus seeded noise."""
    rng = np.random.default_rng(0)
    labels = labels if labels is not None else [list(SEVERITY)[i % len(SEVERITY)] for i in range(n)]
    if caps is None:
        caps = [f"{min(1.0, max(0.0, SEVERITY.get(label, 0) / 8 + rng.normal(0, 0.1))):.6f}" for label in labels]
    ems = [f"{float(SEVERITY.get(label, 0) > 5):.1f}" for label in labels]
    frame = pd.DataFrame({"row_id": row_ids if row_ids is not None else [str(i) for i in range(len(labels))],
                          "label_semantic": labels, "cap": caps, "em": ems})
    frame.to_csv(path, index=False)
    (path.parent / f"{path.name}.signature.json").write_text(json.dumps(
        {"metrics": {"cap": {"status": "scored", "signature": CAP_SIGNATURE}}}))
    return path


def write_splits(path, pairs):
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(["row_id", "split"])
        writer.writerows(pairs)
    return path


def test_no_command_blocks_on_a_fifo(tmp_path, capsys):
    """Item 1: a FIFO as input hung evaluate, compare and calibrate (killed after 40-60 s); score said "no such
    file" for it. Every file a command reads is refused at once as a named pipe."""
    from tests.test_inputs import no_hang

    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    scored, source = write_scored(tmp_path / "scored.csv"), write_correctness(tmp_path / "in.csv")
    out, calibration = tmp_path / "out.csv", tmp_path / "calibration.json"
    commands = [("score", fifo, "-o", out, "--metrics", "em"),
                ("evaluate", fifo), ("compare", fifo, "--metrics", "cap,em"), ("calibrate", fifo, "-o", calibration),
                ("compare", scored, "--metrics", "cap,em", "--splits", fifo, "--split", "test"),
                ("calibrate", scored, "--splits", fifo, "--split", "validation", "-o", calibration),
                ("score", source, "-o", out, "--metrics", "em", "--profile", fifo),
                ("score", source, "-o", out, "--metrics", "cap", "--classify", fifo),
                ("fetch", "--profile", fifo, "--dry-run")]
    for command in commands:
        with no_hang(20):
            expect_error(capsys, *command, contains=[rf"{fifo}: is a named pipe \(FIFO\), not a regular file"])
    assert not out.exists() and not calibration.exists()


def test_an_unreadable_input_is_one_line_in_every_command(capsys):
    """Item 2: permission denied gave a traceback and status 1 in score, evaluate, compare, calibrate and for
    --splits; --splits naming a directory gave IsADirectoryError."""
    from tests.test_inputs import as_another_user, shared_directory

    directory = shared_directory()
    scored = write_scored(directory / "scored.csv")
    splits = write_splits(directory / "splits.csv", [(i, "validation" if i < 48 else "test") for i in range(160)])
    source = write_correctness(directory / "in.csv")
    out, calibration = directory / "out.csv", directory / "calibration.json"
    commands = [("score", source, "-o", out, "--metrics", "em", "--no-cache", "--no-progress"),
                ("evaluate", scored), ("compare", scored, "--metrics", "cap,em", "--resamples", "10", "--trials", "0"),
                ("calibrate", scored, "-o", calibration),
                ("compare", scored, "--metrics", "cap,em", "--splits", splits, "--split", "test", "--resamples", "10",
                 "--trials", "0"),
                ("calibrate", scored, "--splits", splits, "--split", "validation", "-o", calibration)]
    for command in commands:  # readable: each runs (and imports what it needs while this process may read it)
        assert run(*command) == 0, capsys.readouterr().err
        calibration.unlink(missing_ok=True)
    capsys.readouterr()
    with as_another_user():  # a locked input is felt only by a user who can still run caplib from this checkout
        try:
            load_profile("offline")
            private = None
        except (OSError, ProfileError) as error:
            private = str(error).splitlines()[0]
    if private:
        pytest.skip(f"another user cannot run caplib from this checkout ({private}): it is private to its owner "
                    f"(e.g. cloned into `mktemp -d`), so a locked input cannot be told from a locked checkout")
    for command, locked in zip(commands, (source, scored, scored, scored, splits, splits)):
        locked.chmod(0)
        with as_another_user():
            expect_error(capsys, *command, contains=[rf"{locked}: permission denied\. To fix: .*chmod u\+r {locked}"])
        locked.chmod(0o644)
    for command in commands[4:]:
        expect_error(capsys, *[directory if part == splits else part for part in command],
                     contains=[rf"--splits {directory}: is a directory, not a regular file"])


@pytest.mark.parametrize("case, pairs, message", [
    ("covers rows 0-99 only", [(i, "validation" if i < 48 else "test") for i in range(100)],
     r"scored\.csv, row 100 \(line 102\), .*column 'row_id': 60 data row\(s\) have no split in .*splits\.csv"),
    ("lists an id twice", [(i, "validation" if i < 48 else "test") for i in range(160)] + [(5, "validation")],
     r"splits\.csv, row 5 \(line 7\), 160 \(line 162\) .*column 'row_id': row_id 5 is assigned more than once"),
    ("puts a test row into validation too", [(i, "validation" if i < 48 else "test") for i in range(160)]
     + [(100, "validation")], r"row_id 100 is assigned more than once"),
    ("names an id the file lacks", [(i, "validation" if i < 48 else "test") for i in range(160)] + [(999, "test")],
     r"splits\.csv, row 160 \(line 162\) .*column 'row_id': row_id 999 is not in .*scored\.csv"),
    ("spells a split wrong", [(i, "validation" if i < 48 else "tset") for i in range(160)],
     r"splits\.csv, row 48 \(line 50\), .*column 'split': unknown value 'tset'"),
])
def test_a_splits_file_must_match_the_scored_file_row_for_row(tmp_path, capsys, case, pairs, message):
    """Item 3: the join was loose: a splits file covering rows 0-499 of 864 let compare run on 420 rows and
    calibrate fit on 80 without a word; ids listed twice duplicated rows; a row in two splits leaked a test row into
    the fit; unknown ids were ignored. Now checked as load_correctness(splits=) checks its own."""
    scored = write_scored(tmp_path / "scored.csv")
    splits = write_splits(tmp_path / "splits.csv", pairs)
    expect_error(capsys, "compare", scored, "--metrics", "cap,em", "--splits", splits, "--split", "test",
                 "--resamples", "10", "--trials", "0", contains=[message])
    expect_error(capsys, "calibrate", scored, "--splits", splits, "--split", "validation", "-o", tmp_path / "c.json",
                 contains=[message])
    assert not (tmp_path / "c.json").exists()


def test_a_matching_splits_file_is_joined_exactly_padded_ids_included(tmp_path, capsys):
    scored = write_scored(tmp_path / "scored.csv")
    results = []
    for name, pad in (("plain", ""), ("padded", " ")):
        splits = write_splits(tmp_path / f"{name}.csv", [(f"{pad}{i}{pad}", "validation" if i < 48 else "test")
                                                        for i in reversed(range(160))])
        assert run("compare", scored, "--metrics", "cap,em", "--splits", splits, "--split", "test", "--resamples",
                   "10", "--trials", "0", "--json") == 0
        results.append(json.loads(capsys.readouterr().out))
        assert run("calibrate", scored, "--splits", splits, "--split", "validation", "-o",
                   tmp_path / f"{name}.json") == 0
        assert "fitted on 48 rows" in capsys.readouterr().out
    assert results[0]["rows"] == 112 and results[0] == results[1]


def test_every_message_names_file_row_and_column(tmp_path, capsys):
    """Item 4: messages without file, row or column, or with the wrong row."""
    latin1 = tmp_path / "latin1.csv"
    latin1.write_bytes("row_id,label_semantic,cap,answer\n0,exact,0.9,Sofia\n1,invalid,0.1,café\n".encode("latin-1"))
    expect_error(capsys, "evaluate", latin1, contains=[r"latin1\.csv, row 1 \(line 3\) .*column 'answer': not UTF-8 "
                                                       r"text \(byte 0xe9 at line 3, character 18\)"])
    (tmp_path / "empty.csv").write_bytes(b"")
    expect_error(capsys, "evaluate", tmp_path / "empty.csv", contains=[r"empty\.csv: the file is empty"])
    ids = write_scored(tmp_path / "ids.csv", row_ids=["0", "abc"] + [str(i) for i in range(2, 160)])
    expect_error(capsys, "calibrate", ids, "-o", tmp_path / "c.json",
                 contains=[r"ids\.csv, row 1 \(line 3\) .*column 'row_id': row_id 'abc' is not a row number"])
    labels = ["exact", "", "", "sort of right", "invalid", "exact", "partial", "exact"]
    bad_label = write_scored(tmp_path / "label.csv", labels=labels)
    for command in (("evaluate", bad_label), ("compare", bad_label, "--metrics", "cap,em"),
                    ("calibrate", bad_label, "-o", tmp_path / "c.json")):
        expect_error(capsys, *command, contains=[r"label\.csv, row 3 \(line 5\) .*column 'label_semantic': unknown "
                                                 r"value 'sort of right'"])
    caps = ["0.9", "0.1", "0.5", "0.2", "0.7", "0.3", "0.6", "inf"]
    infinite = write_scored(tmp_path / "inf.csv", labels=["exact", "", "", *labels[4:], "invalid"], caps=caps)
    for command in (("evaluate", infinite), ("compare", infinite, "--metrics", "cap,em"),
                    ("calibrate", infinite, "-o", tmp_path / "c.json")):
        expect_error(capsys, *command, contains=[r"inf\.csv, row 7 \(line 9\) .*column 'cap': 'inf' is not a finite "
                                                 r"number"])
    expect_error(capsys, "calibrate", tmp_path / "missing.csv", "-o", tmp_path / "c.json",
                 contains=[r"no such file: .*missing\.csv$"])
    assert not (tmp_path / "c.json").exists()


@pytest.mark.parametrize("cells, kind", [([["a", "b"], ["c"]], "ndarray"), ([b"bytes", b"more"], "bytes"),
                                         ([{"k": 1}, {"k": 2}], "dict")])
def test_a_parquet_cell_that_is_not_text_is_named_not_scored(tmp_path, capsys, cells, kind):
    """Items 4 and 5: a Parquet list column gave "truth value of an array ... ambiguous"; bytes and dict cells were
    scored as their Python reprs (b'bytes', {'k': 1}) with status 0."""
    pytest.importorskip("pyarrow")
    source = tmp_path / "rows.parquet"
    pd.DataFrame({"question": ["q0", "q1", "q2"], "gold_answer": ["g", "g", "g"],
                  "answer": [None, *cells]}).to_parquet(source)
    expect_error(capsys, "score", source, "-o", tmp_path / "out.csv", "--metrics", "em", "--no-cache",
                 contains=[rf"rows\.parquet, row 1 .*column 'answer': a {kind} cell"])
    assert not (tmp_path / "out.csv").exists()


def test_a_blocked_signature_file_is_refused_before_scoring(tmp_path, capsys, monkeypatch):
    """Item 6: OUT.signature.json being a directory gave a traceback after scoring and left OUT without its
    signature file."""
    import caplib.scoring

    monkeypatch.setattr(caplib.scoring, "score_frame", lambda *a, **k: pytest.fail("scoring started"))
    source, out = write_correctness(tmp_path / "in.csv"), tmp_path / "out.csv"
    (tmp_path / "out.csv.signature.json").mkdir()
    expect_error(capsys, "score", source, "-o", out, "--metrics", "em",
                 contains=[r"its signature file .*out\.csv\.signature\.json is in the way"])
    assert not out.exists()


def test_outputs_get_the_mode_the_umask_gives(tmp_path, capsys):
    """Item 7: score wrote OUT and its signature file 0600 (and made an existing 0644 file 0600); calibration files
    were 0644 whatever the umask."""
    import stat

    source, out = write_correctness(tmp_path / "in.csv"), tmp_path / "out.csv"
    previous = os.umask(0o027)
    try:
        assert run("score", source, "-o", out, "--metrics", "em", "--no-cache", "--no-progress") == 0
        assert run("calibrate", write_scored(tmp_path / "scored.csv"), "-o", tmp_path / "c.json") == 0
        assert [stat.S_IMODE(path.stat().st_mode) for path in (out, tmp_path / "out.csv.signature.json",
                                                                tmp_path / "c.json")] == [0o640] * 3
        out.chmod(0o644)
        assert run("score", source, "-o", out, "--metrics", "em", "--no-cache", "--no-progress") == 0
        assert stat.S_IMODE(out.stat().st_mode) == 0o644  # an existing file keeps its mode
    finally:
        os.umask(previous)


def test_formula_cells_are_written_as_text_and_read_back_as_they_were(tmp_path, capsys):
    """Item 9: spreadsheet formula cells (=1+1, =HYPERLINK(...)) were written back unescaped into output CSVs."""
    rows = [("=HYPERLINK(\"http://example.com\",\"click\")", "=1+1", "=1+1", "exact"),
            ("What is 2+2?", "four", "@SUM(A1:A2)", "invalid"), ("Temperature?", "-5", "-5", "exact"),
            ("+cmd|' /C calc'!A0", "yes", "- yes", "equivalent")]
    source, first, second = tmp_path / "in.csv", tmp_path / "first.csv", tmp_path / "second.csv"
    pd.DataFrame(rows, columns=["question", "gold_answer", "answer", "label_semantic"]).to_csv(source, index=False)
    assert run("score", source, "-o", first, "--metrics", "em,rouge_l", "--no-cache", "--no-progress") == 0
    with first.open(newline="", encoding="utf-8") as handle:
        written = list(csv.DictReader(handle))
    assert [row["question"] for row in written] == ["'" + rows[0][0], rows[1][0], rows[2][0], "'" + rows[3][0]]
    assert [row["answer"] for row in written] == ["'=1+1", "'@SUM(A1:A2)", "-5", "'- yes"]
    assert [row["em"] for row in written] == ["1.0", "0.0", "1.0", "1.0"]  # scored on the cells as read ("- yes")
    # caplib reads its own output back as the input was: rescoring gives the same cells
    assert run("score", first, "-o", second, "--metrics", "em,rouge_l", "--no-cache", "--no-progress") == 0
    with second.open(newline="", encoding="utf-8") as handle:
        assert list(csv.DictReader(handle)) == written
    assert run("evaluate", first, "--metrics", "em") == 0


def test_a_header_only_file_is_refused(tmp_path, capsys):
    """Smaller: a header-only CSV gave status 0 and an empty output; decided: nothing to score is an error."""
    source = tmp_path / "header.csv"
    source.write_text("question,gold_answer,answer\n")
    expect_error(capsys, "score", source, "-o", tmp_path / "out.csv", "--metrics", "em",
                 contains=[r"header\.csv: the file has a header but no data rows"])
    assert not (tmp_path / "out.csv").exists()
