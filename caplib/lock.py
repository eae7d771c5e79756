"""The lock file of a profile: the exact Hub commits, files and data a run of the paper profile uses.

``caplib fetch --profile paper`` (:mod:`caplib.fetch`) writes ``caplib/profiles/paper.lock.json`` beside the profile
(``<profile>.lock.json`` for any profile file). It holds, per Hub model, the 40-hex commit and the SHA-256 of every
file of its snapshot; per data file, its URL, SHA-256, size and date (or how it was generated, for the seeded
CAP-Statements split); and the fine-tuned statement model's hash and manifest summary once it is trained.

From then on :func:`caplib.profiles.load_profile` pins every unpinned Hub model of the profile to its locked commit,
so the paper profile loads exactly those commits offline, and :func:`verify_lock` (run by ``caplib score``, the book
runner and ``caplib fetch``) checks every locked file: a file whose hash changed is an error naming it.

Example:
    >>> import tempfile
    >>> path = Path(tempfile.mkdtemp()) / "demo.lock.json"
    >>> lock = Lock(path, models={"org/model": LockedModel("org/model", "nli", "a" * 40, {"config.json": "b" * 64})})
    >>> write_lock(lock)
    >>> read_lock(path).models["org/model"].commit == "a" * 40
    True
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from caplib.checkpoints import CheckpointNotAvailable, resolve_checkpoint, sha256_of
from caplib.files import write_atomically
from caplib.inputs import read_input_text

__all__ = ["LOCK_FORMAT", "Lock", "LockError", "LockedData", "LockedModel", "data_problems", "directory_hashes",
           "lock_path", "model_problems", "read_lock", "verify_lock", "write_lock"]

#: Version of the lock file's layout.
LOCK_FORMAT = 1


class LockError(ValueError):
    """A lock file is malformed, or a locked file is missing or changed (the message names every such file)."""


@dataclass(frozen=True)
class LockedModel:
    """A Hub snapshot: ``model`` at ``commit``, with the SHA-256 of each of its files (relative path -> hex)."""

    model: str
    role: str
    commit: str
    files: Mapping[str, str]


@dataclass(frozen=True)
class LockedData:
    """A data file of the profile's data directory: where it came from and what its bytes hash to."""

    name: str
    sha256: str
    size: int
    date: str
    url: str | None = None
    generated: str | None = None  # how caplib made it, for files that are not downloaded (the seeded split)


@dataclass(frozen=True)
class Lock:
    """The content of one lock file (``path``)."""

    path: Path
    models: Mapping[str, LockedModel] = field(default_factory=dict)
    data: Mapping[str, LockedData] = field(default_factory=dict)
    statement_model: Mapping[str, Any] | None = None

    def commit(self, model: str) -> str | None:
        """The locked commit of a Hub model, None when it is not locked."""
        entry = self.models.get(model)
        return None if entry is None else entry.commit

    def replace(self, **changes: Any) -> Lock:
        """A copy with some parts changed."""
        return replace(self, **changes)


def lock_path(profile_source: str | os.PathLike[str]) -> Path:
    """Where the lock of a profile file lives: beside it, ``<stem>.lock.json``.

    Example:
        >>> lock_path("caplib/profiles/paper.yaml").name
        'paper.lock.json'
    """
    source = Path(profile_source)
    return source.with_name(f"{source.stem}.lock.json")


def directory_hashes(directory: Path) -> dict[str, str]:
    """SHA-256 of every file under ``directory`` (links followed), by relative POSIX path, sorted.

    Example:
        >>> import tempfile
        >>> folder = Path(tempfile.mkdtemp())
        >>> _ = (folder / "a.txt").write_bytes(b"abc")
        >>> directory_hashes(folder)["a.txt"][:16]
        'ba7816bf8f01cfea'
    """
    files = sorted(path for path in directory.rglob("*") if path.is_file())
    return {path.relative_to(directory).as_posix(): sha256_of([path]) for path in files}


def read_lock(path: str | os.PathLike[str]) -> Lock | None:
    """The lock at ``path``, None when there is none.

    Raises:
        LockError: the file is not a lock of this format.
    """
    path = Path(path)
    if not path.exists():
        return None
    try:
        raw = json.loads(read_input_text(path, what="lock"))  # a pipe or device there is refused, not read
        if raw.get("format") != LOCK_FORMAT:
            raise LockError(f"{path}: lock format {raw.get('format')!r}, expected {LOCK_FORMAT}")
        models = {name: LockedModel(name, entry["role"], entry["commit"], dict(entry["files"]))
                  for name, entry in raw["models"].items()}
        data = {name: LockedData(name, entry["sha256"], int(entry["size"]), entry["date"], entry.get("url"),
                                 entry.get("generated")) for name, entry in raw["data"].items()}
    except (ValueError, KeyError, TypeError, AttributeError) as error:
        if isinstance(error, LockError):
            raise
        raise LockError(f"{path}: not a readable caplib lock file ({type(error).__name__}: {error}); write it anew "
                        f"with `caplib fetch --profile <profile> --update`") from None
    return Lock(path, models, data, raw.get("statement_model"))


def write_lock(lock: Lock) -> None:
    """Write ``lock`` to ``lock.path`` atomically (a reader never sees half a file)."""
    payload = {
        "format": LOCK_FORMAT,
        "models": {name: {"role": entry.role, "commit": entry.commit, "files": dict(sorted(entry.files.items()))}
                   for name, entry in sorted(lock.models.items())},
        "data": {name: {key: value for key, value in vars(entry).items() if key != "name" and value is not None}
                 for name, entry in sorted(lock.data.items())},
        "statement_model": None if lock.statement_model is None else dict(lock.statement_model),
    }
    text = json.dumps(payload, indent=2, ensure_ascii=False) + "\n"
    write_atomically(lock.path, lambda path: path.write_text(text, encoding="utf-8"))


def model_problems(entry: LockedModel) -> list[str]:
    """Why a locked Hub snapshot is not here as locked: one line per missing or changed file (empty: all is well)."""
    try:
        snapshot = resolve_checkpoint(entry.model, entry.commit, transformers_layout=False).path
    except (CheckpointNotAvailable, ValueError):
        return [f"{entry.model}@{entry.commit} is not in the local Hugging Face cache"]
    problems = []
    for name, expected in entry.files.items():
        path = snapshot / name
        found = sha256_of([path]) if path.is_file() else None
        if found is None:
            problems.append(f"{path} (locked file of {entry.model}) is missing")
        elif found != expected:
            problems.append(f"{path} (locked file of {entry.model}@{entry.commit[:12]}) has changed: SHA-256 "
                            f"{found[:16]}... is not the locked {expected[:16]}...")
    return problems


def data_problems(entry: LockedData, data_dir: Path | None) -> list[str]:
    """Why a locked data file is not in ``data_dir`` as locked: one line, or none when all is well."""
    path = None if data_dir is None else data_dir / entry.name
    if path is None or not path.is_file():
        return [f"{path or entry.name} (locked data file) is missing"]
    found = sha256_of([path])
    if found != entry.sha256:
        return [f"{path} (locked data file) has changed: SHA-256 {found[:16]}... is not the locked "
                f"{entry.sha256[:16]}..."]
    return []


def verify_lock(lock: Lock, data_dir: Path | None, statement_dir: Path | None = None) -> None:
    """Check every file the lock names against its hash (models in the Hugging Face cache, data in ``data_dir``,
    the statement model in ``statement_dir``).

    Raises:
        LockError: one line per missing or changed file, and what to do.
    """
    problems = [problem for entry in lock.models.values() for problem in model_problems(entry)]
    problems += [problem for entry in lock.data.values() for problem in data_problems(entry, data_dir)]
    if lock.statement_model is not None and statement_dir is not None and statement_dir.is_dir():
        try:
            found = resolve_checkpoint(statement_dir).fingerprint
        except CheckpointNotAvailable as error:
            found = f"none ({error})"
        if found != lock.statement_model["sha256"]:
            problems.append(f"{statement_dir} (locked statement model) has changed: SHA-256 {found[:16]}... is not "
                            f"the locked {lock.statement_model['sha256'][:16]}...")
    if problems:
        raise LockError(f"{lock.path}: " + "; ".join(problems) + ". Run `caplib fetch --profile <profile>` to "
                        f"fetch what is missing, or `caplib fetch --profile <profile> --update` to accept new "
                        f"versions (and re-lock them)")
