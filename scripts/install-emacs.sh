#!/usr/bin/env bash
# Make Emacs with eglot available for the plain-LSP-client end-to-end test
# (tests/e2e/test_emacs_eglot.py): Debian's `emacs-nox` (28) and `elpa-eglot` (1.9), installed
# with apt-get when missing. When both are there it only checks, so running it again costs
# two dpkg look-ups; apt-get's own lock makes two runs at once wait for each other.
#
# Usage: scripts/install-emacs.sh   (prints the Emacs version last)
set -euo pipefail

PACKAGES=(emacs-nox elpa-eglot)

log() { printf '[install-emacs] %s\n' "$*" >&2; }

missing=()
for package in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" \
    || missing+=("$package")
done
if [ "${#missing[@]}" -gt 0 ]; then
  sudo=()
  if [ "$(id -u)" -ne 0 ]; then
    sudo=(sudo)
  fi
  log "apt-get install ${missing[*]}"
  apt_log="$(mktemp)"
  if ! { "${sudo[@]}" apt-get update -qq \
    && DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -qq \
      -o DPkg::Lock::Timeout=600 --no-install-recommends "${missing[@]}"; } >"$apt_log" 2>&1
  then
    tail -n 30 "$apt_log" >&2
    rm -f "$apt_log"
    log "apt-get failed"
    exit 1
  fi
  rm -f "$apt_log"
fi

emacs --version | head -n 1
