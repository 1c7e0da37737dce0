//! Replay's shim injection into recorded HTML: the script always ends up in the document.
#![no_main]
use libfuzzer_sys::fuzz_target;

const JS: &str = "/*webfreeze-fuzz-shim*/";

fuzz_target!(|html: &[u8]| {
    let out = replay::shim::inject_html(html, JS);
    assert!(out.windows(JS.len()).any(|w| w == JS.as_bytes()), "shim missing");
});
