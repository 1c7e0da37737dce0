#!/usr/bin/env bash
# README's second command: set up a fresh machine and run every check CI runs: formatting, clippy with
# warnings as errors, and the whole test suite (unit, store, proxy, record/replay, Chromium end to end).
source "$(dirname "$0")/lib.sh"
setup
log "cargo fmt --check"
cargo fmt --all -- --check
log "cargo clippy -D warnings"
cargo clippy --workspace --all-targets -q -- -D warnings
log "cargo test"
cargo test --workspace -- --test-threads "${WEBFREEZE_TEST_THREADS:-2}"
