"""caplib.checkpoints: resolving names to files without the network, content fingerprints, device and dtype."""

from __future__ import annotations

import hashlib
import os
import time

import pytest

from caplib.checkpoints import (
    BUILTIN_OFFLINE_NLI,
    CheckpointNotAvailable,
    fetch_command,
    offline_nli_dir,
    pick_device,
    resolve_checkpoint,
    resolve_dtype,
    sha256_of,
)


def _model_dir(path, weights=b"weights"):
    path.mkdir(parents=True)
    (path / "config.json").write_text("{}")
    (path / "model.safetensors").write_bytes(weights)
    return path


def test_sha256_of_one_file_is_sha256sum(tmp_path):
    file = tmp_path / "a.bin"
    file.write_bytes(b"caplib" * 1000)
    assert sha256_of([file]) == hashlib.sha256(b"caplib" * 1000).hexdigest()


def test_sha256_of_files_under_a_root_includes_their_names(tmp_path):
    (tmp_path / "a").write_bytes(b"x")
    (tmp_path / "b").write_bytes(b"y")
    expected = hashlib.sha256(b"a\x00x" + b"b\x00y").hexdigest()
    assert sha256_of([tmp_path / "a", tmp_path / "b"], tmp_path) == expected
    (tmp_path / "b").rename(tmp_path / "c")
    assert sha256_of([tmp_path / "a", tmp_path / "c"], tmp_path) != expected  # a rename is a change


def test_a_changed_file_changes_the_fingerprint(tmp_path):
    model = _model_dir(tmp_path / "m")
    before = resolve_checkpoint(model).fingerprint
    time.sleep(0.01)
    (model / "model.safetensors").write_bytes(b"retrained")
    os.utime(model / "model.safetensors", ns=(time.time_ns(), time.time_ns() + 10**9))
    assert resolve_checkpoint(model).fingerprint != before


def test_a_copied_model_keeps_its_identity(tmp_path):
    first = resolve_checkpoint(_model_dir(tmp_path / "one"))
    second = resolve_checkpoint(_model_dir(tmp_path / "two"))
    assert first.fingerprint == second.fingerprint and first.commit is None and first.revision is None
    assert first.identity.endswith(f"#sha256:{first.fingerprint[:12]}")
    assert first.revision_label == f"sha256:{first.fingerprint[:12]}"


def test_a_hub_id_missing_from_the_cache_is_not_downloaded(tmp_path, monkeypatch):
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "empty-cache"))
    started = time.monotonic()
    with pytest.raises(CheckpointNotAvailable) as raised:
        resolve_checkpoint("caplib-tests/no-such-model", revision="0123abc")
    assert time.monotonic() - started < 10
    assert fetch_command("caplib-tests/no-such-model", "0123abc") in str(raised.value)


def test_hub_ids_need_a_revision_unless_unpinned_is_allowed():
    with pytest.raises(ValueError, match="no pinned revision"):
        resolve_checkpoint("caplib-tests/no-such-model")
    with pytest.raises(CheckpointNotAvailable, match="revision main"):
        resolve_checkpoint("caplib-tests/no-such-model", allow_unpinned=True)


def test_local_paths_are_checked(tmp_path):
    with pytest.raises(CheckpointNotAvailable, match="does not exist"):
        resolve_checkpoint(str(tmp_path / "absent"))
    (tmp_path / "no-weights").mkdir()
    (tmp_path / "no-weights" / "config.json").write_text("{}")
    with pytest.raises(CheckpointNotAvailable, match="no model weights"):
        resolve_checkpoint(tmp_path / "no-weights")
    assert resolve_checkpoint(tmp_path / "no-weights", transformers_layout=False).path == tmp_path / "no-weights"


def test_a_model_directory_hash_covers_model_files_but_not_build_records(tmp_path):
    model = tmp_path / "model"
    model.mkdir()
    (model / "config.json").write_text("{}")
    (model / "model.safetensors").write_bytes(b"weights")
    first = resolve_checkpoint(model).fingerprint
    (model / "manifest.json").write_text('{"wall_time_s": 500}')  # a rebuild of the same weights, other wall times
    (model / "heldout_pairs.jsonl").write_text("{}\n")
    assert resolve_checkpoint(model).fingerprint == first
    (model / "model.safetensors").write_bytes(b"other weights")
    assert resolve_checkpoint(model).fingerprint != first
    expected = hashlib.sha256(b"config.json\x00{}" + b"model.safetensors\x00other weights")
    assert resolve_checkpoint(model).fingerprint == expected.hexdigest()


def test_a_comet_checkpoint_file_is_hashed_with_its_hparams(tmp_path):
    (tmp_path / "comet" / "checkpoints").mkdir(parents=True)
    (tmp_path / "comet" / "hparams.yaml").write_text("encoder_model: XLM-RoBERTa\n")
    ckpt = tmp_path / "comet" / "checkpoints" / "model.ckpt"
    ckpt.write_bytes(b"state")
    expected = hashlib.sha256(b"checkpoints/model.ckpt\x00state" + b"hparams.yaml\x00encoder_model: XLM-RoBERTa\n")
    assert resolve_checkpoint(ckpt, transformers_layout=False).fingerprint == expected.hexdigest()


def test_the_builtin_backbone_lives_where_the_environment_says(tmp_path, monkeypatch):
    monkeypatch.setenv("CAPLIB_OFFLINE_NLI_DIR", str(tmp_path / "backbone"))
    assert offline_nli_dir() == tmp_path / "backbone"
    with pytest.raises(CheckpointNotAvailable, match=r"no offline NLI backbone in .*python -m caplib.offline_nli build --output"):
        resolve_checkpoint(BUILTIN_OFFLINE_NLI)
    _model_dir(tmp_path / "backbone")
    assert resolve_checkpoint(BUILTIN_OFFLINE_NLI).identity.startswith(f"{BUILTIN_OFFLINE_NLI}#sha256:")
    with pytest.raises(ValueError, match="unknown builtin model"):
        resolve_checkpoint("builtin:nothing")


def test_a_moved_cache_directory_leaves_the_shipped_backbone_where_it_is(tmp_path, monkeypatch):
    """Issue 34 had $CAPLIB_CACHE_DIR silently move the trained backbone; since issue 32 the weights ship with caplib
    and a cache directory of its own changes nothing about them."""
    from caplib.checkpoints import SHIPPED_OFFLINE_NLI_DIR

    monkeypatch.delenv("CAPLIB_OFFLINE_NLI_DIR", raising=False)
    monkeypatch.setenv("CAPLIB_CACHE_DIR", str(tmp_path / "elsewhere"))
    assert offline_nli_dir() == SHIPPED_OFFLINE_NLI_DIR
    assert resolve_checkpoint(BUILTIN_OFFLINE_NLI).path == SHIPPED_OFFLINE_NLI_DIR.resolve()


def test_device_and_dtype():
    import torch

    assert pick_device("cpu") == "cpu"
    with pytest.raises(ValueError, match="not a device name"):
        pick_device("gpu0")
    with pytest.raises(ValueError, match="cpu, cuda or mps"):
        pick_device("meta")
    if torch.cuda.device_count() >= 2:
        assert pick_device("cuda:1") == "cuda:1"
    else:
        with pytest.raises(ValueError, match="CUDA device"):
            pick_device("cuda:1")
    assert resolve_dtype("auto", "cpu") == "float32" and resolve_dtype("auto", "cuda") == "float16"
    assert resolve_dtype("fp32", "cuda") == "float32" and resolve_dtype("bf16", "cpu") == "bfloat16"
    with pytest.raises(ValueError, match="needs a CUDA device"):
        resolve_dtype("float16", "cpu")
    with pytest.raises(ValueError, match="dtype must be"):
        resolve_dtype("int8", "cpu")
