#!/usr/bin/env bash
# Shared set-up for README's two commands and CI: system packages, and the RocksDB build cache.
#
# RocksDB's C++ takes ~15 minutes to build on 2 cores. The first build on a machine compiles it once and
# keeps librocksdb.a in $WEBFREEZE_BUILD_CACHE (default ~/.cache/webfreeze-build); every later build links
# that archive (ROCKSDB_LIB_DIR + ROCKSDB_STATIC) and takes seconds for this part.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"

# Debian packages the project needs: clang/libclang for RocksDB's bindings (and BoringSSL's, with cmake and
# git, for the upstream TLS stack that mirrors the browser), Chromium for the browser
# tests and agent, curl for the proxy tests.
PACKAGES=(clang libclang-dev cmake git chromium curl ca-certificates)
# Installed without their recommendations (DokuWiki's would pull in and start a whole Apache).
LEAN_PACKAGES=()

log() { printf '\033[1m==> %s\033[0m\n' "$*" >&2; }

install_packages() {
    local missing=()
    for p in "${PACKAGES[@]}"; do
        dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
    done
    local lean=()
    for p in "${LEAN_PACKAGES[@]}"; do
        dpkg -s "$p" >/dev/null 2>&1 || lean+=("$p")
    done
    if ((${#missing[@]} + ${#lean[@]})); then
        log "installing Debian packages: ${missing[*]} ${lean[*]}"
        local sudo=""
        [ "$(id -u)" -eq 0 ] || sudo="sudo"
        $sudo apt-get update -qq
        if ((${#missing[@]})); then
            DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}" >/dev/null
        fi
        if ((${#lean[@]})); then
            DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${lean[@]}" >/dev/null
        fi
    fi
    command -v cargo >/dev/null || { echo "cargo not found: install Rust from https://rustup.rs" >&2; exit 1; }
}

rocksdb_cache() {
    local ver
    ver="$(awk '/^name = "librocksdb-sys"/{getline; gsub(/"/,"",$3); print $3}' Cargo.lock)"
    local base="${WEBFREEZE_BUILD_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/webfreeze-build}/librocksdb-sys-$ver"
    # The archive is kept without its C++ debug information: with it, it is 1.4 GB, every test binary that links
    # it is ~0.9 GB and the build tree grew past 40 GB (a CI run once failed to link for want of disk); without
    # it, 44 MB. Our Rust code keeps its debug information; a RocksDB backtrace keeps its symbol names.
    local cache="$base-nodebug"
    if [ ! -f "$cache/librocksdb.a" ]; then
        local lib="$base/librocksdb.a" built=""
        if [ ! -f "$lib" ]; then
            log "building RocksDB $ver once (about 15 minutes on 2 cores; cached in $cache afterwards)"
            unset ROCKSDB_LIB_DIR ROCKSDB_STATIC
            cargo build -p librocksdb-sys
            local target="${CARGO_TARGET_DIR:-$ROOT/target}"
            lib="$(ls -t "$target"/debug/build/librocksdb-sys-*/out/librocksdb.a 2>/dev/null | head -1)"
            [ -n "$lib" ] || { echo "RocksDB build produced no librocksdb.a under $target" >&2; exit 1; }
            built="$(dirname "$lib")"
        fi
        mkdir -p "$cache.tmp" && strip --strip-debug -o "$cache.tmp/librocksdb.a" "$lib" \
            && rm -rf "$cache" && mv "$cache.tmp" "$cache"
        # The unstripped archive and the objects it was built from are no longer needed (2.7 GB).
        rm -rf "$base"
        [ -z "$built" ] || rm -rf "$built"
    fi
    export ROCKSDB_LIB_DIR="$cache" ROCKSDB_STATIC=1
}

# Build outputs pile up under CARGO_TARGET_DIR (one copy per changed dependency hash, incremental caches), and
# this kind of machine shares its disk: when little is left, remove what a build can redo (outputs untouched for
# a day, incremental caches) before building, and say so.
prune_target() {
    local target="${CARGO_TARGET_DIR:-$ROOT/target}" avail_kb
    [ -d "$target" ] || return 0
    avail_kb="$(df -Pk "$target" | awk 'NR == 2 { print $4 }')"
    if [ "${avail_kb:-0}" -lt $((${WEBFREEZE_PRUNE_BUILD_BELOW_GB:-20} * 1024 * 1024)) ]; then
        log "only $((avail_kb / 1024 / 1024)) GiB free under $target: removing build outputs untouched for a day"
        local dir
        for dir in "$target" "$target-fuzz"; do  # scripts/fuzz.sh builds into the second
            [ -d "$dir" ] || continue
            find "$dir" -maxdepth 4 -type d -name incremental -prune -exec rm -rf {} +
            find "$dir" -mindepth 2 -maxdepth 5 \( -path '*/deps/*' -o -path '*/examples/*' \) -type f -mtime +0 -delete
        done
        log "$(($(df -Pk "$target" | awk 'NR == 2 { print $4 }') / 1024 / 1024)) GiB free now"
    fi
}

setup() {
    install_packages
    prune_target
    rocksdb_cache
}

# A cargo-installed tool (NAME from crates.io at VERSION), pinned and kept in the build cache; prints the
# directory its binary is in.
cargo_tool() {
    local name="$1" version="$2"
    local root="${WEBFREEZE_BUILD_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/webfreeze-build}/$name-$version"
    if [ ! -x "$root/bin/$name" ]; then
        log "installing $name $version (crates.io) into $root"
        (unset CARGO_TARGET_DIR; cargo install -q --locked --version "$version" --root "$root" "$name")
    fi
    printf '%s\n' "$root/bin"
}

# Python build and lint tools (maturin, ruff, mypy, pytest), pinned, in a virtualenv kept in the build cache.
# Prints its directory.
PY_TOOLS=(maturin==1.16.0 ruff==0.17.6 mypy==2.4.1 pytest==9.2.0)
python_tools() {
    local base="${WEBFREEZE_PYTHON:-python3}"
    local key
    key="$(printf '%s\n' "${PY_TOOLS[@]}" "$("$base" -c 'import sys; print(sys.version)')" | sha256sum | cut -c1-12)"
    local dir="${WEBFREEZE_BUILD_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/webfreeze-build}/py-tools-$key"
    if [ ! -f "$dir/.installed" ]; then
        log "installing Python build tools (${PY_TOOLS[*]}) into $dir"
        rm -rf "$dir"
        "$base" -m venv "$dir"
        "$dir/bin/pip" install -q --disable-pip-version-check "${PY_TOOLS[@]}" >&2
        touch "$dir/.installed"
    fi
    printf '%s\n' "$dir"
}
