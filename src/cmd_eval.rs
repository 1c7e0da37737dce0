//! `webfreeze eval`: judge a run into `RUN/eval.json` and print a table per site.

use evaluator::evaluate::{evaluate_with_progress, site_table, write_report, EvalOptions, JudgeKind};

use crate::cli::{EvalArgs, JudgeArg};
use crate::config::{load_ca, Config};
use crate::usage::UsageError;

pub(crate) fn run(cfg: &Config, a: EvalArgs) -> anyhow::Result<()> {
    let judge = match a.judge {
        JudgeArg::Llm => JudgeKind::Llm,
        JudgeArg::Reference => JudgeKind::Reference,
        JudgeArg::Both => JudgeKind::Both,
    };
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
    let rescored = if a.rescore { rescore(cfg, &a, &rt)? } else { Default::default() };
    let opts = EvalOptions {
        judge,
        llm,
        k,
        repeats: a.repeats.max(1),
        tasks_file: a.tasks.clone(),
        reference_file: a.reference.clone(),
        score_possible: a.score_possible,
        rescored,
        ssim_threshold: a.ssim_threshold,
        network: crate::network_events::for_run(&cfg.store, &a.run),
        state_unknown: session::frozen_verdict::counted_apart(&cfg.store, &a.run),
    };
    let bar = crate::output::progress_bar(0, "tasks judged");
    let report = rt.block_on(evaluate_with_progress(&a.run, &opts, &|done, total, _id| {
        bar.set_length(total as u64);
        bar.set_position(done as u64);
    }))?;
    bar.finish_and_clear();
    let path = write_report(&a.run, &report)?;
    if a.json {
        println!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        print!("{}", site_table(&report));
    }
    eprintln!("wrote {}", path.display());
    if let Some(dir) = &a.har {
        let (written, skipped) = crate::network_events::export_har(&cfg.store, &a.run, dir)?;
        eprintln!(
            "wrote {written} HAR file(s) of the tasks' own requests into {}{}",
            dir.display(),
            if skipped.is_empty() { String::new() } else { format!("; none for {}", skipped.join("; ")) }
        );
    }
    Ok(())
}

/// `--rescore`: the program_html and page_image_query checks re-run offline against each task's snapshot.
fn rescore(cfg: &Config, a: &EvalArgs, rt: &tokio::runtime::Runtime) -> anyhow::Result<session::Rescored> {
    let chrome = agent::browser::find_chrome(a.chrome.as_deref())?;
    let store = snapshots::Store::open_read_only(&cfg.store)?;
    let ca = load_ca(cfg)?;
    // The re-execution uses the run's own settings: action space, observation, window, budget.
    let rf = trajectory::RunDir::new(&a.run).read_run_file()?;
    let settings = agent::settings::Settings::resolve(&Default::default(), Some(&rf.config), None)
        .map_err(|e| UsageError(e.to_string()))?;
    let mut agent = agent::runner::AgentConfig::new(chrome);
    settings.apply(&mut agent);
    agent.shop_admin = crate::config::shop_admin();
    let bar = crate::output::progress_bar(0, "tasks re-scored offline");
    let clock: std::sync::Arc<dyn clock::Clock> = std::sync::Arc::new(clock::SystemClock);
    let r = rt.block_on(session::rescore_run(
        &a.run,
        store,
        ca,
        &agent,
        proxy::ProxyConfig::default(),
        clock,
        &|done, total, _id| {
            bar.set_length(total as u64);
            bar.set_position(done as u64);
        },
    ))?;
    bar.finish_and_clear();
    let failed: Vec<String> =
        r.iter().filter_map(|(id, x)| x.as_ref().err().map(|e| format!("{id}: {e}"))).collect();
    eprintln!(
        "re-ran the program_html / page_image_query checks of {} task(s) offline from their snapshots{}",
        r.len() - failed.len(),
        if failed.is_empty() { String::new() } else { format!("; could not for {}", failed.join("; ")) }
    );
    Ok(r)
}
