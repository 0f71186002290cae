#!/usr/bin/env bash
# Install what `make dist` built as a user would and use it: a fresh virtualenv and a fresh
# HOME in a temporary directory, the repository on no path (not the working directory, no
# PYTHONPATH), only the wheel from dist/ (its dependencies come from the package index or
# pip's cache). Then `relavium-lsp --version`, `doctor` and the whole offline `demo`, and a
# look inside the archives that carry the same wheel (the Neovim one and the VSIX).
#
# Usage: scripts/smoke-dist.sh   (from `make smoke-dist`, after `make dist`)
set -euo pipefail

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
DIST="$REPO/dist"
BASE_PYTHON="${BASE_PYTHON:-python3}"
START=$SECONDS

fail() {
  echo "smoke-dist: $*" >&2
  exit 1
}
WHEELS=("$DIST"/relavium_lsp-*-py3-none-any.whl)
[ "${#WHEELS[@]}" -eq 1 ] && [ -f "${WHEELS[0]}" ] || fail "expected one wheel in $DIST (make dist)"
WHEEL="${WHEELS[0]}"
VERSION="$(basename "$WHEEL" | cut -d- -f2)"

WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT
mkdir "$WORK/home"
PIP_CACHE="$("$BASE_PYTHON" -m pip cache dir 2>/dev/null || true)"
# A user's environment: nothing from this shell but PATH's system part and pip's cache.
user() {
  (cd "$WORK" && env -i HOME="$WORK/home" PATH="$WORK/venv/bin:/usr/bin:/bin" LANG=C.UTF-8 \
    ${PIP_CACHE:+PIP_CACHE_DIR="$PIP_CACHE"} "$@")
}

"$BASE_PYTHON" -m venv "$WORK/venv"
user pip install --quiet --disable-pip-version-check "$WHEEL" >"$WORK/pip.log" 2>&1 || {
  tail -n 30 "$WORK/pip.log" >&2
  fail "pip install $WHEEL failed"
}
installed_from="$(user python -c 'import relavium_lsp; print(relavium_lsp.__file__)')"
[[ "$installed_from" == "$WORK/venv/"* ]] || fail "relavium_lsp was imported from $installed_from"

reported="$(user relavium-lsp --version)"
[ "$reported" = "relavium-lsp $VERSION" ] || fail "--version says '$reported', the wheel is $VERSION"

user relavium-lsp doctor >"$WORK/doctor.txt" 2>&1 || {
  cat "$WORK/doctor.txt" >&2
  fail "relavium-lsp doctor found a problem"
}
grep -q "relavium-lsp $VERSION" "$WORK/doctor.txt" || fail "doctor does not name relavium-lsp $VERSION"

user relavium-lsp demo >"$WORK/demo.txt" 2>&1 || {
  tail -n 40 "$WORK/demo.txt" >&2
  fail "relavium-lsp demo failed"
}

NVIM_ARCHIVE="$DIST/relavium-nvim-$VERSION.tar.gz"
listing="$(tar tzf "$NVIM_ARCHIVE")" || fail "cannot read $NVIM_ARCHIVE"
for member in build.lua plugin/relavium.lua lua/relavium/init.lua doc/relavium.txt LICENSE \
  "server/$(basename "$WHEEL")"; do
  grep -qx "relavium-nvim/$member" <<<"$listing" || fail "$NVIM_ARCHIVE lacks $member"
done
VSIX="$DIST/relavium-$VERSION.vsix"
[ -f "$VSIX" ] || fail "$VSIX is missing"
vsix_listing="$("$BASE_PYTHON" -m zipfile -l "$VSIX")" || fail "cannot read $VSIX"
grep -q "extension/server/$(basename "$WHEEL") " <<<"$vsix_listing" \
  || fail "$VSIX does not carry $(basename "$WHEEL")"

echo "smoke-dist: relavium-lsp $VERSION from dist/ installed in a fresh venv and HOME:" \
  "--version, doctor and demo pass ($((SECONDS - START)) s)"
