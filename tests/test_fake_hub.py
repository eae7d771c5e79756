"""Dress rehearsal of the paper profile's checkpoints: fetch from a loopback fake Hub, then load offline.

Tiny stand-ins (:mod:`tests.paper_standins`) are served under the paper's exact Hub ids by
:class:`tests.fake_hub.FakeHub`; the real ``huggingface_hub`` downloads them into a real Hugging Face cache through
:func:`caplib.checkpoints.fetch`, and caplib then resolves and loads them with the Hub out of reach
(``HF_HUB_OFFLINE=1``) and also with it reachable, asking it for nothing either way. ``huggingface_hub`` reads
``HF_ENDPOINT`` and ``HF_HOME`` when imported, hence the subprocesses.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.fake_hub import FakeHub, Request
from tests.paper_standins import (
    COMET_ENCODER_REPO,
    COMET_REPO,
    MT5_REPO,
    NLI_REPO,
    PAPER_REPOS,
    ROBERTA_REPO,
    build_paper_standins,
)

REPO_ROOT = Path(__file__).resolve().parents[1]
MODEL_REPOS = (NLI_REPO, MT5_REPO, ROBERTA_REPO, COMET_REPO)  # fetched whole; COMET_ENCODER_REPO: metadata only
_PROXY_VARIABLES = {"http_proxy", "https_proxy", "all_proxy", "no_proxy"}
_open = urllib.request.build_opener(urllib.request.ProxyHandler({})).open  # loopback: never through a proxy

QUESTIONS = ["What is the capital of France?", "Which planet is known as the red planet?"]
GOLDS = ["The capital of France is Paris.", "Mars is known as the red planet."]
PREDICTIONS = ["Paris is the capital city of France.", "Rome is the capital of Italy."]


# ---------------------------------------------------------------------------------------------------------------
# Subprocess helpers
# ---------------------------------------------------------------------------------------------------------------

def _env(hub: FakeHub, hf_home: Path, *, hub_offline: bool) -> dict[str, str]:
    """The environment of a child process: this one's without any HF/transformers/proxy settings, plus the fake
    Hub as endpoint, its own HF_HOME and caplib cache, and HF_HUB_OFFLINE only when ``hub_offline``."""
    env = {name: value for name, value in os.environ.items()
           if not name.startswith(("HF_", "HUGGINGFACE_", "TRANSFORMERS_")) and name.lower() not in _PROXY_VARIABLES}
    env.update({
        "HF_ENDPOINT": hub.url, "HF_HOME": str(hf_home), "HF_HUB_DISABLE_TELEMETRY": "1",
        "HF_HUB_DISABLE_PROGRESS_BARS": "1", "NO_PROXY": "127.0.0.1,localhost", "no_proxy": "127.0.0.1,localhost",
        "CAPLIB_CACHE_DIR": str(hf_home.parent / "caplib-cache"), "TOKENIZERS_PARALLELISM": "false",
        "OMP_NUM_THREADS": "1", "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO_ROOT), env.get("PYTHONPATH")])),
    })
    if hub_offline:
        env.update({"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"})
    return env


def _run(script: str, env: dict[str, str], *args: str) -> Any:
    """Run ``script`` with ``args`` in a fresh interpreter; returns the JSON it printed after ``RESULT ``."""
    done = subprocess.run([sys.executable, "-c", script, *args], env=env, cwd=REPO_ROOT, capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, f"child failed ({done.returncode}):\n{done.stdout[-3000:]}\n{done.stderr[-6000:]}"
    lines = [line for line in done.stdout.splitlines() if line.startswith("RESULT ")]
    assert lines, f"child printed no result:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    return json.loads(lines[-1][len("RESULT "):])


FETCH = """
import json, sys
from caplib.checkpoints import fetch
repos = json.loads(sys.argv[1])
snapshots = {repo: str(fetch(repo, None)) for repo in repos}
snapshots["xlm-roberta-large"] = str(fetch("xlm-roberta-large", metadata_only=True))
print("RESULT " + json.dumps(snapshots))
"""

LOAD_OFFLINE = """
import json, math, sys
import torch
torch.set_num_threads(1)
from caplib.baselines import score, signature
from caplib.checkpoints import resolve_checkpoint
from caplib.nli import NLIScorer
from caplib.runtime import Runtime
from caplib.statements.seq2seq import Seq2SeqStatementGenerator

commits, questions, golds, predictions = (json.loads(arg) for arg in sys.argv[1:5])
runtime = Runtime(device="cpu", cache=False, progress=False)
out = {"resolved": {}}
for repo, commit in commits.items():
    full = repo not in ("Unbabel/wmt22-comet-da", "xlm-roberta-large")  # COMET snapshot / tokenizer+config only
    checkpoint = resolve_checkpoint(repo, commit, transformers_layout=full)
    out["resolved"][repo] = [str(checkpoint.path), checkpoint.commit, checkpoint.identity]

nli = NLIScorer("cross-encoder/nli-deberta-v3-large", commits["cross-encoder/nli-deberta-v3-large"], runtime=runtime)
out["nli"] = nli.predict(golds, predictions).tolist()
out["nli_signature"] = str(nli.signature())

generator = Seq2SeqStatementGenerator("google/mt5-small", commits["google/mt5-small"], num_beams=2, max_length=12,
                                      runtime=runtime)
out["statements"] = generator.generate(questions, [p.split()[0] for p in predictions])

options = {"device": "cpu", "progress": False}
bertscore = {"model": "roberta-large", "revision": commits["roberta-large"]}
out["bertscore"] = score("bertscore", golds, predictions, questions, **bertscore, **options).tolist()
out["bertscore_signature"] = str(signature("bertscore", **bertscore))
comet = {"model": "Unbabel/wmt22-comet-da", "revision": commits["Unbabel/wmt22-comet-da"]}
out["comet"] = score("comet", golds, predictions, questions, **comet, **options).tolist()
out["comet_signature"] = str(signature("comet", **comet))
print("RESULT " + json.dumps(out))
"""

ERRORS = """
import json, sys
from huggingface_hub import HfApi, hf_hub_download, snapshot_download
from caplib.checkpoints import fetch

def outcome(call):
    try:
        call()
    except Exception as error:
        return [type(error).__name__, [cls.__name__ for cls in type(error).__mro__]]
    return ["ok", []]

commit = sys.argv[1]
print("RESULT " + json.dumps({
    "repo/snapshot": outcome(lambda: snapshot_download("caplib-tests/no-such-model")),
    "repo/list": outcome(lambda: HfApi().list_repo_files("no-such-model")),
    "repo/fetch": outcome(lambda: fetch("caplib-tests/no-such-model")),
    "revision/snapshot": outcome(lambda: snapshot_download("roberta-large", revision="v0.0")),
    "revision/list": outcome(lambda: HfApi().list_repo_files("google/mt5-small", revision="0" * 40)),
    "revision/fetch": outcome(lambda: fetch("Unbabel/wmt22-comet-da", "0" * 40)),
    "file/download": outcome(lambda: hf_hub_download("roberta-large", "no-such-file.json", revision=commit)),
}))
"""

RESUME = """
import sys
from huggingface_hub import hf_hub_download
print("RESULT \\"" + hf_hub_download("roberta-large", "model.safetensors", revision=sys.argv[1]) + "\\"")
"""


# ---------------------------------------------------------------------------------------------------------------
# Fixtures
# ---------------------------------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def standins(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    torch = pytest.importorskip("torch")
    pytest.importorskip("comet")
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        return build_paper_standins(tmp_path_factory.mktemp("standins"))
    finally:
        torch.set_num_threads(threads)


@pytest.fixture(scope="module")
def hub(standins: dict[str, Path]) -> Iterator[tuple[FakeHub, dict[str, str]]]:
    with FakeHub() as server:
        commits = {repo_id: server.add_repo(repo_id, directory) for repo_id, directory in standins.items()}
        yield server, commits


@pytest.fixture(scope="module")
def fetched(hub: tuple[FakeHub, dict[str, str]], tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """``caplib.checkpoints.fetch`` of every paper repository, in a child process, from the fake Hub."""
    server, _ = hub
    hf_home = tmp_path_factory.mktemp("rehearsal") / "hf"
    start = len(server.requests)
    snapshots = _run(FETCH, _env(server, hf_home, hub_offline=False), json.dumps(list(MODEL_REPOS)))
    return {"hf_home": hf_home, "snapshots": snapshots, "requests": server.requests[start:]}


# ---------------------------------------------------------------------------------------------------------------
# Tests
# ---------------------------------------------------------------------------------------------------------------

def test_standins_have_the_layout_of_the_paper_repositories(standins: dict[str, Path]) -> None:
    import yaml

    assert tuple(standins) == PAPER_REPOS
    for repo in (NLI_REPO, MT5_REPO, ROBERTA_REPO, COMET_ENCODER_REPO):
        assert (standins[repo] / "config.json").is_file() and (standins[repo] / "model.safetensors").is_file()
    assert {"vocab.json", "merges.txt"} <= {p.name for p in standins[ROBERTA_REPO].iterdir()}
    assert json.loads((standins[ROBERTA_REPO] / "config.json").read_text())["num_hidden_layers"] >= 17
    assert json.loads((standins[NLI_REPO] / "config.json").read_text())["id2label"] == {
        "0": "contradiction", "1": "entailment", "2": "neutral"}
    assert sorted(p.relative_to(standins[COMET_REPO]).as_posix() for p in standins[COMET_REPO].rglob("*")
                  if p.is_file()) == ["checkpoints/model.ckpt", "hparams.yaml"]
    hparams = yaml.safe_load((standins[COMET_REPO] / "hparams.yaml").read_text())
    assert hparams["pretrained_model"] == "xlm-roberta-large"


def test_commits_are_deterministic(standins: dict[str, Path], hub: tuple[FakeHub, dict[str, str]]) -> None:
    _, commits = hub
    again = FakeHub()
    assert {repo: again.add_repo(repo, directory) for repo, directory in standins.items()} == commits
    assert len(set(commits.values())) == len(commits)
    assert all(len(commit) == 40 and int(commit, 16) >= 0 for commit in commits.values())


def test_fetch_downloads_every_paper_checkpoint_into_the_hf_cache(
    fetched: dict[str, Any], hub: tuple[FakeHub, dict[str, str]], standins: dict[str, Path]
) -> None:
    _, commits = hub
    hub_cache = fetched["hf_home"] / "hub"
    for repo in PAPER_REPOS:
        snapshot = Path(fetched["snapshots"][repo])
        storage = hub_cache / ("models--" + repo.replace("/", "--"))
        assert snapshot == storage / "snapshots" / commits[repo]  # named by the commit add_repo returned
        assert (storage / "refs" / "main").read_text() == commits[repo]
        served = {p.relative_to(standins[repo]).as_posix() for p in standins[repo].rglob("*") if p.is_file()}
        got = {p.relative_to(snapshot).as_posix() for p in snapshot.rglob("*") if p.is_file()}
        if repo == COMET_ENCODER_REPO:  # metadata only: config and tokenizer, no weights
            assert got == {name for name in served if not name.endswith(".safetensors")}
        else:
            assert got == served
        for name in got:
            assert (snapshot / name).read_bytes() == (standins[repo] / name).read_bytes(), (repo, name)
    requests = fetched["requests"]
    weights = f"/{COMET_ENCODER_REPO}/resolve/{commits[COMET_ENCODER_REPO]}/model.safetensors"
    assert Request("HEAD", weights) not in requests and Request("GET", weights) not in requests
    assert Request("GET", f"/api/models/{NLI_REPO}/tree/main") in requests  # list_repo_files
    assert any(r.method == "GET" and r.path.startswith("/lfs-blobs/") for r in requests)  # LFS redirects followed


@pytest.mark.parametrize("hub_offline", [True, False], ids=["HF_HUB_OFFLINE=1", "hub-reachable"])
def test_paper_checkpoints_resolve_and_load_without_the_hub(
    fetched: dict[str, Any], hub: tuple[FakeHub, dict[str, str]], hub_offline: bool
) -> None:
    """Offline: everything resolves to the fetched snapshots and scores; the server is asked nothing, also when
    it is reachable (caplib never downloads while scoring)."""
    import math

    server, commits = hub
    start = len(server.requests)
    out = _run(LOAD_OFFLINE, _env(server, fetched["hf_home"], hub_offline=hub_offline), json.dumps(commits),
               json.dumps(QUESTIONS), json.dumps(GOLDS), json.dumps(PREDICTIONS))
    assert server.requests[start:] == []
    for repo, (path, commit, identity) in out["resolved"].items():
        assert path == fetched["snapshots"][repo] and commit == commits[repo]
        assert identity == f"{repo}@{commits[repo]}"
    assert len(out["nli"]) == len(GOLDS)
    for row in out["nli"]:
        assert len(row) == 3 and all(math.isfinite(p) and 0 <= p <= 1 for p in row)
        assert abs(sum(row) - 1) < 1e-5
    assert f"{NLI_REPO}@{commits[NLI_REPO]}" in out["nli_signature"]
    assert len(out["statements"]) == len(QUESTIONS) and all(isinstance(s, str) for s in out["statements"])
    for metric in ("bertscore", "comet"):
        assert len(out[metric]) == len(GOLDS) and all(math.isfinite(v) and 0 <= v <= 1 for v in out[metric])
    assert f"rev:{commits[ROBERTA_REPO]}" in out["bertscore_signature"]
    assert "layer:17" in out["bertscore_signature"]
    assert f"rev:{commits[COMET_REPO]}" in out["comet_signature"]


def test_unknown_repositories_revisions_and_files_raise_the_hub_errors(
    hub: tuple[FakeHub, dict[str, str]], tmp_path: Path
) -> None:
    server, commits = hub
    out = _run(ERRORS, _env(server, tmp_path / "hf", hub_offline=False), commits[ROBERTA_REPO])
    for case, (name, bases) in out.items():
        expected = {"repo": "RepositoryNotFoundError", "revision": "RevisionNotFoundError",
                    "file": "EntryNotFoundError"}[case.split("/")[0]]
        assert expected in bases, (case, name)


def test_an_interrupted_download_is_resumed_with_a_range_request(
    hub: tuple[FakeHub, dict[str, str]], standins: dict[str, Path], tmp_path: Path
) -> None:
    """huggingface_hub keeps what it has (``blobs/<etag>.incomplete``) and asks for the rest with ``Range``: the
    first bytes of the result are those of the partial file (here deliberately different), the rest the server's."""
    import hashlib

    server, commits = hub
    data = (standins[ROBERTA_REPO] / "model.safetensors").read_bytes()
    blobs = tmp_path / "hf" / "hub" / "models--roberta-large" / "blobs"
    blobs.mkdir(parents=True)
    kept = b"\x00" * 1000
    (blobs / (hashlib.sha256(data).hexdigest() + ".incomplete")).write_bytes(kept)
    path = _run(RESUME, _env(server, tmp_path / "hf", hub_offline=False), commits[ROBERTA_REPO])
    assert Path(path).read_bytes() == kept + data[len(kept):]


def test_plain_files_ranges_and_errors_over_http(tmp_path: Path) -> None:
    """add_file serves raw files (the raw.githubusercontent.com stand-in), with HEAD, Range and 404s."""
    csv = tmp_path / "CAP-Correctness.csv"
    csv.write_bytes(b"question,answer\n" + b"q,a\n" * 100)
    data = csv.read_bytes()
    with FakeHub() as server:
        url = server.add_file("/data/CAP-Correctness.csv", csv)
        assert url == server.url + "/data/CAP-Correctness.csv"
        with _open(url) as response:
            assert response.status == 200 and response.read() == data
        ranged = urllib.request.Request(url, headers={"Range": "bytes=10-19"})
        with _open(ranged) as response:
            assert response.status == 206 and response.read() == data[10:20]
            assert response.headers["Content-Range"] == f"bytes 10-19/{len(data)}"
        with _open(urllib.request.Request(url, headers={"Range": "bytes=-4"})) as response:
            assert response.read() == data[-4:]
        with _open(urllib.request.Request(url, method="HEAD")) as response:
            assert response.headers["Content-Length"] == str(len(data)) and response.read() == b""
        with pytest.raises(urllib.error.HTTPError) as unsatisfiable:
            _open(urllib.request.Request(url, headers={"Range": f"bytes={len(data)}-"}))
        assert unsatisfiable.value.code == 416
        with pytest.raises(urllib.error.HTTPError) as missing:
            _open(server.url + "/data/absent.csv")
        assert missing.value.code == 404
        assert list(server.requests) == [Request("GET", "/data/CAP-Correctness.csv")] * 3 + [
            Request("HEAD", "/data/CAP-Correctness.csv"), Request("GET", "/data/CAP-Correctness.csv"),
            Request("GET", "/data/absent.csv")]
