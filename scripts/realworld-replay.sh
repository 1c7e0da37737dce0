#!/usr/bin/env bash
# Real-world check (issue 4): import each HAR of a directory, load its first HTML page in headless
# Chromium through `webfreeze replay`, and print per file: requests the browser made, served exact /
# normalised / fuzzy, missed. Usage: scripts/realworld-replay.sh DIR_OF_HARS [webfreeze binary]
set -euo pipefail
DIR="${1:?usage: realworld-replay.sh DIR_OF_HARS [WEBFREEZE_BIN]}"
WF="${2:-${CARGO_TARGET_DIR:-target}/debug/webfreeze}"
WORK="$(mktemp -d -t webfreeze-realworld-XXXXXX)"
export WEBFREEZE_HOME="$WORK/home"
"$WF" ca init >/dev/null
SPKI="$("$WF" ca show --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["spki_sha256"])')"
printf "%-46s %-44s %6s %6s %6s %6s %7s %6s %6s %5s\n" file first-page requests exact norm fuzzy no-body icon missed bg
for har in "$DIR"/*.har; do
    name="$(basename "$har" .har)"
    first="$(python3 - "$har" <<'PY'
import json, sys
d = json.load(open(sys.argv[1], encoding="utf-8-sig"))
for e in d["log"]["entries"]:
    r = e.get("response") or {}
    c = r.get("content") or {}
    if r.get("status") == 200 and "html" in (c.get("mimeType") or "") and c.get("text"):
        print(e["request"]["url"]); break
PY
)"
    [ -n "$first" ] || { printf "%-46s %s\n" "$name" "(no HTML page with a body: skipped)"; continue; }
    "$WF" snapshots import "$har" --snapshot "$name" >/dev/null
    out="$WORK/$name.out"
    "$WF" replay --snapshot "$name" --listen 127.0.0.1:0 --report "$WORK/$name.json" >"$out" 2>"$WORK/$name.log" &
    pid=$!
    for _ in $(seq 200); do grep -q "^listening on" "$out" 2>/dev/null && break; sleep 0.05; done
    addr="$(head -1 "$out" | sed 's/listening on //')"
    timeout 60 chromium --headless=new --no-sandbox --disable-gpu --disable-quic --no-first-run \
        --disable-background-networking --disable-component-update --disable-sync \
        --disable-features=NetworkTimeServiceQuerying --user-data-dir="$WORK/profile-$name" \
        --proxy-server="http://$addr" --proxy-bypass-list='<-loopback>' \
        --ignore-certificate-errors-spki-list="$SPKI" --virtual-time-budget=15000 \
        --dump-dom "$first" >"$WORK/$name.dom" 2>/dev/null || true
    kill -INT "$pid"; wait "$pid" || true
    python3 - "$WORK/$name.json" "$name" "$first" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
print("%-46s %-44s %6d %6d %6d %6d %7d %6d %6d %5d" % (sys.argv[2][:46], sys.argv[3][:44], r["requests"], r["exact"], r["normalised"], r["fuzzy"], r["without_body"], r["synthetic"], r["missed"], r["background"]))
for m in r["misses"][:8]:
    print("    miss:", m["method"], m["url"][:150])
for f in r["fuzzy_matches"][:4]:
    print("    fuzzy:", f["url"][:80], "->", f["recorded_url"][:80])
PY
done
echo "work dir: $WORK"
