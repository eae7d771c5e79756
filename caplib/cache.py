"""Content-addressed disk cache for model outputs (NLI probabilities, generated statements).

Re-executing a notebook or re-running ``caplib score`` on the same inputs with the same settings
is nearly free: every scored item is stored under a key that hashes the namespace, the settings
that change its value (model + revision, dtype, max length, ...) and the item's own text.

Storage: one SQLite database per namespace, ``<cache dir>/<namespace>.sqlite3``, in WAL mode so
that several readers (parallel notebooks) and one writer at a time can share it. Values are
stored as JSON together with a SHA-256 checksum of key + value; an entry whose checksum does not
match (a corrupt or tampered row) is deleted and reported missing, never returned. A caplib database is known by its
schema: one table ``entries (key, value, checksum)``. A file there that cannot be read at all (truncated,
overwritten) is moved aside to ``<file>.corrupt-<pid>`` with a one-line warning and an empty one is started; another
program's SQLite database found there is left exactly as it is, and so is a directory that cannot be used (a file,
read-only): one warning each, and the run continues without that cache. None of this changes a score: a miss is
recomputed. :func:`clear_cache` removes caplib's databases (by their schema) and the files it set aside, nothing
else.

Example:
    >>> import tempfile
    >>> cache = ContentCache("demo", {"model": "m", "revision": "r"}, directory=tempfile.mkdtemp())
    >>> cache.put_many({"premise\\x1fhypothesis": [0.7, 0.2, 0.1]})
    >>> cache.get_many(["premise\\x1fhypothesis", "unseen"])
    {'premise\\x1fhypothesis': [0.7, 0.2, 0.1]}
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
import re
import sqlite3
from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import Any

__all__ = ["CacheStats", "ClearedCache", "ContentCache", "cached_values", "clear", "clear_cache", "default_cache_dir"]

_LOG = logging.getLogger("caplib")

# SQLite limits the number of host parameters per statement (999 in old builds).
_CHUNK = 900
_NAMESPACE = re.compile(r"^[A-Za-z0-9_.-]+$")
_SUFFIX = ".sqlite3"
_COLUMNS = ["key", "value", "checksum"]  # of the one table, ``entries``: how a caplib cache database is known
_WARNED: set[tuple[str, str]] = set()  # (what, where) warned about in this process: one line each, not one per cache


def _warn_once(what: str, where: Path, message: str, *args: Any) -> None:
    if (what, str(where)) not in _WARNED:
        _WARNED.add((what, str(where)))
        _LOG.warning(message, *args)


class _ForeignDatabase(Exception):
    """An SQLite database that is not a caplib cache sits where one is expected."""


def _foreign_schema(connection: sqlite3.Connection) -> str | None:
    """What makes the open database not a caplib cache (its tables), None when it is one or has no table yet.

    Raises:
        sqlite3.DatabaseError: the file is not an SQLite database at all.
    """
    tables = [name for (name,) in connection.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
    if not tables:
        return None
    if tables == ["entries"]:
        columns = [row[1] for row in connection.execute("PRAGMA table_info(entries)")]
        if columns == _COLUMNS:
            return None
        return f"a table entries with the columns {columns}, not {_COLUMNS}"
    return f"the tables {sorted(tables)}"


#: The environment variable that moves the cache directory (and what caplib keeps there: the offline backbone too).
CACHE_DIR_ENV = "CAPLIB_CACHE_DIR"


def default_cache_dir(*, environment: bool = True) -> Path:
    """The cache directory: ``$CAPLIB_CACHE_DIR`` if set (and ``environment``), else ``~/.cache/caplib``.

    Example:
        >>> default_cache_dir()  # doctest: +SKIP
        PosixPath('/home/me/.cache/caplib')
    """
    configured = os.environ.get(CACHE_DIR_ENV) if environment else None
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
            foreign = _foreign_schema(connection)  # before anything is written into it
            if foreign is not None:
                raise _ForeignDatabase(foreign)
            connection.execute("PRAGMA journal_mode=WAL")
            connection.execute("PRAGMA synchronous=NORMAL")
            connection.execute(
                "CREATE TABLE IF NOT EXISTS entries (key TEXT PRIMARY KEY, value TEXT NOT NULL, checksum TEXT NOT NULL)"
            )
            connection.execute("SELECT key, value, checksum FROM entries LIMIT 1").fetchall()  # a foreign schema fails
            connection.commit()
        except (sqlite3.DatabaseError, _ForeignDatabase):
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
            except _ForeignDatabase as foreign:
                self._disabled = True
                _warn_once("foreign", self.path, "cache %s is another program's SQLite database (%s); caplib leaves "
                           "it as it is and continues without this cache: move it away or use another cache "
                           "directory", self.path, foreign)
            except (OSError, sqlite3.Error) as error:
                self._disabled = True
                if self.directory.is_dir():
                    _warn_once("unusable", self.path, "cache %s is unusable (%s); continuing without a cache",
                               self.path, error)
                else:  # one line for the directory, not one per cache in it
                    _warn_once("unusable", self.directory, "cache directory %s is unusable (%s); continuing "
                               "without a cache", self.directory, error)
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
                    where = self.path if os.access(self.directory, os.W_OK) else self.directory  # one line each
                    _warn_once("readonly", where, "cache %s is not writable (%s); continuing without a cache", where,
                               error)
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


@dataclass(frozen=True)
class ClearedCache:
    """What :func:`clear` did: ``entries`` cached values in the caplib databases ``removed`` (plus ``set_aside``
    files that runs had moved aside as unreadable), and the files named like a cache that it ``left`` (path: why)."""

    entries: int
    removed: tuple[Path, ...]
    set_aside: tuple[Path, ...]
    left: Mapping[Path, str]


def _not_a_cache(path: Path) -> str | None:
    """Why ``path`` is not a caplib cache database (read only, never changed), None when it is one."""
    if not path.is_file() or path.is_symlink():
        return "a directory" if path.is_dir() else "not a regular file"
    try:
        connection = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True, timeout=60.0)
        try:
            foreign = _foreign_schema(connection)
            if foreign is not None:
                return f"an SQLite database with {foreign}"
            tables = connection.execute("SELECT count(*) FROM sqlite_master WHERE type = 'table'").fetchone()[0]
            return None if tables else "an SQLite database with no table"
        finally:
            connection.close()
    except sqlite3.DatabaseError as error:
        return f"not an SQLite database ({error})" if _unreadable(error) else f"unreadable ({error})"


def clear(directory: Path | str | None = None, namespace: str | None = None) -> ClearedCache:
    """Delete caplib's cache databases in ``directory`` (all namespaces, or one) and the unreadable ones earlier runs
    set aside (``<name>.sqlite3.corrupt-<pid>``); a database is caplib's when its schema is (one table ``entries``
    with the columns key, value, checksum). Anything else named ``*.sqlite3`` is left as it is and reported.

    Example:
        >>> import tempfile
        >>> directory = Path(tempfile.mkdtemp())
        >>> ContentCache("demo", {}, directory=directory).put_many({"a": 1, "b": 2})
        >>> sqlite3.connect(directory / "my_app.sqlite3").execute("CREATE TABLE notes (text)").connection.commit()
        >>> cleared = clear(directory)
        >>> cleared.entries, [p.name for p in cleared.removed], [(p.name, why) for p, why in cleared.left.items()]
        (2, ['demo.sqlite3'], [('my_app.sqlite3', "an SQLite database with the tables ['notes']")])

    Raises:
        NotADirectoryError: ``directory`` is a file.
    """
    root = Path(directory).expanduser() if directory is not None else default_cache_dir()
    if root.exists() and not root.is_dir():
        raise NotADirectoryError(f"{root} is a file, not a cache directory")
    pattern = f"{namespace}{_SUFFIX}" if namespace else f"*{_SUFFIX}"
    entries, removed, left = 0, [], {}
    for database in sorted(root.glob(pattern)):
        reason = _not_a_cache(database)
        if reason is not None:
            left[database] = reason
            continue
        try:
            with contextlib.closing(sqlite3.connect(database, timeout=60.0)) as connection:
                entries += int(connection.execute("SELECT COUNT(*) FROM entries").fetchone()[0])
        except sqlite3.DatabaseError:
            pass  # caplib's schema, but damaged further in: deleted all the same
        for path in (database, Path(f"{database}-wal"), Path(f"{database}-shm")):
            path.unlink(missing_ok=True)
        removed.append(database)
    set_aside = sorted(path for path in root.glob(f"{pattern}.corrupt-*") if path.is_file())
    for path in set_aside:  # unreadable databases a run set aside (the name is caplib's own)
        path.unlink()
    return ClearedCache(entries, tuple(removed), tuple(set_aside), MappingProxyType(left))


def clear_cache(directory: Path | str | None = None, namespace: str | None = None) -> int:
    """:func:`clear`, returning how many entries the removed databases held.

    Example:
        >>> import tempfile
        >>> directory = tempfile.mkdtemp()
        >>> ContentCache("demo", {}, directory=directory).put_many({"a": 1, "b": 2})
        >>> clear_cache(directory)
        2
    """
    return clear(directory, namespace).entries


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
