"""``caplib score`` on the local engine and on Ray Data with 1 and 2 actors: rows per second and peak memory.

    PYTHONPATH=. python benchmarks/bench_engines.py                          # the bundled sample, CAP, offline
    PYTHONPATH=. python benchmarks/bench_engines.py --rows 100000 --metrics em,rouge_l --engines ray2
    PYTHONPATH=. python benchmarks/bench_engines.py --rows 100000 --engines ray2 \
        --score-args '--nli-backend onnxruntime-int8'

Each run is the command a user types (``python -m caplib score FILE -o OUT --metrics ... --no-progress``, plus
``--engine ray --actors N``), in a subprocess with its own empty cache directory, so every score is computed;
the seconds include interpreter start, model loading and Ray's start. Peak memory is the largest sum of the
proportional set sizes (PSS: shared pages such as Ray's object store counted once) of the command and all its
child processes (Ray's raylet, GCS, workers and actors), sampled every 0.2 s with psutil. ``--rows N`` scores a
synthetic file of N distinct rows (the sample's rows repeated, each copy's texts marked) instead of the sample;
``--score-args`` adds arguments to every run. After the runs, the outputs must be byte-identical across engines
(status 1 otherwise). Prints one JSON object.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pandas as pd
import psutil

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "data" / "sample" / "cap_correctness.csv"
ENGINES = {"local": [], "ray1": ["--engine", "ray", "--actors", "1"], "ray2": ["--engine", "ray", "--actors", "2"]}


def synthetic(path: Path, rows: int) -> Path:
    """``rows`` distinct CAP-Correctness rows: the sample repeated, each copy's answers and statements marked."""
    sample = pd.read_csv(SAMPLE, dtype=str, keep_default_na=False)
    copies = []
    for k in range(-(-rows // len(sample))):
        marked = {column: sample[column] + f" ({k})" for column in ("answer", "premise", "hypothesis")}
        copies.append(sample.assign(**marked))
    pd.concat(copies).head(rows).to_csv(path, index=False)
    return path


def run(command: list[str]) -> tuple[float, float]:
    """(seconds, peak resident memory in GiB of the process tree)."""
    start = time.perf_counter()
    process = psutil.Popen(command, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                           env={**os.environ, "PYTHONPATH": str(ROOT)})
    peak = 0
    while process.poll() is None:
        try:
            tree = [process, *process.children(recursive=True)]
            peak = max(peak, sum(p.memory_full_info().pss for p in tree if p.is_running()))
        except psutil.Error:
            pass
        time.sleep(0.2)
    seconds = time.perf_counter() - start
    if process.returncode != 0:
        raise RuntimeError(f"{' '.join(command)} failed: {process.stderr.read().decode()[-2000:]}")
    return seconds, peak / 2**30


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=None, help="a synthetic file of this many rows (default: sample)")
    parser.add_argument("--metrics", default="cap")
    parser.add_argument("--engines", default="local,ray1,ray2")
    parser.add_argument("--block-rows", type=int, default=256)
    parser.add_argument("--score-args", default="", help="more arguments for every run, e.g. "
                                                         "'--nli-backend onnxruntime-int8'")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as directory:
        work = Path(directory)
        source = synthetic(work / "input.csv", args.rows) if args.rows else SAMPLE
        rows = len(pd.read_csv(source, usecols=["question"]))
        result: dict[str, object] = {"input": str(source if not args.rows else f"synthetic, {rows} rows"),
                                     "rows": rows, "metrics": args.metrics, "score_args": args.score_args,
                                     "cpus": os.cpu_count(), "runs": {}}
        outputs = {}
        for engine in args.engines.split(","):
            out = work / f"{engine}.csv"
            command = [sys.executable, "-m", "caplib", "score", str(source), "-o", str(out), "--metrics",
                       args.metrics, "--no-progress", "--cache-dir", str(work / f"cache-{engine}"), *ENGINES[engine],
                       *args.score_args.split()]
            if engine != "local":
                command += ["--block-rows", str(args.block_rows)]
            seconds, peak = run(command)
            result["runs"][engine] = {"seconds": round(seconds, 1), "rows_per_second": round(rows / seconds, 1),
                                      "peak_memory_gib": round(peak, 2)}
            outputs[engine] = out.read_bytes()
        result["identical_outputs"] = len(set(outputs.values())) == 1
    print(json.dumps(result, indent=1))
    return 0 if result["identical_outputs"] else 1


if __name__ == "__main__":
    raise SystemExit(main())
