#!/usr/bin/env bash
# Make `nvim` available for the Neovim plugin's end-to-end tests (tests/e2e/neovim/).
# Installs Debian's `neovim` package with apt-get when `nvim` is not on PATH; otherwise it only
# checks. Either way the last line printed is the version (`NVIM v0.7.2`, …), so running it
# again costs one `command -v`.
#
# Usage: scripts/install-neovim.sh
set -euo pipefail

log() { printf '[install-neovim] %s\n' "$*" >&2; }

if ! command -v nvim >/dev/null 2>&1; then
  sudo=()
  if [ "$(id -u)" -ne 0 ]; then
    sudo=(sudo)
  fi
  log "nvim not found: apt-get install neovim"
  apt_log="$(mktemp)"
  if ! { "${sudo[@]}" apt-get update -qq \
    && DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -qq \
      --no-install-recommends neovim; } >"$apt_log" 2>&1; then
    tail -n 30 "$apt_log" >&2
    rm -f "$apt_log"
    log "apt-get failed"
    exit 1
  fi
  rm -f "$apt_log"
  if ! command -v nvim >/dev/null 2>&1; then
    log "neovim is installed but nvim is still not on PATH"
    exit 1
  fi
fi

nvim --version | head -n 1
