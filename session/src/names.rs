//! The names a recording's snapshots take in the store (`RUN/TASK`, `RUN/TASK/explore`,
//! `RUN/crawl/SITE/NNN`), and the store queries by them (a site's task snapshots, its crawl parts). Its own
//! room, so that the task proxy, the frozen web, exploration, the crawl and coverage all ask one place and
//! none of them depends on another for a name.

use snapshots::{Manifest, SnapshotState, Store};

use crate::error::SessionError;

/// The exploration layer of the task snapshot `snapshot` (`agent::explore`).
pub fn explore_name(snapshot: &str) -> String {
    format!("{snapshot}/explore")
}

/// The snapshot a replay of `snapshot` files its misses into under `--on-miss record` (`SNAPSHOT/misses`).
pub fn misses_name(snapshot: &str) -> String {
    format!("{snapshot}/misses")
}

/// The snapshot of task `task_id` in the recording `run`.
pub fn snapshot_name(run: &str, task_id: &str) -> String {
    format!("{run}/{task_id}")
}

/// A site name as a snapshot-name piece (`[A-Za-z0-9._-]`, others `_`).
pub fn site_slug(web_name: &str) -> String {
    let s: String = web_name
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-') { c } else { '_' })
        .collect();
    if s.is_empty() {
        "_".into()
    } else {
        s
    }
}

/// The prefix of the crawl parts of site `web_name` in recording `run`.
pub fn crawl_prefix(run: &str, web_name: &str) -> String {
    format!("{run}/crawl/{}/", site_slug(web_name))
}

/// The crawl parts of site `web_name` in recording `run`, in order (a part still recording is left out; an
/// interrupted one keeps every exchange it completed).
pub fn crawl_layers(store: &Store, run: &str, web_name: &str) -> Result<Vec<Manifest>, SessionError> {
    let prefix = crawl_prefix(run, web_name);
    let mut parts: Vec<Manifest> = store
        .manifests()?
        .into_iter()
        .filter(|m| m.name.starts_with(&prefix) && m.state != SnapshotState::Recording)
        .collect();
    parts.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(parts)
}

/// The task snapshots of recording `run` on site `web_name` (`<run>/<task>`, labelled with the site).
pub fn site_snapshots(store: &Store, run: &str, web_name: &str) -> Result<Vec<Manifest>, SessionError> {
    let prefix = format!("{run}/");
    Ok(store
        .manifests()?
        .into_iter()
        .filter(|m| {
            m.name.strip_prefix(&prefix).is_some_and(|t| !t.is_empty() && !t.contains('/'))
                && m.labels.get("web_name").map(String::as_str) == Some(web_name)
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slugs_and_prefixes() {
        assert_eq!(explore_name("r/t"), "r/t/explore");
        assert_eq!(misses_name("r/t"), "r/t/misses");
        assert_eq!(snapshot_name("r", "t"), "r/t");
        assert_eq!(site_slug("Demo Shop"), "Demo_Shop");
        assert_eq!(site_slug(""), "_");
        assert_eq!(crawl_prefix("runs-rec", "DokuWiki"), "runs-rec/crawl/DokuWiki/");
    }
}
