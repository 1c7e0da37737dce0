#!/usr/bin/env bash
# Build the Python package: one platform wheel holding the release `webfreeze` binary and the pure-Python
# wrapper (maturin, bindings = "bin", like uv and ruff), and an sdist that builds wherever Rust is. The
# version is the crate's. Output: dist/ (or $1).
#
#   bash scripts/wheel.sh            # release wheel + sdist into dist/
#   WHEEL_PROFILE=dev bash scripts/wheel.sh /tmp/dist   # the test build's profile (what scripts/test.sh does)
source "$(dirname "$0")/lib.sh"
setup
out="${1:-$ROOT/dist}"
profile="${WHEEL_PROFILE:-release}"
tools="$(python_tools)"
mkdir -p "$out"
log "maturin build --profile $profile (wheel into $out)"
(cd python && "$tools/bin/maturin" build -q --profile "$profile" --out "$out")
if [ "$profile" = release ]; then
    log "maturin sdist (into $out)"
    (cd python && "$tools/bin/maturin" sdist --out "$out")
fi
ls -l "$out"/webfreeze-* >&2
