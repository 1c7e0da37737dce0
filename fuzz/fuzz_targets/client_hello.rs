//! The proxy's ClientHello reader (tunnel sniffing, fingerprint mirroring): any bytes give a hello or
//! an error, never a panic; a hello read gives a JA4 and a canonical profile.
#![no_main]
use libfuzzer_sys::fuzz_target;
use proxy::hello::{hello_needs, ClientHello};

fuzz_target!(|data: &[u8]| {
    let _ = hello_needs(data);
    if let Ok(h) = ClientHello::from_records(data) {
        let ja4 = h.ja4();
        assert_eq!(ja4.len(), 36, "{ja4}");
        let _ = h.is_browser();
        let _ = h.canonical();
    }
    if let Ok(h) = ClientHello::from_handshake(data) {
        let _ = h.ja4();
    }
});
