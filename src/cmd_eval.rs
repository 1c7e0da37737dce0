//! `webfreeze eval`: judge a run into `RUN/eval.json` and print a table per site.

use evaluator::evaluate::{site_table, write_report, EvalOptions, JudgeKind};

use crate::cli::EvalArgs;
use crate::config::{load_ca, Config};
use crate::usage::UsageError;

pub(crate) fn run(cfg: &Config, a: EvalArgs) -> anyhow::Result<()> {
    let judge = a.judge;
    let k = match a.k.as_str() {
        "all" => None,
        n => Some(
            n.parse::<usize>().map_err(|_| UsageError(format!("--k {n:?}: expected a number or `all`")))?,
        ),
    };
    let llm = match judge {
        // Reference matchers ask the model only for WebArena's fuzzy_match / ua_match and VWA's eval_vqa:
        // when a model is configured they get it, otherwise those checks say they need one.
        JudgeKind::Reference => {
            crate::config::llm_config(&a.llm).ok().and_then(|c| trajectory::llm::Llm::new(c).ok())
        }
        _ => Some(trajectory::llm::Llm::new(crate::config::llm_config(&a.llm)?)?),
    };
    let rt = tokio::runtime::Builder::new_multi_thread().enable_all().build()?;
    let opts = EvalOptions {
        judge,
        llm,
        k,
        repeats: a.repeats.max(1),
        tasks_file: a.tasks.clone(),
        reference_file: a.reference.clone(),
        score_possible: a.score_possible,
        rescored: Default::default(),
        ssim_threshold: a.ssim_threshold,
        // Read from the store and the run by the library call.
        network: Default::default(),
        state_unknown: Default::default(),
    };
    let rescore = if a.rescore { Some(rescore(cfg, &a)?) } else { None };
    // `--rescore`'s bar first, then the judging's: each shown while it runs.
    let rescore_bar = a.rescore.then(|| crate::output::progress_bar(0, "tasks re-scored offline"));
    let judge_bar = std::sync::OnceLock::new();
    let bar_at = |bar: &indicatif::ProgressBar, done: usize, total: usize| {
        bar.set_length(total as u64);
        bar.set_position(done as u64);
    };
    let progress = session::EvalProgress {
        rescored: &|done, total, _id| {
            if let Some(bar) = &rescore_bar {
                bar_at(bar, done, total)
            }
        },
        rescore_done: &|r| {
            if let Some(bar) = &rescore_bar {
                bar.finish_and_clear();
            }
            let failed: Vec<String> =
                r.iter().filter_map(|(id, x)| x.as_ref().err().map(|e| format!("{id}: {e}"))).collect();
            eprintln!(
                "re-ran the program_html / page_image_query checks of {} task(s) offline from their snapshots{}",
                r.len() - failed.len(),
                if failed.is_empty() { String::new() } else { format!("; could not for {}", failed.join("; ")) }
            );
        },
        judged: &|done, total, _id| {
            bar_at(judge_bar.get_or_init(|| crate::output::progress_bar(0, "tasks judged")), done, total)
        },
    };
    let evaluated = rt.block_on(session::eval_run(&cfg.store, &a.run, opts, rescore, &progress)).map_err(
        |e| -> anyhow::Error {
            match e {
                // The run's recorded settings are the user's to fix, as a flag would be.
                session::SessionError::Settings(s) => UsageError(s.to_string()).into(),
                e => e.into(),
            }
        },
    )?;
    if let Some(bar) = judge_bar.get() {
        bar.finish_and_clear();
    }
    let report = evaluated.report;
    let path = write_report(&a.run, &report)?;
    if a.json {
        println!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        print!("{}", site_table(&report));
    }
    eprintln!("wrote {}", path.display());
    if let Some(dir) = &a.har {
        let (written, skipped) = session::network_events::export_har(&cfg.store, &a.run, dir)?;
        eprintln!(
            "wrote {written} HAR file(s) of the tasks' own requests into {}{}",
            dir.display(),
            if skipped.is_empty() { String::new() } else { format!("; none for {}", skipped.join("; ")) }
        );
    }
    Ok(())
}

/// `--rescore`: the browser the program_html and page_image_query checks are re-run in offline, against
/// each task's snapshot (the run's own settings are applied to it by the library).
fn rescore(cfg: &Config, a: &EvalArgs) -> anyhow::Result<session::Rescore> {
    let chrome = agent::browser::find_chrome(a.chrome.as_deref())?;
    let mut agent = agent::runner::AgentConfig::new(chrome);
    agent.shop_admin = crate::config::shop_admin();
    Ok(session::Rescore { agent, ca: load_ca(cfg)?, clock: std::sync::Arc::new(clock::SystemClock) })
}
