//! The frozen web's layers over a task's own snapshot: the site union's order, and state by epoch (a page
//! recorded before and after a write follows the run's writes).

#![allow(clippy::unwrap_used)]

use snapshots::Store;

use super::{add_snapshot, ask, snapshot};
use crate::{overlay, Replay, ReplayConfig, ReplayReport};

/// Issue 34, the site union: what the replayed snapshot lacks comes from the other tasks' recordings of
/// the site, in name order, as its own layer (never exact), for safe methods only unless writes are allowed,
/// always the first recorded response (no sequence semantics), and after the snapshot's own exact and
/// normalised answers but before its fuzzy ones.
#[tokio::test]
async fn site_union_answers_what_the_task_lacks_in_a_fixed_order() {
    let store = Store::in_memory();
    let own = add_snapshot(
        &store,
        "run/a",
        &[
            ("GET", "https://s.test/home", "own home"),
            ("GET", "https://s.test/search?q=socks", "own socks"),
            ("POST", "https://s.test/cart", "own cart"),
        ],
    );
    let b = add_snapshot(
        &store,
        "run/b",
        &[
            ("GET", "https://s.test/home", "b home"),
            ("GET", "https://s.test/item/1", "b item"),
            ("GET", "https://s.test/item/1", "b item again"),
            ("POST", "https://s.test/pay", "b paid"),
        ],
    );
    let c = add_snapshot(
        &store,
        "run/c",
        &[
            ("GET", "https://s.test/item/1", "c item"),
            ("GET", "https://s.test/item/2", "c item two"),
            ("GET", "https://s.test/search?q=shoes", "c shoes"),
        ],
    );
    // Given out of order: the union's order is by name.
    let members = overlay::site_union_order(vec![c, own.clone(), b], "run/a");
    assert_eq!(members.iter().map(|m| m.name.as_str()).collect::<Vec<_>>(), ["run/b", "run/c"]);
    // With and without the path sieve (built from the members' path indexes, or read from the union's
    // entries the store derived at seal): the same answers, the sieve only spares probing members that
    // hold nothing at the request's address.
    let all = || members.iter().chain(std::iter::once(&own));
    let built = std::sync::Arc::new(crate::sieve::PathSieve::build(&store, all()).unwrap());
    for m in all() {
        store.join_union("site union of run", m).unwrap();
    }
    let stored = std::sync::Arc::new(crate::sieve::PathSieve::stored(
        &store,
        "site union of run",
        all().map(|m| m.id),
    ));
    let (no, yes) = (None, Some(&built));
    for (writes, sieve) in
        [(false, no), (true, no), (false, yes), (true, yes), (false, Some(&stored)), (true, Some(&stored))]
    {
        let layers: Vec<_> = members
            .iter()
            .map(|m| overlay::Overlay { kind: overlay::OverlayKind::SiteUnion, manifest: m.clone() })
            .collect();
        let sieve = sieve.map(|s| {
            std::sync::Arc::new(crate::sieve::LayerSieve::new(
                s.clone(),
                layers.iter().map(|l| l.manifest.id),
            ))
        });
        let cfg = ReplayConfig {
            inject_shim: false,
            overlays: overlay::Overlays { layers, writes, sieve, hidden: None },
            ..Default::default()
        };
        let r = Replay::new(store.clone(), own.clone(), cfg);
        for (method, url, status, body, layer) in [
            ("GET", "https://s.test/home", 200, "own home", "exact"),
            ("GET", "https://s.test/item/1", 200, "b item", "site-union"),
            ("GET", "https://s.test/item/1", 200, "b item", "site-union"),
            ("GET", "https://s.test/item/2", 200, "c item two", "site-union"),
            // The task's own fuzzy answer comes after the union's exact ones, and before none.
            ("GET", "https://s.test/search?q=shoes", 200, "c shoes", "site-union"),
            ("GET", "https://s.test/search?q=socks&view=grid", 200, "own socks", "fuzzy"),
            ("POST", "https://s.test/cart", 200, "own cart", "exact"),
            ("POST", "https://s.test/pay", if writes { 200 } else { 404 }, "b paid", "site-union"),
            ("GET", "https://s.test/nowhere", 404, "", "miss"),
        ] {
            let before = r.report();
            let (s, got, h) = ask(&r, method, url, &[]).await;
            assert_eq!(s, status, "{method} {url} (writes: {writes})");
            let after = r.report();
            let moved = |f: fn(&ReplayReport) -> u64| f(&after) - f(&before);
            if s == 200 {
                assert_eq!(got, body, "{method} {url}");
                let header = h.get(overlay::LAYER_HEADER).map(|v| v.to_str().unwrap().to_string());
                assert_eq!(header.as_deref(), (layer == "site-union").then_some("site-union"), "{url}");
                let counted = match layer {
                    "exact" => moved(|r| r.exact),
                    "fuzzy" => moved(|r| r.fuzzy),
                    _ => moved(|r| r.site_union),
                };
                assert_eq!(counted, 1, "{method} {url} counted as {layer}");
                assert_eq!(moved(|r| r.requests), 1);
            } else {
                assert_eq!(moved(|r| r.missed), 1, "{method} {url}");
            }
        }
        let rep = r.report();
        assert_eq!(rep.overlays, ["site-union run/b", "site-union run/c"]);
        let by: Vec<(&str, &str)> =
            rep.overlay_answers.iter().map(|a| (a.url.as_str(), a.snapshot.as_str())).collect();
        assert_eq!(
            by[..4],
            [
                ("https://s.test/item/1", "run/b"),
                ("https://s.test/item/1", "run/b"),
                ("https://s.test/item/2", "run/c"),
                ("https://s.test/search?q=shoes", "run/c"),
            ]
        );
        // The replayed snapshot's coverage counts its own exchanges only.
        assert_eq!(rep.served_exchanges, 3);
    }
}

/// Issue 47, part 2: the frozen web follows the run's writes. The cart recorded before and after "add to
/// cart" is answered by the run's write epoch, not by position; a write the recording never made is a miss
/// (never a fuzzy answer) and changes nothing; a reset starts the run's state afresh.
#[tokio::test]
async fn a_page_recorded_before_and_after_a_write_follows_the_runs_writes() {
    let (store, m) = snapshot(&[
        ("GET", "https://s.test/cart", "empty cart"),
        ("POST", "https://s.test/cart/add?slug=jar", "added"),
        ("GET", "https://s.test/cart", "cart: jar"),
    ]);
    let r = Replay::new(store, m, ReplayConfig { inject_shim: false, ..Default::default() });
    // An agent that opens the cart twice and adds nothing: empty both times.
    assert_eq!(ask(&r, "GET", "https://s.test/cart", &[]).await.1, "empty cart");
    assert_eq!(ask(&r, "GET", "https://s.test/cart", &[]).await.1, "empty cart");
    // Another product: a write the recording never made is a miss, and the cart stays empty.
    assert_eq!(ask(&r, "POST", "https://s.test/cart/add?slug=mug", &[]).await.0, 404);
    assert_eq!(ask(&r, "GET", "https://s.test/cart", &[]).await.1, "empty cart");
    // The recording's add: the cart as it was after it.
    assert_eq!(ask(&r, "POST", "https://s.test/cart/add?slug=jar", &[]).await.1, "added");
    assert_eq!(ask(&r, "GET", "https://s.test/cart", &[]).await.1, "cart: jar");
    assert_eq!(ask(&r, "GET", "https://s.test/cart", &[]).await.1, "cart: jar");
    // A new episode starts from the recording's first state.
    r.reset();
    assert_eq!(ask(&r, "GET", "https://s.test/cart", &[]).await.1, "empty cart");
}

/// A write the recording made after others the run skipped does not carry their effects: the state moves
/// only with the recording's next write.
#[tokio::test]
async fn a_later_write_out_of_order_leaves_the_state_where_it_is() {
    let (store, m) = snapshot(&[
        ("GET", "https://s.test/cart", "empty cart"),
        ("POST", "https://s.test/cart/add?slug=jar", "added"),
        ("GET", "https://s.test/cart", "cart: jar"),
        ("POST", "https://s.test/wishlist/add?slug=jar", "wished"),
        ("GET", "https://s.test/cart", "cart: jar, wished"),
    ]);
    let r = Replay::new(store, m, ReplayConfig { inject_shim: false, ..Default::default() });
    assert_eq!(ask(&r, "POST", "https://s.test/wishlist/add?slug=jar", &[]).await.1, "wished");
    assert_eq!(ask(&r, "GET", "https://s.test/cart", &[]).await.1, "empty cart");
}

/// Issue 59, part 2: served by epoch, exactly. A page that carries state, recorded only after a write the
/// run has not made, is a `state-unknown` miss (marked, counted in the report) for the agent and the
/// end-of-task checks alike, never the state after that write; a stylesheet recorded after it is served
/// at any epoch; once the run makes the write, the page is served.
#[tokio::test]
async fn issue_59_a_page_recorded_only_after_a_write_is_state_unknown_before_it() {
    let (store, m) = snapshot(&[
        ("GET", "https://s.test/product/jar", "<p>jar</p>"),
        ("POST", "https://s.test/cart/add?slug=jar", "added"),
        ("GET", "https://s.test/cart", "<p>cart: jar</p>"),
        ("GET", "https://s.test/static/cart.css", "/* cart */"),
    ]);
    let r = Replay::new(store, m, ReplayConfig { inject_shim: false, ..Default::default() });
    // Epoch 0: the product page (recorded then) is served; the cart is not known before the add.
    assert_eq!(ask(&r, "GET", "https://s.test/product/jar", &[]).await.1, "<p>jar</p>");
    let (status, body, headers) = ask(&r, "GET", "https://s.test/cart", &[]).await;
    assert_eq!(status, 404, "{body}");
    assert_eq!(headers["x-webfreeze-miss"], "state-unknown");
    assert!(body.contains("write epoch 0"), "{body}");
    assert_eq!(ask(&r, "GET", "https://s.test/static/cart.css", &[]).await.1, "/* cart */");
    let report = r.report();
    assert_eq!((report.state_unknown, report.missed), (1, 1), "{report:?}");
    assert_eq!(report.misses[0].action, crate::STATE_UNKNOWN);
    // The recording's add: the cart is the one recorded after it.
    assert_eq!(ask(&r, "POST", "https://s.test/cart/add?slug=jar", &[]).await.1, "added");
    assert_eq!(ask(&r, "GET", "https://s.test/cart", &[]).await.1, "<p>cart: jar</p>");
}
