//! Writes the seed corpus of every fuzz target (`fuzz/fuzz_targets/`) into `DIR/<target>/`:
//! generated here, by webfreeze's own code where it can write the format (WARC, WACZ and HAR exports of
//! a store filled from a generated WARC), so no third-party file is committed.

use std::io::Cursor;
use std::path::Path;

use archive::warc::{export_wacz, export_warc, import_warc};
use archive::ImportOptions;
use snapshots::Store;

fn write(root: &Path, target: &str, seeds: &[Vec<u8>]) -> std::io::Result<()> {
    let dir = root.join(target);
    std::fs::create_dir_all(&dir)?;
    for (i, s) in seeds.iter().enumerate() {
        std::fs::write(dir.join(format!("seed-{i:02}")), s)?;
    }
    Ok(())
}

fn strs(v: &[&str]) -> Vec<Vec<u8>> {
    v.iter().map(|s| s.as_bytes().to_vec()).collect()
}

/// A ClientHello record like Chromium's (GREASE, ALPN, ALPS, groups, sigalgs, versions, compression).
fn client_hello(grease: bool, sni: &str) -> Vec<u8> {
    fn ext(out: &mut Vec<u8>, t: u16, body: &[u8]) {
        out.extend(t.to_be_bytes());
        out.extend((body.len() as u16).to_be_bytes());
        out.extend(body);
    }
    fn list16(v: &[u16]) -> Vec<u8> {
        let mut b = ((v.len() * 2) as u16).to_be_bytes().to_vec();
        v.iter().for_each(|x| b.extend(x.to_be_bytes()));
        b
    }
    let protos = |p: &[&str]| {
        let mut l = Vec::new();
        p.iter().for_each(|s| {
            l.push(s.len() as u8);
            l.extend(s.as_bytes());
        });
        let mut b = (l.len() as u16).to_be_bytes().to_vec();
        b.extend(l);
        b
    };
    let mut ciphers = vec![0x1301u16, 0x1302, 0x1303, 0xc02b, 0xc02f, 0xcca9];
    if grease {
        ciphers.insert(0, 0x2a2a);
    }
    let mut body = vec![3, 3];
    body.extend([9u8; 32]);
    body.push(0);
    body.extend(list16(&ciphers));
    body.extend([1, 0]);
    let mut e = Vec::new();
    let mut sni_b = ((sni.len() + 3) as u16).to_be_bytes().to_vec();
    sni_b.push(0);
    sni_b.extend((sni.len() as u16).to_be_bytes());
    sni_b.extend(sni.as_bytes());
    ext(&mut e, 0x0000, &sni_b);
    ext(&mut e, 0x000a, &list16(&[0x11ec, 0x001d, 0x0017]));
    ext(&mut e, 0x000d, &list16(&[0x0403, 0x0804, 0x0401]));
    ext(&mut e, 0x0010, &protos(&["h2", "http/1.1"]));
    ext(&mut e, 17613, &protos(&["h2"]));
    ext(&mut e, 0x002b, &[4, 3, 4, 3, 3]);
    ext(&mut e, 0x001b, &[2, 0, 2]);
    ext(&mut e, 0xca34, &[0, 5, 4, 1, 2, 3, 4]);
    if grease {
        ext(&mut e, 0x1a1a, &[0]);
    }
    body.extend((e.len() as u16).to_be_bytes());
    body.extend(e);
    let mut hs = vec![1];
    hs.extend(&(body.len() as u32).to_be_bytes()[1..]);
    hs.extend(body);
    let mut rec = vec![0x16, 3, 1];
    rec.extend((hs.len() as u16).to_be_bytes());
    rec.extend(hs);
    rec
}

fn warc_record(fields: &[(&str, &str)], block: &[u8]) -> Vec<u8> {
    let mut out = b"WARC/1.1\r\n".to_vec();
    for (n, v) in fields {
        out.extend(format!("{n}: {v}\r\n").as_bytes());
    }
    out.extend(format!("Content-Length: {}\r\n\r\n", block.len()).as_bytes());
    out.extend(block);
    out.extend(b"\r\n\r\n");
    out
}

fn warc() -> Vec<u8> {
    let page = b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: 44\r\n\r\n<html><title>Shop</title><p>Kettle</p></html>";
    let css = b"HTTP/1.1 200 OK\r\nContent-Type: text/css\r\nContent-Encoding: identity\r\n\r\np{color:red}";
    let mut out =
        warc_record(&[("WARC-Type", "warcinfo"), ("WARC-Record-ID", "<urn:uuid:0>")], b"software: fuzz\r\n");
    out.extend(warc_record(
        &[
            ("WARC-Type", "request"),
            ("WARC-Record-ID", "<urn:uuid:1>"),
            ("WARC-Concurrent-To", "<urn:uuid:2>"),
            ("WARC-Target-URI", "https://shop.test/"),
            ("Content-Type", "application/http; msgtype=request"),
        ],
        b"GET / HTTP/1.1\r\nHost: shop.test\r\n\r\n",
    ));
    for (id, uri, http) in [
        ("<urn:uuid:2>", "https://shop.test/", &page[..]),
        ("<urn:uuid:3>", "https://shop.test/a.css", &css[..]),
    ] {
        out.extend(warc_record(
            &[
                ("WARC-Type", "response"),
                ("WARC-Record-ID", id),
                ("WARC-Date", "2024-05-06T07:08:09Z"),
                ("WARC-Target-URI", uri),
                ("Content-Type", "application/http; msgtype=response"),
            ],
            http,
        ));
    }
    out.extend(warc_record(
        &[
            ("WARC-Type", "revisit"),
            ("WARC-Record-ID", "<urn:uuid:4>"),
            ("WARC-Target-URI", "https://shop.test/a.css?v=2"),
            ("WARC-Refers-To", "<urn:uuid:3>"),
            ("WARC-Profile", "http://netpreserve.org/warc/1.1/revisit/identical-payload-digest"),
            ("Content-Type", "application/http; msgtype=response"),
        ],
        b"HTTP/1.1 200 OK\r\nContent-Type: text/css\r\n\r\n",
    ));
    out
}

/// Write every target's seeds under `root`.
pub(crate) fn write_all(root: &Path) -> anyhow::Result<()> {
    write(root, "client_hello", &[client_hello(true, "shop.test"), client_hello(false, "a.test")])?;
    let mut pre = proxy::hello::H2_PREFACE.to_vec();
    pre.extend([0, 0, 24, 4, 0, 0, 0, 0, 0]);
    for (k, v) in proxy::H2Preface::chrome().settings {
        pre.extend(k.to_be_bytes());
        pre.extend(v.to_be_bytes());
    }
    pre.extend([0, 0, 4, 8, 0, 0, 0, 0, 0, 0, 0xee, 0xff, 0x01]);
    write(root, "h2_preface", &[pre[24..].to_vec(), pre.clone()])?;
    write(
        root,
        "csp_patch",
        &strs(&[
            "script-src 'self' 'unsafe-inline'",
            "default-src 'self'; script-src 'nonce-abc' 'strict-dynamic'",
            "script-src 'sha256-AAAA' https://cdn.test; object-src 'none', script-src 'self'",
            "default-src *; report-uri /csp",
        ]),
    )?;
    write(
        root,
        "shim_inject",
        &strs(&[
            "<!doctype html><html><head><meta charset=utf-8><title>x</title></head><body>hi</body></html>",
            "<html><body><script>var a='<head>'</script></body>",
            "plain text, no tags",
        ]),
    )?;
    write(
        root,
        "webvoyager_action",
        &strs(&[
            "Thought: I search.\nAction: Type [0]; kettle",
            "Thought: open it\nAction: Click [3]",
            "Action: Scroll [WINDOW]; down",
            "Thought: done\nAction: ANSWER; $24.00",
            "Action: Wait",
            "Action: GoBack",
            "Action: Google",
        ]),
    )?;
    write(
        root,
        "webarena_action",
        &strs(&[
            "Let's think step-by-step. In summary, the next action I will perform is ```click [1234]```",
            "```type [5] [hello world] [1]```",
            "```stop [The answer is 42]```",
            "```press [Control+Enter]```",
            "```goto [https://shop.test/p?q=[x]]```",
            "Action: scroll [down]",
            "```tab_focus [1]```",
        ]),
    )?;
    write(
        root,
        "task_files",
        &strs(&[
            r#"{"web_name": "Demo Shop", "id": "DemoShop--0", "ques": "What is the price?", "web": "https://shop.test/", "eval": {"must_include": ["24.00"]}}"#,
            r#"[{"sites": ["shopping"], "task_id": 3, "require_login": false, "storage_state": null, "start_url": "__SHOPPING__/", "geolocation": null, "intent": "What does the shop sell?", "eval": {"eval_types": ["string_match"], "reference_answers": {"must_include": ["kettles"]}, "reference_url": "", "program_html": []}}]"#,
        ]),
    )?;
    write(
        root,
        "verdict",
        &strs(&[
            "SUCCESS",
            "NOT SUCCESS",
            "Thoughts: the answer matches.\nStatus: \"success\"",
            "Verdict: FAILED",
        ]),
    )?;
    write(
        root,
        "request_key",
        &strs(&[
            "GET\nhttps://shop.test/search?q=kettle&_=123\n\n",
            "POST\nhttps://shop.test/cart\napplication/x-www-form-urlencoded\nitem=1&qty=2&csrf=abc",
            "POST\nhttps://api.test/v1\napplication/json\n{\"b\":1,\"a\":[1,2],\"ts\":1700000000}",
            "POST\nhttps://up.test/\nmultipart/form-data; boundary=XX\n--XX\r\nContent-Disposition: form-data; name=\"a\"\r\n\r\n1\r\n--XX--\r\n",
        ]),
    )?;
    let warc = warc();
    // The same pages in the formats webfreeze writes: WARC (gzip), WACZ, HAR.
    let store = Store::in_memory();
    let opts = ImportOptions { snapshot: "seed".into(), source_file: "seed.warc".into(), now_ms: 0 };
    import_warc(&store, warc.as_slice(), &opts, |_| {})?;
    let mut warc_gz = Vec::new();
    export_warc(&store, "seed", &mut warc_gz, true, "seed.warc.gz")?;
    let mut wacz = Cursor::new(Vec::new());
    export_wacz(&store, "seed", &mut wacz, "seed.wacz")?;
    let mut har = Vec::new();
    archive::har::export(&store, "seed", &mut har, "seed.har")?;
    write(root, "warc_import", &[warc, warc_gz])?;
    write(root, "wacz_import", &[wacz.into_inner()])?;
    write(
        root,
        "har_import",
        &[
            har,
            br#"{"log":{"version":"1.2","creator":{"name":"x","version":"1"},"entries":[]}}"#.to_vec(),
            // A WebSocket as Chromium's DevTools saves it: text, binary (base64) and an unknown opcode.
            br#"{"log":{"version":"1.2","creator":{"name":"WebInspector","version":"537.36"},"entries":[{"startedDateTime":"2025-11-26T10:00:00.000Z","time":1,"_resourceType":"websocket","request":{"method":"GET","url":"wss://ws.test/s","httpVersion":"HTTP/1.1","headers":[{"name":"Upgrade","value":"websocket"}]},"response":{"status":101,"httpVersion":"HTTP/1.1","headers":[],"content":{"size":0}},"_webSocketMessages":[{"type":"receive","time":1764151200.25,"opcode":1,"data":"{\"tick\":1}"},{"type":"send","time":1764151200.5,"opcode":2,"data":"AJ+Slg=="},{"type":"ping","time":1764151201,"opcode":9,"data":""},{"type":"send","time":1764151202,"opcode":8,"data":"bye","_code":1000}]}]}}"#.to_vec(),
        ],
    )?;
    let mut wall = 403u16.to_be_bytes().to_vec();
    wall.extend(b"<title>Just a moment...</title><script src=/cdn-cgi/challenge-platform/x></script>");
    let mut page = 200u16.to_be_bytes().to_vec();
    page.extend(b"<title>Shop</title><div class=g-recaptcha></div><style>p{}</style><p>text</p>");
    write(root, "wall_classify", &[wall, page])?;
    // A bundle of the same snapshot, as `webfreeze bundle create` writes it.
    let tmp = tempfile::tempdir()?;
    let bundle = tmp.path().join("seed.wfz");
    bundle::create(&store, bundle::BundleSource::Snapshots("seed"), &bundle)?;
    write(root, "bundle_import", &[std::fs::read(&bundle)?])?;
    // Client connections: plain requests (absolute form, direct, pipelined, bodies), CONNECT then TLS or
    // plain HTTP in the tunnel, HTTP/2 prior knowledge.
    let mut tls_tunnel = b"CONNECT shop.test:443 HTTP/1.1\r\nHost: shop.test:443\r\n\r\n".to_vec();
    tls_tunnel.extend(client_hello(true, "shop.test"));
    // A WebSocket handshake the fuzz snapshot recorded, then a masked text frame and a close.
    let mut ws = b"GET http://plain.test/ws HTTP/1.1\r\nHost: plain.test\r\nConnection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n".to_vec();
    let text = br#"{"id":1,"ts":1799999999999}"#;
    ws.extend([0x81, 0x80 | text.len() as u8, 0, 0, 0, 0]);
    ws.extend(text);
    ws.extend([0x88, 0x82, 0, 0, 0, 0, 0x03, 0xe8]);
    let mut h2 = pre.clone();
    h2.extend([0, 0, 5, 1, 5, 0, 0, 0, 1, 0x82, 0x86, 0x84, 0x41, 0x00]);
    write(
        root,
        "proxy_conn",
        &[
            b"GET http://plain.test/a?b=1 HTTP/1.1\r\nHost: plain.test\r\n\r\n".to_vec(),
            b"GET / HTTP/1.1\r\nHost: localhost\r\n\r\n".to_vec(),
            b"GET http://plain.test/a?b=1 HTTP/1.1\r\nHost: plain.test\r\n\r\nPOST http://plain.test/p HTTP/1.1\r\nHost: plain.test\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n3\r\n{}\n\r\n0\r\n\r\n".to_vec(),
            tls_tunnel,
            b"CONNECT shop.test:80 HTTP/1.1\r\n\r\nGET / HTTP/1.1\r\nHost: shop.test\r\n\r\n".to_vec(),
            h2,
            ws,
        ],
    )?;
    // The guards' rule tables, row by row: method, path, content type, label, then the body.
    let mut guard: Vec<Vec<u8>> = proxy::guard::cases::CASES
        .iter()
        .map(|c| {
            format!("{}\n{}\n{}\n{}\n{}", c.method, c.path, c.content_type, c.label, c.body).into_bytes()
        })
        .collect();
    guard.extend(
        proxy::guard::answers::EXAMPLES
            .iter()
            .map(|(host, path, _)| format!("GET\n{host}{path}\n\n\n").into_bytes()),
    );
    write(root, "guard_rules", &guard)?;
    println!("seed corpus written to {}", root.display());
    Ok(())
}
