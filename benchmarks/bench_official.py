"""Offline CAP on the paper's own test rows: ``caplib score`` with the torch path and with the ONNX int8 path, side by
side in one run (issue 31, item 5).

    PYTHONPATH=. python benchmarks/bench_official.py                       # all 7,826 test rows, both paths
    PYTHONPATH=. python benchmarks/bench_official.py --rows 500 --json out.json

The rows are the official CAP-Correctness test split (``data/official/``, from ``caplib fetch --profile
offline-official`` or ``make``'s copy of ``../shared/official``), written once to a CSV with their ``row_id``. Each
path is the command a user types, ``python -m caplib score TEST.csv -o OUT --profile offline-official --metrics cap
--nli-backend B`` (with its progress bar on stderr unless ``--no-progress``), in a subprocess with its own empty cache
directory, so every NLI pair is computed: the seconds include interpreter start, model loading and, for int8, the
one-off ONNX export and quantisation (reported apart as the export's seconds, measured in a third run that only
builds it). The paths alternate order over ``--repeat`` rounds; the ratio is the median of the per-round ratios.

After the runs the script compares the two outputs row by row (largest difference, Spearman between them) and each
with the taxonomy and with the released CAP of the same rows (Spearman; pairwise accuracy, Eq. 8). It prints one JSON
object and exits 1 when the int8 CAP ranks the rows differently from torch's beyond ``--min-agreement``.
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
from scipy import stats

from caplib.datasets import load_dataset
from caplib.evaluation import pairwise_accuracy, rank_correlation
from caplib.release import load_scores

ROOT = Path(__file__).resolve().parents[1]
PROFILE = "offline-official"
BACKENDS = ("torch", "onnxruntime-int8")


def score(rows: Path, out: Path, backend: str, cache: Path, progress: bool) -> float:
    """Seconds of one ``caplib score`` of ``rows`` with ``backend`` and an empty ``cache``."""
    command = [sys.executable, "-m", "caplib", "score", str(rows), "-o", str(out), "--profile", PROFILE,
               "--metrics", "cap", "--nli-backend", backend, "--cache-dir", str(cache),
               *([] if progress else ["--no-progress"])]
    start = time.perf_counter()
    subprocess.run(command, check=True, env=os.environ | {"PYTHONPATH": str(ROOT)})
    return time.perf_counter() - start


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rows", type=int, default=None, help="the first N test rows (default: all 7,826)")
    parser.add_argument("--repeat", type=int, default=1, help="rounds of both paths, alternating order")
    parser.add_argument("--min-agreement", type=float, default=0.95,
                        help="least Spearman between the int8 and the torch CAP (exit 1 below)")
    parser.add_argument("--no-progress", action="store_true", help="no progress bars on stderr")
    parser.add_argument("--json", type=Path, help="also write the result here")
    args = parser.parse_args()

    rows = load_dataset("cap_correctness", PROFILE)
    rows = rows[rows["split"] == "test"].head(args.rows)
    released = load_scores(ROOT / "data" / "official" / "scores.json").set_index("row_id")
    seconds: dict[str, list[float]] = {backend: [] for backend in BACKENDS}
    with tempfile.TemporaryDirectory(prefix="bench-official-") as folder:
        work = Path(folder)
        test = work / "test.csv"
        rows.to_csv(test, index=False)
        outputs = {backend: work / f"{backend}.csv" for backend in BACKENDS}
        for round_ in range(args.repeat):
            order = BACKENDS if round_ % 2 == 0 else BACKENDS[::-1]
            for backend in order:
                cache = work / f"cache-{backend}-{round_}"
                seconds[backend].append(score(test, outputs[backend], backend, cache, not args.no_progress))
                print(f"round {round_ + 1}: {backend} {seconds[backend][-1]:.1f} s", file=sys.stderr)
        # the int8 path's one-off cost: exporting and quantising the backbone, timed on one row with an empty cache
        one = work / "one.csv"
        rows.head(1).to_csv(one, index=False)
        export = score(one, work / "one-int8.csv", "onnxruntime-int8", work / "cache-export", False) - \
            score(one, work / "one-torch.csv", "torch", work / "cache-one", False)
        caps = {backend: pd.read_csv(path)["cap"].to_numpy() for backend, path in outputs.items()}
    labels = rows["label_semantic"].to_numpy()
    paper = released.loc[rows["row_id"].astype(int), "cap"].to_numpy()
    between = float(stats.spearmanr(caps["torch"], caps["onnxruntime-int8"]).statistic)
    ratios = [t / q for t, q in zip(seconds["torch"], seconds["onnxruntime-int8"])]
    result = {
        "rows": len(rows), "nli_pairs": 2 * len(rows), "profile": PROFILE, "cpu_count": os.cpu_count(),
        "seconds": seconds, "seconds_best": {b: min(s) for b, s in seconds.items()},
        "rows_per_second": {b: len(rows) / min(s) for b, s in seconds.items()},
        "speedup_int8_over_torch": statistics.median(ratios), "round_ratios": ratios,
        "int8_export_seconds": export,
        "int8_vs_torch": {"max_abs_difference": float(np.abs(caps["torch"] - caps["onnxruntime-int8"]).max()),
                          "spearman": between},
        "per_path": {b: {"spearman_taxonomy": rank_correlation(c, labels)[0],
                         "pairwise_accuracy": pairwise_accuracy(c, labels),
                         "spearman_with_released_cap": float(stats.spearmanr(c, paper).statistic)}
                     for b, c in caps.items()},
        "released_cap": {"spearman_taxonomy": rank_correlation(paper, labels)[0],
                         "pairwise_accuracy": pairwise_accuracy(paper, labels)},
    }
    text = json.dumps(result, indent=1)
    print(text)
    if args.json:
        args.json.write_text(text + "\n")
    return 0 if between >= args.min_agreement else 1


if __name__ == "__main__":
    sys.exit(main())
