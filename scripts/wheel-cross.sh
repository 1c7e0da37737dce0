#!/usr/bin/env bash
# Cross-built wheels for the clusters researchers run on: manylinux_2_28 (glibc 2.28: RHEL, Rocky and Alma
# 8 and 9, Debian 10+, Ubuntu 18.10+) for x86_64 and aarch64, built on this machine with `maturin --zig`
# (the `ziglang` package on PyPI is the C and C++ cross compiler: RocksDB's C++, BoringSSL, aws-lc, zstd
# are compiled against glibc 2.28 headers and zig's own libc++, linked statically). `auditwheel show` then
# reports each wheel's tag and the libraries it needs.
#
#   bash scripts/wheel-cross.sh [OUT_DIR] [TARGET...]      # default: dist/, both targets
#
# Not part of the test command: each target is a release build of everything from source, RocksDB
# included (the RocksDB archive scripts/lib.sh caches is built for this machine's glibc and libstdc++ and
# cannot go into a manylinux_2_28 wheel). Outputs go under "$CARGO_TARGET_DIR-zig", so a second run
# rebuilds only what changed. Needs the Rust standard library of each target (`rustup target add`).
source "$(dirname "$0")/lib.sh"
install_packages
out="${1:-$ROOT/dist}"
shift || true
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(x86_64-unknown-linux-gnu aarch64-unknown-linux-gnu)

# Pinned like scripts/lib.sh's Python tools, in their own virtualenv (ziglang is 100 MB); WEBFREEZE_CROSS_TOOLS
# names another one that has them.
CROSS_TOOLS=(maturin==1.16.0 ziglang==0.17.1 auditwheel==6.8.2)
base="${WEBFREEZE_PYTHON:-python3}"
key="$(printf '%s\n' "${CROSS_TOOLS[@]}" "$("$base" -c 'import sys; print(sys.version)')" | sha256sum | cut -c1-12)"
tools="${WEBFREEZE_CROSS_TOOLS:-${WEBFREEZE_BUILD_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/webfreeze-build}/cross-tools-$key}"
if [ ! -f "$tools/.installed" ] && [ -z "${WEBFREEZE_CROSS_TOOLS:-}" ]; then
    log "installing ${CROSS_TOOLS[*]} into $tools"
    rm -rf "$tools"
    "$base" -m venv "$tools"
    "$tools/bin/pip" install -q --disable-pip-version-check "${CROSS_TOOLS[@]}" >&2
    touch "$tools/.installed"
fi
export PATH="$tools/bin:$PATH"
# The host's RocksDB archive must not be linked into a wheel for other systems.
unset ROCKSDB_LIB_DIR ROCKSDB_STATIC
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$ROOT/target}-zig"
mkdir -p "$out"
for t in "${targets[@]}"; do
    if command -v rustup >/dev/null && ! rustup target list --installed | grep -qx "$t"; then
        log "rustup target add $t"
        rustup target add "$t" >&2
    fi
    log "maturin build --release --zig --compatibility manylinux_2_28 --target $t (into $out)"
    start=$(date +%s)
    (cd "$ROOT/python" && maturin build -q --release --zig --compatibility manylinux_2_28 --target "$t" --out "$out")
    log "$t built in $(( $(date +%s) - start )) s"
    arch="${t%%-*}"
    for w in "$out"/webfreeze-*manylinux_2_28_"$arch".whl; do
        [ -f "$w" ] || { echo "no manylinux_2_28 $arch wheel in $out" >&2; exit 1; }
        log "auditwheel show $(basename "$w")"
        auditwheel show "$w" >&2
        # The binary inside is built for the target (what `file` would say; an aarch64 wheel cannot run
        # here): its ELF header's machine field.
        "$base" - "$w" "$arch" <<'PY' >&2
import sys, zipfile
wheel, arch = sys.argv[1], sys.argv[2]
want = {"x86_64": 0x3E, "aarch64": 0xB7}[arch]
with zipfile.ZipFile(wheel) as z:
    name = next(n for n in z.namelist() if n.endswith(".data/scripts/webfreeze"))
    head = z.open(name).read(20)
machine = int.from_bytes(head[18:20], "little")
if head[:4] != b"\x7fELF" or head[4] != 2 or machine != want:
    sys.exit(f"{name} in {wheel} is not a 64-bit {arch} ELF binary (machine {machine:#x})")
print(f"{name}: 64-bit ELF for {arch}")
PY
    done
done
ls -l "$out"/webfreeze-*manylinux_2_28_* >&2
