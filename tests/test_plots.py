"""The book's figures draw what they are given: check the computed cells, not pixels."""

import numpy as np
import pandas as pd

from caplib import plots
from caplib.taxonomy import LABELS

MEANS = {"exact": 0.9, "equivalent": 0.8, "alternative_correct": 0.4, "overinclusive_valid": 0.5,
         "partial": 0.6, "overinclusive_invalid": 0.3, "invalid": 0.2, "contradictory": 0.1}


def test_violation_matrix_hatches_exactly_the_violating_pairs():
    fig = plots.violation_matrix(MEANS)
    # alternative_correct (0.4) <= overinclusive_valid (0.5) and <= partial (0.6); OV (0.5) <= partial (0.6): 3.
    assert "3/25 violations" in fig.axes[0].get_title()
    hatched = [p for p in fig.axes[0].patches if p.get_hatch()]
    assert len(hatched) == 3


def test_sweep_heatmap_outlines_the_papers_setting():
    grid = pd.DataFrame([{"alpha": a, "lam": l, "spearman": a + l} for a in (0.5, 0.85) for l in (0.0, 0.3)])
    fig = plots.sweep_heatmap(grid)
    image = fig.axes[0].images[0].get_array()
    # rows sorted by alpha descending: first row is alpha=0.85 -> [0.85, 1.15]
    assert np.allclose(image[0], [0.85, 1.15]) and np.allclose(image[1], [0.5, 0.8])
    assert any(p.get_edgecolor()[:3] == (1.0, 0.0, 0.0) for p in fig.axes[0].patches)


def test_class_distributions_and_scatter_and_counts_render():
    rng = np.random.default_rng(0)
    frame = pd.DataFrame({"label_semantic": list(LABELS) * 5, "m": rng.uniform(size=40)})
    assert len(plots.class_distributions(frame, ["m"]).axes) == 1
    fig = plots.directional_scatter(rng.uniform(size=40), rng.uniform(size=40), frame["label_semantic"])
    assert len(fig.axes[0].get_legend().get_texts()) == 8
    bars = plots.counts_bar({"a": 3, "b": 5}, "t").axes[0].patches
    assert [b.get_width() for b in bars] == [3, 5]
    drawn = {t.get_text() for t in plots.taxonomy_order().axes[0].texts}
    assert set(LABELS) <= drawn
