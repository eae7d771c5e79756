"""Tiny stand-ins for the paper profile's Hub checkpoints, in the on-disk layout of the real repositories.

:func:`build_paper_standins` writes one directory per Hub id the paper uses, randomly initialised (seeded) and small
enough to build in a few seconds, so that a "dress rehearsal" can serve them from :class:`tests.fake_hub.FakeHub`
under their real names and run the paper's loading code on them:

============================================ =======================================================================
Hub id                                       stand-in
============================================ =======================================================================
``cross-encoder/nli-deberta-v3-large``       3-label DeBERTa-v2 + sentencepiece tokenizer, the real ``id2label``
                                             (:func:`tests.tiny_models.build_nli_checkpoint`)
``google/mt5-small``                         2-layer mT5 + sentencepiece tokenizer
                                             (:func:`tests.tiny_seq2seq.build_tiny_mt5`)
``roberta-large``                            ``RobertaModel`` with 24 layers (bert_score uses layer 17), hidden size 16,
                                             byte-level BPE ``vocab.json`` + ``merges.txt`` (+ ``tokenizer.json``)
``Unbabel/wmt22-comet-da``                   COMET ``RegressionMetric``: ``hparams.yaml`` + ``checkpoints/model.ckpt``,
                                             ``pretrained_model: xlm-roberta-large`` as in the real one
``xlm-roberta-large``                        the tiny XLM-R encoder (config, tokenizer, weights) the COMET stand-in
                                             was built on, found by name in the Hugging Face cache when COMET loads
============================================ =======================================================================

Example::

    from tests.fake_hub import FakeHub
    from tests.paper_standins import build_paper_standins

    standins = build_paper_standins(tmp_path / "standins")
    with FakeHub() as hub:
        commits = {repo_id: hub.add_repo(repo_id, directory) for repo_id, directory in standins.items()}
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

from tests.tiny_metric_models import CORPUS as METRIC_CORPUS
from tests.tiny_metric_models import build_tiny_comet
from tests.tiny_models import CROSS_ENCODER_ID2LABEL, build_nli_checkpoint
from tests.tiny_seq2seq import build_tiny_mt5

__all__ = [
    "COMET_ENCODER_REPO",
    "COMET_REPO",
    "MT5_REPO",
    "NLI_REPO",
    "PAPER_REPOS",
    "ROBERTA_REPO",
    "build_comet_standins",
    "build_paper_standins",
    "build_tiny_roberta",
]

NLI_REPO = "cross-encoder/nli-deberta-v3-large"
MT5_REPO = "google/mt5-small"
ROBERTA_REPO = "roberta-large"
COMET_REPO = "Unbabel/wmt22-comet-da"
COMET_ENCODER_REPO = "xlm-roberta-large"
#: Every Hub id of the paper profile, in the order :func:`build_paper_standins` builds them.
PAPER_REPOS: tuple[str, ...] = (NLI_REPO, MT5_REPO, ROBERTA_REPO, COMET_REPO, COMET_ENCODER_REPO)

_ROBERTA_SPECIALS = ["<s>", "<pad>", "</s>", "<unk>", "<mask>"]  # ids 0..4; pad 1, as in roberta-large


def build_tiny_roberta(
    directory: Path | str, *, layers: int = 24, hidden_size: int = 16, vocab_size: int = 400, seed: int = 0
) -> Path:
    """A random ``RobertaModel`` (``layers`` layers) with a byte-level BPE tokenizer, saved like roberta-large.

    The tokenizer is trained with the ``tokenizers`` library on :data:`tests.tiny_metric_models.CORPUS` and saved as
    ``vocab.json`` + ``merges.txt`` (what ``AutoTokenizer.from_pretrained(dir, use_fast=False)`` reads into a
    ``RobertaTokenizer``, as bert_score does) and ``tokenizer.json``; ``model_max_length`` 512 and 514 positions,
    as in roberta-large.
    """
    import torch
    from tokenizers import ByteLevelBPETokenizer
    from transformers import RobertaConfig, RobertaModel, RobertaTokenizer, RobertaTokenizerFast

    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    trainer = ByteLevelBPETokenizer()
    trainer.train_from_iterator(list(METRIC_CORPUS) * 3, vocab_size=vocab_size, min_frequency=1,
                                special_tokens=_ROBERTA_SPECIALS, show_progress=False)
    trainer.save_model(str(directory))  # vocab.json, merges.txt
    slow = RobertaTokenizer(vocab_file=str(directory / "vocab.json"), merges_file=str(directory / "merges.txt"),
                            model_max_length=512)
    slow.save_pretrained(directory)
    RobertaTokenizerFast.from_pretrained(directory).save_pretrained(directory)  # adds tokenizer.json
    config = RobertaConfig(
        vocab_size=len(slow), hidden_size=hidden_size, num_hidden_layers=layers, num_attention_heads=2,
        intermediate_size=2 * hidden_size, max_position_embeddings=514, type_vocab_size=1,
        pad_token_id=slow.pad_token_id, bos_token_id=slow.bos_token_id, eos_token_id=slow.eos_token_id,
    )
    torch.manual_seed(seed)
    RobertaModel(config).eval().save_pretrained(directory)
    return directory


def build_comet_standins(comet_dir: Path | str, encoder_dir: Path | str, *, seed: int = 0) -> tuple[Path, Path]:
    """A tiny wmt22-comet-da (``comet_dir``: ``hparams.yaml``, ``checkpoints/model.ckpt``) and its encoder
    (``encoder_dir``), with ``pretrained_model: xlm-roberta-large`` in both ``hparams.yaml`` and the checkpoint's
    ``hyper_parameters``, as in the real snapshot.

    Built by :func:`tests.tiny_metric_models.build_tiny_comet` on a local encoder directory, whose name is then
    replaced by the Hub id: loading needs ``xlm-roberta-large`` (``encoder_dir``, served under that id) in the
    Hugging Face cache. Returns ``(comet_dir, encoder_dir)``.
    """
    import torch
    import yaml

    comet_dir, encoder_dir = Path(comet_dir), Path(encoder_dir)
    with tempfile.TemporaryDirectory(prefix="comet-standin-") as scratch:
        checkpoint = build_tiny_comet(Path(scratch) / "comet", seed=seed)
        built = checkpoint.parents[1]
        hparams = yaml.safe_load((built / "hparams.yaml").read_text(encoding="utf-8"))
        hparams["pretrained_model"] = COMET_ENCODER_REPO
        state = torch.load(checkpoint, map_location="cpu", weights_only=False)
        state["hyper_parameters"] = {**state["hyper_parameters"], "pretrained_model": COMET_ENCODER_REPO}
        (comet_dir / "checkpoints").mkdir(parents=True, exist_ok=True)
        (comet_dir / "hparams.yaml").write_text(yaml.safe_dump(hparams), encoding="utf-8")
        torch.save(state, comet_dir / "checkpoints" / "model.ckpt")
        encoder_dir.parent.mkdir(parents=True, exist_ok=True)
        shutil.copytree(built / "encoder", encoder_dir)
    return comet_dir, encoder_dir


def _strip_build_paths(directory: Path) -> None:
    """Remove the training file paths sentencepiece writes into every ``*.model`` (its ``trainer_spec``), so that
    the bytes, and the fake Hub's commit, do not depend on where the stand-ins were built."""
    from sentencepiece import sentencepiece_model_pb2

    for path in sorted(directory.rglob("*.model")):
        proto = sentencepiece_model_pb2.ModelProto()
        proto.ParseFromString(path.read_bytes())
        del proto.trainer_spec.input[:]
        proto.trainer_spec.input.append("corpus.txt")
        proto.trainer_spec.model_prefix = path.stem
        path.write_bytes(proto.SerializeToString(deterministic=True))


#: What the mT5 stand-in learns to write, by the answer's number of words (:func:`_teach_to_stop`).
STANDIN_STATEMENTS = ("A short answer.", "A longer answer.", "A very long answer given here.")


def standin_statement(answer: str) -> str:
    """The statement the mT5 stand-in is taught to write for ``answer``: one of :data:`STANDIN_STATEMENTS`."""
    words = len(answer.split())
    return STANDIN_STATEMENTS[0 if words <= 1 else 1 if words <= 3 else 2]


def _teach_to_stop(directory: Path, *, seed: int = 0, steps: int = 60, batch_size: int = 32) -> None:
    """Train the random mT5 stand-in briefly to write :func:`standin_statement` and stop.

    A random mT5 never emits its end token, so beam search runs to the paper's 512 output tokens on every input:
    minutes per chapter on a CPU. A few steps over the bundled sample's question-answer inputs teach it a short
    statement that depends on the answer (so scores of generated statements vary, as with the real model) and ends.
    Seeded, one thread, fixed batches: the same bytes on every build.
    """
    import csv

    import torch
    from transformers import MT5ForConditionalGeneration, T5Tokenizer

    from caplib.statements import format_input

    sample = Path(__file__).resolve().parents[1] / "data" / "sample"
    pairs: list[tuple[str, str]] = []
    for name, answer in (("cap_statements.csv", "answer"), ("cap_correctness.csv", "answer"),
                         ("llm_answers.csv", "answer")):
        with open(sample / name, newline="", encoding="utf-8") as handle:
            pairs += [(format_input(row["question"], row[answer]), standin_statement(row[answer]))
                      for row in csv.DictReader(handle)]
    tokenizer = T5Tokenizer.from_pretrained(directory)
    model = MT5ForConditionalGeneration.from_pretrained(directory)
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    generator = torch.Generator().manual_seed(seed)
    try:
        optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
        model.train()
        for _ in range(steps):
            chosen = [pairs[i] for i in torch.randint(len(pairs), (batch_size,), generator=generator).tolist()]
            batch = tokenizer([source for source, _ in chosen], return_tensors="pt", padding=True, truncation=True,
                              max_length=64)
            labels = tokenizer(text_target=[target for _, target in chosen], return_tensors="pt", padding=True,
                               truncation=True, max_length=32)["input_ids"]
            labels[labels == tokenizer.pad_token_id] = -100
            model(**batch, labels=labels).loss.backward()
            optimizer.step()
            optimizer.zero_grad()
    finally:
        torch.set_num_threads(threads)
    model.eval().save_pretrained(directory)


def build_paper_standins(root: Path, *, seed: int = 0) -> dict[str, Path]:
    """Build every stand-in under ``root/<Hub id>``; returns ``{Hub id: directory}`` (keys: :data:`PAPER_REPOS`).

    Seeded and independent of ``root``: the same ``seed`` gives the same bytes, hence the same fake-Hub commits
    (sentencepiece's recorded training paths are normalised). Takes a few seconds on one CPU core, most of it
    importing COMET.
    """
    root = Path(root)
    directories = {repo_id: root / repo_id for repo_id in PAPER_REPOS}
    build_nli_checkpoint(directories[NLI_REPO], id2label=CROSS_ENCODER_ID2LABEL, seed=seed)
    build_tiny_mt5(directories[MT5_REPO], seed=seed)
    _teach_to_stop(directories[MT5_REPO], seed=seed)
    build_tiny_roberta(directories[ROBERTA_REPO], seed=seed)
    build_comet_standins(directories[COMET_REPO], directories[COMET_ENCODER_REPO], seed=seed)
    for directory in directories.values():
        _strip_build_paths(directory)
    return directories
