"""Test-wide settings: no test may reach the network (the Hugging Face Hub is unreachable here and in CI)."""

import os

os.environ["HF_HUB_OFFLINE"] = "1"
os.environ["TRANSFORMERS_OFFLINE"] = "1"
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
