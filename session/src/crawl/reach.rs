//! Where a crawl starts, and which of its pages only a held-out task could have led it to.
//!
//! A crawl of site S of recording R starts from the benchmark's start pages (each task snapshot's first
//! top-level document: where the task began) and any `--start` URL, not from every page every task
//! recorded: a crawl seeded with a task's own pages serves that task its own pages when it is held out
//! (`webfreeze coverage`), which flatters coverage.
//!
//! A task's start page is public: it is in the task file, every agent starts there, so what the crawl finds
//! from it is what any agent on the task could find. A task's other recorded documents are its own: the
//! path its recording agent took. The crawl keeps, per page, the seeds that reached it
//! (`agent::crawl::CrawlState::reached`). A page whose every seed is a document of one task and of no other,
//! and neither a start page nor a `--start` URL, is that task's private page: the crawl found it only
//! through the task's own path (a crawl begun before the crawl kept to start pages, resumed: its queue still
//! holds every recorded document, each its own seed). Each crawl part keeps the private pages in its
//! `crawl_private` label (JSON: task snapshot name -> URLs); a replay that leaves its own snapshot out
//! (`FrozenWeb::leave_out_own`) hides them ([`hidden_for`]), as `webfreeze coverage`'s answer audit does.

use std::collections::{BTreeMap, BTreeSet};

use snapshots::Manifest;
#[cfg(feature = "run")]
use snapshots::{Exchange, Store};

#[cfg(feature = "run")]
use crate::error::SessionError;

/// The label of a crawl part that names each task's private pages.
pub(crate) const PRIVATE_LABEL: &str = "crawl_private";

#[cfg(feature = "run")]
/// Whether a recorded exchange is a page the browser showed in its tab: a document ([`replay::search::
/// is_document`]) fetched as the top-level document (`Sec-Fetch-Dest: document`, or no such header: a HAR
/// or an older recording), not a frame's (an iframe, an ad frame, a third party's widget).
pub(crate) fn top_level_document(x: &Exchange) -> bool {
    replay::search::is_document(x)
        && x.request.header("sec-fetch-dest").is_none_or(|v| v.eq_ignore_ascii_case("document"))
}

#[cfg(feature = "run")]
/// The start page of each task snapshot in `members`: its first top-level document (task snapshot name,
/// URL). A snapshot with none is left out.
pub(crate) fn start_pages(
    store: &Store,
    members: &[Manifest],
) -> Result<Vec<(String, String)>, SessionError> {
    let mut out = Vec::new();
    for m in members {
        for x in store.exchanges(m) {
            let x = x?;
            if top_level_document(&x) {
                out.push((m.name.clone(), x.request.url.clone()));
                break;
            }
        }
    }
    Ok(out)
}

#[cfg(feature = "run")]
/// Each task's private pages (see the module docs): `reached` is the crawl's seeds per page, `documents` each
/// task's recorded documents (task, URLs), `public` the start pages and `--start` URLs.
pub(crate) fn private_pages(
    reached: &BTreeMap<String, BTreeSet<String>>,
    documents: &[(String, BTreeSet<String>)],
    public: &BTreeSet<String>,
) -> BTreeMap<String, BTreeSet<String>> {
    // A seed is a task's own when it is one task's recorded document, of no other, and not public.
    let owner = |seed: &str| -> Option<&str> {
        if public.contains(seed) {
            return None;
        }
        let mut tasks = documents.iter().filter(|(_, docs)| docs.contains(seed)).map(|(t, _)| t.as_str());
        let first = tasks.next()?;
        tasks.next().is_none().then_some(first)
    };
    let mut out: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (page, seeds) in reached {
        let mut owners = seeds.iter().map(|s| owner(s));
        let Some(Some(first)) = owners.next() else { continue };
        if owners.all(|o| o == Some(first)) {
            out.entry(first.to_string()).or_default().insert(page.clone());
        }
    }
    out
}

#[cfg(feature = "run")]
/// The `crawl_private` label's value for `private`.
pub(crate) fn label_value(private: &BTreeMap<String, BTreeSet<String>>) -> String {
    serde_json::to_string(private).unwrap_or_else(|_| "{}".into())
}

/// The pages the crawl parts `parts` reached only through task snapshot `task`'s own recorded documents
/// (never a start page or a `--start` URL, which are public): hidden from that task's leave-one-out replay. A label that does not read is said and hides nothing.
pub(crate) fn hidden_for<'a>(parts: impl IntoIterator<Item = &'a Manifest>, task: &str) -> BTreeSet<String> {
    parts.into_iter().flat_map(|m| hidden_in(&m.name, &m.labels, task)).collect()
}

/// [`hidden_for`] of one part, by its name and labels.
fn hidden_in(part: &str, labels: &BTreeMap<String, String>, task: &str) -> BTreeSet<String> {
    let Some(v) = labels.get(PRIVATE_LABEL) else { return BTreeSet::new() };
    match serde_json::from_str::<BTreeMap<String, BTreeSet<String>>>(v) {
        Ok(mut private) => private.remove(task).unwrap_or_default(),
        Err(e) => {
            tracing::warn!("{part}: its {PRIVATE_LABEL} label does not read ({e})");
            BTreeSet::new()
        }
    }
}

#[cfg(all(test, feature = "run"))]
mod tests {
    use super::*;

    fn set(xs: &[&str]) -> BTreeSet<String> {
        xs.iter().map(|x| x.to_string()).collect()
    }

    /// Issue 61 part 2: a page is a task's private page only when every seed that reached it is a document
    /// of that task alone, and no start page or `--start` URL.
    #[test]
    fn private_pages_are_those_only_one_tasks_own_path_reached() {
        let home = "https://w.test/";
        let deep = "https://w.test/cat/ferns";
        let mine = "https://w.test/t3/path";
        let theirs = "https://w.test/t4/path";
        let shared = "https://w.test/shared/path";
        let asked = "https://w.test/asked";
        let documents: Vec<(String, BTreeSet<String>)> = vec![
            ("r/t1".into(), set(&[home, shared])),
            ("r/t2".into(), set(&[home])),
            ("r/t3".into(), set(&[deep, mine, shared, asked])),
            ("r/t4".into(), set(&[theirs])),
        ];
        // Every task's start page, and what the user asked for with --start.
        let public = set(&[home, deep, theirs, asked]);
        let reached: BTreeMap<String, BTreeSet<String>> = [
            ("https://w.test/a", set(&[home])),
            ("https://w.test/from-deep", set(&[deep])),
            ("https://w.test/t3/next", set(&[mine])),
            ("https://w.test/t3/also-home", set(&[mine, home])),
            ("https://w.test/t3/also-4", set(&[mine, theirs])),
            ("https://w.test/from-shared", set(&[shared])),
            ("https://w.test/from-asked", set(&[asked])),
            ("https://w.test/nothing", set(&[])),
            (mine, set(&[mine])),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v))
        .collect();
        let p = private_pages(&reached, &documents, &public);
        let want: BTreeMap<String, BTreeSet<String>> =
            [("r/t3".to_string(), set(&["https://w.test/t3/next", mine]))].into_iter().collect();
        assert_eq!(p, want);
        // Through the label, per held-out task.
        let part = BTreeMap::from([(PRIVATE_LABEL.to_string(), label_value(&p))]);
        let broken = BTreeMap::from([(PRIVATE_LABEL.to_string(), "not json".to_string())]);
        assert_eq!(hidden_in("c/1", &part, "r/t3"), set(&["https://w.test/t3/next", mine]));
        assert_eq!(hidden_in("c/1", &part, "r/t1"), set(&[]));
        assert_eq!(hidden_in("c/2", &broken, "r/t3"), set(&[]));
        assert_eq!(hidden_in("c/3", &BTreeMap::new(), "r/t3"), set(&[]));
    }
}
