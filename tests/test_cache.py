"""caplib.cache: content-addressed values survive, differ by settings, and corrupt rows are never returned."""

from __future__ import annotations

import hashlib
import json
import sqlite3

import pytest

from caplib.cache import ContentCache, clear_cache, default_cache_dir

SETTINGS = {"model": "m", "revision": "abc", "max_length": 512}


def test_round_trip_is_exact_and_persistent(tmp_path):
    values = {"p\x1fh": [0.1, 0.2, 0.7], "other": [1 / 3, 2 / 3, 0.0], "text": "A statement."}
    ContentCache("nli", SETTINGS, tmp_path).put_many(values)
    reopened = ContentCache("nli", dict(reversed(list(SETTINGS.items()))), tmp_path)  # key order is irrelevant
    assert reopened.get_many([*values, "never stored"]) == values
    assert len(reopened) == 3


def test_settings_and_namespace_separate_entries(tmp_path):
    ContentCache("nli", SETTINGS, tmp_path).put_many({"item": [1.0]})
    assert ContentCache("nli", {**SETTINGS, "revision": "def"}, tmp_path).get_many(["item"]) == {}
    assert ContentCache("statements", SETTINGS, tmp_path).get_many(["item"]) == {}


def test_key_is_sha256_of_namespace_settings_and_item(tmp_path):
    cache = ContentCache("nli", {"b": 2, "a": 1}, tmp_path)
    expected = hashlib.sha256('nli\x1e{"a": 1, "b": 2}\x1eitem'.encode()).hexdigest()
    assert cache.key("item") == expected


@pytest.mark.parametrize("column", ["value", "checksum"])
def test_corrupt_entry_is_dropped_not_returned(tmp_path, column):
    cache = ContentCache("nli", SETTINGS, tmp_path)
    cache.put_many({"good": [0.5, 0.5, 0.0], "bad": [0.2, 0.3, 0.5]})
    with sqlite3.connect(cache.path) as connection:
        connection.execute(f"UPDATE entries SET {column} = ? WHERE key = ?",
                           (json.dumps([0.9, 0.05, 0.05]), cache.key("bad")))
    connection.close()
    fresh = ContentCache("nli", SETTINGS, tmp_path)
    assert fresh.get_many(["good", "bad"]) == {"good": [0.5, 0.5, 0.0]}
    assert len(fresh) == 1  # the corrupt row was deleted
    fresh.put_many({"bad": [0.2, 0.3, 0.5]})  # recomputed value can be stored again
    assert fresh.get_many(["bad"]) == {"bad": [0.2, 0.3, 0.5]}


def test_undecodable_value_with_matching_checksum_is_dropped(tmp_path):
    cache = ContentCache("nli", SETTINGS, tmp_path)
    cache.put_many({"x": 1})
    key = cache.key("x")
    with sqlite3.connect(cache.path) as connection:
        connection.execute("UPDATE entries SET value = ?, checksum = ? WHERE key = ?",
                           ("{not json", hashlib.sha256((key + "{not json").encode()).hexdigest(), key))
    connection.close()
    assert ContentCache("nli", SETTINGS, tmp_path).get_many(["x"]) == {}


def test_tens_of_thousands_of_entries(tmp_path):
    items = {f"premise {i}\x1fhypothesis {i % 97}": [i / 30_000, 0.25, 0.75 - i / 30_000] for i in range(30_000)}
    ContentCache("nli", SETTINGS, tmp_path).put_many(items)
    got = ContentCache("nli", SETTINGS, tmp_path).get_many(list(items))
    assert got == items


def test_reader_sees_writes_of_another_connection(tmp_path):
    reader, writer = ContentCache("nli", SETTINGS, tmp_path), ContentCache("nli", SETTINGS, tmp_path)
    writer.put_many({"a": 1})
    assert reader.get_many(["a"]) == {"a": 1}
    writer.put_many({"b": 2})
    assert reader.get_many(["a", "b"]) == {"a": 1, "b": 2}


def test_clear_cache_counts_and_removes(tmp_path):
    ContentCache("nli", SETTINGS, tmp_path).put_many({"a": 1, "b": 2})
    ContentCache("statements", SETTINGS, tmp_path).put_many({"c": "C."})
    assert clear_cache(tmp_path, namespace="statements") == 1
    assert ContentCache("nli", SETTINGS, tmp_path).get_many(["a"]) == {"a": 1}
    assert clear_cache(tmp_path) == 2
    assert list(tmp_path.glob("*.sqlite3*")) == []
    assert clear_cache(tmp_path) == 0


def test_default_cache_dir_follows_environment(monkeypatch, tmp_path):
    monkeypatch.setenv("CAPLIB_CACHE_DIR", str(tmp_path / "c"))
    assert default_cache_dir() == tmp_path / "c"
    monkeypatch.delenv("CAPLIB_CACHE_DIR")
    assert default_cache_dir().parts[-2:] == (".cache", "caplib")


def test_bad_namespace_is_rejected(tmp_path):
    with pytest.raises(ValueError, match="namespace"):
        ContentCache("../escape", SETTINGS, tmp_path)


def _fill(directory, items=("a", "b")):
    cache = ContentCache("nli", {"m": 1}, directory=directory)
    cache.put_many({item: [float(len(item))] for item in items})
    cache.close()
    return directory / "nli.sqlite3"


@pytest.mark.parametrize("damage", ["overwritten", "truncated"])
def test_an_unreadable_cache_file_is_set_aside_and_recomputed(tmp_path, caplog, damage):
    from caplib.cache import cached_values

    path = _fill(tmp_path)
    for suffix in ("-wal", "-shm"):
        (tmp_path / f"nli.sqlite3{suffix}").unlink(missing_ok=True)
    if damage == "overwritten":
        path.write_bytes(b"not a database " * 200)
    else:
        path.write_bytes(path.read_bytes()[:1500])
    cache = ContentCache("nli", {"m": 1}, directory=tmp_path)
    with caplog.at_level("WARNING", logger="caplib"):
        values, stats = cached_values(cache, ["a", "ccc"], lambda todo: [[float(len(t))] for t in todo])
    assert values == [[1.0], [3.0]] and stats.computed == 2  # recomputed, same values, no traceback
    assert any("moved it aside" in record.getMessage() for record in caplog.records)
    assert list(tmp_path.glob("nli.sqlite3.corrupt-*"))
    assert cache.get_many(["a"]) == {"a": [1.0]}  # the fresh database works


@pytest.mark.parametrize("schema", ["CREATE TABLE entries (k TEXT, v TEXT)",
                                    "CREATE TABLE users (name TEXT); INSERT INTO users VALUES ('ada')"])
def test_another_programs_database_is_left_exactly_as_it_is(tmp_path, caplog, schema):
    """Issue 34, item 8: scoring added its table to a foreign database found at nli.sqlite3 (and one with a table
    named entries was moved aside, where `cache clear` would then delete it)."""
    from caplib.cache import cached_values

    path = tmp_path / "nli.sqlite3"
    with sqlite3.connect(path) as connection:
        connection.executescript(schema)
    connection.close()
    before = path.read_bytes()
    cache = ContentCache("nli", {"m": 1}, directory=tmp_path)
    with caplog.at_level("WARNING", logger="caplib"):
        for _ in range(2):
            values, stats = cached_values(cache, ["a", "ccc"], lambda todo: [[float(len(t))] for t in todo])
            assert values == [[1.0], [3.0]] and stats.computed == 2  # computed, never cached there
    assert path.read_bytes() == before and sorted(p.name for p in tmp_path.iterdir()) == ["nli.sqlite3"]
    assert [record.getMessage().split(" (")[0] for record in caplog.records] == [
        f"cache {path} is another program's SQLite database"]


def test_an_unusable_cache_directory_is_one_warning_for_all_its_caches(tmp_path, caplog):
    """Issue 34, smaller: the cache-unusable warning printed three times (once per cache: nli, baselines, ...)."""
    from caplib.cache import cached_values

    (tmp_path / "afile").write_text("x")
    with caplog.at_level("WARNING", logger="caplib"):
        for namespace in ("nli", "baselines", "statements"):
            cache = ContentCache(namespace, {}, directory=tmp_path / "afile")
            assert cached_values(cache, ["a"], lambda todo: [t.upper() for t in todo])[0] == ["A"]
    assert [record.getMessage().split(" (")[0] for record in caplog.records] == [
        f"cache directory {tmp_path / 'afile'} is unusable"]


def test_an_unusable_cache_directory_degrades_to_no_cache(tmp_path, caplog):
    from caplib.cache import cached_values

    (tmp_path / "afile").write_text("x")
    cache = ContentCache("nli", {}, directory=tmp_path / "afile")
    with caplog.at_level("WARNING", logger="caplib"):
        values, stats = cached_values(cache, ["a", "a"], lambda todo: [t.upper() for t in todo])
        values_again, _ = cached_values(cache, ["a"], lambda todo: [t.upper() for t in todo])
    assert values == ["A", "A"] and values_again == ["A"] and stats.computed == 1
    assert sum("continuing without a cache" in record.getMessage() for record in caplog.records) == 1


def test_a_locked_database_is_not_mistaken_for_a_corrupt_one(tmp_path):
    from caplib.cache import _unreadable

    assert not _unreadable(sqlite3.OperationalError("database is locked"))
    assert _unreadable(sqlite3.DatabaseError("file is not a database"))
