//! `webfreeze compare`: two evaluated runs side by side.

use anyhow::Context as _;
use evaluator::compare::{compare, html, markdown};

use crate::cli::CompareArgs;

pub(crate) fn run(a: CompareArgs) -> anyhow::Result<()> {
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
