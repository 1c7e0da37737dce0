//! What changed on a site between two recordings, with each changed page's visible text diffed line by
//! line: shared by `snapshots diff`, `compare` and `demo` (their reports show the flipped tasks' site
//! diffs), so no command imports another.

use serde_json::json;
use snapshots::diff::{Change, ChangeKind, SnapshotDiff};
use snapshots::Store;

/// The changed lines ("- old", "+ new") of a changed document's visible text, at most `max`; and how many
/// there were in all.
pub(crate) fn text_changes(store: &Store, c: &Change, max: usize) -> (Vec<String>, usize) {
    let text = |side: Option<&snapshots::diff::Side>| {
        side.filter(|s| !s.hash.is_empty())
            .and_then(|s| store.blob_bytes(&s.hash).ok())
            .map(|b| wall::visible_text(&String::from_utf8_lossy(&b)))
            .unwrap_or_default()
    };
    let (a, b) = (text(c.a.as_ref()), text(c.b.as_ref()));
    let mut lines = evaluator::compare::changed_lines(&a, &b, usize::MAX);
    let total = lines.len();
    lines.truncate(max);
    (lines, total)
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
