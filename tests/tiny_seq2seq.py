"""Build a tiny mT5 checkpoint (model + sentencepiece tokenizer) in a directory, offline, in well under a second.

The directory has the same layout as a Hub snapshot of google/mt5-small (``config.json``, weights, ``spiece.model``,
tokenizer config), so it goes through exactly the loading code a real checkpoint goes through
(``AutoTokenizer.from_pretrained(dir)``, ``AutoModelForSeq2SeqLM.from_pretrained(dir)``).

Example::

    from tests.tiny_seq2seq import build_tiny_mt5
    model_dir = build_tiny_mt5(tmp_path / "tiny-mt5")
"""

from __future__ import annotations

from pathlib import Path
from typing import Iterable

# Text the tokenizer is trained on: the vocabulary of the statement tests, so that nothing maps to <unk>.
CORPUS = [
    "question: What gas do plants release during photosynthesis? answer: oxygen",
    "Plants release oxygen during photosynthesis.",
    "question: The sun is responsible for answer: heating the Earth",
    "The sun is responsible for heating the Earth.",
    "question: Light bends when it passes from air into ______ at an angle. answer: water",
    "Light bends when it passes from air into water at an angle.",
    "question: What is the capital of France? answer: Paris",
    "The capital of France is Paris.",
    "question: Which planet is known as the red planet? answer: Mars",
    "Mars is known as the red planet.",
    "question: Who wrote Hamlet? answer: William Shakespeare",
    "William Shakespeare wrote Hamlet.",
    "question: I have a shirt that is now too small, what can I do to conserve and reuse the fabric? answer: make a rag",
    "A shirt that is now too small can be made into a rag to conserve and reuse the fabric.",
    "abcdefghijklmnopqrstuvwxyz ABCDEFGHIJKLMNOPQRSTUVWXYZ 0123456789 .,;:?!'\"()-_",
]


def build_tiny_mt5(directory: Path | str, corpus: Iterable[str] = CORPUS, seed: int = 0) -> Path:
    """Write a randomly initialised 2-layer MT5ForConditionalGeneration and its tokenizer to ``directory``.

    Token ids follow T5/mT5: pad 0, eos 1, unk 2, no bos (ENVIRONMENT-NOTES.md). The model's
    ``decoder_start_token_id`` is the pad id, as in every T5 checkpoint. The tokenizer is a small BPE
    sentencepiece model (word-level pieces for the corpus words, so test inputs stay ~15 tokens long).
    """
    import sentencepiece as spm
    import torch
    from transformers import MT5Config, MT5ForConditionalGeneration, T5Tokenizer

    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    text_file = directory / "corpus.txt"
    text_file.write_text("\n".join(list(corpus) * 5) + "\n", encoding="utf-8")
    spm.SentencePieceTrainer.train(
        input=str(text_file), model_prefix=str(directory / "spiece"), vocab_size=400, hard_vocab_limit=False,
        model_type="bpe", character_coverage=1.0, pad_id=0, eos_id=1, unk_id=2, bos_id=-1,
        pad_piece="<pad>", eos_piece="</s>", unk_piece="<unk>", minloglevel=2, num_threads=1,
    )
    text_file.unlink()
    (directory / "spiece.vocab").unlink()
    tokenizer = T5Tokenizer(vocab_file=str(directory / "spiece.model"), extra_ids=0, legacy=False)
    tokenizer.save_pretrained(directory)
    torch.manual_seed(seed)
    config = MT5Config(
        vocab_size=len(tokenizer), d_model=32, d_kv=8, d_ff=64, num_layers=2, num_decoder_layers=2, num_heads=4,
        relative_attention_num_buckets=8, relative_attention_max_distance=32, dropout_rate=0.0,
        pad_token_id=0, eos_token_id=1, decoder_start_token_id=0, tie_word_embeddings=False,
    )
    MT5ForConditionalGeneration(config).save_pretrained(directory)
    # The loading code must find the tokenizer through the directory alone, as for a Hub snapshot.
    assert T5Tokenizer.from_pretrained(directory).pad_token_id == 0
    return directory
