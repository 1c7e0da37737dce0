#!/usr/bin/env bash
# README's first command: set up a fresh machine, build, and run the main job on the embedded default:
# a walk-through with a local origin (no network, no API key).
source "$(dirname "$0")/lib.sh"
setup
log "building webfreeze"
cargo build -q --bin webfreeze
exec bash "$ROOT/scripts/walkthrough.sh" "$@"
