"""Writing a file so that no reader ever sees half of it: a temporary file beside it, then one rename; and an
exclusive lock beside a file, so that concurrent processes (notebooks, Ray actors) build it once.

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
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path

__all__ = ["exclusive", "write_atomically"]


def write_atomically(path: Path, write: Callable[[Path], object]) -> None:
    """``write`` to a temporary file beside ``path``, then rename it over ``path`` (readers never see half a file;
    a failed ``write`` leaves ``path`` as it was and no temporary file behind)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    os.close(handle)
    try:
        write(Path(temporary))
        os.replace(temporary, path)
    finally:
        if os.path.exists(temporary):
            os.unlink(temporary)


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
