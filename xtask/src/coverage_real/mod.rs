//! `cargo xtask bench coverage [--app dokuwiki,pythondocs,wordpress] [--keep]`: how much of an unseen path
//! the frozen web serves on real applications with hundreds of pages and real chrome (issues 51 and 61).
//!
//! Three applications nobody here wrote, on loopback: Debian's DokuWiki (nginx + php-fpm) seeded with
//! `wiki_docs::WIKI_PAGES` generated pages in namespaces (article text, links between articles, namespace index
//! pages; the wiki's own chrome: tools, log-in, recent changes, media manager, sitemap, revisions),
//! Debian's Python documentation (`python3-doc`, ~500 pages of real HTML with its own navigation) served by
//! nginx, and Debian's WordPress on MariaDB ([`wordpress`]: 300 posts in categories and tags, paging,
//! search; the one held out: nothing in the product was tuned on it). Per application, scripted paths of 6
//! pages, each step a link of the page before it (or, on WordPress, the URL its search box sends), as an
//! agent browses; they are recorded as tasks of one recording (`rec`), and again with exploration (`rex`).
//! Each path is then re-executed leave-one-out with `session::coverage_run` (what `webfreeze coverage`
//! runs): its own snapshot and exploration left out, against (a) the site union, (b) + exploration, (c) +
//! the frozen search engine with the site's own search (`--search site`), (d) + the site's crawl
//! (`webfreeze snapshots crawl` from the site's home page only, so no path's recording seeds it, with a page
//! budget stated against the site's size). A step is served when its URL and element list equal the
//! recording's. Steps are driven by `goto [URL]` (WebArena's action space), so a script does not depend on
//! how the observation numbers a page's links; every URL is checked to be a link of the page before it.
//!
//! `--app` runs only the named applications (default: all); `--keep` keeps the work directory.
//!
//! Cost per layer: wall time, pages, exchanges and body bytes stored; the crawl's per page.

mod wiki_docs;
pub(crate) mod wordpress;

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use agent::action::ActionSpace;
use agent::runner::AgentConfig;
use anyhow::bail;
use clock::{Clock, SystemClock};
use proxy::CertificateAuthority;
use session::{CoverageReport, FrozenWeb, FrozenWebUnit, ProxyMode, RunOptions};
use snapshots::Store;
use trajectory::TaskState;

fn goto(url: &str) -> String {
    format!("I open the next page. In summary, the next action I will perform is ```goto [{url}]```")
}

/// A running application's servers, stopped when the bench is done with them (and on drop, by their
/// own types, when the bench fails).
pub(crate) trait Stop {
    fn stop(&mut self);
}

/// One scripted path: its pages, and whether it searches the site (a search box's URL among them).
pub(crate) struct AppPath {
    pub(crate) urls: Vec<String>,
    pub(crate) search: bool,
}

/// An application under the bench, serving on loopback.
pub(crate) struct App {
    /// The tasks' site (`web_name`).
    pub(crate) name: &'static str,
    pub(crate) host: &'static str,
    pub(crate) addr: std::net::SocketAddr,
    /// The origin's CA (PEM file).
    pub(crate) ca_file: PathBuf,
    pub(crate) paths: Vec<AppPath>,
    /// Where the crawl starts (the home page only: no path's recording seeds it).
    pub(crate) home: String,
    /// The crawl's page budget.
    pub(crate) budget: usize,
    /// The site's size in pages, and how it is counted.
    pub(crate) size: usize,
    pub(crate) size_note: String,
    /// The query parameter of the site's search box, when its paths search.
    pub(crate) search_field: Option<&'static str>,
    pub(crate) server: Box<dyn Stop>,
}

/// Starts an application under a directory of its own.
type Starter = fn(&Path) -> anyhow::Result<App>;

/// The applications, by `--app` name (lower case), in the bench's order.
const APPS: &[(&str, Starter)] = &[
    ("dokuwiki", wiki_docs::start_dokuwiki),
    ("pythondocs", wiki_docs::start_docs),
    ("wordpress", wordpress::start),
];

/// `bench coverage [--app NAME[,NAME]] [--keep]`: the applications to run (all by default), and whether to
/// keep the work directory (recordings, replays, logs) for a look afterwards.
pub(crate) fn run(args: &[String]) -> anyhow::Result<()> {
    let chosen: Vec<String> = args
        .iter()
        .position(|a| a == "--app")
        .and_then(|i| args.get(i + 1))
        .map(|v| v.split(',').map(|s| s.trim().to_lowercase()).collect())
        .unwrap_or_else(|| APPS.iter().map(|(n, _)| n.to_string()).collect());
    for c in &chosen {
        if !APPS.iter().any(|(n, _)| n == c) {
            bail!("--app {c}: one of {}", APPS.iter().map(|(n, _)| *n).collect::<Vec<_>>().join(", "));
        }
    }
    let keep = args.iter().any(|a| a == "--keep");
    let work = std::env::temp_dir().join(format!("webfreeze-bench-coverage-real-{}", std::process::id()));
    std::fs::create_dir_all(&work)?;
    let t_all = Instant::now();
    let mut apps = Vec::new();
    for (name, start) in APPS.iter().filter(|(n, _)| chosen.iter().any(|c| c == n)) {
        apps.push(start(&work.join(name))?);
    }
    let r = measure(&work, &mut apps);
    // Every application's servers stop here whatever happened (and on drop when this returns early).
    for a in &mut apps {
        a.server.stop();
    }
    r?;
    eprintln!("bench coverage: done in {:.1} min", t_all.elapsed().as_secs_f64() / 60.0);
    if keep {
        eprintln!("bench coverage: work directory kept: {}", work.display());
    } else {
        let _ = std::fs::remove_dir_all(&work);
    }
    Ok(())
}

/// One crawl's cost: (site, budget, size, wall seconds, pages, exchanges, body bytes).
type CrawlCost = (&'static str, usize, usize, f64, u64, u64, u64);

fn measure(work: &Path, apps: &mut [App]) -> anyhow::Result<()> {
    #[allow(clippy::disallowed_methods)] // certificate validity needs the real time
    let now = time::OffsetDateTime::now_utc();
    let mut proxy = proxy::ProxyConfig::default();
    for a in apps.iter() {
        proxy.upstream.extra_ca_files.push(a.ca_file.clone());
        proxy.upstream.resolve.insert((a.host.into(), 443), a.addr);
    }
    // Task ids: the site's prefix and the path's number within it.
    let mut paths: Vec<(&'static str, String, AppPath)> = Vec::new();
    for a in apps.iter() {
        for (i, p) in a.paths.iter().enumerate() {
            paths.push((
                a.name,
                format!("{}-{i:02}", a.name.to_lowercase()),
                AppPath { urls: p.urls.clone(), search: p.search },
            ));
        }
    }
    let tasks: Vec<agent::tasks::Task> = paths
        .iter()
        .map(|(site, id, p)| agent::tasks::Task {
            web_name: site.to_string(),
            id: id.clone(),
            question: "Browse the site.".into(),
            start_url: p.urls[0].clone(),
            benchmark: Default::default(),
            setup: Default::default(),
        })
        .collect();
    let script = work.join("script");
    let pairs: Vec<_> = tasks
        .iter()
        .zip(&paths)
        .map(|(t, (_, _, p))| {
            let mut replies: Vec<String> = p.urls.iter().skip(1).map(|u| goto(u)).collect();
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
        jobs: 2,
        ..RunOptions::scripted(&script, agent.clone(), ca.clone(), proxy.clone(), clock.clone())
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
        let trajs = trajectory::RunDir::new(&out).trajectories()?;
        // The recording walked the scripted pages (no redirect took a step elsewhere).
        for (_, t) in &trajs {
            let Some((_, _, p)) = paths.iter().find(|(_, id, _)| *id == t.task_id) else { continue };
            for (s, want) in t.steps.iter().zip(&p.urls) {
                if &s.url_before != want {
                    eprintln!(
                        "bench coverage: {name} {} step {}: at {} instead of {want}",
                        t.task_id, s.n, s.url_before
                    );
                }
            }
        }
        let pages: u64 =
            trajs.iter().map(|(_, t)| t.exploration.as_ref().map(|e| e.pages).unwrap_or(0)).sum();
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
    let mut crawls: Vec<CrawlCost> = Vec::new();
    for a in apps.iter() {
        eprintln!(
            "bench coverage: crawling {} from {} ({} pages; the site has {})",
            a.name, a.home, a.budget, a.size
        );
        let mut agent = base.agent.clone();
        agent.settle_quiet = Duration::from_millis(200);
        let opts = session::CrawlSiteOptions {
            agent,
            crawl: agent::crawl::CrawlOptions {
                pages: a.budget,
                depth: 8,
                pace: Duration::ZERO,
                robots: false,
                ..Default::default()
            },
            starts: vec![a.home.clone()],
            hosts: Vec::new(),
            ca: ca.clone(),
            proxy: proxy.clone(),
            clock: clock.clone(),
            state_dir: work.join("crawl-state"),
        };
        let store = Store::open(&store_dir)?;
        let r = rt.block_on(session::crawl_site(&store, "crawlbase", a.name, opts, &|_| {}))?;
        crawls.push((
            a.name,
            a.budget,
            a.size,
            r.secs,
            r.state.pages as u64,
            r.part.counts.exchanges,
            r.part.counts.body_bytes,
        ));
    }
    for a in apps.iter_mut() {
        a.server.stop();
    }
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
    // The frozen search with the site's own search (`--search site`): a query the paths' recordings never
    // made, sent to a search the site declares, is answered from the frozen pages.
    let search = FrozenWeb { search: session::SearchMode::Site, ..FrozenWeb::default() };
    let mut rows: Vec<(&str, &str, CoverageReport)> = Vec::new();
    eprintln!("bench coverage: replaying leave-one-out (a) site union");
    rows.push(("(a) site union (the merge of the other paths)", "a", coverage("rec", union.clone(), "a")?));
    eprintln!("bench coverage: (b) + exploration");
    rows.push(("(b) + exploration", "b", coverage("rex", union, "b")?));
    eprintln!("bench coverage: (c) + frozen search (--search site)");
    rows.push(("(c) + frozen search (`--search site`)", "c", coverage("rex", search.clone(), "c")?));
    // The crawl's parts join the recording with exploration as its crawl layer.
    {
        let store = Store::open(&store_dir)?;
        for a in apps.iter() {
            for p in session::crawl_layers(&store, "crawlbase", a.name)? {
                let to = p.name.replacen("crawlbase/", "rex/", 1);
                store.copy_snapshot_from(&store, &p.name, &to, p.labels.clone())?;
            }
        }
    }
    eprintln!("bench coverage: (d) + crawl");
    rows.push(("(d) + crawl", "d", coverage("rex", search, "d")?));
    report(work, apps, &paths, &rows, &cost, &crawls)
}

fn report(
    work: &Path,
    apps: &[App],
    paths: &[(&'static str, String, AppPath)],
    rows: &[(&str, &str, CoverageReport)],
    cost: &[(String, f64, u64, u64, u64)],
    crawls: &[CrawlCost],
) -> anyhow::Result<()> {
    let is_search = |id: &str| paths.iter().any(|(_, i, p)| i == id && p.search);
    println!(
        "coverage of unseen paths on real applications ({} paths, leave-one-out): {}",
        paths.len(),
        apps.iter()
            .map(|a| {
                let s = a.paths.iter().filter(|p| p.search).count();
                format!("{} {} paths ({s} search)", a.name, a.paths.len())
            })
            .collect::<Vec<_>>()
            .join(", ")
    );
    let searching: Vec<&App> = apps.iter().filter(|a| a.paths.iter().any(|p| p.search)).collect();
    let mut head = "| configuration | steps served as recorded |".to_string();
    for a in apps {
        head += &format!(" {} |", a.name);
    }
    for a in &searching {
        head += &format!(" {} search paths |", a.name);
    }
    println!("{head} requests by layer |");
    println!("|---|---:|{}---|", "---:|".repeat(apps.len() + searching.len()));
    let pct = |a: usize, b: usize| if b == 0 { 0.0 } else { 100.0 * a as f64 / b as f64 };
    for (name, _, r) in rows {
        let mut line = format!(
            "| {name} | {}/{} ({:.0}%) |",
            r.total.served,
            r.total.steps,
            pct(r.total.served, r.total.steps)
        );
        for a in apps {
            let c = r.sites.get(a.name).cloned().unwrap_or_default();
            line += &format!(" {}/{} ({:.0}%) |", c.served, c.steps, pct(c.served, c.steps));
        }
        for a in &searching {
            let (s, n) = r
                .tasks
                .iter()
                .filter(|t| t.site == a.name && is_search(&t.id))
                .fold((0, 0), |(s, n), t| (s + t.served, n + t.steps));
            line += &format!(" {s}/{n} |");
        }
        let total_req: u64 = r.total.layers.values().sum();
        let layers: Vec<String> = r
            .total
            .layers
            .iter()
            .filter(|(_, v)| **v > 0)
            .map(|(k, v)| format!("{k} {:.0}%", 100.0 * *v as f64 / total_req.max(1) as f64))
            .collect();
        println!("{line} {} |", layers.join(", "));
    }
    // Every step (d) does not serve as recorded, with why: the URL or the element list, and what missed.
    if let Some((_, tag, _)) = rows.last() {
        println!("\nsteps not served as recorded with every layer (d):");
        let rec = trajectory::RunDir::new(work.join("rex"));
        let rep = trajectory::RunDir::new(work.join(format!("cov-{tag}")));
        for (_, id, _) in paths {
            let (Ok(Some(o)), Ok(Some(r))) = (rec.task(id).read_trajectory(), rep.task(id).read_trajectory())
            else {
                println!("- {id}: no trajectory to compare");
                continue;
            };
            for (i, s) in o.steps.iter().enumerate() {
                let Some(x) = r.steps.get(i) else {
                    println!("- {id} step {}: the re-execution ended earlier ({:?})", s.n, r.error);
                    break;
                };
                if x.url_before == s.url_before && x.elements == s.elements {
                    continue;
                }
                let why = if x.url_before != s.url_before {
                    format!("at {} instead of {}", x.url_before, s.url_before)
                } else {
                    let (a, b): (Vec<&str>, Vec<&str>) =
                        (s.elements.lines().collect(), x.elements.lines().collect());
                    let first = a.iter().zip(&b).position(|(p, q)| p != q).unwrap_or(a.len().min(b.len()));
                    format!(
                        "{} differs ({} elements recorded, {} replayed; first difference at {}: {:?} / {:?})",
                        s.url_before,
                        a.len(),
                        b.len(),
                        first,
                        a.get(first).map(|l| l.chars().take(100).collect::<String>()),
                        b.get(first).map(|l| l.chars().take(100).collect::<String>())
                    )
                };
                // A step's counters are the requests of its action: the page it leads to. The page
                // before step n was loaded by step n-1's action (the start page's load is in no step).
                let Some(p) = i.checked_sub(1).and_then(|j| r.steps.get(j)).map(|y| &y.proxy) else {
                    println!("- {id} step {}: {why}; the start page", s.n);
                    continue;
                };
                let served_by: Vec<String> =
                    p.layers().iter().filter(|(_, n)| *n > 0).map(|(k, n)| format!("{k} {n}")).collect();
                println!(
                    "- {id} step {}: {why}; its load: {}; missed: [{}]; fuzzy: [{}]",
                    s.n,
                    served_by.join(", "),
                    p.miss_urls.join(", "),
                    p.fuzzy_urls.join(", ")
                );
            }
        }
    }
    templates(work, apps, paths)?;
    println!(
        "\n| cost | wall time | pages | exchanges stored | body bytes stored |\n|---|---:|---:|---:|---:|"
    );
    for (what, secs, pages, x, b) in cost {
        println!("| {what} | {:.1} min | {pages} | {x} | {b} |", secs / 60.0);
    }
    println!(
        "\n| crawl (from the home page only) | site's size (pages) | budget | pages crawled | wall time | s/page | exchanges | body bytes | bytes/page |\n|---|---:|---:|---:|---:|---:|---:|---:|---:|"
    );
    for (site, budget, size, secs, pages, x, b) in crawls {
        let per = (*pages).max(1) as f64;
        println!(
            "| {site} | {size} | {budget} | {pages} | {:.1} min | {:.2} | {x} | {b} | {:.0} |",
            secs / 60.0,
            secs / per,
            *b as f64 / per
        );
    }
    println!();
    for a in apps {
        println!("{}: {} pages ({})", a.name, a.size, a.size_note);
    }
    Ok(())
}

/// Which of the site's own results pages the recording holds would make a frozen-search template
/// (`replay::search::template::refill`, as replay tries them): when none does, an unrecorded query is
/// answered with webfreeze's generic results page instead of the site's.
fn templates(work: &Path, apps: &[App], paths: &[(&'static str, String, AppPath)]) -> anyhow::Result<()> {
    let store = Store::open_read_only(&work.join("home/store"))?;
    for a in apps {
        let Some(field) = a.search_field else { continue };
        let (mut pages, mut usable, mut plain) = (0, Vec::new(), 0);
        for (_, id, _) in paths.iter().filter(|(site, _, _)| *site == a.name) {
            let Ok(m) = store.manifest(&format!("rec/{id}")) else { continue };
            for x in store.exchanges(&m).filter_map(Result::ok).filter(replay::search::is_document) {
                let Ok(u) = url::Url::parse(&x.request.url) else { continue };
                let Some(old) = u.query_pairs().find(|(k, _)| k == field).map(|(_, v)| v.into_owned()) else {
                    continue;
                };
                let Some(b) = &x.response.body else { continue };
                let html = String::from_utf8_lossy(&store.blob_bytes(&b.hash)?).into_owned();
                pages += 1;
                let refill = |h: &str| {
                    replay::search::template::refill(h, &x.request.url, field, &old, "probe", &[]).is_some()
                };
                if refill(&html) {
                    usable.push(x.request.url.clone());
                } else if refill(&first_class_only(&html, "<li class=\"")) {
                    // The cause, when this is it: each result item carries classes of its own.
                    plain += 1;
                }
            }
        }
        println!(
            "\n{}: {} of {pages} recorded results pages (`?{field}=`) make a frozen-search template{}; \
             with each `<li>`'s classes cut to its first (no per-item `post-N category-x tag-y`): {} more",
            a.name,
            usable.len(),
            if usable.is_empty() { String::new() } else { format!(" ({})", usable.join(", ")) },
            plain
        );
    }
    Ok(())
}

/// `html` with the class attribute of every element opened by `open` (`<li class="`) cut to its first class.
fn first_class_only(html: &str, open: &str) -> String {
    let mut out = String::with_capacity(html.len());
    let mut rest = html;
    while let Some(i) = rest.find(open) {
        let (head, tail) = rest.split_at(i + open.len());
        out.push_str(head);
        let end = tail.find('"').unwrap_or(tail.len());
        out.push_str(tail[..end].split_whitespace().next().unwrap_or(""));
        rest = &tail[end..];
    }
    out.push_str(rest);
    out
}
