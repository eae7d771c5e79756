"""Tiny, randomly initialised checkpoints for the BERTScore and COMET tests, built offline in about a second.

Each has the on-disk layout of its real counterpart, so it goes through exactly the code path of the paper's
checkpoint:

- ``build_tiny_bert(dir)``: a 2-layer ``BertModel`` + WordPiece ``vocab.txt`` saved with ``save_pretrained``
  (what ``bert_score`` loads for roberta-large or all-MiniLM-L6-v2: ``AutoModel`` / ``AutoTokenizer``).
- ``build_tiny_comet(dir)``: a COMET ``RegressionMetric`` on a tiny XLM-R encoder (sentencepiece tokenizer trained
  on the fly), saved like a Hub snapshot of Unbabel/wmt22-comet-da: ``dir/hparams.yaml`` and
  ``dir/checkpoints/model.ckpt``, loaded with ``comet.load_from_checkpoint(..., local_files_only=True)``.

Example::

    from tests.tiny_metric_models import build_tiny_bert, build_tiny_comet
    bert_dir = build_tiny_bert(tmp_path / "tiny-bert")
    checkpoint = build_tiny_comet(tmp_path / "tiny-comet")
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Iterable

# Sentences of the tests: every word is in the vocabularies below, so nothing maps to an unknown token.
CORPUS = [
    "What is the capital of France?",
    "The capital of France is Paris.",
    "Paris is the capital city of France.",
    "Rome is the capital of Italy.",
    "Which planet is known as the red planet?",
    "Mars is known as the red planet.",
    "Who wrote Hamlet? William Shakespeare wrote Hamlet.",
    "Plants release oxygen during photosynthesis.",
    "The cat sat on the mat. A dog ran in the park.",
]


def _words(corpus: Iterable[str]) -> list[str]:
    return sorted({w for line in corpus for w in re.findall(r"\w+|[^\w\s]", line.lower())})


def build_tiny_bert(directory: Path | str, corpus: Iterable[str] = CORPUS, seed: int = 0, layers: int = 2) -> Path:
    """Write a random ``layers``-layer BertModel (hidden 32) and an uncased whole-word WordPiece vocab to ``directory``."""
    import torch
    from transformers import BertConfig, BertModel, BertTokenizer

    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"] + _words(corpus)
    vocab_file = directory / "vocab.txt"
    vocab_file.write_text("\n".join(vocab) + "\n", encoding="utf-8")
    BertTokenizer(vocab_file=str(vocab_file), do_lower_case=True, model_max_length=64).save_pretrained(directory)
    torch.manual_seed(seed)
    config = BertConfig(
        vocab_size=len(vocab), hidden_size=32, num_hidden_layers=layers, num_attention_heads=2,
        intermediate_size=64, max_position_embeddings=64, pad_token_id=0,
    )
    BertModel(config).eval().save_pretrained(directory)
    return directory


def _build_tiny_xlmr(directory: Path, corpus: Iterable[str], seed: int) -> Path:
    import sentencepiece as spm
    import torch
    from transformers import XLMRobertaConfig, XLMRobertaModel, XLMRobertaTokenizer, XLMRobertaTokenizerFast

    directory.mkdir(parents=True, exist_ok=True)
    text_file = directory / "corpus.txt"
    text_file.write_text("\n".join(corpus) + "\n", encoding="utf-8")
    # XLM-R's sentencepiece ids: unk 0, bos 1, eos 2; the tokenizer adds the fairseq offset itself.
    spm.SentencePieceTrainer.train(
        input=str(text_file), model_prefix=str(directory / "sentencepiece.bpe"), vocab_size=120,
        hard_vocab_limit=False, model_type="bpe", character_coverage=1.0, minloglevel=2, num_threads=1,
    )
    text_file.unlink()
    (directory / "sentencepiece.bpe.vocab").unlink()
    XLMRobertaTokenizer(vocab_file=str(directory / "sentencepiece.bpe.model"), model_max_length=64).save_pretrained(
        directory
    )
    tokenizer = XLMRobertaTokenizerFast.from_pretrained(directory)  # writes tokenizer.json: no conversion at load
    tokenizer.save_pretrained(directory)
    torch.manual_seed(seed)
    config = XLMRobertaConfig(
        vocab_size=len(tokenizer), hidden_size=32, num_hidden_layers=2, num_attention_heads=2, intermediate_size=64,
        max_position_embeddings=66, pad_token_id=tokenizer.pad_token_id, bos_token_id=tokenizer.bos_token_id,
        eos_token_id=tokenizer.eos_token_id,
    )
    XLMRobertaModel(config, add_pooling_layer=False).save_pretrained(directory)
    return directory


def build_tiny_comet(
    directory: Path | str, corpus: Iterable[str] = CORPUS, seed: int = 0, output_bias: float = 0.5
) -> Path:
    """Write a tiny COMET RegressionMetric as ``directory/checkpoints/model.ckpt`` + ``directory/hparams.yaml``.

    The final layer of the estimator is scaled down and its bias set to ``output_bias``, so raw scores lie
    near ``output_bias``: 0.5 keeps them inside [0, 1]; 5 or -5 push them outside, to test the clipping.
    Returns the checkpoint path.
    """
    import pytorch_lightning
    import torch
    import yaml
    from comet.models import RegressionMetric

    directory = Path(directory)
    encoder_dir = _build_tiny_xlmr(directory / "encoder", corpus, seed)
    torch.manual_seed(seed)
    model = RegressionMetric(
        pretrained_model=str(encoder_dir), encoder_model="XLM-RoBERTa", hidden_sizes=[16], batch_size=4,
        load_pretrained_weights=True, local_files_only=True,
    )
    final = model.estimator.ff[-1]
    with torch.no_grad():
        final.weight.mul_(0.1)
        final.bias.fill_(output_bias)
    hparams = dict(model.hparams)
    (directory / "checkpoints").mkdir(parents=True, exist_ok=True)
    (directory / "hparams.yaml").write_text(yaml.safe_dump(hparams), encoding="utf-8")
    checkpoint = directory / "checkpoints" / "model.ckpt"
    torch.save(
        {
            "state_dict": model.state_dict(),
            "hyper_parameters": hparams,
            "pytorch-lightning_version": pytorch_lightning.__version__,
        },
        checkpoint,
    )
    return checkpoint
