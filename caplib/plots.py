"""Figures of the book: the taxonomy order, per-class score distributions (Fig. 3), the 25-pair violation matrix,
the alpha/lambda sweep (Tab. 12) and the directional decomposition of CAP (Sec. 7.3).

Every function returns a matplotlib ``Figure`` and draws nothing it did not compute from its arguments.

Example:
    >>> fig = violation_matrix({"exact": 0.9, "equivalent": 0.8, "alternative_correct": 0.4,
    ...                         "overinclusive_valid": 0.5, "partial": 0.6, "overinclusive_invalid": 0.3,
    ...                         "invalid": 0.2, "contradictory": 0.1})
"""

from __future__ import annotations

from typing import Mapping, Sequence

import matplotlib

matplotlib.use("Agg")  # headless: papermill and CI have no display

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from caplib.taxonomy import ABBREVIATIONS, HARD_PAIRS, LABELS, SEVERITY, STRICT_PAIRS, normalize_label

#: One colour per class, from most correct (green) to least correct (red), used in every figure.
CLASS_COLORS: Mapping[str, str] = dict(
    zip(LABELS, ["#1a9850", "#66bd63", "#a6d96a", "#d9ef8b", "#fee08b", "#fdae61", "#f46d43", "#d73027"])
)


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
    ax.set_yticks(levels)
    ax.set_yticklabels([f"severity {level}" for level in levels])
    ax.set_xlim(-4.2, 4.2)
    ax.set_ylim(-0.7, 6.7)
    ax.set_xticks([])
    ax.set_title("Eq. 1 as severity levels (App. C.2); blue arrows: the 4 hard pairs of Tab. 4")
    for side in ("top", "right", "bottom"):
        ax.spines[side].set_visible(False)
    fig.tight_layout()
    return fig


def class_distributions(frame: pd.DataFrame, metrics: Sequence[str], label_column: str = "label_semantic") -> Figure:
    """Per-class score distributions, one panel per metric (the paper's Fig. 3), classes in Eq. 1 order."""
    present = [label for label in LABELS if label in set(frame[label_column].map(normalize_label))]
    labels = frame[label_column].map(normalize_label)
    fig, axes = plt.subplots(1, len(metrics), figsize=(3.3 * len(metrics), 4.2), sharey=True, squeeze=False)
    for ax, metric in zip(axes[0], metrics):
        data = [frame.loc[labels == label, metric].to_numpy(dtype=float) for label in present]
        parts = ax.boxplot(data, vert=False, patch_artist=True, widths=0.6, showfliers=False)
        for patch, label in zip(parts["boxes"], present):
            patch.set_facecolor(CLASS_COLORS[label])
        for i, values in enumerate(data, start=1):
            jitter = np.random.default_rng(i).uniform(-0.18, 0.18, size=len(values))
            ax.scatter(values, i + jitter, s=4, color="0.25", alpha=0.35, linewidths=0)
        ax.set_title(metric)
        ax.set_xlim(-0.02, 1.02)
        ax.invert_yaxis()
    axes[0][0].set_yticks(range(1, len(present) + 1))
    axes[0][0].set_yticklabels(present)
    fig.suptitle("Score distribution per class (boxes: quartiles; dots: examples)")
    fig.tight_layout()
    return fig


def violation_matrix(class_means: Mapping[str, float], title: str = "") -> Figure:
    """Heatmap of mean(higher) - mean(lower) over the 25 strict pairs; hatched cells are violations (App. C.1)."""
    means = {normalize_label(label): float(value) for label, value in class_means.items()}
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
            ax.text(col, row, f"{value:+.2f}", ha="center", va="center", fontsize=7,
                    fontweight="bold" if violated else "normal")
            if violated:
                ax.add_patch(plt.Rectangle((col - 0.5, row - 0.5), 1, 1, fill=False, hatch="///", edgecolor="k"))
    short = [ABBREVIATIONS[label] for label in LABELS]
    ax.set_xticks(range(len(LABELS)), short)
    ax.set_yticks(range(len(LABELS)), short)
    ax.set_xlabel("lower class")
    ax.set_ylabel("higher class")
    violations = int(np.sum(grid <= 0))
    ax.set_title(title or f"mean(higher) - mean(lower): {violations}/25 violations (hatched)")
    fig.colorbar(image, ax=ax, shrink=0.8)
    fig.tight_layout()
    return fig


def sweep_heatmap(sweep: pd.DataFrame, value: str = "spearman", title: str = "") -> Figure:
    """Heatmap of one protocol measure over an alpha x lambda grid (Tab. 12); the paper's choice is outlined."""
    table = sweep.pivot(index="alpha", columns="lam", values=value).sort_index(ascending=False)
    fig, ax = plt.subplots(figsize=(1.0 + 0.75 * table.shape[1], 0.9 + 0.5 * table.shape[0]))
    image = ax.imshow(table.to_numpy(dtype=float), cmap="viridis", aspect="auto")
    for (row, col), cell in np.ndenumerate(table.to_numpy(dtype=float)):
        ax.text(col, row, f"{cell:.3f}" if value != "violations" else f"{cell:.0f}",
                ha="center", va="center", fontsize=7, color="w")
    ax.set_xticks(range(table.shape[1]), [f"{lam:g}" for lam in table.columns])
    ax.set_yticks(range(table.shape[0]), [f"{alpha:g}" for alpha in table.index])
    ax.set_xlabel("lambda (neutral weight)")
    ax.set_ylabel("alpha (weight of D(g->p))")
    for row, alpha in enumerate(table.index):
        for col, lam in enumerate(table.columns):
            if np.isclose(alpha, 0.85) and np.isclose(lam, 0.30):
                ax.add_patch(plt.Rectangle((col - 0.5, row - 0.5), 1, 1, fill=False, edgecolor="r", linewidth=2))
    ax.set_title(title or f"{value} over the alpha/lambda grid (red: paper's alpha=0.85, lambda=0.30)")
    fig.colorbar(image, ax=ax, shrink=0.8)
    fig.tight_layout()
    return fig


def directional_scatter(forward: Sequence[float], backward: Sequence[float], labels: Sequence[str],
                        classes: Sequence[str] | None = None) -> Figure:
    """D(g->p) against D(p->g) per example, coloured by class: the mechanism of Sec. 7.3 / App. E."""
    normalized = [normalize_label(label) for label in labels]
    shown = [normalize_label(c) for c in classes] if classes else [c for c in LABELS if c in set(normalized)]
    forward, backward = np.asarray(forward, dtype=float), np.asarray(backward, dtype=float)
    fig, ax = plt.subplots(figsize=(5.6, 5.2))
    for label in shown:
        mask = np.array([n == label for n in normalized])
        ax.scatter(forward[mask], backward[mask], s=14, alpha=0.7, color=CLASS_COLORS[label], label=label,
                   edgecolors="0.3", linewidths=0.3)
        if mask.any():
            ax.scatter(forward[mask].mean(), backward[mask].mean(), s=160, marker="X",
                       color=CLASS_COLORS[label], edgecolors="k", linewidths=1.2)
    ax.plot([0, 1], [0, 1], ls=":", color="0.5")
    ax.set_xlabel("D(g -> p)  (weight alpha = 0.85)")
    ax.set_ylabel("D(p -> g)  (weight 1 - alpha = 0.15)")
    ax.set_xlim(-0.02, 1.02)
    ax.set_ylim(-0.02, 1.02)
    ax.legend(fontsize=7, loc="lower right")
    ax.set_title("Directional scores per example (X: class mean)")
    fig.tight_layout()
    return fig


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
