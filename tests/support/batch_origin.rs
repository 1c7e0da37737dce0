//! Pages that batch their script modules as MediaWiki's ResourceLoader does (tests/batches.rs), with a
//! module store as MediaWiki keeps one: each page defines a minimal `mw.loader` whose `implement` runs a
//! module and keeps its code in `localStorage`; a page runs the modules it needs from the store and asks
//! for the rest in one `/rl/load.php?modules=...&version=...` batch, packed and versioned as
//! ResourceLoader packs them. Which batch a page asks for therefore depends on what earlier pages stored,
//! as on a real wiki. Each module's code appends a `<p class=mod>NAME</p>`; the page is done (`#done`)
//! when its batch has run.

use http::Response;

use super::origin::{full, BoxBody};

/// The modules, their versions, and their code (each with what a naive splitter would trip on: brackets
/// in a string, a regular expression and a template literal).
const MODULES: [(&str, &str, &str); 3] = [
    ("test.a", "a1a1a", r#"var s="})(";show('test.a'+s.slice(3))"#),
    ("test.b", "b2b2b", r#"var r=/[)}]/;show('test.b'.replace(r,''))"#),
    ("test.c", "c3c3c", r#"show(`${'test.c'}`)/* ) */"#),
];

/// The pages and the modules each needs.
pub(crate) const BATCH_PAGES: [(&str, &[&str]); 2] =
    [("/rl/a", &["test.a", "test.b"]), ("/rl/b", &["test.a", "test.c"])];

/// The batch of `modules` (all with the prefix `test.`): packed, and versioned as the client does.
pub(crate) fn batch_url(modules: &[&str]) -> String {
    let packed = format!(
        "test.{}",
        modules.iter().map(|m| m.trim_start_matches("test.")).collect::<Vec<_>>().join(",")
    );
    let versions: String =
        modules.iter().filter_map(|m| MODULES.iter().find(|(n, _, _)| n == m).map(|(_, v, _)| *v)).collect();
    let version = replay::batches::fnv132(&versions);
    format!("/rl/load.php?lang=en&modules={}&skin=vector&version={version}", packed.replace(',', "%2C"))
}

/// The page's script: the store, the loader, and the batch URL of every subset of its modules left to ask
/// for (the server packs them; a real client packs them itself).
fn page_script(modules: &[&str]) -> String {
    let mut urls = Vec::new();
    for mask in 1u32..(1 << modules.len()) {
        let rest: Vec<&str> =
            modules.iter().enumerate().filter(|(i, _)| mask & (1 << i) != 0).map(|(_, m)| *m).collect();
        urls.push(format!("{:?}: {:?}", rest.join(","), batch_url(&rest)));
    }
    format!(
        "function show(n) {{ const p = document.createElement('p'); p.className = 'mod'; p.textContent = n; \
         document.body.appendChild(p); }}\n\
         function done() {{ const d = document.createElement('p'); d.id = 'done'; document.body.appendChild(d); }}\n\
         const store = JSON.parse(localStorage.getItem('store') || '{{}}');\n\
         window.mw = {{ loader: {{ state: function () {{}}, implement: function (key, f) {{\n\
           f(); store[key.split('@')[0]] = String(f); localStorage.setItem('store', JSON.stringify(store)); }} }} }};\n\
         const want = {want:?};\n\
         const rest = want.filter(m => !(m in store));\n\
         want.filter(m => m in store).forEach(m => (0, eval)('(' + store[m] + ')')());\n\
         const urls = {{ {urls} }};\n\
         if (rest.length) {{ const s = document.createElement('script'); s.src = urls[rest.join(',')]; \
         s.onload = s.onerror = done; document.head.appendChild(s); }} else {{ done(); }}",
        want = modules,
        urls = urls.join(", "),
    )
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
            let (_, modules) = BATCH_PAGES.iter().find(|(p, _)| *p == path)?;
            (
                format!(
                    "<!doctype html><html><head><title>Batches</title><link rel=icon href=\"data:,\"></head>\
                     <body><script>{}</script></body></html>",
                    page_script(modules)
                ),
                "text/html; charset=utf-8",
            )
        }
    };
    let mut r = Response::new(full(body));
    r.headers_mut().insert("content-type", ct.parse().unwrap());
    Some(r)
}
