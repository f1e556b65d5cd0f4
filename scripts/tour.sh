#!/usr/bin/env bash
# The README's tour, run as written: every ```sh tour block of README.md, in order, in one bash session (curl + jq),
# against a fresh server. A request answered >= 400 fails the tour (curl runs with --fail-with-body), and so does any
# command that fails. So the README's examples are the test: change one there, and this runs the change.
#
#   scripts/tour.sh                 builds if needed, starts the product on a free port with a fresh data directory
#                                   and an ADMIN account, runs the tour, stops the server (CI runs this)
#   TOUR_BASE=http://localhost:4000 ADMIN_EMAIL=… ADMIN_PASSWORD=… DATA_DIR=… scripts/tour.sh
#                                   runs the tour against a server already running (a fresh one: the tour signs up
#                                   ada@example.com and grace@example.com)
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
command -v jq >/dev/null || { echo "the tour needs jq (apt-get install jq, brew install jq)" >&2; exit 1; }

WORK=$(mktemp -d /tmp/users-posts-tour.XXXXXX)
SERVER_PID=
cleanup() {
  if [ -n "$SERVER_PID" ]; then kill "$SERVER_PID" 2>/dev/null && wait "$SERVER_PID" 2>/dev/null; fi
  rm -rf "$WORK"
}
trap cleanup EXIT

if [ -z "${TOUR_BASE:-}" ]; then
  [ -f "$ROOT/apps/api/dist/main.js" ] || (cd "$ROOT" && pnpm build >/dev/null)
  PORT=$(node -e "const s=require('net').createServer().listen(0,'127.0.0.1',()=>{console.log(s.address().port);s.close()})")
  export DATA_DIR="$WORK/data" ADMIN_EMAIL=admin@example.com ADMIN_PASSWORD='tour admin password'
  (cd "$ROOT" && PORT=$PORT HOST=127.0.0.1 LOG_LEVEL=warn MIGRATE_ON_START=true exec node apps/api/dist/main.js) &
  SERVER_PID=$!
  TOUR_BASE="http://127.0.0.1:$PORT"
  started=$SECONDS
  until curl -sf "$TOUR_BASE/readyz" >/dev/null; do
    kill -0 "$SERVER_PID" 2>/dev/null || { echo "tour: the server exited before it was ready" >&2; exit 1; }
    [ $((SECONDS - started)) -lt 60 ] || { echo "tour: the server was not ready within 60 s" >&2; exit 1; }
    sleep 0.2
  done
fi
: "${ADMIN_EMAIL:?set ADMIN_EMAIL and ADMIN_PASSWORD to the ADMIN account the server was started with}"
: "${ADMIN_PASSWORD:?set ADMIN_EMAIL and ADMIN_PASSWORD to the ADMIN account the server was started with}"
export ADMIN_EMAIL ADMIN_PASSWORD DATA_DIR="${DATA_DIR:-$ROOT/.data}"

# The ```sh tour blocks, the README's `localhost:4000` pointed at this server.
HOSTPORT=${TOUR_BASE#http://}
awk '/^```sh tour/ { on = 1; next } /^```/ { if (on) print ""; on = 0; next } on' "$ROOT/README.md" |
  sed "s#localhost:4000#$HOSTPORT#g" >"$WORK/tour.sh"
[ -s "$WORK/tour.sh" ] || { echo "tour: README.md has no \`\`\`sh tour blocks" >&2; exit 1; }

cd "$WORK"
# Each command is shown as it runs; curl (first on PATH here) fails on an HTTP error, shows the body it got, and ends
# each answer with a newline.
mkdir bin
printf '#!/bin/sh\nexec %s --fail-with-body --no-progress-meter -w "\\n" "$@"\n' "$(command -v curl)" >bin/curl
chmod +x bin/curl
PATH="$WORK/bin:$PATH" bash -euo pipefail -c 'set -x; source ./tour.sh' 2>&1 | sed -e 's/^+ /$ /'
echo "tour: every README example ran against $TOUR_BASE"
