#!/usr/bin/env bash
# The README's tour, run as written: every ```sh tour block of README.md, then of docs/api-consumers.md, in order, in one bash session (curl + jq),
# from a directory of its own, against a fresh server on a free port (BASE). A request answered >= 400 fails the tour (curl runs with --fail-with-body), and so does any
# command that fails. So the README's examples are the test: change one there, and this runs the change.
#
#   scripts/tour.sh                 builds if needed, starts the product on a free port with a fresh data directory
#                                   and an ADMIN account, runs the tour, stops the server (CI runs this)
#   TOUR_BASE=http://localhost:4000 ADMIN_EMAIL=… ADMIN_PASSWORD=… DATA_DIR=… scripts/tour.sh
#                                   runs the tour against a server already running (a fresh one: the tour signs up
#                                   ada@example.com and grace@example.com)
#   TOUR_PRISM=1 scripts/tour.sh    also sends the REST and auth requests through Stoplight Prism as a validating
#                                   proxy (openapi/openapi.yaml), and fails on any contract violation it reports
#                                   (CI runs this). One kind is expected and allowed: the session cookie, the API key
#                                   and the signed request are accepted by the server but not listed in `security`
#                                   (which names the bearer token only, for generated clients), so Prism calls them
#                                   "Invalid security scheme used".
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
command -v jq >/dev/null || { echo "the tour needs jq (apt-get install jq, brew install jq)" >&2; exit 1; }

WORK=$(mktemp -d /tmp/users-posts-tour.XXXXXX)
SERVER_PID=
PRISM_PID=
SMTP_PID=
cleanup() {
  if [ -n "$PRISM_PID" ]; then kill "$PRISM_PID" 2>/dev/null; wait "$PRISM_PID" 2>/dev/null || true; fi
  if [ -n "$SMTP_PID" ]; then kill "$SMTP_PID" 2>/dev/null; wait "$SMTP_PID" 2>/dev/null || true; fi
  if [ -n "$SERVER_PID" ]; then kill "$SERVER_PID" 2>/dev/null; wait "$SERVER_PID" 2>/dev/null || true; fi
  rm -rf "$WORK"
}
free_port() { node -e "const s=require('net').createServer().listen(0,'127.0.0.1',()=>{console.log(s.address().port);s.close()})"; }
trap cleanup EXIT

if [ -z "${TOUR_BASE:-}" ]; then
  [ -f "$ROOT/apps/api/dist/main.js" ] || (cd "$ROOT" && pnpm build >/dev/null)
  PORT=$(free_port)
  export DATA_DIR="$WORK/data" ADMIN_EMAIL=admin@example.com ADMIN_PASSWORD='tour admin password'
  # Mail goes over real SMTP to a sink that files each message where the README reads it (<DATA_DIR>/outbox).
  mkfifo "$WORK/smtp-port"
  node "$ROOT/scripts/smtp-sink.mjs" "$DATA_DIR/outbox" >"$WORK/smtp-port" &
  SMTP_PID=$!
  read -r SMTP_PORT <"$WORK/smtp-port"
  (cd "$ROOT" && SMTP_URL="smtp://127.0.0.1:$SMTP_PORT" PORT=$PORT HOST=127.0.0.1 LOG_LEVEL=warn MIGRATE_ON_START=true GRAPHQL_PERSISTED_DOCUMENTS=packages/client/persisted-documents.json exec node apps/api/dist/main.js) &
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

if [ -n "${TOUR_PRISM:-}" ]; then
  PRISM_PORT=$(free_port)
  "$ROOT/node_modules/.bin/prism" proxy "$ROOT/openapi/openapi.yaml" "$TOUR_BASE" --host 127.0.0.1 --port "$PRISM_PORT" >"$WORK/prism.log" 2>&1 &
  PRISM_PID=$!
  started=$SECONDS
  until curl -s -o /dev/null "http://127.0.0.1:$PRISM_PORT/healthz"; do
    kill -0 "$PRISM_PID" 2>/dev/null || { cat "$WORK/prism.log" >&2; echo "tour: Prism exited" >&2; exit 1; }
    [ $((SECONDS - started)) -lt 60 ] || { echo "tour: Prism did not listen within 60 s" >&2; exit 1; }
    sleep 0.2
  done
  TOUR_PROXY="http://127.0.0.1:$PRISM_PORT"
fi

# The ```sh tour blocks as written: they read the server's address from BASE (set here, so their own
# `BASE=${BASE:-http://localhost:4000}` keeps it) and run from a directory of their own.
awk '/^```sh tour/ { on = 1; next } /^```/ { if (on) print ""; on = 0; next } on' "$ROOT/README.md" "$ROOT/docs/api-consumers.md" >"$WORK/tour.sh"
[ -s "$WORK/tour.sh" ] || { echo "tour: README.md has no \`\`\`sh tour blocks" >&2; exit 1; }
if grep -n 'localhost:4000' "$WORK/tour.sh" | grep -v '^[0-9]*:BASE=' >&2; then echo "tour: an example names localhost:4000 instead of \$BASE (above)" >&2; exit 1; fi
export BASE=$TOUR_BASE TOUR_BASE TOUR_PROXY=${TOUR_PROXY:-}

cd "$WORK"
# One example reads a file of the repository (the client's persisted-document manifest), as from its root.
ln -s "$ROOT/packages" packages
# Each command is shown as it runs; curl (first on PATH here) fails on an HTTP error, shows the body it got, and ends
# each answer with a newline.
# With TOUR_PROXY, the REST and auth requests go to that proxy instead (a contract-validating one: /graphql is not in
# the OpenAPI contract): the wrapper changes where a URL points, never what the example wrote.
mkdir bin
cat >bin/curl <<WRAPPER
#!/usr/bin/env bash
args=()
for arg in "\$@"; do
  if [ -n "\$TOUR_PROXY" ] && [[ \$arg == "\$TOUR_BASE/"* && \$arg != "\$TOUR_BASE/graphql"* ]]; then arg="\$TOUR_PROXY\${arg#"\$TOUR_BASE"}"; fi
  args+=("\$arg")
done
exec $(command -v curl) --fail-with-body --no-progress-meter -w '\n' "\${args[@]}"
WRAPPER
chmod +x bin/curl
PATH="$WORK/bin:$PATH" bash -euo pipefail -c 'set -x; source ./tour.sh' 2>&1 | sed -e 's/^+ /$ /'
if [ -n "${TOUR_PRISM:-}" ]; then
  violations=$(grep -E 'Violation:|✖' "$WORK/prism.log" | grep -v 'Violation: request Invalid security scheme used' || true)
  if [ -n "$violations" ]; then
    echo "tour: Prism reported contract violations:" >&2
    echo "$violations" >&2
    exit 1
  fi
  forwarded=$(grep -c 'Forwarding' "$WORK/prism.log" || true)
  # None forwarded would mean the examples went around Prism (and nothing was validated): a failure, not a pass.
  [ "$forwarded" -gt 0 ] || { echo "tour: no request went through Prism: nothing was validated" >&2; exit 1; }
  echo "tour: Prism validated $forwarded REST and auth requests against openapi/openapi.yaml: no violation"
fi
echo "tour: every README example ran against $TOUR_BASE"
