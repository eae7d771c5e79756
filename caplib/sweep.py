"""The alpha/lambda sweep of App. C.3 (Tab. 12): recompute CAP from cached NLI probabilities over a grid and
evaluate each setting with the protocol (Spearman, pairwise accuracy, violations).

The paper selects alpha = 0.85, lambda = 0.30 on the 1,000-example validation split; run the sweep on a
validation split only, never on the split you report.

Example:
    >>> import numpy as np
    >>> from caplib.taxonomy import LABELS
    >>> ent = np.linspace(1.0, 0.0, 8)            # one example per class, most correct most entailed
    >>> probs = np.stack([ent, np.zeros(8), 1.0 - ent], axis=1)
    >>> sweep(probs, probs, list(LABELS), alphas=(0.85,), lams=(0.3,))["violations"].tolist()
    [0]
"""

from __future__ import annotations

from typing import Sequence

import numpy as np
import pandas as pd

from caplib.cap import cap
from caplib.evaluation import class_means, monotonicity_violations, pairwise_accuracy, rank_correlation

#: The grid of the book's heatmap; it contains every (alpha, lambda) row of Tab. 12.
ALPHAS: tuple[float, ...] = (0.0, 0.3, 0.5, 0.7, 0.85, 1.0)
LAMS: tuple[float, ...] = (0.0, 0.1, 0.2, 0.3, 0.5, 0.7, 1.0)


def sweep(
    forward: np.ndarray,
    backward: np.ndarray,
    labels: Sequence[str],
    alphas: Sequence[float] = ALPHAS,
    lams: Sequence[float] = LAMS,
) -> pd.DataFrame:
    """Protocol measures of CAP for every (alpha, lam) on the grid.

    Args:
        forward: NLI probabilities of gold -> prediction, shape (n, 3), columns entailment, neutral, contradiction.
        backward: NLI probabilities of prediction -> gold, same shape.
        labels: the taxonomy label of each example.

    Returns:
        One row per setting: ``alpha, lam, spearman, kendall, pairwise_accuracy, violations`` (violations out of 25;
        classes absent from ``labels`` make the count raise, as in :func:`caplib.evaluation.monotonicity_violations`).
    """
    rows = []
    for alpha in alphas:
        for lam in lams:
            scores = cap(forward, backward, alpha=alpha, lam=lam)
            spearman, kendall = rank_correlation(scores, labels)
            rows.append(
                {
                    "alpha": float(alpha),
                    "lam": float(lam),
                    "spearman": spearman,
                    "kendall": kendall,
                    "pairwise_accuracy": pairwise_accuracy(scores, labels),
                    "violations": len(monotonicity_violations(class_means(scores, labels))),
                }
            )
    return pd.DataFrame(rows)
