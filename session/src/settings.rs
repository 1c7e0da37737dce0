//! The proxy half of a run's settings (`trajectory::ProxySettings`) and the replay it stands for. Its
//! enums are replay's own (`MissPolicy`, [`SearchMode`], [`WsPacing`], [`FrozenWebUnit`]: defined once, in
//! the leaf crate `proxy_settings`), so nothing is converted here: this is where a replay's frozen web is
//! resolved from flags and a recorded run, and written back.
//!
//! A replay's frozen web resolves like the agent's settings (`agent::settings`): each part as given, else
//! as the re-executed run recorded it, else the default ([`FrozenWeb::resolve`]); a rescore serves exactly
//! what the run served ([`FrozenWeb::served_by`]). The miss policy, time zone and locale are not taken
//! from a re-executed run: a replay stays sealed unless `--on-miss` says otherwise, and a replay's time
//! zone is its snapshot's.

use trajectory::{FrozenWebUnit, ProxySettings, SearchMode, WsPacing};

use crate::FrozenWeb;

/// What `run.json` keeps of a run's guards.
pub fn guards_setting(g: &proxy::guard::GuardConfig) -> trajectory::GuardsSetting {
    trajectory::GuardsSetting {
        write_guard: g.writes.is_some(),
        write_guard_strict: g.writes.as_ref().is_some_and(proxy::guard::WriteRules::is_strict),
        write_guard_learned: g.writes.as_ref().is_some_and(proxy::guard::WriteRules::is_learned),
        answer_guard: g.answers.is_some(),
        own_hosts: g.own_hosts.clone(),
    }
}

/// The frozen web given for a replay (the command line's flags); None: not given.
#[derive(Debug, Clone, Copy, Default)]
pub struct GivenFrozenWeb {
    /// `--frozen-web`.
    pub unit: Option<FrozenWebUnit>,
    /// `--search`.
    pub search: Option<SearchMode>,
    /// `--ws-pacing`.
    pub ws_pacing: Option<WsPacing>,
}

impl FrozenWeb {
    /// A replayed run's frozen web: each part as given, else as `recorded` (the re-executed run's proxy
    /// half, when that run was a replay that recorded it), else [`FrozenWeb::default`]'s. `search_url` is
    /// the run's own search page (one of the frozen search engine's pages).
    pub fn resolve(given: &GivenFrozenWeb, recorded: Option<&ProxySettings>, search_url: &str) -> FrozenWeb {
        let d = FrozenWeb::default();
        FrozenWeb {
            unit: given.unit.or(recorded.and_then(|p| p.frozen_web)).unwrap_or(d.unit),
            search: given.search.or(recorded.and_then(|p| p.search)).unwrap_or(d.search),
            search_urls: vec![search_url.to_string()],
            ws_pacing: given.ws_pacing.or(recorded.and_then(|p| p.ws_pacing)).unwrap_or(d.ws_pacing),
            leave_out_own: false,
        }
    }

    /// What the run with proxy settings `p` served, for a rescore: its frozen web, search and pacing when it
    /// recorded them; the task's own snapshot and no frozen search otherwise (a run from before they were
    /// recorded, or not a replay). `search_url` is the run's search page.
    pub fn served_by(p: &ProxySettings, search_url: &str) -> FrozenWeb {
        let mut served = FrozenWeb::recorded();
        if let Some(unit) = p.frozen_web {
            served.unit = unit;
        }
        if let Some(search) = p.search {
            served.search = search;
        }
        if let Some(pacing) = p.ws_pacing {
            served.ws_pacing = pacing;
        }
        if p.frozen_web.is_some() || p.search.is_some() {
            // As `run` set it: the run's search page is one of the engines' pages.
            served.search_urls = Some(search_url.to_string()).into_iter().filter(|u| !u.is_empty()).collect();
        }
        served
    }

    /// Writes what a replay with this frozen web serves into the proxy half of `run.json`'s settings
    /// ([`FrozenWeb::resolve`] and [`FrozenWeb::served_by`] read it back).
    pub fn record(&self, p: &mut ProxySettings) {
        p.frozen_web = Some(self.unit);
        p.search = Some(self.search);
        p.ws_pacing = Some(self.ws_pacing);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Given, else the re-executed run's, else the default; and what is recorded resolves back the same.
    #[test]
    fn a_replays_frozen_web_is_given_then_recorded_then_default() {
        let was = ProxySettings {
            frozen_web: Some(FrozenWebUnit::Task),
            search: Some(SearchMode::Always),
            ws_pacing: Some(WsPacing::Fast),
            ..Default::default()
        };
        let not_a_replay = ProxySettings::default();
        let fast = GivenFrozenWeb { ws_pacing: Some(WsPacing::Fast), ..Default::default() };
        let site = GivenFrozenWeb { unit: Some(FrozenWebUnit::Site), ..Default::default() };
        let url = "https://search.test/";
        let d = FrozenWeb { search_urls: vec![url.into()], ..FrozenWeb::default() };
        let rows: Vec<(&str, GivenFrozenWeb, Option<&ProxySettings>, FrozenWeb)> = vec![
            ("nothing given or recorded", GivenFrozenWeb::default(), None, d.clone()),
            ("a flag", fast, None, FrozenWeb { ws_pacing: WsPacing::Fast, ..d.clone() }),
            ("a run that was no replay", GivenFrozenWeb::default(), Some(&not_a_replay), d.clone()),
            (
                "the re-executed run's",
                GivenFrozenWeb::default(),
                Some(&was),
                FrozenWeb {
                    unit: FrozenWebUnit::Task,
                    search: SearchMode::Always,
                    ws_pacing: WsPacing::Fast,
                    ..d.clone()
                },
            ),
            (
                "a flag wins over the run's",
                site,
                Some(&was),
                FrozenWeb { search: SearchMode::Always, ws_pacing: WsPacing::Fast, ..d.clone() },
            ),
        ];
        for (name, given, recorded, want) in rows {
            let got = FrozenWeb::resolve(&given, recorded, url);
            assert_eq!(got, want, "{name}");
            let mut p = ProxySettings::default();
            got.record(&mut p);
            assert_eq!(
                FrozenWeb::resolve(&GivenFrozenWeb::default(), Some(&p), url),
                got,
                "{name}: recorded"
            );
            assert_eq!(FrozenWeb::served_by(&p, url), got, "{name}: served");
        }
    }
}
