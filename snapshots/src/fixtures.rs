//! Exchanges for tests and benches (the `fixtures` feature, and this crate's own tests): one plain request
//! answered 200 with a body stored as a blob. The tests of every crate that holds a store build theirs
//! here instead of writing the record out field by field.

use crate::{request_key, Exchange, Header, RequestRecord, ResponseRecord, Store, StoreError};

/// `method url` (no body) answered 200 with `body` as `content_type`: exchange `seq` of a recording,
/// started at 1,000 + `seq` ms.
pub fn exchange(
    store: &Store,
    seq: u64,
    method: &str,
    url: &str,
    content_type: &str,
    body: &[u8],
) -> Result<Exchange, StoreError> {
    Ok(Exchange {
        seq,
        started_ms: 1_000 + seq as i64,
        key: request_key(method, url, None, b"")?.hex(),
        request: RequestRecord {
            method: method.into(),
            url: url.into(),
            version: "HTTP/1.1".into(),
            headers: vec![],
            body: None,
        },
        response: ResponseRecord {
            status: 200,
            version: "HTTP/1.1".into(),
            headers: vec![Header::new("content-type", content_type)],
            body: Some(store.put_blob(body)?),
            content_encoding: None,
        },
        timings: Default::default(),
        alpn: None,
        server_addr: None,
        flags: Default::default(),
        websocket: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_exchange_keys_and_stores_what_it_is_given() {
        let store = Store::in_memory();
        let x = exchange(&store, 3, "GET", "https://a.test/p?q=1", "text/plain", b"body").unwrap();
        assert_eq!(x.key, request_key("GET", "https://a.test/p?q=1", None, b"").unwrap().hex());
        assert_eq!((x.seq, x.started_ms, x.response.status), (3, 1_003, 200));
        let body = store.blob_bytes(&x.response.body.as_ref().unwrap().hash).unwrap();
        assert_eq!(body, b"body");
    }
}
