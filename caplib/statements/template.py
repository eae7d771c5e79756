"""Rule-based QA -> statement reformulation: :class:`TemplateStatementGenerator`, the offline profile's statement
generator and a baseline for the fine-tuned model (Sec. 4)."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from types import MappingProxyType

from caplib.data import normalize_text
from caplib.statements.inputs import check_pairs

#: Every rule the template generator can report, and what it does.
RULES: Mapping[str, str] = MappingProxyType({
    "blank": "fills every blank (____, [blank], a mid-sentence '...') with the answer, in order",
    "completion": "appends the answer to an unfinished sentence ('The sun is responsible for...')",
    "answer_is_statement": "the answer already states the whole proposition; it is returned as the statement",
    "imperative": "'Name/Give/Identify the X' -> 'ANSWER is the X'; 'Define X' -> 'X is ANSWER'",
    "wh_copula": "'What/Which/Who is X?' -> 'X is ANSWER' or 'ANSWER is X'",
    "wh_name": "'What is the name of X?' -> 'X is named ANSWER'",
    "wh_passive": "'What is X called / made of?' -> 'X is called / made of ANSWER'",
    "wh_subject": "the wh-phrase is the subject: 'Who wrote X?' -> 'ANSWER wrote X'",
    "wh_object": "the wh-phrase is the object: 'What do plants release?' -> 'Plants release ANSWER'",
    "wh_adverbial": "'Where/When/Why/How do/is/can ...?' -> clause + 'in/in/because/by ANSWER'",
    "prep_wh": "'In which city is X located?' -> 'X is located in ANSWER'",
    "how_many": "'How many N does X have?' -> 'X has ANSWER N'; 'How many N are in X?' -> 'There are ANSWER N in X'",
    "how_adj": "'How old/tall/long ... is X?' -> 'X is ANSWER old/tall/long'",
    "what_happens": "'What happens when X?' -> 'When X, ANSWER'",
    "in_situ": "a wh-phrase inside a sentence ('Plants release which gas?') is replaced by the answer",
    "yes_no": "'Is/Does/Can X ...?' + yes/no -> affirmative or negated clause",
    "fallback": "nothing parsed: '{question without ?}: {answer}.' (the question's words are kept verbatim)",
})
# Long questions (context sentences + a final question) report "long+<rule of the final question>".

_DETERMINERS = frozenset(
    "a an the this that these those his her its their our your my some many most all each every any no another "
    "other both several few such".split())
_NUMBER_WORDS = frozenset(
    "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen "
    "seventeen eighteen nineteen twenty thirty forty fifty sixty seventy eighty ninety hundred thousand million "
    "billion trillion half".split())
_DO = MappingProxyType({"do": "base", "does": "3sg", "did": "past"})
_BE = frozenset("is are was were am".split())
_MODALS = frozenset("can could will would should shall may might must".split())
_HAVE = frozenset("has have had".split())
_AUX = _BE | _MODALS | _HAVE | frozenset(_DO)
_PREPOSITIONS = frozenset(
    "in on at by for with from to of into onto through during about under over between among after before "
    "without within across around against toward towards upon via like as off out up down near behind beyond "
    "inside outside since until along throughout per".split())
_SUBORDINATORS = frozenset("when if after before while as because since once unless until although whenever".split())
_WH = frozenset("what which who whom whose where when why how".split())
_FUNCTION_WORDS = (_DETERMINERS | _NUMBER_WORDS | _AUX | _PREPOSITIONS | _SUBORDINATORS | _WH
                   | frozenset("and or but nor so yet than not named".split()))
_PRONOUNS = frozenset("i you he she it we they there".split())
# Adverbs that sit between a subject and its verb ("Which company originally developed ...").
_ADVERBS = frozenset(
    "also always best commonly first generally largely mainly most mostly never normally often only originally "
    "primarily still typically usually sometimes traditionally eventually naturally".split())
_INTENSIFIERS = frozenset("so very too more less most not always never often usually mostly best".split())
# Nouns after "What ..." that name an attribute of the subject ("What colour is the sky?" -> "The sky is blue.").
_ATTRIBUTE_NOUNS = frozenset(
    "color colour shape type kind sort size state form temperature texture flavor flavour material".split())
_STATEMENT_NOUNS = frozenset("statement statements sentence option choice answer description explanation claim".split())
_COLOURS = frozenset("red orange yellow green blue indigo violet purple pink brown black white gray grey".split())
_SEASONS = frozenset("spring summer autumn fall winter".split())
_MONTHS = frozenset(
    "january february march april may june july august september october november december".split())
# Common adjectives that can end a predicate ("Why is the sky blue?"); suffixes below catch most others.
_ADJECTIVES = frozenset(
    "able important necessary possible impossible useful harmful dangerous different similar hot cold warm cool "
    "dark bright salty heavy large small big difficult easy rare common visible invisible essential effective "
    "stable unstable toxic round flat hard soft strong weak fast slow high low good bad true false correct "
    "incorrect rich poor safe wet dry likely unlikely responsible liquid solid healthy sick alive dead extinct "
    "native unique round equal long short wide narrow deep shallow thick thin loud quiet clear old young new "
    "sweet sour bitter smooth rough magnetic acidic basic".split()) | _COLOURS
_ADJECTIVE_SUFFIXES = ("ous", "ful", "ive", "able", "ible", "less")
_COMMON_SUFFIXES = ("ing", "tion", "sion", "ness", "ment", "ity", "ism", "ist", "ists", "ance", "ence", "ology",
                    "ologist", "ologists", "ure", "ency", "ancy", "ase", "ose", "ide", "ides", "ics")
# A small closed list of words that are common nouns although answers capitalise them (for lower-casing).
_COMMON_NOUNS = frozenset(
    "oxygen hydrogen nitrogen carbon helium neon argon sodium potassium calcium iron copper gold silver zinc lead "
    "aluminum aluminium mercury tin uranium chlorine sulfur sulphur phosphorus magnesium silicon water ice steam "
    "air sunlight light heat energy gravity friction electricity magnetism photosynthesis evaporation "
    "condensation precipitation erosion weathering respiration digestion mitosis meiosis".split())

_BASE_VERBS = frozenset("""
absorb accelerate act add affect allow appear apply arrive attract avoid become begin belong bend benefit bind bite
block blow boil break breathe breed bring build burn buy call carry catch cause celebrate change choose circle clean
climb collect combine come compare compose conduct connect consist contain control convert cool cost cover create
cross cut damage decay decide decompose decrease defend depend describe design destroy determine develop die differ
dig digest discover dissolve divide do draw drink drive drop eat elect eliminate emit end enter erode escape
evaporate exist expand experience explain fall feature feed feel fight fill filter find fit flow fly follow form
freeze gain get give go grow happen have hatch hear heat help hide hit hold host hunt identify improve include
increase indicate inherit introduce invent keep kill know last lay lead learn leave lie lift live look lose make
measure meet melt migrate mix move need observe obtain occur offer open orbit originate own paint pass pay perform
pollinate prevent produce protect provide publish pull pump push put reach react read receive record reduce reflect
refract regulate release remain remove repel replace represent reproduce require resist result return reveal ride
rise roll rotate rule run save say see seem sell send separate serve set shine show shrink sign sing sink sit sleep
slow smell solve speak spend spin split spread stand start stay stop store strike study supply support survive swim
take teach tell think throw transfer transform transport travel turn understand use vary visit wait walk want warm
wash watch wear weigh win work write attach bake bear border bounce cook continue earn float flow fuse glow kick
link lower play print raise score search share sort span speed stretch surround trap""".split())
# base: (past, past participle); regular verbs are inflected by rule.
_IRREGULAR = MappingProxyType({
    "be": ("was", "been"), "have": ("had", "had"), "do": ("did", "done"), "go": ("went", "gone"),
    "make": ("made", "made"), "take": ("took", "taken"), "give": ("gave", "given"), "get": ("got", "gotten"),
    "see": ("saw", "seen"), "come": ("came", "come"), "know": ("knew", "known"), "think": ("thought", "thought"),
    "find": ("found", "found"), "eat": ("ate", "eaten"), "grow": ("grew", "grown"), "become": ("became", "become"),
    "begin": ("began", "begun"), "break": ("broke", "broken"), "bring": ("brought", "brought"),
    "build": ("built", "built"), "buy": ("bought", "bought"), "catch": ("caught", "caught"),
    "choose": ("chose", "chosen"), "cut": ("cut", "cut"), "draw": ("drew", "drawn"), "drink": ("drank", "drunk"),
    "drive": ("drove", "driven"), "fall": ("fell", "fallen"), "feed": ("fed", "fed"), "feel": ("felt", "felt"),
    "fight": ("fought", "fought"), "fly": ("flew", "flown"), "freeze": ("froze", "frozen"), "hide": ("hid", "hidden"),
    "hold": ("held", "held"), "keep": ("kept", "kept"), "lay": ("laid", "laid"), "lead": ("led", "led"),
    "leave": ("left", "left"), "lie": ("lay", "lain"), "lose": ("lost", "lost"), "meet": ("met", "met"),
    "pay": ("paid", "paid"), "put": ("put", "put"), "read": ("read", "read"), "ride": ("rode", "ridden"),
    "rise": ("rose", "risen"), "run": ("ran", "run"), "say": ("said", "said"), "sell": ("sold", "sold"),
    "send": ("sent", "sent"), "set": ("set", "set"), "shine": ("shone", "shone"), "show": ("showed", "shown"),
    "shrink": ("shrank", "shrunk"), "sing": ("sang", "sung"), "sink": ("sank", "sunk"), "sit": ("sat", "sat"),
    "sleep": ("slept", "slept"), "speak": ("spoke", "spoken"), "spend": ("spent", "spent"),
    "spin": ("spun", "spun"), "split": ("split", "split"), "spread": ("spread", "spread"),
    "stand": ("stood", "stood"), "strike": ("struck", "struck"), "swim": ("swam", "swum"),
    "teach": ("taught", "taught"), "tell": ("told", "told"), "throw": ("threw", "thrown"),
    "understand": ("understood", "understood"), "wear": ("wore", "worn"), "win": ("won", "won"),
    "write": ("wrote", "written"), "bite": ("bit", "bitten"), "blow": ("blew", "blown"), "bend": ("bent", "bent"),
    "bind": ("bound", "bound"), "dig": ("dug", "dug"), "breed": ("bred", "bred"), "hit": ("hit", "hit"),
    "cost": ("cost", "cost"), "light": ("lit", "lit"), "shed": ("shed", "shed"), "hurt": ("hurt", "hurt"),
})
_IRREGULAR_PARTICIPLES = frozenset(participle for _, participle in _IRREGULAR.values())
# Words ending in -ed that are not participles.
_ED_WORDS = frozenset("hundred indeed speed breed greed bleed sacred kindred naked wicked rugged".split())
_ANSWER_ABBREVIATION = re.compile(r"(?:\b[A-Za-z]\.|\b(?:etc|Inc|Ltd|Co|Jr|Sr|St|Dr|Mr|Mrs|Ms|vs)\.)$")
_BLANK = re.compile(r"_{2,}|\[\s*blank\s*\]|\(\s*blank\s*\)|(?<=\s)(?:\.{3}|…)(?=\s+\w)", re.IGNORECASE)
_INSTRUCTION = re.compile(
    r"^\s*(?:fill\s+in\s+the\s+blanks?|complete\s+the\s+(?:sentence|statement|phrase)|complete|finish\s+the\s+"
    r"sentence)\s*[:.\-–—]\s*", re.IGNORECASE)
_OPEN_END = re.compile(r"\s*(?:…|\.{2,}|:|-|–|—|\?)\s*$")
_SENTENCE_SPLIT = re.compile(r"(?<=[.!?])\s+(?=[\"'(\[]?[A-Z0-9])")
_YES_NO = MappingProxyType({"yes": True, "true": True, "no": False, "false": False})


def _w(token: str) -> str:
    """A token's bare lower-case word (punctuation around it removed)."""
    return token.strip(",;:!?.\"'()").lower()


def _join(tokens: Sequence[str]) -> str:
    return " ".join(token for token in tokens if token)


def _third_person(verb: str) -> str:
    special = {"be": "is", "have": "has", "do": "does", "go": "goes"}
    if verb in special:
        return special[verb]
    if re.search(r"(?:s|sh|ch|x|z|o)$", verb):
        return verb + "es"
    if re.search(r"[^aeiou]y$", verb):
        return verb[:-1] + "ies"
    return verb + "s"


def _past(verb: str) -> str:
    if verb in _IRREGULAR:
        return _IRREGULAR[verb][0]
    if verb.endswith("e"):
        return verb + "d"
    if re.search(r"[^aeiou]y$", verb):
        return verb[:-1] + "ied"
    if re.fullmatch(r"[^aeiou]*[aeiou][^aeiouwxy]", verb):  # one-syllable CVC: stop -> stopped
        return verb + verb[-1] + "ed"
    return verb + "ed"


def _gerund(verb: str) -> str:
    if verb.endswith("ie"):
        return verb[:-2] + "ying"
    if verb.endswith("e") and not verb.endswith(("ee", "ye", "oe")):
        return verb[:-1] + "ing"
    if re.fullmatch(r"[^aeiou]*[aeiou][^aeiouwxy]", verb):
        return verb + verb[-1] + "ing"
    return verb + "ing"


def _inflect(verb: str, form: str) -> str:
    """``verb`` (base form, original casing of the first letter kept) in ``form``: base, 3sg or past."""
    base = verb.lower()
    inflected = {"base": base, "3sg": _third_person(base), "past": _past(base)}[form]
    return inflected[0].upper() + inflected[1:] if verb[:1].isupper() else inflected


def _finite_base(word: str) -> str | None:
    """The base form of a known verb when ``word`` is one of its finite forms (base, -s, past)."""
    return _FINITE_FORMS.get(_w(word))


# Finite form -> base form of every known verb; a base form wins over another verb's past ('lay' stays lay, not lie).
_FINITE_FORMS: Mapping[str, str] = MappingProxyType({
    **{form: base for base in sorted(_BASE_VERBS) for form in (_third_person(base), _past(base))},
    **{base: base for base in _BASE_VERBS},
})


def _is_participle(word: str) -> bool:
    word = _w(word)
    if word in _ED_WORDS:
        return False
    if word in _IRREGULAR_PARTICIPLES:
        return True
    base = _finite_base(word)
    return (base is not None and word == _past(base) != base) or (len(word) > 4 and word.endswith("ed"))


def _is_adjective(word: str) -> bool:
    word = _w(word)
    return word in _ADJECTIVES or (len(word) > 5 and word.endswith(_ADJECTIVE_SUFFIXES))


def _after_modifier(tokens: Sequence[str], index: int) -> bool:
    """True when ``tokens[index]`` directly follows a determiner, preposition or possessive (so it is no verb)."""
    if index == 0:
        return False
    previous = tokens[index - 1]
    return _w(previous) in _DETERMINERS | _PREPOSITIONS or previous.endswith(("'s", "s'"))


def _split_base_verb(tokens: Sequence[str]) -> tuple[list[str], str, list[str]] | None:
    """Split 'SUBJECT VERB REST' after do/modal inversion, where VERB is in base form.

    The verb is the first known base verb after the first word that does not directly follow a
    determiner, preposition or possessive. Without one, the subject is 'determiner + noun', a run of
    capitalised words ('Louis Armstrong') or one word, followed by any -ly adverbs.
    """
    tokens = list(tokens)
    for index in range(1, len(tokens)):
        if _w(tokens[index]) in _BASE_VERBS and not _after_modifier(tokens, index):
            return tokens[:index], tokens[index], tokens[index + 1:]
    index = 2 if tokens and _w(tokens[0]) in _DETERMINERS and len(tokens) > 2 else 1
    while index < len(tokens) - 1 and tokens[index][:1].isupper() and tokens[index - 1][:1].isupper():
        index += 1
    while index < len(tokens) - 1 and _w(tokens[index]).endswith("ly"):
        index += 1
    if len(tokens) <= index:
        return None
    return tokens[:index], tokens[index], tokens[index + 1:]


def _split_be(tokens: Sequence[str], yes_no: bool = False) -> tuple[list[str], list[str]]:
    """Split 'SUBJECT PREDICATE' after be-inversion ('Where is the tower located' -> the tower | located).

    The predicate starts at the last participle, else at the first adjective or intensifier; for yes/no
    questions also at a determiner, number or preposition ('Is water a compound'). No marker: all subject.
    """
    tokens = list(tokens)
    candidates = [i for i in range(1, len(tokens)) if not _after_modifier(tokens, i)]
    participles = [i for i in candidates if _is_participle(tokens[i])]
    if participles:
        return tokens[:participles[-1]], tokens[participles[-1]:]
    for index in candidates:
        word = _w(tokens[index])
        if _is_adjective(word) or (word in _INTENSIFIERS and index + 1 < len(tokens)):
            return tokens[:index], tokens[index:]
        if yes_no and (word in _DETERMINERS | _PREPOSITIONS or word in _NUMBER_WORDS or word[:1].isdigit()):
            return tokens[:index], tokens[index:]
    return tokens, []


def _strip_answer(answer: str) -> str:
    answer = " ".join(answer.split())
    while answer and answer[-1] in ".!;," and not _ANSWER_ABBREVIATION.search(answer):
        answer = answer[:-1].rstrip()
    return answer


def _lower_first(text: str, sentence: bool = False) -> str:
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
    bare = first.lower()
    rest_lower = len(words) > 1 and all(not w[:1].isupper() for w in words[1:] if w[:1].isalpha())
    common = (bare in _DETERMINERS | _PRONOUNS | _PREPOSITIONS | _NUMBER_WORDS | _COLOURS | _COMMON_NOUNS | _AUX
              or bare in _BASE_VERBS or bare in _SEASONS or bare.endswith(_COMMON_SUFFIXES))
    if common or rest_lower or sentence:
        return first[:1].lower() + text[1:]
    return text


def _cap_first(text: str) -> str:
    first = text.split(" ", 1)[0]
    if text[:1].islower() and not any(c.isupper() for c in first[1:]):
        return text[:1].upper() + text[1:]
    return text


def _finish(text: str) -> str:
    """Tidy whitespace and punctuation, capitalise, and end with exactly one period."""
    text = " ".join(text.split())
    text = re.sub(r"\s+([,;:.!?])", r"\1", text)
    text = re.sub(r"([,;:])\1+", r"\1", text)
    text = text.rstrip(" ,;:-–—")
    text = re.sub(r"[?!]+$", "", text).rstrip()
    text = re.sub(r"(?:…|\.{2,})$", "", text).rstrip()
    if not text.endswith("."):
        text += "."
    return _cap_first(text)


def _is_clause(answer: str) -> bool:
    """Whether an answer is itself a clause ('Planetary days will become shorter', 'it melts', 'bubbles form')."""
    words = answer.split()
    if len(words) < 2:
        return False
    if _w(words[0]) in _PRONOUNS - {"there"} or (_w(words[0]) == "there" and _w(words[1]) in _BE):
        return True
    for index in range(1, len(words)):
        word = _w(words[index])
        previous = words[index - 1]
        if _after_modifier(words, index) or (_w(previous) in _BASE_VERBS and index == 1) \
                or previous.endswith(",") or _w(previous).endswith("ly"):
            continue  # 'commonly called', 'Tower, called': participles modifying a noun
        if word in _AUX:
            return True
        base = _finite_base(word)
        if base is not None and (word != base or (index == 1 and _w(words[0]).endswith("s"))):
            return True
    return False


def _sentence_like(answer: str) -> bool:
    return answer.rstrip().endswith((".", "!")) and len(answer.split()) >= 3


def _fit_fill(before: list[str], fill: str, name_follows: bool = False) -> tuple[list[str], str]:
    """Fit an answer placed after the words ``before``: drop a repeated article ('the… The giraffe'), agree
    'a'/'an', and lower-case a single capitalised word after an article, a lower-case modifier, 'called' or
    'as' ('a… Pride', 'the electric… Guitar', 'known as… Autotrophs'): there it is almost always a common noun,
    unless a capitalised word follows the blank (``name_follows``: 'The ___ Ocean').
    """
    if not before or not fill:
        return before, fill
    last = _w(before[-1])
    words = fill.split(" ", 1)
    if last in ("a", "an", "the") and _w(words[0]) in ("a", "an", "the") and len(words) > 1:
        fill = words[1]
    modifier = (before[-1].isalpha() and before[-1].islower() and last not in _FUNCTION_WORDS
                and _finite_base(last) is None)
    if (last in ("a", "an", "the", "called", "as") or modifier) and " " not in fill and fill.isalpha() \
            and fill[1:].islower() and not name_follows:
        fill = fill.lower()
    if last in ("a", "an") and fill[:1].isalpha() and fill[:1].lower() not in "hu":
        wanted = "an" if fill[:1].lower() in "aeio" else "a"
        if wanted != last:
            before = before[:-1] + [wanted if before[-1].islower() else wanted.capitalize()]
    return before, fill


def _complete(stem: str, answer: str, raw_answer: str) -> tuple[str, str]:
    """'The sun is responsible for…' + 'heating the Earth' -> 'The sun is responsible for heating the Earth.'"""
    stem = _INSTRUCTION.sub("", stem)
    stem = _OPEN_END.sub("", stem).strip()
    if normalize_text(answer).startswith(normalize_text(stem)) and stem:
        return _finish(_cap_first(answer)), "answer_is_statement"
    tokens = stem.split()
    fill = _lower_first(answer, sentence=_sentence_like(raw_answer))
    fill_words = fill.split()
    for k in (3, 2, 1):  # 'is responsible for' + 'for heating ...': drop the repeated words
        if len(tokens) >= k and len(fill_words) > k and [_w(t) for t in tokens[-k:]] == [_w(t) for t in fill_words[:k]]:
            fill = _join(fill_words[k:])
            break
    tokens, fill = _fit_fill(tokens, fill)
    separator = " "
    if (tokens and _w(tokens[0]) in _SUBORDINATORS and "," not in stem and not stem.endswith(",")
            and _w(tokens[-1]) not in _DETERMINERS | _PREPOSITIONS | _AUX and _is_clause(answer)):
        separator = ", "  # 'When food is reduced in the stomach' + a clause
    return _finish(_join(tokens) + separator + fill), "completion"


def _fill_blanks(question: str, answer: str, raw_answer: str) -> tuple[str, str] | None:
    """'Light bends when it passes from air into ______ at an angle.' + 'water' -> the filled sentence."""
    text = _INSTRUCTION.sub("", question).strip()
    if text.endswith("?") and _w(text.split()[0]) in _WH | _AUX:
        return None  # 'Is a tomato a ___ or a vegetable?': filling the blank leaves a question
    blanks = list(_BLANK.finditer(text))
    if len(blanks) == 1:
        parts = [answer]
    else:
        parts = []
        for separator in (r"\s*;\s*", r"\s*,\s*(?:and\s+)?", r"\s+and\s+", r"\s*/\s*"):
            pieces = [p for p in re.split(separator, answer) if p]
            if len(pieces) == len(blanks):
                parts = pieces
                break
        if not parts:
            return None
    out, position = "", 0
    for match, part in zip(blanks, parts):
        before = text[position:match.start()]
        at_start = not (out + before).strip() or re.search(r"[.!?]\s*$", out + before) is not None
        fill = _cap_first(part) if at_start else _lower_first(part, sentence=_sentence_like(raw_answer))
        prefix = out + before
        head, space = prefix.rstrip(), prefix[len(prefix.rstrip()):]
        name_follows = re.match(r"\s*[A-Z]", text[match.end():]) is not None
        words, fill = _fit_fill(head.split(" ") if head else [], fill, name_follows)
        out = " ".join(words) + space + fill
        position = match.end()
    return _finish(out + text[position:]), "blank"


def _answer_phrase(kind: str, answer: str) -> str | None:
    """The answer as an adverbial for where/when/why/how questions ('in Paris', 'because of gravity')."""
    first = _w(answer.split()[0])
    clause = _is_clause(answer)
    if kind == "where":
        return answer if first in _PREPOSITIONS else f"in {answer}"
    if kind == "when":
        if first in _PREPOSITIONS | _SUBORDINATORS | {"every", "each", "around", "about"}:
            return answer
        if (re.fullmatch(r"\d{3,4}s?(?: (?:BC|BCE|AD|CE))?", answer) or first in _MONTHS | _SEASONS
                or re.match(r"the \d+(?:st|nd|rd|th|s)\b", answer, re.IGNORECASE)):
            return f"in {answer}"
        return f"when {answer}" if clause else answer
    if kind == "why":
        if first in {"because", "due", "since", "as", "so", "to", "in"}:
            return answer
        return f"because {answer}" if clause else f"because of {answer}"
    # how (manner)
    if first in _PREPOSITIONS | {"using", "via"}:
        return answer
    if first.endswith("ing"):
        return f"by {answer}"
    words = answer.split()
    if _finite_base(first) == first and first not in _FUNCTION_WORDS:  # 'Put the tube in water' -> 'by putting ...'
        return _join(["by", _gerund(first)] + words[1:])
    if clause and first in ("it", "they", "he", "she") and _finite_base(words[1]) is not None:
        return _join(["by", _gerund(_finite_base(words[1]))] + words[2:])  # 'It lowers X' -> 'by lowering X'
    return None if clause else f"through {answer}"


def _object_slot(tail: Sequence[str]) -> int:
    """Where an object answer goes in the words after the verb: after the last stranded preposition, else first.

    A preposition is stranded when it ends the question or another preposition follows it
    ('depend on for energy' -> 'depend on ANSWER for energy', 'add up to' -> 'add up to ANSWER').
    """
    slot = 0
    for index, token in enumerate(tail):
        if _w(token) in _PREPOSITIONS and (index == len(tail) - 1 or _w(tail[index + 1]) in _PREPOSITIONS):
            slot = index + 1
    return slot


def _subject(tokens: list[str]) -> list[str]:
    """Second person has no place in a statement (B.5 prompt): 'you' as subject becomes 'people'."""
    return ["people"] if [_w(t) for t in tokens] == ["you"] else tokens


def _clause_after_aux(aux: str, rest: Sequence[str]) -> tuple[list[str], list[str], list[str]] | None:
    """Undo subject-aux inversion: returns (subject, verb group, tail) of 'AUX SUBJECT VERB TAIL'."""
    aux_word = _w(aux)
    if aux_word in _DO or aux_word in _MODALS:
        split = _split_base_verb(rest)
        if split is None:
            return None
        subject, verb, tail = split
        if aux_word in _DO:
            form = "base" if _subject(subject) != subject else _DO[aux_word]
            return _subject(subject), [_inflect(verb, form)], tail
        return _subject(subject), [aux_word, verb], tail
    if aux_word in _BE | _HAVE:
        subject, predicate = _split_be(rest)
        return _subject(subject), [aux_word], predicate
    return None


def _with_object(subject: list[str], verb: list[str], tail: list[str], aux: str, answer: str) -> str:
    """Put an object answer into 'SUBJECT VERB TAIL'; 'do' is replaced by a verb-phrase answer."""
    words = answer.split()
    first = _w(words[0]) if words else ""
    if _w(verb[-1]) in ("do", "does", "did") and first and first not in _FUNCTION_WORDS | _PRONOUNS \
            and not first[:1].isdigit():
        if _finite_base(first) == first and _w(aux) in _DO:
            words[0] = _inflect(first, "base" if _subject(subject) != subject else _DO[_w(aux)])
        else:
            words[0] = first
        return _join(subject + verb[:-1] + words + tail)
    if _is_clause(answer):  # 'What does the fossil suggest about the area?' + 'it was once under the sea'
        return _join(subject + verb + tail + ["that", answer])
    slot = _object_slot(tail)
    return _join(subject + verb + tail[:slot] + [answer] + tail[slot:])


def _wh_phrase(tokens: list[str]) -> tuple[list[str], int]:
    """The noun phrase after what/which (skipping 'of the following'), and the index of what follows it."""
    index = 1
    lowered = [_w(t) for t in tokens]
    for skip in (["of", "the", "following"], ["of", "these"], ["of", "those"], ["one", "of", "the", "following"],
                 ["one", "of", "these"], ["one"]):
        if lowered[index:index + len(skip)] == skip:
            index += len(skip)
            break
    start = index
    while index < len(tokens):
        word = lowered[index]
        if word in _AUX or (index > start and (_finite_base(word) is not None or _is_participle(word))):
            break
        if index == 1 and _finite_base(word) is not None and word != _finite_base(word):
            break  # 'What causes ...': a finite verb right after the wh-word
        index += 1
    if index == len(tokens):  # no known verb: take the first later word in -s/-ed as the verb ('lowers')
        index = next((i for i in range(start + 1, len(tokens)) if re.search(r"[^s]s$|ed$", lowered[i])), index)
    noun_phrase = tokens[start:index]
    while noun_phrase and _w(noun_phrase[-1]) in _ADVERBS:  # 'Which company originally developed ...'
        noun_phrase = noun_phrase[:-1]
        index -= 1
    return noun_phrase, index


def _agree_be(be: str, subject: str) -> str:
    """'is'/'was' -> 'are'/'were' before a plural-looking answer subject ('The kidneys', 'plums and pears')."""
    words = subject.split()
    plural = " and " in subject or (words[-1].islower() and re.search(r"[^su]s$", words[-1]) is not None
                                    and _finite_base(words[-1]) is None)
    return {"is": "are", "was": "were"}.get(be, be) if plural else be


def _proper_like(answer: str) -> bool:
    """Looks like a name: capitalised first word that is not an article, number or common noun."""
    first = answer.split()[0]
    return first.isalpha() and first[:1].isupper() and _lower_first(answer) == answer and _w(first) not in _DETERMINERS


def _copula(wh: str, noun_phrase: list[str], be: str, rest: list[str], answer: str, raw_answer: str
            ) -> tuple[str, str] | None:
    """'What/Which/Who [N] is X?' (rules wh_copula, wh_name, wh_passive, wh_subject)."""
    if not rest:
        return None
    lowered = [_w(t) for t in rest]
    if not noun_phrase and lowered[:3] == ["the", "name", "of"] and len(rest) > 3:
        return _finish(_join([_cap_first(rest[3])] + rest[4:] + [be, "named", _lower_first(answer)])), "wh_name"
    if lowered in (["it"], ["this"], ["that"], ["he"], ["she"], ["they"]):
        return _finish(_join([_cap_first(rest[0]), be, _lower_first(answer)])), "wh_copula"
    clause = _is_clause(raw_answer)
    head = next((i for i, w in enumerate(lowered) if w not in _ADVERBS and not w.endswith("ly")), 0)
    first = rest[head]
    if _is_participle(first) or _is_adjective(first) or lowered[head] in _PREPOSITIONS | _INTENSIFIERS:
        if clause:
            return _finish(f"{_cap_first(answer)}, which {be} {_join(rest)}"), "wh_subject"
        return _finish(_join([_cap_first(answer), _agree_be(be, answer)] + rest)), "wh_subject"
    participles = [i for i in range(1, len(rest)) if _is_participle(rest[i]) and not _after_modifier(rest, i)]
    if participles and all(w in _PREPOSITIONS for w in lowered[participles[-1] + 1:]):
        cut = participles[-1]
        return _finish(_join([_cap_first(rest[0])] + rest[1:cut] + [be] + rest[cut:] + [
            _lower_first(answer, sentence=_sentence_like(raw_answer))])), "wh_passive"
    subject_first = _cap_first(_join(rest))
    if clause:
        return _finish(f"{subject_first} {be} that {_lower_first(answer, sentence=True)}"), "wh_copula"
    if noun_phrase and _w(noun_phrase[-1]) in _ATTRIBUTE_NOUNS | {"of"} or noun_phrase and _w(noun_phrase[0]) in \
            _ATTRIBUTE_NOUNS:
        return _finish(f"{subject_first} {be} {_lower_first(answer)}"), "wh_copula"
    if noun_phrase or wh in ("who", "which") or _proper_like(answer):
        return _finish(_join([_cap_first(answer), _agree_be(be, answer)] + rest)), "wh_copula"
    return _finish(f"{subject_first} {be} {_lower_first(answer)}"), "wh_copula"


_HAPPEN = re.compile(r"^what\s+(?:(?:will|would|could|might|may|can|does|did)\s+)?(?:(?:most\s+)?(?:likely|probably)"
                     r"\s+)?(?:happens|happened|happen)\b\s*", re.IGNORECASE)


def _what_happens(body: str, answer: str, raw_answer: str, condition: str | None = None) -> tuple[str, str] | None:
    """'What (would most likely) happen(s) (to X) when/if Y?' -> 'When Y, ANSWER' (X kept before a verb phrase).

    ``condition`` is a subordinate clause given as context ('When a plant is kept in the dark, what happens to it?').
    """
    match = _HAPPEN.match(body)
    if match is None:
        return None
    rest = body[match.end():].split()
    lowered = [_w(t) for t in rest]
    cut = next((i for i, w in enumerate(lowered) if w in _SUBORDINATORS), len(rest))
    theme = rest[1:cut] if lowered[:1] == ["to"] else []
    clause = _is_clause(raw_answer) or _sentence_like(raw_answer)
    answer_words = answer.split()
    if theme and clause and _w(answer_words[0]) in ("it", "they"):  # 'to the gas' + 'It expands.' -> 'the gas expands'
        answer, clause = _join(theme + answer_words[1:]), True
    if condition is None and cut < len(rest):
        condition = _join(rest[cut:])
    if condition is None:
        return (_finish(_cap_first(answer)), "what_happens") if clause and theme else None
    if clause:
        return _finish(f"{_cap_first(condition)}, {_lower_first(answer, sentence=True)}"), "what_happens"
    if not theme:
        return None
    return _finish(f"{_cap_first(condition)}, {_join(theme)} {_lower_first(answer)}"), "what_happens"


def _wh_question(tokens: list[str], answer: str, raw_answer: str) -> tuple[str, str] | None:
    """Turn a wh-question (tokens without '?') and its answer into a declarative sentence."""
    lowered = [_w(t) for t in tokens]
    if len(tokens) < 2:
        return None
    wh = lowered[0]
    if wh in _PREPOSITIONS and len(tokens) > 3 and lowered[1] in ("which", "what", "whom", "whose"):
        noun_phrase, index = _wh_phrase(tokens[1:])
        index += 1
        if index < len(tokens) and lowered[index] in _AUX:
            parts = _clause_after_aux(tokens[index], tokens[index + 1:])
            if parts is not None:
                subject, verb, tail = parts
                return _finish(_join([_cap_first(_join(subject))] + verb + tail + [lowered[0], answer])), "prep_wh"
        return None
    if wh == "how" and lowered[1] in ("many", "much"):
        return _how_many(tokens, answer)
    if wh == "how" and _is_adjective(lowered[1]) | (lowered[1] in ("far", "often", "long")) and len(tokens) > 3:
        return _how_adjective(tokens, answer)
    if wh in ("where", "when", "why", "how") and lowered[1] in _AUX:
        parts = _clause_after_aux(tokens[1], tokens[2:])
        phrase = _answer_phrase(wh, _lower_first(answer, sentence=_sentence_like(raw_answer)))
        if parts is None or phrase is None:
            return None
        subject, verb, tail = parts
        return _finish(_join([_cap_first(_join(subject))] + verb + tail + [phrase])), "wh_adverbial"
    if wh not in ("what", "which", "who", "whom"):
        return None
    if wh == "what" and _HAPPEN.match(_join(tokens)):
        return _what_happens(_join(tokens), answer, raw_answer)
    noun_phrase, index = _wh_phrase(tokens) if wh in ("what", "which") else ([], 1)
    if index >= len(tokens):
        return None
    word = lowered[index]
    rest = tokens[index + 1:]
    if _is_clause(raw_answer) and {_w(t) for t in noun_phrase} & _STATEMENT_NOUNS:
        return _finish(_cap_first(answer)), "answer_is_statement"  # 'Which statement is true?' + a sentence
    if word in _BE:
        return _copula(wh, noun_phrase, word, rest, answer, raw_answer)
    following = lowered[index + 1] if index + 1 < len(tokens) else ""
    subject_modal = word in _MODALS and (following in _BASE_VERBS | _ADVERBS | {"be", "have", "not"}
                                         or following.endswith("ly"))
    main_have = word in _HAVE and (_is_participle(following) or not any(
        _is_participle(t) and not _after_modifier(rest, i) for i, t in enumerate(rest) if i > 0))
    if (word in _DO or word in _MODALS or word in _HAVE) and not subject_modal and not main_have:
        parts = _clause_after_aux(tokens[index], rest)
        if parts is None:
            return None
        subject, verb, tail = parts
        if [_w(t) for t in subject] in (["people"], ["we"]) and _w(verb[-1]) == "call" and tail:
            return _finish(_join([_cap_first(_join(tail)), "is called", _lower_first(answer)])), "wh_passive"
        object_answer = _lower_first(answer, sentence=_sentence_like(raw_answer))
        if [_w(t) for t in noun_phrase] == ["time"] and _w(object_answer.split()[0]) not in _PREPOSITIONS:
            return _finish(_cap_first(_join(subject + verb + ["at", object_answer] + tail))), "wh_object"
        statement = _with_object(subject, verb, tail, tokens[index], object_answer)
        return _finish(_cap_first(statement)), "wh_object"
    # The wh-phrase is the subject: 'Who wrote Hamlet?', 'Which gas makes up most of the air?'
    if _is_clause(raw_answer):
        return _finish(f"{_cap_first(answer)}, which {_join(tokens[index:])}"), "wh_subject"
    return _finish(_join([_cap_first(answer)] + tokens[index:])), "wh_subject"


def _how_many(tokens: list[str], answer: str) -> tuple[str, str] | None:
    """'How many legs does a spider have?' + 'Eight' -> 'A spider has eight legs.'"""
    lowered = [_w(t) for t in tokens]
    index = 2
    while index < len(tokens) and lowered[index] not in _AUX and (
            index == 2 or _finite_base(lowered[index]) is None):
        index += 1
    if index >= len(tokens):
        return None
    noun = tokens[2:index]
    amount = _lower_first(answer)
    answer_words = set(normalize_text(answer).split())
    while noun and _w(noun[0]) in answer_words:  # '6 cups' for 'How many cups of flour': keep 'of flour'
        noun = noun[1:]
    if (noun and _w(noun[-1]) in answer_words) or lowered[1] == "much":  # 'How much money' + '135 dollars'
        noun = []
    counted = _join([amount] + noun)
    rest = tokens[index + 1:]
    if lowered[index] in _BE:
        if rest and _w(rest[0]) == "there":
            return _finish(_join(["There", lowered[index], counted] + rest[1:])), "how_many"
        if rest and _w(rest[0]) in _PREPOSITIONS:
            return _finish(_join(["There", lowered[index], counted] + rest)), "how_many"
        return _finish(_join([_cap_first(counted), lowered[index]] + rest)), "how_many"
    if lowered[index] in _AUX:
        parts = _clause_after_aux(tokens[index], rest)
        if parts is None:
            return None
        subject, verb, tail = parts
        slot = _object_slot(tail)
        return _finish(_join([_cap_first(_join(subject))] + verb + tail[:slot] + [counted] + tail[slot:])), "how_many"
    return _finish(_join([_cap_first(counted)] + tokens[index:])), "how_many"


def _how_adjective(tokens: list[str], answer: str) -> tuple[str, str] | None:
    """'How old is the Earth?' + '4.5 billion years' -> 'The Earth is 4.5 billion years old.'"""
    adjective, aux = _w(tokens[1]), _w(tokens[2])
    rest = tokens[3:]
    measure = _lower_first(answer)
    if aux in _BE:
        cut = next((i for i in range(1, len(rest)) if _w(rest[i]) in _PREPOSITIONS), len(rest))
        unit = [adjective] if adjective not in ("far", "often", "much") and adjective not in normalize_text(answer) \
            and cut == len(rest) else []
        return _finish(_join([_cap_first(_join(rest[:cut])), aux, measure] + unit + rest[cut:])), "how_adj"
    parts = _clause_after_aux(tokens[2], rest)
    if parts is None:
        return None
    subject, verb, tail = parts
    if verb and _w(verb[-1]) in ("take", "takes", "took"):
        lowered = [_w(t) for t in tail]
        if [_w(t) for t in subject] == ["it"] and "to" in lowered[1:]:  # 'How long does it take X to Y?'
            cut = lowered.index("to", 1)
            doer = tail[1:cut] if lowered[0] == "for" else tail[:cut]
            return _finish(_join([_cap_first(_join(doer))] + verb + [measure] + tail[cut:])), "how_adj"
        return _finish(_join([_cap_first(_join(subject))] + verb + [measure] + tail)), "how_adj"
    return _finish(_join([_cap_first(_join(subject))] + verb + tail + [measure])), "how_adj"


def _yes_no(tokens: list[str], answer: str) -> tuple[str, str] | None:
    """'Is water a compound?' + 'Yes' -> 'Water is a compound.'; + 'No' -> 'Water is not a compound.'"""
    polarity = _YES_NO.get(_w(answer.split()[0]))
    aux = _w(tokens[0])
    if polarity is None or len(tokens) < 3:
        return None
    remainder = answer.split(None, 1)[1] if " " in answer else ""  # 'Yes, once it is mashed'
    if remainder:
        joiner = ", " if _w(remainder.split()[0]) in _SUBORDINATORS | {"but", "so", "as"} else "; "
        statement = _yes_no(tokens, answer.split()[0])
        if statement is None:
            return None
        return _finish(statement[0].rstrip(".") + joiner + _lower_first(remainder, sentence=True)), "yes_no"
    if aux in _BE | _HAVE:
        subject, predicate = _split_be(tokens[1:], yes_no=True)
        if not predicate:
            return None
        return _finish(_join([_cap_first(_join(_subject(subject))), aux] + ([] if polarity else ["not"])
                             + predicate)), "yes_no"
    split = _split_base_verb(tokens[1:])
    if split is None:
        return None
    subject, verb, tail = split
    subject = _subject(subject)
    if aux in _DO:
        verb_group = [_inflect(verb, _DO[aux] if subject == split[0] else "base")] if polarity else [
            aux if subject == split[0] else "do", "not", verb]
    else:
        verb_group = [aux, verb] if polarity else (["cannot", verb] if aux == "can" else [aux, "not", verb])
    return _finish(_join([_cap_first(_join(subject))] + verb_group + tail)), "yes_no"


def _in_situ(body: str, answer: str) -> tuple[str, str] | None:
    """'Plants release which gas during photosynthesis?' -> 'Plants release oxygen during photosynthesis.'"""
    pattern = re.compile(
        r"\b(?:which\s+(?:one\s+)?of\s+(?:the\s+following|these|those)(?:\s+\w+)?|(?:which|what)(?:\s+(?!is\b|"
        r"are\b|was\b|were\b|do\b|does\b|did\b)[a-z]+)?|whom|who)\b", re.IGNORECASE)
    for match in pattern.finditer(body):
        if match.start() == 0:
            continue
        before = body[:match.start()].split()
        # 'which' after a noun ('the gas which', 'the process by which') starts a relative clause, not a question.
        if match.group(0).lower().startswith("which") and before:
            governor = before[-2] if _w(before[-1]) in _PREPOSITIONS and len(before) > 1 else before[-1]
            if _w(governor) not in _BE and _finite_base(governor) is None:
                continue
        words, fill = _fit_fill(before, _lower_first(answer))
        return _finish(_join(words + [fill]) + body[match.end():]), "in_situ"
    return None


_IMPERATIVE = re.compile(r"^(?:name|identify|give|state|list|mention)\s+(.+)$", re.IGNORECASE)


def _imperative(body: str, answer: str) -> tuple[str, str] | None:
    """'Name the instrument used to measure air pressure.' + 'A barometer' -> 'A barometer is the instrument ...'"""
    define = re.match(r"^define\s+(.+)$", body, re.IGNORECASE)
    if define:
        return _finish(f"{_cap_first(define.group(1))} is {_lower_first(answer)}"), "imperative"
    match = _IMPERATIVE.match(body)
    if not match:
        return None
    words = match.group(1).split()
    first = _w(words[0])
    if first in ("the", "a", "an") or (first == "an" and len(words) > 1):
        return _finish(_join([_cap_first(answer), "is"] + words)), "imperative"
    if first == "one":
        return _finish(_join([_cap_first(answer), "is", "an" if words[1][:1].lower() in "aeio" else "a"]
                             + words[1:])), "imperative"
    if first in _NUMBER_WORDS or first.isdigit() or first in ("some", "several"):
        items = re.split(r"\s*,\s*(?:and\s+)?|\s+and\s+", answer)
        listed = ", ".join(items[:-1]) + " and " + items[-1] if len(items) > 1 else answer
        return _finish(_join([_cap_first(listed), "are"] + words[1:])), "imperative"
    return None


def _split_context(question: str) -> tuple[str, str]:
    """Split a long question into its context and the final question ('..., what can I do ...?')."""
    sentences = _SENTENCE_SPLIT.split(question.strip())
    context, final = " ".join(sentences[:-1]), sentences[-1]
    if final.rstrip().endswith("?"):
        pattern = re.compile(r",\s+(?=(?:what|which|who|whom|where|when|why|how)\b)", re.IGNORECASE)
        matches = list(pattern.finditer(final))
        if not matches and final.split()[0].lower() not in _WH | _AUX:
            matches = list(re.finditer(r",\s+(?=(?:" + "|".join(sorted(_AUX)) + r")\b)", final, re.IGNORECASE))
        if matches:
            cut = matches[-1]
            head = final[:cut.start()]
            context = f"{context} {head}".strip()
            final = final[cut.end():]
            return context, _cap_first(final)
    return context, final


def _convert_question(question: str, answer: str, raw_answer: str) -> tuple[str, str] | None:
    body = question.strip().rstrip("?").strip()
    tokens = body.split()
    if not tokens:
        return None
    first = _w(tokens[0])
    if first in _WH or (first in _PREPOSITIONS and len(tokens) > 1 and _w(tokens[1]) in _WH):
        return _wh_question(tokens, answer, raw_answer)
    if first in _AUX:
        return _yes_no(tokens, answer)
    return _in_situ(body, answer)


def _with_context(context: str, final: str, answer: str, raw_answer: str) -> tuple[str, str] | None:
    """Statement of a long question: its final question converted, with the context kept.

    A subordinate context ('If you heat ice, what happens?') becomes the statement's first clause;
    context sentences are kept as sentences before it (the paper's references compress them into one
    clause, which rules cannot do reliably).
    """
    subordinate = _w(context.split()[0]) in _SUBORDINATORS and not re.search(r"[.!?]$", context)
    body = final.strip().rstrip("?").strip()
    if subordinate and _HAPPEN.match(body):
        converted = _what_happens(body, answer, raw_answer, condition=context)
        return None if converted is None else (converted[0], f"long+{converted[1]}")
    converted = _convert_question(final, answer, raw_answer)
    if converted is None:
        return None
    statement, rule = converted
    if subordinate:
        return _finish(f"{context}, {_lower_first(statement, sentence=True)}"), f"long+{rule}"
    context = context if re.search(r"[.!?]$", context) else context + "."
    return f"{_cap_first(context)} {statement}", f"long+{rule}"


def reformulate(question: str, answer: str) -> tuple[str, str]:
    """One question-answer pair -> (statement, rule name from ``RULES``), by the rules of the template generator.

    Example:
        >>> reformulate("Light bends when it passes from air into ______ at an angle.", "water")
        ('Light bends when it passes from air into water at an angle.', 'blank')
    """
    question = " ".join(question.split())
    raw_answer = " ".join(answer.split())
    answer = _strip_answer(raw_answer)
    if _BLANK.search(_INSTRUCTION.sub("", question)):
        filled = _fill_blanks(question, answer, raw_answer)
        if filled is not None:
            return filled
    stem = _INSTRUCTION.sub("", question).strip()
    if not stem.endswith("?"):
        imperative = _imperative(stem.rstrip(".!").strip(), answer)
        if imperative is not None:
            return imperative
        if stem.endswith("!") or (stem.endswith(".") and not stem.endswith("..")):
            return _fallback(question, answer)
        return _complete(stem, answer, raw_answer)
    context, final = _split_context(stem)
    if context:
        converted = _with_context(context, final, answer, raw_answer)
    else:
        converted = _convert_question(final, answer, raw_answer)
    if converted is not None:
        return converted
    body = final.rstrip("?").split()
    # A '?' after a sentence fragment ('The process is called?') is a sentence to complete.
    if body and _w(body[0]) not in _WH | _AUX and not context:
        return _complete(stem, answer, raw_answer)
    return _fallback(question, answer)


def _fallback(question: str, answer: str) -> tuple[str, str]:
    body = re.sub(r"[\s?]+$", "", question).rstrip(".!:")
    return f"{body}: {answer}.", "fallback"


class TemplateStatementGenerator:
    """Deterministic rule-based QA -> statement reformulation (no model; offline profile and baseline).

    Each pair goes through the first rule of ``RULES`` that parses it: blanks are filled, unfinished
    sentences completed, wh-questions turned into declaratives by undoing subject-aux inversion
    (do-support with verb inflection, modals, be), yes/no questions answered, and long questions
    reduced to their final question with the context kept as a preceding sentence. What no rule
    parses falls back to ``"{question without '?'}: {answer}."`` (rule ``"fallback"``), so the output
    never silently invents structure. ``last_rules`` holds the rule of every item of the last call.

    Example:
        >>> gen = TemplateStatementGenerator()
        >>> gen.generate(["Who wrote Hamlet?", "The sun is responsible for…"], ["Shakespeare", "heating the Earth"])
        ['Shakespeare wrote Hamlet.', 'The sun is responsible for heating the Earth.']
        >>> gen.last_rules
        ['wh_subject', 'completion']
    """

    def __init__(self) -> None:
        self.last_rules: list[str] = []

    def signature(self) -> str:
        """Settings signature of the statements (the rules are versioned with caplib)."""
        from caplib import __version__

        return f"statements:template|caplib:{__version__}"

    def generate_with_rules(self, questions: Sequence[str], answers: Sequence[str]) -> list[tuple[str, str]]:
        """(statement, rule) for every pair."""
        questions, answers = check_pairs(questions, answers)
        results = [reformulate(q, a) for q, a in zip(questions, answers)]
        self.last_rules = [rule for _, rule in results]
        return results

    def generate(self, questions: Sequence[str], answers: Sequence[str]) -> list[str]:
        """One declarative statement per (question, answer) pair."""
        return [statement for statement, _ in self.generate_with_rules(questions, answers)]
