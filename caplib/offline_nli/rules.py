"""Text rules that turn a gold statement or answer into a related one: negation, narrower answer, antonym, type.

Each rule mimics one relation of the taxonomy (Tab. 18) and returns None where it does not apply
safely (under negation or a non-monotone quantifier a cut answer can change its truth).

Example:
    >>> negate("Plants cannot make sugar in the presence of light.")
    'Plants can make sugar in the presence of light.'
    >>> narrower_answer("make sugar in the presence of light")
    'make sugar'
"""

from __future__ import annotations

import random
import re

__all__ = ["antonym_swap", "lower_first", "narrower_answer", "negate", "question_type", "surface_variant"]

_NEGATION = re.compile(r"\b(not|no|never|none|nothing|nobody|neither|nor|without|cannot)\b|n't\b", re.IGNORECASE)
_AUXILIARIES = ("is", "are", "was", "were", "can", "could", "will", "would", "should", "shall", "may", "might",
                "must", "does", "do", "did")
# Where a modifier starts: dropping it from an answer leaves a less specific (entailed) answer.
_MODIFIER_START = frozenset({"in", "with", "using", "because", "which", "that", "by", "for", "during", "when",
                             "while", "after", "before", "from", "on", "at", "so", "as", "into", "through"})
# Quantifiers and words under which dropping a modifier or a list item does not preserve truth.
_NOT_MONOTONE = re.compile(r"\b(only|all|every|each|no|none|few|fewer|less|least|most|between|either|or|both|"
                           r"exactly|neither|except|unless|if)\b", re.IGNORECASE)


def negate(statement: str) -> str:
    """The contradictory statement: ``not`` after the first auxiliary, else ``It is not true that ...``.

    A statement that is already negated gets its negation removed instead.

    Example:
        >>> negate("Earth is a planet.")
        'Earth is not a planet.'
        >>> negate("Plants release oxygen.")
        'It is not true that plants release oxygen.'
        >>> negate("Plants cannot make sugar.")
        'Plants can make sugar.'
    """
    text = statement.strip()
    undone = re.sub(r"\bcannot\b", "can", text, count=1, flags=re.IGNORECASE)
    undone = re.sub(r"\b(is|are|was|were|can|could|will|would|should|does|do|did|must|has|have|had) not\b",
                    r"\1", undone, count=1, flags=re.IGNORECASE) if undone == text else undone
    undone = re.sub(r"\b(is|are|was|were|could|would|should|does|do|did|has|have|had)n't\b", r"\1", undone,
                    count=1, flags=re.IGNORECASE) if undone == text else undone
    if undone != text:
        return undone
    words = text.split(" ")
    for index, word in enumerate(words[:-1]):
        if word.lower() in _AUXILIARIES:
            words[index] = "cannot" if word.lower() == "can" else f"{word} not"
            return " ".join(words)
    if not text:
        return text
    first = text[0].lower() + text[1:] if len(text) > 1 and not text[:2].isupper() else text
    return f"It is not true that {first}"


def narrower_answer(answer: str) -> str | None:
    """A strictly less informative answer that the full answer entails, or None when there is none.

    The first item of a list (``"X, Y and Z"`` -> ``"X"``), else the answer cut before a modifier
    (``"make sugar in the presence of light"`` -> ``"make sugar"``); never under negation or
    non-monotone quantifiers ("only", "all", "or", ...), where the cut would change the truth.

    Example:
        >>> narrower_answer("paralysis of the facial muscles, loss of taste and lacrimation")
        'paralysis of the facial muscles'
        >>> narrower_answer("only mammals") is None
        True
    """
    text = answer.strip().rstrip(".")
    if _NEGATION.search(text) or _NOT_MONOTONE.search(text):
        return None
    words = text.split()
    title_case = sum(w[:1].isupper() for w in words) >= max(2, len(words) - 1)  # a name: "Critical Dictionary"
    parts = [p.strip() for p in re.split(r",\s*(?:and\s+)?" if title_case else r",\s*(?:and\s+)?|\s+and\s+", text)
             if p.strip()]
    if len(parts) >= 2 and len(parts[0].split()) <= 8:
        return parts[0]
    for index in range(2, len(words) - 1):
        if words[index].lower() in _MODIFIER_START and not words[index - 1].endswith(","):
            return " ".join(words[:index]).rstrip(",;:")
    return None


_ANTONYM_PAIRS = (("increase", "decrease"), ("increases", "decreases"), ("increased", "decreased"),
                  ("increasing", "decreasing"), ("more", "less"), ("higher", "lower"), ("larger", "smaller"),
                  ("faster", "slower"), ("warmer", "cooler"), ("hotter", "colder"), ("before", "after"),
                  ("above", "below"), ("always", "never"), ("positive", "negative"), ("inside", "outside"),
                  ("gain", "lose"), ("gains", "loses"), ("absorb", "release"), ("absorbs", "releases"),
                  ("absorbed", "released"), ("attract", "repel"), ("attracts", "repels"), ("expand", "contract"),
                  ("expands", "contracts"), ("rise", "fall"), ("rises", "falls"), ("heavier", "lighter"),
                  ("longer", "shorter"), ("stronger", "weaker"), ("most", "least"), ("maximum", "minimum"),
                  ("true", "false"), ("north", "south"), ("east", "west"), ("gains", "loses"))
_ANTONYMS = {**{a: b for a, b in _ANTONYM_PAIRS}, **{b: a for a, b in _ANTONYM_PAIRS}}
_ANTONYM_WORD = re.compile(r"\b(" + "|".join(sorted(_ANTONYMS, key=len, reverse=True)) + r")\b", re.IGNORECASE)
_AUX_WORDS = "is|are|was|were|be|do|does|did|can|could|will|would|should|shall|may|might|must|has|have|had"
_NP_WORD = (rf"(?!(?:{_AUX_WORDS}|of|the|a|an|these|those|this|that|statement|statements|best|most|one|ones|as|so|"
            rf"than|better|more|less|much|many|how|why|when|where|who|to|in|on|at|for|with|by|from|about|into|"
            rf"not|also|often|usually)\b)[a-z]+")
_WH_TYPE = re.compile(rf"\b(?:which|what)\s+(?:(?:type|kind|sort|form)s?\s+of\s+)?({_NP_WORD}(?:\s+{_NP_WORD})?)"
                      rf"\s+(?:{_AUX_WORDS}|[a-z]+s)\b", re.IGNORECASE)


def antonym_swap(statement: str) -> str | None:
    """The statement with its first direction or comparison word replaced by the antonym, or None.

    Example:
        >>> antonym_swap("Sweating increases when the body gets warmer.")
        'Sweating decreases when the body gets warmer.'
        >>> antonym_swap("It works because of an increase in respiration.")
        'It works because of a decrease in respiration.'
    """
    match = _ANTONYM_WORD.search(statement)
    if match is None:
        return None
    word = match.group(1)
    swapped = _ANTONYMS[word.lower()]
    swapped = swapped.capitalize() if word[0].isupper() else swapped
    before = statement[: match.start()]
    article = re.search(r"\b(an?) $", before)
    if article is not None:  # "an increase" -> "a decrease"
        before = before[: article.start()] + ("an " if swapped[0].lower() in "aeiou" else "a ")
    return before + swapped + statement[match.end():]


def question_type(question: str) -> str | None:
    """The answer's type named by the question's wh-phrase, as an indefinite answer, or None.

    Replacing the answer by its type gives a strictly less informative answer that the gold entails
    (the question presupposes that its answer is of that type): the partial relation.

    Example:
        >>> question_type("Which body system protects the brain from getting bumped?")
        'a body system'
        >>> question_type("What type of rock forms when lava cools?")
        'a type of rock'
        >>> question_type("What do bees make?") is None
        True
    """
    matches = list(_WH_TYPE.finditer(question))  # the last wh-phrase: the final question of a long item
    if not matches:
        return None
    match = matches[-1]
    phrase = match.group(1).lower()
    if re.search(r"\b(?:type|kind|sort|form)s?\s+of\s+", match.group(0), re.IGNORECASE):
        phrase = f"type of {phrase}"
    if phrase.endswith("s") and not phrase.endswith(("ss", "us", "is", "as")):
        return f"some {phrase}"
    return f"{'an' if phrase[0] in 'aeiou' else 'a'} {phrase}"


_FRAMINGS = ("It is true that {s}", "Indeed, {s}", "In fact, {s}")


def surface_variant(statement: str, rng: random.Random) -> str:
    """The same statement under a meaning-preserving framing ("It is true that ...", "Indeed, ...").

    Example:
        >>> surface_variant("Skin and lungs remove wastes.", random.Random(0))
        'Indeed, skin and lungs remove wastes.'
    """
    return rng.choice(_FRAMINGS).format(s=lower_first(statement.strip()))


def lower_first(text: str) -> str:
    """The text with its first letter in lower case, unless it starts an acronym ("DNA ...").

    Example:
        >>> lower_first("Plants release oxygen."), lower_first("DNA is a molecule.")
        ('plants release oxygen.', 'DNA is a molecule.')
    """
    return text[0].lower() + text[1:] if len(text) > 1 and not text[:2].isupper() else text

