#!/usr/bin/env bash
# Package the VS Code extension with the same-version server wheel inside it.
#
#   scripts/package-vsix.sh OUT.vsix
#
# Builds relavium_lsp-<version>-py3-none-any.whl from this checkout (pip wheel, in a temporary
# directory), copies it into vscode-client/server/ (git-ignored; .vscodeignore ships it), then
# `npm ci` + `npm run package`, and moves the VSIX to OUT.vsix. The extension installs that wheel
# into a private environment on request ("Install the Relavium server"). One version for all:
# relavium_lsp/__init__.py's __version__ must equal vscode-client/package.json's "version".
# Env: PYTHON (default: .venv/bin/python, else python3) builds the wheel.
set -euo pipefail

if [ "$#" -ne 1 ]; then
  echo "usage: $0 OUT.vsix" >&2
  exit 2
fi
REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
OUT="$(realpath -m "$1")"
PYTHON="${PYTHON:-$REPO/.venv/bin/python}"
[ -x "$PYTHON" ] || PYTHON="$(command -v python3)"

VERSION="$(sed -n 's/^__version__ = "\(.*\)"$/\1/p' "$REPO/relavium_lsp/__init__.py")"
EXTENSION_VERSION="$(sed -n 's/^  "version": "\(.*\)",$/\1/p' "$REPO/vscode-client/package.json" | head -n 1)"
if [ -z "$VERSION" ] || [ "$VERSION" != "$EXTENSION_VERSION" ]; then
  echo "package-vsix: the server is '$VERSION' but vscode-client/package.json says '$EXTENSION_VERSION'" >&2
  exit 1
fi

BUILD="$(mktemp -d)"
trap 'rm -rf "$BUILD"' EXIT
"$PYTHON" -m pip wheel --quiet --disable-pip-version-check --no-deps --wheel-dir "$BUILD" "$REPO" \
  2> >(grep -v "is ignored: it is neither a file nor a directory" >&2)
WHEEL="$BUILD/relavium_lsp-$VERSION-py3-none-any.whl"
if [ ! -f "$WHEEL" ]; then
  echo "package-vsix: building the wheel gave no $(basename "$WHEEL")" >&2
  exit 1
fi
rm -rf "$REPO/vscode-client/server"
mkdir -p "$REPO/vscode-client/server"
cp "$WHEEL" "$REPO/vscode-client/server/"

cd "$REPO/vscode-client"
npm ci --prefer-offline --no-audit --no-fund --loglevel=error
npm run --silent package >/dev/null
mkdir -p "$(dirname "$OUT")"
if [ "$(realpath -m relavium.vsix)" != "$OUT" ]; then
  mv relavium.vsix "$OUT"
fi
echo "$OUT"
