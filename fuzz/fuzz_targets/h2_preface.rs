//! The HTTP/2 preface reader (SETTINGS and WINDOW_UPDATE the upstream connection mirrors).
#![no_main]
use libfuzzer_sys::fuzz_target;
use proxy::hello::{H2Preface, H2_PREFACE};

fuzz_target!(|data: &[u8]| {
    let _ = H2Preface::parse(data);
    let mut framed = H2_PREFACE.to_vec();
    framed.extend_from_slice(data);
    if let Ok(Some(p)) = H2Preface::parse(&framed) {
        let _ = p.text();
    }
});
