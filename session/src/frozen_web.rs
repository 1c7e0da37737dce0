//! What a replayed task may be answered from beyond its own snapshot: the unit of the frozen web.
//!
//! A benchmark records many tasks on one site; a run that did not record the snapshot walks off the
//! recorded path and onto pages another task saw. With [`FrozenWeb::Site`] (the default of
//! `webfreeze run --mode replay`) a task's replay consults, after its own snapshot, the other tasks'
//! snapshots of the same recording on the same site ([`site_union`]); `replay::overlay` has the order in
//! which layers answer and why overlays never answer writes or carry sequence state. A search no recording
//! answers is answered by the frozen search engine over those snapshots (`replay::search`).

use replay::overlay::{Overlay, OverlayKind, Overlays};
use replay::search::SearchMode;
use snapshots::{Manifest, SnapshotState, Store, StoreError};
use trajectory::FrozenWebUnit;

use crate::union_sieve::StoredUnion;

/// What a replayed task may be answered from beyond what was recorded for it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FrozenWeb {
    /// Its own snapshot ([`FrozenWebUnit::Task`]), or the site's.
    pub unit: FrozenWebUnit,
    /// The frozen search engine (`replay::search`).
    pub search: SearchMode,
    /// Search pages besides Google's, Bing's and DuckDuckGo's (the run's `--search-url`).
    pub search_urls: Vec<String>,
    /// How recorded WebSocket server messages are timed.
    pub ws_pacing: replay::websocket::WsPacing,
    /// Leave the task's own snapshot and its exploration out: the task meets only the rest of its site's
    /// frozen web (`webfreeze coverage`).
    pub leave_out_own: bool,
}

impl Default for FrozenWeb {
    /// `webfreeze run --mode replay`'s: the site union and the frozen search engine for unrecorded searches.
    fn default() -> Self {
        Self {
            unit: FrozenWebUnit::Site,
            search: SearchMode::Fallback,
            search_urls: Vec::new(),
            ws_pacing: Default::default(),
            leave_out_own: false,
        }
    }
}

impl FrozenWeb {
    /// Exactly what was recorded for the task: no union, no frozen search.
    pub fn recorded() -> Self {
        Self {
            unit: FrozenWebUnit::Task,
            search: SearchMode::Off,
            search_urls: Vec::new(),
            ws_pacing: Default::default(),
            leave_out_own: false,
        }
    }
}

/// The site a snapshot belongs to: its `web_name` label (set by every recording session), else `fallback`.
fn site_of<'a>(m: &'a Manifest, fallback: &'a str) -> &'a str {
    m.labels.get("web_name").map(String::as_str).filter(|s| !s.is_empty()).unwrap_or(fallback)
}

/// The other snapshots of recording `run` on the same site as `own` (its `web_name` label, or `web_name`
/// when it has none), in the union's order (by name, `replay::overlay::site_union_order`). A task's own
/// overlays (`<run>/<task>/misses` and the like) are not other tasks; a snapshot still recording is left out
/// (an interrupted one keeps every exchange it completed and is served). Empty when the site is unknown.
pub fn site_union(
    store: &Store,
    run: &str,
    own: &Manifest,
    web_name: &str,
) -> Result<Vec<Manifest>, StoreError> {
    let site = site_of(own, web_name);
    if site.is_empty() {
        return Ok(Vec::new());
    }
    let members = store
        .manifests_under(&crate::names::recording_prefix(run))?
        .into_iter()
        .filter(|m| {
            crate::names::task_of(run, &m.name).is_some()
                && m.state != SnapshotState::Recording
                && site_of(m, "") == site
        })
        .collect();
    Ok(replay::overlay::site_union_order(members, &own.name))
}

/// What a replay layers after the task's own snapshot (see [`union_layers`]).
#[derive(Debug, Clone, Default)]
pub struct UnionLayers<'a> {
    /// The recording whose other snapshots of the same site are layered (`--frozen-web site`); None: the
    /// task's own snapshot and exploration, and `extra`, only.
    pub run: Option<&'a str>,
    /// The site, when the snapshot has no `web_name` label.
    pub web_name: &'a str,
    /// Layer each snapshot's exploration (`NAME/explore`) after it.
    pub explore: bool,
    /// Leave the task's own exploration out ([`FrozenWeb::leave_out_own`]).
    pub leave_out_own: bool,
    /// Snapshots named by the caller (`webfreeze replay --union`), after the site's, checked by the caller.
    pub extra: Vec<Manifest>,
}

/// The overlays of a replayed task, in the order replay consults them after its own snapshot: its
/// exploration (`<task>/explore`, when it was recorded with `--explore`), then the site union's snapshots
/// (with a `run`) and `extra`, then their explorations, then the site's crawl parts; with the union's path
/// sieve. The one assembly of a replay's layers, for the task proxy and `webfreeze replay` alike.
///
/// A member the store's union entries vouch for (joined when sealed, unchanged since: `crate::seal`) is
/// not checked again and the sieve reads those entries; any other is checked here (`crate::union_sieve`).
pub fn union_layers(store: &Store, own: &Manifest, u: UnionLayers<'_>) -> Result<Overlays, StoreError> {
    let site = site_of(own, u.web_name).to_string();
    let stored = match u.run {
        Some(run) if !site.is_empty() => StoredUnion::load(store, run, &site),
        _ => StoredUnion::default(),
    };
    let mut members = match u.run {
        Some(run) => site_union(store, run, own, u.web_name)?,
        None => Vec::new(),
    };
    for m in u.extra {
        if m.name != own.name && !members.iter().any(|x| x.name == m.name) {
            members.push(m);
        }
    }
    let mut o = layers(store, own, members, u.explore, &stored);
    if u.leave_out_own {
        let own_explore = crate::names::explore_name(&own.name);
        o.layers.retain(|l| l.manifest.name != own_explore);
    }
    if let Some(run) = u.run {
        let crawl = crawl_overlays(store, run, &site, &stored);
        // A held-out task meets none of the crawl's pages that only its own recorded documents led to.
        if u.leave_out_own {
            let hidden = crate::crawl::reach::hidden_for(crawl.iter().map(|o| &o.manifest), &own.name);
            o.hidden = (!hidden.is_empty()).then(|| std::sync::Arc::new(hidden));
        }
        o.layers.extend(crawl);
    }
    o.sieve = crate::union_sieve::sieve_for(store, own, &o.layers, &stored);
    Ok(o)
}

/// [`union_layers`] for a task proxy's replay of a task of recording `run`.
pub(crate) fn overlays(
    store: &Store,
    run: &str,
    own: &Manifest,
    web_name: &str,
    unit: FrozenWebUnit,
    leave_out_own: bool,
) -> Result<Overlays, StoreError> {
    let run = (unit == FrozenWebUnit::Site).then_some(run);
    union_layers(store, own, UnionLayers { run, web_name, explore: true, leave_out_own, extra: Vec::new() })
}

/// The site's crawl parts as overlays, after every recording (`crate::crawl` says why last).
fn crawl_overlays(store: &Store, run: &str, site: &str, stored: &StoredUnion) -> Vec<Overlay> {
    if site.is_empty() {
        return Vec::new();
    }
    match crate::names::crawl_layers(store, run, site) {
        Ok(parts) => parts
            .into_iter()
            .filter(|m| stored.vouches(m) || store.check_snapshot(m).is_ok())
            .map(|manifest| Overlay { kind: OverlayKind::Crawl, manifest })
            .collect(),
        Err(e) => {
            tracing::warn!("the crawl of {site} is left out of the replay's layers: {e}");
            Vec::new()
        }
    }
}

/// Overlays in replay's order: `own`'s exploration layer (`NAME/explore`, made by `run --explore` or
/// `snapshots explore`) when `explore` and there is one, then `members` (the site union, in their order),
/// then their exploration layers. Only safe methods are answered from them (`writes: false`).
fn layers(
    store: &Store,
    own: &Manifest,
    members: Vec<Manifest>,
    explore: bool,
    stored: &StoredUnion,
) -> Overlays {
    // A layer whose keys another key version derived would miss silently: left out, and said.
    let usable = |m: &Manifest| {
        let ok = stored.vouches(m) || store.check_snapshot(m).is_ok();
        if !ok {
            tracing::warn!(
                "{} is left out of the replay's layers: it does not pass its check (another key version: \
                 `webfreeze snapshots migrate {}`; damage: `webfreeze snapshots verify {}`)",
                m.name,
                m.name,
                m.name
            );
        }
        ok
    };
    let explore_of = |m: &Manifest| {
        explore
            .then(|| store.manifest(&crate::names::explore_name(&m.name)).ok())
            .flatten()
            .filter(|e| e.state != SnapshotState::Recording && usable(e))
    };
    let members: Vec<Manifest> = members.into_iter().filter(|m| usable(m)).collect();
    let mut layers: Vec<Overlay> = explore_of(own)
        .map(|manifest| Overlay { kind: OverlayKind::Explore, manifest })
        .into_iter()
        .collect();
    let explored: Vec<Manifest> = members.iter().filter_map(explore_of).collect();
    layers.extend(
        members
            .into_iter()
            .chain(explored)
            .map(|manifest| Overlay { kind: OverlayKind::SiteUnion, manifest }),
    );
    Overlays { layers, writes: false, sieve: None, hidden: None }
}
