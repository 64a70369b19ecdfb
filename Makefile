# GLRMask developer commands. `make setup` then `make test` on a fresh machine (Python 3.11 + PyPI).
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
PYTEST := $(PY) -m pytest
# pytest-xdist worker processes for `make test` and `make test-full` (1: run in pytest's own process)
TEST_WORKERS ?= 2

.PHONY: setup test test-full test-integration lint bench artifacts exactness exactness-quick clean

setup: $(VENV)/.installed

$(VENV)/.installed: pyproject.toml runtime/pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e ./runtime -e '.[test,lint]'
	touch $@

test: setup
	$(PYTEST) -q $(if $(filter-out 1,$(TEST_WORKERS)),-n $(TEST_WORKERS))

test-full: setup
	$(PYTEST) -q -m 'not integration' $(if $(filter-out 1,$(TEST_WORKERS)),-n $(TEST_WORKERS))

test-integration: setup
	$(PY) -m pip install --quiet -e '.[integration]'
	$(PYTEST) -q -m integration tests/integration

lint: setup
	$(VENV)/bin/ruff check .
	$(VENV)/bin/mypy

bench: setup
	$(PY) -m bench

exactness: setup
	$(PY) -m devtools.exactness

exactness-quick: setup
	$(PY) -m devtools.exactness --quick

artifacts: setup
	$(PY) -m glrmask_cli build grammars/json.lark --tokenizer gpt2 -o artifacts/json.gpt2.glrm

clean:
	rm -rf $(VENV) .pytest_cache .hypothesis .cache
