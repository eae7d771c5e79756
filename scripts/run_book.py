"""Run every chapter notebook headless with papermill, then compile the Jupyter Book (the README's book command).

Usage:
    python scripts/run_book.py [--profile offline|paper|FILE.yaml] [--only 03_cap ...] [--row-limit N] [--no-build]
                               [--device cuda] [--dtype auto] [--allow-unpinned]

Executed notebooks and their recorded numbers (``<chapter>.numbers.json``) are written to ``book/chapters/``,
which ``_toc.yml`` points at; the book is then built with ``execute_notebooks: off`` so it renders exactly what
papermill computed. The ``offline`` profile (default) needs no network; its NLI backbone is trained once and cached
(``caplib.offline_nli``). The ``paper`` profile needs the official CSVs and the paper's checkpoints, fetched and
locked once by ``caplib fetch --profile paper``: the runner checks every locked file first, and fine-tunes the
statement model once when its directory is missing (on a GPU; on a CPU it stops with the command and the time it
would take). ``--device``, ``--dtype`` and ``--allow-unpinned`` reach every chapter that runs a
model.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import subprocess
import sys
import time
from pathlib import Path

import papermill
from jupyter_client.manager import AsyncKernelManager
from traitlets.config import Config

from caplib.checkpoints import sha256_of
from caplib.lock import LockError, directory_hashes, verify_lock
from caplib.profiles import Profile, available_profiles, load_profile
from caplib.statements.training import CPU_HOURS_PER_EPOCH, train_for_profile

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = ROOT / "notebooks"
OUTPUT = ROOT / "book" / "chapters"
#: What each chapter was last executed from (:func:`inputs_hash`); a chapter whose inputs are unchanged is not re-run.
RUNS = OUTPUT / "runs.json"


def chapters(only: list[str] | None) -> list[Path]:
    """The chapter notebooks in reading order (file names start with their number)."""
    found = sorted(NOTEBOOKS.glob("[0-9][0-9]_*.ipynb"))
    if only:
        found = [path for path in found if path.stem in only]
        missing = set(only) - {path.stem for path in found}
        if missing:
            raise SystemExit(f"unknown chapter(s): {', '.join(sorted(missing))}; available: "
                             f"{', '.join(p.stem for p in sorted(NOTEBOOKS.glob('[0-9][0-9]_*.ipynb')))}")
    return found


class ChapterKernelManager(AsyncKernelManager):
    """The kernel manager of a chapter run: jupyter_client's, without the interrupt it sends before a shutdown.

    jupyter_client interrupts (SIGINT) a kernel before asking it to shut down, to stop code still running. When
    papermill shuts a chapter's kernel down every cell has finished, so the interrupt stops nothing; but when it
    lands while the kernel is still answering a message, ipykernel logs "KeyboardInterrupt caught in kernel" into
    the book's log. A kernel that does not answer the shutdown request is still killed (``finish_shutdown``).
    """

    async def _async_interrupt_kernel(self) -> None:
        if not self.shutting_down:
            await super()._async_interrupt_kernel()


def run_chapter(notebook: Path, parameters: dict, timeout: int) -> float:
    """Execute one notebook into book/chapters/ with papermill; returns the wall time in seconds."""
    start = time.perf_counter()
    papermill.execute_notebook(
        str(notebook),
        str(OUTPUT / notebook.name),
        parameters=parameters,
        cwd=str(OUTPUT),
        kernel_name="python3",
        execution_timeout=timeout,
        progress_bar=False,
        report_mode=False,
        # the kernel talks over local IPC sockets, not TCP: nothing listens on a port, and ipykernel has no reason
        # to warn "Kernel is running over TCP without encryption" in every chapter's log
        config=Config({"KernelManager": {"transport": "ipc"}}),
        kernel_manager_class=ChapterKernelManager,
    )
    fold_code(OUTPUT / notebook.name)
    return time.perf_counter() - start


#: Code cells longer than this many lines are shown folded (results first); shorter ones stay open: they show the
#: reader the one call that makes a table or figure.
OPEN_CODE_LINES = 4


def fold_code(executed: Path) -> None:
    """Results first: fold the source of the parameters papermill injected (like the chapter's own parameters
    cell) and of every code cell longer than ``OPEN_CODE_LINES`` lines (``hide-input``: its outputs stay visible,
    a click shows the code). A cell tagged ``show-input`` stays open whatever its length."""
    import nbformat

    notebook = nbformat.read(executed, as_version=4)
    for cell in notebook.cells:
        if cell.cell_type != "code":
            continue
        tags = cell.metadata.setdefault("tags", [])
        folded = {"hide-input", "remove-input", "remove-cell", "show-input"} & set(tags)
        long = len(cell.source.strip().splitlines()) > OPEN_CODE_LINES
        if not folded and ("injected-parameters" in tags or long):
            tags.append("hide-input")
    nbformat.write(notebook, executed)


def _code_hashes(directory: Path) -> dict[str, str]:
    return {name: digest for name, digest in directory_hashes(directory).items() if "__pycache__" not in name}


def inputs_hash(notebook: Path, parameters: dict, profile: Profile, chapters_dir: Path | None = None) -> str:
    """SHA-256 of everything a chapter's output depends on: its notebook, its parameters, caplib's code and package
    data (profiles and locks included), the project's data files, the profile's data and model directories, the
    NLI checkpoint's content, the pinned dependencies, this runner's code and, for a chapter that reads the numbers
    of the chapters before it (its ``chapters_dir`` parameter), those numbers as they are in ``chapters_dir``
    (default: the book's output folder)."""
    from caplib.checkpoints import CheckpointNotAvailable, resolve_checkpoint

    try:
        nli = resolve_checkpoint(profile.nli_model, profile.nli_revision, allow_unpinned=True).fingerprint
    except (CheckpointNotAvailable, ValueError) as error:
        nli = f"unavailable: {error}"
    folders = [ROOT / "data", *(path for path in (profile.data_dir, profile.statement_dir)
                                if path is not None and path.is_dir() and ROOT / "data" not in path.parents)]
    parts = {
        "notebook": sha256_of([notebook]), "parameters": parameters, "caplib": _code_hashes(ROOT / "caplib"),
        "data": {str(folder): directory_hashes(folder) for folder in folders}, "nli": nli,
        "dependencies": sha256_of([ROOT / "requirements.txt", ROOT / "constraints.txt"]),
        "runner": sha256_of([Path(__file__)]),  # how chapters are executed and folded
    }
    if "chapters_dir" in papermill.inspect_notebook(str(notebook)):
        numbers = sorted((chapters_dir or OUTPUT).glob("*.numbers.json"))
        parts["numbers"] = {path.name: sha256_of([path]) for path in numbers if path.name.split(".")[0] < notebook.stem}
    return hashlib.sha256(json.dumps(parts, sort_keys=True, default=str).encode("utf-8")).hexdigest()


def declared_parameters(notebook: Path, parameters: dict) -> dict:
    """The items of ``parameters`` that ``notebook`` declares (each chapter is passed only those)."""
    declared = papermill.inspect_notebook(str(notebook))
    return {name: value for name, value in parameters.items() if name in declared}


def up_to_date(notebook: Path, key: str, runs: dict[str, str]) -> bool:
    """Whether ``notebook`` was executed from exactly these inputs and its outputs are still there."""
    outputs = [OUTPUT / notebook.name, OUTPUT / f"{notebook.stem}.numbers.json"]
    return runs.get(notebook.stem) == key and all(path.is_file() for path in outputs)


def prepare_profile(args: argparse.Namespace) -> Profile:
    """Everything a profile needs before its chapters run: the offline backbone built, the lock checked, the
    statement model fine-tuned. Stops (SystemExit, one message) with the command to run when something is missing."""
    from caplib.checkpoints import BUILTIN_OFFLINE_NLI, pick_device
    from caplib.fetch import plan

    try:
        profile = load_profile(args.profile)
    except ValueError as error:
        raise SystemExit(f"[book] {error}") from None
    if profile.nli_model == BUILTIN_OFFLINE_NLI:
        from caplib.checkpoints import CheckpointNotAvailable
        from caplib.offline_nli import ensure_backbone

        try:
            ensure_backbone()  # the shipped weights, checked against their manifest (nothing is trained)
        except CheckpointNotAvailable as error:
            raise SystemExit(f"[book] {error}") from None
    fetch = f"caplib fetch --profile {args.profile}"
    if profile.lock is not None:
        try:
            verify_lock(profile.lock, profile.data_dir, profile.statement_dir)
        except LockError as error:
            raise SystemExit(f"[book] {error}") from None
    unpinned = [item.name for item in plan(profile) if item.role != "data" and item.revision is None]
    if unpinned and not args.allow_unpinned:
        raise SystemExit(f"[book] {', '.join(unpinned)} not pinned: run `{fetch}` once (it downloads and locks every "
                         f"checkpoint and data file), or pass --allow-unpinned to load 'main'")
    statements = profile.statement_dir
    if statements is not None and not statements.is_dir():
        command = f"python -m caplib.statements train --profile {args.profile}"
        device = pick_device(args.device)
        if not device.startswith("cuda"):
            raise SystemExit(
                f"[book] the statement model {statements} is not trained yet, and this machine has no GPU: the paper's "
                f"recipe (App. C.2, up to 15 epochs over 8,800 rows) takes about {CPU_HOURS_PER_EPOCH} h per epoch on "
                f"a 2-core CPU. Train it once with `{command}` (on a GPU if you can), then run the book again")
        print(f"[book] the statement model {statements} is missing: fine-tuning it once on {device} ({command})",
              flush=True)
        train_for_profile(profile, device=device, allow_unpinned=args.allow_unpinned)
    return load_profile(profile.source)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--profile", default="offline", help="offline (default, no network), paper, or a profile YAML")
    parser.add_argument("--device", default=None, help="cpu, cuda, cuda:1, ... (default: CUDA when available)")
    parser.add_argument("--dtype", default=None, help="NLI precision: auto, float32, float16, bfloat16 (default: the "
                                                      "profile's; auto = float16 on CUDA, float32 on CPU)")
    parser.add_argument("--allow-unpinned", action="store_true",
                        help="load Hub models that neither the profile nor its lock pins (from main; commit recorded)")
    parser.add_argument("--only", nargs="*", help="chapter stems to run, e.g. 03_cap")
    parser.add_argument("--row-limit", type=int, default=None, help="smoke runs: at most N rows per dataset")
    parser.add_argument("--timeout", type=int, default=1800, help="per-cell timeout in seconds")
    parser.add_argument("--no-build", action="store_true", help="execute notebooks only, do not build HTML")
    parser.add_argument("--force", action="store_true",
                        help="execute every chapter, even those whose inputs have not changed since their last run")
    args = parser.parse_args(argv)

    OUTPUT.mkdir(parents=True, exist_ok=True)
    profile = prepare_profile(args)
    # a bundled profile by its name, any other by its absolute path (chapters run in book/chapters)
    bundled = args.profile in available_profiles() and not Path(args.profile).is_file()
    parameters: dict = {"profile": args.profile if bundled else str(profile.source)}
    for name in ("row_limit", "device", "dtype"):
        if getattr(args, name) is not None:
            parameters[name] = getattr(args, name)
    if args.allow_unpinned:
        parameters["allow_unpinned"] = True

    total = time.perf_counter()
    runs = json.loads(RUNS.read_text(encoding="utf-8")) if RUNS.is_file() else {}
    for notebook in chapters(args.only):
        given = declared_parameters(notebook, parameters)
        key = inputs_hash(notebook, given, profile)
        if not args.force and up_to_date(notebook, key, runs):
            print(f"[book] {notebook.name}: inputs unchanged since its last run, not re-executed", flush=True)
            continue
        print(f"[book] running {notebook.name} (profile={parameters['profile']}) ...", flush=True)
        runs.pop(notebook.stem, None)
        RUNS.write_text(json.dumps(runs, indent=1, sort_keys=True) + "\n", encoding="utf-8")
        seconds = run_chapter(notebook, given, args.timeout)
        runs[notebook.stem] = key
        RUNS.write_text(json.dumps(runs, indent=1, sort_keys=True) + "\n", encoding="utf-8")
        print(f"[book] {notebook.name} done in {seconds:.1f} s", flush=True)
    print(f"[book] chapters done in {time.perf_counter() - total:.1f} s", flush=True)

    if args.no_build:
        return 0
    jupyter_book = Path(sys.executable).with_name("jupyter-book")
    subprocess.run([str(jupyter_book), "build", str(ROOT)], check=True)
    index = ROOT / "_build" / "html" / "index.html"
    print(f"[book] built {index}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
