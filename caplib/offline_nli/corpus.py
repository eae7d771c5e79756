"""The authored NLI corpus (``data/nli/``): relations, pair files, and the annotation-artifact check.

Hypotheses were written to the SNLI/MNLI protocol (Bowman et al., 2015; Williams et al., 2018): for a
premise, one hypothesis that is definitely true given it, one that might be true, one that is definitely
false, each of a named *relation* (``RELATIONS``). The relation fixes the label of premise -> hypothesis and,
where it is determined, of the reverse pair (the reverse of "adds an unsupported detail" is entailment,
the reverse of a narrower statement is neutral). The authoring brief is ``data/nli/BRIEF.md``.

A pair file (``pairs.jsonl``) holds one JSON object per pair with ``pair_id``, ``premise_id``, ``premise``,
``hypothesis``, ``label``, ``relation``, ``direction`` (forward or reverse) and ``source``.

Example:
    >>> RELATIONS["added_detail"].forward, RELATIONS["added_detail"].reverse
    ('neutral', 'entailment')
    >>> pairs, problems = pairs_from_entries([{"premise_id": "demo:1", "source": "demo",
    ...     "premise": "Bees make honey.",
    ...     "hypotheses": [{"relation": "paraphrase", "text": "Honey is made by bees."}]}])
    >>> [(p["direction"], p["label"]) for p in pairs], problems
    ([('forward', 'entailment'), ('reverse', 'entailment')], [])
"""

from __future__ import annotations

import json
import random
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = ["CORPUS_DIR", "RELATIONS", "Relation", "corpus_stats", "disputed_pairs", "hypothesis_only_accuracy",
           "pairs_from_entries", "read_corpus", "read_stats", "relation_kind", "relation_rotation",
           "second_pass_agreement", "write_corpus"]

#: The corpus directory of the source tree (``data/nli``).
CORPUS_DIR = Path(__file__).resolve().parents[2] / "data" / "nli"


@dataclass(frozen=True)
class Relation:
    """A hypothesis relation: its label group, the labels of both directions (None: not determined), a gloss."""

    group: str
    forward: str
    reverse: str | None
    gloss: str


#: The relations a hypothesis is written to (forward: premise -> hypothesis; reverse: hypothesis -> premise).
RELATIONS: Mapping[str, Relation] = {
    "paraphrase": Relation("entailment", "entailment", "entailment",
                           "the same content in other words (nothing added or left out)"),
    "narrower": Relation("entailment", "entailment", "neutral",
                         "the premise with part of its content left out (a list item, a qualifier dropped)"),
    "reworded_answer": Relation("entailment", "entailment", "entailment",
                                "the premise with only its answer said in other words, the same meaning (revision 1)"),
    "generalisation": Relation("entailment", "entailment", "neutral",
                               "the premise's claim made more general (a hypernym, a looser bound)"),
    "added_detail": Relation("neutral", "neutral", "entailment",
                             "the premise's content plus a detail it does not support"),
    "related_fact": Relation("neutral", "neutral", "neutral",
                             "a related claim about the same subject that the premise leaves undetermined"),
    "alternative_answer": Relation("neutral", "neutral", "neutral",
                                   "another answer to the premise's question, compatible with it but not implied"),
    "wrong_value": Relation("contradiction", "contradiction", "contradiction",
                            "the premise with its answer replaced by an incompatible one of the same type"),
    "antonym": Relation("contradiction", "contradiction", "contradiction",
                        "an opposite or incompatible property, direction or comparison, without a negation word"),
    "negation": Relation("contradiction", "contradiction", "contradiction", "the premise negated"),
}

#: Shares of relations within each group, for the assignment of :func:`relation_rotation`.
_SHARES: Mapping[str, Sequence[tuple[str, int]]] = {
    "entailment": (("paraphrase", 4), ("narrower", 3), ("generalisation", 3)),
    "neutral": (("added_detail", 4), ("related_fact", 3), ("alternative_answer", 3)),
    "contradiction": (("wrong_value", 4), ("antonym", 3), ("negation", 2)),
}


def relation_rotation(n: int, seed: int) -> list[list[str]]:
    """``n`` assignments of one relation per label group, in the shares of ``_SHARES`` (seeded order).

    Example:
        >>> [len(r) for r in relation_rotation(4, seed=0)]
        [3, 3, 3, 3]
    """
    rng = random.Random(seed)
    columns = []
    for group in ("entailment", "neutral", "contradiction"):
        cycle = [name for name, share in _SHARES[group] for _ in range(share)]
        column = [cycle[i % len(cycle)] for i in range(n)]
        rng.shuffle(column)
        columns.append(column)
    return [list(row) for row in zip(*columns)]


def pairs_from_entries(entries: Sequence[Mapping[str, Any]]) -> tuple[list[dict[str, Any]], list[str]]:
    """Pairs of both directions from authored entries, and the structural problems found (entries skipped).

    An entry has ``premise_id``, ``source``, ``premise`` and ``hypotheses`` (``relation``, ``text``). An entry
    whose premise or a hypothesis is empty, equal to the premise or repeated, or whose relation is unknown, is
    reported and left out whole.
    """
    pairs: list[dict[str, Any]] = []
    problems: list[str] = []
    for entry in entries:
        premise = str(entry.get("premise", "")).strip()
        hypotheses = entry.get("hypotheses") or []
        texts = [str(h.get("text", "")).strip() for h in hypotheses]
        unknown = [h.get("relation") for h in hypotheses if h.get("relation") not in RELATIONS]
        issue = ("empty premise" if not premise else "no hypotheses" if not hypotheses
                 else f"unknown relation {unknown}" if unknown else "empty hypothesis" if not all(texts)
                 else "hypothesis equals the premise" if premise in texts
                 else "repeated hypothesis" if len(set(texts)) < len(texts) else "")
        if issue:
            problems.append(f"{entry.get('premise_id')}: {issue}")
            continue
        for n, (hypothesis, text) in enumerate(zip(hypotheses, texts)):
            relation = RELATIONS[hypothesis["relation"]]
            base = {"premise_id": entry["premise_id"], "source": entry["source"], "relation": hypothesis["relation"]}
            pairs.append({"pair_id": f"{entry['premise_id']}#{n}", **base, "direction": "forward",
                          "premise": premise, "hypothesis": text, "label": relation.forward})
            if relation.reverse is not None:
                pairs.append({"pair_id": f"{entry['premise_id']}#{n}r", **base, "direction": "reverse",
                              "premise": text, "hypothesis": premise, "label": relation.reverse})
    return pairs, problems


def write_corpus(pairs: Sequence[Mapping[str, Any]], path: Path | str) -> None:
    """Pairs as JSON lines."""
    with open(path, "w", encoding="utf-8") as handle:
        for pair in pairs:
            handle.write(json.dumps(dict(pair), ensure_ascii=False) + "\n")


def read_corpus(path: Path | str = CORPUS_DIR / "pairs.jsonl") -> list[dict[str, Any]]:
    """The pairs of a corpus file (:func:`write_corpus`)."""
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"{path} not found: the authored NLI corpus ships with the source tree (data/nli)")
    with open(path, encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


def corpus_stats(directory: Path | str = CORPUS_DIR) -> dict[str, Any]:
    """What ``data/nli/stats.json`` records: counts, the blind second pass's agreement and the hypothesis-only
    check (:func:`hypothesis_only_accuracy`) on all pairs and on forward pairs (about 35 s: run by
    ``scripts/nli_corpus.py stats``, read with :func:`read_stats`).
    """
    pairs = read_corpus(Path(directory) / "pairs.jsonl")
    forward = [p for p in pairs if p["direction"] == "forward"]

    def check(rows: Sequence[Mapping[str, Any]]) -> dict[str, float]:
        return hypothesis_only_accuracy([p["hypothesis"] for p in rows], [p["label"] for p in rows],
                                        [p["premise_id"] for p in rows])

    return {"premises": len({p["premise_id"] for p in pairs}), "hypotheses": len(forward), "pairs": len(pairs),
            "labels": dict(sorted(Counter(p["label"] for p in pairs).items())),
            "relations": dict(sorted(Counter(p["relation"] for p in forward).items())),
            "second_pass": second_pass_agreement(directory), "hypotheses_disputed": len(disputed_pairs(directory)),
            "hypothesis_only": {"both_directions": check(pairs), "forward_only": check(forward)}}


def read_stats(directory: Path | str = CORPUS_DIR) -> dict[str, Any]:
    """``stats.json`` of the corpus (:func:`corpus_stats`), or an empty dict where it is missing."""
    path = Path(directory) / "stats.json"
    return json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}


def _second_pass(directory: Path) -> list[tuple[dict[str, Any], str]]:
    """(authored pair, blind second label) for every item of ``second_labels/`` (empty without a second pass)."""
    labels_dir = directory / "second_labels"
    if not (labels_dir / "labels.jsonl").is_file():
        return []
    mapping = json.loads((labels_dir / "item_to_pair.json").read_text(encoding="utf-8"))
    pairs = {p["pair_id"]: p for p in read_corpus(directory / "pairs.jsonl")}
    return [(pairs[mapping[row["item"]]], row["label"]) for row in read_corpus(labels_dir / "labels.jsonl")]


def relation_kind(pair: Mapping[str, Any]) -> str:
    """A pair's relation, with ``_reverse`` for the hypothesis -> premise direction.

    Example:
        >>> relation_kind({"relation": "narrower", "direction": "reverse"})
        'narrower_reverse'
    """
    return pair["relation"] + ("_reverse" if pair["direction"] == "reverse" else "")


def disputed_pairs(directory: Path | str = CORPUS_DIR) -> set[str]:
    """Hypotheses (pair ids without the reverse mark ``r``) with a pair whose blind second label
    (``second_labels/labels.jsonl``) differs from the authored label; empty without a second pass.

    Example:
        >>> disputed_pairs("no/such/directory")
        set()
    """
    return {pair["pair_id"].removesuffix("r") for pair, label in _second_pass(Path(directory)) if pair["label"] != label}


def second_pass_agreement(directory: Path | str = CORPUS_DIR) -> dict[str, Any]:
    """Agreement of the blind second labels with the authored labels: n, share agreeing, Cohen's kappa, and the
    share agreeing per relation and direction (``added_detail`` forward, ``added_detail_reverse``...).

    Example:
        >>> second_pass_agreement("no/such/directory")
        {'n': 0}
    """
    from sklearn.metrics import cohen_kappa_score

    rows = _second_pass(Path(directory))
    if not rows:
        return {"n": 0}
    authored, second = [p["label"] for p, _ in rows], [label for _, label in rows]
    by_relation: dict[str, list[bool]] = {}
    for pair, label in rows:
        by_relation.setdefault(relation_kind(pair), []).append(pair["label"] == label)
    return {"n": len(rows), "agreement": round(sum(a == b for a, b in zip(authored, second)) / len(rows), 4),
            "kappa": round(float(cohen_kappa_score(authored, second)), 4),
            "by_relation": {name: {"n": len(v), "agreement": round(sum(v) / len(v), 4)}
                            for name, v in sorted(by_relation.items())}}


def hypothesis_only_accuracy(hypotheses: Sequence[str], labels: Sequence[str], groups: Sequence[str],
                             folds: int = 5, seed: int = 0) -> dict[str, float]:
    """Cross-validated accuracy of a hypothesis-only classifier (bag of words + logistic regression), the
    annotation-artifact check of Gururangan et al. (2018) and Poliak et al. (2018); folds grouped by premise.

    Returns the accuracy and the majority-class share (the floor it is to be read against).

    Example:
        >>> h = ["red cat", "blue dog", "red fox", "blue owl", "red owl", "blue cat"] * 5  # "red" gives it away
        >>> result = hypothesis_only_accuracy(h, ["x", "y"] * 15, [str(i) for i in range(30)], folds=3)
        >>> result["accuracy"], result["majority_baseline"]
        (1.0, 0.5)
    """
    import numpy as np
    from sklearn.feature_extraction.text import CountVectorizer
    from sklearn.linear_model import LogisticRegression
    from sklearn.model_selection import GroupKFold, cross_val_predict
    from sklearn.pipeline import make_pipeline

    y = np.asarray(labels)
    model = make_pipeline(CountVectorizer(ngram_range=(1, 2), min_df=2, lowercase=True),
                          LogisticRegression(max_iter=2000, C=1.0))
    order = np.random.default_rng(seed).permutation(len(y))  # GroupKFold is deterministic; shuffle groups once
    predicted = np.empty(len(y), dtype=object)
    predicted[order] = cross_val_predict(model, [hypotheses[i] for i in order], y[order],
                                         groups=[groups[i] for i in order], cv=GroupKFold(n_splits=folds))
    _, counts = np.unique(y, return_counts=True)
    return {"n": int(len(y)), "accuracy": round(float((predicted == y).mean()), 4),
            "majority_baseline": round(float(counts.max() / len(y)), 4)}
