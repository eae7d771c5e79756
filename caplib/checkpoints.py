"""Model checkpoints: the one place that turns a model name into files on this machine (App. C.2).

Every model caplib loads (the NLI cross-encoder, the seq2seq statement generator, BERTScore's and COMET's
encoders, the offline NLI backbone) is *resolved* here first and loaded later by its user. A name is

* a local directory written by ``save_pretrained`` (or, for COMET, a ``.ckpt`` file);
* a Hugging Face Hub id with a revision (a commit hash or an explicit branch name);
* a ``builtin:`` name: ``builtin:offline-nli``, the offline profile's backbone trained by :mod:`caplib.offline_nli`,
  whose weights ship in :func:`offline_nli_dir`.

**Offline policy (one for every model).** Resolving never downloads: a Hub id is looked up in the local
Hugging Face cache only, so nothing waits on the network, and a checkpoint that is not there raises
:class:`CheckpointNotAvailable` saying how to fetch it. Downloading is a separate, explicit step:
:func:`fetch` (``python -m caplib.checkpoints fetch MODEL --revision REV``), the only function here that
uses the network (COMET's model loading is split the same way).

What identifies a checkpoint's content (:attr:`Checkpoint.fingerprint`) is the Hub commit for Hub files
and the SHA-256 of the files for local ones (:func:`sha256_of`, the one hasher of caplib): a moved or
copied model keeps its identity, a retrained one does not. :func:`pick_device` and :func:`resolve_dtype`
place a model.

Example:
    >>> import tempfile
    >>> from pathlib import Path
    >>> folder = Path(tempfile.mkdtemp())
    >>> _ = (folder / "config.json").write_text("{}")
    >>> _ = (folder / "model.safetensors").write_bytes(b"weights")
    >>> checkpoint = resolve_checkpoint(folder)
    >>> checkpoint.commit is None, len(checkpoint.fingerprint)
    (True, 64)
"""

from __future__ import annotations

import argparse
import functools
import hashlib
import json
import os
import sys
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any


__all__ = [
    "BUILTIN_OFFLINE_NLI",
    "BackboneMismatch",
    "OFFLINE_NLI_ENV",
    "OFFLINE_NLI_VERSION",
    "SHIPPED_OFFLINE_NLI_DIR",
    "Checkpoint",
    "CheckpointNotAvailable",
    "fetch",
    "fetch_command",
    "has_weights",
    "offline_nli_dir",
    "verify_offline_nli",
    "pick_device",
    "resolve_checkpoint",
    "resolve_dtype",
    "sha256_of",
]

#: The offline profile's NLI backbone, trained locally by ``caplib.offline_nli``.
BUILTIN_OFFLINE_NLI = "builtin:offline-nli"
#: Version of the offline backbone's recipe; bumped whenever the recipe changes what is trained, so a new recipe
#: gets a new directory (``caplib.offline_nli.RECIPE_VERSION`` is this value).
OFFLINE_NLI_VERSION = "4"
#: Environment variable that overrides :func:`offline_nli_dir`.
OFFLINE_NLI_ENV = "CAPLIB_OFFLINE_NLI_DIR"
#: The backbone's weights as shipped with caplib (half precision, SHA-256 in their manifest; issue 32).
SHIPPED_OFFLINE_NLI_DIR = Path(__file__).resolve().parent / "offline_nli" / "backbone"

# Files a transformers checkpoint needs besides its weights (config, tokenizer), and the weight formats in the
# order they are preferred: a repository holding both safetensors and .bin weights is fetched once, not twice.
_META_PATTERNS = ("*.json", "*.model", "*.txt", "*.yaml")
_WEIGHT_PATTERNS = (("model*.safetensors",), ("pytorch_model*.bin",))
_DTYPES = {"float32": "float32", "fp32": "float32", "float16": "float16", "fp16": "float16",
           "bfloat16": "bfloat16", "bf16": "bfloat16"}


class CheckpointNotAvailable(RuntimeError):
    """The model files are not on this machine (resolving never downloads: :func:`fetch` does, explicitly)."""


class BackboneMismatch(CheckpointNotAvailable):
    """The offline backbone's ``model.safetensors`` is not the file its manifest records (SHA-256)."""


@dataclass(frozen=True)
class Checkpoint:
    """Where a model's files are, and what identifies their content.

    Attributes:
        model: the model as given (Hub id, local directory or ``builtin:`` name).
        path: local directory holding ``config.json``, tokenizer and weights (a ``.ckpt`` file for COMET).
        revision: the requested Hub revision (None for local files).
        commit: the Hub commit the files come from (None for local files).
        fingerprint: ``commit`` for Hub files, else the SHA-256 of the local files (64 hex).
    """

    model: str
    path: Path
    revision: str | None
    commit: str | None
    fingerprint: str

    @property
    def identity(self) -> str:
        """``model@commit`` for Hub files, ``model#sha256:<12 hex>`` for local ones."""
        if self.commit is not None:
            return f"{self.model}@{self.commit}"
        return f"{self.model}#sha256:{self.fingerprint[:12]}"

    @property
    def revision_label(self) -> str:
        """What a signature shows as the revision: the Hub commit, else ``sha256:<12 hex>`` of the files."""
        return self.commit if self.commit is not None else f"sha256:{self.fingerprint[:12]}"


# ---------------------------------------------------------------------------------------------------------------
# Content hashes
# ---------------------------------------------------------------------------------------------------------------

def sha256_of(files: Iterable[Path | str], root: Path | str | None = None) -> str:
    """SHA-256 (64 hex) over the bytes of ``files`` in the given order.

    With ``root``, each file's path relative to ``root`` and a NUL byte precede its bytes, so a renamed file
    changes the hash; without it, one file's hash is ``sha256sum``'s. Results are memoised by (path, size,
    modification time), so a large model is read once per process.

    Example:
        >>> import tempfile
        >>> path = Path(tempfile.mkdtemp()) / "a.txt"
        >>> _ = path.write_bytes(b"abc")
        >>> sha256_of([path])[:16]  # sha256sum of "abc"
        'ba7816bf8f01cfea'
    """
    base = None if root is None else Path(root)
    stamp = []
    for file in map(Path, files):
        status = file.stat()
        stamp.append((str(file), None if base is None else os.path.relpath(file, base), status.st_size,
                      status.st_mtime_ns))
    return _sha256(tuple(stamp))


@functools.lru_cache(maxsize=None)
def _sha256(stamp: tuple[tuple[str, str | None, int, int], ...]) -> str:
    digest = hashlib.sha256()
    for path, name, _, _ in stamp:
        if name is not None:
            digest.update(name.encode("utf-8") + b"\x00")
        with open(path, "rb") as handle:
            for block in iter(lambda: handle.read(1 << 20), b""):
                digest.update(block)
    return digest.hexdigest()


#: Files of a model directory that record how it was built, not what it computes (the offline backbone's
#: manifest, with wall times, and its held-out pairs): left out of its hash, so two builds of the same weights
#: share one signature and one cache.
BUILD_RECORDS = ("manifest.json", "heldout_pairs.jsonl")


def _directory_files(path: Path) -> list[Path]:
    return sorted(p for p in path.rglob("*") if p.is_file() and p.relative_to(path).as_posix() not in BUILD_RECORDS)


# ---------------------------------------------------------------------------------------------------------------
# Resolving
# ---------------------------------------------------------------------------------------------------------------

def has_weights(path: Path) -> bool:
    """Whether a directory holds transformers weights (``model*.safetensors`` or ``pytorch_model*.bin``)."""
    return any(any(path.glob(pattern)) for patterns in _WEIGHT_PATTERNS for pattern in patterns)


def offline_nli_dir() -> Path:
    """Where ``builtin:offline-nli`` lives: ``$CAPLIB_OFFLINE_NLI_DIR``, else the weights shipped in the package
    (:data:`SHIPPED_OFFLINE_NLI_DIR`, ``caplib/offline_nli/backbone``).

    Example:
        >>> offline_nli_dir() == SHIPPED_OFFLINE_NLI_DIR or bool(os.environ.get(OFFLINE_NLI_ENV))
        True
    """
    configured = os.environ.get(OFFLINE_NLI_ENV)
    if configured:
        return Path(configured).expanduser()
    return SHIPPED_OFFLINE_NLI_DIR


def _local_checkpoint(model: str, path: Path, transformers_layout: bool) -> Checkpoint:
    """A local directory (``transformers_layout``: must hold config.json and weights) or a COMET ``.ckpt`` file."""
    if path.is_file():
        if path.suffix != ".ckpt" or not (path.parents[1] / "hparams.yaml").is_file():
            raise CheckpointNotAvailable(
                f"{path} is a file; pass the model directory that holds config.json (for COMET: a checkpoints/"
                f"model.ckpt file with hparams.yaml two levels up, {path.parents[1] / 'hparams.yaml'})")
        resolved = path.resolve()
        root = resolved.parents[1]
        return Checkpoint(model, resolved, None, None, sha256_of([resolved, root / "hparams.yaml"], root))
    if transformers_layout:
        if not (path / "config.json").is_file():
            raise CheckpointNotAvailable(f"{path} is not a model directory (no config.json); pass a directory "
                                         f"written by save_pretrained(), or a Hugging Face Hub id")
        if not has_weights(path):
            raise CheckpointNotAvailable(f"{path} has a config.json but no model weights (*.safetensors or *.bin)")
    resolved = path.resolve()
    return Checkpoint(model, resolved, None, None, sha256_of(_directory_files(resolved), resolved))


def _builtin_checkpoint(name: str) -> Checkpoint:
    if name != BUILTIN_OFFLINE_NLI:
        raise ValueError(f"unknown builtin model {name!r}; the only builtin model is {BUILTIN_OFFLINE_NLI!r}")
    path = offline_nli_dir()
    if not (path / "config.json").is_file():
        raise CheckpointNotAvailable(
            f"no offline NLI backbone in {path} (needed by model {BUILTIN_OFFLINE_NLI!r}, the NLI model of the offline "
            f"profile): " + (f"${OFFLINE_NLI_ENV} names it; build one there with `python -m caplib.offline_nli build "
                             f"--output {path}`, or unset it to use the shipped weights"
                             if os.environ.get(OFFLINE_NLI_ENV) else
                             "the shipped weights are missing from this copy of caplib; reinstall it from the "
                             "repository"))
    verify_offline_nli(path, required=False)
    return _local_checkpoint(BUILTIN_OFFLINE_NLI, path, transformers_layout=True)


def verify_offline_nli(path: Path | str, required: bool = True) -> Path:
    """``path`` after checking that its ``model.safetensors`` has the SHA-256 that its manifest's ``shipped``
    section records (``caplib.offline_nli.ship`` writes it); every load of ``builtin:offline-nli`` runs this.
    Raises :class:`BackboneMismatch` where the hashes differ, or, when ``required``, where nothing is recorded (a
    model directory without a manifest, e.g. one built by hand, is accepted when not ``required``).

    Example:
        >>> verify_offline_nli(SHIPPED_OFFLINE_NLI_DIR).name
        'backbone'
    """
    path = Path(path)
    try:
        recorded = json.loads((path / "manifest.json").read_text(encoding="utf-8"))["shipped"]["weights_sha256"]
    except (OSError, ValueError, KeyError) as error:
        if not required:
            return path
        raise BackboneMismatch(f"{path} has no shipped backbone's manifest ({error!r}); write one with "
                               f"`python -m caplib.offline_nli build --output {path}`") from None
    weights = path / "model.safetensors"
    actual = sha256_of([weights]) if weights.is_file() else "missing"
    if actual != recorded:
        raise BackboneMismatch(f"{weights}: SHA-256 {actual[:12]}, but its manifest records {recorded[:12]}: the "
                               f"file is damaged or was replaced (a Git LFS pointer or an interrupted copy?); "
                               f"restore it from the repository, or rebuild it with "
                               f"`python -m caplib.offline_nli build --output {path}`")
    return path


def fetch_command(model: str, revision: str | None) -> str:
    """The shell command that fetches a Hub checkpoint (what every 'not available' message tells the user).

    Example:
        >>> fetch_command("roberta-large", None)
        'python -m caplib.checkpoints fetch roberta-large'
    """
    return f"python -m caplib.checkpoints fetch {model}" + (f" --revision {revision}" if revision else "")


def _hub_checkpoint(model: str, revision: str, transformers_layout: bool) -> Checkpoint:
    from huggingface_hub import constants, snapshot_download
    from huggingface_hub.errors import HFValidationError

    try:
        path = Path(snapshot_download(model, revision=revision, local_files_only=True))
    except HFValidationError as exc:
        raise ValueError(f"{model!r} is neither an existing local path nor a valid Hub id (owner/name): {exc}") from None
    except OSError as exc:  # LocalEntryNotFoundError is a FileNotFoundError
        raise CheckpointNotAvailable(
            f"checkpoint {model} (revision {revision}) is not in the local Hugging Face cache "
            f"({constants.HF_HUB_CACHE}), and caplib never downloads while scoring ({type(exc).__name__}). Fetch it "
            f"once where the Hub is reachable: `{fetch_command(model, revision)}` (then copy the cache here or point "
            f"HF_HOME at a copy), or save the model with save_pretrained() and pass its directory"
        ) from None
    if transformers_layout and (not (path / "config.json").is_file() or not has_weights(path)):
        raise CheckpointNotAvailable(
            f"checkpoint {model} (revision {revision}) is only partly in the local Hugging Face cache ({path} lacks "
            f"config.json or weights); fetch it again: `{fetch_command(model, revision)}`")
    commit = path.name  # snapshots/<commit hash>
    return Checkpoint(model, path, revision, commit, commit)


def resolve_checkpoint(
    model: str | os.PathLike[str],
    revision: str | None = None,
    *,
    allow_unpinned: bool = False,
    transformers_layout: bool = True,
) -> Checkpoint:
    """Find a checkpoint's files on this machine; never downloads (:func:`fetch` does).

    Args:
        model: a local directory (or COMET ``.ckpt`` file), a Hub id, or ``"builtin:offline-nli"``.
        revision: Hub commit hash or branch/tag; required for Hub ids unless ``allow_unpinned``.
        allow_unpinned: use ``"main"`` when ``revision`` is None (the commit used is still recorded).
        transformers_layout: require ``config.json`` and weights (False for checkpoints of other layouts,
            e.g. a COMET snapshot).

    Example:
        >>> resolve_checkpoint("cross-encoder/nli-deberta-v3-large", revision="main").commit  # doctest: +SKIP
        '<the 40-hex commit the local cache holds for main>'

    Raises:
        CheckpointNotAvailable: the files are not on this machine.
        ValueError: a Hub id without revision (and ``allow_unpinned=False``), or a malformed model name.
    """
    name = os.fspath(model)
    if name.startswith("builtin:"):
        return _builtin_checkpoint(name)
    path = Path(name).expanduser()
    if path.exists():
        return _local_checkpoint(name, path, transformers_layout)
    if name.startswith((".", "/", "~")) or name.count("/") > 1 or "\\" in name:
        raise CheckpointNotAvailable(f"model directory {path} does not exist")
    if revision is None:
        if not allow_unpinned:
            raise ValueError(
                f"Hub model {name!r} has no pinned revision: pass revision=<commit hash> (the folder name under "
                f"snapshots/ in the Hugging Face cache, or the hash shown on the model page), or "
                f"allow_unpinned=True to use 'main' (the signature then records the commit actually used); with "
                f"`caplib score`: --allow-unpinned, or write the commit as the profile's revision"
            )
        revision = "main"
    return _hub_checkpoint(name, revision, transformers_layout)


# ---------------------------------------------------------------------------------------------------------------
# Placing a model
# ---------------------------------------------------------------------------------------------------------------

def pick_device(device: Any = None) -> str:
    """The torch device name to run on: ``device`` normalised, or CUDA when available, else CPU.

    Example:
        >>> pick_device("cpu")
        'cpu'

    Raises:
        ValueError: a device name torch does not know, or a CUDA / MPS device this machine lacks.
    """
    import torch

    if device is None:
        return "cuda" if torch.cuda.is_available() else "cpu"
    try:
        name = torch.device(device)
    except (RuntimeError, TypeError) as error:
        raise ValueError(f"--device {device!r} is not a device name ({error}); use cpu, cuda, cuda:1, mps") from None
    if name.type == "cuda":
        if not torch.cuda.is_available():
            raise ValueError(f"--device {device}: no CUDA device here (torch {torch.__version__}, "
                             f"{'a CPU-only build' if torch.version.cuda is None else 'no GPU visible'}); use --device cpu")
        if name.index is not None and name.index >= torch.cuda.device_count():
            raise ValueError(f"--device {device}: this machine has {torch.cuda.device_count()} CUDA device(s)")
    elif name.type == "mps" and not torch.backends.mps.is_available():
        raise ValueError(f"--device {device}: MPS is not available here; use --device cpu")
    elif name.type not in ("cpu", "cuda", "mps"):
        raise ValueError(f"--device {device}: caplib runs on cpu, cuda or mps, not {name.type}")
    return str(name)


def resolve_dtype(dtype: str, device: str) -> str:
    """``"auto"`` -> float16 autocast on CUDA (as in App. C.2), float32 on CPU; aliases (fp16, bf16) spelled out.

    Example:
        >>> resolve_dtype("auto", "cpu"), resolve_dtype("bf16", "cpu")
        ('float32', 'bfloat16')

    Raises:
        ValueError: an unknown dtype, float16 off CUDA, or bfloat16 on a GPU without it.
    """
    on_cuda = device.startswith("cuda")
    if dtype == "auto":
        return "float16" if on_cuda else "float32"
    if dtype not in _DTYPES:
        raise ValueError(f"dtype must be 'auto' or one of {sorted(_DTYPES)}, got {dtype!r}")
    name = _DTYPES[dtype]
    if name == "float16" and not on_cuda:
        raise ValueError(f"float16 autocast needs a CUDA device (device is {device}); use 'float32' or "
                         f"'bfloat16' on CPU (`caplib score --dtype float32`)")
    if name == "bfloat16" and on_cuda:
        import torch

        if not torch.cuda.is_bf16_supported():
            raise ValueError(f"{device} does not support bfloat16; use 'float16' or 'float32'")
    return name


# ---------------------------------------------------------------------------------------------------------------
# Fetching (network; the only function here that downloads)
# ---------------------------------------------------------------------------------------------------------------

_SKIP_FORMATS = ("*.h5", "*.msgpack", "*.onnx", "onnx/*", "*.ot", "*.tflite", "tf_model*", "flax_model*",
                 "openvino/*", "*.gguf")


def fetch(model: str, revision: str | None = None, *, metadata_only: bool = False) -> Path:
    """Download a Hub checkpoint into the local Hugging Face cache; returns its snapshot directory.

    PyTorch weights only (safetensors when the repository has them, else ``.bin``), with config and
    tokenizer files; ``metadata_only`` fetches config and tokenizer files alone (e.g. COMET's encoder, whose
    weights come inside the COMET checkpoint). Afterwards :func:`resolve_checkpoint` finds it offline.

    Example:
        >>> fetch("cross-encoder/nli-deberta-v3-large", revision="main")  # doctest: +SKIP
        PosixPath('.../models--cross-encoder--nli-deberta-v3-large/snapshots/<commit>')
    """
    from huggingface_hub import HfApi, snapshot_download

    if metadata_only:
        return Path(snapshot_download(model, revision=revision, allow_patterns=list(_META_PATTERNS)))
    files = HfApi().list_repo_files(model, revision=revision)
    skip = list(_SKIP_FORMATS) + (["*.bin"] if any(f.endswith(".safetensors") for f in files) else [])
    return Path(snapshot_download(model, revision=revision, ignore_patterns=skip))


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m caplib.checkpoints fetch MODEL [--revision REV] | resolve MODEL [--revision REV]``."""
    parser = argparse.ArgumentParser(prog="python -m caplib.checkpoints", description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True)
    for command, text in (("fetch", "download a Hub checkpoint into the local cache (network)"),
                          ("resolve", "where a checkpoint's files are and what identifies them (offline)")):
        sub = commands.add_parser(command, help=text)
        sub.add_argument("model")
        sub.add_argument("--revision", default=None)
    args = parser.parse_args(argv)
    if args.command == "fetch":
        print(fetch(args.model, args.revision))
        return 0
    try:
        checkpoint = resolve_checkpoint(args.model, args.revision, allow_unpinned=True)
    except (CheckpointNotAvailable, ValueError) as exc:
        print(f"caplib.checkpoints: {exc}", file=sys.stderr)
        return 2
    print(f"{checkpoint.path}\n{checkpoint.identity}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
