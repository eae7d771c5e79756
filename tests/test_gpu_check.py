"""benchmarks/gpu_check.py: its CPU dry run (tiny model, 40 rows, bfloat16 only) and its skip without CUDA."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")

REPO_ROOT = Path(__file__).resolve().parents[1]
SCRIPT = REPO_ROOT / "benchmarks" / "gpu_check.py"


def run_script(*args: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false"}
    return subprocess.run([sys.executable, str(SCRIPT), *args], cwd=REPO_ROOT, env=env, capture_output=True,
                          text=True, timeout=timeout)


def test_cpu_run_reports_every_check(tmp_path):
    # One torch thread: on 2 shared cores, OpenMP threads spinning on busy cores slow tiny matmuls badly.
    done = run_script("--device", "cpu", "--model", "tiny", "--rows", "40", "--repeat", "1", "--threads", "1",
                      "--json", str(tmp_path / "cpu.json"))
    assert done.returncode in (0, 1), done.stderr[-3000:]
    result = json.loads(done.stdout)
    assert json.loads((tmp_path / "cpu.json").read_text(encoding="utf-8")) == result
    # Exit status and status follow the verdicts.
    assert set(result["verdicts"]) == {"bfloat16_cap", "bfloat16_pairwise_accuracy", "tile_size_within_tolerance",
                                       "invariance_float32"}
    assert result["status"] == ("ok" if all(result["verdicts"].values()) else "failed")
    assert done.returncode == (0 if result["status"] == "ok" else 1)

    # Precision: bfloat16 only on CPU (float16 autocast needs CUDA); verdicts agree with their figures.
    assert set(result["precision"]) == {"bfloat16"}
    bf16 = result["precision"]["bfloat16"]
    assert bf16["cap_pass"] == (bf16["max_abs_cap_difference"] <= 5e-3)
    assert bf16["accuracy_pass"] == (bf16["pairwise_accuracy_difference"] <= 0.002)
    assert bf16["pairwise_accuracy_difference"] == pytest.approx(
        abs(bf16["pairwise_accuracy_bfloat16"] - bf16["pairwise_accuracy_float32"]))
    assert 0.0 < bf16["max_abs_cap_difference"] < 0.05  # bfloat16 rounding shows, but stays small

    # Tiles of 1, 16, 64 rows in float32: the same CAP within 1e-6.
    sizes = result["batch_size"]
    assert sizes["batch_sizes"] == [1, 16, 64] and sizes["tolerance"] == 1e-6
    differences = sizes["max_abs_cap_difference_from_batch_1"]
    assert differences["1"] == 0.0
    assert sizes["max_abs_cap_difference"] == max(differences.values()) <= 1e-6
    assert sizes["pass"] is True and result["verdicts"]["tile_size_within_tolerance"] is True

    # Chunks of 1 and 7 rows and a shuffled order give exactly the CAP of one call (float32 only on CPU).
    invariance = result["invariance"]
    assert set(invariance) == {"float32"} and invariance["float32"]["tile_rows"] == 16
    assert invariance["float32"]["max_abs_difference_from_one_call"] == {"chunks_of_1": 0.0, "chunks_of_7": 0.0,
                                                                        "shuffled": 0.0}
    assert invariance["float32"]["pass"] is True and result["verdicts"]["invariance_float32"] is True

    # Throughput: both sides measured in this run, on the same rows, agreeing on the scores.
    speed = result["throughput"]
    assert speed["pairs"] == 40 and speed["dtype"] == "float32" and speed["batch_size"] == 16
    assert speed["naive_pairs_per_second"] > 0 and speed["caplib_pairs_per_second"] > 0
    assert speed["speedup"] == pytest.approx(speed["naive_seconds"][0] / speed["caplib_seconds"][0])
    assert speed["max_abs_cap_difference_naive_vs_caplib"] <= 1e-5

    # What was run, on what.
    assert result["inputs"]["rows"] == 40
    assert result["model"]["spec"] == "tiny" and len(result["model"]["fingerprint"]) == 64
    assert result["model"]["signature"].startswith("cap|")
    environment = result["environment"]
    assert environment["device"] == "cpu" and environment["device_name"]
    assert environment["torch"] == torch.__version__ and environment["transformers"]


@pytest.mark.skipif(torch.cuda.is_available(), reason="CUDA is available: the script would run the checks")
def test_without_cuda_it_skips_and_measures_nothing(tmp_path):
    done = run_script("--json", str(tmp_path / "skip.json"), timeout=120)
    assert done.returncode == 0, done.stderr[-3000:]
    result = json.loads(done.stdout)
    assert result["status"] == "skipped"
    assert result["reason"].startswith("no CUDA device: ")
    assert set(result) == {"status", "reason"}  # no figure at all
    assert json.loads((tmp_path / "skip.json").read_text(encoding="utf-8")) == result
