"""Decomposed CAP against CAP on the bundled sample: variants, figures with 95 % CIs, and time side by side.

    PYTHONPATH=. python benchmarks/bench_cap_decomposed.py --split validation      # choose a variant (never on test)
    PYTHONPATH=. python benchmarks/bench_cap_decomposed.py --split test --variants default --ci --timing
    PYTHONPATH=. python benchmarks/bench_cap_decomposed.py --rows official --split validation   # the paper's rows

Prints one JSON object: per variant (``caplib.cap_decomposed`` settings) the pairwise accuracy, Spearman's rho,
the hard-pair accuracies of Tab. 4, monotonicity violations, and with ``--ci`` the 95 % bootstrap intervals of
pairwise accuracy and OV>Part (:func:`caplib.cap_decomposed.compare`, 10,000 resamples, seed 0); with ``--timing``
the seconds CAP and the default decomposed CAP take on the whole sample, each with its own empty NLI cache in a
temporary directory (a cold cache, written as it goes; models loaded before the clock starts).
``PYTHONPATH=.`` makes the checkout's caplib the one imported.
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time

import numpy as np

from caplib.cap import CAPScorer
from caplib.cap_decomposed import DecomposedCAPScorer, compare
from caplib.data import load_sample, select_split
from caplib.datasets import load_dataset
from caplib.decompose import RuleDecomposer
from caplib.evaluation import class_means, hard_pair_accuracy, monotonicity_violations, pairwise_accuracy, \
    rank_correlation
from caplib.runtime import Runtime

#: name -> DecomposedCAPScorer settings; "default" is the module's choice (the largest beta of the 0.25 grid
#: within the constraints on the validation split: caplib.cap_decomposed's docstring).
VARIANTS = {
    "default": {},
    **{f"beta{beta:g}": {"beta": beta} for beta in np.arange(1.0, 3.01, 0.25)},
    **{f"mean_beta{beta:g}": {"aggregate": "mean", "beta": beta} for beta in (1.0, 1.5, 2.0)},
    "rules_only": {"insertions": False},
    "insertions_only": {"decomposer": RuleDecomposer(rules=("sentences",))},
}


def figures(scores: np.ndarray, labels: np.ndarray) -> dict[str, object]:
    return {"pairwise_accuracy": pairwise_accuracy(scores, labels), "spearman": rank_correlation(scores, labels)[0],
            **{f"acc {name}": value for name, value in hard_pair_accuracy(scores, labels).items()},
            "violations": [f"{a}>{b}" for a, b in monotonicity_violations(class_means(scores, labels))]}


def timing(sample) -> dict[str, float]:  # type: ignore[no-untyped-def]
    """Seconds of CAP and of decomposed CAP on every row, each from its own cold cache."""
    result: dict[str, float] = {"rows": len(sample)}
    premises, hypotheses, questions = (list(sample[column]) for column in ("premise", "hypothesis", "question"))
    for name in ("cap", "cap_decomposed"):
        with tempfile.TemporaryDirectory() as cold:
            cap = CAPScorer.from_profile("offline", Runtime(progress=False, cache_dir=cold), statement_model=None)
            cap.nli.load()
            start = time.perf_counter()
            if name == "cap":
                cap.score(premises, hypotheses)
            else:
                DecomposedCAPScorer(cap).score(premises, hypotheses, questions)
            result[f"{name}_seconds"] = time.perf_counter() - start
            result[f"{name}_unique_pairs"] = cap.nli.last_stats["unique"]
    result["ratio"] = result["cap_decomposed_seconds"] / result["cap_seconds"]
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--split", choices=("validation", "test"), required=True)
    parser.add_argument("--rows", choices=("sample", "official"), default="sample",
                        help="the bundled sample, or the official CAP-Correctness rows in data/official (their own "
                             "validation/test split; `make` or `caplib fetch --profile offline-official` puts them there)")
    parser.add_argument("--variants", nargs="*", default=list(VARIANTS), choices=list(VARIANTS))
    parser.add_argument("--ci", action="store_true", help="95%% bootstrap intervals (10,000 resamples)")
    parser.add_argument("--timing", action="store_true", help="time CAP and decomposed CAP on the whole sample")
    args = parser.parse_args()
    sample = load_sample("cap_correctness") if args.rows == "sample" else load_dataset("cap_correctness", "offline-official")
    rows = select_split(sample, args.split)
    labels = rows["label_semantic"].to_numpy()
    cap = CAPScorer.from_profile("offline", Runtime(progress=False), statement_model=None)
    result: dict[str, object] = {"rows_from": args.rows, "split": args.split, "rows": len(rows), "signature": str(cap.signature(True))}
    premises, hypotheses, questions = list(rows["premise"]), list(rows["hypothesis"]), list(rows["question"])
    scores = {"cap": cap.score(premises, hypotheses)}
    result["cap"] = figures(scores["cap"], labels)
    for name in args.variants:
        scorer = DecomposedCAPScorer(cap, **VARIANTS[name])
        frame = scorer.components(premises, hypotheses, questions)
        scores[f"cap_decomposed[{name}]"] = frame["cap_decomposed"].to_numpy()
        result[f"cap_decomposed[{name}]"] = {**figures(scores[f"cap_decomposed[{name}]"], labels),
                                             "fallback_rows": int(frame["cap_decomposed_fallback"].sum()),
                                             "signature": str(scorer.signature(True))}
    if args.ci:
        table = compare(scores, labels, n_resamples=10_000, seed=0)
        for name, row in table.iterrows():
            result[name].update({f"{key} 95% CI": [row[f"{key}_low"], row[f"{key}_high"]]
                                 for key in ("pairwise_accuracy", "OV>Part")})
    if args.timing:
        result["timing"] = timing(sample)
    print(json.dumps(result, indent=1, default=float))


if __name__ == "__main__":
    main()
