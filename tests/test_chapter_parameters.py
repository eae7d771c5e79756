"""caplib.parameters and the chapters' first cell: a bad parameter is one line naming it, before any work.

The papermill runs reproduce what a teacher tried (issue 16): a profile typo that used to run chapters 4-6 as the
paper profile, ``split dev`` that failed after seconds of scoring, a negative ``row_limit`` that was accepted, a
list passed with ``-p`` as a string, and ``row_limit 5`` that concluded "as in the paper" from five rows.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import papermill
import pytest

from caplib.parameters import ParameterError, check_parameters

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize("parameters, message", [
    ({"profile": "ofline"}, "parameter profile='ofline': no profile 'ofline': use one of ['offline', 'offline-official', 'paper', 'released']"),
    ({"split": "dev"}, "parameter split='dev': choose from None, 'validation', 'test'"),
    ({"fit_split": None}, "parameter fit_split=None: choose from 'validation', 'test'"),  # never "all rows"
    ({"objective": "f1"}, "parameter objective='f1': choose from 'quadratic', 'accuracy'"),
    ({"row_limit": -5}, "parameter row_limit=-5: give None or a positive whole number"),
    ({"row_limit": 2.5}, "parameter row_limit=2.5: give None or a positive whole number"),
    ({"alpha": 1.5}, "parameter alpha=1.5: give a number in [0, 1]"),
    ({"lam": True}, "parameter lam=True: give a number in [0, 1]"),
    ({"confidence": 1}, "parameter confidence=1: give a number strictly between 0 and 1"),
    ({"n_resamples": -1}, "parameter n_resamples=-1: give a whole number >= 0"),
    ({"metrics": "cap,bleu"}, "with papermill pass lists as YAML: -y 'metrics: [cap, bleu]'"),
    ({"metrics": ["cap", "bleurt"]}, "'bleurt' is not allowed: choose from cap, bleu, rouge_l"),
    ({"metrics": ["cap", "cap"]}, "give each value once"),
    ({"alphas": [0.5, 2]}, "2 is not allowed: give a number in [0, 1]"),
    ({"focus": ["partial", "part"]}, "'part' is not allowed: choose from exact, equivalent"),
])
def test_each_bad_parameter_is_one_line_naming_it_and_its_valid_values(parameters, message):
    with pytest.raises(ParameterError) as caught:
        check_parameters(**parameters)
    assert message in str(caught.value) and "\n" not in str(caught.value)


def test_good_parameters_pass_and_unknown_names_are_a_programming_error(tmp_path):
    check_parameters(profile="paper", split=None, row_limit=1, alpha=0, lam=1.0, confidence=0.95, n_resamples=0,
                     seed=3, metrics=("cap", "comet"), alphas=[0.5, 1], focus=["partial"])
    profile = tmp_path / "mine.yaml"
    profile.write_text((ROOT / "caplib" / "profiles" / "offline.yaml").read_text().replace("name: offline",
                                                                                           "name: mine"))
    check_parameters(profile=str(profile))
    with pytest.raises(TypeError, match="does not know"):
        check_parameters(alpah=0.5)


def run_chapter(stem: str, parameters: dict, out: Path) -> tuple[Exception | None, float, Path]:
    """Execute one chapter with papermill; (the error or None, seconds, executed notebook)."""
    executed = out / f"{stem}.ipynb"
    start = time.perf_counter()
    try:
        papermill.execute_notebook(str(ROOT / "notebooks" / f"{stem}.ipynb"), str(executed),
                                   parameters={"record_to": str(out / f"{stem}.numbers.json"), **parameters},
                                   cwd=str(out), kernel_name="python3", progress_bar=False, execution_timeout=600)
    except papermill.PapermillExecutionError as error:
        return error, time.perf_counter() - start, executed
    return None, time.perf_counter() - start, executed


@pytest.mark.slow
@pytest.mark.parametrize("stem, parameters, named", [
    ("04_baselines", {"profile": "ofline"}, "parameter profile='ofline'"),
    ("05_monotonicity", {"split": "dev"}, "parameter split='dev'"),
    ("06_hard_pairs", {"row_limit": -5}, "parameter row_limit=-5"),
    ("04_baselines", {"metrics": "cap,bleu"}, "-y 'metrics: [cap, bleu]'"),
    ("03_cap", {"alpha": 1.5}, "parameter alpha=1.5"),
])
def test_a_chapter_stops_in_its_first_code_cell_on_a_bad_parameter(stem, parameters, named, tmp_path):
    error, seconds, executed = run_chapter(stem, parameters, tmp_path)
    assert isinstance(error, papermill.PapermillExecutionError)
    assert error.ename == "ParameterError" and named in error.evalue
    assert "book.check_parameters(" in error.source  # the first code cell: before any data is read or model loads
    assert not (tmp_path / f"{stem}.numbers.json").exists()
    assert seconds < 60  # measured: see the closing note (kernel start and imports included)


@pytest.mark.slow
def test_a_five_row_run_shows_a_caution_instead_of_a_conclusion(tmp_path):
    error, _, executed = run_chapter("04_baselines", {"row_limit": 5, "metrics": ["cap", "bleu", "rouge_l"]},
                                     tmp_path)
    assert error is None
    shown = "".join("".join(output.get("data", {}).get("text/markdown", ""))
                    for cell in json.loads(executed.read_text())["cells"] for output in cell.get("outputs", []))
    assert "Too few rows for a conclusion" in shown
    assert "as in the paper" not in shown


@pytest.mark.slow
def test_the_official_rows_chapter_without_the_release_says_what_to_fetch(tmp_path):
    """Chapter 11 with a released profile whose files are not there: nothing is compared, nothing invented, and
    the page names the command that fetches them."""
    missing = tmp_path / "released-elsewhere.yaml"
    missing.write_text(f"extends: released\nname: elsewhere\ndata: {tmp_path / 'none'}\n"
                       f"scores: {tmp_path / 'none' / 'scores.json'}\n")
    error, _, executed = run_chapter("11_official_rows", {"released": str(missing), "row_limit": 5}, tmp_path)
    assert error is None
    shown = "".join("".join(output.get("data", {}).get("text/markdown", ""))
                    for cell in json.loads(executed.read_text())["cells"] for output in cell.get("outputs", []))
    assert "Nothing to compare in this run" in shown and "caplib fetch --profile" in shown
    recorded = json.loads((tmp_path / "11_official_rows.numbers.json").read_text())
    assert sorted(recorded) == ["profile", "released", "row_limit", "scale", "split"]


def test_a_name_papermill_injects_that_the_chapter_does_not_declare_is_found():
    from caplib.parameters import undeclared_parameters

    parameters = "profile = 'offline'\nsplit = 'test'  # the split\nrow_limit = None"
    ran = ["", parameters, "# Parameters\nsplt = \"validation\"\nrow_limit = 5\n", "import caplib"]
    assert undeclared_parameters(ran) == (["splt"], ["profile", "split", "row_limit"])
    assert undeclared_parameters(["", parameters, "import caplib"]) == ([], [])  # nothing injected
    assert undeclared_parameters(["", parameters, "# Parameters\nPAPERMILL_INPUT_PATH = 'a.ipynb'\n"])[0] == []


def papermill_command(*arguments: str) -> list[str]:
    """papermill's command line, in a Python that has loaded what papermill loads of caplib at start-up (the
    ``papermill.engine`` entry point; an installed caplib registers it, a stale install may not yet)."""
    import sys

    start = "import caplib.papermill_hook, sys; from papermill.cli import papermill; sys.argv[0] = 'papermill'; papermill()"
    return [sys.executable, "-c", start, *arguments]


def test_caplib_registers_the_hook_with_papermill():
    import tomllib

    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert project["entry-points"]["papermill.engine"] == {"caplib": "caplib.papermill_hook:ENGINE"}
    from caplib.papermill_hook import ENGINE
    from papermill.engines import NBClientEngine

    assert ENGINE is NBClientEngine  # the default engine, unchanged: loading the module is the point


@pytest.mark.slow
@pytest.mark.parametrize("arguments, line", [
    (["-p", "split", "tset"], "ParameterError: parameter split='tset': choose from None, 'validation', 'test'"),
    (["-p", "splt", "validation"], "ParameterError: parameter splt is not a parameter of this chapter (did you mean "
                                   "split?); its parameters: profile, data_path, splits_path, split,"),
])
def test_papermill_stops_on_a_bad_or_misspelt_parameter_with_one_line(arguments, line, tmp_path):
    """Issue 33: `papermill notebooks/05_monotonicity.ipynb out.ipynb -p split tset` ends on one line, no traceback;
    a misspelt name (`-p splt validation`) fails the same way instead of running the chapter on the default split."""
    import subprocess

    start = time.perf_counter()
    run = subprocess.run(papermill_command(str(ROOT / "notebooks" / "05_monotonicity.ipynb"), str(tmp_path / "out.ipynb"),
                                           "--cwd", str(tmp_path), "--no-progress-bar", *arguments),
                         capture_output=True, text=True, timeout=300)
    seconds = time.perf_counter() - start
    assert run.returncode == 1, run.stderr[-2000:]
    errors = [text for text in run.stderr.splitlines() if "Error" in text or "Traceback" in text]
    assert errors == [next(text for text in errors if text.startswith(line))], run.stderr[-3000:]
    assert not list(tmp_path.glob("*.numbers.json"))
    assert seconds < 60  # kernel start and imports; the closing note of issue 33 gives the measured times


def test_the_hook_imports_before_or_after_papermill():
    """With the entry point registered (a fresh install), importing the hook first once made papermill load it while it
    was half imported (a circular import: papermill's engines ask for ``ENGINE`` as they load); either order works."""
    import subprocess
    import sys

    for first, second in (("caplib.papermill_hook", "papermill"), ("papermill", "caplib.papermill_hook")):
        run = subprocess.run([sys.executable, "-c", f"import {first}, {second}; import caplib.papermill_hook as hook; "
                              f"print(hook.ENGINE.__name__)"], capture_output=True, text=True, timeout=120)
        assert run.returncode == 0 and run.stdout.strip() == "NBClientEngine", run.stderr[-2000:]
