"""Score the bundled CAP-Correctness sample once with the caplib found at REPO, no cache: for whole-process timings
of one checkout against another (``benchmarks/README.md``, "Fixed-shape tiles: what they cost").

Usage:
    python benchmarks/score_sample.py nli REPO        # both NLI directions of the 1,024 rows' statements
    python benchmarks/score_sample.py bertscore REPO  # offline BERTScore of the 1,024 (gold, answer) pairs
"""

from __future__ import annotations

import sys


def main(what: str, repo: str) -> None:
    sys.path.insert(0, repo)  # the checkout to time, before the installed caplib
    from caplib.baselines import score
    from caplib.data import load_sample
    from caplib.nli import NLIScorer
    from caplib.profiles import load_profile
    from caplib.runtime import Runtime

    rows = load_sample("cap_correctness")
    if what == "nli":
        profile = load_profile("offline")
        scorer = NLIScorer(profile.nli_model, profile.nli_revision, runtime=Runtime(cache=False, progress=False))
        scorer.predict([*rows["premise"], *rows["hypothesis"]], [*rows["hypothesis"], *rows["premise"]])
        print(scorer.last_stats)
    else:
        print(score("bertscore", list(rows["gold_answer"]), list(rows["answer"]), model="offline").mean())


if __name__ == "__main__":
    main(*sys.argv[1:3])
