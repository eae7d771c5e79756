"""Command line: ``python -m caplib.statements train|evaluate``."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from caplib.runtime import Runtime
from caplib.statements.evaluation import evaluate_statements
from caplib.statements.seq2seq import MANIFEST_NAME, Seq2SeqStatementGenerator
from caplib.statements.template import TemplateStatementGenerator
from caplib.statements.training import finetune


def _load_split_data(data: str, splits: str | None) -> Any:
    """CAP-Statements with a ``split`` column: from ``--splits``, the CSV's own column, or ``<name>_splits.csv``."""
    from caplib.data import load_statements

    if splits is None:
        sibling = Path(data).with_name(f"{Path(data).stem}_splits.csv")
        with open(data, encoding="utf-8") as handle:
            has_column = "split" in handle.readline().strip().split(",")
        splits = str(sibling) if sibling.is_file() and not has_column else None
    frame = load_statements(data, splits=splits)
    if "split" not in frame.columns:
        raise SystemExit(f"{data}: no train/validation/test split; pass --splits FILE (columns id,split) or add a "
                         f"'split' column")
    return frame


def _split(frame: Any, name: str, data: str) -> Any:
    part = frame[frame["split"] == name]
    if part.empty:
        raise SystemExit(f"{data}: the split has no {name!r} rows")
    return part


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m caplib.statements train ...`` (fine-tune, App. C.2) or ``evaluate ...`` (Sec. 4 metrics)."""
    import argparse

    parser = argparse.ArgumentParser(prog="python -m caplib.statements",
                                     description="Fine-tune a statement generator (App. C.2) or evaluate one (Sec. 4).")
    commands = parser.add_subparsers(dest="command", required=True)
    train = commands.add_parser("train", help="fine-tune a seq2seq checkpoint on the train split (App. C.2)")
    evaluate = commands.add_parser("evaluate", help="BLEU / ROUGE-L / EM of generated statements on a split")
    for sub in (train, evaluate):
        sub.add_argument("--data", required=True, help="CAP-Statements CSV (e.g. data/sample/cap_statements.csv)")
        sub.add_argument("--splits", help="splits file id,split (default: <data stem>_splits.csv when present)")
        sub.add_argument("--revision", help="Hub revision (commit hash) of a Hub model id")
        sub.add_argument("--device", help="cpu, cuda, cuda:1, ... (default: CUDA when available)")
        sub.add_argument("--num-beams", type=int, default=4)
        sub.add_argument("--max-length", type=int, default=512)
    train.add_argument("--base", required=True, help="Hub id (with --revision) or local directory, e.g. google/mt5-small")
    train.add_argument("--out", required=True, help="output directory for the best checkpoint and its manifest")
    train.add_argument("--epochs", type=int, default=15)
    train.add_argument("--lr", type=float, default=5e-5)
    train.add_argument("--batch-size", type=int, default=4)
    train.add_argument("--grad-accum", type=int, default=2)
    train.add_argument("--patience", type=int, default=3)
    train.add_argument("--seed", type=int, default=0)
    train.add_argument("--max-steps", type=int)
    evaluate.add_argument("--model", required=True,
                          help="fine-tuned checkpoint directory, Hub id (with --revision), or 'template'")
    evaluate.add_argument("--split", default="test", help="split to evaluate (default: test)")
    evaluate.add_argument("--batch-size", type=int, default=16)
    evaluate.add_argument("--no-cache", action="store_true", help="do not read or write the statements cache")
    evaluate.add_argument("--predictions", help="also write question, answer, reference, prediction (and rule) here")
    args = parser.parse_args(argv)

    frame = _load_split_data(args.data, args.splits)
    if args.command == "train":
        path = finetune(_split(frame, "train", args.data), _split(frame, "validation", args.data), args.base, args.out,
                        epochs=args.epochs, lr=args.lr, batch_size=args.batch_size, grad_accum=args.grad_accum,
                        patience=args.patience, seed=args.seed, max_steps=args.max_steps, device=args.device,
                        revision=args.revision, num_beams=args.num_beams, max_length=args.max_length)
        manifest = json.loads((path / MANIFEST_NAME).read_text(encoding="utf-8"))
        print(f"best checkpoint: {path} (epoch {manifest['best_epoch']}, validation ROUGE-L "
              f"{manifest['best_validation_rouge_l']:.4f}; manifest {path / MANIFEST_NAME})")
        return 0
    part = _split(frame, args.split, args.data)
    questions, answers = part["question"].tolist(), part["answer"].tolist()
    rules = None
    if args.model == "template":
        generator: Any = TemplateStatementGenerator()
        predictions, rules = map(list, zip(*generator.generate_with_rules(questions, answers)))
    else:
        runtime = Runtime(device=args.device, batch_size=args.batch_size, cache=not args.no_cache)
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

