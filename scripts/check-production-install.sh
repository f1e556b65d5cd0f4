#!/usr/bin/env bash
# Proves the production path: the built repository, copied, `pnpm install --prod` (offline, frozen), then the
# production start (`pnpm start:prod`) answers /readyz and /docs on PGlite and, with DATABASE_URL (or $1), on PostgreSQL.
# Usage: scripts/check-production-install.sh [postgres://…]   (run `pnpm build` first; CI does it here).
set -euo pipefail
cd "$(dirname "$0")/.."
DATABASE_URL=${1:-${DATABASE_URL:-}}
PORT=${CHECK_PORT:-4890}

[ -f apps/api/dist/main.js ] || { echo "no apps/api/dist/main.js: run pnpm build first" >&2; exit 1; }
WORK=$(mktemp -d /tmp/users-posts-prod.XXXXXX)
SERVER_PID=
cleanup() {
  [ -n "$SERVER_PID" ] && kill "$SERVER_PID" 2>/dev/null && wait "$SERVER_PID" 2>/dev/null
  rm -rf "$WORK"
}
trap cleanup EXIT

# The checkout as a user would deploy it: sources, the build, no node_modules, no data, no git history.
tar --exclude=node_modules --exclude=./.git --exclude=./.data --exclude=./coverage --exclude=./bench/results \
  -cf - . | tar -xf - -C "$WORK"
(cd "$WORK" && pnpm install --prod --offline --frozen-lockfile)
[ ! -e "$WORK/node_modules/prisma" ] || { echo "a devDependency (prisma) was installed by --prod" >&2; exit 1; }

# start_and_probe <label> [DATABASE_URL]: production start, wait for a 200 from /readyz (30 s), stop with SIGTERM.
start_and_probe() {
  local label=$1 url=${2:-}
  (cd "$WORK" && DATABASE_URL="$url" MIGRATE_ON_START=true PORT=$PORT HOST=127.0.0.1 LOG_LEVEL=warn \
    DATA_DIR="$WORK/.data" exec node apps/api/dist/main.js) &
  SERVER_PID=$!
  local started=$SECONDS
  until curl -sf "http://127.0.0.1:$PORT/readyz" >/dev/null; do
    kill -0 "$SERVER_PID" 2>/dev/null || { echo "$label: the production start exited" >&2; exit 1; }
    [ $((SECONDS - started)) -lt 30 ] || { echo "$label: not ready within 30 s" >&2; exit 1; }
    sleep 0.1
  done
  # /docs from the build's copy of Swagger UI's assets (scripts/build.mjs bundles the plugin, not its files).
  for asset in /docs/ /docs/static/swagger-ui-bundle.js /docs/static/logo.svg; do
    curl -sf "http://127.0.0.1:$PORT$asset" -o /dev/null || { echo "$label: GET $asset failed on the production start" >&2; exit 1; }
  done
  # The files route that baseDir adds serves that folder only: a path out of it is refused, never the build's own files.
  for escape in '/docs/..%2fserver.js' '/docs/%2e%2e/openapi.json' '/docs/static/..%2f..%2fpackage.json'; do
    status=$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$PORT$escape")
    case $status in 403 | 404) ;; *) echo "$label: GET $escape answered $status, not 403/404" >&2; exit 1 ;; esac
  done
  kill "$SERVER_PID"
  wait "$SERVER_PID" || { echo "$label: exit code $? after SIGTERM" >&2; exit 1; }
  SERVER_PID=
  echo "production install: ready on $label"
}

start_and_probe PGlite
if [ -n "$DATABASE_URL" ]; then start_and_probe PostgreSQL "$DATABASE_URL"; fi
