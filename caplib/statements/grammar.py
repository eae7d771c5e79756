"""English lexicon and grammar helpers of the rule-based statement generator (:mod:`caplib.statements.template`).

The closed word lists live in ``template_words.json`` beside this module (package data) and are loaded once at
import; the helpers inflect verbs, find a question's subject and verb, and tidy an answer to fit into a sentence.

Example:
    >>> past("stop"), third_person("carry"), gerund("die"), inflect("Write", "past")
    ('stopped', 'carries', 'dying', 'Wrote')
    >>> split_base_verb("the moon orbit the Earth".split())
    (['the', 'moon'], 'orbit', ['the', 'Earth'])
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from importlib.resources import files
from types import MappingProxyType

_WORDS = json.loads(files("caplib.statements").joinpath("template_words.json").read_text(encoding="utf-8"))


def _words(key: str) -> frozenset[str]:
    return frozenset(_WORDS[key])


DETERMINERS = _words("determiners")
NUMBER_WORDS = _words("number_words")
DO: Mapping[str, str] = MappingProxyType({"do": "base", "does": "3sg", "did": "past"})
BE = _words("be")
MODALS = _words("modals")
HAVE = _words("have")
AUX = BE | MODALS | HAVE | frozenset(DO)
PREPOSITIONS = _words("prepositions")
SUBORDINATORS = _words("subordinators")
WH = _words("wh")
FUNCTION_WORDS = (DETERMINERS | NUMBER_WORDS | AUX | PREPOSITIONS | SUBORDINATORS | WH
                  | _words("other_function_words"))
PRONOUNS = _words("pronouns")
# Adverbs that sit between a subject and its verb ("Which company originally developed ...").
ADVERBS = _words("adverbs")
INTENSIFIERS = _words("intensifiers")
# Nouns after "What ..." that name an attribute of the subject ("What colour is the sky?" -> "The sky is blue.").
ATTRIBUTE_NOUNS = _words("attribute_nouns")
STATEMENT_NOUNS = _words("statement_nouns")
COLOURS = _words("colours")
SEASONS = _words("seasons")
MONTHS = _words("months")
# Common adjectives that can end a predicate ("Why is the sky blue?"); suffixes below catch most others.
ADJECTIVES = _words("adjectives") | COLOURS
ADJECTIVE_SUFFIXES: tuple[str, ...] = tuple(_WORDS["adjective_suffixes"])
COMMON_SUFFIXES: tuple[str, ...] = tuple(_WORDS["common_suffixes"])
# A small closed list of words that are common nouns although answers capitalise them (for lower-casing).
COMMON_NOUNS = _words("common_nouns")
BASE_VERBS = _words("base_verbs")
# base: (past, past participle); regular verbs are inflected by rule.
IRREGULAR: Mapping[str, tuple[str, str]] = MappingProxyType(
    {base: (forms[0], forms[1]) for base, forms in _WORDS["irregular_verbs"].items()})
IRREGULAR_PARTICIPLES = frozenset(participle for _, participle in IRREGULAR.values())
# Words ending in -ed that are not participles.
ED_WORDS = _words("ed_words")


def bare(token: str) -> str:
    """A token's bare lower-case word (punctuation around it removed)."""
    return token.strip(",;:!?.\"'()").lower()


def join_words(tokens: Sequence[str]) -> str:
    return " ".join(token for token in tokens if token)


def third_person(verb: str) -> str:
    special = {"be": "is", "have": "has", "do": "does", "go": "goes"}
    if verb in special:
        return special[verb]
    if re.search(r"(?:s|sh|ch|x|z|o)$", verb):
        return verb + "es"
    if re.search(r"[^aeiou]y$", verb):
        return verb[:-1] + "ies"
    return verb + "s"


def past(verb: str) -> str:
    if verb in IRREGULAR:
        return IRREGULAR[verb][0]
    if verb.endswith("e"):
        return verb + "d"
    if re.search(r"[^aeiou]y$", verb):
        return verb[:-1] + "ied"
    if re.fullmatch(r"[^aeiou]*[aeiou][^aeiouwxy]", verb):  # one-syllable CVC: stop -> stopped
        return verb + verb[-1] + "ed"
    return verb + "ed"


def gerund(verb: str) -> str:
    if verb.endswith("ie"):
        return verb[:-2] + "ying"
    if verb.endswith("e") and not verb.endswith(("ee", "ye", "oe")):
        return verb[:-1] + "ing"
    if re.fullmatch(r"[^aeiou]*[aeiou][^aeiouwxy]", verb):
        return verb + verb[-1] + "ing"
    return verb + "ing"


def inflect(verb: str, form: str) -> str:
    """``verb`` (base form, original casing of the first letter kept) in ``form``: base, 3sg or past."""
    base = verb.lower()
    inflected = {"base": base, "3sg": third_person(base), "past": past(base)}[form]
    return inflected[0].upper() + inflected[1:] if verb[:1].isupper() else inflected


def finite_base(word: str) -> str | None:
    """The base form of a known verb when ``word`` is one of its finite forms (base, -s, past)."""
    return _FINITE_FORMS.get(bare(word))


# Finite form -> base form of every known verb; a base form wins over another verb's past ('lay' stays lay, not lie).
_FINITE_FORMS: Mapping[str, str] = MappingProxyType({
    **{form: base for base in sorted(BASE_VERBS) for form in (third_person(base), past(base))},
    **{base: base for base in BASE_VERBS},
})


def is_participle(word: str) -> bool:
    word = bare(word)
    if word in ED_WORDS:
        return False
    if word in IRREGULAR_PARTICIPLES:
        return True
    base = finite_base(word)
    return (base is not None and word == past(base) != base) or (len(word) > 4 and word.endswith("ed"))


def is_adjective(word: str) -> bool:
    word = bare(word)
    return word in ADJECTIVES or (len(word) > 5 and word.endswith(ADJECTIVE_SUFFIXES))


def after_modifier(tokens: Sequence[str], index: int) -> bool:
    """True when ``tokens[index]`` directly follows a determiner, preposition or possessive (so it is no verb)."""
    if index == 0:
        return False
    previous = tokens[index - 1]
    return bare(previous) in DETERMINERS | PREPOSITIONS or previous.endswith(("'s", "s'"))


def split_base_verb(tokens: Sequence[str]) -> tuple[list[str], str, list[str]] | None:
    """Split 'SUBJECT VERB REST' after do/modal inversion, where VERB is in base form.

    The verb is the first known base verb after the first word that does not directly follow a
    determiner, preposition or possessive. Without one, the subject is 'determiner + noun', a run of
    capitalised words ('Louis Armstrong') or one word, followed by any -ly adverbs.
    """
    tokens = list(tokens)
    for index in range(1, len(tokens)):
        if bare(tokens[index]) in BASE_VERBS and not after_modifier(tokens, index):
            return tokens[:index], tokens[index], tokens[index + 1:]
    index = 2 if tokens and bare(tokens[0]) in DETERMINERS and len(tokens) > 2 else 1
    while index < len(tokens) - 1 and tokens[index][:1].isupper() and tokens[index - 1][:1].isupper():
        index += 1
    while index < len(tokens) - 1 and bare(tokens[index]).endswith("ly"):
        index += 1
    if len(tokens) <= index:
        return None
    return tokens[:index], tokens[index], tokens[index + 1:]


def split_be(tokens: Sequence[str], yes_no: bool = False) -> tuple[list[str], list[str]]:
    """Split 'SUBJECT PREDICATE' after be-inversion ('Where is the tower located' -> the tower | located).

    The predicate starts at the last participle, else at the first adjective or intensifier; for yes/no
    questions also at a determiner, number or preposition ('Is water a compound'). No marker: all subject.
    """
    tokens = list(tokens)
    candidates = [i for i in range(1, len(tokens)) if not after_modifier(tokens, i)]
    participles = [i for i in candidates if is_participle(tokens[i])]
    if participles:
        return tokens[:participles[-1]], tokens[participles[-1]:]
    for index in candidates:
        word = bare(tokens[index])
        if is_adjective(word) or (word in INTENSIFIERS and index + 1 < len(tokens)):
            return tokens[:index], tokens[index:]
        if yes_no and (word in DETERMINERS | PREPOSITIONS or word in NUMBER_WORDS or word[:1].isdigit()):
            return tokens[:index], tokens[index:]
    return tokens, []


_ANSWER_ABBREVIATION = re.compile(r"(?:\b[A-Za-z]\.|\b(?:etc|Inc|Ltd|Co|Jr|Sr|St|Dr|Mr|Mrs|Ms|vs)\.)$")


def strip_answer(answer: str) -> str:
    answer = " ".join(answer.split())
    while answer and answer[-1] in ".!;," and not _ANSWER_ABBREVIATION.search(answer):
        answer = answer[:-1].rstrip()
    return answer


def lower_first(text: str, sentence: bool = False) -> str:
    """Lower-case the first letter of an answer placed mid-sentence, unless it looks like a proper noun.

    Lowered: function words (The, A, It, ...), numbers, colours, a closed list of common science nouns,
    words with a common-noun suffix (-ing, -tion, -ology, -ism, ...), the first word of a multi-word
    answer whose other words are lower case ('Blue whale'), and the first word of a sentence-like answer
    (``sentence``). Kept: all-caps words, words with inner capitals or digits, and other capitalised
    words ('Paris', 'Great Barrier Reef'), which without a lexicon cannot be told from common nouns
    ('Oxygen' is listed, 'Honey' stays capitalised).
    """
    words = text.split()
    if not words:
        return text
    first = words[0]
    if not (first[:1].isupper() and first[1:] == first[1:].lower() and first.replace("-", "").isalpha()):
        return text
    lowered = first.lower()
    rest_lower = len(words) > 1 and all(not w[:1].isupper() for w in words[1:] if w[:1].isalpha())
    common = (lowered in DETERMINERS | PRONOUNS | PREPOSITIONS | NUMBER_WORDS | COLOURS | COMMON_NOUNS | AUX
              or lowered in BASE_VERBS or lowered in SEASONS or lowered.endswith(COMMON_SUFFIXES))
    if common or rest_lower or sentence:
        return first[:1].lower() + text[1:]
    return text


def cap_first(text: str) -> str:
    first = text.split(" ", 1)[0]
    if text[:1].islower() and not any(c.isupper() for c in first[1:]):
        return text[:1].upper() + text[1:]
    return text


def finish(text: str) -> str:
    """Tidy whitespace and punctuation, capitalise, and end with exactly one period."""
    text = " ".join(text.split())
    text = re.sub(r"\s+([,;:.!?])", r"\1", text)
    text = re.sub(r"([,;:])\1+", r"\1", text)
    text = text.rstrip(" ,;:-–—")
    text = re.sub(r"[?!]+$", "", text).rstrip()
    text = re.sub(r"(?:…|\.{2,})$", "", text).rstrip()
    if not text.endswith("."):
        text += "."
    return cap_first(text)


def is_clause(answer: str) -> bool:
    """Whether an answer is itself a clause ('Planetary days will become shorter', 'it melts', 'bubbles form')."""
    words = answer.split()
    if len(words) < 2:
        return False
    if bare(words[0]) in PRONOUNS - {"there"} or (bare(words[0]) == "there" and bare(words[1]) in BE):
        return True
    for index in range(1, len(words)):
        word = bare(words[index])
        previous = words[index - 1]
        if after_modifier(words, index) or (bare(previous) in BASE_VERBS and index == 1) \
                or previous.endswith(",") or bare(previous).endswith("ly"):
            continue  # 'commonly called', 'Tower, called': participles modifying a noun
        if word in AUX:
            return True
        base = finite_base(word)
        if base is not None and (word != base or (index == 1 and bare(words[0]).endswith("s"))):
            return True
    return False


def sentence_like(answer: str) -> bool:
    return answer.rstrip().endswith((".", "!")) and len(answer.split()) >= 3


def fit_fill(before: list[str], fill: str, name_follows: bool = False) -> tuple[list[str], str]:
    """Fit an answer placed after the words ``before``: drop a repeated article ('the… The giraffe'), agree
    'a'/'an', and lower-case a single capitalised word after an article, a lower-case modifier, 'called' or
    'as' ('a… Pride', 'the electric… Guitar', 'known as… Autotrophs'): there it is almost always a common noun,
    unless a capitalised word follows the blank (``name_follows``: 'The ___ Ocean').
    """
    if not before or not fill:
        return before, fill
    last = bare(before[-1])
    words = fill.split(" ", 1)
    if last in ("a", "an", "the") and bare(words[0]) in ("a", "an", "the") and len(words) > 1:
        fill = words[1]
    modifier = (before[-1].isalpha() and before[-1].islower() and last not in FUNCTION_WORDS
                and finite_base(last) is None)
    if (last in ("a", "an", "the", "called", "as") or modifier) and " " not in fill and fill.isalpha() \
            and fill[1:].islower() and not name_follows:
        fill = fill.lower()
    if last in ("a", "an") and fill[:1].isalpha() and fill[:1].lower() not in "hu":
        wanted = "an" if fill[:1].lower() in "aeio" else "a"
        if wanted != last:
            before = before[:-1] + [wanted if before[-1].islower() else wanted.capitalize()]
    return before, fill


def answer_phrase(kind: str, answer: str) -> str | None:
    """The answer as an adverbial for where/when/why/how questions ('in Paris', 'because of gravity')."""
    first = bare(answer.split()[0])
    clause = is_clause(answer)
    if kind == "where":
        return answer if first in PREPOSITIONS else f"in {answer}"
    if kind == "when":
        if first in PREPOSITIONS | SUBORDINATORS | {"every", "each", "around", "about"}:
            return answer
        if (re.fullmatch(r"\d{3,4}s?(?: (?:BC|BCE|AD|CE))?", answer) or first in MONTHS | SEASONS
                or re.match(r"the \d+(?:st|nd|rd|th|s)\b", answer, re.IGNORECASE)):
            return f"in {answer}"
        return f"when {answer}" if clause else answer
    if kind == "why":
        if first in {"because", "due", "since", "as", "so", "to", "in"}:
            return answer
        return f"because {answer}" if clause else f"because of {answer}"
    # how (manner)
    if first in PREPOSITIONS | {"using", "via"}:
        return answer
    if first.endswith("ing"):
        return f"by {answer}"
    words = answer.split()
    if finite_base(first) == first and first not in FUNCTION_WORDS:  # 'Put the tube in water' -> 'by putting ...'
        return join_words(["by", gerund(first)] + words[1:])
    if clause and first in ("it", "they", "he", "she") and finite_base(words[1]) is not None:
        return join_words(["by", gerund(finite_base(words[1]))] + words[2:])  # 'It lowers X' -> 'by lowering X'
    return None if clause else f"through {answer}"


def object_slot(tail: Sequence[str]) -> int:
    """Where an object answer goes in the words after the verb: after the last stranded preposition, else first.

    A preposition is stranded when it ends the question or another preposition follows it
    ('depend on for energy' -> 'depend on ANSWER for energy', 'add up to' -> 'add up to ANSWER').
    """
    slot = 0
    for index, token in enumerate(tail):
        if bare(token) in PREPOSITIONS and (index == len(tail) - 1 or bare(tail[index + 1]) in PREPOSITIONS):
            slot = index + 1
    return slot


def declarative_subject(tokens: list[str]) -> list[str]:
    """Second person has no place in a statement (B.5 prompt): 'you' as subject becomes 'people'."""
    return ["people"] if [bare(t) for t in tokens] == ["you"] else tokens


def clause_after_aux(aux: str, rest: Sequence[str]) -> tuple[list[str], list[str], list[str]] | None:
    """Undo subject-aux inversion: returns (subject, verb group, tail) of 'AUX SUBJECT VERB TAIL'."""
    aux_word = bare(aux)
    if aux_word in DO or aux_word in MODALS:
        split = split_base_verb(rest)
        if split is None:
            return None
        subject, verb, tail = split
        if aux_word in DO:
            form = "base" if declarative_subject(subject) != subject else DO[aux_word]
            return declarative_subject(subject), [inflect(verb, form)], tail
        return declarative_subject(subject), [aux_word, verb], tail
    if aux_word in BE | HAVE:
        subject, predicate = split_be(rest)
        return declarative_subject(subject), [aux_word], predicate
    return None


def with_object(subject: list[str], verb: list[str], tail: list[str], aux: str, answer: str) -> str:
    """Put an object answer into 'SUBJECT VERB TAIL'; 'do' is replaced by a verb-phrase answer."""
    words = answer.split()
    first = bare(words[0]) if words else ""
    if bare(verb[-1]) in ("do", "does", "did") and first and first not in FUNCTION_WORDS | PRONOUNS \
            and not first[:1].isdigit():
        if finite_base(first) == first and bare(aux) in DO:
            words[0] = inflect(first, "base" if declarative_subject(subject) != subject else DO[bare(aux)])
        else:
            words[0] = first
        return join_words(subject + verb[:-1] + words + tail)
    if is_clause(answer):  # 'What does the fossil suggest about the area?' + 'it was once under the sea'
        return join_words(subject + verb + tail + ["that", answer])
    slot = object_slot(tail)
    return join_words(subject + verb + tail[:slot] + [answer] + tail[slot:])


def agree_be(be: str, subject: str) -> str:
    """'is'/'was' -> 'are'/'were' before a plural-looking answer subject ('The kidneys', 'plums and pears')."""
    words = subject.split()
    plural = " and " in subject or (words[-1].islower() and re.search(r"[^su]s$", words[-1]) is not None
                                    and finite_base(words[-1]) is None)
    return {"is": "are", "was": "were"}.get(be, be) if plural else be


def wh_phrase(tokens: list[str]) -> tuple[list[str], int]:
    """The noun phrase after what/which (skipping 'of the following'), and the index of what follows it."""
    index = 1
    lowered = [bare(t) for t in tokens]
    for skip in (["of", "the", "following"], ["of", "these"], ["of", "those"], ["one", "of", "the", "following"],
                 ["one", "of", "these"], ["one"]):
        if lowered[index:index + len(skip)] == skip:
            index += len(skip)
            break
    start = index
    while index < len(tokens):
        word = lowered[index]
        if word in AUX or (index > start and (finite_base(word) is not None or is_participle(word))):
            break
        if index == 1 and finite_base(word) is not None and word != finite_base(word):
            break  # 'What causes ...': a finite verb right after the wh-word
        index += 1
    if index == len(tokens):  # no known verb: take the first later word in -s/-ed as the verb ('lowers')
        index = next((i for i in range(start + 1, len(tokens)) if re.search(r"[^s]s$|ed$", lowered[i])), index)
    noun_phrase = tokens[start:index]
    while noun_phrase and bare(noun_phrase[-1]) in ADVERBS:  # 'Which company originally developed ...'
        noun_phrase = noun_phrase[:-1]
        index -= 1
    return noun_phrase, index
