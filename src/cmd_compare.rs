//! `webfreeze compare`: two evaluated runs side by side.

use anyhow::Context as _;
use evaluator::compare::{compare, html_with, markdown};

use crate::cli::CompareArgs;
use crate::config::Config;

pub(crate) fn run(cfg: &Config, a: CompareArgs) -> anyhow::Result<()> {
    if !a.more.is_empty() {
        let runs: Vec<&std::path::Path> =
            [&a.run_a, &a.run_b].into_iter().chain(&a.more).map(|p| p.as_path()).collect();
        let c = evaluator::curve::curve(&runs)?;
        if a.json {
            println!("{}", serde_json::to_string_pretty(&c)?);
        } else {
            print!("{}", evaluator::curve::markdown(&c));
        }
        if let Some(p) = &a.html {
            std::fs::write(p, evaluator::curve::html(&c))
                .with_context(|| format!("cannot write {}", p.display()))?;
            eprintln!("wrote {}", p.display());
        }
        return Ok(());
    }
    let c = compare(&a.run_a, &a.run_b)?;
    if a.json {
        println!("{}", serde_json::to_string_pretty(&c)?);
    } else {
        print!("{}", markdown(&c));
    }
    if let Some(p) = &a.html {
        // Each flipped task recorded in both runs: what changed on its site between the recordings.
        let diffs = crate::site_diff::flip_diffs(&cfg.store, &c);
        std::fs::write(p, html_with(&c, &diffs)).with_context(|| format!("cannot write {}", p.display()))?;
        eprintln!("wrote {}", p.display());
    }
    Ok(())
}
