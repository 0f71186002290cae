#!/usr/bin/env bash
# The wheels the server's dependencies need, for the e2e install test: the extension installs
# its bundled wheel from this directory alone (RELAVIUM_TEST_PIP_FIND_LINKS: pip --no-index),
# so the test stays offline and fast. Built once per dependency list, then reused.
#
#   tests/e2e/vscode/wheelhouse.sh WHEEL     (prints the wheelhouse directory on its last line)
# Env: RELAVIUM_E2E_CACHE (default ~/.cache/relavium-e2e), PYTHON (default .venv/bin/python)
set -euo pipefail

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)"
WHEEL="$1"
PYTHON="${PYTHON:-$REPO/.venv/bin/python}"
CACHE="${RELAVIUM_E2E_CACHE:-$HOME/.cache/relavium-e2e}"
HOUSE="$CACHE/wheelhouse"
# The dependency list (and the Python that resolves it) decide whether the house is current.
KEY="$("$PYTHON" -c '
import sys, tomllib
deps = tomllib.load(open(sys.argv[1], "rb"))["project"]["dependencies"]
print(sys.version_info[:2], sorted(deps))' "$REPO/pyproject.toml" | sha256sum | cut -c1-16)"
if [ "$(cat "$HOUSE/.key" 2>/dev/null)" != "$KEY" ]; then
  echo "[wheelhouse] building $HOUSE (once per dependency list)" >&2
  rm -rf "$HOUSE"
  mkdir -p "$HOUSE"
  "$PYTHON" -m pip wheel --quiet --disable-pip-version-check --wheel-dir "$HOUSE" "$WHEEL" \
    2> >(grep -v "is ignored: it is neither a file nor a directory" >&2)
  rm -f "$HOUSE"/relavium_lsp-*.whl  # the extension installs its own copy
  echo "$KEY" >"$HOUSE/.key"
fi
echo "$HOUSE"
