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
