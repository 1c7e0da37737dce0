#!/usr/bin/env bash
# README's first command: set up a fresh machine, build, and run the main job on the embedded default:
# `webfreeze demo` (bundled demo sites, no network, no API key): record the demo tasks live, let the sites
# drift, run them live again and replay the recording, evaluate both, compare, write the HTML reports.
# Arguments go to `webfreeze demo` (e.g. --dir DIR, --drift-days N).
source "$(dirname "$0")/lib.sh"
setup
log "building webfreeze"
cargo build -q --bin webfreeze
WF="${CARGO_TARGET_DIR:-$ROOT/target}/debug/webfreeze"
# The demo keeps its own CA and store unless WEBFREEZE_HOME says otherwise.
export WEBFREEZE_HOME="${WEBFREEZE_HOME:-$ROOT/webfreeze-demo/home}"
log "running: webfreeze demo $*"
exec "$WF" demo "$@"
