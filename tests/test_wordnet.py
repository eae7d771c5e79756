"""Tests of caplib.wordnet: WordNet for nltk's METEOR, from nltk's download or Debian's wordnet-base."""

from __future__ import annotations

import gzip
import time

import pytest

from caplib import wordnet

WORDNET_READY = pytest.mark.skipif(
    not wordnet.wordnet_loads(), reason="WordNet not provisioned: run `python -m caplib.baselines provision-wordnet`"
)


@pytest.mark.skipif(not wordnet.DEBIAN_LEXNAMES_MAN_PAGE.is_file(), reason="wordnet-base man page not installed")
def test_lexnames_from_the_debian_man_page():
    lines = wordnet.lexnames_from_man_page().splitlines()
    assert len(lines) == 45
    # WordNet 3.0 lexnames: number, lexicographer file, syntactic category (1 noun, 2 verb, 3 adj, 4 adv)
    assert lines[0] == "00\tadj.all\t3"
    assert lines[2] == "02\tadv.all\t4"
    assert lines[3] == "03\tnoun.Tops\t1"
    assert lines[18] == "18\tnoun.person\t1"  # trailing blanks in the man page are dropped
    assert lines[29] == "29\tverb.body\t2"
    assert lines[44] == "44\tadj.ppl\t3"


def test_lexnames_rejects_a_truncated_table(tmp_path):
    page = tmp_path / "lexnames.5WN.gz"
    with gzip.open(page, "wt") as handle:
        handle.write(".TS\n00\tadj.all\tall adjective clusters\n01\tadj.pert\trelational adjectives\n.TE\n")
    with pytest.raises(ValueError, match="00..44"):
        wordnet.lexnames_from_man_page(page)


@pytest.mark.slow
@pytest.mark.skipif(
    not (wordnet.DEBIAN_WORDNET_DIR / "index.sense").is_file() or not wordnet.DEBIAN_LEXNAMES_MAN_PAGE.is_file(),
    reason="Debian wordnet-base + wordnet-sense-index not installed",
)
def test_debian_wordnet_copy_loads_in_nltk(tmp_path, monkeypatch):
    import nltk
    from nltk.corpus.reader import WordNetCorpusReader

    monkeypatch.setattr(nltk.data, "path", [*nltk.data.path, str(tmp_path)])  # nltk reads only its data roots

    root = wordnet.install_debian_wordnet(
        wordnet.DEBIAN_WORDNET_DIR, wordnet.DEBIAN_LEXNAMES_MAN_PAGE, tmp_path / "corpora"
    )
    assert not any(path.is_symlink() for path in root.iterdir())
    reader = WordNetCorpusReader(str(root), None)
    car = reader.synset("car.n.01")
    assert "automobile" in car.lemma_names()
    assert car.lexname() == "noun.artifact"  # read through the regenerated lexnames
    assert reader.get_version() == "3.0"


@WORDNET_READY
def test_provision_wordnet_is_idempotent(monkeypatch):
    def no_network(*args, **kwargs):
        raise AssertionError("provision_wordnet must not download or install when WordNet already loads")

    monkeypatch.setattr(wordnet, "_nltk_download", no_network)
    monkeypatch.setattr(wordnet, "_apt_install_wordnet", no_network)
    started = time.monotonic()
    wordnet.provision_wordnet()
    assert time.monotonic() - started < 5
