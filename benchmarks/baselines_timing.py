"""Time the offline-available baseline metrics on 1,000 (gold, prediction) pairs (target: under 60 s in all, 2 CPU cores).

Metrics: bleu, rouge_l, meteor, bertscore (model="offline": the packaged all-MiniLM-L6-v2), em, acc. COMET has
no offline checkpoint and is not timed. For each metric the first call (``cold``: imports, WordNet or model
loading) and a second call on the same pairs (``warm``) are timed separately; the total is the sum of cold times,
what one fresh `caplib score` run pays.

Pairs: answers and statements of ``data/sample/cap_statements.csv`` (short answers against sentences, answers
against other rows' answers), cycled to ``--pairs``; seeded random word strings if that file is missing.

Usage:
    HF_HUB_OFFLINE=1 .venv/bin/python benchmarks/baselines_timing.py [--pairs 1000] [--threads 2]
"""

from __future__ import annotations

import argparse
import csv
import os
import random
import time
from pathlib import Path

OFFLINE_METRICS = {
    "bleu": {},
    "rouge_l": {},
    "meteor": {},
    "bertscore": {"model": "offline", "device": "cpu"},
    "em": {},
    "acc": {},
}
SAMPLE = Path(__file__).resolve().parents[1] / "data" / "sample" / "cap_statements.csv"


def make_pairs(n: int, seed: int = 0) -> tuple[list[str], list[str]]:
    """``n`` (gold, prediction) pairs from the bundled statements sample, or seeded random words without it."""
    rng = random.Random(seed)
    if SAMPLE.is_file():
        with SAMPLE.open(newline="", encoding="utf-8") as handle:
            rows = [(row["answer"], row["statement"]) for row in csv.DictReader(handle)]
        golds, predictions = [], []
        for k in range(n):
            answer, statement = rows[k % len(rows)]
            other = rows[rng.randrange(len(rows))][0]
            golds.append(answer)
            predictions.append(statement if k % 2 == 0 else other)
        return golds, predictions
    words = "the a of capital france paris planet red mars oxygen plants release water light bends air".split()
    sentence = lambda: " ".join(rng.choice(words) for _ in range(rng.randint(1, 25)))  # noqa: E731
    return [sentence() for _ in range(n)], [sentence() for _ in range(n)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=1000)
    parser.add_argument("--threads", type=int, default=2, help="torch CPU threads (the target machine has 2 cores)")
    args = parser.parse_args()
    process_start = time.perf_counter()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    import torch

    torch.set_num_threads(args.threads)
    from caplib.baselines import score, signature

    golds, predictions = make_pairs(args.pairs)
    source = SAMPLE.name if SAMPLE.is_file() else "random words"
    print(f"{args.pairs} pairs from {source}; torch threads {args.threads}; os.cpu_count() {os.cpu_count()}")
    # wall clock and this process's CPU time: the machine may be shared, CPU time shows what the work itself costs
    print(f"{'metric':<10} {'cold s':>8} {'cpu s':>7} {'warm s':>8} {'cpu s':>7} {'mean':>6}  signature")
    total = 0.0
    for metric, options in OFFLINE_METRICS.items():
        timings = []
        for _ in range(2):
            wall, cpu = time.perf_counter(), time.process_time()
            values = score(metric, golds, predictions, **options)
            timings += [time.perf_counter() - wall, time.process_time() - cpu]
        total += timings[0]
        print(f"{metric:<10} {timings[0]:8.2f} {timings[1]:7.2f} {timings[2]:8.2f} {timings[3]:7.2f} "
              f"{values.mean():6.3f}  {signature(metric, **options)}")
    print(f"total of cold times: {total:.2f} s (target < 60 s); whole script incl. imports: "
          f"{time.perf_counter() - process_start:.2f} s wall, {time.process_time():.2f} s CPU")


if __name__ == "__main__":
    main()
