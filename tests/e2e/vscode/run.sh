#!/usr/bin/env bash
# The VS Code end-to-end test: install the cached e2e dependencies, package the extension
# with its server wheel (scripts/package-vsix.sh), then drive code-server in headless Chromium.
# Screenshots land in test-artifacts/vscode/.
#
#   tests/e2e/vscode/run.sh           full scenario against .venv/bin/relavium-lsp serve, then
#                                     install.mjs: a fresh profile installs the bundled server
#   tests/e2e/vscode/run.sh --smoke   workbench + view + "server not running" state only
set -euo pipefail

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)"
SERVER="$REPO/.venv/bin/relavium-lsp"
if [[ " $* " != *" --smoke "* ]] && ! "$SERVER" serve --help >/dev/null 2>&1; then
  echo "run.sh: $SERVER serve is not available (run 'make setup'), or use --smoke" >&2
  exit 1
fi
CACHE="$(bash "$REPO/scripts/install-e2e-deps.sh" | tail -n 1)"
NODE24="$CACHE/node24/node_modules/.bin/node"
ARTIFACTS="$REPO/test-artifacts/vscode"

VSIX="$(bash "$REPO/scripts/package-vsix.sh" "$REPO/vscode-client/relavium.vsix" | tail -n 1)"

rm -rf "$ARTIFACTS"
mkdir -p "$ARTIFACTS"
"$NODE24" --test-reporter=spec "$REPO/tests/e2e/vscode/e2e.mjs" \
  --cache "$CACHE" \
  --vsix "$VSIX" \
  --artifacts "$ARTIFACTS" \
  --server-command "$SERVER" \
  --screenshots "$REPO/docs/screenshots" \
  "$@"
if [[ " $* " != *" --smoke "* ]]; then
  WHEELHOUSE="$(bash "$REPO/tests/e2e/vscode/wheelhouse.sh" "$REPO"/vscode-client/server/relavium_lsp-*.whl | tail -n 1)"
  "$NODE24" --test-reporter=spec "$REPO/tests/e2e/vscode/install.mjs" \
    --cache "$CACHE" \
    --vsix "$VSIX" \
    --artifacts "$ARTIFACTS" \
    --wheelhouse "$WHEELHOUSE"
fi
