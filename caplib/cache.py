"""Content-addressed disk cache for model outputs (NLI probabilities, generated statements).

Re-executing a notebook or re-running ``caplib score`` on the same inputs with the same settings
is nearly free: every scored item is stored under a key that hashes the namespace, the settings
that change its value (model + revision, dtype, max length, ...) and the item's own text.

Storage: one SQLite database per namespace, ``<cache dir>/<namespace>.sqlite3``, in WAL mode so
that several readers (parallel notebooks) and one writer at a time can share it. Values are
stored as JSON together with a SHA-256 checksum of key + value; an entry whose checksum does not
match (a corrupt or tampered row) is deleted and reported missing, never returned. A database file that cannot be
read at all (truncated, overwritten, a foreign schema) is moved aside to ``<file>.corrupt-<pid>`` with a one-line
warning and an empty one is started; a cache directory that cannot be used (a file, read-only) gives a warning and
the run continues without a cache. Neither changes a score: a miss is recomputed.

Example:
    >>> import tempfile
    >>> cache = ContentCache("demo", {"model": "m", "revision": "r"}, directory=tempfile.mkdtemp())
    >>> cache.put_many({"premise\\x1fhypothesis": [0.7, 0.2, 0.1]})
    >>> cache.get_many(["premise\\x1fhypothesis", "unseen"])
    {'premise\\x1fhypothesis': [0.7, 0.2, 0.1]}
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import re
import sqlite3
from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = ["CacheStats", "ContentCache", "cached_values", "clear_cache", "default_cache_dir"]

_LOG = logging.getLogger("caplib")

# SQLite limits the number of host parameters per statement (999 in old builds).
_CHUNK = 900
_NAMESPACE = re.compile(r"^[A-Za-z0-9_.-]+$")
_SUFFIX = ".sqlite3"


def default_cache_dir() -> Path:
    """The cache directory: ``$CAPLIB_CACHE_DIR`` if set, else ``~/.cache/caplib``.

    Example:
        >>> default_cache_dir()  # doctest: +SKIP
        PosixPath('/home/me/.cache/caplib')
    """
    configured = os.environ.get("CAPLIB_CACHE_DIR")
    return Path(configured).expanduser() if configured else Path.home() / ".cache" / "caplib"


def _unreadable(error: sqlite3.DatabaseError) -> bool:
    """Whether ``error`` says the file is not (or no longer) a cache database, as opposed to e.g. a lock."""
    return any(sign in str(error) for sign in ("not a database", "malformed", "no such column", "no such table",
                                               "has no column", "encrypted"))


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


class ContentCache:
    """A key-value store whose keys are hashes of ``namespace + settings + item``.

    Args:
        namespace: what is cached, e.g. ``"nli"`` or ``"statements"`` (letters, digits, ``_.-``);
            also the database file name.
        settings: everything besides the item text that changes the cached value; serialized as
            canonical JSON (sorted keys), so equal settings give equal keys in every process.
        directory: where the database lives; default :func:`default_cache_dir`.

    Values must be JSON-serializable (lists of floats, strings, ...). Floats round-trip exactly.
    """

    def __init__(self, namespace: str, settings: Mapping[str, Any], directory: Path | str | None = None):
        self._connection: sqlite3.Connection | None = None
        self._disabled = False
        if not _NAMESPACE.match(namespace):
            raise ValueError(f"cache namespace {namespace!r} must use only letters, digits, '_', '.', '-'")
        self.namespace = namespace
        self.settings = dict(settings)
        self.directory = Path(directory).expanduser() if directory is not None else default_cache_dir()
        self.path = self.directory / f"{namespace}{_SUFFIX}"
        canonical = json.dumps(self.settings, sort_keys=True, ensure_ascii=False, default=str)
        self._prefix = f"{namespace}\x1e{canonical}\x1e"

    def key(self, item: str) -> str:
        """The content key of ``item`` under this namespace and settings."""
        return _digest(self._prefix + item)

    def _open(self) -> sqlite3.Connection:
        self.directory.mkdir(parents=True, exist_ok=True)
        connection = sqlite3.connect(self.path, timeout=60.0)
        try:
            connection.execute("PRAGMA journal_mode=WAL")
            connection.execute("PRAGMA synchronous=NORMAL")
            connection.execute(
                "CREATE TABLE IF NOT EXISTS entries (key TEXT PRIMARY KEY, value TEXT NOT NULL, checksum TEXT NOT NULL)"
            )
            connection.execute("SELECT key, value, checksum FROM entries LIMIT 1").fetchall()  # a foreign schema fails
            connection.commit()
        except sqlite3.DatabaseError:
            connection.close()
            raise
        return connection

    def _connect(self) -> sqlite3.Connection | None:
        """The open database; None when the cache is unusable here (then every call behaves as no cache)."""
        if self._connection is None and not self._disabled:
            try:
                try:
                    self._connection = self._open()
                except sqlite3.DatabaseError as error:  # corrupt or foreign file: set it aside, start afresh
                    if not (self.path.is_file() and _unreadable(error)):
                        raise
                    self._set_aside(error)
                    self._connection = self._open()
            except (OSError, sqlite3.Error) as error:
                self._disabled = True
                _LOG.warning("cache %s is unusable (%s); continuing without a cache", self.path, error)
        return self._connection

    def _set_aside(self, error: Exception) -> None:
        self.close()
        for suffix in ("", "-wal", "-shm"):
            source = Path(f"{self.path}{suffix}")
            if source.exists():
                aside = Path(f"{self.path}.corrupt-{os.getpid()}{suffix}")
                source.replace(aside)
        _LOG.warning("cache %s could not be read (%s); moved it aside to %s and starting an empty one",
                     self.path, error, f"{self.path}.corrupt-{os.getpid()}")

    def _guarded(self, action: Callable[[sqlite3.Connection], Any], default: Any) -> Any:
        """Run ``action`` on the database; on a database error, set the file aside once and retry on a fresh one."""
        for attempt in (0, 1):
            connection = self._connect()
            if connection is None:
                return default
            try:
                return action(connection)
            except sqlite3.DatabaseError as error:
                if "readonly" in str(error) or "unable to open" in str(error):
                    self.close()
                    self._disabled = True
                    _LOG.warning("cache %s is not writable (%s); continuing without a cache", self.path, error)
                    return default
                if attempt or not _unreadable(error):
                    raise
                self._set_aside(error)
        return default

    def get_many(self, items: Sequence[str]) -> dict[str, Any]:
        """Cached values of ``items``; missing and corrupt entries are absent (corrupt ones are deleted)."""
        keys = {self.key(item): item for item in dict.fromkeys(items)}
        if not keys or not self.path.exists():
            return {}
        return self._guarded(lambda connection: self._lookup(connection, keys), {})

    def _lookup(self, connection: sqlite3.Connection, keys: Mapping[str, str]) -> dict[str, Any]:
        found: dict[str, Any] = {}
        corrupt: list[str] = []
        key_list = list(keys)
        for start in range(0, len(key_list), _CHUNK):
            chunk = key_list[start : start + _CHUNK]
            rows = connection.execute(
                f"SELECT key, value, checksum FROM entries WHERE key IN ({','.join('?' * len(chunk))})", chunk
            ).fetchall()
            for key, value, checksum in rows:
                try:
                    if checksum != _digest(key + value):
                        raise ValueError("checksum mismatch")
                    found[keys[key]] = json.loads(value)
                except (TypeError, ValueError):
                    corrupt.append(key)
        if corrupt:
            connection.executemany("DELETE FROM entries WHERE key = ?", [(key,) for key in corrupt])
            connection.commit()
        return found

    def put_many(self, mapping: Mapping[str, Any]) -> None:
        """Store ``item -> value`` pairs (overwriting earlier values of the same items)."""
        if not mapping:
            return
        rows = []
        for item, value in mapping.items():
            key = self.key(item)
            text = json.dumps(value, ensure_ascii=False)
            rows.append((key, text, _digest(key + text)))
        def store(connection: sqlite3.Connection) -> None:
            with connection:
                connection.executemany("INSERT OR REPLACE INTO entries (key, value, checksum) VALUES (?, ?, ?)", rows)

        self._guarded(store, None)

    def __len__(self) -> int:
        if not self.path.exists():
            return 0
        return int(self._guarded(lambda connection: connection.execute("SELECT COUNT(*) FROM entries").fetchone()[0],
                                 0))

    def close(self) -> None:
        """Close the database connection (reopened on the next access)."""
        if self._connection is not None:
            self._connection.close()
            self._connection = None

    def __del__(self) -> None:
        self.close()


def clear_cache(directory: Path | str | None = None, namespace: str | None = None) -> int:
    """Delete the cache databases (all namespaces, or one; files set aside as unreadable too) and return how many
    entries they held.

    Example:
        >>> import tempfile
        >>> directory = tempfile.mkdtemp()
        >>> ContentCache("demo", {}, directory=directory).put_many({"a": 1, "b": 2})
        >>> clear_cache(directory)
        2
    """
    root = Path(directory).expanduser() if directory is not None else default_cache_dir()
    pattern = f"{namespace}{_SUFFIX}" if namespace else f"*{_SUFFIX}"
    removed = 0
    for database in sorted(root.glob(pattern)):
        try:
            with sqlite3.connect(database, timeout=60.0) as connection:
                removed += int(connection.execute("SELECT COUNT(*) FROM entries").fetchone()[0])
            connection.close()
        except sqlite3.DatabaseError:
            pass  # an unreadable database is deleted all the same
        for path in (database, Path(f"{database}-wal"), Path(f"{database}-shm")):
            path.unlink(missing_ok=True)
    for aside in root.glob(f"{pattern}.corrupt-*"):  # unreadable databases a run set aside
        aside.unlink(missing_ok=True)
    return removed


@dataclass(frozen=True)
class CacheStats:
    """What one :func:`cached_values` call did: items asked for, distinct ones, found in the cache, computed."""

    items: int
    unique: int
    cached: int
    computed: int


def _item_text(item: Hashable) -> str:
    """A string item as it is; a tuple of strings as JSON (no separator that a text could contain)."""
    return item if isinstance(item, str) else json.dumps(list(item), ensure_ascii=False)  # type: ignore[arg-type]


def cached_values(cache: ContentCache | None, items: Sequence[Hashable],
                  compute: Callable[[list[Any]], Sequence[Any]]) -> tuple[list[Any], CacheStats]:
    """The value of every item, in order: each distinct item once, from the cache or from one ``compute`` call.

    The loop of every cached model output in caplib (NLI probabilities, statements, baseline scores): deduplicate,
    look up, compute the misses (``compute`` gets the missing items in first-seen order and returns one value each),
    store them. Items are strings or tuples of strings (keyed as JSON lists, so no two tuples share a key);
    ``cache=None`` computes everything.

    Example:
        >>> import tempfile
        >>> cache = ContentCache("demo", {}, directory=tempfile.mkdtemp())
        >>> cached_values(cache, ["a", "b", "a"], lambda todo: [text.upper() for text in todo])
        (['A', 'B', 'A'], CacheStats(items=3, unique=2, cached=0, computed=2))
        >>> cached_values(cache, [("a",), "b"], lambda todo: ["?"] * len(todo))[0]
        ['?', 'B']
    """
    unique = list(dict.fromkeys(items))
    texts = {item: _item_text(item) for item in unique}
    found = cache.get_many(list(texts.values())) if cache is not None else {}
    todo = [item for item in unique if texts[item] not in found]
    if todo:
        values = list(compute(todo))
        if len(values) != len(todo):
            raise RuntimeError(f"computed {len(values)} values for {len(todo)} items")
        computed = {texts[item]: value for item, value in zip(todo, values)}
        if cache is not None:
            cache.put_many(computed)
        found.update(computed)
    stats = CacheStats(len(items), len(unique), len(unique) - len(todo), len(todo))
    return [found[texts[item]] for item in items], stats
