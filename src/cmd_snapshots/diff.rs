//! `webfreeze snapshots diff A B`: the comparison is `snapshots::diff`; this adds the text diff of each
//! changed page (its visible text, line by line: `evaluator::compare::changed_lines`) and prints.

use anyhow::Context as _;
use serde_json::json;
use snapshots::diff::{Change, ChangeKind, SnapshotDiff};
use snapshots::Store;

use crate::config::Config;
use crate::output;

/// The changed lines ("- old", "+ new") of a changed document's visible text, at most `max`; and how many
/// there were in all.
pub(crate) fn text_changes(store: &Store, c: &Change, max: usize) -> (Vec<String>, usize) {
    let text = |side: Option<&snapshots::diff::Side>| {
        side.filter(|s| !s.hash.is_empty())
            .and_then(|s| store.blob_bytes(&s.hash).ok())
            .map(|b| trajectory::wall::visible_text(&String::from_utf8_lossy(&b)))
            .unwrap_or_default()
    };
    let (a, b) = (text(c.a.as_ref()), text(c.b.as_ref()));
    let mut lines = evaluator::compare::changed_lines(&a, &b, usize::MAX);
    let total = lines.len();
    lines.truncate(max);
    (lines, total)
}

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

/// The diff as `--json` prints it (and the HTML reports render it): each changed document with at most
/// `lines` of its changed text.
pub(crate) fn diff_json(
    store: &Store,
    d: &SnapshotDiff,
    a: &str,
    b: &str,
    lines: usize,
) -> serde_json::Value {
    let docs: Vec<serde_json::Value> = d
        .documents
        .iter()
        .map(|c| {
            let mut v = serde_json::to_value(c).unwrap_or_default();
            if c.kind == ChangeKind::Changed {
                let (text, total) = text_changes(store, c, lines);
                v["text_changes"] = json!(text);
                v["text_lines_changed"] = json!(total);
            }
            v
        })
        .collect();
    json!({"a": a, "b": b, "documents": docs, "resources": d.resources, "unchanged": d.unchanged})
}

/// What changed on the site between the two recordings of each flipped task of a comparison whose runs
/// recorded snapshots in `store_dir` (task id -> HTML fragment). Tasks whose snapshots are not there are
/// left out, with a note on stderr.
pub(crate) fn flip_diffs(
    store_dir: &std::path::Path,
    c: &evaluator::compare::Comparison,
) -> std::collections::BTreeMap<String, String> {
    let mut out = std::collections::BTreeMap::new();
    let pairs = evaluator::compare::recorded_pairs(c);
    if pairs.is_empty() {
        return out;
    }
    let store = match Store::open_read_only(store_dir) {
        Ok(s) => s,
        Err(e) => {
            eprintln!(
                "note: no site diffs in the report: cannot open the store {}: {e}",
                store_dir.display()
            );
            return out;
        }
    };
    for (id, a, b) in pairs {
        match snapshots::diff::diff(&store, &a, &store, &b) {
            Ok(d) => {
                out.insert(id, evaluator::compare::site_diff_html(&diff_json(&store, &d, &a, &b, 20)));
            }
            Err(e) => eprintln!("note: no site diff for {id}: {e}"),
        }
    }
    out
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
