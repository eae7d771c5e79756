"""Decomposed CAP against CAP on the bundled sample: variants, figures with 95 % CIs, and time side by side.

    python benchmarks/bench_cap_decomposed.py --split validation            # choose a variant (never on test)
    python benchmarks/bench_cap_decomposed.py --split test --timing         # report the chosen one once

Prints one JSON object: per variant (``caplib.cap_decomposed`` settings) the pairwise accuracy, Spearman's rho,
OV>Part / OV>OI / Eq>Part accuracies, monotonicity violations, and with ``--ci`` 95 % bootstrap intervals
(:func:`caplib.evaluation.bootstrap_ci`, 10,000 resamples, seed 0); with ``--timing`` the seconds CAP and the
default decomposed CAP take on the whole sample with the disk cache off (models loaded before the clock starts).
"""

from __future__ import annotations

import argparse
import json
import time

import numpy as np

from caplib.cap import CAPScorer
from caplib.cap_decomposed import DecomposedCAPScorer
from caplib.data import load_sample, select_split
from caplib.decompose import RuleDecomposer
from caplib.evaluation import (bootstrap_ci, class_means, hard_pair_accuracy, monotonicity_violations,
                               pairwise_accuracy, rank_correlation)
from caplib.runtime import Runtime

#: name -> DecomposedCAPScorer settings; "default" is the module's choice.
VARIANTS = {
    "default": {},
    "beta1": {"beta": 1.0},
    "beta2": {"beta": 2.0},
    "beta3": {"beta": 3.0},
    "mean_beta1": {"aggregate": "mean", "beta": 1.0},
    "mean_beta1.5": {"aggregate": "mean"},
    "mean_beta2": {"aggregate": "mean", "beta": 2.0},
    "rules_only": {"insertions": False},
    "insertions_only": {"decomposer": RuleDecomposer(rules=("sentences",))},
}


def _ov_part(scores: np.ndarray, labels: np.ndarray) -> float:
    return hard_pair_accuracy(scores, labels)["OV>Part"]


def figures(scores: np.ndarray, labels: np.ndarray, ci: bool) -> dict[str, object]:
    hard = hard_pair_accuracy(scores, labels)
    row: dict[str, object] = {
        "pairwise_accuracy": pairwise_accuracy(scores, labels), "spearman": rank_correlation(scores, labels)[0],
        **{f"acc {name}": value for name, value in hard.items()},
        "violations": [f"{a}>{b}" for a, b in monotonicity_violations(class_means(scores, labels))]}
    if ci:
        for name, statistic in (("pairwise_accuracy", "pairwise_accuracy"), ("spearman", "spearman"),
                                ("acc OV>Part", _ov_part)):
            _, low, high = bootstrap_ci(statistic, scores, labels, n_resamples=10_000, seed=0)
            row[f"{name} 95% CI"] = [low, high]
    return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--split", choices=("validation", "test"), required=True)
    parser.add_argument("--variants", nargs="*", default=list(VARIANTS), choices=list(VARIANTS))
    parser.add_argument("--ci", action="store_true", help="95%% bootstrap intervals (10,000 resamples)")
    parser.add_argument("--timing", action="store_true", help="time CAP and decomposed CAP on the whole sample")
    args = parser.parse_args()
    sample = load_sample("cap_correctness")
    rows = select_split(sample, args.split)
    labels = rows["label_semantic"].to_numpy()
    cap = CAPScorer.from_profile("offline", Runtime(progress=False), statement_model=None)
    result: dict[str, object] = {"split": args.split, "rows": len(rows), "signature": str(cap.signature(True))}
    premises, hypotheses, questions = list(rows["premise"]), list(rows["hypothesis"]), list(rows["question"])
    result["cap"] = figures(cap.score(premises, hypotheses), labels, args.ci)
    for name in args.variants:
        scorer = DecomposedCAPScorer(cap, **VARIANTS[name])
        frame = scorer.components(premises, hypotheses, questions)
        result[f"cap_decomposed[{name}]"] = {**figures(frame["cap_decomposed"].to_numpy(), labels, args.ci),
                                             "fallback_rows": int(frame["cap_decomposed_fallback"].sum()),
                                             "signature": str(scorer.signature(True))}
    if args.timing:
        uncached = Runtime(progress=False, cache=False)
        plain = CAPScorer.from_profile("offline", uncached, statement_model=None)
        decomposed = DecomposedCAPScorer(CAPScorer.from_profile("offline", uncached, statement_model=None))
        plain.nli.load(), decomposed.cap.nli.load()
        everything = [list(sample[column]) for column in ("premise", "hypothesis", "question")]
        start = time.perf_counter()
        plain.score(everything[0], everything[1])
        cap_seconds, pairs_cap = time.perf_counter() - start, plain.nli.last_stats["unique"]
        start = time.perf_counter()
        decomposed.score(*everything)
        decomposed_seconds, pairs_decomposed = time.perf_counter() - start, decomposed.cap.nli.last_stats["unique"]
        result["timing"] = {"rows": len(sample), "cap_seconds": cap_seconds, "cap_unique_pairs": pairs_cap,
                            "cap_decomposed_seconds": decomposed_seconds,
                            "cap_decomposed_unique_pairs": pairs_decomposed,
                            "ratio": decomposed_seconds / cap_seconds}
    print(json.dumps(result, indent=1, default=float))


if __name__ == "__main__":
    main()
