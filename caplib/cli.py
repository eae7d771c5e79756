"""Command line: ``caplib score``, ``calibrate``, ``evaluate``, ``compare``, ``fetch``, ``cache``.

``caplib score INPUT.csv -o OUT.csv [--profile offline|paper|FILE.yaml] [--metrics cap,bleu,...]``
    Reads CAP-Correctness (``caplib.data.load_correctness``), or any CSV with ``question`` +
    ``gold_answer`` (or ``gold``) + ``answer`` columns and/or ``premise`` + ``hypothesis`` columns
    (gold statement and predicted statement). Writes the input rows (with ``row_id``) plus one
    column per metric, named exactly as the metric (cap, bleu, rouge_l, meteor, bertscore, comet,
    em, acc); ``--components`` adds CAP's components (``caplib.cap.COMPONENT_COLUMNS``, prefixed
    ``cap_``). When the input carries ``premise``/``hypothesis`` statements (as the released
    CAP-Correctness does), CAP scores those, as the paper did; ``--regenerate-statements`` makes
    them anew with the profile's statement generator. Baselines score gold answer vs answer through
    ``caplib.baselines.score`` with the profile's options. A metric asked for that cannot run here (a checkpoint
    not fetched) fails the run with its reason and writes nothing (status 3); with ``--allow-skip`` it is skipped
    instead (no column; reason on stderr and in the signature file), never faked. A profile with a lock file
    (``caplib fetch``) has every locked file checked first.
    Settings signatures are printed and written to ``OUT.csv.signature.json``. ``--classify CALIBRATION.json`` (or
    ``profile``: the profile's shipped calibration) adds ``cap_label`` and ``cap_label_confidence``
    (``caplib.calibration``, Sec. 8.2); a calibration fitted for another backbone is refused. ``--engine ray
    [--actors N] [--address ADDR]`` scores blocks of rows on a Ray actor pool (``caplib.distributed``; same scores,
    row order kept, an interrupted job resumes from the cache); ``--nli-backend onnxruntime-int8`` runs the NLI model in
    ONNX Runtime with int8 weights on the CPU (faster, not bit-equal; its own signature).

``caplib calibrate SCORED.csv --label-column label_semantic [--splits SPLITS.csv --split validation] -o CAL.json``
    Fit a label-free labeler on a file written by ``caplib score`` (every row unless a split is named): the component
    model when the file has CAP's components, thresholds otherwise (``--method``).

``caplib evaluate OUT.csv --label-column label_semantic [--json] [--shortcut]``
    The monotonicity protocol (``caplib.evaluation.report``) for every metric column found.

``caplib compare SCORED.csv --metrics cap,bertscore --label-column label_semantic [--split test] [--json]``
    Is one metric better than the other on these examples? A paired bootstrap (the same resamples for both
    metrics) of the difference in Spearman, pairwise accuracy and the hard-pair accuracies, with CI and ``p-value``,
    and an approximate randomization test (``caplib.evaluation.paired_bootstrap``, ``paired_randomization``).

``caplib fetch [--profile paper|released] [--mirror DIR] [--update] [--dry-run]``
    Download the profile's official files (the authors' release) and Hub checkpoints once and lock them
    (``caplib.fetch``): the one command of caplib that uses the network; ``--mirror DIR`` (or ``$CAPLIB_MIRROR``)
    copies the release's files from a local folder with the upstream layout instead. Exit status 2 when any item
    fails, one line per item saying why.

``caplib cache clear|path``
    Remove caplib's databases from the on-disk cache of model outputs (``caplib.cache``; known by their schema, so
    other files there are left and listed), or print where it is.

Every file a command reads (the input, a scored file, ``--splits``, ``--profile``, ``--classify``) is checked one way
(``caplib.inputs``): a regular, readable, UTF-8 file (a pipe or device is refused, never read). Malformed input exits
with status 2 and one message naming file, row and column; no traceback. A file with a header and no rows is refused
(nothing to score); a ``--splits`` file must list every row of the scored file exactly once and nothing else. The
output path and its signature file are checked before any model loads; ``-o`` may name the input only with
``--overwrite``; output and signature files are written to temporary files and renamed together, so a reader never
sees half a file, with the mode the umask gives. A text cell that a spreadsheet would run as a formula (``=1+1``) is
written with a leading ``'``, which caplib drops when it reads the file. Ctrl-C exits with status 130 and one line.
``caplib --debug ...`` shows the full traceback instead (for bug reports).

Example:
    $ caplib score data/sample/cap_correctness.csv -o scores.csv --profile offline --metrics cap,rouge_l
    $ caplib evaluate scores.csv --label-column label_semantic
    $ caplib compare scores.csv --metrics cap,rouge_l --label-column label_semantic
    $ caplib calibrate scores.csv --splits data/sample/cap_correctness_splits.csv --split validation -o cal.json
"""

from __future__ import annotations

import argparse
import csv
import json
import logging
import os
import shlex
import sys
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from caplib.checkpoints import CheckpointNotAvailable, pick_device
from caplib.distributed import BLOCK_ROWS
from caplib.data import DroppedRowsWarning, load_scoring_input
from caplib.files import write_together
from caplib.inputs import check_input_file, spreadsheet_safe
from caplib.runtime import BATCH_SIZE_IGNORED, NLI_BACKENDS, Runtime
from caplib.scoring import METRIC_NAMES, SCORERS  # score columns `caplib score` writes, `caplib evaluate` reads

__all__ = ["main"]


def _parse_metrics(text: str, configured: Sequence[str]) -> list[str]:
    names = [name.strip() for name in text.split(",") if name.strip()]
    if names == ["all"]:
        return ["cap", *[name for name in METRIC_NAMES if name in configured]]
    unknown = [name for name in names if name not in SCORERS]
    if unknown or not names:
        raise ValueError(f"--metrics: unknown metric(s) {unknown or names}; choose from {', '.join(SCORERS)} "
                         f"or 'all' (the paper's: {', '.join(METRIC_NAMES)})")
    return list(dict.fromkeys(names))


def _check_output(output: Path, source: str, overwrite: bool, sidecar: Path | None = None) -> None:
    """Refuse an output path (and the signature file beside it) that cannot be written, before any model loads (rc 2,
    one line)."""
    if output.is_dir():
        raise ValueError(f"-o {output}: is a directory; give a file name such as {output / 'scores.csv'}")
    if output.exists() and not output.is_file():
        raise ValueError(f"-o {output}: is not a regular file (a pipe or device); give a file name")
    if sidecar is not None and (sidecar.is_dir() or (sidecar.exists() and not sidecar.is_file())):
        raise ValueError(f"-o {output}: its signature file {sidecar} is in the way (a directory or special file); "
                         f"move it, or give another -o")
    if Path(source).exists() and output.exists() and output.resolve() == Path(source).resolve() and not overwrite:
        raise ValueError(f"-o {output} is the input file; pass --overwrite to replace it with the scored rows")
    for ancestor in output.parents:
        if ancestor.exists():
            if not ancestor.is_dir():
                raise ValueError(f"-o {output}: {ancestor} is a file, not a directory")
            if not os.access(ancestor, os.W_OK | os.X_OK):
                raise ValueError(f"-o {output}: directory {ancestor} is not writable")
            break


def _score(args: argparse.Namespace) -> int:
    from caplib import __version__
    from caplib.profiles import load_profile
    from caplib.scoring import score_frame

    profile = load_profile(args.profile)
    metrics = _parse_metrics(args.metrics, list(profile.baselines))
    if profile.lock is not None:
        from caplib.lock import verify_lock

        verify_lock(profile.lock, profile.data_dir, profile.statement_dir)
    check_input_file(args.input)
    if args.device is not None:
        pick_device(args.device)  # an unknown or absent device is named now, before any model loads
    output = Path(args.output)
    sidecar = Path(f"{output}.signature.json")
    _check_output(output, args.input, args.overwrite, sidecar)
    labeler = _calibration(args.classify, profile, metrics) if args.classify else None
    with warnings.catch_warnings(record=True) as said:
        warnings.simplefilter("always", DroppedRowsWarning)
        frame, gold = load_scoring_input(args.input)
    for warning in said:  # a row the loader left out (the release's row without an answer): one line, never silent
        print(f"caplib: {warning.message}", file=sys.stderr)
    if frame.empty:  # decided: nothing to score is a mistake, not an empty output (issue 34)
        raise ValueError(f"{args.input}: the file has a header but no data rows; nothing to score (give a file with "
                         f"at least one row)")
    statement_metrics = ("cap", "cap_decomposed")  # these can score premise/hypothesis statements alone
    if gold is None and any(metric not in statement_metrics for metric in metrics):
        raise ValueError(f"{args.input}: {', '.join(m for m in metrics if m not in statement_metrics)} compare gold "
                         f"answer and answer; the file needs the columns question, gold_answer (or gold) and answer")
    if args.regenerate_statements and gold is None:
        raise ValueError(f"{args.input}: --regenerate-statements needs the columns question, gold_answer (or gold) "
                         f"and answer")
    # bert_score reports progress on stdout, where the signatures go: only when a person is watching
    if args.batch_size is not None:
        print(f"caplib: note: --batch-size {args.batch_size} changes nothing; {BATCH_SIZE_IGNORED}", file=sys.stderr)
    if args.engine == "local" and (args.actors != 1 or args.address):
        raise ValueError("--actors and --address go with --engine ray")
    runtime = Runtime(device=args.device, dtype=args.dtype, cpu_workers=args.cpu_workers,
                      nli_backend=args.nli_backend,
                      cache=not args.no_cache, cache_dir=args.cache_dir,
                      progress=not args.no_progress and sys.stderr.isatty(), allow_unpinned=args.allow_unpinned)
    scored = score_frame(frame, profile, metrics, gold_column=gold, regenerate_statements=args.regenerate_statements,
                         components=args.components or getattr(labeler, "method", "") == "components",
                         runtime=runtime, long_inputs=args.long_inputs, engine=args.engine, actors=args.actors,
                         address=args.address, block_rows=args.block_rows)
    for metric, reason in scored.skipped.items():
        print(f"caplib: {'skipped' if args.allow_skip else 'cannot run'} {metric}: {reason}", file=sys.stderr)
    if scored.skipped and not args.allow_skip:
        print(f"caplib: error: {len(scored.skipped)} metric(s) asked for cannot run here, so nothing was written; "
              f"fix the reason above, or pass --allow-skip to write the others", file=sys.stderr)
        return 3
    for metric in statement_metrics:
        entry = scored.metrics.get(metric, {})
        if entry.get("truncated_pairs", 0):
            print(f"caplib: {metric}: {entry['truncated_pairs']} NLI pair(s) were truncated to the profile's "
                  f"max_length", file=sys.stderr)
        if entry.get("chunked_pairs", 0):
            print(f"caplib: {metric}: {entry['chunked_pairs']} NLI pair(s) longer than the profile's max_length were "
                  f"scored in sentence chunks", file=sys.stderr)
    if scored.replaced:  # e.g. rescoring a file written by caplib score
        print(f"caplib: replacing the input's column(s) {scored.replaced}", file=sys.stderr)
    result = scored.frame
    if labeler is not None and "cap" in scored.signatures:
        from caplib.calibration import classify

        result = pd.concat([result, classify(result, labeler, scored.signatures["cap"])], axis=1)
        if not args.components:
            result = result.drop(columns=[c for c in result.columns if c.startswith("cap_") and c not in
                                          ("cap_label", "cap_label_confidence") and c not in frame.columns])
    report: dict[str, Any] = {
        "caplib": __version__,
        "command": shlex.join(["caplib", *args.argv]),
        "input": str(args.input),
        "rows": len(frame),
        # rows of the input left out with their reason (row_id -> reason); a splits file may still list them
        "dropped_rows": {str(row): reason for row, reason in frame.attrs.get("dropped_rows", {}).items()},
        "profile": {"name": profile.name, "source": str(profile.source)},
        "engine": scored.engine,
        "metrics": scored.report(),
        **({"classify": {"calibration": args.classify, "signature": str(labeler.signature())}}
           if labeler is not None and "cap" in scored.signatures else {}),
    }
    # every text cell quoted: a cell holding a lone carriage return is otherwise written bare, and every CSV reader
    # (caplib's, pandas', Python's) then reads it as a line break, splitting the row (found by tests/test_fuzz.py);
    # a cell a spreadsheet would run as a formula is marked as text (caplib.inputs reads it back unmarked)
    safe = spreadsheet_safe(result)
    write_together({
        output: lambda path: safe.to_csv(path, index=False, quoting=csv.QUOTE_NONNUMERIC),
        sidecar: lambda path: path.write_text(json.dumps(report, indent=2, ensure_ascii=False) + "\n",
                                              encoding="utf-8")})
    for metric, entry in report["metrics"].items():
        if entry["status"] == "scored":
            print(f"{metric}: {entry['signature']}")
    print(f"wrote {len(result)} rows to {output} (signatures: {sidecar})")
    return 0


def _calibration(name: str, profile: Any, metrics: Sequence[str]) -> Any:
    """The labeler of ``score --classify``, read (and its file checked) before any model loads."""
    from caplib.calibration import for_this_backbone, load, profile_calibration_path, shipped_path

    if "cap" not in metrics:
        raise ValueError("--classify labels answers from CAP's scores: add cap to --metrics")
    path = profile_calibration_path(profile.source) if name == "profile" else Path(name)
    if name == "profile" and path == shipped_path():
        path = for_this_backbone()  # refitted here once when this machine's backbone is not the shipped one's
    if not path.exists():  # anything else there (a pipe, a directory) is refused by load(), which names it
        raise ValueError(f"--classify {name}: no calibration file {path}" + (
            f" (profile {profile.name!r} ships none); fit one with `caplib calibrate`" if name == "profile" else ""))
    return load(path)


def _calibrate(args: argparse.Namespace) -> int:
    from caplib.calibration import fit_scored_file

    check_input_file(args.scores)
    if args.splits is not None:
        check_input_file(args.splits, what="--splits")
    _check_output(Path(args.output), args.scores, overwrite=False)
    labeler = fit_scored_file(args.scores, args.label_column, splits=args.splits, split=args.split,
                              method=args.method, objective=args.objective)
    labeler.save(Path(args.output))
    print(f"{labeler.signature()}\nwrote {args.output} ({labeler.method}, fitted on {labeler.provenance.n} rows)")
    return 0


def _read_scores(args: argparse.Namespace, metrics: Any) -> pd.DataFrame:
    """The labelled rows of ``args.scores`` (``caplib.scored.read_scored``; ``metrics``: its ``columns``), rows left
    out said on stderr."""
    from caplib.scored import read_scored

    frame, unlabelled = read_scored(args.scores, args.label_column, metrics, splits=getattr(args, "splits", None),
                                    split=getattr(args, "split", None))
    if unlabelled:
        print(f"caplib: {unlabelled} row(s) without {args.label_column} left out", file=sys.stderr)
    return frame


def _evaluate(args: argparse.Namespace) -> int:
    from caplib.evaluation import report

    check_input_file(args.scores)
    if args.bootstrap < 0:
        raise ValueError(f"--bootstrap must be 0 (no intervals) or a number of resamples, got {args.bootstrap}")
    metrics = ([name.strip() for name in args.metrics.split(",") if name.strip()] if args.metrics else
               lambda header: [name for name in SCORERS if name in header])  # default: every metric column found
    frame = _read_scores(args, metrics)  # the label column is checked first
    metrics = [name for name in SCORERS if name in frame.columns] if callable(metrics) else metrics
    if not metrics:
        raise ValueError(f"{args.scores}: no metric column(s) {list(METRIC_NAMES)}; columns are {list(frame.columns)}")
    if args.shortcut:
        from caplib.shortcut import frame_shortcut_scores, shortcut_signature

        try:
            frame["shortcut"] = frame_shortcut_scores(frame, args.label_column, seed=args.seed)
        except ValueError as error:
            raise ValueError(f"{args.scores}: --shortcut {error}") from None
        metrics.append("shortcut")
        print(f"shortcut: {shortcut_signature(seed=args.seed)}", file=sys.stderr)
    table = report(frame, metrics, args.label_column, n_resamples=args.bootstrap, seed=args.seed)
    if args.json:
        records = table.reset_index().astype(object).where(table.reset_index().notna(), None)
        print(json.dumps({"signature": table.attrs["signature"], "label_column": args.label_column,
                          "metrics": records.to_dict(orient="records")}, indent=2))
    else:
        with pd.option_context("display.width", 200, "display.max_columns", None):
            print(table.to_string(float_format=lambda value: f"{value:.4f}"))
        print(table.attrs["signature"])
    return 0


def _compare(args: argparse.Namespace) -> int:
    """Paired bootstrap and approximate randomization of two metrics on the same labelled rows (``caplib compare``)."""
    from caplib.evaluation import PAIRED_STATISTICS, paired_bootstrap, paired_randomization

    check_input_file(args.scores)
    if args.splits is not None:
        check_input_file(args.splits, what="--splits")
    metrics = [name.strip() for name in args.metrics.split(",") if name.strip()]
    if len(metrics) != 2 or metrics[0] == metrics[1]:
        raise ValueError(f"--metrics names the two score columns to compare, e.g. cap,bertscore; got {args.metrics!r}")
    statistics = ([name.strip() for name in args.statistics.split(",") if name.strip()] if args.statistics
                  else list(PAIRED_STATISTICS))
    if args.resamples < 1 or args.trials < 0:
        raise ValueError(f"--resamples must be positive and --trials at least 0, got {args.resamples}, {args.trials}")
    frame = _read_scores(args, metrics)
    a, b, labels = frame[metrics[0]], frame[metrics[1]], frame[args.label_column]
    table = paired_bootstrap(a, b, labels, statistics, n_resamples=args.resamples, confidence=args.confidence,
                             seed=args.seed, names=metrics, undefined="nan")
    signatures = [table.attrs["signature"]]
    for name, count in table.attrs["undefined"].items():
        print(f"caplib: {name} is undefined on {count} of {args.resamples} resamples (a class of the pair is too "
              f"rare in {len(frame)} rows): no interval or p-value", file=sys.stderr)
    if args.trials:
        randomization = paired_randomization(a, b, labels, statistics, n_trials=args.trials, seed=args.seed,
                                             names=metrics)
        table["randomization_p_value"] = randomization["p_value"]
        signatures.append(randomization.attrs["signature"])
    if args.json:
        records = table.reset_index().astype(object).where(table.reset_index().notna(), None)
        print(json.dumps({"signatures": signatures, "metrics": metrics, "label_column": args.label_column,
                          "rows": len(frame), "confidence": args.confidence, "statistics": records.to_dict("records")},
                         indent=2))
        return 0
    printed = table.rename(columns={"low": f"{args.confidence:.0%} low", "high": f"{args.confidence:.0%} high",
                                    "p_value": "p-value", "randomization_p_value": "AR p-value"})
    print(f"{metrics[0]} - {metrics[1]} on {len(frame)} rows ({args.label_column}); p-value: paired bootstrap, "
          f"H0 equal; AR p-value: approximate randomization, H0 exchangeable")
    with pd.option_context("display.width", 200, "display.max_columns", None):
        print(printed.to_string(float_format=lambda value: f"{value:.4f}"))
    print("\n".join(signatures))
    return 0


def _fetch(args: argparse.Namespace) -> int:
    from caplib.fetch import fetch_profile

    result = fetch_profile(args.profile, update=args.update, dry_run=args.dry_run,
                           progress=not args.no_progress and sys.stderr.isatty(), mirror=args.mirror)
    return 2 if result.failures else 0


def _cache(args: argparse.Namespace) -> int:
    from caplib.cache import clear, default_cache_dir

    directory = Path(args.cache_dir).expanduser() if args.cache_dir else default_cache_dir()
    if directory.exists() and not directory.is_dir():
        raise ValueError(f"--cache-dir {directory}: is a file, not a directory; give the cache directory "
                         f"(`caplib cache path` prints the default)")
    if args.action == "path":
        print(directory)
        return 0
    cleared = clear(directory)
    names = ", ".join(path.name for path in cleared.removed)
    print(f"removed {cleared.entries} cached entries in {len(cleared.removed)} file(s) from {directory}"
          + (f": {names}" if names else "")
          + (f" (and {len(cleared.set_aside)} unreadable file(s) set aside earlier)" if cleared.set_aside else ""))
    if cleared.left:
        print(f"left {len(cleared.left)} file(s) that are not caplib's cache: "
              + "; ".join(f"{path.name} ({why})" for path, why in cleared.left.items()))
    return 0


def _parser() -> argparse.ArgumentParser:
    from caplib import __version__

    parser = argparse.ArgumentParser(prog="caplib", description="CAP scoring and the monotonicity protocol.")
    parser.add_argument("--version", action="version", version=f"caplib {__version__}")
    parser.add_argument("--debug", action="store_true", help="show the full traceback of an error (for bug reports)")
    commands = parser.add_subparsers(dest="command", required=True)

    score = commands.add_parser("score", help="score a CSV with CAP and baseline metrics")
    score.add_argument("input", help="CAP-Correctness CSV, or a CSV (or .parquet) with question/gold_answer/answer "
                                     "or premise/hypothesis columns")
    score.add_argument("-o", "--output", required=True, help="output CSV (signatures go to OUTPUT.signature.json)")
    score.add_argument("--overwrite", action="store_true", help="allow -o to name the input file itself")
    score.add_argument("--profile", default="offline", help="offline (default), paper, or a profile YAML file")
    score.add_argument("--metrics", default="cap",
                       help=f"comma-separated, from {','.join(SCORERS)}, or 'all' (the paper's: "
                            f"{','.join(METRIC_NAMES)}; default: cap)")
    score.add_argument("--long-inputs", choices=("truncate", "chunk"), default=None,
                       help="NLI pairs longer than the profile's max_length: truncate (the paper's, default) or "
                            "score them in sentence chunks (max entailment over the premise's chunks)")
    score.add_argument("--device", default=None, help="cpu, cuda, cuda:1, ... (default: cuda if available)")
    score.add_argument("--batch-size", type=int, default=None,
                       help="ignored (kept so that old command lines run): every input is computed in a fixed tile, "
                       "the profile's nli.batch_size, so scores do not depend on batching")
    score.add_argument("--cpu-workers", type=int, default=None,
                       help="NLI tiles scored at a time on CPU (default: one per torch thread, at most 8; each tile on one torch thread)")
    score.add_argument("--dtype", default=None, help="NLI precision: auto, float32, float16, bfloat16 "
                                                     "(default: the profile's)")
    score.add_argument("--regenerate-statements", action="store_true",
                       help="make premise/hypothesis anew with the profile's statement generator")
    score.add_argument("--engine", choices=("local", "ray"), default="local",
                       help="local (default): this process; ray: blocks of rows on a Ray actor pool, same scores "
                            "(pip install 'caplib[distributed]')")
    score.add_argument("--actors", type=int, default=1, help="--engine ray: actors, each with its own models")
    score.add_argument("--address", default=None, help="--engine ray: a running cluster to join (default: local Ray)")
    score.add_argument("--block-rows", type=int, default=BLOCK_ROWS,
                       help=f"--engine ray: rows per block (default {BLOCK_ROWS})")
    score.add_argument("--nli-backend", choices=NLI_BACKENDS, default="torch",
                       help="torch (default, exact float32); onnxruntime (CPU, within ~1e-5 of torch); "
                            "onnxruntime-int8 (CPU, int8 weights: about 2.4x faster than torch here, not bit-equal); "
                            "each with its own signature; pip install 'caplib[onnx]'")
    score.add_argument("--components", action="store_true", help="also write CAP's components (cap_* columns)")
    score.add_argument("--allow-unpinned", action="store_true",
                       help="load Hub models without a pinned revision from 'main' (the commit used is recorded)")
    score.add_argument("--allow-skip", action="store_true",
                       help="write the other metrics when one asked for cannot run here (default: fail, status 3)")
    score.add_argument("--no-cache", action="store_true", help="neither read nor write the on-disk cache")
    score.add_argument("--cache-dir", default=None, help="cache directory (default: $CAPLIB_CACHE_DIR or "
                                                         "~/.cache/caplib)")
    score.add_argument("--no-progress", action="store_true", help="no progress bars")
    score.add_argument("--classify", default=None, metavar="CALIBRATION",
                       help="add cap_label and cap_label_confidence from a calibration file (`caplib calibrate`), or "
                            "'profile' for the profile's shipped one")
    score.set_defaults(func=_score)

    calibrate = commands.add_parser("calibrate", help="fit a label-free labeler on a scored, labelled CSV")
    calibrate.add_argument("scores", help="CSV written by `caplib score` (its .signature.json names the backbone)")
    calibrate.add_argument("-o", "--output", required=True, help="calibration file to write (JSON)")
    calibrate.add_argument("--label-column", default="label_semantic", help="taxonomy labels (default label_semantic)")
    calibrate.add_argument("--splits", default=None, help="row_id,split CSV (default: the file's own split column)")
    calibrate.add_argument("--split", default=None, help="fit on this split only, e.g. validation (default: all rows)")
    calibrate.add_argument("--method", default="auto", choices=("auto", "components", "thresholds", "uniform"),
                           help="auto (default): components when the file has CAP's components, else thresholds")
    calibrate.add_argument("--objective", default="quadratic", choices=("quadratic", "accuracy"),
                           help="what fitted thresholds maximise (default: quadratic-weighted kappa)")
    calibrate.set_defaults(func=_calibrate)

    evaluate = commands.add_parser("evaluate", help="monotonicity protocol report of a scored CSV")
    evaluate.add_argument("scores", help="CSV written by `caplib score`, or the release's scores.json")
    evaluate.add_argument("--label-column", default="label_semantic", help="taxonomy labels (default label_semantic)")
    evaluate.add_argument("--splits", default=None, help="row_id,split CSV (default: the file's own split column)")
    evaluate.add_argument("--split", default=None, help="evaluate this split only, e.g. test (default: all rows)")
    evaluate.add_argument("--metrics", default=None, help="comma-separated score columns (default: all found)")
    evaluate.add_argument("--bootstrap", type=int, default=0, help="bootstrap resamples for CIs (paper: 10000)")
    evaluate.add_argument("--seed", type=int, default=0, help="bootstrap seed")
    evaluate.add_argument("--json", action="store_true", help="print JSON instead of a table")
    evaluate.add_argument("--shortcut", action="store_true",
                          help="add the shortcut baseline: out-of-fold surface-feature scores (caplib.shortcut)")
    evaluate.set_defaults(func=_evaluate)

    compare = commands.add_parser("compare", help="paired significance tests of two metrics on a scored CSV")
    compare.add_argument("scores", help="CSV written by `caplib score`, or the release's scores.json")
    compare.add_argument("--metrics", required=True, help="the two score columns, e.g. cap,bertscore (a - b)")
    compare.add_argument("--label-column", default="label_semantic", help="taxonomy labels (default label_semantic)")
    compare.add_argument("--splits", default=None, help="row_id,split CSV (default: the file's own split column)")
    compare.add_argument("--split", default=None, help="compare on this split only, e.g. test (default: all rows)")
    compare.add_argument("--statistics", default=None,
                         help="comma-separated (default: spearman, pairwise_accuracy and the hard pairs of Tab. 4)")
    compare.add_argument("--resamples", type=int, default=10_000, help="paired bootstrap resamples (default 10000)")
    compare.add_argument("--trials", type=int, default=1_000,
                         help="approximate randomization trials (default 1000: p-values to 0.001; a trial costs twice "
                              "a resample; 0: no randomization test)")
    compare.add_argument("--confidence", type=float, default=0.95, help="interval level (default 0.95)")
    compare.add_argument("--seed", type=int, default=0, help="seed of resamples and trials")
    compare.add_argument("--json", action="store_true", help="print JSON instead of a table")
    compare.set_defaults(func=_compare)

    fetch = commands.add_parser("fetch", help="download a profile's data and checkpoints once and lock them")
    fetch.add_argument("--profile", default="paper", help="paper (default), released or a profile YAML file")
    fetch.add_argument("--mirror", default=None, metavar="DIR",
                       help="copy the release's files from DIR (the upstream layout: data/..., docs/data/...) instead "
                            "of downloading them; default $CAPLIB_MIRROR")
    fetch.add_argument("--update", action="store_true", help="re-resolve every revision and write the lock anew")
    fetch.add_argument("--dry-run", action="store_true", help="list what would be fetched; no network")
    fetch.add_argument("--no-progress", action="store_true", help="no progress bars")
    fetch.set_defaults(func=_fetch)

    cache = commands.add_parser("cache", help="manage the on-disk cache of model outputs")
    cache.add_argument("action", choices=("clear", "path"))
    cache.add_argument("--cache-dir", default=None, help="cache directory (default: $CAPLIB_CACHE_DIR or "
                                                         "~/.cache/caplib)")
    cache.set_defaults(func=_cache)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``caplib`` command; returns the exit status (2 for bad input)."""
    argv = list(sys.argv[1:] if argv is None else argv)
    args = _parser().parse_args(argv)
    args.argv = argv
    logging.basicConfig(level=logging.WARNING, format="caplib: %(message)s")
    try:
        return int(args.func(args))
    except (ValueError, CheckpointNotAvailable, OSError) as exc:  # OSError: a file or the network, named in it
        if args.debug:
            raise
        print(f"caplib: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        if args.debug:
            raise
        print("caplib: interrupted", file=sys.stderr)
        return 130
