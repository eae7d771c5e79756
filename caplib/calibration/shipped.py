"""The offline profile's shipped calibration: fitted on the sample's validation split, rebuilt with the backbone.

``caplib/profiles/offline.calibration.json`` (:func:`caplib.calibration.profile_calibration_path`) is a
:class:`~caplib.calibration.ComponentLabeler` fitted on the validation rows of the bundled CAP-Correctness sample
(never a test row), scored by the offline profile's CAP with its components; its provenance names the backbone
(``builtin:offline-nli#sha256:<12 hex>``, the hash of the weights) and the sample's files. ``caplib score
--profile offline --classify profile`` applies it.

The weights of ``builtin:offline-nli`` ship with caplib (``caplib/offline_nli/backbone``) and are identified by their
SHA-256 (:mod:`caplib.checkpoints`), so the shipped calibration names them and applies on every machine. The shipped
file is never applied to another backbone's scores (one rebuilt by ``python -m caplib.offline_nli build``, whose
float bits differ by machine, or named by ``$CAPLIB_OFFLINE_NLI_DIR``); for such a backbone
:func:`for_this_backbone` (what ``--classify profile`` and Chapter 10 use) fits the same model on the same rows,
once, into the cache (``<cache dir>/calibration/offline-<hash>.json``). After new weights are shipped, rewrite the
shipped file with::

    python -m caplib.calibration offline          # rewrite caplib/profiles/offline.calibration.json

Example:
    >>> shipped_path().name
    'offline.calibration.json'
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence
from pathlib import Path

from caplib.calibration.components import ComponentLabeler
from caplib.calibration.provenance import Provenance
from caplib.calibration.store import load, profile_calibration_path
from caplib.checkpoints import sha256_of

__all__ = ["FIT_SPLIT", "build_offline", "for_this_backbone", "main", "shipped_path"]

#: The split the shipped calibration is fitted on (the test split stays for judging it, Chapter 10).
FIT_SPLIT = "validation"


def shipped_path() -> Path:
    """``caplib/profiles/offline.calibration.json``: the offline profile's calibration."""
    from caplib.profiles import PROFILE_DIR

    return profile_calibration_path(PROFILE_DIR / "offline.yaml")


def build_offline(output: str | Path | None = None, runtime: object | None = None) -> ComponentLabeler:
    """Score the bundled sample's validation split with the offline profile (CAP and its components; cached) and fit
    the component model on it; written to ``output`` (default :func:`shipped_path`).

    Raises:
        caplib.checkpoints.CheckpointNotAvailable: the offline backbone is missing.
    """
    from caplib.data import SAMPLE_DIR, load_sample, select_split
    from caplib.scoring import score_frame

    rows = select_split(load_sample("cap_correctness"), FIT_SPLIT)
    if set(rows["split"]) != {FIT_SPLIT}:  # the guard this file's provenance promises
        raise AssertionError(f"the shipped calibration may see {FIT_SPLIT} rows only")
    scored = score_frame(rows, "offline", ["cap"], components=True, runtime=runtime)  # type: ignore[arg-type]
    if "cap" not in scored.signatures:
        raise ValueError(f"CAP could not run under the offline profile: {scored.skipped.get('cap')}")
    data, splits = SAMPLE_DIR / "cap_correctness.csv", SAMPLE_DIR / "cap_correctness_splits.csv"
    provenance = Provenance(
        cap_signature=str(scored.signatures["cap"]),
        data=f"data/sample/{data.name}#sha256:{sha256_of([data])[:12]}",
        splits=f"{splits.name}#sha256:{sha256_of([splits])[:12]}", split=FIT_SPLIT, label_column="label_semantic",
        n=len(rows), row_ids=tuple(int(i) for i in rows["row_id"]))
    labeler = ComponentLabeler().fit(scored.frame, rows["label_semantic"].tolist(), provenance)
    labeler.save(output if output is not None else shipped_path())
    return labeler


def for_this_backbone(runtime: object | None = None) -> Path:
    """The offline profile's calibration for the backbone built here: the shipped file when it names this backbone;
    otherwise the same model fitted on the same validation rows with this backbone (:func:`build_offline`), written
    once to ``<cache dir>/calibration/offline-<hash>.json`` and reused (the shipped file is left as it is).

    Raises:
        caplib.checkpoints.CheckpointNotAvailable: the offline backbone is missing.
    """
    from caplib.cache import default_cache_dir
    from caplib.checkpoints import BUILTIN_OFFLINE_NLI, resolve_checkpoint

    backbone = resolve_checkpoint(BUILTIN_OFFLINE_NLI).identity
    if shipped_path().is_file() and load(shipped_path()).provenance.backbone == backbone:
        return shipped_path()
    local = default_cache_dir() / "calibration" / f"offline-{backbone.rsplit(':', 1)[-1]}.json"
    if not (local.is_file() and load(local).provenance.backbone == backbone):
        local.parent.mkdir(parents=True, exist_ok=True)
        build_offline(local, runtime)
    return local


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m caplib.calibration offline [-o PATH]`` (rebuild) or ``show [PATH]`` (print a file's provenance)."""
    parser = argparse.ArgumentParser(prog="python -m caplib.calibration",
                                     description="The offline profile's shipped calibration (Sec. 8.2).")
    commands = parser.add_subparsers(dest="command", required=True)
    offline = commands.add_parser("offline", help="refit the offline profile's calibration on the sample's "
                                                  "validation split with the backbone built here")
    offline.add_argument("-o", "--output", type=Path, default=None, help=f"default: {shipped_path()}")
    show = commands.add_parser("show", help="print a calibration file's signature and what it was fitted for")
    show.add_argument("path", nargs="?", type=Path, default=None, help=f"default: {shipped_path()}")
    args = parser.parse_args(argv)
    if args.command == "offline":
        labeler = build_offline(args.output)
        print(f"{labeler.signature()}\nwrote {args.output or shipped_path()}")
        return 0
    labeler = load(args.path or shipped_path())
    fitted = labeler.provenance.to_dict()
    fitted.pop("row_ids")
    print(f"{labeler.signature()}\n{json.dumps(fitted, indent=1)}")
    return 0
