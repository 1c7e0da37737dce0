//! Pages that batch their script modules as MediaWiki's ResourceLoader does (tests/batches.rs): each page
//! defines a minimal `mw.loader` whose `implement` runs a module at once, then loads its modules in one
//! `/rl/load.php?modules=...&version=...` batch, packed and versioned as ResourceLoader packs them; each
//! module's code appends a `<p class=mod>NAME</p>`, and a script after the batch marks the page done.

use http::Response;

use super::origin::{full, BoxBody};

/// The modules, their versions, and their code (each with what a naive splitter would trip on: brackets
/// in a string, a regular expression and a template literal).
const MODULES: [(&str, &str, &str); 3] = [
    ("test.a", "a1a1a", r#"var s="})(";show('test.a'+s.slice(3))"#),
    ("test.b", "b2b2b", r#"var r=/[)}]/;show('test.b'.replace(r,''))"#),
    ("test.c", "c3c3c", r#"show(`${'test.c'}`)/* ) */"#),
];

/// The pages: each one's packed module list.
pub(crate) const BATCH_PAGES: [(&str, &str); 3] =
    [("/rl/a", "test.a,b"), ("/rl/b", "test.a,c"), ("/rl/c", "test.c")];

/// The batch a page of [`BATCH_PAGES`] loads: `modules` packed, `version` combined as the client does.
pub(crate) fn batch_url(packed: &str) -> String {
    let versions: String = replay::batches::expand_modules(packed)
        .iter()
        .filter_map(|m| MODULES.iter().find(|(n, _, _)| n == m).map(|(_, v, _)| *v))
        .collect();
    let version = replay::batches::fnv132(&versions);
    format!("/rl/load.php?lang=en&modules={}&skin=vector&version={version}", packed.replace(',', "%2C"))
}

pub(crate) fn batch_route(uri: &http::Uri) -> Option<Response<BoxBody>> {
    let (body, ct) = match uri.path() {
        "/rl/load.php" => {
            let packed = uri
                .query()
                .unwrap_or("")
                .split('&')
                .find_map(|p| p.strip_prefix("modules="))
                .unwrap_or("")
                .replace("%2C", ",")
                .replace("%7C", "|");
            let js: String = replay::batches::expand_modules(&packed)
                .iter()
                .filter_map(|m| MODULES.iter().find(|(n, _, _)| n == m))
                .map(|(n, v, code)| {
                    format!("mw.loader.implement(\"{n}@{v}\",function($,jQuery,require,module){{{code}}});")
                })
                .collect();
            (js, "text/javascript; charset=utf-8")
        }
        path => {
            let (_, packed) = BATCH_PAGES.iter().find(|(p, _)| *p == path)?;
            (
                format!(
                    "<!doctype html><html><head><title>Batches</title><link rel=icon href=\"data:,\"></head><body>\
                     <script>function show(n){{const p=document.createElement('p');p.className='mod';\
                     p.textContent=n;document.body.appendChild(p);}}\
                     window.mw={{loader:{{implement:function(k,f){{f();}},state:function(){{}}}}}};</script>\
                     <script src=\"{}\"></script>\
                     <script>const d=document.createElement('p');d.id='done';document.body.appendChild(d);</script>\
                     </body></html>",
                    batch_url(packed)
                ),
                "text/html; charset=utf-8",
            )
        }
    };
    let mut r = Response::new(full(body));
    r.headers_mut().insert("content-type", ct.parse().unwrap());
    Some(r)
}
