"""Dress rehearsal of the paper profile: the README's two commands against local stand-ins, with caplib's real code.

What a reader with the Hub and a GPU does, rehearsed here without either (issue 14):

1. ``caplib fetch --profile paper`` downloads the three official CSVs and the four checkpoints plus COMET's encoder,
   and writes ``caplib/profiles/paper.lock.json``. Here the Hub is :class:`tests.fake_hub.FakeHub` on 127.0.0.1
   (``HF_ENDPOINT``) serving tiny stand-ins saved under the exact Hub ids (:mod:`tests.paper_standins`: DeBERTa-v2
   with the real id2label order, mT5, a 24-layer RoBERTa, a COMET regression checkpoint on a tiny XLM-R), and the
   CSVs are the bundled sample in the official schema, served by the same server at their upstream paths
   (``CAPLIB_DATA_URL``).
2. ``python -m caplib.statements train --profile paper --max-steps 2`` fine-tunes the statement model (2 steps).
3. ``python scripts/run_book.py --profile paper`` (``make book PROFILE=paper``) runs every chapter with papermill
   and builds the HTML, with ``HF_HUB_OFFLINE=1``; then ``caplib score --profile paper --metrics all`` scores the
   first rows of the fetched CAP-Correctness.

Everything runs in a copy of the working tree (``PYTHONPATH`` points at it), so the repository's own
``data/official``, ``models`` and lock are never touched. The stand-ins' numbers mean nothing; the assertions check
that every step runs, nothing is skipped, everything is pinned, and that CAP and COMET computed by the book equal
values computed here independently with transformers and COMET from the fetched files (which is what catches a
wrong id2label mapping or a wrong COMET input order).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from tests.fake_hub import FakeHub
from tests.paper_standins import COMET_ENCODER_REPO, COMET_REPO, NLI_REPO, build_paper_standins

pytestmark = pytest.mark.slow
ROOT = Path(__file__).resolve().parents[1]
ROW_LIMIT = 128  # rows per dataset in the chapters: 16 per class, so every section and bootstrap is defined
OFFICIAL = {"CAP-Correctness.csv": "cap_correctness.csv", "CAP-Correctness-splits.csv": "cap_correctness_splits.csv",
            "CAP-Statements.csv": "cap_statements.csv"}  # official name -> bundled sample file (official schema)


def _copy_tree(target: Path) -> Path:
    """The working tree's files (tracked and new, not ignored) copied to ``target``."""
    listed = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=ROOT,
                            check=True, capture_output=True).stdout.decode().split("\0")
    for name in filter(None, listed):
        source = ROOT / name
        if source.is_file():
            (target / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target / name)
    return target


def _run(command: list[str], cwd: Path, env: dict[str, str], timeout: int = 600) -> subprocess.CompletedProcess:
    started = time.perf_counter()
    result = subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)
    result.seconds = time.perf_counter() - started  # type: ignore[attr-defined]
    return result


@pytest.fixture(scope="module")
def rehearsal(tmp_path_factory):
    """Steps 1 and 2 (fetch, statement training) against the fake Hub, which stays up, logging, for the module."""
    base = tmp_path_factory.mktemp("rehearsal")
    standins = build_paper_standins(base / "standins")
    served = base / "served"
    served.mkdir()
    for official, sample in OFFICIAL.items():
        shutil.copy2(ROOT / "data" / "sample" / sample, served / official)
    repo = _copy_tree(base / "repo")
    # the stand-ins' commits are the fake Hub's own: the authors' pinned commits of paper.yaml left to the lock
    paper_yaml = repo / "caplib" / "profiles" / "paper.yaml"
    text = paper_yaml.read_text(encoding="utf-8")
    for pinned in ("bab4bc7178836f731dcfd18c06ca9def0a137712", "73fb5dbe4756edadc8fbe8c769b0a109493acf7a"):
        assert pinned in text
        text = text.replace(pinned, "null")
    paper_yaml.write_text(text, encoding="utf-8")
    with FakeHub() as hub:
        commits = {repo_id: hub.add_repo(repo_id, directory) for repo_id, directory in standins.items()}
        for name in OFFICIAL:
            hub.add_file(f"/data/{name}", served / name)
        env = {key: value for key, value in os.environ.items()
               if key not in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE", "CAPLIB_OFFLINE_NLI_DIR")
               and not key.lower().endswith("_proxy")}
        env |= {"PYTHONPATH": str(repo), "HF_HOME": str(base / "hf"), "HF_ENDPOINT": hub.url,
                "CAPLIB_DATA_URL": hub.url, "CAPLIB_CACHE_DIR": str(base / "cache"),
                "HF_HUB_DISABLE_TELEMETRY": "1", "TOKENIZERS_PARALLELISM": "false"}
        fetch = _run([sys.executable, "-m", "caplib", "fetch", "--profile", "paper", "--no-progress"], repo, env)
        offline = env | {"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
        mark = len(hub.requests)
        train = _run([sys.executable, "-m", "caplib.statements", "train", "--profile", "paper", "--max-steps", "2",
                      "--device", "cpu"], repo, offline)
        yield {"base": base, "repo": repo, "env": offline, "commits": commits, "fetch": fetch, "train": train,
               "hub": hub, "mark": mark}


@pytest.fixture(scope="module")
def book(rehearsal):
    """Step 3: ``make book PROFILE=paper`` (the runner it calls), offline, on the first rows of each dataset."""
    return _run([sys.executable, "scripts/run_book.py", "--profile", "paper", "--device", "cpu", "--row-limit",
                 str(ROW_LIMIT)], rehearsal["repo"], rehearsal["env"], timeout=900)


@pytest.fixture(scope="module")
def scored(rehearsal):
    """``caplib score --profile paper --metrics all`` on the first rows of the fetched CAP-Correctness, offline."""
    repo = rehearsal["repo"]
    rows = repo / "rows.csv"
    pd.read_csv(repo / "data" / "official" / "CAP-Correctness.csv", dtype=str, keep_default_na=False).head(
        ROW_LIMIT).to_csv(rows, index=False)
    result = _run([sys.executable, "-m", "caplib", "score", str(rows), "-o", str(repo / "scores.csv"), "--profile",
                   "paper", "--metrics", "all", "--device", "cpu", "--no-progress"], repo, rehearsal["env"])
    assert result.returncode == 0, result.stderr[-3000:]
    return pd.read_csv(repo / "scores.csv", keep_default_na=False)


def _numbers(repo: Path) -> dict[str, dict]:
    return {path.name.split(".")[0]: json.loads(path.read_text())
            for path in sorted((repo / "book" / "chapters").glob("*.numbers.json"))}


def _succeeded(result: subprocess.CompletedProcess, step: str) -> None:
    assert result.returncode == 0, f"{step} failed ({result.seconds:.0f} s):\n{result.stdout[-3000:]}\n" \
                                   f"{result.stderr[-5000:]}"


def test_fetch_and_statement_training_run(rehearsal):
    _succeeded(rehearsal["fetch"], "caplib fetch")
    _succeeded(rehearsal["train"], "statement training")
    assert (rehearsal["repo"] / "models" / "statements" / "config.json").is_file()
    manifest = json.loads((rehearsal["repo"] / "models" / "statements" / "caplib_statements.json").read_text())
    hyper = manifest["hyperparameters"]  # the paper profile's statements.training: the authors' settings
    assert (hyper["weight_decay"], hyper["patience"], hyper["epochs"]) == (0.01, 8, 15)
    assert hyper["schedule"] == "cosine decay to 0, warm-up ratio 0.1"


def test_the_book_builds_offline(rehearsal, book):
    _succeeded(book, "make book PROFILE=paper")
    print(book.stdout[-1500:])  # the runner's timings, shown with -s or on failure
    assert (rehearsal["repo"] / "_build" / "html" / "index.html").is_file()
    assert list(rehearsal["hub"].requests[rehearsal["mark"]:]) == []  # after the fetch nothing reaches the Hub


def test_a_second_fetch_downloads_nothing_and_update_relocks_the_same_commits(rehearsal):
    lock_file = rehearsal["repo"] / "caplib" / "profiles" / "paper.lock.json"
    before = json.loads(lock_file.read_text())
    env = {key: value for key, value in rehearsal["env"].items() if key not in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE")}
    hub, mark = rehearsal["hub"], len(rehearsal["hub"].requests)
    again = _run([sys.executable, "-m", "caplib", "fetch", "--profile", "paper", "--no-progress"], rehearsal["repo"], env)
    _succeeded(again, "second caplib fetch")
    assert again.stdout.count("already here, hashes match the lock") == 5
    assert again.stdout.count("already here, SHA-256 matches the lock") == 3
    assert list(hub.requests[mark:]) == []  # everything was here as locked: not even a reachability probe
    splits = rehearsal["repo"] / "data" / "official" / "CAP-Statements-splits.csv"
    original = splits.read_bytes()
    splits.write_bytes(original.replace(b",test", b",train"))  # a hand-edited split is reported, not re-locked
    edited = _run([sys.executable, "-m", "caplib", "fetch", "--profile", "paper", "--no-progress"], rehearsal["repo"],
                  env)
    splits.write_bytes(original)
    assert edited.returncode == 2 and "changed since it was locked" in edited.stdout
    assert json.loads(lock_file.read_text()) == before
    update = _run([sys.executable, "-m", "caplib", "fetch", "--profile", "paper", "--update", "--no-progress"],
                  rehearsal["repo"], env)
    _succeeded(update, "caplib fetch --update")
    after = json.loads(lock_file.read_text())
    assert {name: entry["commit"] for name, entry in after["models"].items()} == \
           {name: entry["commit"] for name, entry in before["models"].items()}
    assert after["data"].keys() == before["data"].keys()


def test_the_lock_pins_every_model_data_file_and_the_statement_model(rehearsal):
    lock = json.loads((rehearsal["repo"] / "caplib" / "profiles" / "paper.lock.json").read_text())
    assert {name: entry["commit"] for name, entry in lock["models"].items()} == rehearsal["commits"]
    assert lock["models"][COMET_ENCODER_REPO]["role"] == "comet-encoder"
    assert set(lock["data"]) == {*OFFICIAL, "CAP-Statements-splits.csv"}
    assert lock["data"]["CAP-Statements-splits.csv"]["generated"].startswith("caplib.datasets.statement_splits")
    assert lock["statement_model"]["stopped"]["steps"] == 2
    assert lock["statement_model"]["base"] == f"google/mt5-small@{rehearsal['commits']['google/mt5-small']}"


def test_the_seeded_statement_split_has_the_papers_proportions(rehearsal):
    splits = pd.read_csv(rehearsal["repo"] / "data" / "official" / "CAP-Statements-splits.csv", dtype=str)
    counts = splits["split"].value_counts().to_dict()
    total = len(splits)
    assert counts == {"train": total - 2 * round(total / 10), "validation": round(total / 10),
                      "test": round(total / 10)}


def test_every_chapter_runs_every_section_and_records_what_offline_records(rehearsal, book):
    numbers = _numbers(rehearsal["repo"])
    assert len(numbers) == 11
    for chapter, recorded in numbers.items():  # no dataset, metric, model, section or interval skipped
        assert not recorded.get("skipped"), (chapter, recorded.get("skipped"))
    offline = json.loads((ROOT / "tests" / "fixtures" / "offline_numbers_keys.json").read_text())
    for chapter, keys in offline.items():
        assert set(keys) - set(numbers[chapter]) <= set(OFFLINE_ONLY.get(chapter, ())), chapter


#: Keys only the offline profile records: figures of its locally trained backbone (caplib.book.backbone_figures), and
#: whether the calibration it ships is the one Chapter 10 fits; and Chapter 11's comparison with the release's scores,
#: which the rehearsal's copy of the tree does not have (data/official/ is not copied; its rows are the sample's).
OFFLINE_ONLY = {"03_cap": ("backbone",), "10_labeler": ("shipped_matches",),
                "11_official_rows": ("class_means", "label_sources", "lexical", "modelled", "n_rows", "signatures",
                                     "cap_gap_by_class")}


def test_signatures_carry_the_locked_commits(rehearsal, book):
    signatures = _numbers(rehearsal["repo"])["04_baselines"]["signatures"]
    commits = rehearsal["commits"]
    assert commits[NLI_REPO] in signatures["cap"]
    assert commits["roberta-large"] in signatures["bertscore"] and "layer:17" in signatures["bertscore"]
    assert commits[COMET_REPO] in signatures["comet"] and commits[COMET_ENCODER_REPO] in signatures["comet"]


def _independent_scores(rehearsal, rows: pd.DataFrame) -> pd.DataFrame:
    """CAP (Eq. 2-3 with the config's own id2label) and COMET (src = question, mt = answer, ref = gold), computed
    with transformers and COMET directly from the fetched snapshots, in a subprocess with the rehearsal's cache."""
    script = f"""
import json, sys
import pandas as pd, torch
from huggingface_hub import snapshot_download
from transformers import AutoModelForSequenceClassification, AutoTokenizer
from comet import load_from_checkpoint
rows = pd.read_json(sys.stdin)
path = snapshot_download({NLI_REPO!r}, revision={rehearsal['commits'][NLI_REPO]!r})
tokenizer = AutoTokenizer.from_pretrained(path)
model = AutoModelForSequenceClassification.from_pretrained(path).eval()
names = {{index: label.lower() for index, label in model.config.id2label.items()}}
def d(premises, hypotheses):
    with torch.no_grad():
        batch = tokenizer(list(premises), list(hypotheses), truncation=True, max_length=512, padding=True,
                          return_tensors="pt")
        probabilities = model(**batch).logits.float().softmax(-1)
    by = {{names[i]: probabilities[:, i] for i in names}}
    return (by["entailment"] + 0.30 * by["neutral"]).numpy()
cap = 0.85 * d(rows.premise, rows.hypothesis) + 0.15 * d(rows.hypothesis, rows.premise)
comet = load_from_checkpoint(snapshot_download({COMET_REPO!r}, revision={rehearsal['commits'][COMET_REPO]!r})
                             + "/checkpoints/model.ckpt", local_files_only=True)
samples = [dict(src=q, mt=a, ref=g) for q, a, g in zip(rows.question, rows.answer, rows.gold_answer)]
out = comet.predict(samples, batch_size=8, gpus=0, progress_bar=False).scores
print(json.dumps(dict(cap=[float(x) for x in cap], comet=[min(1.0, max(0.0, float(x))) for x in out])))
"""
    result = subprocess.run([sys.executable, "-c", script], input=rows.to_json(), env=rehearsal["env"],
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr[-3000:]
    return pd.DataFrame(json.loads(result.stdout.strip().splitlines()[-1]), index=rows.index)


def test_cap_and_comet_equal_an_independent_computation(rehearsal, scored):
    """``caplib score --profile paper`` against both metrics recomputed from the raw models."""
    expected = _independent_scores(rehearsal, scored)
    np.testing.assert_allclose(scored["cap"], expected["cap"], atol=1e-5)
    np.testing.assert_allclose(scored["comet"], expected["comet"], atol=1e-5)


def test_a_changed_locked_file_stops_scoring_and_the_book(rehearsal, scored):
    """Runs last: it edits a locked file of the copy (and puts it back)."""
    target = rehearsal["repo"] / "data" / "official" / "CAP-Statements-splits.csv"
    original = target.read_bytes()
    target.write_bytes(original + b"\n")
    try:
        score = _run([sys.executable, "-m", "caplib", "score", str(rehearsal["repo"] / "rows.csv"), "-o",
                      str(rehearsal["base"] / "again.csv"), "--profile", "paper", "--metrics", "em"],
                     rehearsal["repo"], rehearsal["env"])
        book = _run([sys.executable, "scripts/run_book.py", "--profile", "paper", "--no-build", "--only", "01_taxonomy"],
                    rehearsal["repo"], rehearsal["env"])
    finally:
        target.write_bytes(original)
    for result in (score, book):
        assert result.returncode != 0 and f"{target} (locked data file) has changed" in result.stderr
    assert not (rehearsal["base"] / "again.csv").exists()
