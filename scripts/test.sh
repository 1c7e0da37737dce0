#!/usr/bin/env bash
# README's second command: set up a fresh machine and run every check CI runs: formatting, clippy with
# warnings as errors, and the whole test suite (unit, store, proxy, record/replay, Chromium end to end).
source "$(dirname "$0")/lib.sh"
# The sharding test runs a real single-node Slurm cluster (slurmctld, slurmd, munged) on localhost.
PACKAGES+=(slurm-wlm munge)
setup
log "cargo fmt --check"
cargo fmt --all -- --check
log "cargo clippy -D warnings"
cargo clippy --workspace --all-targets -q -- -D warnings
log "cargo test"
out="$(mktemp)"
set +e
cargo test --workspace -- --test-threads "${WEBFREEZE_TEST_THREADS:-2}" 2>&1 | tee "$out"
status=${PIPESTATUS[0]}
set -e
# One closing line over every test binary (cargo prints one result line per binary, the last often a
# doc-test run with 0 tests).
awk '/^test result:/ { for (i = 1; i <= NF; i++) { if ($(i) ~ /^passed;?$/) p += $(i-1); if ($(i) ~ /^failed;?$/) f += $(i-1) } }
     END { printf "total: %d passed, %d failed\n", p, f }' "$out"
rm -f "$out"
exit "$status"
