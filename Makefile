# The two commands: `make demo` and `make test`. Both set everything up first.
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: demo test setup lint typecheck unit e2e bench clean

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $(STAMP)

setup: $(STAMP)

demo: setup
	@echo "make demo: the end-to-end demo is not built yet (see issue 8)."
	@echo "For now it checks the install: $$($(BIN)/relavium-lsp --version)"

lint: setup
	$(BIN)/ruff check relavium_lsp tests bench
	$(BIN)/ruff format --check relavium_lsp tests bench

typecheck: setup
	$(BIN)/mypy

unit: setup
	$(BIN)/pytest -m "not e2e" -q

e2e: setup
	$(BIN)/pytest -m e2e -q

test: lint typecheck unit e2e

clean:
	rm -rf $(VENV) .mypy_cache .ruff_cache .pytest_cache
