"""Fine-tuning a seq2seq statement generator on CAP-Statements (App. C.2)."""

from __future__ import annotations

import functools
import hashlib
import importlib.metadata
import json
import math
import os
import shutil
import time
from pathlib import Path
from typing import Any

from caplib.checkpoints import pick_device, resolve_checkpoint
from caplib.statements.evaluation import STATEMENT_ROUGE_L
from caplib.statements.inputs import INPUT_TEMPLATE, check_pairs, format_input
from caplib.statements.seq2seq import MANIFEST_NAME, generate_batched


def _triples(frame: Any, name: str) -> tuple[list[str], list[str], list[str]]:
    missing = [c for c in ("question", "answer", "statement") if c not in frame.columns]
    if missing:
        raise ValueError(f"{name} lacks column(s) {missing}; it needs question, answer and statement "
                         f"(load it with caplib.data.load_statements)")
    if len(frame) == 0:
        raise ValueError(f"{name} has no rows")
    questions, answers = check_pairs(frame["question"].tolist(), frame["answer"].tolist())
    statements = frame["statement"].tolist()
    for row, text in enumerate(statements):
        if not isinstance(text, str) or not text.strip():
            raise ValueError(f"{name} row {row}: statement is {text!r}; every statement must be a non-empty string")
    return questions, answers, statements


def _data_hash(*parts: tuple[list[str], list[str], list[str]]) -> str:
    payload = json.dumps([list(zip(*part)) for part in parts], ensure_ascii=False)
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()


def _versions() -> dict[str, str]:
    import platform

    from caplib import __version__

    versions = {"python": platform.python_version(), "caplib": __version__}
    for package in ("torch", "transformers", "tokenizers", "sentencepiece", "rouge-score", "nltk", "numpy"):
        try:
            versions[package] = importlib.metadata.version(package)
        except importlib.metadata.PackageNotFoundError:
            versions[package] = "not installed"
    return versions


def _pad(sequences: list[list[int]], pad_id: int) -> tuple[Any, Any]:
    """Right-padded ids and attention mask of token-id lists, as tensors."""
    import torch

    ids = torch.full((len(sequences), max(map(len, sequences))), pad_id, dtype=torch.long)
    mask = torch.zeros_like(ids)
    for row, sequence in enumerate(sequences):
        ids[row, :len(sequence)] = torch.tensor(sequence, dtype=torch.long)
        mask[row, :len(sequence)] = 1
    return ids, mask


def learning_rate_factor(step: int, *, total: int, warmup: int = 0, schedule: str = "linear") -> float:
    """The learning rate at optimizer ``step`` as a share of the peak: a linear warm-up over ``warmup`` steps, then a
    linear or half-cosine decay to 0 at ``total`` (the schedules of Hugging Face's ``get_scheduler``).

    Example:
        >>> [round(learning_rate_factor(s, total=10, warmup=2, schedule="cosine"), 3) for s in (0, 1, 2, 6, 10)]
        [0.0, 0.5, 1.0, 0.5, 0.0]
    """
    if step < warmup:
        return step / warmup
    progress = (step - warmup) / max(1, total - warmup)
    if schedule == "cosine":
        return max(0.0, 0.5 * (1.0 + math.cos(math.pi * progress)))
    return max(0.0, 1.0 - progress)


def finetune(
    train_df: Any,
    val_df: Any,
    base_model: str | os.PathLike[str],
    output_dir: str | os.PathLike[str],
    *,
    epochs: int = 15,
    lr: float = 5e-5,
    batch_size: int = 4,
    grad_accum: int = 2,
    patience: int = 3,
    seed: int = 0,
    max_steps: int | None = None,
    device: Any = None,
    revision: str | None = None,
    allow_unpinned: bool = False,
    num_beams: int = 4,
    max_length: int = 512,
    weight_decay: float = 0.0,
    warmup_ratio: float = 0.0,
    schedule: str = "linear",
    progress: bool = True,
) -> Path:
    """Fine-tune a seq2seq checkpoint on CAP-Statements (App. C.2) and save the best one in ``output_dir``.

    Recipe: AdamW, learning rate ``lr`` (5e-5), micro-batches of ``batch_size`` (4) with gradient
    accumulation ``grad_accum`` (2), at most ``epochs`` (15) epochs, early stopping on validation
    ROUGE-L (``caplib.baselines.score("rouge_l", **STATEMENT_ROUGE_L)``: no stemming; beam search as in
    decoding) after ``patience`` evaluations without improvement. The paper states nothing else; by default the
    remaining settings are the Hugging Face ``Seq2SeqTrainer`` defaults such a setup uses: ``weight_decay`` 0,
    ``schedule`` ``"linear"`` learning-rate decay to 0 over the planned steps after ``warmup_ratio`` (0) of them
    spent warming up linearly, gradient-norm clipping at 1.0; ``schedule="cosine"`` decays along a half cosine
    instead. The authors' configuration (the paper profile's ``statements.training``) sets weight decay 0.01,
    warm-up 0.1, cosine and patience 8. Training inputs are :func:`format_input` and targets the reference
    statements, both cut at ``max_length`` tokens.
    Validation runs after every epoch, and once more when ``max_steps`` optimizer steps stop training
    early. The best checkpoint (model + tokenizer) is written to ``output_dir`` with
    ``MANIFEST_NAME``: data hash, hyperparameters, seed, library versions, best epoch, validation
    ROUGE-L and the per-epoch history. Seeded (Python, NumPy, torch, shuffling); on CUDA, kernels can
    still make runs differ slightly.

    Example:
        >>> from caplib.data import load_sample
        >>> df = load_sample("cap_statements")  # doctest: +SKIP
        >>> finetune(df[df.split == "train"], df[df.split == "validation"], "google/mt5-small",
        ...          "models/statements", revision="main")  # doctest: +SKIP
        PosixPath('models/statements')
    """
    import random

    import numpy as np
    import torch
    from tqdm import tqdm
    from transformers import AutoModelForSeq2SeqLM, AutoTokenizer

    from caplib.baselines import score, signature

    if schedule not in ("linear", "cosine") or not 0.0 <= warmup_ratio < 1.0 or weight_decay < 0:
        raise ValueError(f"schedule must be 'linear' or 'cosine', warmup_ratio in [0, 1) and weight_decay >= 0; got "
                         f"{schedule!r}, {warmup_ratio}, {weight_decay}")
    if min(epochs, batch_size, grad_accum, patience) < 1 or (max_steps is not None and max_steps < 1) or lr <= 0:
        raise ValueError(f"epochs, batch_size, grad_accum, patience and max_steps must be positive integers and lr "
                         f"> 0; got epochs={epochs}, batch_size={batch_size}, grad_accum={grad_accum}, "
                         f"patience={patience}, max_steps={max_steps}, lr={lr}")
    train, val = _triples(train_df, "train_df"), _triples(val_df, "val_df")
    checkpoint = resolve_checkpoint(base_model, revision, allow_unpinned=allow_unpinned)
    device = pick_device(device)
    output = Path(output_dir)
    output.mkdir(parents=True, exist_ok=True)
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    rng = np.random.default_rng(seed)

    tokenizer = AutoTokenizer.from_pretrained(checkpoint.path, local_files_only=True)
    model = AutoModelForSeq2SeqLM.from_pretrained(checkpoint.path, local_files_only=True).to(device)
    train_inputs = [format_input(q, a) for q, a in zip(train[0], train[1])]
    val_inputs = [format_input(q, a) for q, a in zip(val[0], val[1])]
    encoded = tokenizer(train_inputs, truncation=True, max_length=max_length)["input_ids"]
    targets = tokenizer(text_target=train[2], truncation=True, max_length=max_length)["input_ids"]

    steps_per_epoch = math.ceil(math.ceil(len(encoded) / batch_size) / grad_accum)
    total_steps = min(epochs * steps_per_epoch, max_steps or epochs * steps_per_epoch)
    optimizer = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=weight_decay)
    scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, functools.partial(
        learning_rate_factor, total=total_steps, warmup=math.ceil(warmup_ratio * total_steps), schedule=schedule))
    hyperparameters = {
        "optimizer": "AdamW", "lr": lr, "weight_decay": weight_decay, "betas": [0.9, 0.999], "eps": 1e-8,
        "schedule": f"{schedule} decay to 0, warm-up ratio {warmup_ratio:g}", "max_grad_norm": 1.0,
        "batch_size": batch_size,
        "grad_accum": grad_accum, "effective_batch_size": batch_size * grad_accum, "epochs": epochs,
        "patience": patience, "max_steps": max_steps, "max_length": max_length, "num_beams": num_beams,
        "selection": str(signature("rouge_l", **STATEMENT_ROUGE_L)),
    }
    manifest: dict[str, Any] = {
        "kind": "caplib.statements.finetune",
        "base_model": checkpoint.model, "base_revision": checkpoint.revision, "base_identity": checkpoint.identity,
        "input_template": INPUT_TEMPLATE,
        "data": {"sha256": _data_hash(train, val), "train_rows": len(train[0]), "validation_rows": len(val[0])},
        "hyperparameters": hyperparameters, "seed": seed, "device_type": device.split(":")[0],
        "versions": _versions(), "history": [], "best_epoch": None, "best_validation_rouge_l": None,
    }

    def validate() -> float:
        model.eval()
        predictions, _ = generate_batched(model, tokenizer, val_inputs, num_beams=num_beams, max_length=max_length,
                                          device=device, progress=False)
        model.train()
        return float(np.mean(score("rouge_l", val[2], predictions, **STATEMENT_ROUGE_L)))

    def write_manifest() -> None:
        (output / MANIFEST_NAME).write_text(json.dumps(manifest, indent=2, ensure_ascii=False) + "\n",
                                            encoding="utf-8")

    best, stale, step = -1.0, 0, 0
    model.train()
    if progress:
        print(f"[statements] fine-tuning {checkpoint.identity} on {len(encoded):,} train rows, {len(val_inputs):,} "
              f"validation rows, on {device}: {steps_per_epoch:,} optimizer steps per epoch, at most {total_steps:,} "
              f"steps; the time per step is measured on the first step and the total estimated from it", flush=True)
    bar = tqdm(total=total_steps, desc="finetune", unit="step", delay=1.0, disable=not progress)
    clock = time.perf_counter()
    for epoch in range(1, epochs + 1):
        order = rng.permutation(len(encoded))
        batches = [order[start:start + batch_size] for start in range(0, len(order), batch_size)]
        losses = []
        for index, batch in enumerate(batches):
            input_ids, attention_mask = _pad([encoded[i] for i in batch], tokenizer.pad_token_id)
            label_ids, label_mask = _pad([targets[i] for i in batch], tokenizer.pad_token_id)
            loss = model(input_ids=input_ids.to(device), attention_mask=attention_mask.to(device),
                         labels=label_ids.masked_fill(label_mask == 0, -100).to(device)).loss
            (loss / grad_accum).backward()
            losses.append(loss.item())
            if (index + 1) % grad_accum == 0 or index + 1 == len(batches):
                torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
                optimizer.step()
                scheduler.step()
                optimizer.zero_grad()
                step += 1
                bar.update(1)
                if step == 1 and progress:
                    seconds = time.perf_counter() - clock
                    print(f"[statements] first step {seconds:.1f} s: about {seconds * steps_per_epoch / 3600:.1f} h "
                          f"per epoch, at most {seconds * total_steps / 3600:.1f} h for {total_steps:,} steps "
                          f"(validation passes not included)", flush=True)
                if max_steps is not None and step >= max_steps:
                    break
        rouge_l = validate()
        manifest["history"].append({"epoch": epoch, "steps": step, "train_loss": float(np.mean(losses)),
                                    "validation_rouge_l": rouge_l})
        if rouge_l > best:
            best, stale = rouge_l, 0
            model.save_pretrained(output)
            tokenizer.save_pretrained(output)
            manifest.update(best_epoch=epoch, best_validation_rouge_l=rouge_l, best_steps=step)
        else:
            stale += 1
        write_manifest()
        if stale >= patience or (max_steps is not None and step >= max_steps):
            break
    bar.close()
    manifest["stopped"] = {"epoch": manifest["history"][-1]["epoch"], "steps": step,
                           "reason": "max_steps" if max_steps is not None and step >= max_steps else
                           "patience" if stale >= patience else "epochs"}
    write_manifest()
    return output


#: One epoch of the App. C.2 recipe on 8,800 rows took about 2.4 h on the project's 2-core CPU, measured with a random
#: model of mt5-small's shape when issue 14 was filed (not re-measured since); so the book trains the statement
#: model itself only on a GPU, and on a CPU prints this figure with the command. ``finetune`` prints its own
#: estimate, measured on its first step.
CPU_HOURS_PER_EPOCH = 2.4


def train_for_profile(profile: Any, *, max_steps: int | None = None, device: Any = None, seed: int = 0,
                      allow_unpinned: bool = False, progress: bool = True, **recipe: Any) -> Path:
    """Fine-tune the profile's statement model (App. C.2) into ``statements.model`` and record it in the lock.

    Data: the profile's CAP-Statements with its split (the authors' split, from
    :func:`caplib.datasets.ensure_statement_splits`
    when the official data has none); base: ``statements.base_model`` at its locked commit; ``recipe``: other
    :func:`finetune` settings, over the profile's ``statements.training`` (None values are left to the profile),
    over :func:`finetune`'s defaults. Training writes to ``<model>.partial`` and renames it when done,
    so an interrupted run never leaves a directory that looks finished. The model's hash and a summary of its
    manifest join the profile's lock (:mod:`caplib.lock`), so a run of the book checks it.

    Example:
        >>> train_for_profile("paper", max_steps=2)  # doctest: +SKIP
        PosixPath('.../models/statements')

    Raises:
        ValueError: the profile names no base model or no local output directory, or the base is unpinned.
        CheckpointNotAvailable: the base checkpoint is not fetched (``caplib fetch --profile ...``).
    """
    from caplib.data import select_split
    from caplib.datasets import load_dataset
    from caplib.lock import Lock, read_lock, write_lock
    from caplib.profiles import is_local_path, load_profile

    settings = load_profile(profile)
    if settings.statement_base_model is None or settings.statement_model is None or \
            not is_local_path(settings.statement_model):
        raise ValueError(f"{settings.source}: statements.base_model and a local statements.model directory are needed "
                         f"to fine-tune a statement model (got {settings.statement_base_model!r}, "
                         f"{settings.statement_model!r})")
    if settings.statement_base_revision is None and not allow_unpinned:
        raise ValueError(f"{settings.statement_base_model} has no pinned revision: run `caplib fetch --profile "
                         f"{settings.source}` first (it locks the commit), or pass --allow-unpinned")
    rows = load_dataset("cap_statements", settings)
    target = Path(settings.statement_model)
    partial = target.with_name(f"{target.name}.partial")
    if partial.exists():
        shutil.rmtree(partial)  # an interrupted earlier run
    recipe = {**settings.statement_training, **{key: value for key, value in recipe.items() if value is not None}}
    finetune(select_split(rows, "train"), select_split(rows, "validation"), settings.statement_base_model, partial,
             revision=settings.statement_base_revision, allow_unpinned=allow_unpinned, max_steps=max_steps,
             device=device, seed=seed, progress=progress, **recipe)
    if target.exists():
        shutil.rmtree(target)
    output = partial.replace(target)
    manifest = json.loads((output / MANIFEST_NAME).read_text(encoding="utf-8"))
    lock = read_lock(settings.lock_path) or Lock(settings.lock_path)
    write_lock(lock.replace(statement_model={
        "path": str(output), "sha256": resolve_checkpoint(output).fingerprint, "base": manifest["base_identity"],
        "data_sha256": manifest["data"]["sha256"], "best_validation_rouge_l": manifest["best_validation_rouge_l"],
        "stopped": manifest["stopped"], "manifest": MANIFEST_NAME,
    }))
    return output
