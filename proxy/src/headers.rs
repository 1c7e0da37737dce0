//! Header hygiene (RFC 9110 section 7.6.1): hop-by-hop headers are removed in both directions, `Alt-Svc` is
//! stripped from responses so browsers never try QUIC around the proxy, and no `Via` is added (pages must
//! not see the proxy).

use http::header::{self, HeaderMap, HeaderName};

// Names, not strings: removing by `&str` parses the name on every call, and this runs for every request and
// response.
const HOP_BY_HOP: [HeaderName; 9] = [
    header::CONNECTION,
    HeaderName::from_static("keep-alive"),
    HeaderName::from_static("proxy-connection"),
    header::PROXY_AUTHENTICATE,
    header::PROXY_AUTHORIZATION,
    header::TE,
    header::TRAILER,
    header::TRANSFER_ENCODING,
    header::UPGRADE,
];

/// Remove hop-by-hop headers, including those the `Connection` header names.
pub fn strip_hop_by_hop(h: &mut HeaderMap) {
    if h.is_empty() {
        return;
    }
    let named: Vec<HeaderName> = h
        .get_all(header::CONNECTION)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .filter_map(|n| HeaderName::from_bytes(n.trim().as_bytes()).ok())
        .collect();
    for n in named {
        h.remove(n);
    }
    for n in &HOP_BY_HOP {
        h.remove(n);
    }
}

/// Join cookie crumbs into one `Cookie` field with "; ": browsers send one `cookie` field per cookie over
/// HTTP/2, and RFC 9113 section 8.2.3 requires them joined before an HTTP/1.1 hop (one field is valid over
/// HTTP/2 too, so requests are joined whatever the origin speaks). The field keeps the first crumb's place.
/// Found by the DokuWiki test: nginx 1.22 hands PHP only the first of several `Cookie` lines, so the login
/// cookie never reached the application.
pub fn join_cookies(h: &mut HeaderMap) {
    let crumbs: Vec<&[u8]> = h.get_all(header::COOKIE).iter().map(|v| v.as_bytes()).collect();
    if crumbs.len() < 2 {
        return;
    }
    let joined = crumbs.join(&b"; "[..]);
    if let Ok(v) = http::HeaderValue::from_bytes(&joined) {
        h.insert(header::COOKIE, v);
    }
}

/// Response headers as the client should see them: hop-by-hop and `Alt-Svc` removed.
pub fn clean_response(h: &mut HeaderMap) {
    strip_hop_by_hop(h);
    h.remove(header::ALT_SVC);
}

/// Whether a request asks for a WebSocket upgrade.
pub fn is_websocket_upgrade(h: &HeaderMap) -> bool {
    let upgrade = h.get(header::UPGRADE).and_then(|v| v.to_str().ok()).unwrap_or("");
    let connection = h
        .get_all(header::CONNECTION)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .any(|v| v.split(',').any(|t| t.trim().eq_ignore_ascii_case("upgrade")));
    connection && upgrade.eq_ignore_ascii_case("websocket")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cookie_crumbs_are_joined_in_place() {
        for (input, want) in [
            (
                vec![("cookie", "a=1"), ("cookie", "b=2"), ("accept", "*/*"), ("cookie", "c=3")],
                vec![("cookie", "a=1; b=2; c=3"), ("accept", "*/*")],
            ),
            (vec![("accept", "*/*"), ("cookie", "a=1")], vec![("accept", "*/*"), ("cookie", "a=1")]),
            (vec![("accept", "*/*")], vec![("accept", "*/*")]),
        ] {
            let mut h = HeaderMap::new();
            for (k, v) in &input {
                h.append(HeaderName::from_static(k), v.parse().unwrap());
            }
            join_cookies(&mut h);
            let got: Vec<(String, String)> =
                h.iter().map(|(k, v)| (k.to_string(), v.to_str().unwrap().to_string())).collect();
            let want: Vec<(String, String)> =
                want.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
            assert_eq!(got, want, "{input:?}");
        }
    }

    #[test]
    fn hop_by_hop_table() {
        for (input, kept, removed) in [
            (vec![("connection", "close"), ("content-type", "x")], vec!["content-type"], vec!["connection"]),
            (
                vec![("connection", "X-Foo, keep-alive"), ("x-foo", "1"), ("x-bar", "2")],
                vec!["x-bar"],
                vec!["x-foo"],
            ),
            (
                vec![("transfer-encoding", "chunked"), ("te", "trailers"), ("trailer", "x")],
                vec![],
                vec!["te", "trailer"],
            ),
            (vec![("proxy-authorization", "x"), ("via", "1.1 x")], vec!["via"], vec!["proxy-authorization"]),
            (vec![("alt-svc", "h3=\":443\""), ("set-cookie", "a=1")], vec!["set-cookie"], vec!["alt-svc"]),
        ] {
            let mut h = HeaderMap::new();
            for (k, v) in &input {
                h.append(HeaderName::from_static(k), v.parse().unwrap());
            }
            clean_response(&mut h);
            for k in kept {
                assert!(h.contains_key(k), "{k} kept in {input:?}");
            }
            for k in removed {
                assert!(!h.contains_key(k), "{k} removed in {input:?}");
            }
        }
    }

    #[test]
    fn websocket_detection() {
        let mut h = HeaderMap::new();
        h.insert(header::UPGRADE, "websocket".parse().unwrap());
        assert!(!is_websocket_upgrade(&h));
        h.insert(header::CONNECTION, "keep-alive, Upgrade".parse().unwrap());
        assert!(is_websocket_upgrade(&h));
    }
}
