//! Bundles through a real S3-compatible server (moto, started by the test): push (multipart for a large
//! body), push again (nothing uploaded), a second bundle sharing bodies (only the new parts), pull into a
//! byte-identical file, resume an interrupted pull, import into a fresh home, and refuse a tampered part.

use std::path::Path;

use base64::Engine as _;

use crate::support::*;

/// A HAR whose pages share one large incompressible body (`big` bytes) plus one small body each.
fn har(pages: &[&str], big: usize) -> String {
    let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
    let noise: Vec<u8> = (0..big)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x as u8
        })
        .collect();
    let b64 = base64::engine::general_purpose::STANDARD.encode(&noise);
    let mut entries = Vec::new();
    for p in pages {
        entries.push(serde_json::json!({
            "startedDateTime": "2026-01-02T03:04:05.000Z", "time": 1,
            "request": {"method": "GET", "url": format!("https://s3.test/{p}"), "httpVersion": "HTTP/1.1", "headers": []},
            "response": {"status": 200, "httpVersion": "HTTP/1.1", "headers": [{"name": "content-type", "value": "text/html"}],
                "content": {"size": 10, "mimeType": "text/html", "text": format!("<p>{p}</p>")}},
        }));
    }
    entries.push(serde_json::json!({
        "startedDateTime": "2026-01-02T03:04:06.000Z", "time": 1,
        "request": {"method": "GET", "url": "https://s3.test/big.bin", "httpVersion": "HTTP/1.1", "headers": []},
        "response": {"status": 200, "httpVersion": "HTTP/1.1", "headers": [{"name": "content-type", "value": "application/octet-stream"}],
            "content": {"size": big, "mimeType": "application/octet-stream", "encoding": "base64", "text": b64}},
    }));
    serde_json::json!({"log": {"version": "1.2", "creator": {"name": "t", "version": "1"}, "entries": entries}}).to_string()
}

fn run(home: &Path, args: &[&str], s3: &S3Server) -> (String, String) {
    let env = [
        ("AWS_ACCESS_KEY_ID", "test"),
        ("AWS_SECRET_ACCESS_KEY", "test"),
        ("AWS_ENDPOINT_URL", s3.endpoint.as_str()),
    ];
    let out = run_cli_env(home, args, &env);
    let (stdout, stderr) =
        (String::from_utf8_lossy(&out.stdout).to_string(), String::from_utf8_lossy(&out.stderr).to_string());
    assert!(out.status.success(), "{args:?}: {stderr}");
    (stdout.trim().to_string(), stderr)
}

#[test]
fn bundles_go_through_object_storage_content_addressed_resumable_and_checked() {
    let s3 = S3Server::start();
    s3.create_bucket("frozen");
    let tmp = tempfile::tempdir().unwrap();
    let (a, b) = (tmp.path().join("lab-a"), tmp.path().join("lab-b"));
    std::fs::create_dir_all(&a).unwrap();
    std::fs::create_dir_all(&b).unwrap();
    let h1 = a.join("one.har");
    std::fs::write(&h1, har(&["p1", "p2"], 9 << 20)).unwrap();
    run(&a, &["snapshots", "import", h1.to_str().unwrap(), "--snapshot", "wv/T--1"], &s3);
    let bundle = a.join("wv.wfb");
    let (root, _) = run(&a, &["bundle", "create", "wv", "--out", bundle.to_str().unwrap()], &s3);

    // Push: everything goes up once; the 9 MiB body as a multipart upload.
    let url = "s3://frozen/labs/a";
    let (pushed, err) = run(&a, &["bundle", "push", bundle.to_str().unwrap(), url], &s3);
    assert_eq!(pushed, root);
    assert!(err.contains("already there") && err.contains(" 0 already there"), "{err}");
    let (_, err) = run(&a, &["bundle", "push", bundle.to_str().unwrap(), url], &s3);
    assert!(err.contains("0 part(s) uploaded"), "pushing again uploads nothing: {err}");

    // A second bundle sharing the large body uploads only what is new.
    let h2 = a.join("two.har");
    std::fs::write(&h2, har(&["p3"], 9 << 20)).unwrap();
    run(&a, &["snapshots", "import", h2.to_str().unwrap(), "--snapshot", "other/T--2"], &s3);
    let bundle2 = a.join("other.wfb");
    run(&a, &["bundle", "create", "other", "--out", bundle2.to_str().unwrap()], &s3);
    let (_, err) = run(&a, &["bundle", "push", bundle2.to_str().unwrap(), url], &s3);
    assert!(err.contains("1 already there"), "the shared body is not uploaded again: {err}");

    // Pull by name into lab B: the same bytes that were pushed.
    let pulled = b.join("wv.wfb");
    let (got, _) = run(&b, &["bundle", "pull", url, "wv", "--out", pulled.to_str().unwrap()], &s3);
    assert_eq!(got, root);
    assert!(std::fs::read(&pulled).unwrap() == std::fs::read(&bundle).unwrap(), "the pulled bundle differs");
    assert!(!b.join("wv.wfb.parts").exists(), "the part cache is removed after a pull");

    // An interrupted pull resumes: a part already fetched is not fetched again, a damaged one is.
    let body_of = |path: &str| {
        std::process::Command::new("tar")
            .args(["-xOf", bundle.to_str().unwrap(), path])
            .output()
            .unwrap()
            .stdout
    };
    let manifest: serde_json::Value = serde_json::from_slice(&body_of("webfreeze-bundle.json")).unwrap();
    let parts = manifest["parts"].as_array().unwrap();
    let resumed = b.join("again.wfb");
    let cache = b.join("again.wfb.parts");
    std::fs::create_dir_all(&cache).unwrap();
    let p0 = parts[0]["path"].as_str().unwrap();
    std::fs::write(cache.join(parts[0]["blake3"].as_str().unwrap()), body_of(p0)).unwrap();
    std::fs::write(cache.join(parts[1]["blake3"].as_str().unwrap()), b"garbage from a cut download").unwrap();
    let (_, err) = run(&b, &["bundle", "pull", url, &root, "--out", resumed.to_str().unwrap()], &s3);
    assert!(
        err.contains(&format!("{} part(s) downloaded, 1 from an earlier attempt", parts.len() - 1)),
        "{err}"
    );
    assert!(std::fs::read(&resumed).unwrap() == std::fs::read(&bundle).unwrap());

    // Import into lab B's fresh store: the snapshot is there, byte for byte (HAR export compared).
    run(&b, &["bundle", "import", pulled.to_str().unwrap()], &s3);
    let (ea, eb) = (a.join("a.har"), b.join("b.har"));
    run(&a, &["snapshots", "export", "wv/T--1", "--out", ea.to_str().unwrap()], &s3);
    run(&b, &["snapshots", "export", "wv/T--1", "--out", eb.to_str().unwrap()], &s3);
    assert!(std::fs::read(&ea).unwrap() == std::fs::read(&eb).unwrap(), "the imported snapshot differs");

    // A part changed in the bucket is caught on pull, and no bundle file is left.
    let small = parts.iter().find(|p| p["size"].as_u64().unwrap() < 1000).unwrap();
    let key = format!("{}/frozen/labs/a/parts/{}", s3.endpoint, small["blake3"].as_str().unwrap());
    let tampered = b.join("tampered.txt");
    std::fs::write(&tampered, b"not the part").unwrap();
    let out = s3.curl(&[
        "--aws-sigv4",
        "aws:amz:us-east-1:s3",
        "--user",
        "test:test",
        "-X",
        "PUT",
        "--data-binary",
        &format!("@{}", tampered.display()),
        &key,
    ]);
    assert_eq!(String::from_utf8_lossy(&out.stdout), "200");
    let bad = b.join("bad.wfb");
    let env = [
        ("AWS_ACCESS_KEY_ID", "test"),
        ("AWS_SECRET_ACCESS_KEY", "test"),
        ("AWS_ENDPOINT_URL", s3.endpoint.as_str()),
    ];
    let out = run_cli_env(&b, &["bundle", "pull", url, &root, "--out", bad.to_str().unwrap()], &env);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("does not match its hash"), "{err}");
    assert!(!bad.exists());
    // A URL that is not s3://BUCKET is a clear error.
    let out = run_cli_env(&b, &["bundle", "pull", "s3://", "x", "--out", bad.to_str().unwrap()], &env);
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("expected s3://BUCKET"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}
