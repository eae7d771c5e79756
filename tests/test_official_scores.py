"""caplib against the authors' release, row by row and table by table (issue 31, items 2 and 4).

The release is read from ``../shared/official`` beside the repository (its MIRROR.md says what each file is and how
it was checked); none of it is in the repository. Every test here is skipped, with the reason, where it is absent.

- BLEU, ROUGE-L and METEOR of the paper profile against ``docs/data/scores.json``, every row (Sec. 6 baselines), and
  their Spearman, Kendall and pairwise accuracy against ``docs/data/results.json`` (Tab. 2's quantities).

The paper's label tables (Tab. 8, 16, 17) recomputed from the release are ``caplib.reproduction``'s, asserted in
``tests/test_release.py`` with every other table the release determines.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from caplib import evaluation, paper
from caplib.baselines import score
from caplib.baselines.lexical import rounded
from caplib.profiles import load_profile
from caplib.wordnet import wordnet_loads

OFFICIAL = Path(__file__).resolve().parents[1].parent / "shared" / "official"
FILES = ("data/CAP-Correctness.csv", "docs/data/scores.json", "docs/data/results.json")
pytestmark = pytest.mark.skipif(
    not all((OFFICIAL / name).is_file() for name in FILES),
    reason=f"the authors' release is not at {OFFICIAL} (needs {', '.join(FILES)}; see MIRROR.md there)",
)
LEXICAL = ("bleu", "rouge_l", "meteor")
PRINTED = {"bleu": "BLEU", "rouge_l": "ROUGE-L", "meteor": "METEOR"}
DROPPED_ROW = 4306  # the one row without an answer: the authors score every other row


@pytest.fixture(scope="module")
def release() -> pd.DataFrame:
    """``scores.json`` joined with CAP-Correctness.csv on ``row_id`` (the 0-based data row), texts as written."""
    rows = pd.read_csv(OFFICIAL / "data" / "CAP-Correctness.csv", dtype=str, keep_default_na=False)
    rows.insert(0, "row_id", range(len(rows)))
    scores = json.loads((OFFICIAL / "docs" / "data" / "scores.json").read_text(encoding="utf-8"))
    frame = pd.DataFrame({key: values for key, values in scores.items() if key != "metrics"})
    joined = frame.merge(rows, on="row_id", how="inner", validate="one_to_one")
    assert len(rows) == 8827 and len(joined) == 8826 and DROPPED_ROW not in set(joined["row_id"])
    assert rows.loc[DROPPED_ROW, "answer"].strip() == ""
    assert (joined["label"] == joined["label_semantic"].str.strip().str.lower()).all()
    return joined


@pytest.fixture(scope="module")
def full_floats(release: pd.DataFrame) -> dict[str, np.ndarray]:
    """BLEU, ROUGE-L and METEOR under the paper profile's options, but every float in full (``decimals=None``):
    rounded to the profile's decimals they are the profile's scores, in full they give the printed Tab. 2 and 4."""
    if not wordnet_loads():
        pytest.skip("WordNet not provisioned: run `python -m caplib.baselines provision-wordnet`")
    options = load_profile("paper").baselines
    return {metric: score(metric, release["gold_answer"], release["answer"], **{**options[metric], "decimals": None})
            for metric in LEXICAL}


def _profile_scores(full_floats: dict[str, np.ndarray], metric: str) -> np.ndarray:
    return rounded(full_floats[metric], load_profile("paper").baselines[metric]["decimals"])


# --------------------------------------------------------------------------------- item 2: the baselines, per row


@pytest.mark.slow
@pytest.mark.parametrize("metric", LEXICAL)
def test_the_paper_profile_equals_the_released_scores_on_every_row(release, full_floats, metric):
    ours, released = _profile_scores(full_floats, metric), release[metric].to_numpy(dtype=float)
    differing = np.flatnonzero(np.abs(ours - released) > 1e-6)
    shown = "; ".join(f"row {release['row_id'].iat[i]}: ours {ours[i]:.10f}, released {released[i]:.10f}, "
                      f"gold {release['gold_answer'].iat[i][:60]!r}, answer {release['answer'].iat[i][:60]!r}"
                      for i in differing[:5])
    assert differing.size == 0, f"{differing.size} of {len(ours)} rows differ by more than 1e-6: {shown}"
    # both carry 10 decimals: the same numbers, bit for bit, but where the release's CSV step moved a half
    unequal = {(metric, int(row)) for row in release["row_id"][ours != released]}
    assert unequal == {key for key in NOT_BIT_FOR_BIT if key[0] == metric}


#: Rows whose released score is not caplib's bit for bit (within 1e-6 all the same), by cause. Row 2511 (validation):
#: METEOR is 0.24658203125000006 in nltk 3.9.4 and 3.10.4 alike, 6e-17 above the half 0.24658203125, so it rounds
#: to 0.2465820313; the release's scores went through a CSV read back by pandas' default float parser, which is not
#: round-trip exact and reads it as 0.24658203125, rounded to 0.2465820312 (float_precision="round_trip" would not).
NOT_BIT_FOR_BIT = {("meteor", 2511)}


@pytest.mark.slow
def test_rank_statistics_on_the_test_split_equal_the_released_ones(release, full_floats):
    released = {row["metric"]: row for row in
                json.loads((OFFICIAL / "docs" / "data" / "results.json").read_text(encoding="utf-8"))["correlations"]}
    test = (release["split"] == "test").to_numpy()
    labels = release["label_semantic"][test]
    assert test.sum() == 7826
    for metric in LEXICAL:
        ours = _profile_scores(full_floats, metric)[test]
        spearman, kendall = evaluation.rank_correlation(ours, labels)
        computed = {"spearman": spearman, "kendall": kendall,
                    "pairwise_accuracy": evaluation.pairwise_accuracy(ours, labels)}
        for statistic, value in computed.items():
            assert value == pytest.approx(released[metric][statistic], abs=1e-6), (metric, statistic)


#: Cells of Tab. 2 and 4 where the printed value is not what the released scores give in full floats, (printed,
#: recomputed): one digit apart in each, misprints as far as the release shows.
MISPRINTS = {(2, "ROUGE-L", "pairwise_accuracy"): (55.35, 53.35), (4, "BLEU", "OV>OI"): (34.8, 33.8)}


@pytest.mark.slow
def test_full_floats_give_the_printed_tab2_and_tab4_lexical_rows(release, full_floats):
    """The paper's printed lexical rows rank the scores in full floats (``decimals=None``), where the release's
    evaluation rounds to 10 decimals first: both are named options, the release's the default."""
    test = (release["split"] == "test").to_numpy()
    labels = release["label_semantic"][test]
    tab2, tab4 = paper.load_table(2).set_index("metric"), paper.load_table(4).set_index("metric")
    found = {}
    for metric, printed in PRINTED.items():
        values = full_floats[metric][test]
        spearman, kendall = evaluation.rank_correlation(values, labels)
        cells = {(2, "spearman"): spearman, (2, "kendall"): kendall,
                 (2, "pairwise_accuracy"): evaluation.pairwise_accuracy(values, labels),
                 **{(4, pair): value for pair, value in evaluation.hard_pair_accuracy(values, labels).items()}}
        for (table, column), value in cells.items():
            shown = (tab2 if table == 2 else tab4).loc[printed, column]
            if round(100 * value, 2) != shown:
                found[(table, printed, column)] = (shown, round(100 * value, 2))
    assert found == MISPRINTS


# ------------------------------------------------------------------------- item 4: Tab. 8, 16 and 17 recomputed
