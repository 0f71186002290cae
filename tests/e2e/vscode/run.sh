#!/usr/bin/env bash
# The VS Code end-to-end test: install the cached e2e dependencies, package the extension,
# then drive code-server in headless Chromium. Screenshots land in test-artifacts/vscode/.
#
#   tests/e2e/vscode/run.sh           full scenario against .venv/bin/relavium-lsp serve
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

(
  cd "$REPO/vscode-client"
  npm ci --prefer-offline --no-audit --no-fund --loglevel=error
  npm run --silent package >/dev/null
)

rm -rf "$ARTIFACTS"
mkdir -p "$ARTIFACTS"
exec "$NODE24" --test-reporter=spec "$REPO/tests/e2e/vscode/e2e.mjs" \
  --cache "$CACHE" \
  --vsix "$REPO/vscode-client/relavium.vsix" \
  --artifacts "$ARTIFACTS" \
  --server-command "$SERVER" \
  --screenshots "$REPO/docs/screenshots" \
  "$@"
