//! The WebVoyager action grammar over model replies.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|reply: &str| {
    let _ = agent::action::webvoyager::parse_reply(reply);
});
