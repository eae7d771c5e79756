"""Tiny, locally built DeBERTa-v2 NLI checkpoints (3 labels) for tests and benchmarks; no download.

A sentencepiece (BPE) model is trained on a small built-in corpus (ids as in DeBERTa-v3: [PAD] 0, [CLS] 1,
[SEP] 2, [UNK] 3, [MASK] user-defined) and saved as ``spm.model``; the model is a randomly initialized
``DebertaV2ForSequenceClassification`` shaped like deberta-v3 (relative attention, no absolute
positions) with a few layers, saved with ``save_pretrained`` so that it loads through the Auto classes
exactly like a Hub checkpoint. Random weights: the probabilities mean nothing, but they are
deterministic (seeded) and far from uniform, which is what loading and batching tests need.

Example:
    >>> directory = build_nli_checkpoint(tmp_path / "nli")  # doctest: +SKIP
    >>> permuted = permute_labels(directory, tmp_path / "nli-permuted", [2, 0, 1])  # doctest: +SKIP
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Mapping, Sequence
from pathlib import Path

#: Label order of cross-encoder/nli-deberta-v3-large (see ENVIRONMENT-NOTES.md).
CROSS_ENCODER_ID2LABEL: Mapping[int, str] = {0: "contradiction", 1: "entailment", 2: "neutral"}

_SUBJECTS = ["water", "the sun", "a cell", "the moon", "iron", "plants", "the heart", "sound", "light", "ice",
             "Paris", "Sofia", "Burgas", "a magnet", "the earth", "oxygen", "a volcano", "the river", "bees", "salt"]
_PREDICATES = ["boils at 100 degrees", "is a city in Bulgaria", "needs energy to grow", "moves around the earth",
               "is made of atoms", "reflects light", "pumps blood through the body", "travels as a wave",
               "melts when heated", "is the capital of France", "attracts iron", "produces oxygen",
               "is the powerhouse of the cell", "erupts with hot lava", "flows into the sea", "dissolves in water"]


def corpus() -> list[str]:
    """Deterministic statements for training the tokenizer and for test inputs (320 sentences)."""
    return [f"{s.capitalize()} {p}." for s in _SUBJECTS for p in _PREDICATES]


def build_tokenizer(directory: Path | str, vocab_size: int = 160, texts: Sequence[str] = ()) -> Path:
    """Train a sentencepiece model and save a DeBERTa-v2 tokenizer (``spm.model``) into ``directory``.

    ``texts`` are added to the built-in corpus, so that their words tokenize into realistic piece counts."""
    import sentencepiece as spm
    from transformers import DebertaV2Tokenizer

    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    text = directory / "corpus.txt"
    text.write_text("\n".join([*corpus(), *texts]) + "\n", encoding="utf-8")
    spm.SentencePieceTrainer.train(
        input=str(text), model_prefix=str(directory / "spm"), vocab_size=vocab_size, hard_vocab_limit=False,
        model_type="bpe", character_coverage=1.0, pad_id=0, bos_id=1, eos_id=2, unk_id=3,
        pad_piece="[PAD]", bos_piece="[CLS]", eos_piece="[SEP]", unk_piece="[UNK]",
        user_defined_symbols=["[MASK]"], minloglevel=2,
    )
    text.unlink()
    (directory / "spm.vocab").unlink()
    DebertaV2Tokenizer(vocab_file=str(directory / "spm.model")).save_pretrained(directory)
    return directory


def build_nli_checkpoint(
    directory: Path | str,
    *,
    id2label: Mapping[int, str] = CROSS_ENCODER_ID2LABEL,
    num_layers: int = 2,
    hidden_size: int = 32,
    num_heads: int = 2,
    intermediate_size: int = 64,
    vocab_size: int = 160,
    texts: Sequence[str] = (),
    seed: int = 0,
) -> Path:
    """Save a randomly initialized (seeded) 3-label DeBERTa-v2 classifier + tokenizer into ``directory``.

    ``vocab_size`` of the BPE tokenizer: 160 splits corpus words into ~2.4 pieces (tests); 300 keeps
    most of them whole (~1.2 tokens per word, like deberta-v3's tokenizer on English statements);
    ``texts``: more tokenizer training text (see :func:`build_tokenizer`).
    """
    import torch
    from transformers import DebertaV2Config, DebertaV2ForSequenceClassification, DebertaV2Tokenizer

    directory = build_tokenizer(directory, vocab_size=vocab_size, texts=texts)
    tokenizer = DebertaV2Tokenizer.from_pretrained(directory)
    config = DebertaV2Config(
        vocab_size=len(tokenizer), hidden_size=hidden_size, num_hidden_layers=num_layers,
        num_attention_heads=num_heads, intermediate_size=intermediate_size, max_position_embeddings=512,
        relative_attention=True, pos_att_type=["p2c", "c2p"], position_buckets=64, norm_rel_ebd="layer_norm",
        share_att_key=True, position_biased_input=False, type_vocab_size=0, pad_token_id=0,
        initializer_range=0.2, id2label={int(k): v for k, v in id2label.items()},
        label2id={v: int(k) for k, v in id2label.items()},
    )
    torch.manual_seed(seed)
    model = DebertaV2ForSequenceClassification(config).eval()
    model.save_pretrained(directory)
    return directory


def permute_labels(source: Path | str, destination: Path | str, order: Sequence[int]) -> Path:
    """Copy a checkpoint so that new output ``j`` is old output ``order[j]``: same model, permuted head.

    Rows of the classifier's weight and bias move with their labels, so the probability of every
    named label is unchanged while ``id2label`` lists the labels in a different order.
    """
    import torch
    from transformers import AutoModelForSequenceClassification

    source, destination = Path(source), Path(destination)
    model = AutoModelForSequenceClassification.from_pretrained(source, local_files_only=True)
    old = model.config.id2label
    index = torch.tensor(list(order))
    with torch.no_grad():
        model.classifier.weight.copy_(model.classifier.weight[index])
        model.classifier.bias.copy_(model.classifier.bias[index])
    model.config.id2label = {j: old[int(i)] for j, i in enumerate(order)}
    model.config.label2id = {label: j for j, label in model.config.id2label.items()}
    destination.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(destination)
    for file in source.iterdir():
        if file.is_file() and file.name not in {"config.json", "model.safetensors", "pytorch_model.bin"}:
            shutil.copy2(file, destination / file.name)
    return destination


def relabel(source: Path | str, destination: Path | str, id2label: Mapping[int, str]) -> Path:
    """Copy a checkpoint with a different ``id2label`` written into its config (weights untouched)."""
    source, destination = Path(source), Path(destination)
    shutil.copytree(source, destination)
    config = json.loads((destination / "config.json").read_text(encoding="utf-8"))
    config["id2label"] = {str(k): v for k, v in id2label.items()}
    config["label2id"] = {v: int(k) for k, v in id2label.items()}
    (destination / "config.json").write_text(json.dumps(config, indent=2), encoding="utf-8")
    return destination


def tiny_profile(directory: Path) -> Path:
    """The offline profile with a tiny NLI checkpoint built into ``directory`` as its NLI model, as a YAML file."""
    import yaml

    from caplib.profiles import load_profile

    data = yaml.safe_load(load_profile("offline").source.read_text())
    data["name"] = "tiny"
    data["nli"]["model"] = str(build_nli_checkpoint(Path(directory) / "model"))
    path = Path(directory) / "tiny.yaml"
    path.write_text(yaml.safe_dump(data))
    return path
