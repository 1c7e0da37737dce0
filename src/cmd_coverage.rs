//! `webfreeze coverage RUN`: the binary's side (the run's settings, progress, tables, HTML); the work is
//! `session::coverage_run`.

use std::sync::Arc;

use anyhow::Context as _;
use clock::SystemClock;
use session::{CoverageReport, FrozenWeb, RunOptions};

use crate::cli::CoverageArgs;
use crate::config::{load_ca, Config};
use crate::usage::UsageError;

pub(crate) fn run(cfg: &Config, a: CoverageArgs) -> anyhow::Result<()> {
    if a.jobs == 0 {
        return Err(UsageError("--jobs 0 would run nothing: give at least 1".into()).into());
    }
    let rf = trajectory::RunDir::new(&a.run)
        .read_run_file()
        .with_context(|| format!("{} is not a run directory", a.run.display()))?;
    if rf.mode != trajectory::RunMode::Record {
        return Err(UsageError(format!(
            "{} is a {} run: coverage re-executes a recorded run (`run --mode record`)",
            a.run.display(),
            rf.mode.as_str()
        ))
        .into());
    }
    let chrome = agent::browser::find_chrome(a.chrome.as_deref())?;
    // The re-execution uses the run's own settings: action space, observation, window, budget.
    let settings = agent::settings::Settings::resolve(&Default::default(), Some(&rf.settings.agent), None)
        .map_err(|e| UsageError(e.to_string()))?;
    let mut agent = agent::runner::AgentConfig::new(chrome.clone());
    settings.apply(&mut agent);
    let out = a.out.clone().unwrap_or_else(|| a.run.join("coverage"));
    if out.exists() {
        // Only an earlier coverage run is replaced: never a directory that holds something else.
        let earlier = out.join("coverage.json").is_file() || out.join("run.json").is_file();
        let empty = std::fs::read_dir(&out).map(|mut d| d.next().is_none()).unwrap_or(false);
        if !earlier && !empty {
            return Err(UsageError(format!(
                "{} exists and is not an earlier coverage run: give another --out",
                out.display()
            ))
            .into());
        }
        std::fs::remove_dir_all(&out).with_context(|| format!("cannot clear {}", out.display()))?;
    }
    let store = snapshots::Store::open_read_only(&cfg.store)?;
    let base = RunOptions {
        out: out.clone(),
        jobs: a.jobs,
        tasks_file: rf.tasks_file.clone(),
        ..RunOptions::scripted(
            &a.run,
            agent,
            load_ca(cfg)?,
            proxy::ProxyConfig::default(),
            Arc::new(SystemClock),
        )
    };
    let rt = tokio::runtime::Builder::new_multi_thread().enable_all().build()?;
    let progress = Arc::new(crate::output::RunProgress::new(&out));
    let report =
        rt.block_on(session::coverage_run(&a.run, store, FrozenWeb::default(), base, out.clone(), progress))?;
    let json = serde_json::to_string_pretty(&report)?;
    trajectory::write_atomic(&out.join("coverage.json"), json.as_bytes())?;
    if a.json {
        println!("{json}");
    } else {
        print!("{}", table(&report));
    }
    if let Some(p) = &a.html {
        std::fs::write(p, html(&report)).with_context(|| format!("cannot write {}", p.display()))?;
        eprintln!("wrote {}", p.display());
    }
    eprintln!("wrote {}", out.join("coverage.json").display());
    Ok(())
}

fn pct(a: usize, b: usize) -> f64 {
    if b == 0 {
        100.0
    } else {
        100.0 * a as f64 / b as f64
    }
}

fn layers(l: &std::collections::BTreeMap<String, u64>) -> String {
    l.iter().filter(|(_, v)| **v > 0).map(|(k, v)| format!("{k} {v}")).collect::<Vec<_>>().join(", ")
}

/// ` (+N apart)` when steps were counted apart.
fn apart(n: usize) -> String {
    if n == 0 {
        String::new()
    } else {
        format!(" (+{n} apart)")
    }
}

/// The per-site and per-task tables.
fn table(r: &CoverageReport) -> String {
    let mut s = format!(
        "coverage of {}: each task against the rest of its site's frozen web\n\n| site | tasks | steps served as recorded | requests by layer |\n|---|---:|---:|---|\n",
        r.run
    );
    for (site, c) in r.sites.iter().chain(std::iter::once((&"all".to_string(), &r.total))) {
        s += &format!(
            "| {site} | {} | {}/{} ({:.0}%){} | {} |\n",
            c.tasks,
            c.served,
            c.steps,
            pct(c.served, c.steps),
            apart(c.apart),
            layers(&c.layers)
        );
    }
    s += "\n| task | site | served | first miss |\n|---|---|---:|---|\n";
    for t in &r.tasks {
        let miss = match (&t.error, &t.first_miss) {
            (Some(e), _) => format!("error: {e}"),
            (None, Some((n, why))) => format!("step {n}: {why}"),
            (None, None) => "-".into(),
        };
        let write = t.unseen_write.as_ref().map(|(n, w)| format!("; state unknown after step {n}: {w}"));
        s += &format!(
            "| {} | {} | {}/{}{} | {miss}{} |\n",
            t.id,
            t.site,
            t.served,
            t.steps,
            apart(t.apart),
            write.unwrap_or_default()
        );
    }
    if r.total.apart > 0 {
        s += &format!(
            "\n{} step(s) came after a write the frozen web never saw: their state is unknown, so they are counted \
             apart and not scored (the frozen verdict's rule: `webfreeze eval` counts such runs apart).\n",
            r.total.apart
        );
    }
    if !r.unsupported_answers.is_empty() {
        s += &format!(
            "\nTasks whose reference answer is on no frozen page of their site (the frozen web cannot support it): {}\n",
            r.unsupported_answers.join("; ")
        );
    }
    s
}

/// The per-site table as a small HTML page.
fn html(r: &CoverageReport) -> String {
    maud::html! {
        (maud::DOCTYPE)
        html {
            head { meta charset="utf-8"; title { "webfreeze coverage: " (r.run) } }
            body {
                h1 { "Coverage of " (r.run) }
                p { "Each task re-executed against the rest of its site's frozen web (its own snapshot and exploration left out)." }
                table border="1" {
                    tr { th { "site" } th { "tasks" } th { "steps served as recorded" } th { "requests by layer" } }
                    @for (site, c) in &r.sites {
                        tr { td { (site) } td { (c.tasks) } td { (c.served) "/" (c.steps) " (" (format!("{:.0}%", pct(c.served, c.steps))) ")" (apart(c.apart)) } td { (layers(&c.layers)) } }
                    }
                    tr { td { b { "all" } } td { (r.total.tasks) } td { (r.total.served) "/" (r.total.steps) " (" (format!("{:.0}%", pct(r.total.served, r.total.steps))) ")" (apart(r.total.apart)) } td { (layers(&r.total.layers)) } }
                }
                @if !r.unsupported_answers.is_empty() {
                    h2 { "Answers the frozen web cannot support" }
                    ul { @for u in &r.unsupported_answers { li { (u) } } }
                }
                h2 { "Tasks" }
                table border="1" {
                    tr { th { "task" } th { "site" } th { "served" } th { "first miss" } }
                    @for t in &r.tasks {
                        tr {
                            td { (t.id) } td { (t.site) } td { (t.served) "/" (t.steps) (apart(t.apart)) }
                            td { @if let Some(e) = &t.error { "error: " (e) } @else if let Some((n, why)) = &t.first_miss { "step " (n) ": " (why) } @else { "-" } }
                        }
                    }
                }
            }
        }
    }
    .into_string()
}
