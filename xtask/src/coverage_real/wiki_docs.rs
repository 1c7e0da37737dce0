//! The two applications the coverage bench began with: Debian's DokuWiki seeded with generated pages in
//! namespaces, and Debian's Python documentation served as static files; their scripted paths (each step a
//! link of the page before it, checked) and how each is started.

use std::collections::BTreeMap;
use std::path::Path;
use std::time::Instant;

use anyhow::{bail, Context as _};

use super::{App, AppPath, Stop};

/// Generated wiki pages.
const WIKI_PAGES: usize = 220;
/// Paths per application.
const PATHS_PER_SITE: usize = 6;
const WIKI: &str = "DokuWiki";
const DOCS: &str = "PythonDocs";
const DOCS_ROOT: &str = "/usr/share/doc/python3-doc/html";

const NAMESPACES: &[&str] = &[
    "garden", "kitchen", "birds", "rivers", "tools", "bridges", "music", "weather", "trains", "maps", "tea",
];
const WORDS: &[&str] = &[
    "the", "a", "small", "old", "green", "river", "stone", "light", "north", "winter", "market", "harbour",
    "bridge", "garden", "kettle", "copper", "valley", "lantern", "orchard", "meadow", "signal", "engine",
    "quiet", "bright", "narrow", "long", "early", "late", "keeps", "holds", "turns", "runs", "opens", "near",
    "under", "over", "beside", "with", "for", "and", "of", "in", "on", "by",
];

fn word(seed: &mut u64) -> &'static str {
    // xorshift: the same pages on every run.
    *seed ^= *seed << 13;
    *seed ^= *seed >> 7;
    *seed ^= *seed << 17;
    WORDS[(*seed % WORDS.len() as u64) as usize]
}

/// Page id -> the page's content links, in page order.
type Links = BTreeMap<String, Vec<String>>;

/// The wiki's pages (id, text) and each article's content links.
fn wiki_pages() -> (Vec<(String, String)>, Links) {
    let per_ns = WIKI_PAGES / NAMESPACES.len();
    let id = |ns: usize, i: usize| format!("{}:{}_{:02}", NAMESPACES[ns], NAMESPACES[ns], i);
    let mut seed = 0x9e37_79b9_7f4a_7c15u64;
    let mut pages = Vec::new();
    let mut links: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let mut start = "====== Test Wiki ======\nThe wiki's sections:\n".to_string();
    for (n, ns) in NAMESPACES.iter().enumerate() {
        start += &format!("  * [[{ns}:start|{}]]\n", ns.to_uppercase());
        let mut index = format!("====== {} ======\nArticles of this section:\n", ns.to_uppercase());
        for i in 0..per_ns {
            index += &format!("  * [[{}]]\n", id(n, i));
        }
        links.insert(format!("{ns}:start"), (0..per_ns).map(|i| id(n, i)).collect());
        pages.push((format!("{ns}:start"), index));
        for i in 0..per_ns {
            let targets = vec![
                id(n, (i + 1) % per_ns),
                id(n, (i + 3) % per_ns),
                id((n + 1) % NAMESPACES.len(), (i + 2) % per_ns),
                id((n + 5) % NAMESPACES.len(), (i * 7 + 1) % per_ns),
            ];
            let mut text = format!("====== {} {} ======\n", ns, i);
            for (p, t) in targets.iter().enumerate() {
                let sentence: Vec<&str> = (0..24).map(|_| word(&mut seed)).collect();
                text +=
                    &format!("{} See [[{t}]]. {}\n\n", sentence[..12].join(" "), sentence[12..].join(" "));
                if p == 1 {
                    text += "===== Details =====\n";
                }
            }
            text += &format!("Back to the [[{ns}:start|section]].\n");
            links.insert(id(n, i), targets);
            pages.push((id(n, i), text));
        }
    }
    pages.insert(0, ("start".into(), start));
    links.insert("start".into(), NAMESPACES.iter().map(|ns| format!("{ns}:start")).collect());
    (pages, links)
}

fn wiki_url(id: &str) -> String {
    format!("https://wiki.test/doku.php?id={id}")
}

/// The wiki's paths: home, a section, then content links article to article.
fn wiki_paths(links: &BTreeMap<String, Vec<String>>) -> Vec<Vec<String>> {
    (0..PATHS_PER_SITE)
        .map(|p| {
            let ns = NAMESPACES[(p * 2) % NAMESPACES.len()];
            let mut ids = vec!["start".to_string(), format!("{ns}:start")];
            let mut here = links[&format!("{ns}:start")][p % 3].clone();
            ids.push(here.clone());
            for k in 0..3 {
                here = links[&here][(p + k) % 4].clone();
                ids.push(here.clone());
            }
            ids.iter().map(|i| wiki_url(i)).collect()
        })
        .collect()
}

/// The documentation's paths (files under [`DOCS_ROOT`]), as a reader browses them.
const DOCS_PATHS: &[&[&str]] = &[
    &[
        "index.html",
        "tutorial/index.html",
        "tutorial/controlflow.html",
        "tutorial/datastructures.html",
        "tutorial/modules.html",
        "tutorial/inputoutput.html",
    ],
    &[
        "index.html",
        "library/index.html",
        "library/functions.html",
        "library/stdtypes.html",
        "library/string.html",
        "library/re.html",
    ],
    &[
        "index.html",
        "library/index.html",
        "library/filesys.html",
        "library/pathlib.html",
        "library/os.path.html",
        "library/glob.html",
    ],
    &[
        "index.html",
        "library/index.html",
        "library/fileformats.html",
        "library/configparser.html",
        "library/tomllib.html",
        "library/marshal.html",
    ],
    &[
        "index.html",
        "reference/index.html",
        "reference/lexical_analysis.html",
        "reference/datamodel.html",
        "reference/executionmodel.html",
        "reference/import.html",
    ],
    &[
        "index.html",
        "howto/index.html",
        "howto/logging.html",
        "howto/logging-cookbook.html",
        "library/logging.html",
        "library/logging.handlers.html",
    ],
    &[
        "index.html",
        "faq/index.html",
        "faq/general.html",
        "faq/programming.html",
        "faq/design.html",
        "faq/library.html",
    ],
];

/// Check each docs path step is a link of the page before it (relative hrefs resolved).
fn check_docs_paths() -> anyhow::Result<Vec<Vec<String>>> {
    let mut out = Vec::new();
    for path in DOCS_PATHS {
        for w in path.windows(2) {
            let html = std::fs::read_to_string(Path::new(DOCS_ROOT).join(w[0]))
                .with_context(|| format!("{DOCS_ROOT}/{}: apt-get install -y python3-doc", w[0]))?;
            let base = url::Url::parse(&format!("https://docs.test/{}", w[0]))?;
            let target = format!("https://docs.test/{}", w[1]);
            let linked = html.split("href=\"").skip(1).filter_map(|s| s.split('"').next()).any(|h| {
                base.join(h).map(|mut u| {
                    u.set_fragment(None);
                    u.as_str() == target
                }) == Ok(true)
            });
            if !linked {
                bail!("{} does not link {}: the path is not one a reader could click", w[0], w[1]);
            }
        }
        out.push(path.iter().map(|f| format!("https://docs.test/{f}")).collect());
    }
    Ok(out)
}

impl Stop for demo::dokuwiki::DokuWiki {
    fn stop(&mut self) {
        demo::dokuwiki::DokuWiki::stop(self);
    }
}

impl Stop for demo::static_site::StaticSite {
    fn stop(&mut self) {
        demo::static_site::StaticSite::stop(self);
    }
}

pub(super) fn start_dokuwiki(work: &Path) -> anyhow::Result<App> {
    let (pages, links) = wiki_pages();
    eprintln!(
        "bench coverage: seeding DokuWiki with {} pages (Debian's, nginx and php-fpm on loopback)",
        pages.len()
    );
    let t0 = Instant::now();
    let page_refs: Vec<(&str, &str)> = pages.iter().map(|(a, b)| (a.as_str(), b.as_str())).collect();
    let wiki = demo::dokuwiki::DokuWiki::start_with(work, &page_refs, &[("breadcrumbs", "0")])?;
    eprintln!("bench coverage: wiki up in {:.0} s", t0.elapsed().as_secs_f64());
    Ok(App {
        name: WIKI,
        host: "wiki.test",
        addr: wiki.addr,
        ca_file: wiki.ca_file.clone(),
        paths: wiki_paths(&links).into_iter().map(|urls| AppPath { urls, search: false }).collect(),
        home: wiki_url("start"),
        budget: 300,
        size: pages.len(),
        size_note: format!(
            "{} seeded pages in {} namespaces (the wiki's own tools besides)",
            pages.len(),
            NAMESPACES.len()
        ),
        search_field: None,
        server: Box::new(wiki),
    })
}

/// HTML files under `dir`, recursively.
fn html_files(dir: &Path) -> usize {
    std::fs::read_dir(dir)
        .map(|rd| {
            rd.filter_map(Result::ok)
                .map(|e| {
                    let p = e.path();
                    if p.is_dir() {
                        html_files(&p)
                    } else {
                        usize::from(p.extension().is_some_and(|x| x == "html"))
                    }
                })
                .sum()
        })
        .unwrap_or(0)
}

pub(super) fn start_docs(work: &Path) -> anyhow::Result<App> {
    let paths = check_docs_paths()?;
    eprintln!("bench coverage: serving {DOCS_ROOT} as docs.test");
    let docs = demo::static_site::StaticSite::start(work, "docs.test", Path::new(DOCS_ROOT))?;
    let size = html_files(Path::new(DOCS_ROOT));
    Ok(App {
        name: DOCS,
        host: "docs.test",
        addr: docs.addr,
        ca_file: docs.ca_file.clone(),
        paths: paths.into_iter().map(|urls| AppPath { urls, search: false }).collect(),
        home: "https://docs.test/index.html".into(),
        budget: 300,
        size,
        size_note: format!("HTML files under {DOCS_ROOT}"),
        search_field: None,
        server: Box::new(docs),
    })
}
