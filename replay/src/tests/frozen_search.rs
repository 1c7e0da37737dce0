//! The frozen search engine: unrecorded searches, the stored index, a site's own search, declared and
//! OpenSearch searches, a held-out task hidden, one index shared by replays.

#![allow(clippy::unwrap_used)]

use http::Request;
use proxy::{Decision, Handler, RequestInfo};
use snapshots::Store;

use super::{add_snapshot, ask};
use crate::{overlay, search, OnMiss, Replay, ReplayConfig};

/// Issue 34, the frozen search engine: a search no recording answers gets a results page from the replayed
/// snapshots' documents (those holding the query's words, BM25 order, ties by URL), marked as such; the
/// same query gives the same bytes; a result's link replays; a recorded search is served as recorded in
/// fallback mode and from the index in `always` mode; with search off it is a miss.
#[tokio::test]
async fn frozen_search_answers_unrecorded_searches_from_the_recorded_pages() {
    let store = Store::in_memory();
    let own = add_snapshot(
        &store,
        "run/a",
        &[
            ("GET", "https://s.test/kettle", "<html><head><title>Blue Kettle</title></head><body><h1>Blue Kettle</h1><p>A kettle for tea, 24.00</p></body></html>"),
            ("GET", "https://www.google.com/search?q=recorded", "recorded results"),
            ("GET", "https://s.test/app.js", "kettle kettle kettle (a script: not a document)"),
        ],
    );
    let other = add_snapshot(
        &store,
        "run/b",
        &[(
            "GET",
            "https://s.test/teapot",
            "<html><head><title>Green Teapot</title></head><body><p>For tea & two</p></body></html>",
        )],
    );
    let layers = vec![overlay::Overlay { kind: overlay::OverlayKind::SiteUnion, manifest: other }];
    let replay = |mode| {
        let cfg = ReplayConfig {
            inject_shim: false,
            overlays: overlay::Overlays { layers: layers.clone(), writes: false, sieve: None, hidden: None },
            search: search::SearchConfig { mode, urls: vec!["https://find.test/".into()] },
            ..Default::default()
        };
        Replay::new(store.clone(), own.clone(), cfg)
    };
    let r = replay(search::SearchMode::Fallback);
    let (s, page, h) = ask(&r, "GET", "https://www.google.com/search?q=tea+kettle", &[]).await;
    assert_eq!(s, 200, "{page}");
    assert_eq!(h.get(overlay::LAYER_HEADER).unwrap(), "frozen-search");
    let kettle = page.find("href=\"https://s.test/kettle\"").expect(&page);
    let teapot = page.find("href=\"https://s.test/teapot\"").expect(&page);
    assert!(kettle < teapot, "both words rank the kettle first: {page}");
    assert!(
        !page.contains("app.js") && page.contains("Frozen search") && page.contains("Results 1-2 of 2"),
        "{page}"
    );
    assert!(page.contains("For tea &amp; two"), "snippets are escaped: {page}");
    let (_, again, _) = ask(&r, "GET", "https://www.google.com/search?q=tea+kettle", &[]).await;
    assert_eq!(page, again, "the same query gives the same bytes");
    // A result replays; a query nothing matches says so; the home page is a search box.
    let (s, body, _) = ask(&r, "GET", "https://s.test/teapot", &[]).await;
    assert!(s == 200 && body.contains("Green Teapot"));
    let (_, none, _) = ask(&r, "GET", "https://duckduckgo.com/?q=zebra", &[]).await;
    assert!(none.contains("No recorded page matches <b>zebra</b>"), "{none}");
    let (_, home, _) = ask(&r, "GET", "https://www.google.com/", &[]).await;
    assert!(home.contains("<form action=\"/search\"") && !home.contains("result-stats"), "{home}");
    let (_, custom, _) = ask(&r, "GET", "https://find.test/search?q=teapot", &[]).await;
    assert!(custom.contains("https://s.test/teapot"), "{custom}");
    // Recorded searches: as recorded in fallback mode, from the index in always mode.
    let (_, rec, _) = ask(&r, "GET", "https://www.google.com/search?q=recorded", &[]).await;
    assert_eq!(rec, "recorded results");
    let rep = r.report();
    assert_eq!((rep.frozen_search, rep.exact, rep.site_union, rep.missed), (5, 1, 1, 0));
    assert_eq!(rep.frozen_search_queries[0].query.as_deref(), Some("tea kettle"));
    assert_eq!(rep.frozen_search_queries[0].results, 2);
    let always = replay(search::SearchMode::Always);
    let (_, rec, h) = ask(&always, "GET", "https://www.google.com/search?q=recorded", &[]).await;
    assert!(rec.contains("No recorded page matches") && h.get(overlay::LAYER_HEADER).is_some(), "{rec}");
    // Misses sent live: an unrecorded search goes to the live engine, not the index.
    let live = Replay::new(
        store.clone(),
        own.clone(),
        ReplayConfig {
            inject_shim: false,
            on_miss: OnMiss::Live,
            search: search::SearchConfig { mode: search::SearchMode::Fallback, urls: Vec::new() },
            ..Default::default()
        },
    );
    let req =
        Request::builder().uri("https://www.google.com/search?q=tea").body(proxy::body::empty()).unwrap();
    let ctx = live.new_ctx(&RequestInfo {
        id: 0,
        client_addr: "127.0.0.1:1".parse().unwrap(),
        tls: true,
        client_alpn: None,
        client_version: http::Version::HTTP_11,
    });
    assert!(matches!(live.request(&ctx, req).await, Decision::Forward(_)), "sent live");
    // Off: an unrecorded search is a miss.
    let off = replay(search::SearchMode::Off);
    let (s, _, _) = ask(&off, "GET", "https://www.google.com/search?q=tea+kettle", &[]).await;
    assert_eq!(s, 404);
    assert_eq!(off.report().missed, 1);
}

/// Issue 34, the stored search index: a replay answers from the index stored beside each snapshot (the
/// same bytes as the index derived in memory); one of another version or whose blob is gone is derived
/// again; a damaged one (bytes that no longer hash to its name, or the index of another snapshot) is
/// refused with the command that rebuilds it, never a page from it; rebuilt, the same page is back.
#[tokio::test]
async fn the_stored_search_index_is_used_and_a_damaged_one_refused() {
    let store = Store::in_memory();
    let page =
        |t: &str| format!("<html><head><title>{t}</title></head><body><p>{t} for tea</p></body></html>");
    add_snapshot(&store, "run/a", &[("GET", "https://s.test/kettle", &page("Kettle"))]);
    add_snapshot(&store, "run/b", &[("GET", "https://s.test/teapot", &page("Teapot"))]);
    let search = |own: &str| {
        let (store, own) = (store.clone(), store.manifest(own).unwrap());
        let other = store.manifest(if own.name == "run/a" { "run/b" } else { "run/a" }).unwrap();
        async move {
            let cfg = ReplayConfig {
                inject_shim: false,
                overlays: overlay::Overlays {
                    layers: vec![overlay::Overlay { kind: overlay::OverlayKind::SiteUnion, manifest: other }],
                    writes: false,
                    sieve: None,
                    hidden: None,
                },
                search: search::SearchConfig { mode: search::SearchMode::Fallback, urls: Vec::new() },
                ..Default::default()
            };
            let r = Replay::new(store, own, cfg);
            let (s, body, _) = ask(&r, "GET", "https://www.google.com/search?q=tea", &[]).await;
            (s, body)
        }
    };
    let derived = search("run/a").await;
    assert_eq!(derived.0, 200);
    assert!(derived.1.contains("Results 1-2 of 2"), "{}", derived.1);
    // Stored (one of the two: the other is derived), then both.
    let a = search::store_index(&store, "run/a").unwrap();
    assert_eq!(a.documents, 1);
    assert!(search::load_index(&store, &a.manifest).unwrap().is_some());
    assert_eq!(search("run/a").await, derived);
    search::store_index(&store, "run/b").unwrap();
    assert_eq!(search("run/a").await, derived, "stored indexes give the bytes the derived one gives");
    // Another version, or its blob gone: derived again, same page.
    let mut m = store.manifest("run/a").unwrap();
    let good = m.search_index.clone().unwrap();
    for r in [
        snapshots::DerivedRef { version: search::INDEX_VERSION + 1, ..good.clone() },
        snapshots::DerivedRef { hash: "00".repeat(32), ..good.clone() },
    ] {
        m.search_index = Some(r);
        store.put_manifest(&m).unwrap();
        assert_eq!(search("run/a").await, derived);
    }
    // Damaged: its bytes changed, or another snapshot's index named.
    let b_index = store.manifest("run/b").unwrap().search_index.unwrap();
    m.search_index = Some(snapshots::DerivedRef { items: 1, ..b_index });
    store.put_manifest(&m).unwrap();
    let (s, body) = search("run/a").await;
    assert_eq!(s, 503, "{body}");
    assert!(body.contains("is the index of \"run/b\"") && !body.contains("<li"), "{body}");
    m.search_index = Some(good.clone());
    store.put_manifest(&m).unwrap();
    let mut raw = store.raw_blob_for_tests(&good.hash).unwrap().unwrap();
    let last = raw.len() - 1;
    raw[last] ^= 0x55;
    store.damage_blob_for_tests(&good.hash, &raw).unwrap();
    let (s, body) = search("run/a").await;
    assert_eq!(s, 503, "{body}");
    assert!(
        body.contains("damaged")
            && body.contains("webfreeze snapshots search-index run/a")
            && !body.contains("<li"),
        "{body}"
    );
    // Rebuilt by the command's function: the page is back.
    search::store_index(&store, "run/a").unwrap();
    assert_eq!(search("run/a").await, derived);
}

/// Issue 34, `--search site`: a site's own search for a value no recording has is answered from the site's
/// recorded pages (not another host's), at its own path with its own parameter and its other parameters
/// kept, marked frozen search; a recorded search is served as recorded; without `site` it is a miss, as
/// before.
#[tokio::test]
async fn a_sites_own_search_is_answered_under_search_site() {
    let store = Store::in_memory();
    let page = |t: &str| format!("<html><head><title>{t}</title></head><body><p>{t}</p></body></html>");
    let own = add_snapshot(
        &store,
        "run/a",
        &[
            ("GET", "https://shop.test/search?q=kettle&cat=all", &page("Results for kettle")),
            ("GET", "https://shop.test/kettle", &page("Blue Kettle")),
            ("GET", "https://shop.test/teapot", &page("Green Teapot")),
        ],
    );
    let other = add_snapshot(&store, "run/b", &[("GET", "https://else.test/teapot", &page("Other Teapot"))]);
    let replay = |mode| {
        let cfg = ReplayConfig {
            inject_shim: false,
            overlays: overlay::Overlays {
                layers: vec![overlay::Overlay {
                    kind: overlay::OverlayKind::SiteUnion,
                    manifest: other.clone(),
                }],
                writes: false,
                sieve: None,
                hidden: None,
            },
            search: search::SearchConfig { mode, urls: Vec::new() },
            ..Default::default()
        };
        Replay::new(store.clone(), own.clone(), cfg)
    };
    let r = replay(search::SearchMode::Site);
    let (s, body, h) = ask(&r, "GET", "https://shop.test/search?q=teapot&cat=all", &[]).await;
    assert_eq!((s, h.get(overlay::LAYER_HEADER).map(|v| v.to_str().unwrap())), (200, Some("frozen-search")));
    assert!(body.contains("href=\"https://shop.test/teapot\"") && !body.contains("else.test"), "{body}");
    assert!(
        body.contains("<form action=\"/search\"")
            && body.contains("<input type=hidden name=\"cat\" value=\"all\">")
            && body.contains("name=\"q\" value=\"teapot\""),
        "{body}"
    );
    let (_, recorded, _) = ask(&r, "GET", "https://shop.test/search?q=kettle&cat=all", &[]).await;
    assert!(recorded.contains("Results for kettle"), "{recorded}");
    // A path never recorded with a query is not a search: the fuzzy layer answers as before.
    let (s, body, h) = ask(&r, "GET", "https://shop.test/kettle?color=blue", &[]).await;
    assert!(s == 200 && body.contains("Blue Kettle") && h.get(overlay::LAYER_HEADER).is_none(), "{body}");
    let rep = r.report();
    assert_eq!((rep.frozen_search, rep.exact, rep.fuzzy, rep.missed), (1, 1, 1, 0));
    assert_eq!(rep.frozen_search_queries[0].query.as_deref(), Some("teapot"));
    let (s, _, _) =
        ask(&replay(search::SearchMode::Fallback), "GET", "https://shop.test/search?q=teapot&cat=all", &[])
            .await;
    assert_eq!(s, 404, "without `site` a site's own search is not answered");
}

/// Issue 51: a site's own search learned from the search form its pages declare, with no recorded search
/// to learn from (a WordPress blog's `/?s=`), under `--search site`; and never the wrong page instead: the
/// recorded home page is no fuzzy answer to `/?s=garden` (the search term names the content).
#[tokio::test]
async fn a_search_the_pages_declare_is_answered_and_never_the_wrong_page() {
    let store = Store::in_memory();
    let home = "<html><head><title>Garden Blog</title></head><body><form role=search method=get \
                action=\"https://blog.test/\"><input type=search name=s><input type=submit value=Search></form>\
                <p>Welcome</p><a href=\"/roses/\">Roses</a></body></html>";
    let post = "<html><head><title>Roses in the garden</title></head><body><p>Roses and garden notes</p></body></html>";
    let own = add_snapshot(
        &store,
        "run/a",
        &[("GET", "https://blog.test/", home), ("GET", "https://blog.test/roses/", post)],
    );
    let replay = |mode| {
        let cfg = ReplayConfig {
            inject_shim: false,
            search: search::SearchConfig { mode, urls: Vec::new() },
            ..Default::default()
        };
        Replay::new(store.clone(), own.clone(), cfg)
    };
    let (s, body, _) =
        ask(&replay(search::SearchMode::Fallback), "GET", "https://blog.test/?s=garden", &[]).await;
    assert_eq!(s, 404, "not the home page: {body}");
    let r = replay(search::SearchMode::Site);
    let (s, body, h) = ask(&r, "GET", "https://blog.test/?s=garden", &[]).await;
    assert_eq!(
        (s, h.get(overlay::LAYER_HEADER).map(|v| v.to_str().unwrap())),
        (200, Some("frozen-search")),
        "{body}"
    );
    assert!(
        body.contains("href=\"https://blog.test/roses/\"") && body.contains("name=\"s\" value=\"garden\""),
        "{body}"
    );
    assert_eq!(r.report().frozen_search, 1);
    // The home page itself is still the recorded one.
    assert!(ask(&r, "GET", "https://blog.test/", &[]).await.1.contains("Welcome"));
}

/// Issue 51: a site's search learned from the OpenSearch description its pages link (recorded by the crawl).
#[tokio::test]
async fn a_search_an_opensearch_description_declares_is_answered() {
    let store = Store::in_memory();
    let home = "<html><head><title>Plant Wiki</title><link rel=\"search\" \
                type=\"application/opensearchdescription+xml\" href=\"/osd.xml\"></head><body><p>Welcome</p></body></html>";
    let fern = "<html><head><title>Ferns</title></head><body><p>Ferns grow in shade</p></body></html>";
    let osd = "<OpenSearchDescription><Url type=\"text/html\" template=\"https://w.test/find?query={searchTerms}\"/></OpenSearchDescription>";
    let own = add_snapshot(
        &store,
        "run/a",
        &[
            ("GET", "https://w.test/", home),
            ("GET", "https://w.test/ferns", fern),
            ("GET", "https://w.test/osd.xml", osd),
        ],
    );
    let cfg = ReplayConfig {
        inject_shim: false,
        search: search::SearchConfig { mode: search::SearchMode::Site, urls: Vec::new() },
        ..Default::default()
    };
    let r = Replay::new(store, own, cfg);
    let (s, body, h) = ask(&r, "GET", "https://w.test/find?query=shade", &[]).await;
    assert_eq!(
        (s, h.get(overlay::LAYER_HEADER).map(|v| v.to_str().unwrap())),
        (200, Some("frozen-search")),
        "{body}"
    );
    assert!(body.contains("href=\"https://w.test/ferns\""), "{body}");
}

/// Issue 61, part 1: the OpenSearch description the crawl fetched into its part is read when the first page
/// that links it is the task's own (another layer). The set of descriptions already read was shared across
/// layers and each was looked up only in the linking page's layer: the search was never declared, and an
/// unrecorded query on it answered 404.
#[tokio::test]
async fn issue_61_an_opensearch_description_in_another_layer_is_read() {
    let store = Store::in_memory();
    let page = |t: &str| {
        format!(
            "<html><head><title>{t}</title><link rel=\"search\" type=\"application/opensearchdescription+xml\" \
             href=\"/osd.xml\"></head><body><p>{t}</p></body></html>"
        )
    };
    let osd = "<OpenSearchDescription><Url type=\"text/html\" template=\"https://w.test/find?query={searchTerms}\"/></OpenSearchDescription>";
    let own = add_snapshot(&store, "run/a", &[("GET", "https://w.test/", &page("Plant Wiki"))]);
    let crawl = add_snapshot(
        &store,
        "run/crawl/w/001",
        &[
            ("GET", "https://w.test/ferns", &page("Ferns grow in shade")),
            ("GET", "https://w.test/osd.xml", osd),
        ],
    );
    let cfg = ReplayConfig {
        inject_shim: false,
        overlays: overlay::Overlays {
            layers: vec![overlay::Overlay { kind: overlay::OverlayKind::Crawl, manifest: crawl }],
            writes: false,
            sieve: None,
            hidden: None,
        },
        search: search::SearchConfig { mode: search::SearchMode::Site, urls: Vec::new() },
        ..Default::default()
    };
    let r = Replay::new(store, own, cfg);
    let (s, body, h) = ask(&r, "GET", "https://w.test/find?query=shade", &[]).await;
    assert_eq!(
        (s, h.get(overlay::LAYER_HEADER).map(|v| v.to_str().unwrap())),
        (200, Some("frozen-search")),
        "{body}"
    );
    assert!(body.contains("href=\"https://w.test/ferns\""), "{body}");
}

/// Issue 61, part 2: a leave-one-out replay (`webfreeze coverage`) meets nothing of its held-out task: not
/// the crawl's pages reached only through the task's own recorded documents (hidden, whatever layer of matching
/// would find them), and neither its own pages nor those in the frozen search's results.
#[tokio::test]
async fn issue_61_a_held_out_tasks_pages_are_hidden_from_its_replay_and_its_search() {
    let store = Store::in_memory();
    let page = |t: &str| format!("<html><head><title>{t}</title></head><body><p>{t}</p></body></html>");
    let own = add_snapshot(&store, "run/a", &[("GET", "https://w.test/ferns/own", &page("Own fern notes"))]);
    let crawl = add_snapshot(
        &store,
        "run/crawl/w/001",
        &[
            ("GET", "https://w.test/ferns/private?id=7", &page("Private fern page")),
            ("GET", "https://w.test/moss", &page("Moss fern neighbour")),
        ],
    );
    let replay = |hide: bool| {
        let hidden =
            hide.then(|| std::sync::Arc::new(["https://w.test/ferns/private?id=7".to_string()].into()));
        let cfg = ReplayConfig {
            inject_shim: false,
            overlays: overlay::Overlays {
                layers: vec![overlay::Overlay { kind: overlay::OverlayKind::Crawl, manifest: crawl.clone() }],
                hidden,
                ..Default::default()
            },
            search: search::SearchConfig {
                mode: search::SearchMode::Fallback,
                urls: vec!["https://find.test/".into()],
            },
            hide_own: hide,
            ..Default::default()
        };
        Replay::new(store.clone(), own.clone(), cfg)
    };
    let (kept, held_out) = (replay(false), replay(true));
    for (url, as_recorded, left_out) in [
        ("https://w.test/ferns/private?id=7", 200, 404),
        // A fuzzy or normalised match does not bring the hidden page back.
        ("https://w.test/ferns/private?id=7&utm_source=x", 200, 404),
        ("https://w.test/moss", 200, 200),
        ("https://w.test/ferns/own", 200, 404),
    ] {
        assert_eq!(ask(&kept, "GET", url, &[]).await.0, as_recorded, "kept {url}");
        assert_eq!(ask(&held_out, "GET", url, &[]).await.0, left_out, "held out {url}");
    }
    let (_, all, _) = ask(&kept, "GET", "https://find.test/?q=fern", &[]).await;
    let (_, some, _) = ask(&held_out, "GET", "https://find.test/?q=fern", &[]).await;
    for (url, in_kept, in_held_out) in [
        ("https://w.test/ferns/own", true, false),
        ("https://w.test/ferns/private?id=7", true, false),
        ("https://w.test/moss", true, true),
    ] {
        let href = format!("href=\"{}\"", url.replace('&', "&amp;"));
        assert_eq!(
            (all.contains(&href), some.contains(&href)),
            (in_kept, in_held_out),
            "{url}\n{all}\n{some}"
        );
    }
}

/// Issue 61: the frozen search index is loaded once per process and set of snapshots, not per replay: two
/// tasks' replays (each its own snapshot first, the other as an overlay) share one load, each still answering
/// a URL both hold with its own snapshot's page; once no replay holds it, the memory is released and the
/// next replay loads it again.
#[tokio::test]
async fn replays_of_the_same_snapshots_share_one_search_index() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(&dir.path().join("store")).unwrap();
    let page =
        |t: &str| format!("<html><head><title>{t}</title></head><body><p>{t} for tea</p></body></html>");
    add_snapshot(&store, "run/a", &[("GET", "https://s.test/kettle", &page("Blue Kettle"))]);
    add_snapshot(
        &store,
        "run/b",
        &[
            ("GET", "https://s.test/teapot", &page("Teapot")),
            ("GET", "https://s.test/kettle", &page("Old Kettle")),
        ],
    );
    let replay = |own: &str, other: &str| {
        let cfg = ReplayConfig {
            inject_shim: false,
            overlays: overlay::Overlays {
                layers: vec![overlay::Overlay {
                    kind: overlay::OverlayKind::SiteUnion,
                    manifest: store.manifest(other).unwrap(),
                }],
                writes: false,
                sieve: None,
                hidden: None,
            },
            search: search::SearchConfig { mode: search::SearchMode::Fallback, urls: Vec::new() },
            ..Default::default()
        };
        Replay::new(store.clone(), store.manifest(own).unwrap(), cfg)
    };
    async fn search(r: &Replay) -> String {
        ask(r, "GET", "https://www.google.com/search?q=kettle+tea", &[]).await.1
    }
    let (a, b) = (replay("run/a", "run/b"), replay("run/b", "run/a"));
    let (page_a, page_b) = (search(&a).await, search(&b).await);
    let first = a.search_index.load();
    assert!(first.is_some(), "{page_a}");
    assert_eq!(b.search_index.load(), first, "the second task's replay shares the first's index");
    // The same files, each replay's own copy of the URL both hold.
    assert!(page_a.contains("Blue Kettle") && !page_a.contains("Old Kettle"), "{page_a}");
    assert!(page_b.contains("Old Kettle") && !page_b.contains("Blue Kettle"), "{page_b}");
    drop((a, b));
    let c = replay("run/a", "run/b");
    assert_eq!(search(&c).await, page_a);
    assert!(c.search_index.load().is_some_and(|n| Some(n) != first), "released, then loaded again");
}

/// Issue 61: held-out tasks (`webfreeze coverage`: each task's replay without its own snapshot) share
/// one load of their site's index, and each replay's view hides its own task's pages.
#[tokio::test]
async fn held_out_tasks_of_a_site_share_one_index_and_each_misses_its_own_pages() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(&dir.path().join("store")).unwrap();
    let page =
        |t: &str| format!("<html><head><title>{t}</title></head><body><p>{t} for tea</p></body></html>");
    add_snapshot(&store, "run/a", &[("GET", "https://s.test/kettle", &page("Blue Kettle"))]);
    add_snapshot(&store, "run/b", &[("GET", "https://s.test/teapot", &page("Green Teapot"))]);
    add_snapshot(&store, "run/c", &[("GET", "https://s.test/mug", &page("Red Mug"))]);
    let held_out = |own: &str| {
        let layers = ["run/a", "run/b", "run/c"]
            .into_iter()
            .filter(|n| *n != own)
            .map(|n| overlay::Overlay {
                kind: overlay::OverlayKind::SiteUnion,
                manifest: store.manifest(n).unwrap(),
            })
            .collect();
        let cfg = ReplayConfig {
            inject_shim: false,
            hide_own: true,
            overlays: overlay::Overlays { layers, ..Default::default() },
            search: search::SearchConfig { mode: search::SearchMode::Fallback, urls: Vec::new() },
            ..Default::default()
        };
        Replay::new(store.clone(), store.manifest(own).unwrap(), cfg)
    };
    let replays = [("run/a", "Blue Kettle"), ("run/b", "Green Teapot"), ("run/c", "Red Mug")]
        .map(|(own, title)| (held_out(own), title));
    let mut loads = Vec::new();
    for (r, own_title) in &replays {
        let results = ask(r, "GET", "https://www.google.com/search?q=tea", &[]).await.1;
        for (_, title) in &replays {
            assert_eq!(
                results.contains(title),
                title != own_title,
                "{own_title}'s replay: {title}\n{results}"
            );
        }
        loads.push(r.search_index.load());
    }
    assert!(loads[0].is_some());
    assert!(loads.iter().all(|l| *l == loads[0]), "one load for the site's held-out tasks: {loads:?}");
}
