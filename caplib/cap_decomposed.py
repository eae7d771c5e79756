"""Decomposed CAP: CAP over the atomic units of both statements (the fix Sec. 9 names; Sec. 7.3, App. E).

Whole-statement NLI inverts overinclusive-valid and partial (Tab. 4: CAP ranks OV above partial 16.3 % of the
time): the gold entails a partial answer, and an OV answer's valid extra makes gold -> prediction neutral.
Scoring units instead (FActScore's atomic facts; Q-CARE's answer claims) separates the two relations:

* completeness: does the answer entail *every* gold unit? A partial answer misses one, an OV answer does not;
* precision: does the gold support *every* answer unit (entail it, or leave it neutral at weight ``lam``, Eq. 2;
  a contradicted unit counts 0)? An OV answer's extra is neutral, a partial answer's units are entailed.

For a gold statement s_g with units g_1..g_m and a predicted statement s_p with units p_1..p_n
(:mod:`caplib.decompose`: the rules, then, for a statement they leave whole, its insertions against the other):

    C  = min_i P_entailment(s_p -> g_i)                        (completeness)
    Pr = min_j D(s_g -> p_j),  D = P_entailment + lam * P_neutral (precision, Eq. 2)
    CAP_dec = (1 + beta^2) * Pr * C / (beta^2 * Pr + C)        (F_beta, 0 when Pr = C = 0)

and CAP_dec = CAP(s_g, s_p) (Eq. 3) when m = n = 1: exact, equivalent and contradictory answers (and any pair
where neither side decomposes) score as before. ``aggregate="mean"`` replaces the minima by means (FActScore's
fraction of supported units).

Why this formula (chosen on the bundled sample's validation split only, 160 rows, offline profile, with
``benchmarks/bench_cap_decomposed.py --split validation``; figures are pairwise accuracy / OV>Part accuracy /
monotonicity violations; CAP: 0.692 / 0.228 / 6):

* the rule: of the grid beta = 1, 1.25, ..., 3, the largest (most weight on completeness, hence OV>Part) whose
  validation pairwise accuracy stays within 0.02 of CAP's and whose violations do not exceed CAP's: beta = 1.75
  (0.680 / 0.588 / 5); beta 1.5: 0.682 / 0.545 / 4; beta 2, the first to reach OV>Part 0.6: 0.679 / 0.623 / 7,
  by lifting OV and OI above equivalent (fallback, CAP-scored) on the class means;
* the minimum, not the mean: the taxonomy is conjunctive (one missing gold unit makes an answer partial, one
  unsupported unit overinclusive), and every mean variant had 8 violations (beta 1.5: 0.677 / 0.585 / 8); the
  paper's alpha weighting over units, alpha * Pr + (1 - alpha) * C with D in C, is CAP itself on a statement
  plus an insertion (up to the minimum with D(s_g -> s_g): its units are the gold and the whole answer), so it
  cannot move OV against partial there;
* the offline backbone scores OV and OI alike (OV>OI 0.58 for CAP; P_contradiction(s_g -> s_p) 0.23 and 0.21),
  so whatever lifts OV above partial lifts OI too: the frontier between OV>Part and Part>OI is the NLI model's,
  not the formula's;
* insertions carry most of the gain on this sample's one-sentence variants (at beta 1.5, without them:
  0.680 / 0.320 / 6; insertions alone: 0.691 / 0.552 / 4); the rules are kept for lists, clauses and
  multi-sentence answers, which the sample's variants rarely have. On an insertion the units add no NLI pair
  that CAP lacks (the shared part is the gold, or the partial answer, itself): the gain there is F_beta's weight
  on P_entailment(s_p -> s_g) instead of CAP's 0.15 on D(s_p -> s_g).

The rule re-applied, unchanged, when the offline backbone became version 3 (``caplib.offline_nli``; validation split
again; CAP: 0.712 / 0.255 / 5): beta 1.75 gives 0.703 / 0.520 / 5, beta 2 0.702 / 0.547 / 5, **beta 2.25**
0.698 / 0.575 / 5 (the largest within the rule), beta 2.5 0.696 / 0.610 / 6, beta 2.75 0.694 / 0.647 / 8, beta 3
0.692 / 0.662 / 8.

Re-chosen once more for backbone version 4 (issue 32), on the official release's 1,000 validation rows (never a test
row; ``benchmarks/bench_cap_decomposed.py --rows official --split validation``; CAP: 0.671 / 0.144 / 5; 606 rows
fall back to CAP): beta 1 0.672 / 0.385 / 4, 1.25 0.669 / 0.422 / 5, 1.5 0.667 / 0.455 / 5, 1.75 0.665 / 0.474 / 4,
**beta 2** 0.664 / 0.492 / 5 (the largest within the rule), 2.25 0.661 / 0.506 / 6, 2.5 0.659 / 0.520 / 6,
2.75 0.658 / 0.533 / 7, 3 0.656 / 0.544 / 7. No beta of the grid reaches OV>Part 0.6 on these rows.
``DEFAULT_BETA`` is 2 since.

Example:
    >>> round(float(f_beta([1.0], [0.4], beta=1.5)[0]), 4)  # an OV-like answer: complete, extra neutral
    0.6842
    >>> round(float(f_beta([0.2], [0.95], beta=1.5)[0]), 4)  # a partial answer: precise, incomplete
    0.2642
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from caplib.cap import CAPScorer, cap, directional_score
from caplib.decompose import Decomposer, RuleDecomposer, insertion_units
from caplib.evaluation import bootstrap_ci, class_means, monotonicity_violations, pair_name, pairwise_accuracy
from caplib.runtime import Runtime
from caplib.signature import Signature

if TYPE_CHECKING:
    from caplib.profiles import Profile

__all__ = ["AGGREGATES", "COLUMNS", "DEFAULT_BETA", "DecomposedCAPScorer", "compare", "f_beta", "order_changes",
           "targets"]

#: Weight of completeness against precision (module docstring: chosen on validation rows by a fixed rule;
#: 1.75 on offline backbone v2, 2.25 on v3, 2 on v4 and the official validation rows).
DEFAULT_BETA = 2.0
#: How unit scores are aggregated: ``"min"`` (every unit must hold; default) or ``"mean"`` (FActScore's fraction).
AGGREGATES: tuple[str, ...] = ("min", "mean")
#: Columns of :meth:`DecomposedCAPScorer.components`.
COLUMNS: tuple[str, ...] = ("cap_decomposed", "cap_decomposed_completeness", "cap_decomposed_precision",
                            "cap_decomposed_gold_units", "cap_decomposed_answer_units", "cap_decomposed_fallback")


def f_beta(completeness: Any, precision: Any, beta: float = DEFAULT_BETA) -> np.ndarray:
    """(1 + beta^2) * Pr * C / (beta^2 * Pr + C) of each row, 0 where both are 0; in [0, 1].

    Example:
        >>> f_beta([1.0, 0.0, 0.5], [1.0, 0.0, 0.5], beta=2.0).tolist()
        [1.0, 0.0, 0.5]
    """
    c, p = np.asarray(completeness, dtype=np.float64), np.asarray(precision, dtype=np.float64)
    if not (isinstance(beta, (int, float)) and beta > 0):
        raise ValueError(f"beta must be a positive number, got {beta!r}")
    denominator = beta**2 * p + c
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(denominator > 0, (1 + beta**2) * p * c / np.where(denominator > 0, denominator, 1.0), 0.0)


class DecomposedCAPScorer:
    """Decomposed CAP (module docstring) over a :class:`caplib.cap.CAPScorer`'s NLI model and weights.

    Args:
        cap_scorer: the CAP scorer whose NLI model, ``alpha`` and ``lam`` are used (else one built from
            ``cap_kwargs``, :class:`caplib.cap.CAPScorer`'s arguments).
        decomposer: what splits statements (:class:`caplib.decompose.Decomposer`; default the rules).
        beta: weight of completeness in the F_beta mean (default ``DEFAULT_BETA``, 2).
        aggregate: ``"min"`` (default) or ``"mean"`` over units.
        insertions: split a statement the decomposer leaves whole by its insertions against the other statement
            (:func:`caplib.decompose.insertion_units`; default on).

    Every NLI pair of every row and unit goes through one :meth:`caplib.nli.NLIScorer.predict` call: identical
    pairs (a unit shared by several answers to one question) are scored once, in fixed tiles, and cached.

    Example:
        >>> scorer = DecomposedCAPScorer.from_profile("offline")  # doctest: +SKIP
        >>> scorer.score(["Paris is in France."], ["Paris is in France, which is in Europe."])  # doctest: +SKIP
        array([0.71...])
    """

    def __init__(self, cap_scorer: CAPScorer | None = None, decomposer: Decomposer | None = None, *,
                 beta: float = DEFAULT_BETA, aggregate: str = "min", insertions: bool = True, **cap_kwargs: Any):
        if cap_scorer is not None and cap_kwargs:
            raise ValueError(f"give a cap_scorer or CAPScorer arguments ({sorted(cap_kwargs)}), not both")
        if aggregate not in AGGREGATES:
            raise ValueError(f"aggregate must be one of {AGGREGATES}, got {aggregate!r}")
        f_beta([1.0], [1.0], beta)  # checks beta
        self.cap = cap_scorer if cap_scorer is not None else CAPScorer(**cap_kwargs)
        self.decomposer: Decomposer = decomposer if decomposer is not None else RuleDecomposer()
        self.beta, self.aggregate, self.insertions = float(beta), aggregate, bool(insertions)

    @classmethod
    def from_profile(cls, profile: str | os.PathLike[str] | Profile = "offline", runtime: Runtime | None = None,
                     *, decomposer: Decomposer | None = None, beta: float = DEFAULT_BETA, aggregate: str = "min",
                     insertions: bool = True, **overrides: Any) -> DecomposedCAPScorer:
        """A scorer over :meth:`caplib.cap.CAPScorer.from_profile` (``overrides`` go to it)."""
        return cls(CAPScorer.from_profile(profile, runtime, **overrides), decomposer, beta=beta,
                   aggregate=aggregate, insertions=insertions)

    def units(self, premises: Sequence[str], hypotheses: Sequence[str],
              questions: Sequence[str] | None = None) -> tuple[list[list[str]], list[list[str]]]:
        """The units of every gold statement and of every predicted statement (each distinct one split once)."""
        premises, hypotheses = list(premises), list(hypotheses)
        if len(premises) != len(hypotheses):
            raise ValueError(f"got {len(premises)} gold statements but {len(hypotheses)} predicted statements")
        for row, premise in enumerate(premises):
            if not isinstance(premise, str):
                raise ValueError(f"gold statement {row} is {type(premise).__name__}: decomposed CAP takes one gold "
                                 f"statement per row (several golds: score each and take the maximum)")
        asked = [""] * len(premises) if questions is None else list(questions)
        if len(asked) != len(premises):
            raise ValueError(f"got {len(asked)} questions for {len(premises)} rows; give one per row, or none")
        wanted = list(dict.fromkeys([*zip(premises, asked), *zip(hypotheses, asked)]))
        split = dict(zip(wanted, self.decomposer.decompose([s for s, _ in wanted],
                                                           None if questions is None else [q for _, q in wanted])))
        golds = [split[(g, q)] for g, q in zip(premises, asked)]
        answers = [split[(p, q)] for p, q in zip(hypotheses, asked)]
        if self.insertions:
            sides = ((premises, hypotheses, golds), (hypotheses, premises, answers))
            golds, answers = ([insertion_units(mine, other) if len(units) == 1 else units
                               for mine, other, units in zip(own, others, parts)] for own, others, parts in sides)
        return golds, answers

    def components(self, premises: Sequence[str], hypotheses: Sequence[str],
                   questions: Sequence[str] | None = None) -> pd.DataFrame:
        """Decomposed CAP with its parts for each pair: the DataFrame of ``COLUMNS`` (completeness and precision
        are those of the formula; on fallback rows they are of the whole statements, and the score is CAP's)."""
        premises, hypotheses = list(premises), list(hypotheses)
        golds, answers = self.units(premises, hypotheses, questions)
        pairs = [(p, unit) for p, units in zip(hypotheses, golds) for unit in units]
        pairs += [(g, unit) for g, units in zip(premises, answers) for unit in units]
        probs = self.cap.nli.predict([a for a, _ in pairs], [b for _, b in pairs]) if pairs else np.empty((0, 3))
        completeness_rows, precision_rows = probs[: sum(map(len, golds))], probs[sum(map(len, golds)):]
        reduce = np.min if self.aggregate == "min" else np.mean
        entail = np.split(completeness_rows[:, 0], np.cumsum([len(u) for u in golds])[:-1])
        supported = np.split(directional_score(precision_rows, self.cap.lam),
                             np.cumsum([len(u) for u in answers])[:-1])
        completeness = np.array([float(reduce(row)) for row in entail])
        precision = np.array([float(reduce(row)) for row in supported])
        fallback = np.array([len(g) == 1 and len(a) == 1 for g, a in zip(golds, answers)], dtype=bool)
        values = f_beta(completeness, precision, self.beta)
        if fallback.any():  # single units are the whole statements: their two rows are CAP's two directions
            first_c = np.cumsum([0] + [len(u) for u in golds])[:-1][fallback]
            first_p = np.cumsum([0] + [len(u) for u in answers])[:-1][fallback]
            values[fallback] = cap(precision_rows[first_p], completeness_rows[first_c], self.cap.alpha, self.cap.lam)
        return pd.DataFrame({"cap_decomposed": values, "cap_decomposed_completeness": completeness,
                             "cap_decomposed_precision": precision,
                             "cap_decomposed_gold_units": [len(u) for u in golds],
                             "cap_decomposed_answer_units": [len(u) for u in answers],
                             "cap_decomposed_fallback": fallback})

    def score(self, premises: Sequence[str], hypotheses: Sequence[str],
              questions: Sequence[str] | None = None) -> np.ndarray:
        """Decomposed CAP of each (gold statement, predicted statement) pair."""
        return self.components(premises, hypotheses, questions)["cap_decomposed"].to_numpy()

    def signature(self, given_statements: bool = False) -> Signature:
        """CAP's signature fields, then the decomposer's and the formula's:
        ``cap_decomposed|caplib:...|alpha:0.85|lam:0.3|...|decompose:rules|version:1|rules:...|insertions:on|
        aggregate:min|beta:2.0``."""
        return Signature("cap_decomposed", (
            *self.cap.signature(given_statements).fields, *self.decomposer.signature().as_fields(),
            ("insertions", "on" if self.insertions else "off"), ("aggregate", self.aggregate),
            ("beta", f"{self.beta:g}")))


def compare(scores: Mapping[str, Any], labels: Sequence[str], *, pair: tuple[str, str] = ("overinclusive_valid",
            "partial"), n_resamples: int = 1000, seed: int = 0, confidence: float = 0.95) -> pd.DataFrame:
    """The issue's yardsticks for each metric of ``scores`` (name -> scores of the rows of ``labels``): pairwise
    accuracy (Eq. 8) and the accuracy on ``pair`` (default OV > Part, Tab. 4), each with its percentile bootstrap
    interval (:func:`caplib.evaluation.bootstrap_ci`, the same ``seed`` for every metric, so the same resamples), and
    the monotonicity violations of the class means (App. C.1; classes absent from ``labels`` are skipped).

    Example:
        >>> labels = ["exact", "overinclusive_valid", "partial", "invalid"] * 20
        >>> table = compare({"cap": [0.9, 0.5, 0.6, 0.1] * 20, "cap_decomposed": [0.9, 0.6, 0.5, 0.1] * 20},
        ...                 labels, n_resamples=200)
        >>> table.loc[:, ["OV>Part", "violations"]].to_dict("index")
        {'cap': {'OV>Part': 0.0, 'violations': 1}, 'cap_decomposed': {'OV>Part': 1.0, 'violations': 0}}
    """
    name = pair_name(*pair)
    rows: dict[str, dict[str, Any]] = {}
    for metric, values in scores.items():
        values = np.asarray(values, dtype=np.float64)
        point, low, high = bootstrap_ci("pairwise_accuracy", values, labels, n_resamples, confidence, seed)
        on_pair = bootstrap_ci(lambda s, l: pairwise_accuracy(s, l, pairs=[pair]), values, labels, n_resamples,
                               confidence, seed)
        violated = monotonicity_violations(class_means(values, labels), missing="skip")
        rows[metric] = {"pairwise_accuracy": point, "pairwise_accuracy_low": low, "pairwise_accuracy_high": high,
                        name: on_pair[0], f"{name}_low": on_pair[1], f"{name}_high": on_pair[2],
                        "violations": len(violated), "violated": [pair_name(a, b) for a, b in violated]}
    return pd.DataFrame.from_dict(rows, orient="index")


def targets(table: pd.DataFrame, metric: str = "cap_decomposed", baseline: str = "cap") -> dict[str, bool]:
    """Whether ``metric`` meets issue 18's targets against ``baseline`` in a :func:`compare` table: OV > Part
    accuracy at least 0.60, pairwise accuracy no more than 0.02 below the baseline's, violations no more than its.

    Example:
        >>> table = pd.DataFrame({"pairwise_accuracy": [0.70, 0.69], "OV>Part": [0.2, 0.55], "violations": [6, 5]},
        ...                      index=["cap", "cap_decomposed"])
        >>> list(targets(table).values())
        [False, True, True]
    """
    mine, base = table.loc[metric], table.loc[baseline]
    return {"OV > Part at least 60": bool(mine["OV>Part"] >= 0.60),
            "pairwise accuracy at most 2 below CAP's":
                bool(mine["pairwise_accuracy"] >= base["pairwise_accuracy"] - 0.02),
            "violations no more than CAP's": bool(mine["violations"] <= base["violations"])}


def order_changes(frame: pd.DataFrame, labels: Sequence[str], first: str = "cap", second: str = "cap_decomposed", *,
                  higher: str = "overinclusive_valid", lower: str = "partial", n: int | None = 2) -> pd.DataFrame:
    """Answers to one question (same ``question`` and ``premise``) of the classes ``higher`` and ``lower`` whose
    order differs between the score columns ``first`` and ``second``: ``n`` (None: all) that ``second`` puts right
    and ``first`` wrong (``"fixed"``), then ``n`` the other way round (``"broken"``), each by the largest change of
    the score difference first. Columns: ``change``, ``question``, ``gold``, ``higher``, ``lower`` (their statements),
    then both scores of both answers (``<metric> higher``, ``<metric> lower``). A tie counts as wrong, as in Eq. 8.

    Example:
        >>> rows = pd.DataFrame({"question": ["q"] * 2, "premise": ["g"] * 2, "hypothesis": ["g and x", "part"],
        ...                      "cap": [0.4, 0.7], "cap_decomposed": [0.6, 0.5]})
        >>> order_changes(rows, ["overinclusive_valid", "partial"])[["change", "higher", "lower"]].values.tolist()
        [['fixed', 'g and x', 'part']]
    """
    from caplib.taxonomy import normalize_label

    canonical = pd.Series([normalize_label(label) for label in labels], index=frame.index)
    keys = ["question", "premise"]
    columns = [*keys, "hypothesis", first, second]
    top = frame.loc[canonical == normalize_label(higher), columns]
    bottom = frame.loc[canonical == normalize_label(lower), columns]
    pairs = top.merge(bottom, on=keys, suffixes=(" higher", " lower"))
    right_first = pairs[f"{first} higher"] > pairs[f"{first} lower"]
    right_second = pairs[f"{second} higher"] > pairs[f"{second} lower"]
    pairs["shift"] = ((pairs[f"{second} higher"] - pairs[f"{second} lower"])
                      - (pairs[f"{first} higher"] - pairs[f"{first} lower"])).abs()
    chosen = [part.sort_values("shift", ascending=False, kind="stable").head(len(part) if n is None else n)
              .assign(change=change) for part, change in ((pairs[right_second & ~right_first], "fixed"),
                                                          (pairs[right_first & ~right_second], "broken"))]
    result = pd.concat(chosen, ignore_index=True).rename(columns={"premise": "gold", "hypothesis higher": "higher",
                                                                  "hypothesis lower": "lower"})
    return result[["change", "question", "gold", "higher", "lower", f"{first} higher", f"{first} lower",
                   f"{second} higher", f"{second} lower"]]
