//! The request-key builder (URL, form, multipart and JSON bodies): input is
//! `METHOD \n URL \n CONTENT-TYPE \n BODY`; whole-body and streamed keys must agree.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let mut parts = data.splitn(4, |b| *b == b'\n');
    let method = String::from_utf8_lossy(parts.next().unwrap_or_default()).into_owned();
    let url = String::from_utf8_lossy(parts.next().unwrap_or_default()).into_owned();
    let ct = String::from_utf8_lossy(parts.next().unwrap_or_default()).into_owned();
    let body = parts.next().unwrap_or_default();
    let ct = (!ct.is_empty()).then_some(ct.as_str());
    let whole = snapshots::request_key(&method, &url, ct, body);
    if let Ok(mut b) = snapshots::KeyBuilder::new(&method, &url, ct) {
        for chunk in body.chunks(7) {
            b.update(chunk);
        }
        let streamed = b.finish();
        assert_eq!(whole.map(|k| k.hex()).ok(), Some(streamed.hex()), "streamed and whole keys differ");
    }
});
