"""Test-wide settings: no test may reach the network (the Hugging Face Hub is unreachable here and in CI)."""

import os

import pytest

os.environ["HF_HUB_OFFLINE"] = "1"
os.environ["TRANSFORMERS_OFFLINE"] = "1"
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
if os.environ.get("PYTEST_XDIST_WORKER"):
    # `make test` runs one pytest-xdist worker per core: each worker, and every process it starts (chapters, CLI
    # runs, the rehearsal's book), computes on one thread. Threads of their own would only contend for the cores the
    # other workers use (issue 35: with the default threads, more CPU time went to contention). Tests of threading
    # set their threads themselves; the notebook tests' second book run takes torch's default threads back.
    os.environ.setdefault("OMP_NUM_THREADS", "1")


@pytest.fixture(scope="module")
def one_torch_thread():
    """One torch thread for a module of tiny-model tests: on 2 shared cores, OpenMP threads spinning on busy cores
    make tiny matmuls ~100x slower. Use with ``pytestmark = pytest.mark.usefixtures("one_torch_thread")``."""
    torch = pytest.importorskip("torch")
    previous = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(previous)


#: Test files that take minutes, in the order `make test` starts them: it runs pytest with xdist on every core, one
#: file per worker at a time (--dist loadfile, --no-loadscope-reorder), so these begin at once on separate workers and
#: the many short files fill the time around them (issue 35).
LONG_FILES = ("tests/test_notebooks.py", "tests/test_paper_rehearsal.py", "tests/test_distributed.py",
              "tests/test_release.py", "tests/test_offline_nli.py", "tests/test_nli_corpus.py")


def pytest_collection_modifyitems(session, config, items):
    """The long files first, each in its own order; every other test after them, as collected."""
    rank = {name: index for index, name in enumerate(LONG_FILES)}
    items.sort(key=lambda item: rank.get(item.nodeid.split("::")[0], len(rank)))
