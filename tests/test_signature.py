"""caplib.signature: format, parse, compare; and that every scorer's signature reads back as it was written."""

from __future__ import annotations

import pytest

from caplib.baselines import METRICS, signature
from caplib.signature import Signature


def test_format_and_parse_round_trip():
    text = "cap|caplib:0.1.0|nli:builtin:offline-nli#sha256:abc|rev:local|statements:template|caplib:0.1.0|alpha:0.85"
    parsed = Signature.parse(text)
    assert parsed.name == "cap" and parsed.value is None
    assert parsed["nli"] == "builtin:offline-nli#sha256:abc"  # split at the first colon only
    assert [key for key, _ in parsed.fields].count("caplib") == 2  # keys may repeat: fields keep their order
    assert parsed.format() == text and str(parsed) == text


def test_a_head_with_a_value():
    nli = Signature.parse("nli:m@0123|rev:main|dtype:float16")
    assert (nli.name, nli.value, nli["dtype"]) == ("nli", "m@0123", "float16")
    assert Signature("cap", nli.as_fields()).format() == "cap|nli:m@0123|rev:main|dtype:float16"


def test_equality_and_differences():
    a = Signature.parse("bleu|nltk:3.10.4|smooth:method1")
    assert a == Signature.of("bleu", {"nltk": "3.10.4", "smooth": "method1"}) and a.differences(a) == []
    b = Signature.parse("bleu|nltk:3.10.4|smooth:none|order:4")
    assert a != b
    assert a.differences(b) == ["smooth: method1 != none", "order: <missing> != 4"]


@pytest.mark.parametrize("bad", ["", "a|b", "a|:x"])
def test_malformed_text_is_rejected(bad):
    with pytest.raises(ValueError):
        Signature.parse(bad)


def test_values_cannot_break_the_format():
    with pytest.raises(ValueError):
        Signature("m", (("path", "a|b"),))
    with pytest.raises(KeyError, match="no field 'x'"):
        Signature("m")["x"]


@pytest.mark.parametrize("metric", ["bleu", "rouge_l", "em", "acc"])
def test_baseline_signatures_read_back(metric):
    written = signature(metric)
    assert written.name == metric and Signature.parse(written.format()) == written
    assert set(METRICS[metric].describe(**{**METRICS[metric].defaults})) == {key for key, _ in written.fields}
