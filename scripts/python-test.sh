#!/usr/bin/env bash
# The Python package's checks (run by scripts/test.sh after the Rust suite; also alone):
# ruff and mypy on python/, then the wheel built with the test build's profile, installed into a fresh
# virtualenv beside the harness packages from PyPI (Playwright, browsergym-core and -experiments, Selenium, browser-use;
# cached after the first run, no browser download: Debian's Chromium and chromedriver), and pytest over
# python/tests against the demo sites. As root, pytest runs in a network namespace of its own that has only
# loopback, so nothing can leave the machine.
source "$(dirname "$0")/lib.sh"
PACKAGES+=(chromium-driver libnss3-tools iproute2 util-linux)
setup
tools="$(python_tools)"
log "ruff check python/"
"$tools/bin/ruff" check -q python
"$tools/bin/ruff" format --check -q python
log "mypy --strict python/src"
(cd python && "$tools/bin/mypy" --no-error-summary)

# Harness packages, pinned (tqdm: browsergym-experiments imports it without declaring it), installed once into a directory the fresh virtualenvs see through a .pth file.
HARNESS=(playwright==1.44.0 browsergym-core==0.14.3 browsergym-experiments==0.14.3 tqdm selenium==4.51.0 browser-use==0.13.14 requests pytest==9.2.0)
base="${WEBFREEZE_PYTHON:-python3}"
key="$(printf '%s\n' "${HARNESS[@]}" "$("$base" -c 'import sys; print(sys.version)')" | sha256sum | cut -c1-12)"
harness="${WEBFREEZE_BUILD_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/webfreeze-build}/py-harness-$key"
if [ ! -f "$harness/.installed" ]; then
    log "installing the harness packages (${HARNESS[*]}) into $harness (once)"
    rm -rf "$harness"
    "$base" -m venv "$harness"
    PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 "$harness/bin/pip" install -q --disable-pip-version-check "${HARNESS[@]}" >&2
    touch "$harness/.installed"
fi

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
# The sdist, what `pip install webfreeze-X.tar.gz` builds from: every crate the build needs (the patched h2
# under third_party/ too, which maturin packs only as a path dependency) and no build output. Checked by a
# size bound, its listing, and cargo resolving the unpacked workspace.
log "maturin sdist: contents, size, and the unpacked workspace resolving"
(cd python && "$tools/bin/maturin" sdist --out "$work/sdist") >/dev/null 2>&1
sdist="$(ls "$work"/sdist/webfreeze-*.tar.gz)"
size="$(stat -c %s "$sdist")"
if [ "$size" -gt $((5 * 1024 * 1024)) ]; then
    echo "the sdist is $size bytes (over 5 MiB); its largest top-level entries:" >&2
    tar tvzf "$sdist" | awk '{split($6, p, "/"); s[p[2]] += $3} END {for (k in s) print s[k], k}' | sort -rn | head >&2
    exit 1
fi
if tar tzf "$sdist" | grep -qE '^[^/]+/(target[^/]*|dist|webfreeze-demo|bench-out)/'; then
    echo "the sdist holds build output: $(tar tzf "$sdist" | grep -E '^[^/]+/(target[^/]*|dist|webfreeze-demo|bench-out)/' | head -3)" >&2
    exit 1
fi
tar xzf "$sdist" -C "$work/sdist"
if ! (cd "$work"/sdist/webfreeze-*/ && cargo metadata --format-version 1 --locked >/dev/null); then
    echo "the sdist's Cargo workspace does not resolve (a crate it needs was left out)" >&2
    exit 1
fi
log "sdist: $((size / 1024)) KiB, workspace resolves"
if [ -n "${WEBFREEZE_TEST_WHEEL:-}" ]; then
    # A wheel built elsewhere (scripts/wheel-cross.sh's manylinux_2_28 one), tested the same way.
    wheel="$(realpath "$WEBFREEZE_TEST_WHEEL")"
    log "testing the given wheel $(basename "$wheel")"
else
    log "building the wheel (profile dev, the test build's)"
    (cd python && "$tools/bin/maturin" build -q --profile dev --out "$work/dist") >&2
    wheel="$(ls "$work"/dist/webfreeze-*.whl)"
fi
log "installing $(basename "$wheel") into a fresh virtualenv"
"$base" -m venv "$work/venv"
site="$("$work/venv/bin/python" -c 'import sysconfig; print(sysconfig.get_path("purelib"))')"
"$harness/bin/python" -c 'import sysconfig; print(sysconfig.get_path("purelib"))' > "$site/webfreeze-test-harness.pth"
"$work/venv/bin/pip" install -q --disable-pip-version-check --no-deps "$wheel" >&2
export PATH="$work/venv/bin:$PATH" WEBFREEZE_CHROME="${WEBFREEZE_CHROME:-/usr/bin/chromium}"
unset WEBFREEZE_BIN
cmd=("$work/venv/bin/python" -m pytest -q -p no:cacheprovider python/tests "$@")
log "pytest python/tests"
if [ "$(id -u)" -eq 0 ] && [ -z "${WEBFREEZE_PY_NO_NETNS:-}" ]; then
    unshare --net -- bash -c 'ip link set lo up && exec "$@"' _ "${cmd[@]}"
else
    log "not root: pytest runs in this machine's network namespace (loopback-only by the tests' design)"
    "${cmd[@]}"
fi
