//! Table-driven tests of batch assembly: module names, the hash, cutting, assembling, and the replay's
//! answer.

use super::*;
use crate::tests::{ask, snapshot};
use crate::ReplayConfig;

#[test]
fn packed_module_names_expand_as_resourceloader_expands_them() {
    for (packed, want) in [
        ("jquery", vec!["jquery"]),
        ("jquery,site", vec!["jquery", "site"]),
        ("jquery,site|mediawiki.String,Title", vec!["jquery", "site", "mediawiki.String", "mediawiki.Title"]),
        ("ext.foo.bar,baz|user", vec!["ext.foo.bar", "ext.foo.baz", "user"]),
        ("mediawiki.util", vec!["mediawiki.util"]),
        ("skins.vector.styles.legacy", vec!["skins.vector.styles.legacy"]),
    ] {
        assert_eq!(expand_modules(packed), want, "{packed}");
    }
}

/// Values from `fnv132` in MediaWiki 1.39's `mediawiki.loader.js`, run in Node.
#[test]
fn fnv132_is_resourceloaders_hash() {
    for (s, want) in
        [("", "ztntf"), ("abc", "irc6k"), ("1ab2c3de4f", "18vhx"), ("12s5iabcde", "pok9x"), ("é😀", "vt4z5")]
    {
        assert_eq!(fnv132(s), want, "{s:?}");
    }
}

#[test]
fn batch_requests_table() {
    let ctx = |pairs: &[(&str, &str)]| -> Vec<(String, String)> {
        pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()
    };
    for (url, want) in [
        (
            "https://w.test/w/load.php?lang=en&modules=jquery%2Csite%7Cmediawiki.String%2CTitle&skin=vector&version=abcde",
            Some(BatchRequest {
                modules: ["jquery", "site", "mediawiki.String", "mediawiki.Title"].map(String::from).to_vec(),
                version: Some("abcde".into()),
                context: ctx(&[("lang", "en"), ("skin", "vector")]),
            }),
        ),
        (
            "https://w.test/load.php?modules=a|b&debug=1",
            Some(BatchRequest {
                modules: vec!["a".into(), "b".into()],
                version: None,
                context: ctx(&[("debug", "1")]),
            }),
        ),
        // No per-module boundaries in these, or not a batch at all.
        ("https://w.test/w/load.php?lang=en&modules=site.styles&only=styles&skin=vector", None),
        ("https://w.test/w/load.php?lang=en&modules=startup&only=scripts&raw=1&skin=vector", None),
        ("https://w.test/w/load.php?lang=en&skin=vector", None),
        ("https://w.test/w/load.php?modules=a||b", None),
        ("https://w.test/w/index.php?modules=a", None),
    ] {
        assert_eq!(batch_request(url), want, "{url}");
    }
}

fn implement(name: &str, version: &str, code: &str) -> String {
    format!("mw.loader.implement(\"{name}@{version}\",function($,jQuery,require,module){{{code}}});")
}

/// A batch as ResourceLoader 1.41+ writes it.
fn impl_(name: &str, version: &str, code: &str) -> String {
    format!("mw.loader.impl(function(){{return[\"{name}@{version}\",function($,jQuery,require,module){{{code}}}];}});")
}

#[test]
fn assembling_table() {
    let a = implement("a", "1111a", "x('})')");
    let b = implement("b", "2222b", "y(/[(]/)");
    let c = impl_("m.c", "3333c", "z(`${'('}`)");
    let c_old = impl_("m.c", "0000c", "old()");
    let batch_ab = format!("{a}{b}mw.loader.state({{\"gone\":\"missing\"}});");
    let batch_c = format!("/* a comment */\n{c}");
    let batch_c_old = c_old.clone();
    let asked = |packed: &str, version: Option<&str>| BatchRequest {
        modules: expand_modules(packed),
        version: version.map(str::to_string),
        context: Vec::new(),
    };
    let rec = |bodies: &[(u64, &String)]| -> Vec<(u64, String)> {
        bodies.iter().map(|(s, b)| (*s, b.to_string())).collect()
    };
    let v_ac = fnv132("1111a3333c");
    let v_ac_old = fnv132("1111a0000c");
    type Want = Result<(Vec<String>, Vec<u64>), NotAssembled>;
    type Case<'a> = (&'a str, BatchRequest, Vec<(u64, String)>, Want);
    let cases: Vec<Case<'_>> = vec![
        (
            "two recorded batches, requested order",
            asked("m.c|a", None),
            rec(&[(3, &batch_ab), (7, &batch_c)]),
            Ok((vec![c.clone(), a.clone()], vec![7, 3])),
        ),
        (
            "the combined version matches",
            asked("a|m.c", Some(&v_ac)),
            rec(&[(3, &batch_ab), (7, &batch_c)]),
            Ok((vec![a.clone(), c.clone()], vec![3, 7])),
        ),
        (
            "a module missing",
            asked("a|m.d", None),
            rec(&[(3, &batch_ab), (7, &batch_c)]),
            Err(NotAssembled::Missing("m.d".into())),
        ),
        (
            "a module only stated is not found",
            asked("gone", None),
            rec(&[(3, &batch_ab)]),
            Err(NotAssembled::Missing("gone".into())),
        ),
        (
            "no recorded version combines to the asked one",
            asked("a|m.c", Some("zzzzz")),
            rec(&[(3, &batch_ab), (7, &batch_c)]),
            Err(NotAssembled::Version("zzzzz".into())),
        ),
        (
            "two versions recorded: the latest, unless the asked version names the other",
            asked("a|m.c", None),
            rec(&[(3, &batch_ab), (5, &batch_c_old), (7, &batch_c)]),
            Ok((vec![a.clone(), c.clone()], vec![3, 7])),
        ),
        (
            "two versions recorded: the one the asked version names",
            asked("a|m.c", Some(&v_ac_old)),
            rec(&[(3, &batch_ab), (5, &batch_c_old), (7, &batch_c)]),
            Ok((vec![a.clone(), c_old.clone()], vec![3, 5])),
        ),
        (
            "a recorded response that is not a batch is not read",
            asked("a", None),
            rec(&[(3, &format!("var x=1;{a}"))]),
            Err(NotAssembled::Missing("a".into())),
        ),
    ];
    for (what, asked, recorded, want) in cases {
        let r: Vec<Recorded<'_>> = recorded.iter().map(|(seq, body)| Recorded { seq: *seq, body }).collect();
        let got = assemble(&asked, &r);
        let want = want.map(|(parts, from)| Assembled { body: parts.join("\n"), from });
        assert_eq!(got, want, "{what}");
    }
}

#[tokio::test]
async fn replay_answers_an_unrecorded_batch_from_recorded_ones_and_reports_it() {
    let a = implement("a", "1111a", "A()");
    let b = implement("b", "2222b", "B()");
    let c = implement("m.c", "3333c", "C()");
    let ab = format!("{a}{b}");
    let version = fnv132("1111a3333c");
    let d = implement("m.d", "4", "D()");
    let (store, m) = snapshot(&[
        ("GET", "https://w.test/w/load.php?lang=en&modules=a%2Cb&skin=vector&version=xxxxx", ab.as_str()),
        ("GET", "https://w.test/w/load.php?lang=en&modules=m.c&skin=vector&version=yyyyy", c.as_str()),
        ("GET", "https://w.test/w/load.php?lang=de&modules=m.d&skin=vector", d.as_str()),
    ]);
    let r = crate::Replay::new(store, m, ReplayConfig { inject_shim: false, ..Default::default() });
    let asked = format!("https://w.test/w/load.php?lang=en&modules=a%7Cm.c&skin=vector&version={version}");
    for (url, status, body, layer) in [
        (asked.as_str(), 200, format!("{a}\n{c}"), Some(LAYER)),
        // Another version than the recorded ones combine to; a module only recorded in another language.
        (
            "https://w.test/w/load.php?lang=en&modules=a%7Cm.c&skin=vector&version=zzzzz",
            404,
            String::new(),
            None,
        ),
        ("https://w.test/w/load.php?lang=en&modules=a%7Cm.d&skin=vector", 404, String::new(), None),
    ] {
        let (s, got, h) = ask(&r, "GET", url, &[]).await;
        assert_eq!(s, status, "{url}: {got}");
        if status == 200 {
            assert_eq!(got, body, "{url}");
        }
        assert_eq!(h.get(crate::overlay::LAYER_HEADER).and_then(|v| v.to_str().ok()), layer, "{url}");
    }
    let rep = r.report();
    assert_eq!((rep.assembled_batches, rep.missed, rep.requests), (1, 2, 3), "{rep:?}");
    assert_eq!(rep.assembled[0].from, vec![0, 1]);
    assert_eq!(rep.assembled[0].url, asked);
}

/// A held-out task's replay (`hide_own`, as `webfreeze coverage` runs it) and a replay whose own snapshot
/// lacks a module: the batch is assembled from the other layers' recorded batches, its provenance named by
/// layer; a module in no layer leaves the miss a miss.
#[tokio::test]
async fn a_batch_is_assembled_from_the_other_layers_too() {
    use crate::overlay::{Overlay, OverlayKind, Overlays};
    let a = implement("a", "1111a", "A()");
    let b = implement("b", "2222b", "B()");
    let (store, own) =
        snapshot(&[("GET", "https://w.test/w/load.php?lang=en&modules=a&skin=vector", a.as_str())]);
    let other = crate::tests::add_snapshot(
        &store,
        "u",
        &[("GET", "https://w.test/w/load.php?lang=en&modules=b&skin=vector", b.as_str())],
    );
    let asked = "https://w.test/w/load.php?lang=en&modules=a%2Cb&skin=vector";
    let both = format!("{a}\n{b}");
    // (what, held out, the URL asked, status, body (empty: not checked), from, from_layers)
    type Row<'a> = (&'a str, bool, &'a str, u16, &'a str, Vec<u64>, Vec<(&'a str, u64)>);
    let rows: [Row; 3] = [
        ("own snapshot and a layer", false, asked, 200, both.as_str(), vec![0], vec![("u", 0)]),
        ("held out: the layer alone lacks a", true, asked, 404, "", vec![], vec![]),
        (
            "held out: what the layer holds",
            true,
            "https://w.test/w/load.php?lang=en&modules=b%7Cb&skin=vector",
            200,
            "",
            vec![],
            vec![("u", 0)],
        ),
    ];
    for (what, hide_own, url, status, body, from, from_layers) in rows {
        let layers = vec![Overlay { kind: OverlayKind::SiteUnion, manifest: other.clone() }];
        let r = crate::Replay::new(
            store.clone(),
            own.clone(),
            ReplayConfig {
                inject_shim: false,
                hide_own,
                overlays: Overlays { layers, ..Default::default() },
                ..Default::default()
            },
        );
        let (s, got, _) = ask(&r, "GET", url, &[]).await;
        assert_eq!(s, status, "{what}: {got}");
        if !body.is_empty() {
            assert_eq!(got, body, "{what}");
        }
        let rep = r.report();
        match rep.assembled.first() {
            Some(e) => {
                let layers: Vec<(&str, u64)> =
                    e.from_layers.iter().map(|r| (r.snapshot.as_str(), r.seq)).collect();
                assert_eq!((&e.from, layers), (&from, from_layers), "{what}");
            }
            None => assert_eq!(status, 404, "{what}"),
        }
    }
}
