//! The crawl of one site: its browser walk (`agent::crawl`) behind a recording proxy, into the next part.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use agent::crawl::{CrawlOptions, CrawlProgress, CrawlState};
use agent::runner::{AgentConfig, TaskEnv};
use clock::Clock;
use proxy::{CertificateAuthority, ProxyConfig};
use recorder::HostFilter;
use snapshots::{Manifest, Store};
use trajectory::RunMode;

use crate::error::SessionError;
use crate::names::{crawl_layers, site_slug, site_snapshots};

/// What a crawl needs besides the store and the recording.
pub struct CrawlSiteOptions {
    /// The browser and its settings.
    pub agent: AgentConfig,
    /// Budgets, pacing, robots.txt.
    pub crawl: CrawlOptions,
    /// More URLs to start from (their hosts are the site's).
    pub starts: Vec<String>,
    /// More hosts the crawl may load pages of (`--host`), besides the site's own ([`site_hosts`]).
    pub hosts: Vec<String>,
    /// The proxy CA.
    pub ca: Arc<CertificateAuthority>,
    /// How the recording proxy reaches origins.
    pub proxy: ProxyConfig,
    /// Time stamps.
    pub clock: Arc<dyn Clock>,
    /// Where crawl states are kept (`<dir>/<run>/<site>.json`).
    pub state_dir: PathBuf,
}

/// Where a crawl stands after a page, for progress on a terminal.
#[derive(Debug, Clone)]
pub struct SiteCrawlProgress<'a> {
    /// The browser walk.
    pub crawl: &'a CrawlProgress<'a>,
    /// Pages loaded by this invocation.
    pub pages_now: usize,
    /// Exchanges recorded by this invocation.
    pub exchanges: u64,
    /// Response-body bytes recorded by this invocation.
    pub bytes: u64,
}

/// What one crawl invocation did.
#[derive(Debug, Clone)]
pub struct CrawlReport {
    /// The part recorded.
    pub part: Manifest,
    /// The crawl's state after it (all invocations).
    pub state: CrawlState,
    /// Pages loaded by this invocation.
    pub pages_now: usize,
    /// Wall time of this invocation.
    pub secs: f64,
    /// Navigations of this invocation the crawl's gate refused (a redirect off the site's hosts or to a
    /// path robots.txt disallows: `gate.rs`).
    pub refused: u64,
}

fn state_path(dir: &Path, run: &str, web_name: &str) -> PathBuf {
    dir.join(site_slug(run)).join(format!("{}.json", site_slug(web_name)))
}

fn read_state(path: &Path) -> Result<Option<CrawlState>, SessionError> {
    match std::fs::read(path) {
        Ok(b) => serde_json::from_slice(&b).map(Some).map_err(|e| {
            SessionError::Crawl(format!(
                "{}: not a crawl state ({e}); remove it to start over",
                path.display()
            ))
        }),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(SessionError::Crawl(format!("{}: {e}", path.display()))),
    }
}

/// The hosts a crawl of the site loads pages of (`www.` ignored, as `agent::crawl` compares them): the host
/// of the first top-level page each of the site's task snapshots recorded (the benchmark's start page, where
/// it landed), the hosts of `starts`, each of `extra` (`--host`), and the hosts of the recorded top-level
/// pages that are subdomains of one of these (`docs.shop.test` for `shop.test`). Not the hosts of the frames
/// the pages embed (ads, third parties' widgets), nor those a task navigated away to: a crawl that spread
/// to them spent its budget off the site (issue 61).
pub(crate) fn site_hosts(
    store: &Store,
    members: &[Manifest],
    starts: &[String],
    extra: &[String],
) -> Result<BTreeSet<String>, SessionError> {
    let site_of = agent::explore::site_of;
    let mut own: BTreeSet<String> = starts.iter().filter_map(|u| site_of(u)).collect();
    own.extend(extra.iter().map(|h| h.trim().trim_start_matches("www.").to_ascii_lowercase()));
    let mut seen = BTreeSet::new();
    for m in members {
        let mut first = true;
        for x in store.exchanges(m) {
            let x = x?;
            if !super::reach::top_level_document(&x) {
                continue;
            }
            let Some(h) = site_of(&x.request.url) else { continue };
            if std::mem::take(&mut first) {
                own.insert(h.clone());
            }
            seen.insert(h);
        }
    }
    let sub = |h: &String| own.iter().any(|o| h.ends_with(&format!(".{o}")));
    let subdomains: Vec<String> = seen.into_iter().filter(|h| sub(h)).collect();
    own.extend(subdomains);
    own.retain(|h| !h.is_empty());
    Ok(own)
}

/// Crawl site `web_name` of recording `run` into its next part (see the module docs).
pub async fn crawl_site(
    store: &Store,
    run: &str,
    web_name: &str,
    o: CrawlSiteOptions,
    progress: &(dyn Fn(&SiteCrawlProgress<'_>) + Send + Sync),
) -> Result<CrawlReport, SessionError> {
    let members = site_snapshots(store, run, web_name)?;
    // The benchmark's start pages and --start, never a task's other pages (`reach`).
    let task_starts = super::reach::start_pages(store, &members)?;
    let mut starts: Vec<String> = task_starts.iter().map(|(_, u)| u.clone()).collect();
    starts.extend(o.starts.iter().cloned());
    let public: BTreeSet<String> = starts.iter().cloned().collect();
    let mut documents: Vec<(String, BTreeSet<String>)> = Vec::new();
    for m in &members {
        let docs =
            crate::explore_snapshot::recorded_documents(store, m)?.into_iter().map(|d| d.url).collect();
        documents.push((m.name.clone(), docs));
    }
    if starts.is_empty() {
        return Err(SessionError::Crawl(format!(
            "no recorded document of site {web_name:?} in recording {run:?}, and no --start URL: nothing to crawl from"
        )));
    }
    let sites = site_hosts(store, &members, &o.starts, &o.hosts)?;
    let path = state_path(&o.state_dir, run, web_name);
    let mut state = match read_state(&path)? {
        Some(mut s) => {
            // A state begun before pages kept their seeds (it started from every recorded document): each
            // queued or loaded URL without seeds is its own seed, so a task's recorded page it loaded or will
            // load is that task's (`reach`); what such a page led to before is not known.
            let unseeded: Vec<String> = s
                .queue
                .iter()
                .map(|(u, _)| u)
                .chain(&s.done)
                .filter(|u| !s.reached.contains_key(*u))
                .cloned()
                .collect();
            for u in unseeded {
                s.reached.insert(u.clone(), BTreeSet::from([u]));
            }
            s
        }
        None => CrawlState::new(starts.iter().cloned()),
    };
    // Start URLs given later join a resumed crawl.
    for u in &o.starts {
        state.start(u.clone());
    }
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(|e| SessionError::Crawl(format!("{}: {e}", dir.display())))?;
    }
    let parts = crawl_layers(store, run, web_name)?;
    let name = crate::names::crawl_part_name(run, web_name, parts.len() + 1);
    if store.manifest(&name).is_ok() {
        store.remove(&name)?;
    }
    let seed_of = members.first().map(|m| m.seed.time_zone.clone()).unwrap_or_else(|| "UTC".into());
    let labels = BTreeMap::from([
        ("web_name".to_string(), web_name.to_string()),
        ("run".to_string(), run.to_string()),
        ("crawl_of".to_string(), web_name.to_string()),
    ]);
    let opened = crate::open::open_record(crate::open::RecordOpening {
        store,
        name: &name,
        time_zone: seed_of.clone(),
        labels,
        hosts: HostFilter::new(&[], &[]),
        shim_step_ms: 1,
        clock: o.clock.clone(),
    })?;
    let (writer, started) = (opened.writer, opened.started_ms);
    let rec = Arc::new(opened.recorder);
    let counted = rec.clone();
    // The crawl opens links only, but page scripts may write: the side-effect guard stands in front.
    let guard_log = Arc::new(proxy::guard::GuardLog::default());
    let guarded = Arc::new(proxy::guard::Guard::new(
        rec,
        Arc::new(proxy::guard::GuardConfig::standard(Vec::new())),
        guard_log,
    ));
    // Every navigation, a redirect's target too, is checked against the site's hosts and robots.txt.
    let gate = Arc::new(super::gate::CrawlGate::new(
        guarded,
        sites.clone(),
        o.crawl.robots.then(|| state.robots.clone()),
    ));
    let server = crate::loopback::Loopback::start(gate.clone(), o.ca.clone(), o.proxy.clone()).await?;
    let env = TaskEnv {
        proxy: server.addr,
        ca_spki: o.ca.info().spki_sha256.clone(),
        ca_pem: o.ca.cert_pem().to_string(),
        init_scripts: vec![opened.shim_js],
        time_zone: Some(seed_of),
        locale: members.first().and_then(|m| m.labels.get("locale").cloned()),
        mode: RunMode::Record,
        snapshot: Some(name.clone()),
        started_ms: started,
        probe: None,
    };
    let before = state.pages;
    let t0 = std::time::Instant::now();
    let save = |s: &CrawlState| {
        let bytes = serde_json::to_vec(s).unwrap_or_default();
        if let Err(e) = trajectory::write_atomic(&path, &bytes) {
            tracing::error!("crawl state: {e}");
        }
    };
    let told = |p: &CrawlProgress<'_>| {
        let r = counted.stats();
        progress(&SiteCrawlProgress {
            crawl: p,
            pages_now: p.state.pages - before,
            exchanges: r.recorded,
            bytes: r.body_bytes,
        })
    };
    let crawled =
        agent::crawl::crawl_with_browser(&o.agent, &env, &mut state, &sites, &o.crawl, &save, &told).await;
    save(&state);
    server.stop().await;
    let now = o.clock.now_ms();
    match crawled {
        Ok(()) => {
            let mut part = crate::seal::finalize(&writer, now)?;
            // Each task's private pages (`reach`), for a leave-one-out replay to hide.
            let private = super::reach::private_pages(&state.reached, &documents, &public);
            part.labels.insert(super::reach::PRIVATE_LABEL.into(), super::reach::label_value(&private));
            store.put_manifest(&part)?;
            Ok(CrawlReport {
                part,
                pages_now: state.pages - before,
                state,
                secs: t0.elapsed().as_secs_f64(),
                refused: gate.refused(),
            })
        }
        Err(e) => {
            let _ = writer.interrupt(now);
            Err(SessionError::Crawl(format!("{e} (the crawl's state is kept: run it again to resume)")))
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use snapshots::format::{ExchangeFlags, Header, RequestRecord, ResponseRecord, Timings};
    use snapshots::{request_key, Exchange, NewSnapshot, Seed, SnapshotSource};

    /// A task snapshot of `(url, Sec-Fetch-Dest)` rows, each an HTML page answered 200.
    fn task(store: &Store, name: &str, rows: &[(&str, Option<&str>)]) -> Manifest {
        let w = store
            .create_snapshot(NewSnapshot {
                name: name.into(),
                created_ms: 1,
                seed: Seed { start_ms: 1, time_zone: "UTC".into() },
                source: SnapshotSource::Record,
                labels: BTreeMap::new(),
            })
            .unwrap();
        for (i, (url, dest)) in rows.iter().enumerate() {
            let mut headers = vec![Header::new("accept", "text/html")];
            headers.extend(dest.map(|d| Header::new("sec-fetch-dest", d)));
            w.append(Exchange {
                seq: i as u64,
                started_ms: 1,
                key: request_key("GET", url, None, b"").unwrap().hex(),
                request: RequestRecord {
                    method: "GET".into(),
                    url: url.to_string(),
                    version: "HTTP/1.1".into(),
                    headers,
                    body: None,
                },
                response: ResponseRecord {
                    status: 200,
                    version: "HTTP/1.1".into(),
                    headers: vec![Header::new("content-type", "text/html")],
                    body: Some(store.put_blob(b"<html></html>").unwrap()),
                    content_encoding: None,
                },
                timings: Timings::default(),
                alpn: None,
                server_addr: None,
                flags: ExchangeFlags::default(),
                websocket: None,
            })
            .unwrap();
        }
        w.finalize(2).unwrap()
    }

    /// Issue 61, part 3: a crawl keeps to the site's own hosts. It took the hosts of every document the
    /// site's tasks recorded: the ad frames, third parties' widgets and sites a task left for.
    #[test]
    fn issue_61_a_crawl_keeps_to_the_sites_own_hosts() {
        let store = Store::in_memory();
        let a = task(
            &store,
            "run/t1",
            &[
                ("https://www.shop.test/", Some("document")),
                ("https://ads.example/frame.html", Some("iframe")),
                ("https://widgets.other.test/embed", Some("iframe")),
                ("https://docs.shop.test/help", Some("document")),
                ("https://en.wikipedia.test/wiki/Kettle", Some("document")),
            ],
        );
        // An older recording without Sec-Fetch headers: its first page is the site's.
        let b = task(&store, "run/t2", &[("https://shop.test/cart", None)]);
        let hosts = |starts: &[&str], extra: &[&str]| {
            let s: Vec<String> = starts.iter().map(|s| s.to_string()).collect();
            let e: Vec<String> = extra.iter().map(|s| s.to_string()).collect();
            site_hosts(&store, &[a.clone(), b.clone()], &s, &e).unwrap().into_iter().collect::<Vec<_>>()
        };
        for (starts, extra, want) in [
            (&[][..], &[][..], &["docs.shop.test", "shop.test"][..]),
            (&["https://blog.shop.test/"], &[], &["blog.shop.test", "docs.shop.test", "shop.test"]),
            (&[], &["www.cdn-pages.test"], &["cdn-pages.test", "docs.shop.test", "shop.test"]),
        ] {
            assert_eq!(hosts(starts, extra), want, "{starts:?} {extra:?}");
        }
    }
}
