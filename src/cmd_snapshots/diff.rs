//! `webfreeze snapshots diff A B`: the comparison is `snapshots::diff`, the changed pages' text
//! `crate::site_diff`; this prints them.

use anyhow::Context as _;
use snapshots::diff::{Change, ChangeKind, SnapshotDiff};
use snapshots::Store;

use crate::config::Config;
use crate::output;
use crate::site_diff::{diff_json, text_changes};

fn kind(k: ChangeKind) -> &'static str {
    match k {
        ChangeKind::Added => "added",
        ChangeKind::Removed => "removed",
        ChangeKind::Changed => "changed",
    }
}

fn counts(v: &[Change]) -> String {
    let n = |k| v.iter().filter(|c| c.kind == k).count();
    format!(
        "{} changed, {} added, {} removed",
        n(ChangeKind::Changed),
        n(ChangeKind::Added),
        n(ChangeKind::Removed)
    )
}

fn side(c: &Change) -> String {
    let s = |x: Option<&snapshots::diff::Side>| {
        x.map(|x| format!("{} {}", x.status, output::bytes(x.size))).unwrap_or_else(|| "-".into())
    };
    format!("{} -> {}", s(c.a.as_ref()), s(c.b.as_ref()))
}

pub(crate) fn run(
    cfg: &Config,
    a: &str,
    b: &str,
    as_json: bool,
    lines: usize,
    html: Option<&std::path::Path>,
) -> anyhow::Result<()> {
    let store = Store::open_read_only(&cfg.store)?;
    let d: SnapshotDiff = snapshots::diff::diff(&store, a, &store, b)?;
    if let Some(p) = html {
        let page = evaluator::compare::site_diff_page(&diff_json(&store, &d, a, b, lines));
        std::fs::write(p, page).with_context(|| format!("cannot write {}", p.display()))?;
        eprintln!("wrote {}", p.display());
    }
    if as_json {
        println!("{}", serde_json::to_string_pretty(&diff_json(&store, &d, a, b, lines))?);
        return Ok(());
    }
    println!(
        "{a} -> {b}: documents {}; resources {}; {} unchanged",
        counts(&d.documents),
        counts(&d.resources),
        d.unchanged
    );
    for c in &d.documents {
        println!("{} document {} {}  ({})", kind(c.kind), c.method, c.url, side(c));
        if c.kind == ChangeKind::Changed && lines > 0 {
            let (text, total) = text_changes(&store, c, lines);
            for l in &text {
                println!("    {l}");
            }
            if total > text.len() {
                println!("    ... {} more changed line(s) (--lines)", total - text.len());
            }
            if total == 0 {
                println!("    (same visible text: markup, scripts or styles changed)");
            }
        }
    }
    for c in &d.resources {
        let hashes = match (&c.a, &c.b) {
            (Some(x), Some(y)) if x.hash != y.hash => {
                format!("; body {} -> {}", &x.hash[..x.hash.len().min(12)], &y.hash[..y.hash.len().min(12)])
            }
            _ => String::new(),
        };
        println!("{} resource {} {}  ({}{hashes})", kind(c.kind), c.method, c.url, side(c));
    }
    Ok(())
}
