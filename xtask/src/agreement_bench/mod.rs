//! `cargo xtask bench agreement`: does a frozen verdict equal the live one on real applications nobody
//! here wrote (issue 59, part 5)?
//!
//! Three applications from Debian (`apps`): DokuWiki (files) and MediaWiki (SQLite), each served by nginx +
//! php-fpm on loopback, anyone may edit, with a few pages, state tasks that edit a page; and, held out (its
//! tasks written before the bench first ran on it), WordPress on MariaDB with a few posts, state tasks that
//! post a comment through the form under a post. Each is scored by `program_html` on the page. Each task is recorded by one scripted agent (with its state probes); each
//! application is then crawled from its start page, freshly restored (the state every task starts from), into
//! the recording's crawl layer. Then other agents run each task, each **live on a freshly restored
//! application** and **frozen on the recording with its crawl** (the site union and the crawl, as
//! `run --mode replay` does), and both verdicts are printed side by side:
//!
//! - scripted variants: the recording's own writes (`same`); none (`answers`: it only answers; `looks`:
//!   it opens the page and answers); the write twice (`repeats`); another text (`other`); a preview
//!   instead of a save (`previews`; not on WordPress, whose comment form has no preview);
//! - a seeded stochastic policy (`random-N`) that takes other paths: it may open other pages, edit with
//!   the task's text or another, preview, save or not, in an order drawn from its seed.
//!
//! Each disagreement is explained: `state unknown` (counted apart: the write named), `coverage miss` (the
//! frozen web missed a page the run asked for), or `defect` (neither: a bug). Targets: among the runs
//! scored frozen, verdicts agree >= 98%; runs counted apart <= 10% of all. `--app dokuwiki|mediawiki|wordpress`
//! runs one (default: all three); `--crawl-pages N` sets the crawl's budget (0: no crawl); `--hog N` keeps N
//! threads spinning for the whole bench (a loaded machine: issue 61 part 5's ResourceLoader race, which a
//! quiet machine does not lose). Each application's table ends with the script batches of its frozen runs:
//! how many were assembled from recorded ones (`replay::batches`) and how many `load.php` requests missed.

mod apps;
mod load;

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use agent::action::ActionSpace;
use agent::runner::AgentConfig;
use anyhow::{bail, Context as _};
use clock::{Clock, SystemClock};
use evaluator::evaluate::{EvalOptions, EvalReport};
use proxy::CertificateAuthority;
use session::{FrozenWeb, ProxyMode, RunOptions};
use snapshots::Store;

use apps::App;
use load::{Batches, Hogs};

/// Stochastic agents per task.
const RANDOM_AGENTS: u64 = 3;

fn reply(action: &str) -> String {
    format!("In summary, the next action I will perform is ```{action}```")
}

/// The ids of the form's controls in the observation (the agent's element numbers); no preview on a form
/// without one.
#[derive(Debug, Clone, Copy)]
struct EditForm {
    text: u32,
    save: u32,
    preview: Option<u32>,
}

/// The element of an observation line naming every word of `what` (case-insensitive), e.g. `[12] textbox ''`.
fn element(elements: &str, what: &[&str]) -> Option<u32> {
    elements.lines().find_map(|l| {
        let low = l.to_ascii_lowercase();
        if !what.iter().all(|w| low.contains(w)) {
            return None;
        }
        let open = l.find('[')?;
        let close = l[open..].find(']')? + open;
        l[open + 1..close].trim().parse().ok()
    })
}

/// The first element naming one of the alternatives in `words`.
fn element_of(elements: &str, words: &[&[&str]]) -> Option<u32> {
    words.iter().find_map(|w| element(elements, w))
}

fn state_task(app: &App, id: &str, page: &str, text: &str) -> serde_json::Value {
    let must: Vec<&str> = text.lines().map(|l| l.trim().trim_start_matches("* ").trim()).collect();
    let key = app.key;
    serde_json::json!({
        "sites": [key.to_ascii_lowercase()], "task_id": id, "require_login": false, "storage_state": null,
        "start_url": format!("__{key}__{}", (app.page_path)(app.start)), "geolocation": null, "require_reset": true,
        "viewport_size": {"width": 1280, "height": app.viewport_height},
        "intent": (app.intent)(page, text),
        "eval": {"eval_types": ["program_html"], "reference_answers": null, "reference_url": "", "url_note": "",
                 "program_html": [{"url": format!("__{key}__{}", (app.page_path)(page)),
                                   "locator": app.locator,
                                   "required_contents": {"must_include": must}}]},
    })
}

/// A small seeded generator (xorshift): the same agents on every run.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn pick(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// The form as the agent first finds it, and after its first save (on a page that lists what was saved
/// above its form, a blog post's comments, the form's element numbers move: [`App::lists_writes`]).
#[derive(Debug, Clone, Copy)]
struct Forms {
    first: EditForm,
    later: EditForm,
}

/// The agents of one task: (name, replies).
fn agents(app: &App, page: &str, text: &str, other: &str, forms: Forms) -> Vec<(String, Vec<String>)> {
    let edit = |t: &str, form: EditForm| {
        vec![
            reply(&format!("goto [{}]", app.edit_url(page))),
            reply(&format!("type [{}] [{}] [0]", form.text, t.replace('\n', "\\n"))),
            reply(&format!("click [{}]", form.save)),
        ]
    };
    let (first, later) = (forms.first, forms.later);
    let done = reply("stop [done]");
    let with_done = |mut v: Vec<String>| {
        v.push(done.clone());
        v
    };
    let mut out = vec![
        ("same".to_string(), with_done(edit(text, first))),
        ("answers".to_string(), vec![done.clone()]),
        ("looks".to_string(), with_done(vec![reply(&format!("goto [{}]", app.page_url(page)))])),
        ("repeats".to_string(), with_done([edit(text, first), edit(text, later)].concat())),
        ("other".to_string(), with_done(edit(other, first))),
    ];
    if let Some(preview) = first.preview {
        out.push((
            "previews".to_string(),
            with_done(vec![
                reply(&format!("goto [{}]", app.edit_url(page))),
                reply(&format!("type [{}] [{}] [0]", first.text, text.replace('\n', "\\n"))),
                reply(&format!("click [{preview}]")),
            ]),
        ));
    }
    for seed in 1..=RANDOM_AGENTS {
        let mut rng = Rng(0x9e37_79b9_7f4a_7c15 ^ (seed * 0x1000_0001) ^ page.len() as u64);
        let mut replies = Vec::new();
        // Whether it has saved yet: the form it then finds is `later`.
        let mut saved = false;
        for _ in 0..1 + rng.pick(3) {
            let form = if saved { later } else { first };
            match rng.pick(4) {
                0 => {
                    let (p, _) = app.pages[rng.pick(app.pages.len() as u64) as usize];
                    replies.push(reply(&format!("goto [{}]", app.page_url(p))));
                }
                1 => {
                    let t = if rng.pick(2) == 0 { text } else { other };
                    replies.push(reply(&format!("goto [{}]", app.edit_url(page))));
                    replies.push(reply(&format!("type [{}] [{}] [0]", form.text, t.replace('\n', "\\n"))));
                    // Drawn on every app (the same agents on the wikis as before); no preview: a save.
                    let click = match (rng.pick(3), form.preview) {
                        (0, Some(preview)) => preview,
                        _ => {
                            saved = true;
                            form.save
                        }
                    };
                    replies.push(reply(&format!("click [{click}]")));
                }
                2 => {
                    replies.extend(edit(text, form));
                    saved = true;
                }
                _ => replies.push(reply(&format!("goto [{}]", app.page_url(page)))),
            }
        }
        out.push((format!("random-{seed}"), with_done(replies)));
    }
    out
}

/// One verdict: Some(success) when scored, Err(why) when counted apart.
type Verdict = Result<bool, String>;

fn verdict(r: &EvalReport, id: &str) -> Verdict {
    match r.tasks.iter().find(|t| t.id == id) {
        Some(t) if t.state_unknown.is_some() => {
            Err(format!("state unknown: {}", t.state_unknown.clone().unwrap_or_default()))
        }
        // A navigation the frozen web could not answer: a coverage miss, not an unknown state.
        Some(_) if r.off_snapshot.iter().any(|o| o == id) => {
            Err("coverage miss: a page the agent navigated to was not on the frozen web (off snapshot)"
                .into())
        }
        Some(t) if t.scored => Ok(t.success),
        // A wall the runner stopped at (WordPress's 429 to a second comment within 15 s): not scored.
        Some(t) if t.blocked.is_some() => {
            Err(format!("blocked: {}", t.error.clone().unwrap_or_else(|| "by the site".into())))
        }
        Some(t) => Err(format!("not scored: {}", t.reference_error.clone().unwrap_or_default())),
        None => Err("no trajectory".into()),
    }
}

fn show(v: &Verdict) -> String {
    match v {
        Ok(true) => "success".into(),
        Ok(false) => "FAIL".into(),
        Err(_) => "apart".into(),
    }
}

/// One row: task, agent, live verdict, frozen verdict, why they differ.
type Row = (String, String, Verdict, Verdict, String);

/// What a crawl did: pages loaded, seconds.
type CrawlCost = Option<(usize, f64)>;

/// `cargo xtask bench agreement [--app dokuwiki|mediawiki] [--crawl-pages N]`.
pub(crate) fn run(args: &[String]) -> anyhow::Result<()> {
    let mut only: Option<String> = None;
    let mut crawl_pages = 40usize;
    let mut hogs = 0usize;
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "--app" => {
                only = Some(
                    it.next().context("--app needs dokuwiki, mediawiki or wordpress")?.to_ascii_lowercase(),
                )
            }
            "--crawl-pages" => {
                crawl_pages =
                    it.next().context("--crawl-pages needs a number")?.parse().context("--crawl-pages")?
            }
            "--hog" => hogs = it.next().context("--hog needs a number")?.parse().context("--hog")?,
            other => bail!(
                "bench agreement: unknown argument {other:?} (--app dokuwiki|mediawiki|wordpress, --crawl-pages N, \
                 --hog N)"
            ),
        }
    }
    let mut all: Vec<(&'static str, Vec<Row>, CrawlCost)> = Vec::new();
    let all_apps = [&apps::DOKUWIKI, &apps::MEDIAWIKI, &apps::WORDPRESS];
    if let Some(o) = only.as_deref() {
        if !all_apps.iter().any(|a| a.name.eq_ignore_ascii_case(o)) {
            bail!("--app {o}: one of dokuwiki, mediawiki, wordpress");
        }
    }
    let _hogs = (hogs > 0).then(|| {
        eprintln!("bench agreement: {hogs} thread(s) spinning for the whole bench (--hog)");
        Hogs::start(hogs)
    });
    for app in all_apps {
        if only.as_deref().is_some_and(|o| o != app.name.to_ascii_lowercase()) {
            continue;
        }
        let (rows, crawl, batches) = run_app(app, crawl_pages)?;
        print_table(app, &rows, crawl);
        println!(
            "\nscript batches over {}'s {} frozen runs{}: {} `load.php` request(s), {} assembled from recorded ones, {} \
             missed",
            app.name,
            batches.runs,
            if hogs > 0 { format!(" ({hogs} hog thread(s) spinning)") } else { String::new() },
            batches.asked,
            batches.assembled,
            batches.missed
        );
        all.push((app.name, rows, crawl));
    }
    if all.len() > 1 {
        let rows: Vec<Row> = all.iter().flat_map(|(_, r, _)| r.clone()).collect();
        summary(&format!("All {} applications", all.len()), &rows);
    }
    Ok(())
}

/// Record, crawl and run every agent of `app`'s tasks live and frozen; the rows, the crawl's (pages, s) and
/// the frozen runs' script batches.
fn run_app(app: &App, crawl_pages: usize) -> anyhow::Result<(Vec<Row>, CrawlCost, Batches)> {
    let slug = app.name.to_ascii_lowercase();
    let work = std::env::temp_dir().join(format!("webfreeze-bench-agreement-{}-{slug}", std::process::id()));
    std::fs::create_dir_all(&work)?;
    #[allow(clippy::disallowed_methods)] // certificate validity needs the real time
    let now = time::OffsetDateTime::now_utc();
    let restored = |n: &str| apps::restore(app, &work.join("apps").join(n));
    let chrome = agent::browser::find_chrome(None)?;
    let mut agent_cfg = AgentConfig::new(chrome.clone());
    agent_cfg.action_space = ActionSpace::WebArena;
    agent_cfg.settle_quiet = Duration::from_millis(200);
    agent_cfg.max_steps = 16;
    let clock: Arc<dyn Clock> = Arc::new(SystemClock);
    let ca = Arc::new(CertificateAuthority::load_or_init(&work.join("home/ca"), now)?);
    let store_dir = work.join("home/store");
    let rt = tokio::runtime::Builder::new_multi_thread().enable_all().build()?;
    let sites = agent::tasks::Sites::from_pairs(&[format!("{}=https://{}", app.key, app.host)])?;
    let tasks_file = work.join("tasks.json");
    let specs: Vec<serde_json::Value> =
        app.tasks.iter().map(|(id, page, text, _)| state_task(app, id, page, text)).collect();
    std::fs::write(&tasks_file, serde_json::to_string_pretty(&specs)?)?;
    let tasks = agent::tasks::load_with_sites(&tasks_file, &sites)?;
    let proxy_to = |origin: Option<&apps::Running>| {
        let mut proxy = proxy::ProxyConfig::default();
        if let Some(w) = origin {
            proxy.upstream.extra_ca_files.push(w.ca_file());
            proxy.upstream.resolve.insert((app.host.into(), 443), w.addr());
        }
        proxy
    };
    let options = |origin: Option<&apps::Running>, out: &Path, mode: ProxyMode, script: &Path| RunOptions {
        out: out.to_path_buf(),
        mode,
        tasks_file: tasks_file.display().to_string(),
        task_timeout: Some(Duration::from_secs(120)),
        ..RunOptions::scripted(script, agent_cfg.clone(), ca.clone(), proxy_to(origin), clock.clone())
    };
    let run_one = |opts: RunOptions, task: &agent::tasks::Task| -> anyhow::Result<()> {
        rt.block_on(session::run_tasks(opts, vec![task.clone()], std::future::pending(), Arc::new(())))?;
        Ok(())
    };
    let score = |run: &Path| -> anyhow::Result<EvalReport> {
        let opts = EvalOptions::reference();
        // The one library call `webfreeze eval` makes: the network events and the runs counted apart
        // are read from the store here.
        let quiet = session::EvalProgress::quiet();
        Ok(rt.block_on(session::eval_run(&store_dir, run, opts, None, &quiet))?.report)
    };

    // The form's element numbers, read off a live observation of it: `name`'s run of `replies` on the first
    // task, its observation at `step`.
    let look = |name: &str, replies: Vec<String>, step: usize| -> anyhow::Result<EditForm> {
        let origin = restored(name)?;
        let script = work.join(format!("{name}-script"));
        let t = &tasks[0];
        agent::policy::write_script(&script, &[(t.clone(), replies)])?;
        let out = work.join(name);
        run_one(options(Some(&origin), &out, ProxyMode::Live, &script), t)?;
        let tr = trajectory::RunDir::new(&out).task(&t.id).read_trajectory()?.context("the look run")?;
        let elements = tr.steps.get(step).map(|s| s.elements.clone()).unwrap_or_default();
        let found = (
            element_of(&elements, app.text_words),
            element_of(&elements, app.save_words),
            app.preview_words.map(|w| element_of(&elements, w)),
        );
        Ok(match found {
            (Some(text), Some(save), None) => EditForm { text, save, preview: None },
            (Some(text), Some(save), Some(Some(preview))) => EditForm { text, save, preview: Some(preview) },
            _ => {
                bail!(
                    "{}: {name}: the form's controls were not found in its observation:\n{elements}",
                    app.name
                )
            }
        })
    };
    eprintln!("bench agreement: {}: reading the form's element numbers", app.name);
    let (page0, text0) = (app.tasks[0].1, app.tasks[0].2);
    let goto_form = reply(&format!("goto [{}]", app.edit_url(page0)));
    let first = look("look", vec![goto_form.clone(), reply("stop [done]")], 1)?;
    // Where the page lists what was saved above the form, its numbers after one save (the first task's).
    let later = if app.lists_writes {
        let replies = vec![
            goto_form.clone(),
            reply(&format!("type [{}] [{}] [0]", first.text, text0.replace('\n', "\\n"))),
            reply(&format!("click [{}]", first.save)),
            goto_form,
            reply("stop [done]"),
        ];
        look("look-later", replies, 4)?
    } else {
        first
    };
    let form = Forms { first, later };
    eprintln!("bench agreement: {}: form {form:?}", app.name);

    // Record each task with the agent that makes its edit.
    let rec = work.join("rec");
    for (t, (_, page, text, other)) in tasks.iter().zip(app.tasks) {
        let origin = restored(&format!("rec-{}", t.id))?;
        let script = work.join(format!("script-rec-{}", t.id));
        let same = agents(app, page, text, other, form).remove(0).1;
        agent::policy::write_script(&script, &[(t.clone(), same)])?;
        let mode = ProxyMode::record(Store::open(&store_dir)?, &rec)?;
        run_one(options(Some(&origin), &rec, mode, &script), t)?;
    }
    let recorded = score(&rec)?;
    for (t, _) in tasks.iter().zip(app.tasks) {
        if verdict(&recorded, &t.id) != Ok(true) {
            bail!("{}: the recording agent did not succeed live: {:?}", t.id, verdict(&recorded, &t.id));
        }
    }
    let run_name = trajectory::RunDir::new(&rec)
        .read_run_file()?
        .snapshots
        .context("the recording kept no snapshot names")?;

    // The crawl of the application as every task finds it (freshly restored), from its start page.
    let crawl = if crawl_pages == 0 {
        None
    } else {
        let origin = restored("crawl")?;
        let web_name = tasks[0].web_name.clone();
        eprintln!("bench agreement: {}: crawling {web_name} ({crawl_pages} pages at most)", app.name);
        let opts = session::CrawlSiteOptions {
            agent: agent_cfg.clone(),
            crawl: agent::crawl::CrawlOptions {
                pages: crawl_pages,
                depth: 3,
                pace: Duration::ZERO,
                robots: false,
                ..Default::default()
            },
            starts: vec![app.page_url(app.start)],
            hosts: Vec::new(),
            ca: ca.clone(),
            proxy: proxy_to(Some(&origin)),
            clock: clock.clone(),
            state_dir: work.join("crawl-state"),
        };
        let store = Store::open(&store_dir)?;
        let r = rt.block_on(session::crawl_site(&store, &run_name, &web_name, opts, &|_| {}))?;
        Some((r.state.pages, r.secs))
    };

    // Every agent live on a restored application and frozen on the recording with its crawl.
    let mut rows: Vec<Row> = Vec::new();
    let mut batches = Batches::default();
    for (t, (_, page, text, other)) in tasks.iter().zip(app.tasks) {
        for (name, replies) in agents(app, page, text, other, form) {
            let script = work.join(format!("script-{}-{name}", t.id));
            agent::policy::write_script(&script, &[(t.clone(), replies)])?;
            let live_out = work.join(format!("live-{}-{name}", t.id));
            {
                let origin = restored(&format!("live-{}-{name}", t.id))?;
                run_one(options(Some(&origin), &live_out, ProxyMode::Live, &script), t)?;
            }
            let frozen_out = work.join(format!("frozen-{}-{name}", t.id));
            let mode = ProxyMode::Replay {
                store: Store::open_read_only(&store_dir)?,
                run: run_name.clone(),
                on_miss: session::MissPolicy::NotFound,
                frozen_web: FrozenWeb::default(),
            };
            run_one(options(None, &frozen_out, mode, &script), t)?;
            batches.add(&frozen_out, &t.id);
            let (live, frozen) = (verdict(&score(&live_out)?, &t.id), verdict(&score(&frozen_out)?, &t.id));
            let why = explain(&live, &frozen, &frozen_out, &t.id);
            eprintln!(
                "bench agreement: {} {name}: live {} frozen {} {why}",
                t.id,
                show(&live),
                show(&frozen)
            );
            rows.push((t.id.clone(), name, live, frozen, why));
        }
    }
    Ok((rows, crawl, batches))
}

/// Why a frozen verdict is not the live one ("" when they agree).
fn explain(live: &Verdict, frozen: &Verdict, frozen_run: &Path, id: &str) -> String {
    match (live, frozen) {
        // Said first (the summary counts by it); a live run not scored either is said after it.
        (Err(l), Err(why)) if why.starts_with("state unknown") || why.starts_with("coverage miss") => {
            format!("{why}; the live run was not scored either ({l})")
        }
        (_, Err(why)) if why.starts_with("state unknown") || why.starts_with("coverage miss") => why.clone(),
        (_, Err(why)) => format!("not scored frozen: {why}"),
        (Ok(a), Ok(b)) if a == b => String::new(),
        (Err(why), _) => format!("the live run was not scored: {why}"),
        (Ok(_), Ok(_)) => {
            let misses = trajectory::RunDir::new(frozen_run)
                .task(id)
                .read_trajectory()
                .ok()
                .flatten()
                .and_then(|t| t.proxy_report)
                .and_then(|r| {
                    r.replay().map(|r| {
                        r.misses.iter().map(|m| format!("{} {}", m.method, m.url)).collect::<Vec<_>>()
                    })
                })
                .unwrap_or_default();
            if misses.is_empty() {
                "defect: the frozen web answered every request and the verdict differs".into()
            } else {
                format!("coverage miss: {}", misses.join(", "))
            }
        }
    }
}

fn print_table(app: &App, rows: &[Row], crawl: CrawlCost) {
    let name = app.name;
    println!("\n### {name}\n\n| task | agent | live | frozen | why they differ |\n|---|---|---|---|---|");
    for (id, name, live, frozen, why) in rows {
        println!("| {id} | {name} | {} | {} | {why} |", show(live), show(frozen));
    }
    match crawl {
        Some((pages, secs)) => println!("\ncrawl of {name}: {pages} pages in {secs:.1} s"),
        None => println!("\nno crawl of {name}"),
    }
    if app.preview_words.is_none() {
        println!("\n`previews` does not apply to {name} (its form has no preview): not run");
    }
    summary(name, rows);
}

fn summary(what: &str, rows: &[Row]) {
    let all = rows.len();
    let scored: Vec<_> = rows.iter().filter(|r| r.3.is_ok() && r.2.is_ok()).collect();
    let agree = scored.iter().filter(|r| r.2 == r.3).count();
    let apart = rows.iter().filter(|r| r.3.as_ref().is_err_and(|w| w.starts_with("state unknown"))).count();
    let unscored = rows.iter().filter(|r| r.3.is_err()).count() - apart;
    let mut by_cause: BTreeMap<&str, usize> = BTreeMap::new();
    for r in rows.iter().filter(|r| !r.4.is_empty()) {
        *by_cause.entry(r.4.split(':').next().unwrap_or("")).or_default() += 1;
    }
    println!(
        "\n{what}: {all} runs; scored frozen {}: verdicts agree on {agree} ({:.1}%, target >= 98%); counted apart for an unknown state {apart} ({:.1}% of all, target <= 10%); not scored frozen for a coverage miss {unscored}; differences by cause: {by_cause:?}",
        scored.len(),
        100.0 * agree as f64 / scored.len().max(1) as f64,
        100.0 * apart as f64 / all.max(1) as f64,
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn elements_are_found_by_their_words() {
        let obs = "[3] link 'Edit'\n[12] textbox '' multiline\n[13] button 'Save'\n[14] button 'Preview'";
        assert_eq!(element(obs, &["textbox"]), Some(12));
        assert_eq!(element(obs, &["button", "save"]), Some(13));
        assert_eq!(element(obs, &["button", "preview"]), Some(14));
        assert_eq!(element(obs, &["checkbox"]), None);
        let first = EditForm { text: 12, save: 13, preview: Some(14) };
        let form = Forms { first, later: first };
        let app = &apps::DOKUWIKI;
        let a = agents(app, "garden:tomatoes", "x", "y", form);
        assert_eq!(a.len(), 6 + RANDOM_AGENTS as usize);
        assert!(a.iter().all(|(_, r)| r.last().is_some_and(|l| l.contains("stop ["))));
        assert_eq!(agents(app, "garden:tomatoes", "x", "y", form), a, "seeded: the same agents every run");
        assert_eq!(
            element_of("[4] textbox 'Summary'\n[5] textbox '' multiline", apps::MEDIAWIKI.text_words),
            Some(5)
        );
        // WordPress's comment form: no preview, so no `previews` agent; its random agents save instead.
        let wp = &apps::WORDPRESS;
        let obs = "[3]: <input type=search> \"Search\"\n[9]: <textarea>\n[13]: <input type=submit> \"Post Comment\"";
        let first = EditForm { text: 9, save: 13, preview: None };
        let form = Forms { first, later: EditForm { text: 11, save: 15, preview: None } };
        assert_eq!(element_of(obs, wp.text_words), Some(9));
        assert_eq!(element_of(obs, wp.save_words), Some(13));
        let a = agents(wp, "tea", "x", "y", form);
        assert_eq!(a.len(), 5 + RANDOM_AGENTS as usize);
        assert!(!a.iter().any(|(n, _)| n == "previews"));
        assert!(a.iter().flat_map(|(_, r)| r).all(|r| !r.contains("click [14]")));
        // The second comment is typed into the form as it is after the first (below that comment).
        let repeats = &a.iter().find(|(n, _)| n == "repeats").expect("repeats").1;
        assert!(
            repeats[1].contains("type [9]")
                && repeats[4].contains("type [11]")
                && repeats[5].contains("click [15]")
        );
        assert_eq!((wp.page_path)(wp.start), "/");
        assert_eq!(wp.edit_url("tea"), "https://blog.test/tea/");
    }
}
