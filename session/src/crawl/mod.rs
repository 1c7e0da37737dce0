//! `webfreeze snapshots crawl`: a site's crawl as a layer of the frozen web.
//!
//! The crawl of site S of recording R starts from every document R's snapshots of S recorded (the
//! benchmark's start URLs among them) and any start URL given, and walks the site in the browser
//! (`agent::crawl`) through a recording proxy behind the side-effect guard. Each invocation records one
//! part, `R/crawl/<site>/NNN`; its state (queue, pages done, contents seen) is kept in a file after every
//! page, so a stopped crawl (Ctrl-C, a crash) resumes with the next invocation: no page is loaded twice.
//!
//! Replay consults the crawl's parts after the task's own snapshot, its exploration and the site union
//! (`frozen_web::layers`): a page a task of the benchmark recorded carries the state and the moment that
//! task saw, which is closer to what another agent on the same task would have seen than a crawl's; the
//! crawl is the widest and most generic layer, so it comes last.

use snapshots::{Manifest, SnapshotState, Store};

use crate::error::SessionError;

#[cfg(feature = "run")]
mod site;
#[cfg(feature = "run")]
pub use site::{crawl_site, CrawlReport, CrawlSiteOptions, SiteCrawlProgress};

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
        assert_eq!(site_slug("Demo Shop"), "Demo_Shop");
        assert_eq!(site_slug(""), "_");
        assert_eq!(crawl_prefix("runs-rec", "DokuWiki"), "runs-rec/crawl/DokuWiki/");
    }
}
