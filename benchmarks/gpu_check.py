"""The GPU checks of CAP, in one command that prints one JSON object (not a test).

Checks, all on the bundled CAP-Correctness sample (``caplib.data.load_sample("cap_correctness")``; CAP of each
row's premise/hypothesis statements, ``--rows N``: its first N rows), in one run on one model:

* precision: CAP under float16 and bfloat16 autocast against float32, same batches (batch size 16): the
  maximum |difference| of the CAP scores over the rows (pass: <= 5e-3) and the difference in pairwise ranking
  accuracy (``caplib.evaluation.pairwise_accuracy`` against ``label_semantic``; pass: <= 0.002);
* invariance (issue 15): CAP in float32 and in the paper's dtype (``auto``: float16 autocast on CUDA) of the rows
  scored all at once, in chunks of 1 and 7 rows, and in shuffled order must be *exactly* equal: every pair runs in
  a tile of fixed shape (:mod:`caplib.batching`), so no score may depend on its companions;
* tile size: float32 CAP with NLI tiles of 1, 16 and 64 rows (the profile's ``nli.batch_size``, a setting in the
  signature); the maximum |difference| from tiles of 1 must be <= 1e-6, not exactly 0: the number of rows
  changes which kernel runs and the order of its sums, so float32's last bits move; 1e-6 is ~8 float32 ulps at
  1.0, far below any real difference;
* throughput: ``CAPScorer.score`` against ``benchmarks/bench_cap.py``'s naive pipeline (one
  ``transformers.pipeline`` call per NLI pass), side by side in the same run, same model object, dtype
  ``auto`` (float16 autocast on CUDA, as in the paper; float32 on CPU), batch size 16, ``--repeat`` rounds of
  alternating order: pairs/s of each side (best round) and their ratio (median of the per-round ratios).
  Reported, not judged.

Models (``--model``): ``tiny`` (default), the tiny random DeBERTa-v2 of ``tests/tiny_models.py`` (2 layers,
hidden 32), built in a temporary directory with a 300-piece BPE vocabulary trained on the sample's statements
(its probabilities mean nothing; the checks compare it with itself); ``offline``, the offline profile's trained
backbone (``builtin:offline-nli``); or a local directory / Hub id (with ``--revision``; never downloaded).

``--device`` defaults to ``cuda``; where CUDA is not available (and the device is not ``cpu``), the script
prints ``{"status": "skipped", "reason": "no CUDA device: ..."}`` and exits 0, measuring nothing. With
``--device cpu`` the same checks run on CPU with bfloat16 only (float16 autocast needs CUDA:
``caplib.checkpoints.resolve_dtype``). Exit status: 1 when a check fails, 2 when the model or device cannot be
used, else 0. The JSON (stdout, and ``--json FILE``) holds every figure, the verdicts, the model's identity,
device name and the torch/transformers versions; notes go to stderr.

Usage:
    python benchmarks/gpu_check.py --model tiny --json gpu-tiny.json          # GPU machine
    python benchmarks/gpu_check.py --model offline --json gpu-offline.json
    python benchmarks/gpu_check.py --model cross-encoder/nli-deberta-v3-large --revision <commit>
    python benchmarks/gpu_check.py --device cpu --rows 40                      # CPU dry run (bfloat16 only)
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent))

import bench_cap  # noqa: E402  (puts the repository root on sys.path)
from caplib.cap import COMPONENT_COLUMNS, CAPScorer, cap  # noqa: E402
from caplib.runtime import Runtime  # noqa: E402

PRECISION_CAP_TOLERANCE = 5e-3  # max |CAP(low precision) - CAP(float32)|
PRECISION_ACCURACY_TOLERANCE = 0.002  # |pairwise accuracy(low precision) - pairwise accuracy(float32)|
BATCH_SIZES = (1, 16, 64)  # NLI tile rows
BATCH_SIZE_TOLERANCE = 1e-6  # float32 CAP across tile sizes (see the module docstring)
CHUNK_SIZES = (1, 7)  # rows per call in the invariance check
PAPER_BATCH_SIZE = 16
TINY_VOCAB_SIZE = 300


def note(message: str) -> None:
    """Progress on stderr (stdout carries the JSON only)."""
    print(f"gpu_check: {message}", file=sys.stderr, flush=True)


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--model", default="tiny",
                        help="'tiny' (random DeBERTa-v2 built here), 'offline' (builtin:offline-nli), or a model "
                             "directory / Hub id")
    parser.add_argument("--revision", default=None, help="Hub revision of --model (default: main, recorded)")
    parser.add_argument("--device", default=None, help="torch device (default cuda; skipped without CUDA)")
    parser.add_argument("--rows", type=int, default=None, help="first N rows of the sample (default: all 1,024)")
    parser.add_argument("--repeat", type=int, default=3, help="throughput rounds, alternating order")
    parser.add_argument("--threads", type=int, default=None, help="torch CPU threads (default: torch's)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the tiny model's weights")
    parser.add_argument("--json", default=None, help="also write the JSON to this file")
    args = parser.parse_args(argv)
    if args.rows is not None and args.rows < 2:
        parser.error("--rows must be at least 2")
    if args.repeat < 1:
        parser.error("--repeat must be at least 1")
    return args


def no_cuda_reason(device: str) -> str | None:
    """Why ``device`` cannot run here when it is a CUDA device and CUDA is unavailable; None otherwise."""
    import torch

    if not device.startswith("cuda") or torch.cuda.is_available():
        return None
    build = "a CPU-only build" if torch.version.cuda is None else f"CUDA {torch.version.cuda} build, no GPU visible"
    return f"no CUDA device: torch {torch.__version__} ({build}); run on a GPU machine, or pass --device cpu"


def device_name(device: str) -> str:
    """The GPU's name, or the CPU's model name."""
    import torch

    if device.startswith("cuda"):
        return torch.cuda.get_device_name(torch.device(device))
    try:
        for line in Path("/proc/cpuinfo").read_text(encoding="utf-8").splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def prepare_model(spec: str, revision: str | None, texts: Sequence[str], workdir: Path, seed: int) -> tuple[str, str]:
    """(what ``CAPScorer(nli_model=...)`` takes, a description) of ``--model``."""
    if spec == "tiny":
        from tests.tiny_models import build_nli_checkpoint

        path = build_nli_checkpoint(workdir / "tiny-nli", vocab_size=TINY_VOCAB_SIZE, texts=texts, seed=seed)
        return str(path), ("tiny DeBERTa-v2 of tests/tiny_models.py (2 layers, hidden 32, relative attention), "
                           f"RANDOM weights (seed {seed}), BPE vocabulary of {TINY_VOCAB_SIZE} trained on the "
                           "sample's statements; its fingerprint changes with every build, as spm.model records "
                           "the temporary path it was trained in (same pieces, same weights)")
    if spec == "offline":
        from caplib.checkpoints import BUILTIN_OFFLINE_NLI, resolve_checkpoint

        checkpoint = resolve_checkpoint(BUILTIN_OFFLINE_NLI)  # raises CheckpointNotAvailable when not built
        return BUILTIN_OFFLINE_NLI, f"offline backbone {BUILTIN_OFFLINE_NLI} ({checkpoint.path})"
    return spec, spec + (f" (revision {revision})" if revision else "")


def make_scorer(model: str, revision: str | None, device: str, dtype: str, batch_size: int) -> CAPScorer:
    """A loaded CAPScorer without cache or progress bars."""
    runtime = Runtime(device=device, dtype=dtype, cache=False, progress=False, allow_unpinned=revision is None)
    scorer = CAPScorer(nli_model=model, revision=revision, batch_size=batch_size, runtime=runtime)
    scorer.nli.load()
    return scorer


def components(scorer: CAPScorer, rows: pd.DataFrame) -> np.ndarray:
    """CAP and its parts (``COMPONENT_COLUMNS``) of every row's (premise, hypothesis) statements."""
    frame = scorer.components(rows["premise"].tolist(), rows["hypothesis"].tolist())
    return frame[list(COMPONENT_COLUMNS)].to_numpy()


def max_abs(a: np.ndarray, b: np.ndarray) -> float:
    return float(np.abs(a - b).max())


def precision_check(reference: np.ndarray, low: np.ndarray, labels: Sequence[str], dtype: str) -> dict[str, Any]:
    """CAP under ``dtype`` autocast (``low``) against float32 (``reference``), both at the same batch size."""
    from caplib.evaluation import pairwise_accuracy

    accuracy_32, accuracy_low = pairwise_accuracy(reference[:, 0], labels), pairwise_accuracy(low[:, 0], labels)
    cap_diffs = np.abs(low[:, 0] - reference[:, 0])
    cap_diff, accuracy_diff = float(cap_diffs.max()), abs(accuracy_low - accuracy_32)
    return {
        "dtype": dtype,
        "max_abs_cap_difference": cap_diff,
        "median_abs_cap_difference": float(np.median(cap_diffs)),
        "rows_over_cap_tolerance": int((cap_diffs > PRECISION_CAP_TOLERANCE).sum()),
        "max_abs_component_difference": max_abs(low, reference),  # the six probabilities and both D, for reading
        "pairwise_accuracy_float32": accuracy_32,
        f"pairwise_accuracy_{dtype}": accuracy_low,
        "pairwise_accuracy_difference": accuracy_diff,
        "cap_tolerance": PRECISION_CAP_TOLERANCE,
        "accuracy_tolerance": PRECISION_ACCURACY_TOLERANCE,
        "cap_pass": cap_diff <= PRECISION_CAP_TOLERANCE,
        "accuracy_pass": accuracy_diff <= PRECISION_ACCURACY_TOLERANCE,
    }


def invariance_check(scorer: CAPScorer, rows: pd.DataFrame, whole: np.ndarray, seed: int) -> dict[str, Any]:
    """CAP and its parts of the rows in chunks and shuffled, against ``whole`` (all rows in one call): bit-equal?"""
    differences: dict[str, float] = {}
    for size in CHUNK_SIZES:
        parts = [components(scorer, rows.iloc[start : start + size]) for start in range(0, len(rows), size)]
        differences[f"chunks_of_{size}"] = max_abs(np.vstack(parts), whole)
    order = np.random.default_rng(seed).permutation(len(rows))
    differences["shuffled"] = max_abs(components(scorer, rows.iloc[order]), whole[order])
    return {"dtype": scorer.nli.dtype, "tile_rows": scorer.nli.batch_size,
            "max_abs_difference_from_one_call": differences, "criterion": "exactly equal",
            "pass": all(value == 0.0 for value in differences.values())}


def batch_size_check(by_batch_size: dict[int, np.ndarray]) -> dict[str, Any]:
    """Float32 CAP at each tile size against tiles of 1 row."""
    reference = by_batch_size[BATCH_SIZES[0]]
    cap_diffs = {str(size): max_abs(values[:, 0], reference[:, 0]) for size, values in by_batch_size.items()}
    worst = max(cap_diffs.values())
    return {
        "dtype": "float32",
        "batch_sizes": list(by_batch_size),
        "max_abs_cap_difference_from_batch_1": cap_diffs,
        "max_abs_component_difference_from_batch_1": {str(size): max_abs(values, reference)
                                                       for size, values in by_batch_size.items()},
        "max_abs_cap_difference": worst,
        "exactly_equal": worst == 0.0,
        "criterion": f"max |CAP(tile b) - CAP(tile 1)| <= {BATCH_SIZE_TOLERANCE:g} (the number of rows moves "
                     "float32's last bits)",
        "tolerance": BATCH_SIZE_TOLERANCE,
        "pass": worst <= BATCH_SIZE_TOLERANCE,
    }


def throughput(scorer: CAPScorer, rows: pd.DataFrame, repeat: int) -> dict[str, Any]:
    """CAPScorer against bench_cap's naive pipeline, timed in alternating rounds of the same run."""
    import torch
    from transformers import pipeline

    golds, candidates = rows["premise"].tolist(), rows["hypothesis"].tolist()
    pipe = pipeline("text-classification", model=scorer.nli._model, tokenizer=scorer.nli._tokenizer, top_k=None,
                    device=torch.device(scorer.nli.device))
    autocast = scorer.nli._autocast()

    def run_naive() -> np.ndarray:
        forward = bench_cap.naive_probabilities(pipe, golds, candidates, autocast)
        backward = bench_cap.naive_probabilities(pipe, candidates, golds, autocast)
        return cap(forward, backward, scorer.alpha, scorer.lam)

    def run_caplib() -> np.ndarray:
        return scorer.score(golds, candidates)

    sides: dict[str, Callable[[], np.ndarray]] = {"naive": run_naive, "caplib": run_caplib}
    scorer.score(golds[:8], candidates[:8])  # warm-up: first-call allocations, kernel selection
    bench_cap.naive_probabilities(pipe, golds[:8], candidates[:8], autocast)
    times: dict[str, list[float]] = {"naive": [], "caplib": []}
    scores: dict[str, np.ndarray] = {}
    for round_ in range(repeat):
        for name in (("naive", "caplib") if round_ % 2 == 0 else ("caplib", "naive")):
            if scorer.nli.device.startswith("cuda"):
                torch.cuda.synchronize()
            start = time.perf_counter()
            scores[name] = sides[name]()
            times[name].append(time.perf_counter() - start)
    ratios = [naive / fast for naive, fast in zip(times["naive"], times["caplib"])]
    return {
        "dtype": scorer.nli.dtype,
        "batch_size": scorer.nli.batch_size,
        "cpu_workers": scorer.nli.last_stats.get("cpu_workers"),
        "pairs": len(golds),  # gold-candidate pairs, 2 NLI passes each
        "unique_nli_pairs": scorer.nli.last_stats.get("unique"),
        "rounds": repeat,
        "naive_seconds": times["naive"],
        "caplib_seconds": times["caplib"],
        "naive_pairs_per_second": len(golds) / min(times["naive"]),
        "caplib_pairs_per_second": len(golds) / min(times["caplib"]),
        "speedup": float(np.median(ratios)),
        "speedup_per_round": ratios,
        "max_abs_cap_difference_naive_vs_caplib": max_abs(scores["naive"], scores["caplib"]),
    }


def environment(device: str) -> dict[str, Any]:
    import torch
    import transformers

    on_cuda = device.startswith("cuda")
    return {
        "device": device,
        "device_name": device_name(device),
        "python": platform.python_version(),
        "torch": torch.__version__,
        "transformers": transformers.__version__,
        "cuda": torch.version.cuda,
        "cudnn": torch.backends.cudnn.version() if on_cuda else None,
        "torch_threads": torch.get_num_threads(),
        "float32_matmul_precision": torch.get_float32_matmul_precision(),
        "cuda_matmul_allow_tf32": torch.backends.cuda.matmul.allow_tf32 if on_cuda else None,
    }


def emit(result: dict[str, Any], json_path: str | None) -> None:
    text = json.dumps(result, indent=2)
    print(text, flush=True)
    if json_path:
        Path(json_path).write_text(text + "\n", encoding="utf-8")


def run_checks(args: argparse.Namespace, device: str, workdir: Path) -> dict[str, Any]:
    """Every check on ``device``; the result object (``status`` ok / failed)."""
    from caplib.checkpoints import pick_device
    from caplib.data import load_sample

    device = pick_device(device)
    sample = load_sample("cap_correctness")
    rows = sample.iloc[: args.rows]
    labels = rows["label_semantic"].tolist()
    statements = sorted({*sample["premise"], *sample["hypothesis"]})  # all rows': one tiny model for any --rows
    model, model_note = prepare_model(args.model, args.revision, statements, workdir, args.seed)
    low_dtypes = ("float16", "bfloat16") if device.startswith("cuda") else ("bfloat16",)

    timings: dict[str, float] = {}

    def timed(name: str, scorer: CAPScorer) -> np.ndarray:
        note(f"{name}: {len(rows)} rows")
        start = time.perf_counter()
        values = components(scorer, rows)
        timings[name] = time.perf_counter() - start
        return values

    fp32 = {size: make_scorer(model, args.revision, device, "float32", size) for size in BATCH_SIZES}
    by_batch_size = {size: timed(f"float32, batch {size}", scorer) for size, scorer in fp32.items()}
    precision: dict[str, Any] = {}
    for dtype in low_dtypes:
        try:
            scorer = make_scorer(model, args.revision, device, dtype, PAPER_BATCH_SIZE)
        except ValueError as error:  # e.g. a GPU without bfloat16
            precision[dtype] = {"dtype": dtype, "status": "unsupported", "reason": str(error)}
            continue
        low = timed(f"{dtype}, batch {PAPER_BATCH_SIZE}", scorer)
        precision[dtype] = precision_check(by_batch_size[PAPER_BATCH_SIZE], low, labels, dtype)
    batch_sizes = batch_size_check(by_batch_size)
    note("invariance: chunks of 1 and 7 rows, shuffled order")
    invariance = {"float32": invariance_check(fp32[PAPER_BATCH_SIZE], rows, by_batch_size[PAPER_BATCH_SIZE], args.seed)}
    paper_dtype = make_scorer(model, args.revision, device, "auto", PAPER_BATCH_SIZE)
    if paper_dtype.nli.dtype != "float32":
        invariance[paper_dtype.nli.dtype] = invariance_check(paper_dtype, rows, components(paper_dtype, rows),
                                                             args.seed)
    note(f"throughput: {args.repeat} round(s) of CAPScorer and the naive pipeline")
    speed = throughput(make_scorer(model, args.revision, device, "auto", PAPER_BATCH_SIZE), rows, args.repeat)

    verdicts: dict[str, bool] = {}
    for dtype, check in precision.items():
        if "cap_pass" in check:
            verdicts[f"{dtype}_cap"] = check["cap_pass"]
            verdicts[f"{dtype}_pairwise_accuracy"] = check["accuracy_pass"]
    verdicts["tile_size_within_tolerance"] = batch_sizes["pass"]
    verdicts |= {f"invariance_{dtype}": check["pass"] for dtype, check in invariance.items()}
    reference = fp32[PAPER_BATCH_SIZE]
    return {
        "status": "ok" if all(verdicts.values()) else "failed",
        "verdicts": verdicts,
        "model": {
            "spec": args.model,
            "description": model_note,
            "identity": reference.nli.checkpoint.identity,
            "fingerprint": reference.nli.checkpoint.fingerprint,
            "revision": reference.nli.checkpoint.revision,
            "commit": reference.nli.checkpoint.commit,
            "signature": str(reference.signature()),
        },
        "inputs": {
            "data": "bundled sample cap_correctness (premise/hypothesis statements, label_semantic)",
            "rows": len(rows),
            "nli_passes_per_scoring": 2 * len(rows),
            "classes": rows["label_semantic"].value_counts().to_dict(),
            "splits": rows["split"].value_counts().to_dict(),
        },
        "precision": precision,
        "batch_size": batch_sizes,
        "invariance": invariance,
        "throughput": speed,
        "scoring_seconds": timings,
        "environment": environment(device),
    }


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")  # caplib never downloads while scoring; neither does this
    import torch

    from caplib.checkpoints import CheckpointNotAvailable

    if args.threads:
        torch.set_num_threads(args.threads)
    device = args.device or "cuda"
    reason = no_cuda_reason(device)
    if reason is not None:
        emit({"status": "skipped", "reason": reason}, args.json)
        return 0
    with tempfile.TemporaryDirectory(prefix="gpu_check-") as workdir:
        try:
            result = run_checks(args, device, Path(workdir))
        except (CheckpointNotAvailable, ValueError) as error:
            emit({"status": "error", "reason": f"{type(error).__name__}: {error}"}, args.json)
            return 2
    emit(result, args.json)
    return 0 if result["status"] == "ok" else 1


if __name__ == "__main__":
    raise SystemExit(main())
