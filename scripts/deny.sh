#!/usr/bin/env bash
# Audit the dependency graph with cargo-deny (deny.toml says what is allowed and why each exception is):
# bans (including the crates removed for RustSec advisories, so they cannot come back), licenses, sources,
# and the RustSec advisories when a copy of the advisory database is at hand.
#
#   bash scripts/deny.sh                       bans, licenses, sources; advisories if WEBFREEZE_ADVISORY_DB is set
#   WEBFREEZE_ADVISORY_DB=DIR bash scripts/deny.sh
#                                              DIR: a git checkout or bare copy of
#                                              https://github.com/rustsec/advisory-db (never fetched by this
#                                              script; refused when over a year old)
#
# The advisory database lives on GitHub, which this project's machines cannot reach, and is published nowhere
# they can (crates.io, PyPI, npm, Debian). Without WEBFREEZE_ADVISORY_DB the advisories check does not run and
# the script says so on its last line; the bans in deny.toml keep out every crate an audit removed.
source "$(dirname "$0")/lib.sh"
setup
deny_bin="$(cargo_tool cargo-deny 0.20.2)"
export PATH="$deny_bin:$PATH"
checks=(bans licenses sources)
root="$(mktemp -d)"
trap 'rm -rf "$root"' EXIT
# deny.toml's db-path; cargo-deny looks for the database in a directory named after its URL's hash.
export WEBFREEZE_ADVISORY_DB_ROOT="$root"
if [ -n "${WEBFREEZE_ADVISORY_DB:-}" ]; then
    db="$WEBFREEZE_ADVISORY_DB"
    # A bare copy (a mirror, as a snapshot of the repository arrives) is checked out locally first.
    if [ "$(git -C "$db" rev-parse --is-bare-repository 2>/dev/null)" = true ]; then
        git clone -q "$db" "$root/checkout" || { echo "scripts/deny.sh: cannot check out the bare repository $db" >&2; exit 2; }
        db="$root/checkout"
    fi
    if ! git -C "$db" rev-parse --verify -q HEAD >/dev/null || [ ! -d "$db/crates" ]; then
        echo "scripts/deny.sh: WEBFREEZE_ADVISORY_DB=$WEBFREEZE_ADVISORY_DB is not a git copy of rustsec/advisory-db (no crates/ directory)" >&2
        exit 2
    fi
    ln -s "$(cd "$db" && pwd)" "$root/advisory-db-3157b0e258782691"
    checks+=(advisories)
    log "RustSec advisory database: $WEBFREEZE_ADVISORY_DB, last commit $(git -C "$db" log -1 --format=%cs)"
fi
# cargo-deny runs offline (it must never fetch the advisory database): the crates of every platform in the
# lock file are fetched first, from crates.io, for its `cargo metadata`.
cargo fetch --locked -q
log "cargo deny check ${checks[*]}"
status=0
cargo deny --offline check --hide-inclusion-graph "${checks[@]}" || status=$?
if [ -z "${WEBFREEZE_ADVISORY_DB:-}" ]; then
    echo "cargo deny: advisories NOT checked (no RustSec database here; set WEBFREEZE_ADVISORY_DB to a checkout or bare copy of github.com/rustsec/advisory-db)"
fi
exit "$status"
