"""Figures of the book: the taxonomy order, per-class score distributions (Fig. 3), the 25-pair violation matrix,
the alpha/lambda sweep (Tab. 12) and the directional decomposition of CAP (Sec. 7.3).

Each static figure is a matplotlib ``Figure`` (for print, the PDF and the tests); the four figures a reader
explores example by example also come as plotly figures (``interactive_*``: Fig. 3's distributions, the violation
matrix, the alpha/lambda heatmap and the directional scatter) whose hover names the question, gold answer, answer,
class and scores, embedded offline with :func:`to_html`. Nothing is drawn that was not computed from the arguments.
Importing this module changes no global setting: a chapter chooses the headless backend and PNG output with
:func:`caplib.book.setup`.

Example:
    >>> fig = violation_matrix(MEANS_EXAMPLE)
    >>> html = to_html(interactive_violation_matrix(MEANS_EXAMPLE))
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Mapping, Sequence

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from caplib.taxonomy import ABBREVIATIONS, HARD_PAIRS, LABELS, SEVERITY, STRICT_PAIRS, normalize_label

if TYPE_CHECKING:
    import plotly.graph_objects as go

#: One colour per class, from most correct (green) to least correct (red), used in every figure.
CLASS_COLORS: Mapping[str, str] = dict(
    zip(LABELS, ["#1a9850", "#66bd63", "#a6d96a", "#d9ef8b", "#fee08b", "#fdae61", "#f46d43", "#d73027"])
)

#: Metric names as the paper's tables print them (Tab. 2-4, 13, 14); EM and ACC (Q-CARE) are not in those tables.
PRINTED_METRIC: Mapping[str, str] = {"cap": "CAP", "bleu": "BLEU", "rouge_l": "ROUGE-L", "meteor": "METEOR",
                                     "bertscore": "BERTScore", "comet": "COMET", "em": "EM", "acc": "ACC",
                                     "shortcut": "Shortcut", "cap_decomposed": "CAP (decomposed)"}

#: Where a chapter page finds plotly.js: shipped with the book by ``make book`` (``_vendor/``, copied to the site's
#: root), never a CDN.
PLOTLY_JS = "../../plotly.min.js"

#: Class means of the examples in this module's docstrings (three violations: alternative <= OV, alternative <= partial
#: and OV <= partial).
MEANS_EXAMPLE: Mapping[str, float] = {"exact": 0.9, "equivalent": 0.8, "alternative_correct": 0.4,
                                      "overinclusive_valid": 0.5, "partial": 0.6, "overinclusive_invalid": 0.3,
                                      "invalid": 0.2, "contradictory": 0.1}

#: CAP values at which ``directional_scatter(..., alpha=...)`` draws its iso-CAP lines.
ISO_CAP_LEVELS: tuple[float, ...] = (0.2, 0.4, 0.6, 0.8)


def taxonomy_order() -> Figure:
    """The ordering of Eq. 1 as a ladder of severity levels, with the 4 hard pairs of Tab. 4 drawn as arcs."""
    fig, ax = plt.subplots(figsize=(8, 4.2))
    levels = sorted(set(SEVERITY.values()), reverse=True)
    positions: dict[str, tuple[float, float]] = {}
    for level in levels:
        members = [label for label in LABELS if SEVERITY[label] == level]
        for i, label in enumerate(members):
            x = i - (len(members) - 1) / 2
            positions[label] = (x * 2.4, level)
            ax.text(x * 2.4, level, label, ha="center", va="center", fontsize=9,
                    bbox={"boxstyle": "round", "facecolor": CLASS_COLORS[label], "edgecolor": "0.3"})
    for higher, lower in HARD_PAIRS:
        (x1, y1), (x2, y2) = positions[higher], positions[lower]
        ax.annotate("", xy=(x2 + 0.9, y2), xytext=(x1 + 0.9, y1),
                    arrowprops={"arrowstyle": "->", "color": "#3b4cc0", "connectionstyle": "arc3,rad=-0.35"})
    ax.set(yticks=levels, yticklabels=[f"severity {level}" for level in levels], xlim=(-4.2, 4.2), ylim=(-0.7, 6.7),
           xticks=[], title="Eq. 1 as severity levels (App. C.2); blue arrows: the 4 hard pairs of Tab. 4")
    ax.spines[["top", "right", "bottom"]].set_visible(False)
    fig.tight_layout()
    return fig


def class_distributions(frame: pd.DataFrame, metrics: Sequence[str], label_column: str = "label_semantic",
                        columns: int | None = None) -> Figure:
    """Per-class score distributions, one panel per metric (the paper's Fig. 3), classes in Eq. 1 order.

    ``columns`` wraps the panels into rows of at most that many (default: all panels in one row).
    """
    present = [label for label in LABELS if label in set(frame[label_column].map(normalize_label))]
    labels = frame[label_column].map(normalize_label)
    ncols = min(columns or len(metrics), len(metrics))
    nrows = -(-len(metrics) // ncols)
    fig, axes = plt.subplots(nrows, ncols, figsize=(3.3 * ncols, 0.3 + 3.9 * nrows), sharey=True, squeeze=False)
    for ax, metric in zip(axes.flat, metrics):
        data = [frame.loc[labels == label, metric].to_numpy(dtype=float) for label in present]
        parts = ax.boxplot(data, orientation="horizontal", patch_artist=True, widths=0.6, showfliers=False)
        for patch, label in zip(parts["boxes"], present):
            patch.set_facecolor(CLASS_COLORS[label])
        for i, values in enumerate(data, start=1):
            jitter = np.random.default_rng(i).uniform(-0.18, 0.18, size=len(values))
            ax.scatter(values, i + jitter, s=4, color="0.25", alpha=0.35, linewidths=0)
        ax.set_title(metric)
        ax.set_xlim(-0.02, 1.02)
    for ax in axes.flat[len(metrics):]:
        ax.set_visible(False)  # the unused cells of the last row
    axes[0][0].set_yticks(range(1, len(present) + 1))
    axes[0][0].set_yticklabels(present)
    axes[0][0].invert_yaxis()  # shared y: inverting once flips every panel (Eq. 1 order top-down)
    fig.suptitle("Score distribution per class (boxes: quartiles; dots: examples)")
    fig.tight_layout()
    return fig


def violation_matrix(class_means: Mapping[str, float], title: str = "", x100: bool = False) -> Figure:
    """Heatmap of mean(higher) - mean(lower) over the 25 strict pairs; hatched cells are violations (App. C.1).
    ``x100`` prints the differences x100 (means in [0, 1] given), as the paper's tables do."""
    means = {normalize_label(label): float(value) * (100 if x100 else 1) for label, value in class_means.items()}
    grid = np.full((len(LABELS), len(LABELS)), np.nan)
    index = {label: i for i, label in enumerate(LABELS)}
    for higher, lower in STRICT_PAIRS:
        if higher in means and lower in means:
            grid[index[higher], index[lower]] = means[higher] - means[lower]
    fig, ax = plt.subplots(figsize=(6.4, 5.4))
    limit = np.nanmax(np.abs(grid)) if np.isfinite(grid).any() else 1.0
    image = ax.imshow(grid, cmap="RdBu", vmin=-limit, vmax=limit)
    for (row, col), value in np.ndenumerate(grid):
        if np.isfinite(value):
            violated = value <= 0
            ax.text(col, row, f"{value:+.1f}" if x100 else f"{value:+.2f}", ha="center", va="center", fontsize=7,
                    fontweight="bold" if violated else "normal")
            if violated:
                ax.add_patch(plt.Rectangle((col - 0.5, row - 0.5), 1, 1, fill=False, hatch="///", edgecolor="k"))
    short = [ABBREVIATIONS[label] for label in LABELS]
    ax.set_xticks(range(len(LABELS)), short)
    ax.set_yticks(range(len(LABELS)), short)
    ax.set(xlabel="lower class", ylabel="higher class")
    violations = int(np.sum(grid <= 0))
    ax.set_title(title or f"mean(higher) - mean(lower): {violations}/25 violations (hatched)")
    fig.colorbar(image, ax=ax, shrink=0.8)
    fig.tight_layout()
    return fig


def _scaled(sweep: pd.DataFrame, x100: bool) -> pd.DataFrame:
    """The sweep with its correlation and accuracy columns x100 (the paper's tables' scale) when ``x100``."""
    if not x100:
        return sweep
    return sweep.assign(**{c: sweep[c] * 100 for c in ("spearman", "kendall", "pairwise_accuracy") if c in sweep})


def sweep_heatmap(sweep: pd.DataFrame, value: str = "spearman", title: str = "", x100: bool = False) -> Figure:
    """Heatmap of one protocol measure over an alpha x lambda grid (Tab. 12); the paper's choice is outlined.
    ``x100`` prints correlations and accuracies x100, as the paper's tables do."""
    table = _scaled(sweep, x100).pivot(index="alpha", columns="lam", values=value).sort_index(ascending=False)
    fig, ax = plt.subplots(figsize=(1.0 + 0.75 * table.shape[1], 0.9 + 0.5 * table.shape[0]))
    image = ax.imshow(table.to_numpy(dtype=float), cmap="viridis", aspect="auto")
    digits = 0 if value == "violations" else (1 if x100 else 3)
    for (row, col), cell in np.ndenumerate(table.to_numpy(dtype=float)):
        ax.text(col, row, f"{cell:.{digits}f}", ha="center", va="center", fontsize=7, color="w")
    ax.set_xticks(range(table.shape[1]), [f"{lam:g}" for lam in table.columns])
    ax.set_yticks(range(table.shape[0]), [f"{alpha:g}" for alpha in table.index])
    ax.set(xlabel="lambda (neutral weight)", ylabel="alpha (weight of D(g->p))")
    for row, alpha in enumerate(table.index):
        for col, lam in enumerate(table.columns):
            if np.isclose(alpha, 0.85) and np.isclose(lam, 0.30):
                ax.add_patch(plt.Rectangle((col - 0.5, row - 0.5), 1, 1, fill=False, edgecolor="r", linewidth=2))
    ax.set_title(title or f"{value} over the alpha/lambda grid (red: paper's alpha=0.85, lambda=0.30)")
    fig.colorbar(image, ax=ax, shrink=0.8)
    fig.tight_layout()
    return fig


def directional_scatter(forward: Sequence[float], backward: Sequence[float], labels: Sequence[str],
                        classes: Sequence[str] | None = None, alpha: float | None = None) -> Figure:
    """D(g->p) against D(p->g) per example, coloured by class: the mechanism of Sec. 7.3 / App. E.

    With ``alpha``, dashed iso-CAP lines (alpha * x + (1 - alpha) * y = c for c = 0.2 ... 0.8, Eq. 3) show which
    points CAP ranks equal: the steeper they are, the more D(g->p) alone decides the rank. The axis labels
    name the weights (default: the paper's alpha = 0.85, no lines).
    """
    normalized = [normalize_label(label) for label in labels]
    shown = [normalize_label(c) for c in classes] if classes else [c for c in LABELS if c in set(normalized)]
    forward, backward = np.asarray(forward, dtype=float), np.asarray(backward, dtype=float)
    fig, ax = plt.subplots(figsize=(5.6, 5.2))
    if alpha is not None:
        for level in ISO_CAP_LEVELS:
            if alpha < 1:
                x = np.linspace(0.0, 1.0, 201)
                y = (level - alpha * x) / (1.0 - alpha)
                inside = (y >= 0.0) & (y <= 1.0)
                x, y = x[inside], y[inside]
            else:
                x, y = np.array([level, level]), np.array([0.0, 1.0])
            ax.plot(x, y, ls="--", lw=0.8, color="0.55", gid=f"iso-cap-{level:g}")
            ax.text(x[0], y[0], f" CAP={level:g}", fontsize=6, color="0.4", va="bottom")
    for label in shown:
        mask = np.array([n == label for n in normalized])
        ax.scatter(forward[mask], backward[mask], s=14, alpha=0.7, color=CLASS_COLORS[label], label=label,
                   edgecolors="0.3", linewidths=0.3)
        if mask.any():
            ax.scatter(forward[mask].mean(), backward[mask].mean(), s=160, marker="X",
                       color=CLASS_COLORS[label], edgecolors="k", linewidths=1.2)
    ax.plot([0, 1], [0, 1], ls=":", color="0.5")
    weight = 0.85 if alpha is None else alpha
    ax.set(xlabel=f"D(g -> p)  (weight alpha = {weight:g})", ylabel=f"D(p -> g)  (weight 1 - alpha = {1 - weight:.2g})",
           xlim=(-0.02, 1.02), ylim=(-0.02, 1.02))
    ax.legend(fontsize=7, loc="lower right")
    ax.set_title("Directional scores per example (X: class mean)"
                 + ("" if alpha is None else "\ndashed: equal CAP (Eq. 3)"))
    fig.tight_layout()
    return fig


def _hover_texts(frame: pd.DataFrame, width: int = 140) -> np.ndarray:
    """Question, gold answer and answer of each row, cut at ``width`` characters, for a hover box."""
    return frame[["question", "gold_answer", "answer"]].astype(str).apply(
        lambda column: column.str.slice(0, width)).to_numpy()


def interactive_scatter(frame: pd.DataFrame, x: str, y: str, *, label_column: str = "label_semantic",
                        classes: Sequence[str] | None = None, x_title: str = "", y_title: str = "",
                        title: str = "") -> "go.Figure":
    """The points of a static scatter (e.g. :func:`directional_scatter`) as a figure an offline page can hover
    (:func:`to_html`): one trace per class in the colours of every figure, and a hover naming the row's question,
    gold answer, answer, class and both coordinates.

    Example:
        >>> rows = pd.DataFrame({"question": ["Capital of France?"], "gold_answer": ["Paris"], "answer": ["Lyon"],
        ...                      "label_semantic": ["invalid"], "d_fwd": [0.1], "d_bwd": [0.2]})
        >>> interactive_scatter(rows, "d_fwd", "d_bwd").data[0].customdata.tolist()
        [['Capital of France?', 'Paris', 'Lyon']]
    """
    import plotly.graph_objects as go

    labels = frame[label_column].map(normalize_label)
    shown = [normalize_label(c) for c in classes] if classes else [c for c in LABELS if c in set(labels)]
    fig = go.Figure()
    for label in shown:
        rows = frame[labels == label]
        fig.add_trace(go.Scatter(
            x=rows[x], y=rows[y], mode="markers", name=label, customdata=_hover_texts(rows),
            marker={"color": CLASS_COLORS[label], "size": 7, "line": {"width": 0.5, "color": "#444"}},
            hovertemplate=(f"<b>%{{customdata[0]}}</b><br>gold: %{{customdata[1]}}<br>answer: %{{customdata[2]}}"
                           f"<br>class: {label}<br>{x_title or x}: %{{x:.3f}}<br>{y_title or y}: %{{y:.3f}}"
                           "<extra></extra>")))
    fig.update_layout(title=title, xaxis_title=x_title or x, yaxis_title=y_title or y, width=640, height=520,
                      template="simple_white", legend={"font": {"size": 10}})
    return fig


def interactive_distributions(frame: pd.DataFrame, metrics: Sequence[str], label_column: str = "label_semantic",
                              title: str = "") -> "go.Figure":
    """Fig. 3 to explore: per class a box and its examples as dots, classes top-down in Eq. 1 order; with more
    than one metric a menu switches the metric. Hovering a dot names its question, gold answer, answer, class and
    the row's score under every metric, so an outlier can be read, not only seen.

    Example:
        >>> rows = pd.DataFrame({"question": ["Q?", "Q?"], "gold_answer": ["Paris", "Paris"],
        ...                      "answer": ["Paris", "Lyon"], "label_semantic": ["exact", "invalid"],
        ...                      "cap": [0.97, 0.12], "bleu": [1.0, 0.0]})
        >>> fig = interactive_distributions(rows, ["cap", "bleu"])
        >>> [trace.name for trace in fig.data], list(fig.data[1].x)
        (['exact', 'invalid'], [0.12])
        >>> [button.label for button in fig.layout.updatemenus[0].buttons]
        ['CAP', 'BLEU']
    """
    import plotly.graph_objects as go

    labels = frame[label_column].map(normalize_label)
    present = [label for label in LABELS if label in set(labels)]
    printed = [PRINTED_METRIC.get(m, m) for m in metrics]
    scores_line = " · ".join(f"{name} %{{customdata[{3 + i}]:.3f}}" for i, name in enumerate(printed))
    fig = go.Figure()
    for label in present:
        rows = frame[labels == label]
        customdata = np.concatenate([_hover_texts(rows).astype(object),
                                     rows[list(metrics)].to_numpy(dtype=float).astype(object)], axis=1)
        fig.add_trace(go.Box(
            x=rows[metrics[0]], y=[label] * len(rows), name=label, orientation="h", boxpoints="all",
            jitter=0.5, pointpos=0, fillcolor=CLASS_COLORS[label], line={"color": "#444", "width": 1},
            marker={"color": "#333", "size": 4, "opacity": 0.6}, customdata=customdata,
            hovertemplate=(f"<b>%{{customdata[0]}}</b><br>gold: %{{customdata[1]}}<br>answer: %{{customdata[2]}}"
                           f"<br>class: {label}<br>{scores_line}<extra></extra>")))
    fig.update_layout(
        title={"text": title or "Score per class (boxes: quartiles; dots: examples; hover a dot)", "x": 0.5},
        xaxis={"title": "score" if len(metrics) > 1 else printed[0], "range": [-0.02, 1.02]},
        yaxis={"categoryorder": "array", "categoryarray": list(reversed(present))},
        showlegend=False, width=720, height=120 + 48 * len(present), template="simple_white", margin={"t": 60})
    if len(metrics) > 1:
        with_menu(fig, [{"label": name, "method": "restyle",
                         "args": [{"x": [frame.loc[labels == label, metric].tolist() for label in present]},
                                  list(range(len(present)))]} for metric, name in zip(metrics, printed)])
    return fig


def with_menu(fig: "go.Figure", buttons: Sequence[Mapping]) -> "go.Figure":
    """Add a drop-down menu of ``buttons`` to ``fig`` in a band of its own: the title near the top of the figure,
    left-aligned and under plotly's tool bar, the menu under it, just above the plot: none covers another.

    Example:
        >>> with_menu(interactive_violation_matrix(MEANS_EXAMPLE), [{"label": "a"}]).layout.title.yref
        'container'
    """
    fig.update_layout(title={"x": 0.0, "xanchor": "left", "xref": "paper", "y": 1.0, "yanchor": "top",
                             "yref": "container", "pad": {"t": 34}},
                      updatemenus=[{"buttons": list(buttons), "direction": "down", "x": 0.0, "xanchor": "left",
                                    "y": 1.0, "yanchor": "bottom", "pad": {"b": 8}, "showactive": True}],
                      margin={"t": 110})
    return fig


def interactive_violation_matrix(class_means: Mapping[str, float], counts: Mapping[str, int] | None = None,
                                 title: str = "", x100: bool = False) -> "go.Figure":
    """The 25-pair matrix of :func:`violation_matrix` to explore: hovering a cell names the two classes, their
    mean scores (and row counts when ``counts`` is given), the difference, and whether Eq. 1 is respected;
    ``x100`` as in :func:`violation_matrix`.

    Example:
        >>> fig = interactive_violation_matrix(MEANS_EXAMPLE)
        >>> int(np.sum(np.array(fig.data[0].z, dtype=float) <= 0))   # alternative <= OV, <= partial; OV <= partial
        3
    """
    import plotly.graph_objects as go

    means = {normalize_label(label): float(value) * (100 if x100 else 1) for label, value in class_means.items()}
    digits = 1 if x100 else 3
    n = {normalize_label(label): int(value) for label, value in (counts or {}).items()}
    grid = np.full((len(LABELS), len(LABELS)), np.nan)
    hover = np.full((len(LABELS), len(LABELS)), "", dtype=object)
    text = np.full((len(LABELS), len(LABELS)), "", dtype=object)
    index = {label: i for i, label in enumerate(LABELS)}
    for higher, lower in STRICT_PAIRS:
        if higher in means and lower in means:
            row, col = index[higher], index[lower]
            difference = means[higher] - means[lower]
            grid[row, col] = difference
            verdict = "respected" if difference > 0 else "<b>violation</b>: the lower class scores as high or higher"
            sizes = [f" (n={n[c]})" if c in n else "" for c in (higher, lower)]
            hover[row, col] = (f"should score higher: {higher}{sizes[0]}, mean {means[higher]:.{digits}f}<br>"
                               f"should score lower: {lower}{sizes[1]}, mean {means[lower]:.{digits}f}<br>"
                               f"difference {difference:+.{digits}f}: {verdict}")
            text[row, col] = f"{difference:+.{1 if x100 else 2}f}" + (" ✗" if difference <= 0 else "")
    limit = float(np.nanmax(np.abs(grid))) if np.isfinite(grid).any() else 1.0
    short = [ABBREVIATIONS[label] for label in LABELS]
    fig = go.Figure(go.Heatmap(
        z=grid, x=short, y=short, customdata=hover, text=text, texttemplate="%{text}", colorscale="RdBu",
        zmin=-limit, zmax=limit, hovertemplate="%{customdata}<extra></extra>", hoverongaps=False))
    violations = int(np.sum(grid <= 0))
    fig.update_layout(
        title=title or f"mean(higher) - mean(lower): {violations}/25 violations (✗)",
        xaxis={"title": "lower class", "side": "bottom"}, yaxis={"title": "higher class", "autorange": "reversed"},
        width=620, height=560, template="simple_white")
    return fig


def interactive_sweep(sweep: pd.DataFrame, value: str = "spearman", title: str = "",
                      x100: bool = False) -> "go.Figure":
    """The alpha/lambda heatmap of :func:`sweep_heatmap` to explore: colour is ``value``, and hovering a cell gives
    every protocol measure at that setting (Spearman, pairwise accuracy, violations); the paper's setting
    (alpha = 0.85, lambda = 0.30) is outlined. ``x100`` as in :func:`sweep_heatmap`.

    Example:
        >>> grid = pd.DataFrame([{"alpha": a, "lam": l, "spearman": a + l, "pairwise_accuracy": a,
        ...                       "violations": 1} for a in (0.5, 0.85) for l in (0.0, 0.3)])
        >>> interactive_sweep(grid).data[0].z.tolist()[0]    # top row: alpha = 0.85
        [0.85, 1.15]
    """
    import plotly.graph_objects as go

    sweep = _scaled(sweep, x100)
    measures = [m for m in ("spearman", "pairwise_accuracy", "violations") if m in sweep.columns]
    tables = {m: sweep.pivot(index="alpha", columns="lam", values=m).sort_index(ascending=False) for m in measures}
    table = sweep.pivot(index="alpha", columns="lam", values=value).sort_index(ascending=False)
    customdata = np.stack([tables[m].to_numpy(dtype=float) for m in measures], axis=-1)
    digits = 1 if x100 else 3
    formats = {"spearman": f"Spearman %{{customdata[I]:.{digits}f}}",
               "pairwise_accuracy": f"pairwise accuracy %{{customdata[I]:.{digits}f}}",
               "violations": "violations %{customdata[I]:.0f}/25"}
    lines = "<br>".join(formats[m].replace("[I]", f"[{i}]") for i, m in enumerate(measures))
    fig = go.Figure(go.Heatmap(
        z=table.to_numpy(dtype=float), x=[f"{lam:g}" for lam in table.columns], y=[f"{a:g}" for a in table.index],
        customdata=customdata, colorscale="Viridis",
        texttemplate=f"%{{z:.{0 if value == 'violations' else digits}f}}",
        hovertemplate=f"alpha %{{y}}, lambda %{{x}}<br>{lines}<extra></extra>"))
    rows, columns = list(table.index), list(table.columns)
    for row, alpha in enumerate(rows):
        for col, lam in enumerate(columns):
            if np.isclose(alpha, 0.85) and np.isclose(lam, 0.30):
                fig.add_shape(type="rect", x0=col - 0.5, x1=col + 0.5, y0=row - 0.5, y1=row + 0.5,
                              line={"color": "red", "width": 3})
    fig.update_layout(
        title=title or f"{value} over the alpha/lambda grid (red: the paper's setting)",
        xaxis={"title": "lambda (neutral weight)", "type": "category"},
        yaxis={"title": "alpha (weight of D(g->p))", "type": "category", "autorange": "reversed"},
        width=640, height=120 + 45 * len(rows), template="simple_white")
    return fig


def to_html(fig: "go.Figure") -> str:
    """A plotly figure as an HTML fragment for a chapter page: plotly.js is loaded from :data:`PLOTLY_JS` (shipped
    with the book, never a CDN), and the element id is derived from the figure, so re-running a chapter writes
    the same HTML. The figure takes the width of the text column (plotly redraws it on resize; its height stays), so
    it is never cut at the column's edge, on a phone either.

    Example:
        >>> fig = interactive_violation_matrix(MEANS_EXAMPLE)
        >>> html = to_html(fig); PLOTLY_JS in html and '"responsive": true' in html and html == to_html(fig)
        True
    """
    import hashlib

    import plotly.graph_objects as go

    fluid = go.Figure(fig).update_layout(width=None, autosize=True)
    identity = hashlib.sha256(fluid.to_json().encode("utf-8")).hexdigest()[:12]
    return fluid.to_html(full_html=False, include_plotlyjs=PLOTLY_JS, div_id=f"caplib-{identity}",
                         default_width="100%", default_height=f"{fig.layout.height or 500}px",
                         config={"displaylogo": False, "responsive": True})


def counts_bar(counts: Mapping[str, int] | pd.Series, title: str, xlabel: str = "") -> Figure:
    """A horizontal bar chart of counts (class, dataset, question-type or subject distributions; Fig. 4-6)."""
    series = pd.Series(dict(counts)) if not isinstance(counts, pd.Series) else counts
    fig, ax = plt.subplots(figsize=(6, 0.35 * len(series) + 1.2))
    colors = [CLASS_COLORS.get(str(key), "#4c72b0") for key in series.index]
    ax.barh([str(key) for key in series.index], series.to_numpy(), color=colors, edgecolor="0.3")
    for i, value in enumerate(series.to_numpy()):
        ax.text(value, i, f" {value}", va="center", fontsize=8)
    ax.invert_yaxis()
    ax.set_title(title)
    ax.set_xlabel(xlabel or "count")
    fig.tight_layout()
    return fig


def confusion_heatmap(rows: Sequence[str], columns: Sequence[str], row_name: str, column_name: str,
                      title: str = "") -> Figure:
    """Counts of (row label, column label) over the eight classes in Eq. 1 order (e.g. synthetic vs human, Tab. 8).

    Pairs where either label is missing (None, NaN, empty) are left out; the diagonal is outlined, so agreement
    reads along it and near-diagonal cells are disagreements between neighbouring classes.
    """
    a = pd.Series(list(rows), dtype=object)
    b = pd.Series(list(columns), dtype=object)
    if len(a) != len(b):
        raise ValueError(f"confusion_heatmap: {len(a)} row labels but {len(b)} column labels; they must pair up")
    keep = ~(a.isna() | b.isna() | (a.astype(str).str.strip() == "") | (b.astype(str).str.strip() == ""))
    a, b = a[keep].map(normalize_label), b[keep].map(normalize_label)
    counts = pd.crosstab(pd.Categorical(a, categories=LABELS), pd.Categorical(b, categories=LABELS), dropna=False)
    grid = counts.reindex(index=LABELS, columns=LABELS, fill_value=0).to_numpy()
    fig, ax = plt.subplots(figsize=(6.4, 5.4))
    image = ax.imshow(grid, cmap="Blues")
    for (row, col), value in np.ndenumerate(grid):
        if value:
            ax.text(col, row, str(value), ha="center", va="center", fontsize=8,
                    color="w" if value > grid.max() / 2 else "k")
    for i in range(len(LABELS)):
        ax.add_patch(plt.Rectangle((i - 0.5, i - 0.5), 1, 1, fill=False, edgecolor="0.2", linewidth=1))
    short = [ABBREVIATIONS[label] for label in LABELS]
    ax.set_xticks(range(len(LABELS)), short)
    ax.set_yticks(range(len(LABELS)), short)
    ax.set_xlabel(column_name)
    ax.set_ylabel(row_name)
    ax.set_title(title or f"{row_name} vs {column_name}\n{int(np.trace(grid))}/{int(grid.sum())} on the diagonal")
    fig.colorbar(image, ax=ax, shrink=0.8)
    fig.tight_layout()
    return fig


def grouped_bars(table: pd.DataFrame, title: str, ylabel: str = "", percent: bool = False,
                 fmt: str = "{:.1f}") -> Figure:
    """One group of bars per row of ``table``, one bar per column (e.g. the paper beside this run, per class or type).

    NaN cells leave a gap. With ``percent=True`` the values are shares in [0, 1], drawn as percent. Each bar is
    labelled with its value formatted by ``fmt``.
    """
    values = table.to_numpy(dtype=float) * (100.0 if percent else 1.0)
    n_rows, n_columns = values.shape
    width = 0.8 / max(n_columns, 1)
    fig, ax = plt.subplots(figsize=(min(10.0, max(5.5, 0.3 * n_rows * (n_columns + 1) + 1.5)), 4.0))
    palette = plt.get_cmap("tab10")
    x = np.arange(n_rows)
    for j, column in enumerate(table.columns):
        drawn = ~np.isnan(values[:, j])
        offsets = x[drawn] - 0.4 + width * (j + 0.5)
        ax.bar(offsets, values[drawn, j], width, label=str(column), color=palette(j % 10), edgecolor="0.3")
        for offset, value in zip(offsets, values[drawn, j]):
            ax.text(offset, value, fmt.format(value), ha="center", va="bottom", fontsize=7)
    tilt = n_rows > 4
    ax.set_xticks(x, [str(index) for index in table.index], rotation=20 if tilt else 0,
                  ha="right" if tilt else "center")
    ax.set_ylabel(ylabel or ("percent" if percent else "value"))
    ax.set_title(title)
    highest = np.nanmax(values) if np.isfinite(values).any() else 0.0
    if highest > 0:
        ax.set_ylim(top=highest * 1.08)  # room for the value labels
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.0, 1.0), frameon=False)
    for side in ("top", "right"):
        ax.spines[side].set_visible(False)
    fig.tight_layout()
    return fig


def alpha_curves(table: pd.DataFrame, title: str, ylabel: str = "accuracy x100", chance: float | None = 50.0,
                 marked: float | None = 0.85) -> Figure:
    """One line per column of ``table`` over its index of alpha values (e.g. hard-pair accuracy of CAP recomputed
    at each alpha, Sec. 7.3); a dotted line at ``chance`` and a vertical mark at the ``marked`` alpha (the paper's)."""
    alphas = table.index.to_numpy(dtype=float)
    fig, ax = plt.subplots(figsize=(6.0, 4.0))
    for column in table.columns:
        ax.plot(alphas, table[column].to_numpy(dtype=float), marker="o", label=str(column))
    if chance is not None:
        ax.axhline(chance, ls=":", color="0.4", gid="chance")
    if marked is not None:
        ax.axvline(marked, ls="--", color="0.6", gid="marked")
    ax.set_xticks(alphas, [f"{alpha:g}" for alpha in alphas])
    ax.set_xlabel("alpha (weight of D(g->p), Eq. 3)")
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    ax.legend(fontsize=8)
    for side in ("top", "right"):
        ax.spines[side].set_visible(False)
    fig.tight_layout()
    return fig


def score_bands(frame: pd.DataFrame, bands: Mapping[str, pd.DataFrame], metric: str = "cap",
                label_column: str = "label_semantic", title: str = "") -> Figure:
    """Class bands on the score axis (Sec. 8.2) over the per-class distributions: one strip per labeler on top, each
    band coloured by the class it predicts (``bands``: name -> ``low``/``high``/``class`` rows, e.g.
    :meth:`caplib.calibration.ThresholdLabeler.bands_table`), and below, per class (Eq. 1 order, top-down), its
    scores as a box and dots, with every labeler's cut points as vertical lines (one line style per labeler).

    Example:
        >>> rows = pd.DataFrame({"cap": [0.1, 0.9], "label_semantic": ["invalid", "exact"]})
        >>> table = pd.DataFrame({"low": [0.0, 0.5], "high": [0.5, 1.0], "class": ["invalid", "exact"]})
        >>> len(score_bands(rows, {"fitted": table}).axes)
        2
    """
    labels = frame[label_column].map(normalize_label)
    present = [label for label in LABELS if label in set(labels)]
    styles = [":", "--", "-.", "-"]
    fig, axes = plt.subplots(len(bands) + 1, 1, sharex=True,
                             figsize=(7.5, 0.55 * len(bands) + 0.45 * len(present) + 1.6),
                             gridspec_kw={"height_ratios": [0.55] * len(bands) + [0.45 * len(present)]})
    main = axes[-1]
    data = [frame.loc[labels == label, metric].to_numpy(dtype=float) for label in present]
    parts = main.boxplot(data, orientation="horizontal", patch_artist=True, widths=0.6, showfliers=False)
    for patch, label in zip(parts["boxes"], present):
        patch.set_facecolor(CLASS_COLORS[label])
    for i, values in enumerate(data, start=1):
        jitter = np.random.default_rng(i).uniform(-0.18, 0.18, size=len(values))
        main.scatter(values, i + jitter, s=4, color="0.25", alpha=0.35, linewidths=0)
    main.set_yticks(range(1, len(present) + 1), [ABBREVIATIONS[label] for label in present])
    main.invert_yaxis()
    for (name, table), ax, style in zip(bands.items(), axes, styles):
        for low, high, label in zip(table["low"], table["high"], table["class"]):
            ax.barh(0, high - low, left=low, color=CLASS_COLORS[normalize_label(label)], edgecolor="0.3", height=0.8)
            if high - low > 0.04:
                ax.text((low + high) / 2, 0, ABBREVIATIONS[normalize_label(label)], ha="center", va="center",
                        fontsize=7)
        for cut in table["low"].iloc[1:]:
            main.axvline(cut, color="0.2", ls=style, lw=0.9, gid=f"cut:{name}")
        ax.set_yticks([0], [f"{name} ({style})"])
        ax.tick_params(axis="y", labelsize=8)
        for side in ("top", "right", "left"):
            ax.spines[side].set_visible(False)
    main.set_xlim(-0.02, 1.02)
    main.set_xlabel(PRINTED_METRIC.get(metric, metric))
    axes[0].set_title(title or "Bands on the score axis over the classes' scores")
    fig.tight_layout()
    return fig


def interactive_bands(frame: pd.DataFrame, bands: Mapping[str, pd.DataFrame], metric: str = "cap",
                      label_column: str = "label_semantic") -> "go.Figure":
    """:func:`interactive_distributions` of one metric with each labeler's cut points as vertical lines, each line
    named (labeler, the classes below and above) on hover; a menu of one entry per labeler shows its lines only
    (the first labeler's at first).

    Example:
        >>> rows = pd.DataFrame({"question": ["Q?"] * 2, "gold_answer": ["a"] * 2, "answer": ["a", "b"],
        ...                      "cap": [0.1, 0.9], "label_semantic": ["invalid", "exact"]})
        >>> table = pd.DataFrame({"low": [0.0, 0.5], "high": [0.5, 1.0], "class": ["invalid", "exact"]})
        >>> [trace.name for trace in interactive_bands(rows, {"fitted": table}).data][-1]
        'fitted: Inv | Exact'
    """
    import plotly.graph_objects as go

    fig = interactive_distributions(frame, [metric], label_column, title="Score per class with the labelers' cut "
                                                                         "points (hover a line or a dot)")
    boxes, owners, first = len(fig.data), [], next(iter(bands), None)
    ends = [fig.data[0].name, fig.data[boxes - 1].name] if boxes else []  # the top and bottom class rows
    for name, table in bands.items():
        below, above = table["class"].iloc[:-1], table["class"].iloc[1:]
        for cut, low, high in zip(table["low"].iloc[1:], below, above):
            fig.add_trace(go.Scatter(x=[cut, cut], y=ends, mode="lines", visible=name == first,
                                     line={"dash": "dash", "width": 1, "color": "#222"},
                                     name=f"{name}: {ABBREVIATIONS[normalize_label(low)]} | "
                                          f"{ABBREVIATIONS[normalize_label(high)]}",
                                     hovertemplate=f"{name}<br>cut %{{x:.3f}}: {low} below, {high} above"
                                                   "<extra></extra>"))
            owners.append(name)
    return with_menu(fig, [{"label": name, "method": "restyle",
                            "args": [{"visible": [True] * boxes + [owner == name for owner in owners]}]}
                           for name in bands])
