"""``caplib score --engine ray``: the same file as the local engine, byte for byte, with 2 actors from an empty cache
and with 1 actor resuming a job killed halfway, which computes only what it had not finished. A tiny NLI checkpoint
built here stands in for the backbone (the same loading and scoring code); Ray runs locally."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest

from caplib.cli import main
from tests.tiny_models import tiny_profile

pytest.importorskip("ray.data", reason="Ray Data is not installed (pip install 'caplib[distributed]')")

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "data" / "sample" / "cap_correctness.csv"
METRICS = "cap,rouge_l,em"


@pytest.fixture(scope="module")
def profile(tmp_path_factory) -> Path:
    """The offline profile with a tiny NLI checkpoint (DeBERTa-v2, random weights: real code path, fast)."""
    return tiny_profile(tmp_path_factory.mktemp("ray"))


@pytest.fixture(scope="module")
def rows(tmp_path_factory) -> Path:
    """The sample's first 512 rows: what the engines must agree on does not need more."""
    path = tmp_path_factory.mktemp("rows") / "rows.csv"
    pd.read_csv(SAMPLE, dtype=str, keep_default_na=False).head(512).to_csv(path, index=False)
    return path


def _score(profile: Path, out: Path, cache: Path, *extra: str, source: Path) -> dict:
    assert main(["score", str(source), "-o", str(out), "--profile", str(profile), "--metrics", METRICS,
                 "--components", "--cache-dir", str(cache), "--no-progress", *extra]) == 0
    return json.loads(Path(f"{out}.signature.json").read_text())


def test_the_ray_engine_writes_what_the_local_engine_writes(profile, rows, tmp_path, capsys):
    local = _score(profile, tmp_path / "local.csv", tmp_path / "cache-local", source=rows)
    out = tmp_path / "ray2.csv"
    # each engine from its own empty cache: every score is computed, none read back (one actor: the killed job's test)
    report = _score(profile, out, tmp_path / "cache-ray2", "--engine", "ray", "--actors", "2", "--block-rows", "100",
                    source=rows)
    assert out.read_bytes() == (tmp_path / "local.csv").read_bytes(), "the file differs from the local engine's"
    assert report["metrics"] == local["metrics"]
    engine = report["engine"]
    assert engine["name"] == "ray" and engine["actors"] == 2 and engine["blocks"] == 6  # 512 / 100
    assert engine["devices"] == ["cpu"] and engine["ray"]
    assert engine["actor_processes"] == 2  # both actors took blocks
    assert local["engine"] == {"name": "local"}
    assert pd.read_csv(out)["row_id"].tolist() == list(range(512))  # input order
    assert "signature" in capsys.readouterr().out


def test_the_ray_engine_refuses_what_it_cannot_do(profile, tmp_path, capsys):
    assert main(["score", str(SAMPLE), "-o", str(tmp_path / "o.csv"), "--profile", str(profile), "--metrics", "em",
                 "--actors", "2"]) == 2
    assert "--actors and --address go with --engine ray" in capsys.readouterr().err


def _settings(report: dict) -> dict:
    """Each metric's report less the counts that a cache changes (pairs computed, pairs read back)."""
    counts = ("nli_pairs_computed", "nli_pairs_cached")
    return {metric: {key: value for key, value in entry.items() if key not in counts}
            for metric, entry in report["metrics"].items()}


def _entries(database: Path) -> int:
    try:
        with sqlite3.connect(f"file:{database}?mode=ro", uri=True, timeout=1) as connection:
            return int(connection.execute("SELECT COUNT(*) FROM entries").fetchone()[0])
    except sqlite3.Error:
        return 0


def test_a_killed_ray_job_resumes_from_the_cache(profile, rows, tmp_path):
    # 1,024 distinct rows (the 512 rows twice, each copy's statements marked), 16 blocks of 64 on one actor: the job is
    # killed once two blocks are cached, far from its end
    first = pd.read_csv(rows, dtype=str, keep_default_na=False)
    copies = [first.assign(premise=first["premise"] + f" ({k})", hypothesis=first["hypothesis"] + f" ({k})")
              for k in range(2)]
    source = tmp_path / "big.csv"
    pd.concat(copies).to_csv(source, index=False)
    cache, out = tmp_path / "cache", tmp_path / "out.csv"
    command = [sys.executable, "-m", "caplib", "score", str(source), "-o", str(out), "--profile", str(profile),
               "--metrics", "cap", "--cache-dir", str(cache), "--no-progress", "--engine", "ray", "--block-rows",
               "64"]
    job = subprocess.Popen(command, cwd=ROOT, start_new_session=True, stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL, env={**os.environ, "PYTHONPATH": str(ROOT)})
    deadline = time.monotonic() + 300
    while _entries(cache / "nli.sqlite3") < 2 * 2 * 64 and job.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)  # until at least two blocks (both NLI directions of 64 rows each) are in the cache
    os.killpg(job.pid, signal.SIGKILL)  # the driver and its Ray processes, mid-job
    job.wait()
    # what a killed driver leaves of its local Ray (processes in their own sessions) is stopped as a user would;
    # an actor that outlived the driver may finish the block it holds, so the cache is counted only after this
    subprocess.run([str(Path(sys.executable).parent / "ray"), "stop", "--force"], capture_output=True, check=False)
    done = _entries(cache / "nli.sqlite3")
    assert not out.exists() and 0 < done < 2 * 1024, done  # killed halfway: some blocks cached, no output
    resumed = _score(profile, out, cache, "--engine", "ray", "--block-rows", "64", source=source)
    assert resumed["engine"]["actors"] == resumed["engine"]["actor_processes"] == 1
    assert resumed["engine"]["blocks"] == 16
    fresh = tmp_path / "fresh.csv"
    local = _score(profile, fresh, tmp_path / "cache-fresh", source=source)
    cap, uninterrupted = resumed["metrics"]["cap"], local["metrics"]["cap"]
    # only the blocks not finished before the kill were computed; the others came from the cache
    assert cap["nli_pairs_cached"] == done and uninterrupted["nli_pairs_cached"] == 0
    assert cap["nli_pairs_computed"] == uninterrupted["nli_pairs_computed"] - done
    # one actor, part from the cache, writes what the local engine writes from an empty one: every metric, byte for byte
    assert out.read_bytes() == fresh.read_bytes(), "the resumed file differs from the local engine's"
    assert _settings(resumed) == _settings(local)
