"""The book's figures draw what they are given: check the computed cells, not pixels."""

import matplotlib
import numpy as np
import pandas as pd

from caplib import plots

matplotlib.use("Agg")  # importing caplib.plots chooses no backend (chapters call caplib.book.setup); draw headless
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


def test_confusion_heatmap_counts_pairs_in_eq1_order_and_skips_missing():
    rows = ["exact", "exact", "partial", "Inv", None, "exact"]
    columns = ["exact", "equivalent", "partial", "contradictory", "exact", ""]
    fig = plots.confusion_heatmap(rows, columns, "synthetic", "human")
    grid = fig.axes[0].images[0].get_array()
    index = {label: i for i, label in enumerate(LABELS)}
    expected = np.zeros((8, 8))
    for a, b in [("exact", "exact"), ("exact", "equivalent"), ("partial", "partial"), ("invalid", "contradictory")]:
        expected[index[a], index[b]] += 1
    assert np.array_equal(grid, expected)
    assert "2/4 on the diagonal" in fig.axes[0].get_title()


def test_grouped_bars_draws_one_bar_per_cell_and_skips_nan():
    table = pd.DataFrame({"paper": [0.25, 0.5], "run": [0.1, np.nan]}, index=["short", "long"])
    fig = plots.grouped_bars(table, "t", percent=True)
    heights = sorted(round(p.get_height(), 6) for p in fig.axes[0].patches)
    assert heights == [10.0, 25.0, 50.0]
    assert sorted(t.get_text() for t in fig.axes[0].texts) == ["10.0", "25.0", "50.0"]


def test_class_distributions_wraps_panels_and_keeps_eq1_order_top_down():
    rng = np.random.default_rng(1)
    frame = pd.DataFrame({"label_semantic": list(LABELS) * 3, **{m: rng.uniform(size=24) for m in "abc"}})
    for metrics in (["a"], ["a", "b"], ["a", "b", "c"]):  # one inversion of the shared axis, whatever the count
        fig = plots.class_distributions(frame, metrics)
        assert all(ax.yaxis_inverted() for ax in fig.axes)
    fig = plots.class_distributions(frame, ["a", "b", "c"], columns=2)
    assert [ax.get_visible() for ax in fig.axes] == [True, True, True, False]
    assert [ax.get_title() for ax in fig.axes[:3]] == ["a", "b", "c"]
    # the boxes follow Eq. 1: box i (y = i) holds class LABELS[i - 1]; its median is that class's median
    # median lines: vertical, spanning the whole box height (0.6; the whisker caps span half of it)
    medians = {round(float(np.mean(line.get_ydata()))): line.get_xdata()[0] for line in fig.axes[0].lines
               if np.isclose(abs(np.ptp(line.get_ydata())), 0.6) and np.ptp(line.get_xdata()) == 0}
    expected = {i: np.median(frame.loc[frame["label_semantic"] == label, "a"]) for i, label in enumerate(LABELS, 1)}
    assert medians.keys() == expected.keys()
    assert np.allclose([medians[i] for i in expected], list(expected.values()))
    assert [t.get_text() for t in fig.axes[0].get_yticklabels()] == list(LABELS)


def test_directional_scatter_iso_cap_lines_satisfy_eq3():
    rng = np.random.default_rng(2)
    labels = list(LABELS) * 4
    for alpha in (0.5, 0.85, 1.0):
        fig = plots.directional_scatter(rng.uniform(size=32), rng.uniform(size=32), labels, alpha=alpha)
        lines = [line for line in fig.axes[0].lines if (line.get_gid() or "").startswith("iso-cap-")]
        assert [line.get_gid() for line in lines] == [f"iso-cap-{c:g}" for c in plots.ISO_CAP_LEVELS]
        for line, level in zip(lines, plots.ISO_CAP_LEVELS):
            x, y = np.asarray(line.get_xdata()), np.asarray(line.get_ydata())
            assert np.allclose(alpha * x + (1 - alpha) * y, level) and len(x) >= 2
            assert ((y >= 0) & (y <= 1)).all()
        assert f"alpha = {alpha:g}" in fig.axes[0].get_xlabel()
    plain = plots.directional_scatter([0.2, 0.8], [0.4, 0.6], ["partial", "overinclusive_valid"])
    assert not [line for line in plain.axes[0].lines if (line.get_gid() or "").startswith("iso-cap-")]
    assert "alpha = 0.85" in plain.axes[0].get_xlabel()


def test_printed_metric_names_are_the_paper_table_rows():
    from caplib import paper
    from caplib.scoring import EXTENSION_METRICS, METRIC_NAMES

    # the shortcut baseline is no metric; decomposed CAP is one, beyond the paper's tables (Sec. 9)
    assert set(plots.PRINTED_METRIC) == set(METRIC_NAMES) | set(EXTENSION_METRICS) | {"shortcut"}
    for number in (2, 4, 13, 14):
        rows = set(paper.load_table(number)["metric"])
        assert rows == {plots.PRINTED_METRIC[m] for m in METRIC_NAMES if m not in ("em", "acc")}


def test_alpha_curves_draw_one_line_per_column_over_alpha():
    table = pd.DataFrame({"OV>Part": [40.0, 30.0, 20.0], "OV>OI": [60.0, 65.0, 70.0]}, index=[0.5, 0.85, 1.0])
    fig = plots.alpha_curves(table, "t")
    ax = fig.axes[0]
    data = [line for line in ax.lines if line.get_gid() not in ("chance", "marked")]
    assert [line.get_label() for line in data] == ["OV>Part", "OV>OI"]
    assert np.allclose(data[0].get_xdata(), [0.5, 0.85, 1.0]) and np.allclose(data[1].get_ydata(), [60, 65, 70])
    (chance,) = [line for line in ax.lines if line.get_gid() == "chance"]
    (marked,) = [line for line in ax.lines if line.get_gid() == "marked"]
    assert np.allclose(chance.get_ydata(), 50.0) and np.allclose(marked.get_xdata(), 0.85)
    bare = plots.alpha_curves(table, "t", chance=None, marked=None)
    assert len(bare.axes[0].lines) == 2


def test_interactive_scatter_hovers_each_rows_texts_and_is_deterministic():
    import json
    import re

    rows = pd.DataFrame({"question": ["Capital of France?", "Largest planet?", "Boiling point of water?"],
                         "gold_answer": ["Paris", "Jupiter", "100 C"], "answer": ["Lyon", "Jupiter", "at 100 C"],
                         "label_semantic": ["invalid", "exact", "partial"],
                         "fwd": [0.1, 0.95, 0.7], "bwd": [0.2, 0.9, 0.3]})
    html = plots.to_html(plots.interactive_scatter(rows, "fwd", "bwd", classes=["exact", "partial"],
                                                   x_title="D(g -> p)"))
    assert html == plots.to_html(plots.interactive_scatter(rows, "fwd", "bwd", classes=["exact", "partial"],
                                                           x_title="D(g -> p)"))
    assert f'src="{plots.PLOTLY_JS}"' in html and "cdn" not in html.lower()
    traces = json.loads(re.search(r"Plotly\.newPlot\(\s*\"[^\"]+\",\s*(\[.*?\]),\s*\{", html, re.S).group(1))
    assert [trace["name"] for trace in traces] == ["exact", "partial"]  # the invalid row is not shown
    assert traces[1]["customdata"] == [["Boiling point of water?", "100 C", "at 100 C"]]
    assert traces[1]["marker"]["color"] == plots.CLASS_COLORS["partial"]
    assert "class: partial" in traces[1]["hovertemplate"] and "D(g -> p)" in traces[1]["hovertemplate"]


def _hover_rows() -> pd.DataFrame:
    rng = np.random.default_rng(3)
    labels = [label for label in LABELS for _ in range(3)]
    return pd.DataFrame({"question": [f"q{i}?" for i in range(len(labels))], "gold_answer": "gold",
                         "answer": [f"a{i}" for i in range(len(labels))], "label_semantic": labels,
                         "cap": rng.uniform(size=len(labels)), "bleu": rng.uniform(size=len(labels))})


def test_interactive_distributions_hover_names_the_row_and_the_menu_switches_metric():
    rows = _hover_rows()
    fig = plots.interactive_distributions(rows, ["cap", "bleu"])
    assert [trace.name for trace in fig.data] == list(LABELS)  # Eq. 1 order, every class present
    partial = rows[rows["label_semantic"] == "partial"]
    trace = fig.data[LABELS.index("partial")]
    assert np.allclose(trace.x, partial["cap"])
    # hover: question, gold, answer, then the row's score under every metric
    assert [list(row[:3]) for row in trace.customdata] == partial[["question", "gold_answer", "answer"]].values.tolist()
    assert np.allclose(np.array([row[3:] for row in trace.customdata], dtype=float), partial[["cap", "bleu"]])
    assert "CAP %{customdata[3]:.3f} · BLEU %{customdata[4]:.3f}" in trace.hovertemplate
    bleu = fig.layout.updatemenus[0].buttons[1]
    assert bleu.label == "BLEU"
    assert np.allclose(bleu.args[0]["x"][LABELS.index("partial")], partial["bleu"])
    assert list(fig.layout.yaxis.categoryarray) == list(reversed(LABELS))  # exact on top
    assert not plots.interactive_distributions(rows, ["cap"]).layout.updatemenus  # one metric: no menu


def test_interactive_violation_matrix_agrees_with_the_static_one_and_names_both_classes():
    fig = plots.interactive_violation_matrix(MEANS, counts={"OV": 7})
    grid = np.array(fig.data[0].z, dtype=float)
    assert int(np.sum(grid <= 0)) == 3 and np.isfinite(grid).sum() == 25
    assert "3/25 violations" in fig.layout.title.text
    ov, part = LABELS.index("overinclusive_valid"), LABELS.index("partial")
    assert np.isclose(grid[ov, part], 0.5 - 0.6)
    hover = fig.data[0].customdata[ov][part]
    assert "overinclusive_valid (n=7), mean 0.500" in hover and "partial, mean 0.600" in hover
    assert "violation" in hover and fig.data[0].text[ov][part] == "-0.10 ✗"
    exact, contra = LABELS.index("exact"), LABELS.index("contradictory")
    assert "respected" in fig.data[0].customdata[exact][contra]
    scaled = plots.interactive_violation_matrix(MEANS, x100=True)   # the paper's x100 scale
    assert np.isclose(np.array(scaled.data[0].z, dtype=float)[ov, part], -10.0)
    assert scaled.data[0].text[ov][part] == "-10.0 ✗" and "mean 50.0" in scaled.data[0].customdata[ov][part]


def test_interactive_sweep_hovers_every_measure_and_outlines_the_papers_setting():
    grid = pd.DataFrame([{"alpha": a, "lam": l, "spearman": a + l, "pairwise_accuracy": a * l, "violations": 2}
                         for a in (0.5, 0.85) for l in (0.0, 0.3)])
    fig = plots.interactive_sweep(grid, "pairwise_accuracy")
    assert list(fig.data[0].y) == ["0.85", "0.5"]
    assert np.allclose(np.array(fig.data[0].z, dtype=float), [[0.0, 0.255], [0.0, 0.15]])
    cell = np.array(fig.data[0].customdata, dtype=float)[0, 1]   # alpha 0.85, lambda 0.3
    assert np.allclose(cell, [1.15, 0.255, 2])
    (outline,) = fig.layout.shapes
    assert (outline.x0, outline.y0) == (0.5, -0.5)   # column 1 (lambda 0.3), row 0 (alpha 0.85)


def test_score_bands_draws_each_band_in_its_class_colour_and_each_cut_as_a_line():
    from matplotlib.colors import to_hex

    rows = pd.DataFrame({"cap": [0.1, 0.3, 0.6, 0.9], "label_semantic": ["invalid", "partial", "partial", "exact"]})
    uniform = pd.DataFrame({"low": [0.0, 0.5], "high": [0.5, 1.0], "class": ["invalid", "exact"]})
    fitted = pd.DataFrame({"low": [0.0, 0.2, 0.75], "high": [0.2, 0.75, 1.0], "class": ["invalid", "partial", "exact"]})
    fig = plots.score_bands(rows, {"uniform": uniform, "fitted": fitted})
    strips, main = fig.axes[:2], fig.axes[-1]
    bars = [(round(p.get_x(), 3), round(p.get_width(), 3), to_hex(p.get_facecolor())) for p in strips[1].patches]
    assert bars == [(0.0, 0.2, plots.CLASS_COLORS["invalid"]), (0.2, 0.55, plots.CLASS_COLORS["partial"]),
                    (0.75, 0.25, plots.CLASS_COLORS["exact"])]
    cuts = {name: sorted(line.get_xdata()[0] for line in main.lines if line.get_gid() == f"cut:{name}")
            for name in ("uniform", "fitted")}
    assert cuts == {"uniform": [0.5], "fitted": [0.2, 0.75]}
    interactive = plots.interactive_bands(rows.assign(question="Q?", gold_answer="a", answer="b"),
                                          {"uniform": uniform, "fitted": fitted})
    lines = [trace for trace in interactive.data if trace.type == "scatter"]
    assert [(t.name, t.x[0], t.visible) for t in lines] == [("uniform: Inv | Exact", 0.5, True),
                                                             ("fitted: Inv | Part", 0.2, False),
                                                             ("fitted: Part | Exact", 0.75, False)]
