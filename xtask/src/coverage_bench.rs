//! `cargo xtask bench coverage`: how much of a run that did not record the snapshot the frozen web serves.
//!
//! On the demo sites and Debian's DokuWiki (nginx and php-fpm on loopback, `demo::dokuwiki`), several
//! distinct scripted paths per site are recorded as tasks of one recording (the way a benchmark records many
//! tasks per site). Each path is then replayed, leave-one-out: its task's own
//! snapshot is another path's recording of the site (what another agent left), and the site union holds
//! every other path's recording but its own. Configurations: (a) the task's snapshot only
//! (`--frozen-web task`), (b) + the site union (`--frozen-web site`), (c) + exploration (the paths recorded
//! again with `--explore`, each recording's exploration layer with it), (d) + the frozen search engine
//! (`--search fallback`). A step is served when its URL and the page as the agent saw it (the element list)
//! equal the path's own recording; requests answered are the proxy's (exact, normalised, fuzzy, explore,
//! union, search) over all it was asked. No path searches (recording one would dial a real search engine),
//! so (d) equals (c) here: the frozen search engine is measured by its tests. Exploration's cost: the two
//! recordings' wall time, pages opened and bytes stored, side by side.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use agent::runner::AgentConfig;
use anyhow::bail;
use clock::{Clock, SystemClock};
use proxy::CertificateAuthority;
use session::{FrozenWeb, FrozenWebUnit, PolicySpec, ProxyMode, RunOptions};
use snapshots::Store;
use trajectory::{RunDir, TaskState, Trajectory};

/// (site name, start page, scripted replies). Labels: the shop's home page is [0] search box, [1] its
/// button, [2] the promotion, [3..8] the products cheapest first; a product page [0] the home link; the
/// news home page [0..4] the top stories; an article [0] the home link.
const PATHS: &[(&str, &str, &[&str])] = &[
    (
        "Demo Shop",
        "https://shop.test/",
        &["Action: Click [3]", "Action: Click [0]", "Action: Click [4]", "Action: ANSWER; a"],
    ),
    (
        "Demo Shop",
        "https://shop.test/",
        &["Action: Click [4]", "Action: Click [0]", "Action: Click [5]", "Action: ANSWER; b"],
    ),
    (
        "Demo Shop",
        "https://shop.test/",
        &["Action: Click [5]", "Action: Click [0]", "Action: Click [6]", "Action: ANSWER; c"],
    ),
    (
        "Demo Shop",
        "https://shop.test/",
        &["Action: Click [6]", "Action: Click [0]", "Action: Click [7]", "Action: ANSWER; d"],
    ),
    (
        "Demo Shop",
        "https://shop.test/",
        &["Action: Click [7]", "Action: Click [0]", "Action: Click [8]", "Action: ANSWER; e"],
    ),
    (
        "Demo Shop",
        "https://shop.test/",
        &["Action: Click [2]", "Action: Click [0]", "Action: Click [3]", "Action: ANSWER; f"],
    ),
    (
        "Demo Times",
        "https://news.test/",
        &["Action: Click [0]", "Action: Click [0]", "Action: Click [1]", "Action: ANSWER; g"],
    ),
    (
        "Demo Times",
        "https://news.test/",
        &["Action: Click [1]", "Action: Click [0]", "Action: Click [2]", "Action: ANSWER; h"],
    ),
    (
        "Demo Times",
        "https://news.test/",
        &["Action: Click [2]", "Action: Click [0]", "Action: Click [3]", "Action: ANSWER; i"],
    ),
    (
        "Demo Times",
        "https://news.test/",
        &["Action: Click [3]", "Action: Click [0]", "Action: Click [4]", "Action: ANSWER; j"],
    ),
    (
        "Demo Times",
        "https://news.test/",
        &["Action: Click [4]", "Action: Click [0]", "Action: Click [0]", "Action: ANSWER; k"],
    ),
];

/// The bench's DokuWiki: a start page linking five pages, each linking back to it. Breadcrumbs are off
/// (`$conf['breadcrumbs'] = 0`): the trail lists the pages this browser session visited, so with it no
/// page could equal another path's recording of it, and its links would shift every label after them.
const WIKI_PAGES: &[(&str, &str)] = &[
    (
        "start",
        "====== Test Wiki ======\nRead about [[kettles]], [[teapots]], [[mugs]], [[jars]] and [[cups]].\n",
    ),
    ("kettles", "====== Kettles ======\nThe Blue Kettle boils a litre. Back to [[start]].\n"),
    ("teapots", "====== Teapots ======\nThe Green Teapot is on promotion. Back to [[start]].\n"),
    ("mugs", "====== Mugs ======\nThe Red Mug holds a cup. Back to [[start]].\n"),
    ("jars", "====== Jars ======\nThe Glass Jar keeps tea dry. Back to [[start]].\n"),
    ("cups", "====== Cups ======\nThe White Cup is porcelain. Back to [[start]].\n"),
];
const WIKI_SITE: &str = "DokuWiki";

fn wiki_url(id: &str) -> String {
    format!("https://wiki.test/doku.php?id={id}")
}

/// The label of the link whose text is `text` in an element list (`[n]: <a> "text"`).
fn label_of(elements: &str, text: &str) -> anyhow::Result<u32> {
    let want = format!("<a> \"{text}\"");
    elements
        .lines()
        .find(|l| l.split_once(": ").is_some_and(|(_, rest)| rest == want))
        .and_then(|l| l.strip_prefix('[')?.split(']').next()?.parse().ok())
        .ok_or_else(|| anyhow::anyhow!("no link {text:?} among the wiki page's elements:\n{elements}"))
}

#[derive(Default, Clone, Copy)]
struct Tally {
    steps: usize,
    served: usize,
    requests: u64,
    answered: u64,
}

fn read(run: &Path, id: &str) -> anyhow::Result<Trajectory> {
    RunDir::new(run)
        .task(id)
        .read_trajectory()?
        .ok_or_else(|| anyhow::anyhow!("no trajectory for {id} in {}", run.display()))
}

pub(crate) fn run() -> anyhow::Result<()> {
    let work = std::env::temp_dir().join(format!("webfreeze-bench-coverage-{}", std::process::id()));
    std::fs::create_dir_all(&work)?;
    #[allow(clippy::disallowed_methods)] // certificate validity needs the real time
    let now = time::OffsetDateTime::now_utc();
    let mut sites = demo::RunningSites::start(&work, now)?;
    eprintln!("bench coverage: starting DokuWiki (Debian's, nginx and php-fpm on loopback)");
    let mut wiki = demo::dokuwiki::DokuWiki::start_with(&work, WIKI_PAGES, &[("breadcrumbs", "0")])?;
    let mut proxy = sites.proxy_config();
    proxy.upstream.extra_ca_files.push(wiki.ca_file.clone());
    proxy.upstream.resolve.insert(("wiki.test".into(), 443), wiki.addr);
    let task = |i: usize, site: &str, start: &str| agent::tasks::Task {
        web_name: site.to_string(),
        id: format!("path-{i:02}"),
        question: "Browse the site.".into(),
        start_url: start.to_string(),
        benchmark: Default::default(),
        setup: Default::default(),
    };
    let chrome = agent::browser::find_chrome(None)?;
    let mut agent = AgentConfig::new(chrome.clone());
    agent.settle_quiet = Duration::from_millis(200);
    let clock: Arc<dyn Clock> = Arc::new(SystemClock);
    let script = work.join("script");
    let ca = Arc::new(CertificateAuthority::load_or_init(&work.join("home/ca"), now)?);
    let base = RunOptions { jobs: 2, ..RunOptions::scripted(&script, agent, ca, proxy, clock) };
    let rt = tokio::runtime::Builder::new_multi_thread().enable_all().build()?;
    let run_tasks = |what: &str, opts: RunOptions, tasks: Vec<agent::tasks::Task>| -> anyhow::Result<()> {
        let out = rt.block_on(session::run_tasks(opts, tasks, std::future::pending(), Arc::new(())))?;
        let failed: Vec<_> = out
            .run_file
            .tasks
            .iter()
            .filter(|(_, s)| {
                !matches!(s.status, TaskState::Answered | TaskState::Error | TaskState::MaxSteps)
            })
            .collect();
        if !failed.is_empty() {
            bail!("{what}: tasks did not finish: {failed:?}");
        }
        Ok(())
    };
    // The wiki's paths are scripted by link text: its pages are looked at once, live, for their labels.
    let look: Vec<agent::tasks::Task> =
        WIKI_PAGES.iter().enumerate().map(|(i, (id, _))| task(i, WIKI_SITE, &wiki_url(id))).collect();
    let answer = vec!["Thought: look.\nAction: ANSWER; seen".to_string()];
    agent::policy::write_script(
        &script,
        &look.iter().map(|t| (t.clone(), answer.clone())).collect::<Vec<_>>(),
    )?;
    let seen = work.join("look");
    run_tasks("look", RunOptions { out: seen.clone(), ..base.clone() }, look.clone())?;
    let mut elements = BTreeMap::new();
    for (t, (id, _)) in look.iter().zip(WIKI_PAGES) {
        let tr = read(&seen, &t.id)?;
        elements.insert(*id, tr.steps.first().map(|s| s.elements.clone()).unwrap_or_default());
    }
    // Path i: start, page i, back to start, page i+1, answer.
    let pages: Vec<&str> = WIKI_PAGES.iter().skip(1).map(|(id, _)| *id).collect();
    let mut paths: Vec<(String, String, Vec<String>)> = PATHS
        .iter()
        .map(|(site, start, replies)| {
            (site.to_string(), start.to_string(), replies.iter().map(|r| r.to_string()).collect())
        })
        .collect();
    for (i, p) in pages.iter().enumerate() {
        let next = pages[(i + 1) % pages.len()];
        paths.push((
            WIKI_SITE.to_string(),
            wiki_url("start"),
            vec![
                format!("Action: Click [{}]", label_of(&elements["start"], p)?),
                format!("Action: Click [{}]", label_of(&elements[p], "start")?),
                format!("Action: Click [{}]", label_of(&elements["start"], next)?),
                format!("Action: ANSWER; {p}"),
            ],
        ));
    }
    let tasks: Vec<agent::tasks::Task> =
        paths.iter().enumerate().map(|(i, (site, start, _))| task(i, site, start)).collect();
    let pairs: Vec<_> = tasks
        .iter()
        .zip(&paths)
        .map(|(t, (_, _, replies))| {
            (t.clone(), replies.iter().map(|r| format!("Thought: go.\n{r}")).collect())
        })
        .collect();
    agent::policy::write_script(&script, &pairs)?;
    let n_sites = tasks.iter().map(|t| &t.web_name).collect::<std::collections::BTreeSet<_>>().len();
    let store_dir = work.join("home/store");
    // Two recordings of the same paths: without and with exploration (its cost, and configuration (c)).
    let mut cost = Vec::new();
    for (name, explore) in [("rec", false), ("rex", true)] {
        eprintln!(
            "bench coverage: recording {} paths on {n_sites} sites ({name}, explore: {explore})",
            tasks.len()
        );
        let out = work.join(name);
        let mut agent = base.agent.clone();
        agent.explore = explore.then(agent::explore::ExploreOptions::default);
        let t0 = std::time::Instant::now();
        let mode = ProxyMode::record(Store::open(&store_dir)?, &out)?;
        run_tasks(name, RunOptions { out: out.clone(), mode, agent, ..base.clone() }, tasks.clone())?;
        let secs = t0.elapsed().as_secs_f64();
        let store = Store::open_read_only(&store_dir)?;
        let (mut exchanges, mut bytes, mut pages) = (0u64, 0u64, 0u64);
        for m in store.manifests()?.iter().filter(|m| m.name.starts_with(&format!("{name}/"))) {
            exchanges += m.counts.exchanges;
            bytes += m.counts.body_bytes;
        }
        for t in &tasks {
            pages += read(&out, &t.id)?.exploration.map(|e| e.pages).unwrap_or(0);
        }
        cost.push((name, secs, pages, exchanges, bytes));
    }
    sites.stop();
    wiki.stop();
    let rec = work.join("rec");
    // Leave-one-out recordings: `loo-R-I` holds, for every path J != I, recording R's snapshot of J (and its
    // exploration layer, if any) as task J, and as task I's own snapshot R's recording of the next path on
    // the same site.
    let store = Store::open(&store_dir)?;
    for r in ["rec", "rex"] {
        for (i, t) in tasks.iter().enumerate() {
            let same_site: Vec<usize> =
                (0..tasks.len()).filter(|&j| tasks[j].web_name == t.web_name).collect();
            let pos = same_site.iter().position(|&j| j == i).unwrap_or(0);
            let stand_in = same_site[(pos + 1) % same_site.len()];
            for (j, u) in tasks.iter().enumerate() {
                let from = if j == i { &tasks[stand_in].id } else { &u.id };
                let to = session::snapshot_name(&format!("loo-{r}-{i:02}"), &u.id);
                let src = store.manifest(&session::snapshot_name(r, from))?;
                store.copy_snapshot_from(&store, &src.name, &to, src.labels.clone())?;
                if let Ok(ex) = store.manifest(&session::explore_name(&src.name)) {
                    store.copy_snapshot_from(
                        &store,
                        &ex.name,
                        &session::explore_name(&to),
                        ex.labels.clone(),
                    )?;
                }
            }
        }
    }
    drop(store);
    let union_only =
        FrozenWeb { unit: FrozenWebUnit::Site, search: session::SearchMode::Off, ..FrozenWeb::default() };
    let configs: [(&str, &str, FrozenWeb); 4] = [
        ("(a) task snapshot only", "rec", FrozenWeb::recorded()),
        ("(b) + site union", "rec", union_only.clone()),
        ("(c) + exploration", "rex", union_only),
        ("(d) + frozen search", "rex", FrozenWeb::default()),
    ];
    let mut table: BTreeMap<usize, (String, Tally, BTreeMap<String, Tally>)> = BTreeMap::new();
    for (c, (name, r, fw)) in configs.iter().enumerate() {
        eprintln!("bench coverage: replaying {} paths leave-one-out, {name}", tasks.len());
        let mut total = Tally::default();
        let mut per_site: BTreeMap<String, Tally> = BTreeMap::new();
        for (i, t) in tasks.iter().enumerate() {
            let out = work.join(format!("replay-{c}-{i:02}"));
            let mode = ProxyMode::Replay {
                store: Store::open_read_only(&store_dir)?,
                run: format!("loo-{r}-{i:02}"),
                on_miss: session::MissPolicy::NotFound,
                frozen_web: fw.clone(),
            };
            let opts = RunOptions {
                out: out.clone(),
                mode,
                policy: PolicySpec::Trajectory(rec.clone()),
                ..base.clone()
            };
            run_tasks(name, opts, vec![t.clone()])?;
            let (mine, orig) = (read(&out, &t.id)?, read(&rec, &t.id)?);
            let mut tally = Tally::default();
            for (s, o) in mine.steps.iter().zip(&orig.steps) {
                tally.steps += 1;
                tally.served += usize::from(s.url_before == o.url_before && s.elements == o.elements);
                tally.requests += s.proxy.requests;
                tally.answered += s.proxy.requests.saturating_sub(s.proxy.missed);
            }
            tally.steps += orig.steps.len().saturating_sub(mine.steps.len());
            for (acc, add) in [(&mut total, tally), (per_site.entry(t.web_name.clone()).or_default(), tally)]
            {
                acc.steps += add.steps;
                acc.served += add.served;
                acc.requests += add.requests;
                acc.answered += add.answered;
            }
        }
        table.insert(c, (name.to_string(), total, per_site));
    }
    let record_secs = cost.first().map(|c| c.1).unwrap_or(0.0);
    println!(
        "coverage of unseen paths ({} scripted paths, {n_sites} sites, leave-one-out; recording took {record_secs:.0} s)",
        tasks.len()
    );
    println!("| configuration | steps served as recorded | requests answered | per site (steps) |");
    println!("|---|---:|---:|---|");
    for (_, (name, t, per_site)) in table {
        let pct = |a: usize, b: usize| if b == 0 { 0.0 } else { 100.0 * a as f64 / b as f64 };
        let sites: Vec<String> =
            per_site.iter().map(|(s, x)| format!("{s}: {}/{}", x.served, x.steps)).collect();
        println!(
            "| {name} | {}/{} ({:.0}%) | {}/{} ({:.0}%) | {} |",
            t.served,
            t.steps,
            pct(t.served, t.steps),
            t.answered,
            t.requests,
            pct(t.answered as usize, t.requests as usize),
            sites.join(", ")
        );
    }
    println!();
    println!(
        "exploration's cost ({} tasks, defaults: 8 links per page, 40 pages per host, depth 1)",
        tasks.len()
    );
    println!("| recording | wall time | pages explored | exchanges stored | body bytes stored |");
    println!("|---|---:|---:|---:|---:|");
    for (name, secs, pages, exchanges, bytes) in &cost {
        let what = if *name == "rex" { "with --explore" } else { "without" };
        println!(
            "| {what} | {secs:.0} s ({:.1} s per task) | {pages} | {exchanges} | {bytes} |",
            secs / tasks.len() as f64
        );
    }
    let _ = std::fs::remove_dir_all(&work);
    Ok(())
}
