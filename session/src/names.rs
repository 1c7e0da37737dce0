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
        .manifests_under(&prefix)?
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
        .manifests_under(&prefix)?
        .into_iter()
        .filter(|m| {
            m.name.strip_prefix(&prefix).is_some_and(|t| !t.is_empty() && !t.contains('/'))
                && m.labels.get("web_name").map(String::as_str) == Some(web_name)
        })
        .collect())
}

/// The name of the site union of site `web_name` in recording `run` in the store (`Store::join_union`):
/// its task snapshots, their explorations and its crawl parts. A newline cannot be in a snapshot name.
pub fn site_union_name(run: &str, web_name: &str) -> String {
    format!("site union\n{run}\n{web_name}")
}

/// The site union snapshot `m` is a layer of, by its name and labels: a task snapshot `RUN/TASK` labelled
/// with its run and site, its exploration `RUN/TASK/explore`, or a crawl part `RUN/crawl/SITE/NNN`. None
/// for any other snapshot (a replay's misses, an import, a merge).
pub fn site_union_of(store: &Store, m: &Manifest) -> Option<String> {
    let label = |m: &Manifest, k: &str| m.labels.get(k).filter(|v| !v.is_empty()).cloned();
    if let Some(task) = label(m, "explore_of") {
        if m.name != explore_name(&task) {
            return None;
        }
        let (run, _) = task.rsplit_once('/')?;
        let site = label(m, "web_name")
            .or_else(|| store.manifest(&task).ok().and_then(|t| label(&t, "web_name")))?;
        return Some(site_union_name(run, &site));
    }
    let (run, site) = (label(m, "run")?, label(m, "web_name")?);
    if let Some(of) = label(m, "crawl_of") {
        return m.name.starts_with(&crawl_prefix(&run, &of)).then(|| site_union_name(&run, &site));
    }
    let task = m.name.strip_prefix(&run)?.strip_prefix('/')?;
    (!task.is_empty() && !task.contains('/')).then(|| site_union_name(&run, &site))
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

    #[test]
    fn which_snapshots_are_layers_of_a_site_union() {
        let store = Store::in_memory();
        let make = |name: &str, labels: &[(&str, &str)]| {
            let w = store
                .create_snapshot(snapshots::NewSnapshot {
                    name: name.into(),
                    created_ms: 1,
                    seed: snapshots::Seed { start_ms: 1, time_zone: "UTC".into() },
                    source: snapshots::SnapshotSource::Record,
                    labels: labels.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect(),
                })
                .unwrap();
            w.finalize(2).unwrap()
        };
        let shop = Some(site_union_name("runs/a", "Shop"));
        for (name, labels, want) in [
            ("runs/a/t1", &[("run", "runs/a"), ("web_name", "Shop")][..], shop.clone()),
            ("runs/a/t1/explore", &[("explore_of", "runs/a/t1")][..], shop.clone()),
            (
                "runs/a/crawl/Shop/001",
                &[("run", "runs/a"), ("web_name", "Shop"), ("crawl_of", "Shop")][..],
                shop,
            ),
            // Not layers of a union: a replay's misses, a snapshot with no site, another run's label.
            ("runs/a/t1/misses", &[("run", "runs/a"), ("web_name", "Shop")][..], None),
            ("site", &[][..], None),
            ("runs/a/t2", &[("run", "runs/b"), ("web_name", "Shop")][..], None),
            ("runs/a/t3", &[("run", "runs/a")][..], None),
            ("runs/a/x/explore", &[("explore_of", "runs/a/t1")][..], None),
        ] {
            let m = make(name, labels);
            assert_eq!(site_union_of(&store, &m), want, "{name}");
        }
    }
}
