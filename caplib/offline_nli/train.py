"""Training the backbone on NLI pairs (partial labels included) and measuring it on held-out pairs.

:func:`train_model` fine-tunes the encoder as a 3-way cross-encoder with :func:`partial_label_loss`;
:func:`evaluate` scores pairs through :class:`caplib.nli.NLIScorer`, the inference path of CAP.
Pairs are stored as JSON lines (:func:`write_pairs`, :func:`read_pairs`).

Example:
    >>> import torch
    >>> round(float(partial_label_loss(torch.zeros(1, 3), torch.tensor([[True, False, False]]))), 4)  # log 3
    1.0986
"""

from __future__ import annotations

import contextlib
import json
import math
import random
import time
from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any

from caplib.checkpoints import offline_nli_dir
from caplib.nli import LABEL_ORDER, NLIScorer
from caplib.offline_nli.recipe import Recipe, base_model_dir
from caplib.offline_nli.sources import NOT_ENTAILMENT, NLIPair, load_nli_pairs, load_snli_pairs
from caplib.runtime import Runtime

__all__ = ["HELDOUT_FILE", "evaluate", "partial_label_loss", "read_pairs", "train_model", "write_pairs"]

_LABELS = (*LABEL_ORDER, NOT_ENTAILMENT)
#: For each label, which of the three outputs (LABEL_ORDER) it allows.
_ALLOWED = {"entailment": (1, 0, 0), "neutral": (0, 1, 0), "contradiction": (0, 0, 1), NOT_ENTAILMENT: (0, 1, 1)}

#: Held-out pairs beside the model (written by the recipe, read by :func:`evaluate`).
HELDOUT_FILE = "heldout_pairs.jsonl"


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
    from tqdm import tqdm
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
    entailed = sum(p.label == "entailment" for p in pairs)
    result["two_way"] = {"n": len(two_way), "accuracy": round(sum(two_way) / max(len(two_way), 1), 4),
                         "majority_baseline": round(max(entailed, len(pairs) - entailed) / max(len(pairs), 1), 4)}
    by_kind: dict[str, Any] = {}
    for kind in sorted({p.kind for p in pairs}):
        rows = [(p, y) for p, y in zip(pairs, predicted) if p.kind == kind]
        correct = [y == p.label if p.label in LABEL_ORDER else y != "entailment" for p, y in rows]
        labels = sorted({p.label for p, _ in rows})
        by_kind[kind] = {"n": len(rows), "label": "/".join(labels), "accuracy": round(sum(correct) / len(rows), 4)}
    result["by_kind"] = by_kind
    return result


def evaluate(model_dir: Path | str | None = None, heldout: Sequence[NLIPair] | None = None,
             checks: Mapping[str, Sequence[NLIPair]] | None = None, progress: bool = False) -> dict[str, Any]:
    """Held-out accuracies of a backbone, through :class:`caplib.nli.NLIScorer` (the inference path of CAP).

    ``model_dir`` defaults to the built backbone (:func:`caplib.offline_nli.artifact.artifact_dir`), ``heldout`` to
    the model's ``heldout_pairs.jsonl`` (the pairs of the held-out tenth of source items and authored premises,
    never seen in training), ``checks`` to SuperGLUE CB and GLUE RTE validation and SNLI's test pairs (never
    trained on). Each result
    has ``accuracy`` (3-way, over pairs with a full label), ``majority_baseline``, ``two_way`` (entailment vs.
    not: RTE's measure), ``by_kind`` and ``confusion``; ``heldout_by_source`` splits the held-out pairs by source.

    Example:
        >>> evaluate()["cb"]["accuracy"]  # doctest: +SKIP
        0.5
    """
    model_dir = Path(model_dir) if model_dir is not None else offline_nli_dir()
    if heldout is None:
        heldout = read_pairs(model_dir / HELDOUT_FILE)
    if checks is None:
        checks = {**load_nli_pairs()[1], "snli": load_snli_pairs()[1]}
    scorer = NLIScorer(model_dir, runtime=Runtime(device="cpu", cache=False, progress=progress))
    results: dict[str, Any] = {}
    probs: dict[str, Any] = {}
    for name, pairs in (("heldout", heldout), *checks.items()):
        probs[name] = scorer.predict([p.premise for p in pairs], [p.hypothesis for p in pairs]) if pairs else []
        results[name] = _accuracies(pairs, probs[name])
    results["heldout_by_source"] = {}
    for source in sorted({p.source for p in heldout}):
        rows = [i for i, p in enumerate(heldout) if p.source == source]
        summary = _accuracies([heldout[i] for i in rows], probs["heldout"][rows])
        results["heldout_by_source"][source] = {key: summary.get(key)
                                                for key in ("n", "accuracy", "majority_baseline", "two_way")}
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
