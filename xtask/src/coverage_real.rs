//! `cargo xtask bench coverage`: how much of an unseen path the frozen web serves on real applications
//! with hundreds of pages and real chrome (issue 51).
//!
//! Two applications nobody here wrote, on loopback: Debian's DokuWiki (nginx + php-fpm) seeded with
//! [`WIKI_PAGES`] generated pages in namespaces (article text, links between articles, namespace index
//! pages; the wiki's own chrome: tools, log-in, recent changes, media manager, sitemap, revisions), and
//! Debian's Python documentation (`python3-doc`, ~500 pages of real HTML with its own navigation) served by
//! nginx. Per application, [`PATHS_PER_SITE`]+ scripted paths of 6 pages, each step a content link of the
//! page before it, as an agent browses; they are recorded as tasks of one recording (`rec`), and again with
//! exploration (`rex`). Each path is then re-executed leave-one-out with `session::coverage_run` (what
//! `webfreeze coverage` runs): its own snapshot and exploration left out, against (a) the site union,
//! (b) + exploration, (c) + the frozen search engine, (d) + the site's crawl (`webfreeze snapshots crawl`
//! from the site's home page only, so no path's recording seeds it). A step is served when its URL and
//! element list equal the recording's. Steps are driven by `goto [URL]` (WebArena's action space), so a
//! script does not depend on how the observation numbers a page's links; every URL is checked to be a link
//! of the page before it.
//!
//! Cost per layer: wall time, pages, exchanges and body bytes stored.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use agent::action::ActionSpace;
use agent::runner::AgentConfig;
use anyhow::{bail, Context as _};
use clock::{Clock, SystemClock};
use proxy::CertificateAuthority;
use session::{CoverageReport, FrozenWeb, FrozenWebUnit, PolicySpec, ProxyMode, RunOptions};
use snapshots::Store;
use trajectory::TaskState;

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

fn goto(url: &str) -> String {
    format!("I open the next page. In summary, the next action I will perform is ```goto [{url}]```")
}

pub(crate) fn run() -> anyhow::Result<()> {
    let work = std::env::temp_dir().join(format!("webfreeze-bench-coverage-real-{}", std::process::id()));
    std::fs::create_dir_all(&work)?;
    #[allow(clippy::disallowed_methods)] // certificate validity needs the real time
    let now = time::OffsetDateTime::now_utc();
    let docs_paths = check_docs_paths()?;
    let (pages, links) = wiki_pages();
    eprintln!(
        "bench coverage: seeding DokuWiki with {} pages (Debian's, nginx and php-fpm on loopback)",
        pages.len()
    );
    let t0 = Instant::now();
    let page_refs: Vec<(&str, &str)> = pages.iter().map(|(a, b)| (a.as_str(), b.as_str())).collect();
    let mut wiki = demo::dokuwiki::DokuWiki::start_with(&work, &page_refs, &[("breadcrumbs", "0")])?;
    eprintln!(
        "bench coverage: wiki up in {:.0} s; serving {DOCS_ROOT} as docs.test",
        t0.elapsed().as_secs_f64()
    );
    let mut docs = demo::static_site::StaticSite::start(&work, "docs.test", Path::new(DOCS_ROOT))?;
    let mut proxy = proxy::ProxyConfig::default();
    proxy.upstream.extra_ca_files.push(wiki.ca_file.clone());
    proxy.upstream.extra_ca_files.push(docs.ca_file.clone());
    proxy.upstream.resolve.insert(("wiki.test".into(), 443), wiki.addr);
    proxy.upstream.resolve.insert(("docs.test".into(), 443), docs.addr);
    let mut paths: Vec<(&str, Vec<String>)> = wiki_paths(&links).into_iter().map(|p| (WIKI, p)).collect();
    paths.extend(docs_paths.into_iter().map(|p| (DOCS, p)));
    let tasks: Vec<agent::tasks::Task> = paths
        .iter()
        .enumerate()
        .map(|(i, (site, urls))| agent::tasks::Task {
            web_name: site.to_string(),
            id: format!("path-{i:02}"),
            question: "Browse the site.".into(),
            start_url: urls[0].clone(),
            benchmark: Default::default(),
            setup: Default::default(),
        })
        .collect();
    let script = work.join("script");
    let pairs: Vec<_> = tasks
        .iter()
        .zip(&paths)
        .map(|(t, (_, urls))| {
            let mut replies: Vec<String> = urls.iter().skip(1).map(|u| goto(u)).collect();
            replies.push("Done. In summary, the next action I will perform is ```stop [done]```".into());
            (t.clone(), replies)
        })
        .collect();
    agent::policy::write_script(&script, &pairs)?;
    let chrome = agent::browser::find_chrome(None)?;
    let mut agent = AgentConfig::new(chrome.clone());
    agent.action_space = ActionSpace::WebArena;
    agent.settle_quiet = Duration::from_millis(200);
    agent.max_steps = 10;
    let clock: Arc<dyn Clock> = Arc::new(SystemClock);
    let ca = Arc::new(CertificateAuthority::load_or_init(&work.join("home/ca"), now)?);
    let base = RunOptions {
        out: PathBuf::new(),
        mode: ProxyMode::Live,
        policy: PolicySpec::Trajectory(script.clone()),
        agent: agent.clone(),
        ca: ca.clone(),
        proxy: proxy.clone(),
        clock: clock.clone(),
        time_zone: "UTC".into(),
        locale: "en_US".into(),
        jobs: 2,
        tasks_file: "bench".into(),
        chrome_version: agent::browser::browser_version(&chrome),
        shard: None,
        task_timeout: None,
        retry_blocked: false,
        guard: None,
    };
    let rt = tokio::runtime::Builder::new_multi_thread().enable_all().build()?;
    let store_dir = work.join("home/store");
    let mut cost: Vec<(String, f64, u64, u64, u64)> = Vec::new();
    let sum_store = |prefix: &str| -> anyhow::Result<(u64, u64)> {
        let store = Store::open_read_only(&store_dir)?;
        let (mut x, mut b) = (0, 0);
        for m in store.manifests()?.iter().filter(|m| m.name.starts_with(prefix)) {
            x += m.counts.exchanges;
            b += m.counts.body_bytes;
        }
        Ok((x, b))
    };
    for (name, explore) in [("rec", false), ("rex", true)] {
        eprintln!("bench coverage: recording {} paths (explore: {explore})", tasks.len());
        let out = work.join(name);
        let mut agent = base.agent.clone();
        agent.explore = explore.then(agent::explore::ExploreOptions::default);
        let t = Instant::now();
        let mode = ProxyMode::record(Store::open(&store_dir)?, &out)?;
        let o = rt.block_on(session::run_tasks(
            RunOptions { out: out.clone(), mode, agent, ..base.clone() },
            tasks.clone(),
            std::future::pending(),
            Arc::new(()),
        ))?;
        let bad: Vec<_> = o.run_file.tasks.iter().filter(|(_, s)| s.status != TaskState::Answered).collect();
        if !bad.is_empty() {
            bail!("{name}: tasks did not answer: {bad:?}");
        }
        let pages: u64 = trajectory::RunDir::new(&out)
            .trajectories()?
            .iter()
            .map(|(_, t)| t.exploration.as_ref().map(|e| e.pages).unwrap_or(0))
            .sum();
        let (x, b) = sum_store(&format!("{name}/"))?;
        cost.push((
            format!("recording ({name}{})", if explore { ", --explore" } else { "" }),
            t.elapsed().as_secs_f64(),
            pages,
            x,
            b,
        ));
    }
    // The crawl of each site from its home page only (no path's recording seeds it), into `crawlbase`.
    for (site, home, budget) in
        [(WIKI, wiki_url("start"), 300usize), (DOCS, "https://docs.test/index.html".to_string(), 300)]
    {
        eprintln!("bench coverage: crawling {site} from {home} ({budget} pages)");
        let mut agent = base.agent.clone();
        agent.settle_quiet = Duration::from_millis(200);
        let opts = session::CrawlSiteOptions {
            agent,
            crawl: agent::crawl::CrawlOptions {
                pages: budget,
                depth: 8,
                pace: Duration::ZERO,
                robots: false,
                ..Default::default()
            },
            starts: vec![home],
            hosts: Vec::new(),
            ca: ca.clone(),
            proxy: proxy.clone(),
            clock: clock.clone(),
            state_dir: work.join("crawl-state"),
        };
        let store = Store::open(&store_dir)?;
        let r = rt.block_on(session::crawl_site(&store, "crawlbase", site, opts, &|_| {}))?;
        cost.push((
            format!("crawl of {site}"),
            r.secs,
            r.state.pages as u64,
            r.part.counts.exchanges,
            r.part.counts.body_bytes,
        ));
    }
    wiki.stop();
    docs.stop();
    // Leave-one-out re-executions, as `webfreeze coverage` runs them.
    let coverage = |run: &str, fw: FrozenWeb, tag: &str| -> anyhow::Result<CoverageReport> {
        let out = work.join(format!("cov-{tag}"));
        let r = rt.block_on(session::coverage_run(
            &work.join(run),
            Store::open_read_only(&store_dir)?,
            fw,
            RunOptions { proxy: proxy::ProxyConfig::default(), ..base.clone() },
            out,
            Arc::new(()),
        ))?;
        Ok(r)
    };
    let union =
        FrozenWeb { unit: FrozenWebUnit::Site, search: session::SearchMode::Off, ..FrozenWeb::default() };
    let mut rows: Vec<(&str, CoverageReport)> = Vec::new();
    eprintln!("bench coverage: replaying leave-one-out (a) site union");
    rows.push(("(a) site union (the merge of the other paths)", coverage("rec", union.clone(), "a")?));
    eprintln!("bench coverage: (b) + exploration");
    rows.push(("(b) + exploration", coverage("rex", union, "b")?));
    eprintln!("bench coverage: (c) + frozen search");
    rows.push(("(c) + frozen search", coverage("rex", FrozenWeb::default(), "c")?));
    // The crawl's parts join the recording with exploration as its crawl layer.
    {
        let store = Store::open(&store_dir)?;
        for site in [WIKI, DOCS] {
            for p in session::crawl_layers(&store, "crawlbase", site)? {
                let to = p.name.replacen("crawlbase/", "rex/", 1);
                store.copy_snapshot_from(&store, &p.name, &to, p.labels.clone())?;
            }
        }
    }
    eprintln!("bench coverage: (d) + crawl");
    rows.push(("(d) + crawl", coverage("rex", FrozenWeb::default(), "d")?));
    println!(
        "coverage of unseen paths on real applications ({} paths of {} pages: {} on DokuWiki ({} pages), {} on Python's documentation; leave-one-out)",
        tasks.len(),
        paths[0].1.len(),
        paths.iter().filter(|p| p.0 == WIKI).count(),
        pages.len(),
        paths.iter().filter(|p| p.0 == DOCS).count()
    );
    println!("| configuration | steps served as recorded | DokuWiki | PythonDocs | requests by layer |");
    println!("|---|---:|---:|---:|---|");
    let pct = |a: usize, b: usize| if b == 0 { 0.0 } else { 100.0 * a as f64 / b as f64 };
    for (name, r) in &rows {
        let site = |s: &str| r.sites.get(s).map(|c| format!("{}/{}", c.served, c.steps)).unwrap_or_default();
        let total_req: u64 = r.total.layers.values().sum();
        let layers: Vec<String> = r
            .total
            .layers
            .iter()
            .filter(|(_, v)| **v > 0)
            .map(|(k, v)| format!("{k} {:.0}%", 100.0 * *v as f64 / total_req.max(1) as f64))
            .collect();
        println!(
            "| {name} | {}/{} ({:.0}%) | {} | {} | {} |",
            r.total.served,
            r.total.steps,
            pct(r.total.served, r.total.steps),
            site(WIKI),
            site(DOCS),
            layers.join(", ")
        );
    }
    if let Some((_, r)) = rows.last() {
        let missed: Vec<String> = r
            .tasks
            .iter()
            .filter_map(|t| t.first_miss.as_ref().map(|(n, why)| format!("{} step {n}: {why}", t.id)))
            .collect();
        if !missed.is_empty() {
            println!("\nsteps still off the frozen web with every layer: {}", missed.join("; "));
        }
    }
    println!(
        "\n| cost | wall time | pages | exchanges stored | body bytes stored |\n|---|---:|---:|---:|---:|"
    );
    for (what, secs, pages, x, b) in &cost {
        println!("| {what} | {:.1} min | {pages} | {x} | {b} |", secs / 60.0);
    }
    let _ = std::fs::remove_dir_all(&work);
    Ok(())
}
