"""Atomic units of a statement: the decomposition that Sec. 9 names as the fix of the OV / partial artefact.

Whole-statement NLI cannot tell "the gold plus a valid extra" from "part of the gold" (Sec. 7.3, App. E): the
extra makes the gold -> prediction direction neutral. Scoring each *unit* of a statement separately (FActScore's
atomic facts; Q-CARE's answer claims, which are likewise self-contained statements) exposes which gold units an
answer covers and which of its own units the gold supports (:mod:`caplib.cap_decomposed`).

:class:`RuleDecomposer` splits a declarative statement with closed-class word lists and nltk's data-free
tokenizers (no tagger, no model; deterministic). Rules, in the order they are tried on each piece, every piece
split again until no rule applies:

=============  =====================================================================================
``sentences``  several sentences: one unit each (:func:`split_sentences`).
``clauses``    independent clauses joined by ``;`` or ``, and|but|yet|whereas|while`` + a clause with its
               own subject: one unit per clause.
``causes``     ``X because Y`` / ``X, since Y`` / ``X, so Y`` / ``Because Y, X``: ``X`` and ``Y``.
``relatives``  ``... NP, which|who VP ...`` and restrictive ``NP which|that VP``: the sentence without the
               relative clause, and ``NP VP``; an object relative opened by a pronoun or determiner
               (``..., which the animals eat``), ``subject verb NP [word]``.
``appositions`` ``NP, the|a|an ..., VP``: the sentence without the apposition, and ``NP is ...``.
``extensions`` a comma-set participle or prepositional phrase (``, given off as ...``, ``, through ...``) and
               ``because of|due to|such as|including|as in|for example ...``: the sentence without it, and
               the sentence with it (the extension, kept in its frame).
``lists``      ``A, B(,) and C`` / ``A and B``: the frame once per item (``Paris and Rome are cities in Europe.``
               -> ``Paris is a city in Europe.``, ``Rome is a city in Europe.``; a plural verb and predicate
               noun right after a subject list are made singular).
=============  =====================================================================================

What never splits: ``or`` (a disjunction asserts no item); a coordination or cause in the scope of a preceding
negation (``not``, ``n't``, ``no``, ``never``, ``neither``, ``nor``, ``without``, ``cannot``); lists of
sentences with collective predicates (``together``, ``between``, ``mixture``, ``ratio``, ``combine``...);
coordinated verb phrases (their extent is ambiguous without a parser); ``that`` after verbs of saying and
knowing (a complement clause, not a relative).

Limits of rules without a tagger (word lists stand in for parts of speech): a relative clause's antecedent is
guessed (the noun phrase from the last determiner, else the last word), and an object relative with a bare
subject (``which animals eat``) reads as a subject relative; a lower-case word ending in -s or -ed is
read as a verb, so an extension marker inside a plural subject (``Body wastes such as urea leave ...``) may be cut
at the wrong place; a fixed phrase (``rock and roll``) splits unless the question names it.

With the question (``decompose(statement, question)``), a unit keeps the question's frame: lists made only of
the question's own words (``The skin, lungs, and kidneys work together to ...``) are frame, not answer, and are
not split, and a unit made only of the question's words (the frame without the answer) is dropped. A statement
with fewer than two units comes back as itself, ``[statement]``.

Against a reference (:func:`insertion_units`, used by :mod:`caplib.cap_decomposed` when the rules leave a
statement whole): a statement that is another plus inserted words (``... tropical forests with thin soils.``
against ``... tropical forests.``) has two units, the part it shares with the other and itself; an insertion
that holds a negation is a change of meaning, not an extension, and does not split.

A model-based decomposer plugs in through :class:`Decomposer` (``decompose(statements, questions)`` and
``signature()``).

Example:
    >>> decompose("Paris, Rome and Sofia are cities in Europe.")
    ['Paris is a city in Europe.', 'Rome is a city in Europe.', 'Sofia is a city in Europe.']
    >>> decompose("Plants make sugar, which the animals eat.")
    ['Plants make sugar.', 'The animals eat sugar.']
    >>> decompose("A plant left in the dark does not grow and does not flower.")
    ['A plant left in the dark does not grow and does not flower.']
"""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from caplib.signature import Signature
from caplib.text import normalize_text

__all__ = ["RULES", "RULES_VERSION", "Decomposer", "RuleDecomposer", "decompose", "insertion_units",
           "split_sentences"]

#: The rules of :class:`RuleDecomposer`, in the order they are tried (module docstring).
RULES: tuple[str, ...] = ("sentences", "clauses", "causes", "relatives", "appositions", "extensions", "lists")
#: Bumped whenever a rule changes what it splits (part of the signature).
RULES_VERSION = "1"

_DETERMINERS = frozenset("a an the this these those its their his her our my your each every some another".split())
_AUXILIARIES = frozenset("is are was were be been being am has have had do does did can could will would may might "
                         "must shall should".split())
_PREPOSITIONS = frozenset("in on at for to from by with without into onto through via during before after under "
                          "over between among around about against within across along toward towards upon near "
                          "like than as".split())
_CONJUNCTIONS = frozenset("and or but nor yet so because since while whereas although though if when".split())
_PRONOUNS = frozenset("it they he she we i you there this these those".split())
_NEGATIONS = frozenset("not n't no never neither nor none nothing cannot without".split())
_COLLECTIVE = frozenset("together between among mixture mixtures mix mixed ratio combine combined combines "
                        "combination compound react reacts interact interacts versus vs".split())
_THAT_COMPLEMENT = frozenset("say says said show shows showed shown indicate indicates indicated mean means meant "
                             "suggest suggests suggested state states stated know knows knew believe believes "
                             "think thinks thought find finds found claim claims claimed so such than now fact "
                             "idea evidence likely true clear possible sure given ensure ensures assume "
                             "assumes".split())
_PARTICIPLES = frozenset("given driven made known found seen shown taken held built done grown written kept "
                         "caused formed produced measured controlled located used called".split())
_EXTENSION_PREPOSITIONS = frozenset("through via by with as like especially mainly mostly including "
                                    "particularly".split())
#: Extension markers that open an extension without a comma: (first word, second word or "").
_EXTENSION_MARKERS = (("because", "of"), ("due", "to"), ("such", "as"), ("including", ""), ("as", "in"),
                      ("for", "example"), ("for", "instance"), ("e.g.", ""))
_ADVERBS = frozenset("rather then also too instead only even mainly mostly".split())
_SINGULAR_VERBS = {"are": "is", "were": "was", "have": "has", "do": "does"}
_STOPWORDS = _DETERMINERS | _AUXILIARIES | _PREPOSITIONS | _CONJUNCTIONS | _PRONOUNS | frozenset(
    "of that which who not n't".split())
_ABBREVIATIONS = frozenset("e.g i.e dr mr mrs ms prof u.s u.k etc vs approx fig no st jr sr inc ltd co al "
                           "ca cf".split())
#: Longest list item, in tokens, that the list rule accepts (longer runs are clauses, not items).
_MAX_ITEM = 5


class Decomposer(Protocol):
    """Anything that splits statements into units (each unit itself a statement)."""

    def decompose(self, statements: Sequence[str], questions: Sequence[str] | None = None) -> list[list[str]]: ...

    def signature(self) -> Signature: ...


@functools.lru_cache(maxsize=1)
def _sentence_tokenizer():  # type: ignore[no-untyped-def]
    from nltk.tokenize.punkt import PunktParameters, PunktSentenceTokenizer

    parameters = PunktParameters()
    parameters.abbrev_types = set(_ABBREVIATIONS)
    return PunktSentenceTokenizer(parameters)


def split_sentences(text: str) -> list[str]:
    """The sentences of ``text``: nltk's Punkt with its default rules and a fixed list of abbreviations (no
    trained data, so the same split everywhere). Whitespace between sentences is dropped.

    Example:
        >>> split_sentences("Water boils at 100 degrees. Ice melts, e.g. in a glass.  Dr. Who agrees!")
        ['Water boils at 100 degrees.', 'Ice melts, e.g. in a glass.', 'Dr. Who agrees!']
    """
    if not isinstance(text, str):
        raise TypeError(f"expected a string, got {type(text).__name__} {text!r}")
    return [sentence.strip() for sentence in _sentence_tokenizer().tokenize(text) if sentence.strip()]


def _tokenize(sentence: str) -> list[str]:
    from nltk.tokenize import NLTKWordTokenizer

    return NLTKWordTokenizer().tokenize(sentence)


def _render(tokens: list[str]) -> str:
    """A unit as text: detokenized, no dangling commas, capitalized, ending in a full stop."""
    from nltk.tokenize.treebank import TreebankWordDetokenizer

    while tokens and tokens[-1] in {",", ";", ":", "."}:
        tokens = tokens[:-1]
    while tokens and tokens[0] in {",", ";", ":"}:
        tokens = tokens[1:]
    text = TreebankWordDetokenizer().detokenize(tokens).strip()
    text = re.sub(r"\s+,", ",", text)
    if not text:
        return ""
    return text[0].upper() + text[1:] + ("" if text[-1] in ".!?" else ".")


def _low(token: str) -> str:
    return token.lower()


def _verb_like(tokens: list[str], index: int) -> bool:
    """A finite-verb cue at ``index``: an auxiliary, or a lower-case word ending in -s/-ed that follows a word other
    than a determiner (no tagger: a heuristic)."""
    token = tokens[index]
    if _low(token) in _AUXILIARIES:
        return True
    return index > 0 and len(token) > 3 and token.isalpha() and token.islower() and token not in _STOPWORDS \
        and _low(tokens[index - 1]) not in _DETERMINERS and (token.endswith("ed") or (
            token.endswith("s") and not token.endswith(("ss", "us", "is"))))


def _has_verb(tokens: list[str]) -> bool:
    return any(_verb_like(tokens, index) for index in range(len(tokens)))


def _negated(tokens: list[str]) -> bool:
    return any(_low(t) in _NEGATIONS for t in tokens)


def _clause_start(tokens: list[str]) -> bool:
    return bool(tokens) and (_low(tokens[0]) in _PRONOUNS | _DETERMINERS or tokens[0][:1].isupper())


def _noun_phrase_before(tokens: list[str]) -> list[str]:
    """The noun phrase that ends ``tokens``: from its last determiner, else its trailing run of content words."""
    for index in range(len(tokens) - 1, max(-1, len(tokens) - 8), -1):
        if _low(tokens[index]) in _DETERMINERS:
            return tokens[index:]
        if _verb_like(tokens, index):
            break
    start = len(tokens) - 1  # no determiner: the last word, with the proper-noun words before it
    while start > 0 and tokens[start - 1][:1].isupper() and tokens[start][:1].isupper():
        start -= 1
    return tokens[start:]


def _phrase_end(tokens: list[str], start: int) -> int:
    """Index of the comma that closes a phrase opened at ``start``, or the end (before a final full stop)."""
    for index in range(start, len(tokens)):
        if tokens[index] in {",", ";"}:
            return index
    return len(tokens) - 1 if tokens and tokens[-1] in {".", "!", "?"} else len(tokens)


def _without(tokens: list[str], start: int, end: int) -> list[str]:
    """``tokens`` less ``tokens[start:end]`` and the comma that closed it."""
    rest = tokens[end + 1:] if end < len(tokens) and tokens[end] == "," else tokens[end:]
    return tokens[:start] + rest


def _rule_clauses(tokens: list[str]) -> list[list[str]] | None:
    for index, token in enumerate(tokens):
        left, right = tokens[:index], tokens[index + 1:]
        if token == ";" and len(left) >= 3 and len(right) >= 3:
            return [left, right]
        if token == "," and index + 1 < len(tokens) and _low(tokens[index + 1]) in {"and", "but", "yet", "whereas",
                                                                                   "while"}:
            right = tokens[index + 2:]
            if "," not in left and len(right) >= 3 and _clause_start(right) and _has_verb(right) \
                    and _has_verb(left):
                return [left, right]
    return None


def _rule_causes(tokens: list[str]) -> list[list[str]] | None:
    if tokens and _low(tokens[0]) == "because" and "," in tokens:
        comma = tokens.index(",")
        if not _negated(tokens[comma:]):
            return [tokens[comma + 1:], tokens[1:comma]]
    for index, token in enumerate(tokens[1:], start=1):
        word, after = _low(token), tokens[index + 1:]
        comma_before = tokens[index - 1] == ","
        cause = (word == "because" and after[:1] != ["of"]) or (word in {"since", "so"} and comma_before)
        if cause and len(after) >= 2 and _has_verb(after) and not _negated(tokens[:index]):
            left = tokens[:index - 1] if comma_before else tokens[:index]
            return [left, after]
    return None


def _rule_relatives(tokens: list[str]) -> list[list[str]] | None:
    for index, token in enumerate(tokens[1:], start=1):
        word, previous = _low(token), tokens[index - 1]
        nonrestrictive = word in {"which", "who"} and previous == ","
        restrictive = previous.isalpha() and _low(previous) not in _STOPWORDS | _THAT_COMPLEMENT and index + 1 < len(
            tokens) and (word == "which" or (word == "that" and (_low(tokens[index + 1]) in _AUXILIARIES or (
                tokens[index + 1].isalpha() and tokens[index + 1].islower() and _low(tokens[index + 1]) not in
                _STOPWORDS and (tokens[index + 1].endswith("ed") or tokens[index + 1].endswith("s"))))))
        if not (nonrestrictive or restrictive):
            continue
        end = _phrase_end(tokens, index + 1)
        clause = tokens[index + 1:end]
        head = tokens[:index - 1] if nonrestrictive else tokens[:index]
        if len(clause) < 1 or not head:
            continue
        antecedent = _noun_phrase_before(head)
        if _low(clause[0]) in _PRONOUNS | _DETERMINERS:  # an object relative: "..., which the animals eat"
            subject = 1 if _low(clause[0]) in _PRONOUNS else 2
            if len(clause) < subject + 1 or len(clause) > subject + 2:
                continue  # the verb's place is a guess beyond "subject verb [word]": no unit
            antecedent = [_low(t) if t[:1].isupper() and t.lower() in _DETERMINERS else t for t in antecedent]
            unit = [*clause[:subject + 1], *antecedent, *clause[subject + 1:]]
        else:
            unit = antecedent + clause
        return [_without(tokens, index - 1 if nonrestrictive else index, end), unit]
    return None


def _rule_appositions(tokens: list[str]) -> list[list[str]] | None:
    for index, token in enumerate(tokens[:-2]):
        if token != "," or _low(tokens[index + 1]) not in {"the", "a", "an"} or index == 0:
            continue
        if not tokens[index - 1].isalnum() or _low(tokens[index - 1]) in _STOPWORDS:
            continue
        end = _phrase_end(tokens, index + 1)
        segment = tokens[index + 1:end]
        closing_list = end + 1 < len(tokens) and _low(tokens[end + 1]) in {"and", "or"}
        lowered = {_low(t) for t in segment}
        verbs = [i for i in range(len(segment) - 1) if _verb_like(segment, i) and _low(segment[i + 1]) != "of"]
        if lowered & (_AUXILIARIES | {"and", "or", "that", "which", "who"}) or verbs or closing_list \
                or len(segment) < 2 or _low(tokens[0]) in _PREPOSITIONS:
            continue
        if end == len(tokens) or tokens[end] != ",":
            if not _has_verb(tokens[:index]):
                continue
        subject = _noun_phrase_before(tokens[:index])
        head = next((t for i, t in enumerate(segment) if i + 1 == len(segment) or _low(segment[i + 1]) in
                     _PREPOSITIONS | {"of"}), segment[-1])  # the apposition's head noun decides the number
        copula = "are" if head.islower() and _singular(head) != head else "is"
        return [_without(tokens, index, end), subject + [copula] + segment]
    return None


def _is_participle(token: str) -> bool:
    word = _low(token)
    return word in _PARTICIPLES or (len(word) > 4 and word.isalpha() and word.endswith(("ing", "ed")))


def _rule_extensions(tokens: list[str]) -> list[list[str]] | None:
    for index, token in enumerate(tokens[:-1]):
        opener = tokens[index + 1]
        if token == "," and index > 0 and (_is_participle(opener) or _low(opener) in _EXTENSION_PREPOSITIONS):
            end = _phrase_end(tokens, index + 1)
            if end - index > 1 and not _has_verb([t for t in tokens[index + 2:end] if not _is_participle(t)]):
                return [_without(tokens, index, end), [t for i, t in enumerate(tokens) if i != index
                                                       and not (i == end and t == "," and i + 1 < len(tokens))]]
        for first, second in _EXTENSION_MARKERS:
            if _low(token) == first and (not second or _low(opener) == second) and _has_verb(tokens[:index]):
                start = index - 1 if tokens[index - 1] == "," else index
                end = _phrase_end(tokens, index + 1)
                if end - index > (2 if second else 1):
                    return [_without(tokens, start, end), [t for i, t in enumerate(tokens) if i != start or t != ","]]
    return None


def _list_items(tokens: list[str], conjunction: int) -> tuple[int, int, list[list[str]]] | None:
    """(start, end, items) of the coordination whose last ``and`` is at ``conjunction``, or None."""
    stops = _STOPWORDS - {"of"} | _ADVERBS | {",", ";", ".", ":", "(", ")"}
    right_end = conjunction + 1
    while right_end < len(tokens) and _low(tokens[right_end]) not in stops - _DETERMINERS \
            and not (right_end > conjunction + 1 and _low(tokens[right_end]) in _DETERMINERS) \
            and right_end - conjunction <= _MAX_ITEM:
        right_end += 1
    last = tokens[conjunction + 1:right_end]
    if not last or right_end - conjunction > _MAX_ITEM or _is_participle(last[0]):
        return None
    items, cursor = [], conjunction - (1 if tokens[conjunction - 1] == "," else 0)
    while True:  # middle items, each closed by a comma on its left
        start = cursor
        while start > 0 and tokens[start - 1] != "," and cursor - start < _MAX_ITEM:
            start -= 1
        if start > 0 and tokens[start - 1] == "," and start < cursor and not _has_verb(tokens[start:cursor]) \
                and not {_low(t) for t in tokens[start:cursor]} & (_PREPOSITIONS | _AUXILIARIES):
            items.insert(0, tokens[start:cursor])
            cursor = start - 1
            continue
        break
    width = max(len(item) for item in [*items, last])
    start = cursor
    while start > 0 and cursor - start < width and _low(tokens[start - 1]) not in stops - _DETERMINERS | {"of"}:
        start -= 1
        if _low(tokens[start]) in _DETERMINERS:
            break
    first = tokens[start:cursor]
    if not first or _is_participle(first[0]):
        return None
    return start, right_end, [first, *items, last]


def _singular(word: str) -> str:
    if word.endswith("ies") and len(word) > 4:
        return word[:-3] + "y"
    if word.endswith(("ches", "shes", "sses", "xes")):
        return word[:-2]
    return word[:-1] if word.endswith("s") and not word.endswith("ss") else word


def _agree(tokens: list[str]) -> list[str]:
    """A subject item's sentence made singular: ``are cities in Europe`` -> ``is a city in Europe``."""
    verb = next((i for i, t in enumerate(tokens) if _low(t) in _SINGULAR_VERBS), None)
    if verb is None or any(_low(t) in _AUXILIARIES for t in tokens[:verb]):
        return tokens
    tokens = [*tokens[:verb], _SINGULAR_VERBS[_low(tokens[verb])], *tokens[verb + 1:]]
    end = verb + 1
    while end < len(tokens) and tokens[end].isalpha() and _low(tokens[end]) not in _STOPWORDS | {"of"}:
        end += 1
    if end == verb + 1 or _singular(tokens[end - 1]) == tokens[end - 1] or not tokens[end - 1].islower():
        return tokens
    article = [] if _low(tokens[verb + 1]) in _DETERMINERS else ["an" if tokens[verb + 1][0] in "aeiou" else "a"]
    return [*tokens[:verb + 1], *article, *tokens[verb + 1:end - 1], _singular(tokens[end - 1]), *tokens[end:]]


def _rule_lists(tokens: list[str], frame: frozenset[str]) -> list[list[str]] | None:
    lowered = [_low(t) for t in tokens]
    if set(lowered) & _COLLECTIVE:
        return None
    for index in range(len(tokens) - 1, 0, -1):
        if lowered[index] != "and" or _negated(tokens[:index]) or lowered[index - 1] in {"between", "both"}:
            continue
        found = _list_items(tokens, index)
        if found is None:
            continue
        start, end, items = found
        words = {normalize_text(t) for item in items for t in item if t.isalnum()} - _STOPWORDS
        if frame and words <= frame:
            continue  # the question's own list: frame, not answer
        subject = start == 0 or (start == 1 and lowered[0] in _DETERMINERS)
        units = [tokens[:start] + item + tokens[end:] for item in items]
        return [_agree(unit) if subject else unit for unit in units]
    return None


@dataclass(frozen=True)
class RuleDecomposer:
    """The rule-based decomposer of the module docstring; ``rules`` selects which rules run (default all).

    Example:
        >>> RuleDecomposer().split("The bulb gives off heat, which warms the room.")
        ['The bulb gives off heat.', 'Heat warms the room.']
        >>> str(RuleDecomposer(rules=("lists",)).signature())
        'decompose:rules|version:1|rules:lists'
    """

    rules: tuple[str, ...] = RULES

    def __post_init__(self) -> None:
        unknown = [rule for rule in self.rules if rule not in RULES]
        if unknown or not self.rules:
            raise ValueError(f"unknown decomposition rule(s) {unknown or list(self.rules)}; choose from {RULES}")

    def signature(self) -> Signature:
        """``decompose:rules|version:<RULES_VERSION>|rules:<rule+rule+...>``."""
        return Signature("decompose", (("version", RULES_VERSION), ("rules", "+".join(self.rules))), value="rules")

    def split(self, statement: str, question: str | None = None) -> list[str]:
        """The units of one statement (``[statement]`` when it has fewer than two)."""
        if not isinstance(statement, str):
            raise TypeError(f"a statement must be a string, got {type(statement).__name__} {statement!r}")
        frame = frozenset(normalize_text(question).split()) if question else frozenset()
        sentences = split_sentences(statement) if "sentences" in self.rules else [statement.strip()]
        pieces: list[list[str]] = []
        for sentence in sentences:
            pieces += self._split_tokens(_tokenize(sentence), frame, depth=0)
        units = list(dict.fromkeys(unit for unit in map(_render, pieces) if unit))
        if frame:
            units = [unit for unit in units if set(normalize_text(unit).split()) - _STOPWORDS - frame]
        return units if len(units) > 1 else [statement.strip()]

    def decompose(self, statements: Sequence[str], questions: Sequence[str] | None = None) -> list[list[str]]:
        """:meth:`split` of every statement (with its question, when given)."""
        statements = list(statements)
        if questions is not None and len(questions) != len(statements):
            raise ValueError(f"got {len(questions)} questions for {len(statements)} statements; give one per "
                             f"statement, or none")
        asked = [None] * len(statements) if questions is None else list(questions)
        return [self.split(statement, question) for statement, question in zip(statements, asked)]

    def _split_tokens(self, tokens: list[str], frame: frozenset[str], depth: int) -> list[list[str]]:
        rules = {"clauses": _rule_clauses, "causes": _rule_causes, "relatives": _rule_relatives,
                 "appositions": _rule_appositions, "extensions": _rule_extensions,
                 "lists": functools.partial(_rule_lists, frame=frame)}
        for name in self.rules:
            if name == "sentences":
                continue
            pieces = rules[name](tokens)
            if pieces and depth < 8 and all(pieces) and pieces[0] != tokens and (
                    name == "extensions" or all(piece != tokens for piece in pieces)):
                if name == "extensions":  # the extended sentence is the extension in its frame: not split again
                    return [*self._split_tokens(pieces[0], frame, depth + 1), pieces[1]]
                return [unit for piece in pieces for unit in self._split_tokens(piece, frame, depth + 1)]
        return [tokens]


def decompose(statement: str, question: str | None = None, decomposer: Decomposer | None = None) -> list[str]:
    """The units of ``statement`` (with the question's frame when ``question`` is given).

    Example:
        >>> decompose("Plants need water and light.", question="What do plants need?")
        ['Plants need water.', 'Plants need light.']
    """
    chosen = decomposer if decomposer is not None else RuleDecomposer()
    return chosen.decompose([statement], None if question is None else [question])[0]


def insertion_units(statement: str, reference: str) -> list[str]:
    """The units of ``statement`` against ``reference`` when it is the reference plus inserted words: the shared
    part, then the shared part with each insertion (token level, case-insensitive); else ``[statement]``. An
    insertion with a negation (``not``, ``never``...) or without a word does not split.

    Example:
        >>> insertion_units("Shifting cultivation is practiced in tropical forests with thin soils.",
        ...                 "Shifting cultivation is practiced in tropical forests.")
        ['Shifting cultivation is practiced in tropical forests.', \
'Shifting cultivation is practiced in tropical forests with thin soils.']
        >>> insertion_units("Ice does not melt when heated.", "Ice melts when heated.")
        ['Ice does not melt when heated.']
    """
    import difflib

    mine, theirs = _tokenize(statement), _tokenize(reference)
    operations = difflib.SequenceMatcher(None, [_low(t) for t in theirs], [_low(t) for t in mine],
                                         autojunk=False).get_opcodes()
    inserted = [(start, end) for tag, _, _, start, end in operations if tag != "equal"]
    if not inserted or any(tag not in ("equal", "insert") for tag, *_ in operations) or any(
            _negated(mine[start:end]) or not any(t.isalnum() for t in mine[start:end]) for start, end in inserted):
        return [statement.strip()]
    outside = [i for i in range(len(mine)) if not any(start <= i < end for start, end in inserted)]
    units = [_render([mine[i] for i in outside])]
    for start, end in inserted:
        units.append(_render([mine[i] for i in sorted([*outside, *range(start, end)])]))
    units = list(dict.fromkeys(unit for unit in units if unit))
    return units if len(units) > 1 else [statement.strip()]
