//! The two BoringSSL calls the `boring` crate does not wrap, and the only unsafe code in webfreeze.
//! Each is a plain setter on an `SSL_CTX` / `SSL` we own (borrowed mutably for the call), copying the
//! byte slices it is given (BoringSSL documents both as copying), with the return value checked.
#![allow(unsafe_code)]

use boring::error::ErrorStack;
use boring::ssl::{ConnectConfiguration, SslConnectorBuilder};
use foreign_types::ForeignTypeRef;

/// `SSL_CTX_set1_requested_trust_anchors`: send the trust_anchors extension with these IDs (wire format:
/// 8-bit length-prefixed IDs; empty still sends the extension).
pub(crate) fn set_requested_trust_anchors(b: &mut SslConnectorBuilder, ids: &[u8]) -> Result<(), ErrorStack> {
    // SAFETY: `b` owns a valid SSL_CTX for the duration of the call; BoringSSL copies `ids`.
    let ok = unsafe { boring_sys::SSL_CTX_set1_requested_trust_anchors(b.as_ptr(), ids.as_ptr(), ids.len()) };
    if ok == 1 {
        Ok(())
    } else {
        Err(ErrorStack::get())
    }
}

/// `SSL_add_application_settings` (ALPS for `proto`, with empty settings as Chromium sends for h2) and
/// `SSL_set_alps_use_new_codepoint`.
pub(crate) fn add_application_settings(
    cfg: &mut ConnectConfiguration,
    proto: &[u8],
    new_codepoint: bool,
) -> Result<(), ErrorStack> {
    let ssl = cfg.as_ptr();
    // SAFETY: `cfg` owns a valid SSL not yet handshaking; BoringSSL copies `proto` and the (empty) settings.
    let ok = unsafe {
        boring_sys::SSL_set_alps_use_new_codepoint(ssl, i32::from(new_codepoint));
        boring_sys::SSL_add_application_settings(ssl, proto.as_ptr(), proto.len(), std::ptr::null(), 0)
    };
    if ok == 1 {
        Ok(())
    } else {
        Err(ErrorStack::get())
    }
}
