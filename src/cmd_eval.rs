//! `webfreeze eval`: judge a run into `RUN/eval.json` and print a table per site.

use evaluator::evaluate::{evaluate_with_progress, site_table, write_report, EvalOptions, JudgeKind};

use crate::cli::{EvalArgs, JudgeArg};
use crate::UsageError;

pub(crate) fn run(a: EvalArgs) -> anyhow::Result<()> {
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
        JudgeKind::Reference => None,
        _ => Some(trajectory::llm::Llm::new(crate::config::llm_config(&a.llm)?)?),
    };
    let opts = EvalOptions {
        judge,
        llm,
        k,
        repeats: a.repeats.max(1),
        tasks_file: a.tasks.clone(),
        reference_file: a.reference.clone(),
        score_possible: a.score_possible,
    };
    let rt = tokio::runtime::Builder::new_multi_thread().enable_all().build()?;
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
    Ok(())
}
