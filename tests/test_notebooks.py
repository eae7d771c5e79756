"""Run every chapter with papermill on the offline profile and check the numbers each one records.

Three kinds of assertions (STYLE.md): structural facts (25 pairs, all classes present, CIs contain their point
estimates), the paper-consistency checks as the appendix computes them, and regression values of this run with
stated tolerances (the offline profile is deterministic: seeded sample, shipped backbone weights, cached NLI).
Every chapter is executed once here from an empty cache; after ``make book`` the second run that the determinism test
compares it with is make book's own (:func:`tests.book_run.reuse_make_book`).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import warnings
from pathlib import Path

import pandas as pd
import pytest
from scipy import stats

from caplib.taxonomy import SEVERITY
from tests.book_run import CHAPTERS, PARAMETERS, reuse_make_book
from tests.scripts import load_script

ROOT = Path(__file__).resolve().parents[1]
#: The authors' release, copied to data/official/ by `make test` from ../shared/official (CI) where that exists.
RELEASE = ROOT / "data" / "official" / "scores.json"
ROWS = PARAMETERS["11_official_rows"]["row_limit"]  # Chapter 11's rows here

pytestmark = pytest.mark.slow


def start_book(out: Path, environment: dict[str, str | None], chapters: list[Path] = CHAPTERS) -> subprocess.Popen:
    """``chapters`` executed in order into ``out`` (:mod:`tests.book_run`), in a process of their own with
    ``environment`` added to this one's (a None value removes that variable; papermill's kernels inherit it)."""
    env = {name: value for name, value in (os.environ | environment).items() if value is not None}
    with open(out.with_name(f"{out.name}.log"), "w") as log:  # a file: a full pipe would stall the run
        return subprocess.Popen([sys.executable, "-m", "tests.book_run", str(out), *(path.stem for path in chapters)],
                                cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT)


def finish_book(process: subprocess.Popen | None, out: Path) -> dict[str, bytes]:
    """Wait for a :func:`start_book` run (None: nothing was left to run); return {file name: bytes} of every
    ``*.numbers.json`` in ``out``, after checking that no chapter there wrote to stderr."""
    if process is not None:
        process.wait()
        log = out.with_name(f"{out.name}.log").read_text(errors="replace")
        assert process.returncode == 0, f"a chapter failed in {out}:\n{log[-5000:]}"
    stderr = [f"{path.name} cell {index}: {''.join(output['text'])[:200]}"
              for path in sorted(out.glob("*.ipynb"))
              for index, cell in enumerate(json.loads(path.read_text())["cells"])
              for output in cell.get("outputs", []) if output.get("name") == "stderr"]
    assert not stderr, f"chapters wrote to stderr (fix the cause): {stderr}"
    return {path.name: path.read_bytes() for path in sorted(out.glob("*.numbers.json"))}


def empty_cache(tmp_path_factory) -> dict[str, str | None]:
    """An empty score cache (the offline backbone ships with caplib, so it is not in there)."""
    return {"CAPLIB_CACHE_DIR": str(tmp_path_factory.mktemp("empty-cache"))}


@pytest.fixture(scope="session")
def both_runs(tmp_path_factory) -> tuple[tuple[Path, dict[str, bytes]], dict[str, bytes]]:
    """Every chapter run twice. The first run, which the other tests read, executes every chapter here from an empty
    cache with one torch thread (so one NLI worker instead of one per core). The second is ``make book``'s, for each
    chapter it last executed from exactly the inputs the first run had (:func:`tests.book_run.reuse_make_book`: so
    after ``make book`` a contributor's ``make test`` does not execute the book twice), and executed here for the
    others, at the same time as the first, as ``make book`` would execute them: from the machine's score cache, with
    torch's default threads. (After ``make book`` that is Chapter 11 alone, on fewer rows than the book's, so its
    scores come from what ``make book`` cached; where ``make book`` has not run, as in CI, every chapter computes
    its scores again.) Returns ((the first run's folder of executed notebooks, {numbers file name: bytes}), the
    second run's {numbers file name: bytes})."""
    from caplib.offline_nli import ensure_backbone

    ensure_backbone()  # the shipped weights, checked against their manifest
    out, again = tmp_path_factory.mktemp("book"), tmp_path_factory.mktemp("book-again")
    first = start_book(out, {**empty_cache(tmp_path_factory), "OMP_NUM_THREADS": "1"})
    left = reuse_make_book(again)
    second = start_book(again, {"OMP_NUM_THREADS": None}, left) if left else None
    return (out, finish_book(first, out)), finish_book(second, again)


@pytest.fixture(scope="session")
def executed(both_runs) -> tuple[Path, dict[str, bytes]]:
    """Every chapter run once from an empty cache: (the folder of executed notebooks, {numbers file name: bytes})."""
    return both_runs[0]


@pytest.fixture(scope="session")
def book_files(executed):
    """{numbers file name: bytes} of that run."""
    return executed[1]


@pytest.fixture(scope="session")
def book(book_files):
    """{chapter: recorded numbers} of that run."""
    return {name.split(".")[0]: json.loads(data) for name, data in book_files.items()}


def test_two_runs_record_byte_identical_numbers(both_runs):
    """Issue 15: the book's numbers depend on nothing but the data and the settings: not on the cache (the first
    run starts from an empty one, the second from whatever the machine's cache holds, as ``make book`` does), nor on
    torch's threads and the NLI workers they give."""
    (_, book_files), again = both_runs
    assert sorted(again) == sorted(book_files) and len(again) == len(CHAPTERS)
    differing = {name: differences(json.loads(book_files[name]), json.loads(again[name]))
                 for name in book_files if again[name] != book_files[name]}
    assert not differing, f"numbers differ between two runs: {differing}"


def differences(first, second, path: str = "") -> list[str]:
    """Where two JSON values differ (at most 5 places), e.g. ``['tab2.bertscore.kendall: 15.899 != 15.908']``."""
    if isinstance(first, dict) and isinstance(second, dict):
        found = [place for key in sorted(set(first) | set(second), key=str)
                 for place in differences(first.get(key), second.get(key), f"{path}.{key}".lstrip("."))]
    elif isinstance(first, list) and isinstance(second, list) and len(first) == len(second):
        found = [place for i, (a, b) in enumerate(zip(first, second)) for place in differences(a, b, f"{path}[{i}]")]
    else:
        found = [] if first == second else [f"{path}: {first!r} != {second!r}"]
    return found[:5]


def test_every_chapter_records_its_numbers(book):
    assert sorted(book) == [path.stem for path in CHAPTERS]
    # the keys each chapter records offline; the paper profile's dress rehearsal must record them too
    keys = json.loads((ROOT / "tests" / "fixtures" / "offline_numbers_keys.json").read_text())
    if not RELEASE.is_file():  # Chapter 11 then records what it would compare and says what to fetch
        keys["11_official_rows"] = ["profile", "released", "row_limit", "scale", "split"]
    assert {chapter: sorted(numbers) for chapter, numbers in book.items()} == keys


def test_taxonomy_structure(book):
    numbers = book["01_taxonomy"]
    assert (numbers["n_strict_pairs"], numbers["n_hard_pairs"], numbers["n_separability_pairs"]) == (25, 4, 6)


def test_reported_numbers_appendix_finds_the_known_paper_inconsistencies(book):
    numbers = book["09_reported_numbers"]
    assert numbers["n_checks"] - numbers["n_consistent"] == 5
    assert len(numbers["chapters_found"]) == 8


def test_llm_chapter_recomputes_the_papers_violation_counts(book):
    numbers = book["07_llm_generalization"]
    assert numbers["paper_violations_recomputed"] == {"GPT-4o": 4, "Gemini Flash": 6, "Qwen 3": 2}
    assert numbers["paper_tab6_totals"] == {"GPT-4o": 999, "Gemini Flash": 999, "Qwen 3": 999}
    assert sum(numbers["counts"].values()) == 128
    # issue 33: CAP against each metric on these answers by paired tests, not by point values alone
    assert set(numbers["paired"]) == {"rouge_l", "bertscore"}
    assert all(numbers["sample"][m]["spearman_low"] <= numbers["sample"][m]["spearman"] <= numbers["sample"][m][
        "spearman_high"] for m in numbers["sample"])


# Regression values of the offline profile (bundled sample v2, offline-nli-v3 backbone), recorded on 2026-12-02.
# CAP-derived values get a tolerance of 0.02 (x100: 2 points) for float differences of backbone training across
# machines; lexical, data and statement numbers are exact.
CAP_TOL = 0.02


def test_datasets_chapter_counts_and_agreement(book):
    numbers = book["02_datasets"]
    assert set(numbers["class_counts"].values()) == {128} and len(numbers["class_counts"]) == 8
    assert numbers["cleaning_dropped"] == 0 and numbers["near_duplicates"] == 0
    assert numbers["manual_labelled"] == 416
    assert numbers["agreement"]["kappa"] == pytest.approx(0.9698, abs=1e-4)
    assert numbers["agreement"]["quadratic"] == pytest.approx(0.9756, abs=1e-4)
    passes = numbers["blind_passes"]  # two blind labellers on 100 rows, and each against the intended class
    assert {entry["n"] for entry in passes.values()} == {100}
    assert passes["pass A vs pass B"]["kappa"] == pytest.approx(0.9771, abs=1e-4)
    assert passes["intended vs pass B"]["kappa"] == pytest.approx(1.0)


def test_cap_chapter(book):
    numbers = book["03_cap"]
    worked = numbers["worked_example"]
    assert worked["contradictory"] < 0.5 < worked["equivalent"]  # the poster's ordering (0.01 vs 0.98)
    assert numbers["statements"]["em"] == pytest.approx(0.6818, abs=1e-4)  # deterministic template generator
    cap = numbers["cap"]
    # regression values of the shipped backbone (recipe v4, 2026-12-03)
    assert cap["pairwise_accuracy"] == pytest.approx(0.694, abs=CAP_TOL)
    assert cap["spearman"] == pytest.approx(0.440, abs=CAP_TOL)
    assert worked["exact (identical statements)"] == pytest.approx(0.939, abs=CAP_TOL)
    assert worked["contradictory"] == pytest.approx(0.246, abs=CAP_TOL)
    backbone = numbers["backbone"]  # the backbone's held-out figures, from its manifest
    assert backbone["SuperGLUE CB validation (3-way)"]["pairs"] == 56
    assert backbone["GLUE RTE validation (entailment or not)"]["pairs"] == 277
    assert backbone["authored corpus, held-out tenth (3-way)"]["accuracy"] == pytest.approx(0.7257, abs=CAP_TOL)
    assert backbone["SNLI 1.0 test, first 3,000 (3-way)"]["pairs"] == 3000
    assert backbone["SNLI 1.0 test, first 3,000 (3-way)"]["accuracy"] == pytest.approx(0.7623, abs=CAP_TOL)
    assert backbone["hypothesis only, both directions (artifact check)"]["accuracy"] == pytest.approx(0.4604, abs=1e-4)
    grid = numbers["sweep"]["grid"]
    assert len(grid) == 6 * 7 and {(0.85, 0.3), (0.3, 0.0), (0.5, 0.3), (0.7, 0.3)} <= {(g["alpha"], g["lam"])
                                                                                        for g in grid}
    # issue 33: the sweep says how many settings it tried, where the paper's ranks, and tests best against paper
    sweep = numbers["sweep"]
    assert sweep["settings"] == len(grid) and 1 <= sweep["paper_setting_rank"] <= len(grid)
    for stat in ("spearman", "pairwise_accuracy"):
        difference = sweep["best_minus_paper"][stat]
        assert difference["low"] <= difference["delta"] <= difference["high"], stat


def test_baselines_chapter_cap_beats_every_offline_baseline(book):
    numbers = book["04_baselines"]
    assert "comet" in numbers["skipped"] and "comet" not in numbers["tab2"]  # skipped with its reason, not faked
    pairwise = {metric: row["pairwise_accuracy"] for metric, row in numbers["tab2"].items()}
    best_baseline = max(value for metric, value in pairwise.items() if metric not in ("cap", "shortcut"))
    assert pairwise["cap"] >= best_baseline + 2 * 100 * CAP_TOL  # ahead of every offline metric, beyond tolerance
    assert pairwise["bertscore"] == pytest.approx(58.86, abs=0.05)
    assert pairwise["rouge_l"] == pytest.approx(54.03, abs=0.01)  # as the release: stemmed, 10 decimals (53.92 before)
    # the shortcut baseline (surface features only, out of fold) is reported, and the chapter says where CAP wins
    assert pairwise["shortcut"] == pytest.approx(66.94, abs=0.01)
    verdict = numbers["cap_vs_shortcut"]
    assert set(verdict["beats"]) | set(verdict["loses"]) | set(verdict["ties"]) >= {"spearman", "pairwise_accuracy"}
    for metric, row in numbers["tab13"].items():  # every CI contains its point estimate
        for stat in ("spearman", "kendall"):
            assert row[f"{stat}_low"] <= row[stat] <= row[f"{stat}_high"], (metric, stat)


def test_monotonicity_chapter(book):
    violations = {metric: row["violations"] for metric, row in book["05_monotonicity"]["tab14"].items()}
    assert violations["cap"] <= min(v for m, v in violations.items() if m not in ("cap", "shortcut"))
    assert violations["cap"] == 5
    # ROUGE-L stemmed and BLEU tokenized as the authors' release (issue 31): ROUGE-L 11 (12 unstemmed), BLEU 11
    assert violations["rouge_l"] == 11 and violations["bleu"] == 11 and violations["shortcut"] == 3


def test_hard_pairs_chapter_shows_the_papers_mechanism(book):
    numbers = book["06_hard_pairs"]
    assert numbers["paper_mechanism_holds"] is True
    means = numbers["directional_means"]
    assert means["partial"]["d_forward"] > means["overinclusive_valid"]["d_forward"]
    assert means["overinclusive_valid"]["d_backward"] > means["partial"]["d_backward"]


def test_error_analysis_chapter(book):
    assert book["08_error_analysis"]["second_label_source"] == "a blind LLM pass"  # issue 33: not 'human'
    statements = book["08_error_analysis"]["statements"]
    assert statements["by_type"]["overall"]["n"] == 44
    assert statements["by_type"]["long-question"]["em"] == 0.0
    assert all(rate == 0.0 for rate in statements["fallback_rate"].values())


#: The pages whose screenshots are kept (issue 16): the index, CAP's chapter and the hard pairs' chapter.
SCREENSHOT_PAGES = {"index", "03_cap", "06_hard_pairs"}


def test_the_built_book_reads_right_in_a_real_browser(executed, tmp_path_factory):
    """Issue 16, item 8: the book built from the chapters executed above, every page opened in headless Chromium
    (installed by ``make test`` where missing): no traceback in an output, every image loaded, every formula
    typeset, every interactive figure drawn, no request leaving the machine; screenshots in _build/screenshots/.
    Issue 33: no literal $ or TeX command left in any page's text, and at 1400 px no table, figure, formula or code
    wider than the text column or cut at its box's edge, no figure menu over its title, folded cells opened; at
    420 px the same is reported (a warning), not failed."""
    browser = load_script("browser_check")
    if browser.find_chromium() is None:
        pytest.skip("no chromium here, and make test could not install it (Debian: apt install chromium)")
    if not (ROOT / "_vendor" / "mathjax" / "tex-chtml.js").is_file():
        pytest.skip("no MathJax copy in _vendor/ (make test installs it with npm; npm is missing here)")
    site = tmp_path_factory.mktemp("site")
    for name in ("_config.yml", "_toc.yml"):
        shutil.copy(ROOT / name, site / name)
    for folder in ("_static", "_vendor"):
        shutil.copytree(ROOT / folder, site / folder)
    shutil.copytree(ROOT / "book", site / "book", ignore=shutil.ignore_patterns("chapters"))
    shutil.copytree(executed[0], site / "book" / "chapters")
    build = subprocess.run([str(Path(sys.executable).with_name("jupyter-book")), "build", str(site)],
                           capture_output=True, text=True)
    assert build.returncode == 0, build.stderr[-2000:]
    html = site / "_build" / "html"
    pages = sorted(path for path in html.rglob("*.html") if not {"_static", "_sources"} & set(path.parts))
    chapters = {path.stem for path in CHAPTERS}
    assert chapters <= {page.stem for page in pages}
    reports = browser.check_pages(pages, ROOT / "_build" / "screenshots", SCREENSHOT_PAGES)
    assert all(set(report["layout"]) == {str(width) for width in browser.WIDTHS} for report in reports)
    narrow = [note for report in reports for note in browser.narrow_notes(report)]
    if narrow:
        warnings.warn(f"{len(narrow)} page(s) overflow on a narrow screen (reported, not failed): {narrow}")
    found = [problem for report in reports for problem in browser.problems(report)]
    assert not found, found
    by_page = {Path(report["page"]).stem: report for report in reports}
    assert all(by_page[chapter]["math"]["typeset"] > 0 for chapter in ("03_cap", "05_monotonicity", "06_hard_pairs"))
    assert by_page["06_hard_pairs"]["figures"] > 0 and "gold:" in by_page["06_hard_pairs"].get("tooltip", "")
    assert {path.stem for path in (ROOT / "_build" / "screenshots").glob("*.png")} >= SCREENSHOT_PAGES


@pytest.mark.skipif(not RELEASE.is_file(), reason=f"the authors' release is not in {RELEASE.parent} (make test copies "
                    "it from ../shared/official where that exists; else `caplib fetch --profile released`)")
def test_official_rows_chapter_gives_the_released_lexical_scores_and_compares_cap(book):
    """Issue 31: on the release's rows caplib's BLEU, ROUGE-L and METEOR are the released numbers, so the protocol's
    are too; offline CAP is set beside the paper's backbone, row by row and under both label sources."""
    numbers = book["11_official_rows"]
    assert (numbers["profile"], numbers["split"], numbers["n_rows"]) == ("offline-official", "test", ROWS)
    for metric, agreement in numbers["lexical"].items():
        assert agreement["rows_equal"] == 1.0 and agreement["max_abs_difference"] == 0.0, metric
        assert agreement["spearman_ours"] == agreement["spearman_theirs"], metric
        assert agreement["pairwise_accuracy_ours"] == agreement["pairwise_accuracy_theirs"], metric
    assert set(numbers["lexical"]) == {"bleu", "rouge_l", "meteor"} and set(numbers["modelled"]) == {"bertscore", "cap"}
    assert "released:ElitsaY/Correctness_eval@" in numbers["signatures"]["released"]["cap"]
    assert "nli:builtin:offline-nli" in numbers["signatures"]["caplib"]["cap"]
    cap = numbers["modelled"]["cap"]
    # the paper's backbone on these rows, computed here from the release's files alone: the first test rows of
    # the splits file in CSV order (the answerless row has no score), Spearman of the released CAP with the severities
    scores = json.loads(RELEASE.read_text())
    released = dict(zip(scores["row_id"], zip(scores["cap"], scores["label"])))
    splits = pd.read_csv(RELEASE.with_name("CAP-Correctness-splits.csv"))
    rows = [released[row] for row in splits.loc[splits["split"] == "test", "row_id"] if row in released][:ROWS]
    expected = stats.spearmanr([value for value, _ in rows], [SEVERITY[label] for _, label in rows]).statistic
    assert cap["spearman_theirs"] == pytest.approx(expected, abs=1e-12)
    # regression values of the offline backbone (2026-12-03), CAP_TOL for backbone floats across machines
    assert cap["spearman"] == pytest.approx(0.6045, abs=CAP_TOL)  # shipped backbone, recipe v4
    assert cap["spearman_ours"] == pytest.approx(0.3717, abs=CAP_TOL)
    assert set(numbers["label_sources"]) == {f"{m} {s}" for m in ("caplib", "released") for s in ("synthetic",
                                                                                                   "annotators")}
    assert numbers["label_sources"]["released synthetic"]["n"] == numbers["label_sources"]["caplib annotators"]["n"]


def test_labeler_chapter_fits_on_validation_judges_on_test_and_beats_the_uniform_bins(book):
    numbers = book["10_labeler"]
    assert (numbers["fit_split"], numbers["eval_split"], numbers["n_fit"], numbers["n_eval"]) == (
        "validation", "test", 160, 864)
    assert numbers["tab8"] == {"kappa": 77.9, "linear": 82.5, "quadratic": 87.9}  # the paper's reference point
    labelers = numbers["labelers"]
    # issue 17's acceptance: the component model above the uniform bins on quadratic kappa and macro-F1. The fitted
    # thresholds were above on quadratic kappa (what they are fitted for) with backbone v3; with v4 they are 0.5
    # below (an interval that includes 0, as the chapter says), and below on macro-F1, which the chapter explains by
    # the class means it shows inverted on the fitting rows
    for measure in ("quadratic", "macro_f1"):
        assert labelers["component model"][measure] > labelers["uniform bins"][measure], measure
    assert numbers["above_uniform"] == {"fitted thresholds": {"quadratic": False, "macro_f1": False},
                                        "component model": {"quadratic": True, "macro_f1": True}}
    # issue 33: the classes the fitted bands never predict include overinclusive_invalid's zero-width band
    assert len(numbers["fit_violations"]) == 6 and numbers["thresholds_never_predict"] == ["Eq", "Alt", "Inv"]
    assert set(numbers["verdicts_vs_uniform"]) == {f"{name}|{key}" for name in ("fitted thresholds", "component model")
                                                   for key in ("quadratic", "macro_f1")}
    assert numbers["shipped_matches"] == {"backbone": True, "rows": True, "model": True}
    # regression values (x100, 2026-12-03, shipped backbone v4); CAP-derived, so CAP_TOL (x100) for CPU float kernels
    expected = {"uniform bins": (22.45, 22.48, 54.72), "fitted thresholds": (18.17, 17.58, 54.19),
                "component model": (49.88, 48.82, 56.06)}
    for name, values in expected.items():
        found = tuple(labelers[name][key] for key in ("accuracy", "macro_f1", "quadratic"))
        assert found == pytest.approx(values, abs=100 * CAP_TOL), name
