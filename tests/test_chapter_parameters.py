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
    ({"profile": "ofline"}, "parameter profile='ofline': no profile 'ofline': use one of ['offline', 'paper', 'released']"),
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
