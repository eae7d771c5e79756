"""Writing a file so that no reader ever sees half of it: a temporary file beside it, then one rename; an
exclusive lock beside a file, so that concurrent processes (notebooks, Ray actors) build it once; and a resumable
HTTP download (``<file>.part`` until complete), the one downloader of ``caplib fetch`` and of the packaged archives.

Example:
    >>> import tempfile
    >>> target = Path(tempfile.mkdtemp()) / "out.txt"
    >>> write_atomically(target, lambda path: path.write_text("done"))
    >>> target.read_text()
    'done'
"""

from __future__ import annotations

import contextlib
import os
import secrets
import stat
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path

__all__ = ["download", "exclusive", "write_atomically", "write_together"]


def write_atomically(path: Path, write: Callable[[Path], object]) -> None:
    """``write`` to a temporary file beside ``path``, then rename it over ``path`` (readers never see half a file;
    a failed ``write`` leaves ``path`` as it was and no temporary file behind). The file gets the mode a plain
    ``open(path, "w")`` would give it: an existing file's own mode, else 0666 less the umask."""
    write_together({path: write})


def write_together(writes: Mapping[Path, Callable[[Path], object]]) -> None:
    """:func:`write_atomically` for files that belong together (a scored CSV and its signature file): every file is
    written to its temporary first, and only when all are written are they renamed into place, so that a failed
    write leaves all of them as they were."""
    temporaries: dict[Path, Path] = {}
    try:
        for path, write in writes.items():
            path = Path(path)
            temporary = temporaries[path] = _temporary_beside(path)
            mode = stat.S_IMODE(os.stat(path if path.exists() else temporary).st_mode)  # before ``write`` runs
            write(temporary)
            os.chmod(temporary, mode)  # a writer may have recreated the temporary with a mode of its own
        for path, temporary in temporaries.items():
            os.replace(temporary, path)
    finally:
        for temporary in temporaries.values():
            if os.path.exists(temporary):
                os.unlink(temporary)


def _temporary_beside(path: Path) -> Path:
    """A new empty file ``.<name>.<random>.tmp`` beside ``path``, created with mode 0666 less the umask (the mode
    ``open()`` gives a new file; ``tempfile.mkstemp`` would give 0600)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    while True:
        temporary = path.parent / f".{path.name}.{secrets.token_hex(6)}.tmp"
        try:
            os.close(os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666))
            return temporary
        except FileExistsError:
            continue


@contextlib.contextmanager
def exclusive(path: Path) -> Iterator[None]:
    """Hold an exclusive lock (``fcntl.flock``) on the file ``.<name>.lock`` beside ``path`` for the block: the
    processes that would build ``path`` at the same time build it one after the other (the later ones find it)."""
    import fcntl

    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path.parent / f".{path.name}.lock", "w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def download(url: str, target: Path, progress: bool = True, timeout: tuple[float, float] = (10.0, 60.0)) -> None:
    """``url`` to ``target`` through ``<target>.part`` (resumed with a Range request when a part is there); raises
    ``requests.RequestException`` (an ``OSError``) when the server cannot be reached or answers with an error.
    ``timeout``: (connect, read) seconds."""
    import requests
    from tqdm import tqdm

    part = target.with_name(f"{target.name}.part")
    start = part.stat().st_size if part.is_file() else 0
    headers = {"Range": f"bytes={start}-"} if start else {}
    with requests.get(url, headers=headers, stream=True, timeout=timeout) as response:
        if response.status_code == 416:  # the part is already complete
            part.replace(target)
            return
        response.raise_for_status()
        mode = "ab" if start and response.status_code == 206 else "wb"
        size = int(response.headers.get("Content-Length", 0)) + (start if mode == "ab" else 0)
        with open(part, mode) as handle, tqdm(total=size or None, initial=start if mode == "ab" else 0, unit="B",
                                              unit_scale=True, desc=target.name, disable=not progress) as bar:
            for block in response.iter_content(1 << 16):
                handle.write(block)
                bar.update(len(block))
    part.replace(target)
