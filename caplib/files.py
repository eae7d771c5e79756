"""Writing a file so that no reader ever sees half of it: a temporary file beside it, then one rename.

Example:
    >>> import tempfile
    >>> target = Path(tempfile.mkdtemp()) / "out.txt"
    >>> write_atomically(target, lambda path: path.write_text("done"))
    >>> target.read_text()
    'done'
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable
from pathlib import Path

__all__ = ["write_atomically"]


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
