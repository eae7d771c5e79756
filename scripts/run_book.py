"""Run every chapter notebook headless with papermill, then compile the Jupyter Book (the README's book command).

Usage:
    python scripts/run_book.py [--profile offline|paper] [--only 03_cap ...] [--row-limit N] [--no-build]

Executed notebooks and their recorded numbers (``<chapter>.numbers.json``) are written to ``book/chapters/``,
which ``_toc.yml`` points at; the book is then built with ``execute_notebooks: off`` so it renders exactly what
papermill computed. The ``offline`` profile (default) needs no network; its NLI backbone is trained once and cached
(``caplib.offline_nli``). The ``paper`` profile needs the official CSVs and the paper's checkpoints (see README).
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from pathlib import Path

import papermill

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = ROOT / "notebooks"
OUTPUT = ROOT / "book" / "chapters"


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
    )
    return time.perf_counter() - start


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--profile", default="offline", help="offline (default, no network) or paper")
    parser.add_argument("--only", nargs="*", help="chapter stems to run, e.g. 03_cap")
    parser.add_argument("--row-limit", type=int, default=None, help="smoke runs: at most N rows per dataset")
    parser.add_argument("--timeout", type=int, default=1800, help="per-cell timeout in seconds")
    parser.add_argument("--no-build", action="store_true", help="execute notebooks only, do not build HTML")
    args = parser.parse_args(argv)

    OUTPUT.mkdir(parents=True, exist_ok=True)
    if args.profile == "offline":
        from caplib.offline_nli import ensure_backbone

        ensure_backbone()  # trains once (progress bar), then reuses the cached artifact
    parameters = {"profile": args.profile}
    if args.row_limit is not None:
        parameters["row_limit"] = args.row_limit

    total = time.perf_counter()
    for notebook in chapters(args.only):
        print(f"[book] running {notebook.name} (profile={args.profile}) ...", flush=True)
        seconds = run_chapter(notebook, parameters, args.timeout)
        print(f"[book] {notebook.name} done in {seconds:.1f} s", flush=True)
    print(f"[book] all chapters executed in {time.perf_counter() - total:.1f} s", flush=True)

    if args.no_build:
        return 0
    jupyter_book = Path(sys.executable).with_name("jupyter-book")
    subprocess.run([str(jupyter_book), "build", str(ROOT)], check=True)
    index = ROOT / "_build" / "html" / "index.html"
    print(f"[book] built {index}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
