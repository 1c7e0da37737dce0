//! The model judge's verdict parser.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|reply: &str| {
    let _ = evaluator::judge::parse_verdict(reply);
});
