"""NLI pairs derived from QA items (Demszky et al., 2018), the leakage guard and the held-out split.

:func:`derive_pairs` applies the rules of ``PAIR_KINDS`` to each item; :func:`leaked` finds training
texts that equal or near-duplicate a reserved test question; :func:`split_data` chains the guard, the
open-QA filter (:func:`usable_items`) and the held-out split (:func:`is_heldout`).

Example:
    >>> PAIR_KINDS["negation"][0]
    'contradiction'
    >>> leaked(["What is the boiling point of water?"], ["what is the boiling point of water"])
    [0]
"""

from __future__ import annotations

import hashlib
import random
import re
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

from caplib.offline_nli.recipe import Recipe
from caplib.offline_nli.rules import antonym_swap, lower_first, narrower_answer, negate, question_type, surface_variant
from caplib.offline_nli.sources import NOT_ENTAILMENT, NLIPair, QAItem, TrainingData
from caplib.text import near_duplicates_in, normalize_text

__all__ = ["PAIR_KINDS", "derive_pairs", "identity_pairs", "is_heldout", "item_key", "leaked", "split_data", "usable_items"]

#: Derivation rules of :func:`derive_pairs`: kind -> (label of premise -> hypothesis, what it mimics).
PAIR_KINDS: Mapping[str, tuple[str, str]] = {
    "identity": ("entailment", "exact: the gold statement vs. itself"),
    "variant": ("entailment", "exact: the gold statement with a surface change (conjuncts swapped, 'It is true that')"),
    "rewording": ("entailment", "equivalent: the same question and answer in another statement frame"),
    "choice": (NOT_ENTAILMENT, "invalid: another choice of the same question (a contradiction only when the "
                               "question presupposes a unique answer)"),
    "choice_reworded": (NOT_ENTAILMENT, "another choice, in another statement frame"),
    "conjoined_choice": (NOT_ENTAILMENT, "overinclusive-invalid: the answer conjoined with another choice"),
    "conjoined_choice_reverse": ("entailment", "the answer conjoined with another choice -> the answer alone"),
    "extra": ("neutral", "overinclusive: the answer plus content the premise does not support"),
    "extra_reverse": ("entailment", "the answer plus added content -> the answer alone"),
    "narrower": ("entailment", "partial: a list item or the answer without its modifier"),
    "narrower_reverse": ("neutral", "a narrower answer -> the full answer"),
    "question_type": ("entailment", "partial: the answer generalized to the question's type ('a body system')"),
    "question_type_reverse": ("neutral", "the answer generalized to the question's type -> the answer"),
    "negation": ("contradiction", "contradictory: the negated statement"),
    "antonym": ("contradiction", "contradictory: a direction or comparison word replaced by its antonym"),
    "unrelated": ("neutral", "the statement of another question"),
    "support": ("entailment", "a source sentence that states the answer -> the statement"),
    "support_choice": (NOT_ENTAILMENT, "a source sentence that states the answer -> another choice"),
    "rte": ("entailment", "GLUE RTE, entailment or not_entailment"),
    "mrpc": ("entailment", "GLUE MRPC paraphrase, both directions"),
    "cb": ("entailment", "SuperGLUE CB (held-out check only, never trained on)"),
}


# ---------------------------------------------------------------------------------------------------------------
# Deriving NLI pairs from QA items (Demszky et al., 2018)
# ---------------------------------------------------------------------------------------------------------------

_CONNECTORS = (", and ", "; ", ", and also ", " - ")
_REWORDINGS = ('The answer to the question "{q}" is {a}.', "{q} {a}.", "Answer to {q}: {a}.")


def _sentences(text: str) -> list[str]:
    return [s.strip() for s in re.split(r"(?<=[.!?])\s+(?=[A-Z])", text) if s.strip()]


def _mentions(sentence: str, answer: str) -> bool:
    return f" {normalize_text(answer)} " in f" {normalize_text(sentence)} "


def _strip_end(text: str) -> str:
    return text.strip().rstrip(".!?;:, ")


Key = tuple[str, str]  # (question, answer): a statement the template generator makes
Spec = Any  # a literal text (str) or a Key
Plan = list[tuple[str, Spec, Spec]]  # (kind, premise, hypothesis)
# When a statement is the answer alone (a full-sentence answer), an added choice is a separate claim, not a
# second filler of the question's frame, and the question's type is no answer: these kinds then become the
# ones on the right (None: no pair).
_WITHOUT_FRAME: Mapping[str, str | None] = {"conjoined_choice": "extra", "conjoined_choice_reverse": "extra_reverse",
                                            "question_type": None, "question_type_reverse": None}


def _generate(generator: Any, keys: Sequence[Key]) -> dict[Key, tuple[str, str]]:
    """(statement, rule) per key; the rule is empty for generators that do not report one."""
    keys = list(dict.fromkeys(keys))
    if not keys:
        return {}
    questions, answers = [q for q, _ in keys], [a for _, a in keys]
    if hasattr(generator, "generate_with_rules"):
        results = list(generator.generate_with_rules(questions, answers))
    else:
        results = [(statement, "") for statement in generator.generate(questions, answers)]
    return dict(zip(keys, results))


def derive_pairs(items: Sequence[QAItem], generator: Any, seed: int, pairs_per_item: int = 3) -> list[NLIPair]:
    """NLI pairs from QA items: ``pairs_per_item`` per item, plus support pairs (rules: ``PAIR_KINDS``).

    Per item: for half of the items the gold statement itself or under another framing (entailment);
    another choice (not entailment); the answer with added content (neutral) or, reversed, that
    extension read back to the answer (entailment); a narrower answer and the answer generalized to
    the question's type where there are such (entailment; reversed: neutral); the negated statement
    and, where there is a direction word, its antonym (contradiction); then ``pairs_per_item - 2`` of
    an unrelated statement, a rewording, the answer conjoined with a wrong choice, a reworded wrong
    choice; and for items with a source text, a sentence that states the answer. Directions, partners
    and rules are drawn from the item's own RNG (seeded by ``seed``, source and id), so an item's pairs
    do not depend on which other items are present except for the unrelated statements and modifiers
    it borrows. Statements come from ``generator`` (the offline profile's
    :class:`caplib.statements.TemplateStatementGenerator`), so training sees what CAP sees.

    Example:
        >>> from caplib.statements import TemplateStatementGenerator
        >>> item = QAItem("demo", "1", "What gas do plants absorb?", "carbon dioxide", ("oxygen", "helium"))
        >>> pairs = derive_pairs([item], TemplateStatementGenerator(), seed=0)
        >>> [(p.kind, p.label) for p in pairs if p.kind == "choice"]
        [('choice', 'not_entailment')]
    """
    golds = _generate(generator, [(item.question, item.answer) for item in items])
    gold_texts = [golds[(item.question, item.answer)][0] for item in items]
    modifier_pool = sorted(_modifiers(items))
    plans = [_plan(item, random.Random(f"{seed}|{item.source}|{item.item_id}"), gold_texts, index, modifier_pool,
                   pairs_per_item) for index, item in enumerate(items)]
    wanted = [spec for plan in plans for _, premise, hypothesis in plan for spec in (premise, hypothesis)
              if isinstance(spec, tuple) and spec not in golds]
    statements = {**golds, **_generate(generator, wanted)}
    pairs: list[NLIPair] = []
    for item, plan in zip(items, plans):
        for kind, premise, hypothesis in plan:
            keys = [spec for spec in (premise, hypothesis) if isinstance(spec, tuple)]
            if kind in _WITHOUT_FRAME and any(statements[key][1] == "answer_is_statement" for key in keys):
                replacement = _WITHOUT_FRAME[kind]
                if replacement is None:
                    continue
                kind = replacement
            texts = [spec if isinstance(spec, str) else statements[spec][0] for spec in (premise, hypothesis)]
            if all(text.strip() for text in texts):
                pairs.append(NLIPair(texts[0], texts[1], PAIR_KINDS[kind][0], kind, item.source, item.item_id))
    return pairs


def _modifiers(items: Sequence[QAItem]) -> set[str]:
    """Modifiers cut off answers by :func:`narrower_answer` ("in the presence of light"): content to add."""
    found = set()
    for item in items:
        narrow = narrower_answer(item.answer)
        if narrow is None:
            continue
        rest = _strip_end(item.answer)[len(narrow):].strip()
        if rest and rest[0].isalpha() and 2 <= len(rest.split()) <= 10:
            found.add(rest)
    return found


def _plan(item: QAItem, rng: random.Random, gold_texts: Sequence[str], index: int, modifier_pool: Sequence[str],
          pairs_per_item: int) -> Plan:
    """The pairs of one item, with statements as keys to generate in one batch afterwards."""
    q, a = item.question, _strip_end(item.answer)
    gold: Key = (item.question, item.answer)
    gold_text = gold_texts[index]
    plan: Plan = []

    def add(kind: str, reverse_kind: str, premise: Spec, hypothesis: Spec) -> None:
        plan.append((reverse_kind, hypothesis, premise) if rng.random() < 0.5 else (kind, premise, hypothesis))

    def other() -> str:
        if len(gold_texts) < 2:
            return ""
        j = rng.randrange(len(gold_texts) - 1)
        return gold_texts[j + (j >= index)]

    def reworded(answer: str) -> str:
        return rng.choice(_REWORDINGS).format(q=q.strip(), a=_strip_end(answer))

    # 0. for half of the items: the gold statement itself or under another framing -> entailment
    roll = rng.random()
    if roll < 0.25:
        plan.append(("identity", gold, gold))
    elif roll < 0.5:
        add("variant", "variant", gold, surface_variant(gold_text, rng))
    # 1. another choice of the question -> not entailment (either direction)
    if item.wrong:
        add("choice", "choice", gold, (q, rng.choice(item.wrong)))
    # 2. the answer with content the gold does not state -> neutral; reversed -> entailment
    facts = [s for s in _sentences(item.context) if not _mentions(s, a) and len(s.split()) <= 30]
    fact = rng.choice(facts) if facts else other()
    roll = rng.random()
    if roll < 1 / 3 and modifier_pool:
        extended: Spec = (q, f"{a} {rng.choice(modifier_pool)}")
    elif roll < 2 / 3 and fact:
        extended = (q, f"{a}{rng.choice(_CONNECTORS)}{lower_first(_strip_end(fact))}")
    else:
        extended = f"{gold_text} {fact}".strip()
    add("extra", "extra_reverse", gold, extended)
    # 2b. a narrower answer, the answer generalized to the question's type -> entailment (reversed: neutral)
    narrow = narrower_answer(item.answer)
    if narrow is not None and normalize_text(narrow) != normalize_text(a):  # rare, so always taken
        add("narrower", "narrower_reverse", gold, (q, narrow))
    general = question_type(q)
    if general is not None and normalize_text(general) != normalize_text(a):
        add("question_type", "question_type_reverse", gold, (q, general))
    # 3. the negated statement, and a direction word turned into its antonym -> contradiction
    add("negation", "negation", gold, negate(gold_text))
    contrary = antonym_swap(gold_text)
    if contrary is not None:  # rare, so always taken
        add("antonym", "antonym", gold, contrary)
    # 4. further relations, drawn per item
    options = ["unrelated", "rewording"]
    if item.wrong:
        options += ["conjoined_choice", "choice_reworded"]
    for kind in rng.sample(options, k=min(len(options), max(pairs_per_item - 2, 0))):
        if kind == "unrelated" and len(gold_texts) > 1:
            add("unrelated", "unrelated", gold, other())
        elif kind == "rewording":
            add("rewording", "rewording", gold, reworded(a))
        elif kind == "conjoined_choice":
            wrong = lower_first(_strip_end(rng.choice(item.wrong)))
            add("conjoined_choice", "conjoined_choice_reverse", gold, (q, f"{a} and {wrong}"))
        elif kind == "choice_reworded":
            add("choice_reworded", "choice_reworded", gold, reworded(rng.choice(item.wrong)))
    # 5. a source sentence that states the answer -> entailment; with another choice -> not entailment
    support = [s for s in _sentences(item.context) if _mentions(s, a) and len(s.split()) <= 60]
    if support:
        sentence = rng.choice(support)
        plan.append(("support", sentence, gold))
        wrong_choices = [w for w in item.wrong if not _mentions(sentence, w)]
        if wrong_choices:
            plan.append(("support_choice", sentence, (q, rng.choice(wrong_choices))))
    return plan


def identity_pairs(pairs: Sequence[NLIPair]) -> list[NLIPair]:
    """Each authored premise of ``pairs`` paired with itself (kind ``identity``, entailment), once: the exact
    answer's case, which the authors were told never to write (a hypothesis may not equal its premise).

    Example:
        >>> pair = NLIPair("Bees make honey.", "Honey is made by bees.", "entailment", "authored_paraphrase",
        ...                "authored", "general:001")
        >>> [(p.premise, p.hypothesis) for p in identity_pairs([pair, pair])]
        [('Bees make honey.', 'Bees make honey.')]
    """
    seen: dict[str, NLIPair] = {}
    for pair in pairs:
        if pair.source == "authored" and not pair.kind.endswith("_reverse") and pair.premise not in seen:
            seen[pair.premise] = NLIPair(pair.premise, pair.premise, "entailment", "identity", "authored", pair.item_id)
    return list(seen.values())


# ---------------------------------------------------------------------------------------------------------------
# Leakage guard and held-out split
# ---------------------------------------------------------------------------------------------------------------

def leaked(texts: Sequence[str], reserved: Sequence[str], threshold: float = 0.9) -> list[int]:
    """Indices of ``texts`` that equal or near-duplicate (Jaccard >= ``threshold``, App. B.5) a reserved text.

    Every text is compared with every reserved text (:func:`caplib.text.near_duplicates_in`).

    Example:
        >>> leaked(["What is the boiling point of water?", "Who wrote Hamlet?"],
        ...        ["what is the boiling point of water", "Name a noble gas."])
        [0]
    """
    return near_duplicates_in(list(texts), list(reserved), threshold)


def is_heldout(source: str, item_id: str, seed: int, fraction: float) -> bool:
    """Whether a source item is held out from training (a hash of seed, source and id; stable per item).

    Example:
        >>> is_heldout("arc_easy", "Mercury_7", seed=13, fraction=0.0)
        False
    """
    digest = hashlib.sha256(f"{seed}|{source}|{item_id}".encode("utf-8")).digest()
    return int.from_bytes(digest[:8], "big") / 2**64 < fraction


def usable_items(items: Sequence[QAItem], max_question_words: int = 60, max_answer_words: int = 15
                 ) -> tuple[list[QAItem], dict[str, int]]:
    """Items usable as open QA, as in CAP-Correctness: the cleaning rules of B.3
    (:func:`caplib.data.apply_cleaning_rules`) and the length limits of the bundled sample's selection.

    Returns the kept items and the number dropped per reason.

    Example:
        >>> kept, dropped = usable_items([QAItem("demo", "1", "Which of the following is a gas?", "oxygen")])
        >>> kept, dropped
        ([], {'which-of-the-following question': 1})
    """
    import pandas as pd

    from caplib.data import apply_cleaning_rules

    frame = pd.DataFrame({"question": [item.question for item in items], "gold_answer": [item.answer for item in items]})
    kept, dropped = apply_cleaning_rules(frame)
    reasons = Counter(dropped["reason"])
    result = []
    for index in kept.index:
        item = items[index]
        if len(item.question.split()) > max_question_words:
            reasons[f"question longer than {max_question_words} words"] += 1
        elif len(item.answer.split()) > max_answer_words:
            reasons[f"answer longer than {max_answer_words} words"] += 1
        else:
            result.append(item)
    return result, dict(sorted(reasons.items()))


def item_key(source: str, item_id: str) -> tuple[str, str]:
    """The key that decides whether a pair is held out: the QA item (or general premise) an authored pair's
    premise id names (``"arc_easy:Mercury_7"`` -> ``("arc_easy", "Mercury_7")``), else the pair's own source and id,
    so that an item's authored and derived pairs fall on the same side.

    Example:
        >>> item_key("authored", "arc_easy:Mercury_7"), item_key("mrpc", "12")
        (('arc_easy', 'Mercury_7'), ('mrpc', '12'))
    """
    if source == "authored":
        premise_source, _, premise_item = item_id.partition(":")
        return premise_source, premise_item
    return source, item_id


def split_data(data: TrainingData, recipe: Recipe) -> tuple[list[QAItem], list[QAItem], list[NLIPair],
                                                            list[NLIPair], dict[str, Any]]:
    """Leakage guard, open-QA filter, held-out split: (train items, held-out items, train NLI, held-out NLI, counts).

    An NLI pair whose premise or hypothesis near-duplicates a reserved question is dropped with every pair of the
    same item (for the authored corpus: of the same premise), and so is every authored pair whose premise states a
    QA item whose question is reserved; items are held out by :func:`item_key`.
    """
    threshold = recipe.near_duplicate_threshold
    leak_qa = set(leaked([item.question for item in data.qa_items], data.reserved_questions, threshold))
    texts = [text for p in data.nli_pairs for text in (p.premise, p.hypothesis)]  # both sides of every pair
    leak_nli = {i // 2 for i in leaked(texts, data.reserved_questions, threshold)}
    qa, _ = usable_items([item for i, item in enumerate(data.qa_items) if i not in leak_qa],
                         recipe.max_question_words, recipe.max_answer_words)
    leaked_keys = {(x.source, x.item_id) for i, x in enumerate(data.qa_items) if i in leak_qa}
    leaked_items = set(leaked_keys)
    # a leaked premise drops all its pairs; so does a leaked QA item its authored premise states (version 4)
    leaked_keys |= {(x.source, x.item_id) for i, x in enumerate(data.nli_pairs)
                    if i in leak_nli or item_key(x.source, x.item_id) in leaked_items}
    nli = [p for p in data.nli_pairs if (p.source, p.item_id) not in leaked_keys]
    kept_keys = {(x.source, x.item_id) for x in (*qa, *nli)}

    def held(key: tuple[str, str]) -> bool:
        return is_heldout(*item_key(*key), seed=recipe.seed, fraction=recipe.heldout_fraction)

    counts: dict[str, Any] = {}
    for source in sorted({x.source for x in (*data.qa_items, *data.nli_pairs)}):
        loaded = {(x.source, x.item_id) for x in (*data.qa_items, *data.nli_pairs) if x.source == source}
        kept = loaded & kept_keys
        counts[source] = {"items_loaded": len(loaded), "items_leaked": len(loaded & leaked_keys),
                          "items_not_open_qa": len(loaded - kept - leaked_keys),
                          "items_train": sum(not held(key) for key in kept),
                          "items_heldout": sum(held(key) for key in kept)}
    return ([x for x in qa if not held((x.source, x.item_id))], [x for x in qa if held((x.source, x.item_id))],
            [x for x in nli if not held((x.source, x.item_id))], [x for x in nli if held((x.source, x.item_id))],
            counts)
