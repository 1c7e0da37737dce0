//! The names a recording's snapshots take in the store (`RUN/TASK`, `RUN/TASK/explore`, `SNAPSHOT/misses`,
//! `RUN/crawl/SITE/NNN`): made by [`SnapshotName`]'s `Display` (and [`snapshot_name`], [`explore_name`],
//! [`misses_name`], [`crawl_part_name`], [`crawl_prefix`], [`recording_prefix`] through it), read back by
//! [`SnapshotName::parse`], [`task_of`] and [`recording_of`]; and the store queries by them (a site's task
//! snapshots, its crawl parts). Its own room, so that the task proxy, the frozen web, exploration, the
//! crawl, coverage, `webfreeze replay` and `snapshots merge --runs` all ask one place and none of them
//! formats or splits a name itself.

use snapshots::{Manifest, SnapshotState, Store};

use crate::error::SessionError;

/// The exploration layer of the task snapshot `snapshot` (`agent::explore`).
pub fn explore_name(snapshot: &str) -> String {
    SnapshotName::Explore { of: snapshot }.to_string()
}

/// The snapshot a replay of `snapshot` files its misses into under `--on-miss record` (`SNAPSHOT/misses`).
pub fn misses_name(snapshot: &str) -> String {
    SnapshotName::Misses { of: snapshot }.to_string()
}

/// The snapshot of task `task_id` in the recording `run`.
pub fn snapshot_name(run: &str, task_id: &str) -> String {
    SnapshotName::Task { run, task: task_id }.to_string()
}

/// The prefix every snapshot of the recording `run` starts with (`RUN/`: its tasks and what hangs off
/// them), for the store's `manifests_under`.
pub fn recording_prefix(run: &str) -> String {
    format!("{run}/")
}

/// The recording of `snapshot` when it is task `task_id`'s snapshot (`RUN/TASK`, by [`snapshot_name`]):
/// the inverse of [`snapshot_name`] for a task whose id is known.
pub fn recording_of<'a>(snapshot: &'a str, task_id: &str) -> Option<&'a str> {
    snapshot.strip_suffix(task_id)?.strip_suffix('/').filter(|r| !r.is_empty())
}

/// What a snapshot's name says it is, by the rules above.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SnapshotName<'a> {
    /// `RUN/TASK`: a task of the recording `run`.
    Task {
        /// The recording.
        run: &'a str,
        /// The task id.
        task: &'a str,
    },
    /// `SNAPSHOT/explore`: the exploration of `of`.
    Explore {
        /// The explored snapshot.
        of: &'a str,
    },
    /// `SNAPSHOT/misses`: what a replay of `of` missed (`--on-miss record`).
    Misses {
        /// The replayed snapshot.
        of: &'a str,
    },
    /// `RUN/crawl/SITE/NNN`: a part of the crawl of `site` in the recording `run`.
    CrawlPart {
        /// The recording.
        run: &'a str,
        /// The site's slug ([`site_slug`]).
        site: &'a str,
        /// The part's number (`NNN`).
        part: &'a str,
    },
    /// Any other name (`webfreeze record`, an import, a merge).
    Other(&'a str),
}

/// The name itself: `SnapshotName::parse(&n.to_string()) == n` for every name [`SnapshotName::parse`]
/// reads.
impl std::fmt::Display for SnapshotName<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SnapshotName::Task { run, task } => write!(f, "{run}/{task}"),
            SnapshotName::Explore { of } => write!(f, "{of}/explore"),
            SnapshotName::Misses { of } => write!(f, "{of}/misses"),
            SnapshotName::CrawlPart { run, site, part } => write!(f, "{run}/crawl/{site}/{part}"),
            SnapshotName::Other(name) => f.write_str(name),
        }
    }
}

impl<'a> SnapshotName<'a> {
    /// Reads a name.
    pub fn parse(name: &'a str) -> SnapshotName<'a> {
        if let Some(of) = name.strip_suffix("/explore").filter(|o| !o.is_empty()) {
            return SnapshotName::Explore { of };
        }
        if let Some(of) = name.strip_suffix("/misses").filter(|o| !o.is_empty()) {
            return SnapshotName::Misses { of };
        }
        let parts: Vec<&str> = name.split('/').collect();
        match parts.as_slice() {
            [run, task] if !run.is_empty() && !task.is_empty() => SnapshotName::Task { run, task },
            [run, "crawl", site, part] if ![run, site, part].iter().any(|p| p.is_empty()) => {
                SnapshotName::CrawlPart { run, site, part }
            }
            _ => SnapshotName::Other(name),
        }
    }
}

/// The task id of `name` when it is a task snapshot of the recording `run` (`RUN/TASK`; a deeper name,
/// such as a replay's `RUN/TASK/misses`, is not).
pub fn task_of<'a>(run: &str, name: &'a str) -> Option<&'a str> {
    name.strip_prefix(run)?.strip_prefix('/').filter(|t| !t.is_empty() && !t.contains('/'))
}

/// Why a recording's name cannot be one.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0:?} is not a recording's name (the RUN of RUN/TASK snapshots: not empty, no '/')")]
pub struct BadRecordingName(pub String);

/// Checks a recording's name (the `RUN` of `RUN/TASK`).
pub fn check_recording_name(run: &str) -> Result<(), BadRecordingName> {
    if run.is_empty() || run.contains('/') || run.contains('\n') {
        return Err(BadRecordingName(run.to_string()));
    }
    Ok(())
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

/// Part `number` (from 1) of the crawl of site `web_name` in recording `run` (`RUN/crawl/SITE/NNN`).
pub fn crawl_part_name(run: &str, web_name: &str, number: usize) -> String {
    let (site, part) = (site_slug(web_name), format!("{number:03}"));
    SnapshotName::CrawlPart { run, site: &site, part: &part }.to_string()
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
    Ok(store
        .manifests_under(&recording_prefix(run))?
        .into_iter()
        .filter(|m| {
            task_of(run, &m.name).is_some() && m.labels.get("web_name").map(String::as_str) == Some(web_name)
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
    task_of(&run, &m.name).map(|_| site_union_name(&run, &site))
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
        assert_eq!(crawl_part_name("rec", "Demo Shop", 3), "rec/crawl/Demo_Shop/003");
        assert_eq!(recording_prefix("rec"), "rec/");
        // (snapshot, task, its recording)
        for (snapshot, task, want) in [
            ("rec/t", "t", Some("rec")),
            ("runs/a/t", "t", Some("runs/a")),
            ("rec/xt", "t", None),
            ("/t", "t", None),
            ("rec/t/misses", "t", None),
        ] {
            assert_eq!(recording_of(snapshot, task), want, "{snapshot}");
        }
    }

    #[test]
    fn names_read_back_as_what_they_were_made_for() {
        let task = snapshot_name("rec", "Shop--1");
        let crawl = crawl_part_name("rec", "Demo Shop", 3);
        // (name, what it is)
        for (name, want) in [
            (task.as_str(), SnapshotName::Task { run: "rec", task: "Shop--1" }),
            (&explore_name(&task), SnapshotName::Explore { of: "rec/Shop--1" }),
            (&misses_name(&task), SnapshotName::Misses { of: "rec/Shop--1" }),
            (&misses_name("site"), SnapshotName::Misses { of: "site" }),
            (&crawl, SnapshotName::CrawlPart { run: "rec", site: "Demo_Shop", part: "003" }),
            ("site", SnapshotName::Other("site")),
            ("/t", SnapshotName::Other("/t")),
            ("a/b/c", SnapshotName::Other("a/b/c")),
            ("/misses", SnapshotName::Other("/misses")),
        ] {
            assert_eq!(SnapshotName::parse(name), want, "{name}");
            // What is read back is made again as it was.
            assert_eq!(want.to_string(), name, "{name}");
        }
        assert_eq!(task_of("rec", "rec/t"), Some("t"));
        for not in ["rec/t/misses", "rec/", "recx/t", "rec"] {
            assert_eq!(task_of("rec", not), None, "{not}");
        }
        assert!(check_recording_name("rec").is_ok());
        for bad in ["", "a/b"] {
            assert!(check_recording_name(bad).is_err(), "{bad:?}");
        }
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
