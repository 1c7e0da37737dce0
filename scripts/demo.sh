#!/usr/bin/env bash
# README's first command: set up a fresh machine, build, and run the main job on the embedded default.
# No network, no API key.
source "$(dirname "$0")/lib.sh"
setup
log "building webfreeze"
cargo build -q --bin webfreeze --bin walkthrough 2>/dev/null || cargo build -q -p webfreeze -p xtask
exec bash "$ROOT/scripts/walkthrough.sh" "$@"
