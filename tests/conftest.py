"""Test-wide settings: no test may reach the network (the Hugging Face Hub is unreachable here and in CI)."""

import os

import pytest

os.environ["HF_HUB_OFFLINE"] = "1"
os.environ["TRANSFORMERS_OFFLINE"] = "1"
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")


@pytest.fixture(scope="module")
def one_torch_thread():
    """One torch thread for a module of tiny-model tests: on 2 shared cores, OpenMP threads spinning on busy cores
    make tiny matmuls ~100x slower. Use with ``pytestmark = pytest.mark.usefixtures("one_torch_thread")``."""
    torch = pytest.importorskip("torch")
    previous = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(previous)
