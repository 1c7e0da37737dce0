//! `webfreeze compare`: two evaluated runs side by side.

use std::path::Path;

use anyhow::Context as _;
use evaluator::compare::{compare, html, markdown};

use crate::cli::CompareArgs;

pub fn run(a: CompareArgs) -> anyhow::Result<()> {
    let c = compare(&a.run_a, &a.run_b)?;
    if a.json {
        println!("{}", serde_json::to_string_pretty(&c)?);
    } else {
        print!("{}", markdown(&c));
    }
    if let Some(p) = &a.html {
        std::fs::write(p, html(&c)).with_context(|| format!("cannot write {}", p.display()))?;
        eprintln!("wrote {}", p.display());
    }
    Ok(())
}

/// Markdown on stdout and, optionally, the HTML page (the demo's step).
pub fn print_comparison(
    a: &Path,
    b: &Path,
    html_out: Option<&Path>,
) -> anyhow::Result<evaluator::compare::Comparison> {
    let c = compare(a, b)?;
    print!("{}", markdown(&c));
    if let Some(p) = html_out {
        std::fs::write(p, html(&c)).with_context(|| format!("cannot write {}", p.display()))?;
    }
    Ok(c)
}

/// How many steps of a `trajectory:` re-run matched the original (URL and screenshot hash).
pub fn reproduction_summary(run: &Path) -> anyhow::Result<String> {
    let mut steps = 0;
    let mut same = 0;
    let mut tasks = 0;
    let mut tasks_same = 0;
    for (_, t) in evaluator::evaluate::trajectories(run)? {
        tasks += 1;
        let n = t.steps.len();
        let ok =
            t.steps.iter().filter(|s| s.reproduced.as_ref().is_some_and(|r| r.url && r.screenshot)).count();
        steps += n;
        same += ok;
        if ok == n && n > 0 {
            tasks_same += 1;
        }
    }
    Ok(format!(
        "Replay reproduced {same}/{steps} steps (URL and screenshot hash identical) and {tasks_same}/{tasks} tasks step for step."
    ))
}
