"""The monotonicity evaluation protocol of Sec. 6.2 and App. C.1, with the bootstrap of App. D.1.

A metric ``m`` gives every (gold, prediction) pair a score; each pair carries a taxonomy class ``c``.
The protocol asks whether the scores respect the ordering of Eq. 1, realized as the integer severity
map of App. C.2 (``caplib.taxonomy.SEVERITY``):

- rank correlation: Spearman's rho and Kendall's tau-b between scores and severities (mid-ranks);
- pairwise ranking accuracy (Eq. 8): over *all* example pairs (a, b) whose classes form a strictly
  ordered pair, the fraction with m(a) > m(b);
- monotonicity violations: strictly ordered class pairs whose class means are inverted (<=);
- hard neighbouring-pair accuracy (Tab. 4) and per-pair AUCs (Tab. 3).

Every value is a fraction in [0, 1]; the paper prints them x100. The modules, each importing only those before it:
:mod:`~caplib.evaluation.measures` (the measures and their input checks), :mod:`~caplib.evaluation.bootstrap`
(confidence intervals, and the paired bootstrap and randomization tests of two metrics),
:mod:`~caplib.evaluation.agreement` (Cohen's kappas of Tab. 8 and a labeler's classification scores),
:mod:`~caplib.evaluation.report` (the table ``caplib evaluate`` prints). Import from ``caplib.evaluation``; two
more import from those and are imported by their own names: :mod:`~caplib.evaluation.tables` (every table of the
protocol as the authors' release lays it out) and :mod:`~caplib.evaluation.concordance` (two scorings of the same
rows side by side: caplib's against the release's).

Example:
    >>> scores = [0.9, 0.8, 0.4, 0.1]
    >>> labels = ["exact", "partial", "OI", "invalid"]
    >>> pairwise_accuracy(scores, labels)
    1.0
    >>> monotonicity_violations(class_means(scores, labels), missing="skip")
    []
"""

from caplib.evaluation.agreement import agreement, classification_scores, kappa_weights
from caplib.evaluation.bootstrap import (
    BATCHED_STATISTICS,
    PAIRED_STATISTICS,
    bootstrap_ci,
    paired_bootstrap,
    paired_randomization,
)
from caplib.evaluation.measures import (
    class_means,
    hard_pair_accuracy,
    monotonicity_violations,
    pair_auc,
    pair_name,
    pairwise_accuracy,
    rank_correlation,
)
from caplib.evaluation.report import head_to_head, paired_report, paired_summary, paired_verdict, report

__all__ = [
    "BATCHED_STATISTICS",
    "PAIRED_STATISTICS",
    "agreement",
    "bootstrap_ci",
    "class_means",
    "classification_scores",
    "hard_pair_accuracy",
    "head_to_head",
    "kappa_weights",
    "monotonicity_violations",
    "pair_auc",
    "pair_name",
    "paired_bootstrap",
    "paired_randomization",
    "paired_report",
    "paired_summary",
    "paired_verdict",
    "pairwise_accuracy",
    "rank_correlation",
    "report",
]
