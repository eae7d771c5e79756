"""The paper profile's first-contact path (issue 14), piece by piece: profile paths, the lock, ``caplib fetch``
without a network, the seeded CAP-Statements split, the statement-training command and the book runner's checks.
The whole path end to end is ``tests/test_paper_rehearsal.py``."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pandas as pd
import pytest
import yaml

from caplib import data, datasets
from caplib.lock import Lock, LockedData, LockedModel, LockError, read_lock, verify_lock, write_lock
from caplib.profiles import PROFILE_DIR, ProfileError, load_profile
from tests.scripts import load_script

ROOT = Path(__file__).resolve().parents[1]


def write_profile(directory: Path, **changes) -> Path:
    """The bundled paper profile with ``section__key=value`` changes, written to ``directory/mine.yaml``."""
    settings = yaml.safe_load((PROFILE_DIR / "paper.yaml").read_text())
    for dotted, value in changes.items():
        *sections, key = dotted.split("__")
        target = settings
        for section in sections:
            target = target[section]
        target[key] = value
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "mine.yaml").write_text(yaml.safe_dump(settings))
    return directory / "mine.yaml"


# ----------------------------------------------------------------------------------------------- profile paths


def test_relative_paths_are_read_against_the_profile_file_not_the_working_directory(tmp_path, monkeypatch):
    path = write_profile(tmp_path / "profiles", data="../official", statements__model="./models/statements",
                         nli__model="../nli")
    monkeypatch.chdir(tmp_path / "profiles")  # a chapter runs elsewhere (book/chapters): the result must not change
    here = load_profile(path)
    monkeypatch.chdir(ROOT)
    there = load_profile(path)
    assert here == there
    assert here.data_dir == tmp_path / "official"
    assert here.statement_model == str(tmp_path / "profiles" / "models" / "statements")
    assert here.statement_dir == tmp_path / "profiles" / "models" / "statements"
    assert here.nli_model == str(tmp_path / "nli")
    assert here.statement_base_model == "google/mt5-small"  # owner/name without ./ stays a Hub id


def test_bundled_paper_profile_points_into_the_repository():
    paper = load_profile("paper")
    assert paper.data_dir == datasets.OFFICIAL_DIR
    assert paper.statement_dir == ROOT / "models" / "statements"
    assert paper.dtype == "auto"
    assert load_profile("offline").data_dir is None


def test_a_missing_local_model_is_never_taken_for_a_hub_id(tmp_path):
    from caplib.checkpoints import CheckpointNotAvailable, resolve_checkpoint

    profile = load_profile(write_profile(tmp_path, statements__model="./models/statements"))
    with pytest.raises(CheckpointNotAvailable, match="does not exist"):
        resolve_checkpoint(profile.statement_model)


def test_data_must_be_sample_or_a_path(tmp_path):
    with pytest.raises(ProfileError, match="data must be 'sample' or a directory path"):
        load_profile(write_profile(tmp_path, data="official"))


# ----------------------------------------------------------------------------------------------- the lock


def _hub_snapshot(cache: Path, repo: str, commit: str, files: dict[str, bytes]) -> Path:
    """A snapshot in the Hugging Face cache layout (models--org--name/snapshots/<commit>/...)."""
    snapshot = cache / f"models--{repo.replace('/', '--')}" / "snapshots" / commit
    for name, content in files.items():
        (snapshot / name).parent.mkdir(parents=True, exist_ok=True)
        (snapshot / name).write_bytes(content)
    return snapshot


def test_the_lock_pins_unpinned_models_and_checks_every_file(tmp_path, monkeypatch):
    from huggingface_hub import constants

    from caplib.lock import directory_hashes

    cache = tmp_path / "hub"
    monkeypatch.setattr(constants, "HF_HUB_CACHE", str(cache))
    commit = "c" * 40
    snapshot = _hub_snapshot(cache, "cross-encoder/nli-deberta-v3-large", commit, {"config.json": b"{}"})
    # a profile that leaves the NLI revision to the lock (the bundled one pins the authors' commit)
    profile_file = write_profile(tmp_path / "profile", data="./official", nli__revision=None)
    official = tmp_path / "profile" / "official"
    official.mkdir()
    (official / "CAP-Statements.csv").write_text("id\n1\n")
    data_entry = LockedData("CAP-Statements.csv", __import__("hashlib").sha256(b"id\n1\n").hexdigest(), 5, "2026-12-01")
    lock = Lock(tmp_path / "profile" / "mine.lock.json",
                {"cross-encoder/nli-deberta-v3-large": LockedModel("cross-encoder/nli-deberta-v3-large", "nli", commit,
                                                                   directory_hashes(snapshot))},
                {"CAP-Statements.csv": data_entry})
    write_lock(lock)
    profile = load_profile(profile_file)
    assert profile.nli_revision == commit and profile.lock == read_lock(lock.path)
    assert load_profile(profile_file, locked=False).nli_revision is None
    verify_lock(profile.lock, profile.data_dir)  # everything as locked
    (official / "CAP-Statements.csv").write_text("id\n2\n")
    with pytest.raises(LockError, match="CAP-Statements.csv \\(locked data file\\) has changed"):
        verify_lock(profile.lock, profile.data_dir)
    (official / "CAP-Statements.csv").write_text("id\n1\n")
    (snapshot / "config.json").write_bytes(b'{"changed": 1}')
    with pytest.raises(LockError, match="config.json \\(locked file of cross-encoder/nli-deberta-v3-large"):
        verify_lock(profile.lock, profile.data_dir)
    # a YAML revision that contradicts the lock is an error, never silently one or the other
    settings = yaml.safe_load(profile_file.read_text())
    settings["nli"]["revision"] = "d" * 40
    profile_file.write_text(yaml.safe_dump(settings))
    with pytest.raises(ProfileError, match="locks c{40}"):
        load_profile(profile_file)


def test_a_malformed_lock_is_named(tmp_path):
    path = tmp_path / "x.lock.json"
    path.write_text(json.dumps({"format": 1, "models": {"a/b": {"commit": "x"}}, "data": {}}))
    with pytest.raises(LockError, match="not a readable caplib lock file"):
        read_lock(path)


# ----------------------------------------------------------------------------------------------- caplib fetch


def test_fetch_without_a_network_fails_fast_with_one_line_per_item_and_writes_nothing(tmp_path, monkeypatch):
    from huggingface_hub import constants

    from caplib.fetch import fetch_profile

    monkeypatch.setattr(constants, "ENDPOINT", "http://127.0.0.1:9")  # the discard port: nothing listens there
    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", False)
    monkeypatch.setenv("CAPLIB_DATA_URL", "http://127.0.0.1:9")
    profile = write_profile(tmp_path, data="./official")
    lines: list[str] = []
    started = time.perf_counter()
    result = fetch_profile(profile, progress=False, echo=lines.append)
    assert time.perf_counter() - started < 10
    assert sorted(result.failures) == sorted([*data.OFFICIAL_URLS, "cross-encoder/nli-deberta-v3-large",
                                              "google/mt5-small", "roberta-large", "Unbabel/wmt22-comet-da"])
    assert all("cannot reach http://127.0.0.1:9" in reason for reason in result.failures.values())
    assert sum(line.startswith("FAILED") for line in lines) == 7 and "nothing was locked" in lines[-1]
    assert result.lock is None and not (tmp_path / "mine.lock.json").exists()
    assert not (tmp_path / "official").exists() or not any((tmp_path / "official").iterdir())


def test_fetch_names_hf_hub_offline(tmp_path, monkeypatch):
    from huggingface_hub import constants

    from caplib.fetch import fetch_profile

    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", True)
    monkeypatch.setattr(constants, "ENDPOINT", "http://127.0.0.1:9")
    monkeypatch.setenv("CAPLIB_DATA_URL", "http://127.0.0.1:9")
    result = fetch_profile(write_profile(tmp_path, data="./official"), progress=False, echo=lambda line: None)
    assert "HF_HUB_OFFLINE=1 is set" in result.failures["roberta-large"]


def test_fetch_dry_run_lists_every_item_and_touches_nothing(tmp_path):
    from caplib.fetch import fetch_profile

    lines: list[str] = []
    result = fetch_profile(write_profile(tmp_path, data="./official"), dry_run=True, echo=lines.append)
    assert len(lines) == 9 and lines[-1].startswith("would write") and result.lock is None
    assert any("Unbabel/wmt22-comet-da" in line for line in lines) and not (tmp_path / "official").exists()
    assert fetch_profile("offline", echo=lines.append).lines[0].startswith("profile 'offline' needs nothing")


# ----------------------------------------------------------------------------------------------- splits


def test_statement_splits_follow_the_authors_recipe_sizes_strata_and_seed():
    languages = ["English"] * 8000 + ["German"] * 3000
    rows = pd.DataFrame({"id": [f"s{i:05d}" for i in range(11000)], "language": languages})
    split = datasets.statement_splits(rows)
    assert split.value_counts().to_dict() == {"train": 8800, "validation": 1100, "test": 1100}  # Tab. 1
    for language, size in (("English", 8000), ("German", 3000)):  # stratified: 20 % of each held out, then halved
        part = split[rows["language"] == language].value_counts()
        assert part["train"] == size * 0.8 and abs(part["test"] - size / 10) <= 1
    assert datasets.statement_splits(rows).equals(split)  # seeded
    assert not datasets.statement_splits(rows, seed=1).equals(split)
    unstratified = datasets.statement_splits(rows.drop(columns="language"))
    assert unstratified.value_counts().to_dict() == split.value_counts().to_dict()


def test_ensure_statement_splits_writes_once_and_loading_uses_it(tmp_path):
    sample = pd.read_csv(ROOT / "data" / "sample" / "cap_statements.csv", dtype=str, keep_default_na=False)
    assert "split" not in sample.columns
    sample.to_csv(tmp_path / "CAP-Statements.csv", index=False)
    written = datasets.ensure_statement_splits(tmp_path)
    assert written == tmp_path / "CAP-Statements-splits.csv"
    first = written.read_bytes()
    assert datasets.ensure_statement_splits(tmp_path) == written and written.read_bytes() == first
    loaded = data.load_statements(tmp_path / "CAP-Statements.csv", splits=written)
    assert loaded["split"].value_counts().to_dict() == {"train": 358, "validation": 45, "test": 45}


def test_a_named_split_of_rows_without_a_split_column_is_an_error():
    with pytest.raises(ValueError, match="no 'split' column"):
        data.select_split(pd.DataFrame({"x": [1, 2]}), "test")
    assert len(data.select_split(pd.DataFrame({"x": [1, 2]}))) == 2


# ----------------------------------------------------------------------------------------------- commands


def test_statement_training_without_a_revision_says_what_to_do(capsys, tmp_path):
    from caplib.statements.cli import main

    status = main(["train", "--data", str(ROOT / "data" / "sample" / "cap_statements.csv"), "--base",
                   "google/mt5-small", "--out", str(tmp_path / "out"), "--max-steps", "1"])
    err = capsys.readouterr().err
    assert status == 2 and "no pinned revision" in err and "Traceback" not in err and "--allow-unpinned" in err


def test_statement_training_finds_the_official_sibling_splits_file(tmp_path, capsys):
    from caplib.statements.cli import _load_split_data

    sample = pd.read_csv(ROOT / "data" / "sample" / "cap_statements.csv", dtype=str, keep_default_na=False)
    sample.to_csv(tmp_path / "CAP-Statements.csv", index=False)
    with pytest.raises(SystemExit, match="--profile paper"):
        _load_split_data(str(tmp_path / "CAP-Statements.csv"), None)
    datasets.ensure_statement_splits(tmp_path)  # CAP-Statements-splits.csv, the official naming
    assert set(_load_split_data(str(tmp_path / "CAP-Statements.csv"), None)["split"]) == {"train", "validation",
                                                                                         "test"}


def test_the_book_runner_stops_with_the_command_for_what_is_missing(tmp_path):
    run_book = load_script("run_book")
    unpinned = write_profile(tmp_path / "a", data="./official")
    with pytest.raises(SystemExit, match="caplib fetch --profile .*mine.yaml"):
        run_book.prepare_profile(run_book.argparse.Namespace(profile=str(unpinned), allow_unpinned=False, device="cpu"))
    local = write_profile(tmp_path / "b", data="./official", nli__model="./nli", statements__base_model="./mt5",
                          baselines={"bleu": {}})
    with pytest.raises(SystemExit, match="python -m caplib.statements train --profile .*2.4 h per epoch|"
                                         "2.4 h per epoch.*python -m caplib.statements train --profile"):
        run_book.prepare_profile(run_book.argparse.Namespace(profile=str(local), allow_unpinned=False, device="cpu"))


def test_bertscore_uses_layer_17_for_a_local_copy_of_roberta_large(tmp_path):
    from caplib.baselines.neural import describe_bertscore
    from tests.paper_standins import build_tiny_roberta

    directory = build_tiny_roberta(tmp_path / "roberta-large", layers=18)
    assert describe_bertscore(model=str(directory), num_layers=None, revision=None)["layer"] == "17"
    other = build_tiny_roberta(tmp_path / "my-encoder", layers=3)
    assert describe_bertscore(model=str(other), num_layers=None, revision=None)["layer"] == "3"


def test_a_data_download_resumes_from_its_part_file(tmp_path):
    from caplib.files import download as _download
    from tests.fake_hub import FakeHub

    source = ROOT / "data" / "sample" / "cap_statements.csv"
    content = source.read_bytes()
    target = tmp_path / "CAP-Statements.csv"
    # an interrupted earlier run left 1,000 bytes; marked, so the result shows whether they were kept (resumed with
    # a Range request) or fetched again
    (tmp_path / "CAP-Statements.csv.part").write_bytes(b"x" * 1000)
    with FakeHub() as hub:
        url = hub.add_file("/data/CAP-Statements.csv", source)
        _download(url, target, progress=False)
        _download(url, tmp_path / "fresh.csv", progress=False)
    assert target.read_bytes() == b"x" * 1000 + content[1000:]
    assert (tmp_path / "fresh.csv").read_bytes() == content
    assert not list(tmp_path.glob("*.part"))


def test_fetch_refuses_a_corrupt_blob_in_the_cache(tmp_path):
    """snapshot_download keeps a cached blob without checking it; caplib fetch checks an LFS blob against its name
    (its SHA-256) before locking it. In a subprocess: huggingface_hub reads HF_ENDPOINT when it is imported."""
    import os
    import subprocess
    import sys

    from tests.fake_hub import FakeHub

    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "config.json").write_text("{}")
    (repo / "model.safetensors").write_bytes(bytes(range(256)) * 64)
    script = """
import sys
from pathlib import Path
from caplib.fetch import Item, _fetch_model
item = Item("nli", "org/tiny", "org/tiny")
print(sorted(_fetch_model(item, None, metadata_only=False).files))
blob = next(Path(sys.argv[1]).rglob("snapshots/*/model.safetensors")).resolve()
blob.write_bytes(blob.read_bytes()[:100])  # a truncated copy left in the cache
try:
    _fetch_model(item, None, metadata_only=False)
except ValueError as error:
    print("refused:", error)
"""
    with FakeHub() as hub:
        hub.add_repo("org/tiny", repo)
        env = {key: value for key, value in os.environ.items() if key not in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE")}
        env |= {"HF_ENDPOINT": hub.url, "HF_HOME": str(tmp_path / "hf"), "HF_HUB_DISABLE_TELEMETRY": "1"}
        result = subprocess.run([sys.executable, "-c", script, str(tmp_path / "hf")], env=env, capture_output=True,
                                text=True, timeout=120)
    assert result.returncode == 0, result.stderr[-2000:]
    assert "['config.json', 'model.safetensors']" in result.stdout
    assert "refused:" in result.stdout and "model.safetensors in the Hugging Face cache is corrupt" in result.stdout


def test_fetch_update_reads_the_yaml_even_when_it_contradicts_the_lock(tmp_path):
    from caplib.fetch import fetch_profile

    profile = write_profile(tmp_path, data="./official")
    write_lock(Lock(tmp_path / "mine.lock.json", {"roberta-large": LockedModel("roberta-large", "bertscore", "a" * 40,
                                                                               {})}))
    settings = yaml.safe_load(profile.read_text())
    settings["baselines"]["bertscore"]["revision"] = "b" * 40
    profile.write_text(yaml.safe_dump(settings))
    with pytest.raises(ProfileError, match="locks a{40}"):
        fetch_profile(profile, dry_run=True, echo=lambda line: None)
    lines: list[str] = []
    fetch_profile(profile, update=True, dry_run=True, echo=lines.append)
    assert any("roberta-large" in line and "b" * 40 in line for line in lines)


# ----------------------------------------------------------------------------------------------- the release, mirrored


def _released_profile(directory: Path) -> Path:
    """The bundled released profile with its data in ``directory/official``."""
    settings = yaml.safe_load((PROFILE_DIR / "released.yaml").read_text())
    settings |= {"data": "./official", "scores": "./official/scores.json"}
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "released.yaml").write_text(yaml.safe_dump(settings))
    return directory / "released.yaml"


def _mirror(directory: Path) -> Path:
    """A local copy with the release's upstream layout, made of the bundled sample (official schema)."""
    sample = ROOT / "data" / "sample"
    for name, source in (("CAP-Correctness.csv", sample / "cap_correctness.csv"),
                         ("CAP-Correctness-splits.csv", sample / "cap_correctness_splits.csv"),
                         ("CAP-Statements.csv", sample / "cap_statements.csv")):
        target = directory / "data" / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(source.read_bytes())
    (directory / "docs" / "data").mkdir(parents=True)
    (directory / "docs" / "data" / "scores.json").write_text(json.dumps({"row_id": [0], "label": ["exact"],
                                                                         "metrics": ["cap"], "cap": [0.9]}))
    (directory / "docs" / "data" / "results.json").write_text("{}")
    return directory


def test_fetch_from_a_mirror_copies_checks_and_locks_without_the_network(tmp_path, monkeypatch):
    from caplib.fetch import fetch_profile
    from caplib.release import SCORE_FILES

    monkeypatch.setenv("CAPLIB_DATA_URL", "http://127.0.0.1:9")  # were anything downloaded, it would fail
    profile, mirror = _released_profile(tmp_path / "profile"), _mirror(tmp_path / "mirror")
    lines: list[str] = []
    result = fetch_profile(profile, mirror=mirror, progress=False, echo=lines.append)
    assert not result.failures and sum(line.startswith("copied") for line in lines) == 5
    official = tmp_path / "profile" / "official"
    for name in [*data.OFFICIAL_URLS, *SCORE_FILES]:
        source = mirror / ("docs/data" if name in SCORE_FILES else "data") / name
        assert (official / name).read_bytes() == source.read_bytes()
        assert result.lock.data[name].sha256 == sha256_hex(source)
    assert "CAP-Statements-splits.csv" in result.lock.data  # drawn as the authors draw theirs, and locked
    # a changed file of the mirror is refused against the lock, naming it; nothing is replaced
    (official / "scores.json").unlink()
    (mirror / "docs" / "data" / "scores.json").write_text("{}")
    again = fetch_profile(profile, mirror=mirror, progress=False, echo=lines.append)
    assert "not the locked" in again.failures["scores.json"] and again.lock is None
    # the mirror from the environment; a file missing there is named with its upstream path
    (mirror / "docs" / "data" / "results.json").unlink()
    (official / "results.json").unlink()
    monkeypatch.setenv("CAPLIB_MIRROR", str(mirror))
    missing = fetch_profile(profile, progress=False, echo=lines.append)
    assert "not in the mirror" in missing.failures["results.json"]
    assert "docs/data/results.json" in missing.failures["results.json"]


def sha256_hex(path: Path) -> str:
    import hashlib

    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_a_released_profile_fetches_the_five_files_and_no_model(tmp_path):
    from caplib.fetch import plan
    from caplib.release import release_file

    items = plan(load_profile(_released_profile(tmp_path)))
    assert [item.name for item in items] == ["CAP-Correctness.csv", "CAP-Correctness-splits.csv",
                                             "CAP-Statements.csv", "scores.json", "results.json"]
    assert all(item.role == "data" for item in items)
    assert items[3].source == ("https://raw.githubusercontent.com/ElitsaY/Correctness_eval/"
                               "fef4a58cf08465cb829142a3f1548f800d4cdf04/docs/data/scores.json")
    assert release_file("CAP-Correctness.csv").commit == "4491248acba112183356df05c1f74fc0d7ece826"
    assert [item.name for item in plan(load_profile("paper"))][:3] == list(data.OFFICIAL_URLS)
