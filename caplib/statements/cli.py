"""Command line: ``python -m caplib.statements train|evaluate``.

``train --profile paper [--max-steps N]`` fine-tunes the profile's statement model from its locked base checkpoint
on its CAP-Statements split into the directory the profile names, and records it in the lock
(:func:`caplib.statements.training.train_for_profile`); ``train --data ... --base ... --out ...`` trains from any
files. Bad input exits with status 2 and one line, no traceback.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from caplib.runtime import Runtime
from caplib.statements.evaluation import evaluate_statements
from caplib.statements.seq2seq import MANIFEST_NAME, Seq2SeqStatementGenerator
from caplib.statements.template import TemplateStatementGenerator
from caplib.statements.training import CPU_HOURS_PER_EPOCH, finetune, train_for_profile


def _load_split_data(data: str, splits: str | None) -> Any:
    """CAP-Statements with a ``split`` column: from ``--splits``, the CSV's own column, or a sibling splits file
    ``<stem>-splits.csv`` (the official naming) or ``<stem>_splits.csv`` (the bundled sample's)."""
    from caplib.data import load_statements

    if splits is None:
        with open(data, encoding="utf-8") as handle:
            has_column = "split" in handle.readline().strip().split(",")
        siblings = [Path(data).with_name(f"{Path(data).stem}{joint}splits.csv") for joint in ("-", "_")]
        found = [sibling for sibling in siblings if sibling.is_file()]
        splits = str(found[0]) if found and not has_column else None
    frame = load_statements(data, splits=splits)
    if "split" not in frame.columns:
        raise SystemExit(f"{data}: no train/validation/test split (no 'split' column, no {Path(data).stem}-splits.csv "
                         f"beside it); pass --splits FILE (columns id,split), or train with --profile paper, which "
                         f"uses the seeded split caplib writes for the official data")
    return frame


def _split(frame: Any, name: str, data: str) -> Any:
    part = frame[frame["split"] == name]
    if part.empty:
        raise SystemExit(f"{data}: the split has no {name!r} rows")
    return part


def _train(args: Any, parser: Any) -> int:
    given = {name: value for name, value in (("epochs", args.epochs), ("lr", args.lr), ("batch_size", args.batch_size),
                                             ("grad_accum", args.grad_accum), ("patience", args.patience))
             if value is not None}  # the rest: the profile's statements.training, or finetune's defaults
    if args.profile is not None:
        if any(value is not None for value in (args.data, args.base, args.out, args.splits, args.revision)):
            parser.error("--profile names the data, split, base model, its revision and the output directory; drop "
                         "--data/--splits/--base/--revision/--out")
        print(f"[statements] the profile's recipe; on a 2-core CPU one epoch of 8,800 rows takes about "
              f"{CPU_HOURS_PER_EPOCH} h, so use a GPU", flush=True)
        path = train_for_profile(args.profile, max_steps=args.max_steps, device=args.device, seed=args.seed,
                                 allow_unpinned=args.allow_unpinned, num_beams=args.num_beams,
                                 max_length=args.max_length, **given)
    else:
        missing = [flag for flag, value in (("--data", args.data), ("--base", args.base), ("--out", args.out))
                   if value is None]
        if missing:
            parser.error(f"train needs --profile, or all of --data, --base and --out (missing {', '.join(missing)})")
        frame = _load_split_data(args.data, args.splits)
        path = finetune(_split(frame, "train", args.data), _split(frame, "validation", args.data), args.base, args.out,
                        seed=args.seed, max_steps=args.max_steps, device=args.device, revision=args.revision,
                        allow_unpinned=args.allow_unpinned, num_beams=args.num_beams, max_length=args.max_length,
                        **given)
    manifest = json.loads((path / MANIFEST_NAME).read_text(encoding="utf-8"))
    print(f"best checkpoint: {path} (epoch {manifest['best_epoch']}, validation ROUGE-L "
          f"{manifest['best_validation_rouge_l']:.4f}; manifest {path / MANIFEST_NAME})")
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m caplib.statements train ...`` (fine-tune, App. C.2) or ``evaluate ...`` (Sec. 4 metrics)."""
    import argparse

    parser = argparse.ArgumentParser(prog="python -m caplib.statements",
                                     description="Fine-tune a statement generator (App. C.2) or evaluate one (Sec. 4).")
    commands = parser.add_subparsers(dest="command", required=True)
    train = commands.add_parser("train", help="fine-tune a seq2seq checkpoint on the train split (App. C.2)")
    evaluate = commands.add_parser("evaluate", help="BLEU / ROUGE-L / EM of generated statements on a split")
    train.add_argument("--profile", help="train the statement model a profile names (paper: models/statements) from "
                                         "its locked base and data; replaces --data/--base/--out")
    train.add_argument("--allow-unpinned", action="store_true",
                       help="accept a Hub base model without a pinned revision (loads 'main'; the commit is recorded)")
    for sub in (train, evaluate):
        sub.add_argument("--data", required=sub is evaluate,
                         help="CAP-Statements CSV (e.g. data/sample/cap_statements.csv)")
        sub.add_argument("--splits", help="splits file id,split (default: <data stem>_splits.csv when present)")
        sub.add_argument("--revision", help="Hub revision (commit hash) of a Hub model id")
        sub.add_argument("--device", help="cpu, cuda, cuda:1, ... (default: CUDA when available)")
        sub.add_argument("--num-beams", type=int, default=4)
        sub.add_argument("--max-length", type=int, default=512)
    train.add_argument("--base", help="Hub id (with --revision) or local directory, e.g. google/mt5-small")
    train.add_argument("--out", help="output directory for the best checkpoint and its manifest")
    # None: the profile's statements.training with --profile, else finetune's defaults (App. C.2)
    train.add_argument("--epochs", type=int, default=None)
    train.add_argument("--lr", type=float, default=None)
    train.add_argument("--batch-size", type=int, default=None)
    train.add_argument("--grad-accum", type=int, default=None)
    train.add_argument("--patience", type=int, default=None)
    train.add_argument("--seed", type=int, default=0)
    train.add_argument("--max-steps", type=int)
    evaluate.add_argument("--model", required=True,
                          help="fine-tuned checkpoint directory, Hub id (with --revision), or 'template'")
    evaluate.add_argument("--split", default="test", help="split to evaluate (default: test)")
    evaluate.add_argument("--no-cache", action="store_true", help="do not read or write the statements cache")
    evaluate.add_argument("--predictions", help="also write question, answer, reference, prediction (and rule) here")
    args = parser.parse_args(argv)
    from caplib.checkpoints import CheckpointNotAvailable

    try:
        if args.command == "train":
            return _train(args, parser)
        frame = _load_split_data(args.data, args.splits)
    except (ValueError, CheckpointNotAvailable, FileNotFoundError) as error:
        print(f"python -m caplib.statements: error: {error}", file=sys.stderr)
        return 2
    part = _split(frame, args.split, args.data)
    questions, answers = part["question"].tolist(), part["answer"].tolist()
    rules = None
    if args.model == "template":
        generator: Any = TemplateStatementGenerator()
        predictions, rules = map(list, zip(*generator.generate_with_rules(questions, answers)))
    else:
        runtime = Runtime(device=args.device, cache=not args.no_cache)
        generator = Seq2SeqStatementGenerator(args.model, revision=args.revision, num_beams=args.num_beams,
                                              max_length=args.max_length, runtime=runtime)
    if rules is None:
        predictions = generator.generate(questions, answers)
    table = evaluate_statements(predictions, part["statement"].tolist(), part["label_question_type"].tolist())
    print(f"{args.data} [{args.split}], {generator.signature()}")
    print(table.to_string(float_format=lambda x: f"{x:.4f}"))
    print(table.attrs["signature"])
    if rules is not None:
        print(f"template fallback rate: {rules.count('fallback') / len(rules):.4f} ({rules.count('fallback')} of "
              f"{len(rules)})")
    if args.predictions:
        out = part[["id", "question", "answer", "statement", "label_question_type"]].assign(prediction=predictions)
        if rules is not None:
            out = out.assign(rule=rules)
        out.to_csv(args.predictions, index=False)
    return 0

