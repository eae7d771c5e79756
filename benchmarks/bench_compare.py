"""``caplib compare`` on a large synthetic scored file: wall-clock seconds of the whole command, as a user runs it.

    PYTHONPATH=. python benchmarks/bench_compare.py --rows 10000 --resamples 10000 --repeats 3

Writes a scored CSV of ``--rows`` rows (the eight classes in equal shares, two metrics that follow the severity
order with noise; ``--ties`` rounds them to 2 decimals, the tie-heavy case of n-gram metrics), then runs
``python -m caplib compare FILE --metrics cap,bertscore --resamples R --trials T`` ``--repeats`` times (paired
bootstrap with ``--resamples`` resamples, approximate randomization with ``--trials`` trials, the command's
default 1,000; all default statistics) and prints one JSON object
with each run's seconds (interpreter start and imports included) and their median. ``PYTHONPATH=.`` makes the
checkout's caplib the one imported.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

from caplib.taxonomy import LABELS, SEVERITY


def scored_file(path: Path, rows: int, ties: bool, seed: int = 0) -> Path:
    """A file as ``caplib score`` writes it: row_id, label_semantic, cap, bertscore."""
    rng = np.random.default_rng(seed)
    labels = np.array(LABELS)[np.arange(rows) % len(LABELS)]
    severity = np.array([SEVERITY[label] for label in labels], dtype=float) / max(SEVERITY.values())
    cap = np.clip(severity + rng.normal(0, 0.25, rows), 0, 1)
    bertscore = np.clip(severity + rng.normal(0, 0.35, rows), 0, 1)
    if ties:
        cap, bertscore = np.round(cap, 2), np.round(bertscore, 2)
    pd.DataFrame({"row_id": range(rows), "label_semantic": labels, "cap": cap, "bertscore": bertscore}).to_csv(
        path, index=False)
    return path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=10_000)
    parser.add_argument("--resamples", type=int, default=10_000)
    parser.add_argument("--trials", type=int, default=1_000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--ties", action="store_true", help="round the scores to 2 decimals (many tied scores)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as directory:
        path = scored_file(Path(directory) / "scored.csv", args.rows, args.ties)
        command = [sys.executable, "-m", "caplib", "compare", str(path), "--metrics", "cap,bertscore",
                   "--resamples", str(args.resamples), "--trials", str(args.trials), "--json"]
        seconds = []
        for _ in range(args.repeats):
            start = time.perf_counter()
            subprocess.run(command, check=True, capture_output=True, env={**os.environ})
            seconds.append(round(time.perf_counter() - start, 2))
    print(json.dumps({"rows": args.rows, "resamples": args.resamples, "trials": args.trials, "ties": args.ties,
                      "cpus": os.cpu_count(), "seconds": seconds, "median_seconds": statistics.median(seconds)}))


if __name__ == "__main__":
    main()
