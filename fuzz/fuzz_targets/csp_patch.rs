//! Replay's CSP patching: any header value is patched without a panic, and patching is idempotent in
//! what it allows (a patched policy patched again still parses).
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|value: &str| {
    let once = replay::shim::patch_csp(value);
    let _ = replay::shim::patch_csp(&once);
});
