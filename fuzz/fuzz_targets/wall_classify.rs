//! The bot-wall classifier and its HTML helpers over any page: first two bytes are the status.
#![no_main]
use libfuzzer_sys::fuzz_target;
use wall::{classify, html_title, visible_text_len, DocumentResponse};

fuzz_target!(|data: &[u8]| {
    if data.len() < 2 {
        return;
    }
    let status = u16::from_be_bytes([data[0], data[1]]) % 1000;
    let html = String::from_utf8_lossy(&data[2..]);
    let headers = vec![("retry-after".to_string(), "1".to_string())];
    let doc = DocumentResponse {
        url: "https://fuzz.test/",
        status,
        headers: &headers,
        title: html_title(&html),
        html: &html,
        text_len: visible_text_len(&html),
    };
    let _ = classify(&doc);
});
