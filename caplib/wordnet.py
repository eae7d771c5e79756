"""WordNet for nltk's METEOR (Sec. 6 baselines; ENVIRONMENT-NOTES.md, "WordNet for nltk's METEOR").

METEOR matches synonyms through WordNet. Where ``nltk.download`` cannot reach its server, Debian's
``wordnet-base`` has the same WordNet 3.0 database, which nltk reads once the files are copied into one of its
data roots and the ``lexnames`` file is rebuilt from the lexnames(5WN) man page. :func:`provision_wordnet` tries
those routes in order; ``python -m caplib.baselines provision-wordnet`` runs it (``make`` does, once).

Example:
    >>> provision_wordnet()  # doctest: +SKIP
    PosixPath('/work/main/.venv/nltk_data')
"""

from __future__ import annotations

import functools
import gzip
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

__all__ = [
    "DEBIAN_LEXNAMES_MAN_PAGE",
    "DEBIAN_WORDNET_DIR",
    "DEBIAN_WORDNET_PACKAGES",
    "WordNetMissing",
    "install_debian_wordnet",
    "lexnames_from_man_page",
    "provision_wordnet",
    "wordnet_loads",
    "wordnet_reader",
]


class WordNetMissing(RuntimeError):
    """nltk cannot load WordNet here (METEOR is then unavailable, never faked)."""



DEBIAN_WORDNET_PACKAGES = ("wordnet-base", "wordnet-sense-index")
DEBIAN_WORDNET_DIR = Path("/usr/share/wordnet")
DEBIAN_LEXNAMES_MAN_PAGE = Path("/usr/share/man/man5/lexnames.5WN.gz")
_WORDNET_FILES = ("data.*", "index.*", "*.exc", "cntlist*")
# lexnames(5WN), "Syntactic Category": NOUN 1, VERB 2, ADJECTIVE 3, ADVERB 4
_CATEGORY = {"noun": 1, "verb": 2, "adj": 3, "adv": 4}


def lexnames_from_man_page(man_page: Path = DEBIAN_LEXNAMES_MAN_PAGE) -> str:
    """WordNet's ``lexnames`` file (``NN<TAB>name<TAB>category``, 45 lines) rebuilt from the lexnames(5WN) man page.

    Example:
        >>> lexnames_from_man_page().splitlines()[3]  # doctest: +SKIP
        '03\\tnoun.Tops\\t1'
    """
    opener = gzip.open if man_page.suffix == ".gz" else open
    with opener(man_page, "rt", encoding="utf-8") as handle:
        text = handle.read()
    rows = re.findall(r"^(\d\d)\t\s*([a-z]+)\.(\w+)\s*\t", text, flags=re.MULTILINE)
    if [int(number) for number, _, _ in rows] != list(range(45)):
        raise ValueError(f"{man_page}: expected lexicographer files 00..44 in its table, found {len(rows)} rows")
    return "".join(f"{number}\t{pos}.{name}\t{_CATEGORY[pos]}\n" for number, pos, name in rows)


@functools.cache
def wordnet_reader() -> Any:
    """nltk's WordNet reader, loaded once per process (``wordnet_reader.cache_clear()`` forgets it).

    It is the reader ``nltk.corpus.wordnet`` gives, less one step of its loading: nltk (3.9, 3.10) maps WordNet 3.0
    onto the loaded WordNet for the Open Multilingual Wordnet on every load, even when the loaded one is 3.0 (it
    compares the version, "3.0", with the corpus name, "wordnet"). That map takes 3 of the 5 s a load takes here,
    and only the multilingual lookups read it; METEOR reads English synsets and lemmas, identical either way.

    Raises:
        WordNetMissing: nltk cannot load it; the message says how to install it.

    Example:
        >>> wordnet_reader().synset("car.n.01").lemma_names()[:2]  # WordNet 3.0, which `make` provisions
        ['car', 'auto']
    """
    import nltk
    from nltk.corpus.reader import CorpusReader, WordNetCorpusReader
    from nltk.corpus.util import LazyCorpusLoader

    class EnglishWordNet(WordNetCorpusReader):
        def map_wn(self, version: str = "wordnet") -> None:  # called in __init__ only, for the map above
            return None

    wordnet = LazyCorpusLoader("wordnet", EnglishWordNet,
                               LazyCorpusLoader("omw-2.0", CorpusReader, r".*/wn-data-.*\.tab", encoding="utf8"))
    try:
        wordnet.ensure_loaded()
    except (LookupError, OSError) as error:
        raise WordNetMissing(
            f"nltk cannot load WordNet ({type(error).__name__}; searched {', '.join(nltk.data.path)}). "
            "Run `python -m caplib.baselines provision-wordnet` once to install it"
        ) from None
    return wordnet


def wordnet_loads() -> bool:
    """Whether nltk can load WordNet now.

    Example:
        >>> wordnet_loads() in (True, False)
        True
    """
    try:
        wordnet_reader()
    except WordNetMissing:
        return False
    return True


def _nltk_download(target: Path, timeout: float) -> bool:
    """nltk.download in a child process, so that a network that drops packets cannot hang us past ``timeout``."""
    code = (
        "import sys, nltk; "
        f"sys.exit(0 if nltk.download('wordnet', download_dir={str(target)!r}, quiet=True, raise_on_error=True) else 1)"
    )
    try:
        done = subprocess.run([sys.executable, "-c", code], capture_output=True, timeout=timeout, check=False)
    except subprocess.TimeoutExpired:
        return False
    return done.returncode == 0


def _apt_install_wordnet() -> None:
    if os.geteuid() != 0 or shutil.which("apt-get") is None:
        raise RuntimeError(
            f"WordNet is missing: nltk.download('wordnet') failed (no network?) and {DEBIAN_WORDNET_DIR} is "
            f"incomplete. Fix: `sudo apt-get install {' '.join(DEBIAN_WORDNET_PACKAGES)}` (Debian/Ubuntu) and rerun "
            "`python -m caplib.baselines provision-wordnet`, or run nltk.download('wordnet') where the network allows."
        )
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    # wordnet-base has the database; nltk (3.9+) also reads index.sense at load, shipped by wordnet-sense-index
    install = ["apt-get", "install", "-y", "--no-install-recommends", *DEBIAN_WORDNET_PACKAGES]
    if subprocess.run(install, env=env, capture_output=True, check=False).returncode != 0:
        subprocess.run(["apt-get", "update"], env=env, capture_output=True, check=False)
        done = subprocess.run(install, env=env, capture_output=True, text=True, check=False)
        if done.returncode != 0:
            raise RuntimeError(f"`{' '.join(install)}` failed:\n{done.stderr.strip()}")


def install_debian_wordnet(source: Path, man_page: Path, corpora: Path) -> Path:
    """Copy Debian's WordNet 3.0 into ``corpora/wordnet`` (copies: nltk reads only its own data roots) + lexnames."""
    corpora.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix="wordnet.", dir=corpora))
    staging.chmod(0o755)
    for pattern in _WORDNET_FILES:
        for path in source.glob(pattern):
            shutil.copyfile(path, staging / path.name)
    (staging / "lexnames").write_text(lexnames_from_man_page(man_page), encoding="utf-8")
    destination = corpora / "wordnet"
    if destination.exists():  # a broken earlier copy (wordnet did not load)
        shutil.rmtree(destination)
    staging.rename(destination)
    return destination


def provision_wordnet(target: Path | None = None, download_timeout: float = 15.0) -> Path:
    """Make WordNet loadable by nltk (for METEOR); idempotent, returns the nltk data root used.

    1. nltk already loads WordNet: nothing to do.
    2. ``nltk.download('wordnet')`` into ``target``, given ``download_timeout`` seconds.
    3. Debian's ``wordnet-base`` + ``wordnet-sense-index`` (``apt-get install`` them when missing and
       we are root), copied into ``target/corpora/wordnet`` with ``lexnames`` rebuilt from the
       lexnames(5WN) man page.

    ``target`` defaults to ``sys.prefix/nltk_data`` (in the virtual environment, on nltk's default path).

    Example:
        >>> provision_wordnet()  # doctest: +SKIP
        PosixPath('/work/main/.venv/nltk_data')
    """
    import nltk

    target = Path(target) if target is not None else Path(sys.prefix) / "nltk_data"
    if str(target) not in nltk.data.path:  # a custom target must be searched (and, since nltk 3.10, allowed)
        nltk.data.path.append(str(target))
    if wordnet_loads():
        return target
    if not _nltk_download(target, download_timeout) or not wordnet_loads():
        if not (DEBIAN_WORDNET_DIR / "index.sense").is_file() or not DEBIAN_LEXNAMES_MAN_PAGE.is_file():
            _apt_install_wordnet()
        install_debian_wordnet(DEBIAN_WORDNET_DIR, DEBIAN_LEXNAMES_MAN_PAGE, target / "corpora")
    if not wordnet_loads():
        raise RuntimeError(f"WordNet was installed into {target / 'corpora'} but nltk still cannot load it")
    return target
