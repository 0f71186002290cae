#!/usr/bin/env bash
# Build everything a user installs into dist/, all of one version (relavium_lsp/__init__.py):
#
#   relavium_lsp-VERSION.tar.gz, relavium_lsp-VERSION-py3-none-any.whl
#       the Python package (`python -m build`: the wheel is built from the sdist, so a file
#       missing from the sdist fails here);
#   relavium-VERSION.vsix
#       the VS Code extension, carrying that wheel (scripts/package-vsix.sh);
#   relavium-nvim-VERSION.tar.gz
#       the Neovim plugin for an install without git (unpack it into
#       ~/.local/share/nvim/site/pack/relavium/start/), carrying that wheel in server/, which
#       its build step (:RelaviumInstall) installs.
#
# Usage: scripts/dist.sh   (from `make dist`; PYTHON is the venv's python)
set -euo pipefail

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
PYTHON="${PYTHON:-$REPO/.venv/bin/python}"
DIST="$REPO/dist"
cd "$REPO"

VERSION="$("$PYTHON" -c 'import relavium_lsp; print(relavium_lsp.__version__)')"
rm -rf "$DIST"
mkdir -p "$DIST"

"$PYTHON" -m build --outdir "$DIST" . >"$DIST/.build.log" 2>&1 || {
  tail -n 30 "$DIST/.build.log" >&2
  exit 1
}
rm -f "$DIST/.build.log"
WHEEL="$DIST/relavium_lsp-$VERSION-py3-none-any.whl"
test -f "$WHEEL" || { echo "dist.sh: $WHEEL was not built" >&2; exit 1; }

PYTHON="$PYTHON" bash scripts/package-vsix.sh "$DIST/relavium-$VERSION.vsix" >/dev/null

# The Neovim archive: the plugin's runtime files and build step, and the server's wheel.
STAGE="$(mktemp -d)"
trap 'rm -rf "$STAGE"' EXIT
PLUGIN="$STAGE/relavium-nvim"
mkdir -p "$PLUGIN/server" "$PLUGIN/doc"
cp -R lua plugin build.lua LICENSE "$PLUGIN/"
cp doc/relavium.txt "$PLUGIN/doc/"
cp "$WHEEL" "$PLUGIN/server/"
tar -C "$STAGE" --sort=name --owner=0 --group=0 --numeric-owner \
  -czf "$DIST/relavium-nvim-$VERSION.tar.gz" relavium-nvim

ls -1 "$DIST"
