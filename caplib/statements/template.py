"""Rule-based QA -> statement reformulation: :class:`TemplateStatementGenerator`, the offline profile's statement
generator and a baseline for the fine-tuned model (Sec. 4)."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from types import MappingProxyType

from caplib.text import normalize_text
from caplib.statements.grammar import (
    ADVERBS,
    ATTRIBUTE_NOUNS,
    AUX,
    BASE_VERBS,
    BE,
    DETERMINERS,
    DO,
    HAVE,
    INTENSIFIERS,
    MODALS,
    NUMBER_WORDS,
    PREPOSITIONS,
    STATEMENT_NOUNS,
    SUBORDINATORS,
    WH,
    after_modifier,
    agree_be,
    answer_phrase,
    bare,
    cap_first,
    clause_after_aux,
    declarative_subject,
    finish,
    finite_base,
    fit_fill,
    inflect,
    is_adjective,
    is_clause,
    is_participle,
    join_words,
    lower_first,
    object_slot,
    sentence_like,
    split_base_verb,
    split_be,
    strip_answer,
    wh_phrase,
    with_object,
)
from caplib.signature import Signature
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

_BLANK = re.compile(r"_{2,}|\[\s*blank\s*\]|\(\s*blank\s*\)|(?<=\s)(?:\.{3}|…)(?=\s+\w)", re.IGNORECASE)
_INSTRUCTION = re.compile(
    r"^\s*(?:fill\s+in\s+the\s+blanks?|complete\s+the\s+(?:sentence|statement|phrase)|complete|finish\s+the\s+"
    r"sentence)\s*[:.\-–—]\s*", re.IGNORECASE)
_OPEN_END = re.compile(r"\s*(?:…|\.{2,}|:|-|–|—|\?)\s*$")
_SENTENCE_SPLIT = re.compile(r"(?<=[.!?])\s+(?=[\"'(\[]?[A-Z0-9])")
_YES_NO = MappingProxyType({"yes": True, "true": True, "no": False, "false": False})


def _complete(stem: str, answer: str, raw_answer: str) -> tuple[str, str]:
    """'The sun is responsible for…' + 'heating the Earth' -> 'The sun is responsible for heating the Earth.'"""
    stem = _INSTRUCTION.sub("", stem)
    stem = _OPEN_END.sub("", stem).strip()
    if normalize_text(answer).startswith(normalize_text(stem)) and stem:
        return finish(cap_first(answer)), "answer_is_statement"
    tokens = stem.split()
    fill = lower_first(answer, sentence=sentence_like(raw_answer))
    fill_words = fill.split()
    for k in (3, 2, 1):  # 'is responsible for' + 'for heating ...': drop the repeated words
        if len(tokens) >= k and len(fill_words) > k \
                and [bare(t) for t in tokens[-k:]] == [bare(t) for t in fill_words[:k]]:
            fill = join_words(fill_words[k:])
            break
    tokens, fill = fit_fill(tokens, fill)
    separator = " "
    if (tokens and bare(tokens[0]) in SUBORDINATORS and "," not in stem and not stem.endswith(",")
            and bare(tokens[-1]) not in DETERMINERS | PREPOSITIONS | AUX and is_clause(answer)):
        separator = ", "  # 'When food is reduced in the stomach' + a clause
    return finish(join_words(tokens) + separator + fill), "completion"


def _fill_blanks(question: str, answer: str, raw_answer: str) -> tuple[str, str] | None:
    """'Light bends when it passes from air into ______ at an angle.' + 'water' -> the filled sentence."""
    text = _INSTRUCTION.sub("", question).strip()
    if text.endswith("?") and bare(text.split()[0]) in WH | AUX:
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
        fill = cap_first(part) if at_start else lower_first(part, sentence=sentence_like(raw_answer))
        prefix = out + before
        head, space = prefix.rstrip(), prefix[len(prefix.rstrip()):]
        name_follows = re.match(r"\s*[A-Z]", text[match.end():]) is not None
        words, fill = fit_fill(head.split(" ") if head else [], fill, name_follows)
        out = " ".join(words) + space + fill
        position = match.end()
    return finish(out + text[position:]), "blank"


def _proper_like(answer: str) -> bool:
    """Looks like a name: capitalised first word that is not an article, number or common noun."""
    first = answer.split()[0]
    return first.isalpha() and first[:1].isupper() and lower_first(answer) == answer and bare(first) not in DETERMINERS


def _copula(wh: str, noun_phrase: list[str], be: str, rest: list[str], answer: str, raw_answer: str
            ) -> tuple[str, str] | None:
    """'What/Which/Who [N] is X?' (rules wh_copula, wh_name, wh_passive, wh_subject)."""
    if not rest:
        return None
    lowered = [bare(t) for t in rest]
    if not noun_phrase and lowered[:3] == ["the", "name", "of"] and len(rest) > 3:
        return finish(join_words([cap_first(rest[3])] + rest[4:] + [be, "named", lower_first(answer)])), "wh_name"
    if lowered in (["it"], ["this"], ["that"], ["he"], ["she"], ["they"]):
        return finish(join_words([cap_first(rest[0]), be, lower_first(answer)])), "wh_copula"
    clause = is_clause(raw_answer)
    head = next((i for i, w in enumerate(lowered) if w not in ADVERBS and not w.endswith("ly")), 0)
    first = rest[head]
    if is_participle(first) or is_adjective(first) or lowered[head] in PREPOSITIONS | INTENSIFIERS:
        if clause:
            return finish(f"{cap_first(answer)}, which {be} {join_words(rest)}"), "wh_subject"
        return finish(join_words([cap_first(answer), agree_be(be, answer)] + rest)), "wh_subject"
    participles = [i for i in range(1, len(rest)) if is_participle(rest[i]) and not after_modifier(rest, i)]
    if participles and all(w in PREPOSITIONS for w in lowered[participles[-1] + 1:]):
        cut = participles[-1]
        return finish(join_words([cap_first(rest[0])] + rest[1:cut] + [be] + rest[cut:] + [
            lower_first(answer, sentence=sentence_like(raw_answer))])), "wh_passive"
    subject_first = cap_first(join_words(rest))
    if clause:
        return finish(f"{subject_first} {be} that {lower_first(answer, sentence=True)}"), "wh_copula"
    if noun_phrase and bare(noun_phrase[-1]) in ATTRIBUTE_NOUNS | {"of"} or noun_phrase and bare(noun_phrase[0]) in \
            ATTRIBUTE_NOUNS:
        return finish(f"{subject_first} {be} {lower_first(answer)}"), "wh_copula"
    if noun_phrase or wh in ("who", "which") or _proper_like(answer):
        return finish(join_words([cap_first(answer), agree_be(be, answer)] + rest)), "wh_copula"
    return finish(f"{subject_first} {be} {lower_first(answer)}"), "wh_copula"


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
    lowered = [bare(t) for t in rest]
    cut = next((i for i, w in enumerate(lowered) if w in SUBORDINATORS), len(rest))
    theme = rest[1:cut] if lowered[:1] == ["to"] else []
    clause = is_clause(raw_answer) or sentence_like(raw_answer)
    answer_words = answer.split()
    # 'to the gas' + 'It expands.' -> 'the gas expands'
    if theme and clause and bare(answer_words[0]) in ("it", "they"):
        answer, clause = join_words(theme + answer_words[1:]), True
    if condition is None and cut < len(rest):
        condition = join_words(rest[cut:])
    if condition is None:
        return (finish(cap_first(answer)), "what_happens") if clause and theme else None
    if clause:
        return finish(f"{cap_first(condition)}, {lower_first(answer, sentence=True)}"), "what_happens"
    if not theme:
        return None
    return finish(f"{cap_first(condition)}, {join_words(theme)} {lower_first(answer)}"), "what_happens"


def _wh_question(tokens: list[str], answer: str, raw_answer: str) -> tuple[str, str] | None:
    """Turn a wh-question (tokens without '?') and its answer into a declarative sentence."""
    lowered = [bare(t) for t in tokens]
    if len(tokens) < 2:
        return None
    wh = lowered[0]
    if wh in PREPOSITIONS and len(tokens) > 3 and lowered[1] in ("which", "what", "whom", "whose"):
        noun_phrase, index = wh_phrase(tokens[1:])
        index += 1
        if index < len(tokens) and lowered[index] in AUX:
            parts = clause_after_aux(tokens[index], tokens[index + 1:])
            if parts is not None:
                subject, verb, tail = parts
                statement = join_words([cap_first(join_words(subject))] + verb + tail + [lowered[0], answer])
                return finish(statement), "prep_wh"
        return None
    if wh == "how" and lowered[1] in ("many", "much"):
        return _how_many(tokens, answer)
    if wh == "how" and is_adjective(lowered[1]) | (lowered[1] in ("far", "often", "long")) and len(tokens) > 3:
        return _how_adjective(tokens, answer)
    if wh in ("where", "when", "why", "how") and lowered[1] in AUX:
        parts = clause_after_aux(tokens[1], tokens[2:])
        phrase = answer_phrase(wh, lower_first(answer, sentence=sentence_like(raw_answer)))
        if parts is None or phrase is None:
            return None
        subject, verb, tail = parts
        return finish(join_words([cap_first(join_words(subject))] + verb + tail + [phrase])), "wh_adverbial"
    if wh not in ("what", "which", "who", "whom"):
        return None
    if wh == "what" and _HAPPEN.match(join_words(tokens)):
        return _what_happens(join_words(tokens), answer, raw_answer)
    noun_phrase, index = wh_phrase(tokens) if wh in ("what", "which") else ([], 1)
    if index >= len(tokens):
        return None
    word = lowered[index]
    rest = tokens[index + 1:]
    if is_clause(raw_answer) and {bare(t) for t in noun_phrase} & STATEMENT_NOUNS:
        return finish(cap_first(answer)), "answer_is_statement"  # 'Which statement is true?' + a sentence
    if word in BE:
        return _copula(wh, noun_phrase, word, rest, answer, raw_answer)
    following = lowered[index + 1] if index + 1 < len(tokens) else ""
    subject_modal = word in MODALS and (following in BASE_VERBS | ADVERBS | {"be", "have", "not"}
                                         or following.endswith("ly"))
    main_have = word in HAVE and (is_participle(following) or not any(
        is_participle(t) and not after_modifier(rest, i) for i, t in enumerate(rest) if i > 0))
    if (word in DO or word in MODALS or word in HAVE) and not subject_modal and not main_have:
        parts = clause_after_aux(tokens[index], rest)
        if parts is None:
            return None
        subject, verb, tail = parts
        if [bare(t) for t in subject] in (["people"], ["we"]) and bare(verb[-1]) == "call" and tail:
            return finish(join_words([cap_first(join_words(tail)), "is called", lower_first(answer)])), "wh_passive"
        object_answer = lower_first(answer, sentence=sentence_like(raw_answer))
        if [bare(t) for t in noun_phrase] == ["time"] and bare(object_answer.split()[0]) not in PREPOSITIONS:
            return finish(cap_first(join_words(subject + verb + ["at", object_answer] + tail))), "wh_object"
        statement = with_object(subject, verb, tail, tokens[index], object_answer)
        return finish(cap_first(statement)), "wh_object"
    # The wh-phrase is the subject: 'Who wrote Hamlet?', 'Which gas makes up most of the air?'
    if is_clause(raw_answer):
        return finish(f"{cap_first(answer)}, which {join_words(tokens[index:])}"), "wh_subject"
    return finish(join_words([cap_first(answer)] + tokens[index:])), "wh_subject"


def _how_many(tokens: list[str], answer: str) -> tuple[str, str] | None:
    """'How many legs does a spider have?' + 'Eight' -> 'A spider has eight legs.'"""
    lowered = [bare(t) for t in tokens]
    index = 2
    while index < len(tokens) and lowered[index] not in AUX and (
            index == 2 or finite_base(lowered[index]) is None):
        index += 1
    if index >= len(tokens):
        return None
    noun = tokens[2:index]
    amount = lower_first(answer)
    answer_words = set(normalize_text(answer).split())
    while noun and bare(noun[0]) in answer_words:  # '6 cups' for 'How many cups of flour': keep 'of flour'
        noun = noun[1:]
    if (noun and bare(noun[-1]) in answer_words) or lowered[1] == "much":  # 'How much money' + '135 dollars'
        noun = []
    counted = join_words([amount] + noun)
    rest = tokens[index + 1:]
    if lowered[index] in BE:
        if rest and bare(rest[0]) == "there":
            return finish(join_words(["There", lowered[index], counted] + rest[1:])), "how_many"
        if rest and bare(rest[0]) in PREPOSITIONS:
            return finish(join_words(["There", lowered[index], counted] + rest)), "how_many"
        return finish(join_words([cap_first(counted), lowered[index]] + rest)), "how_many"
    if lowered[index] in AUX:
        parts = clause_after_aux(tokens[index], rest)
        if parts is None:
            return None
        subject, verb, tail = parts
        slot = object_slot(tail)
        statement = join_words([cap_first(join_words(subject))] + verb + tail[:slot] + [counted] + tail[slot:])
        return finish(statement), "how_many"
    return finish(join_words([cap_first(counted)] + tokens[index:])), "how_many"


def _how_adjective(tokens: list[str], answer: str) -> tuple[str, str] | None:
    """'How old is the Earth?' + '4.5 billion years' -> 'The Earth is 4.5 billion years old.'"""
    adjective, aux = bare(tokens[1]), bare(tokens[2])
    rest = tokens[3:]
    measure = lower_first(answer)
    if aux in BE:
        cut = next((i for i in range(1, len(rest)) if bare(rest[i]) in PREPOSITIONS), len(rest))
        unit = [adjective] if adjective not in ("far", "often", "much") and adjective not in normalize_text(answer) \
            and cut == len(rest) else []
        return finish(join_words([cap_first(join_words(rest[:cut])), aux, measure] + unit + rest[cut:])), "how_adj"
    parts = clause_after_aux(tokens[2], rest)
    if parts is None:
        return None
    subject, verb, tail = parts
    if verb and bare(verb[-1]) in ("take", "takes", "took"):
        lowered = [bare(t) for t in tail]
        if [bare(t) for t in subject] == ["it"] and "to" in lowered[1:]:  # 'How long does it take X to Y?'
            cut = lowered.index("to", 1)
            doer = tail[1:cut] if lowered[0] == "for" else tail[:cut]
            return finish(join_words([cap_first(join_words(doer))] + verb + [measure] + tail[cut:])), "how_adj"
        return finish(join_words([cap_first(join_words(subject))] + verb + [measure] + tail)), "how_adj"
    return finish(join_words([cap_first(join_words(subject))] + verb + tail + [measure])), "how_adj"


def _yes_no(tokens: list[str], answer: str) -> tuple[str, str] | None:
    """'Is water a compound?' + 'Yes' -> 'Water is a compound.'; + 'No' -> 'Water is not a compound.'"""
    polarity = _YES_NO.get(bare(answer.split()[0]))
    aux = bare(tokens[0])
    if polarity is None or len(tokens) < 3:
        return None
    remainder = answer.split(None, 1)[1] if " " in answer else ""  # 'Yes, once it is mashed'
    if remainder:
        joiner = ", " if bare(remainder.split()[0]) in SUBORDINATORS | {"but", "so", "as"} else "; "
        statement = _yes_no(tokens, answer.split()[0])
        if statement is None:
            return None
        return finish(statement[0].rstrip(".") + joiner + lower_first(remainder, sentence=True)), "yes_no"
    if aux in BE | HAVE:
        subject, predicate = split_be(tokens[1:], yes_no=True)
        if not predicate:
            return None
        return finish(join_words([cap_first(join_words(declarative_subject(subject))), aux]
                                 + ([] if polarity else ["not"]) + predicate)), "yes_no"
    split = split_base_verb(tokens[1:])
    if split is None:
        return None
    subject, verb, tail = split
    subject = declarative_subject(subject)
    if aux in DO:
        verb_group = [inflect(verb, DO[aux] if subject == split[0] else "base")] if polarity else [
            aux if subject == split[0] else "do", "not", verb]
    else:
        verb_group = [aux, verb] if polarity else (["cannot", verb] if aux == "can" else [aux, "not", verb])
    return finish(join_words([cap_first(join_words(subject))] + verb_group + tail)), "yes_no"


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
            governor = before[-2] if bare(before[-1]) in PREPOSITIONS and len(before) > 1 else before[-1]
            if bare(governor) not in BE and finite_base(governor) is None:
                continue
        words, fill = fit_fill(before, lower_first(answer))
        return finish(join_words(words + [fill]) + body[match.end():]), "in_situ"
    return None


_IMPERATIVE = re.compile(r"^(?:name|identify|give|state|list|mention)\s+(.+)$", re.IGNORECASE)


def _imperative(body: str, answer: str) -> tuple[str, str] | None:
    """'Name the instrument used to measure air pressure.' + 'A barometer' -> 'A barometer is the instrument ...'"""
    define = re.match(r"^define\s+(.+)$", body, re.IGNORECASE)
    if define:
        return finish(f"{cap_first(define.group(1))} is {lower_first(answer)}"), "imperative"
    match = _IMPERATIVE.match(body)
    if not match:
        return None
    words = match.group(1).split()
    first = bare(words[0])
    if first in ("the", "a", "an") or (first == "an" and len(words) > 1):
        return finish(join_words([cap_first(answer), "is"] + words)), "imperative"
    if first == "one":
        return finish(join_words([cap_first(answer), "is", "an" if words[1][:1].lower() in "aeio" else "a"]
                             + words[1:])), "imperative"
    if first in NUMBER_WORDS or first.isdigit() or first in ("some", "several"):
        items = re.split(r"\s*,\s*(?:and\s+)?|\s+and\s+", answer)
        listed = ", ".join(items[:-1]) + " and " + items[-1] if len(items) > 1 else answer
        return finish(join_words([cap_first(listed), "are"] + words[1:])), "imperative"
    return None


def _split_context(question: str) -> tuple[str, str]:
    """Split a long question into its context and the final question ('..., what can I do ...?')."""
    sentences = _SENTENCE_SPLIT.split(question.strip())
    context, final = " ".join(sentences[:-1]), sentences[-1]
    if final.rstrip().endswith("?"):
        pattern = re.compile(r",\s+(?=(?:what|which|who|whom|where|when|why|how)\b)", re.IGNORECASE)
        matches = list(pattern.finditer(final))
        if not matches and final.split()[0].lower() not in WH | AUX:
            matches = list(re.finditer(r",\s+(?=(?:" + "|".join(sorted(AUX)) + r")\b)", final, re.IGNORECASE))
        if matches:
            cut = matches[-1]
            head = final[:cut.start()]
            context = f"{context} {head}".strip()
            final = final[cut.end():]
            return context, cap_first(final)
    return context, final


def _convert_question(question: str, answer: str, raw_answer: str) -> tuple[str, str] | None:
    body = question.strip().rstrip("?").strip()
    tokens = body.split()
    if not tokens:
        return None
    first = bare(tokens[0])
    if first in WH or (first in PREPOSITIONS and len(tokens) > 1 and bare(tokens[1]) in WH):
        return _wh_question(tokens, answer, raw_answer)
    if first in AUX:
        return _yes_no(tokens, answer)
    return _in_situ(body, answer)


def _with_context(context: str, final: str, answer: str, raw_answer: str) -> tuple[str, str] | None:
    """Statement of a long question: its final question converted, with the context kept.

    A subordinate context ('If you heat ice, what happens?') becomes the statement's first clause;
    context sentences are kept as sentences before it (the paper's references compress them into one
    clause, which rules cannot do reliably).
    """
    subordinate = bare(context.split()[0]) in SUBORDINATORS and not re.search(r"[.!?]$", context)
    body = final.strip().rstrip("?").strip()
    if subordinate and _HAPPEN.match(body):
        converted = _what_happens(body, answer, raw_answer, condition=context)
        return None if converted is None else (converted[0], f"long+{converted[1]}")
    converted = _convert_question(final, answer, raw_answer)
    if converted is None:
        return None
    statement, rule = converted
    if subordinate:
        return finish(f"{context}, {lower_first(statement, sentence=True)}"), f"long+{rule}"
    context = context if re.search(r"[.!?]$", context) else context + "."
    return f"{cap_first(context)} {statement}", f"long+{rule}"


def reformulate(question: str, answer: str) -> tuple[str, str]:
    """One question-answer pair -> (statement, rule name from ``RULES``), by the rules of the template generator.

    Example:
        >>> reformulate("Light bends when it passes from air into ______ at an angle.", "water")
        ('Light bends when it passes from air into water at an angle.', 'blank')
    """
    question = " ".join(question.split())
    raw_answer = " ".join(answer.split())
    answer = strip_answer(raw_answer)
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
    if body and bare(body[0]) not in WH | AUX and not context:
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

    def signature(self) -> Signature:
        """Settings signature of the statements (the rules are versioned with caplib): ``statements:template|...``."""
        from caplib import __version__

        return Signature("statements", (("caplib", __version__),), value="template")

    def generate_with_rules(self, questions: Sequence[str], answers: Sequence[str]) -> list[tuple[str, str]]:
        """(statement, rule) for every pair."""
        questions, answers = check_pairs(questions, answers)
        results = [reformulate(q, a) for q, a in zip(questions, answers)]
        self.last_rules = [rule for _, rule in results]
        return results

    def generate(self, questions: Sequence[str], answers: Sequence[str]) -> list[str]:
        """One declarative statement per (question, answer) pair."""
        return [statement for statement, _ in self.generate_with_rules(questions, answers)]
