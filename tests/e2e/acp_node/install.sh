#!/usr/bin/env bash
# Install the ACP client SDKs the Node clients here use (package-lock.json pins them) into
# ./node_modules. Idempotent and cheap once done: a stamp holds the lockfile's hash, and a
# matching stamp skips npm entirely (so it also works offline after the first install).
# Two concurrent runs are serialised with flock; the install goes to a temporary folder that
# replaces node_modules only when complete.
#
# Usage: tests/e2e/acp_node/install.sh   (prints the node_modules path last)
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
STAMP="$HERE/node_modules/.relavium-lock-hash"
want="$(sha256sum "$HERE/package-lock.json" | cut -d' ' -f1)"

installed() { [ -f "$STAMP" ] && [ "$(cat "$STAMP")" = "$want" ]; }

if ! installed; then
  exec 9>"$HERE/.install.lock"
  flock 9
  if ! installed; then
    work="$(mktemp -d "$HERE/.install.XXXXXX")"
    trap 'rm -rf "$work"' EXIT
    cp "$HERE/package.json" "$HERE/package-lock.json" "$work/"
    (cd "$work" && npm ci --prefer-offline --no-audit --no-fund --loglevel=error >&2)
    echo "$want" >"$work/node_modules/.relavium-lock-hash"
    rm -rf "$HERE/node_modules"
    mv "$work/node_modules" "$HERE/node_modules"
  fi
fi
echo "$HERE/node_modules"
