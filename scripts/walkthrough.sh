#!/usr/bin/env bash
# A real walk-through of webfreeze, with no network: a local origin whose content changes, recorded through
# the proxy with curl, then replayed with the origin stopped; then the snapshot is verified, exported to
# HAR and imported back. Run by scripts/demo.sh (README's first command) after the build.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
TARGET="${CARGO_TARGET_DIR:-$ROOT/target}"
WF="$TARGET/debug/webfreeze"
[ -x "$WF" ] || { echo "build webfreeze first (scripts/demo.sh does)" >&2; exit 1; }

WORK="$(mktemp -d -t webfreeze-walkthrough-XXXXXX)"
export WEBFREEZE_HOME="$WORK/home"
PIDS=()
cleanup() { for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done; }
trap cleanup EXIT
step() { printf '\n\033[1;34m[%s] %s\033[0m\n' "$1" "$2"; }

# Start a background command; set ADDR from its "listening on ADDR" first line and LAST_PID.
start_listening() {
    local log="$1"; shift
    local out="$WORK/stdout.$RANDOM"
    "$@" >"$out" 2>"$log" &
    LAST_PID=$!
    PIDS+=("$LAST_PID")
    for _ in $(seq 400); do
        if grep -q '^listening on ' "$out" 2>/dev/null; then
            ADDR="$(head -1 "$out" | sed 's/^listening on //')"
            return 0
        fi
        kill -0 "$LAST_PID" 2>/dev/null || { echo "$* exited early:" >&2; cat "$log" >&2; exit 1; }
        sleep 0.05
    done
    echo "$* did not start listening" >&2; cat "$log" >&2; exit 1
}

step 1/7 "A local 'live' site whose content changes (python3 http.server on loopback)"
SITE="$WORK/site"; mkdir -p "$SITE"
write_site() {
    cat >"$SITE/index.html" <<HTML
<!doctype html><html><head><title>Walkthrough shop</title></head>
<body><h1>Price: $1</h1><script src="/app.js?_=$(date +%s%N | cut -c1-13)"></script></body></html>
HTML
    echo "{\"price\": \"$1\", \"served_at\": \"$(date -Iseconds)\"}" >"$SITE/price.json"
    echo "document.title += ' (js v$1)';" >"$SITE/app.js"
}
write_site "19.99 EUR"
ORIGIN_PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
python3 -m http.server "$ORIGIN_PORT" --bind 127.0.0.1 --directory "$SITE" >"$WORK/origin.log" 2>&1 &
ORIGIN_PID=$!; PIDS+=($ORIGIN_PID)
for _ in $(seq 100); do curl -s "http://127.0.0.1:$ORIGIN_PORT/" >/dev/null && break; sleep 0.1; done
URL="http://127.0.0.1:$ORIGIN_PORT"
echo "origin at $URL"

step 2/7 "Record: webfreeze record --snapshot walkthrough (curl goes through the proxy)"
start_listening "$WORK/record.log" "$WF" record --snapshot walkthrough --listen 127.0.0.1:0
REC="$ADDR"; REC_PID=$LAST_PID
echo "recorder listening on $REC"
curl -s --proxy "http://$REC" "$URL/" | grep -o 'Price: [^<]*'
curl -s --proxy "http://$REC" "$URL/price.json"; echo
curl -s --proxy "http://$REC" "$URL/app.js?_=1712345678901" >/dev/null
kill -INT "$REC_PID"; wait "$REC_PID" || true
tail -1 "$WORK/record.log"

step 3/7 "The snapshot in the store"
"$WF" snapshots list
"$WF" snapshots show walkthrough --limit 5

step 4/7 "The live site drifts, then goes away entirely"
write_site "24.50 EUR"
curl -s "$URL/price.json"; echo "  <- live now"
kill "$ORIGIN_PID"; wait "$ORIGIN_PID" 2>/dev/null || true
curl -s -m 2 "$URL/" >/dev/null && echo "origin still up?!" || echo "origin stopped"

step 5/7 "Replay with the origin gone: the recorded bytes come back (cache-buster ignored), a new URL is a clear 404"
start_listening "$WORK/replay.log" "$WF" replay --snapshot walkthrough --listen 127.0.0.1:0 --report "$WORK/report.json"
REP="$ADDR"; REP_PID=$LAST_PID
curl -s --proxy "http://$REP" "$URL/price.json"; echo "  <- replayed"
curl -s --proxy "http://$REP" "$URL/app.js?_=1799999999999"
curl -s --proxy "http://$REP" "$URL/never-recorded" || true
kill -INT "$REP_PID"; wait "$REP_PID" || true
grep -E "replay of|miss:" "$WORK/replay.log"

step 6/7 "Verify every stored body against its BLAKE3 hash"
"$WF" snapshots verify

step 7/7 "Export to HAR 1.2 and import it back"
"$WF" snapshots export walkthrough --format har --out "$WORK/walkthrough.har"
"$WF" snapshots import "$WORK/walkthrough.har" --snapshot walkthrough-from-har
"$WF" snapshots list

printf '\n\033[1mDone.\033[0m Store, CA and report are in %s (report: %s/report.json).\n' "$WEBFREEZE_HOME" "$WORK"
