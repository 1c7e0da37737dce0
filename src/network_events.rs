//! The requests of a run's WebArena-Verified tasks, for their network checks
//! (`evaluator::verified::network`). Used by `eval` and the WebArena demo.
//!
//! Each task is scored on its own wire: a replayed or live task on the wire log its proxy wrote as it ran
//! (`trajectory::wire`), never on the recording it replayed (that is what the *recording* agent sent); a
//! recorded task on its recording, which is exactly what its browser sent.

/// Whether a task's own wire is its wire log (replay and live) rather than its recording (record).
fn keeps_wire_log(mode: trajectory::RunMode) -> bool {
    matches!(mode, trajectory::RunMode::Replay | trajectory::RunMode::Live)
}

use evaluator::verified::network::{Event, EventsError, RunEvents, WireSource};
use std::sync::Arc;

type Events = std::collections::BTreeMap<String, Result<RunEvents, EventsError>>;

/// The requests of each WebArena-Verified task of `run`, for its network checks.
pub(crate) fn for_run(store: &std::path::Path, run: &std::path::Path) -> Events {
    let mut out = std::collections::BTreeMap::new();
    let run_dir = trajectory::RunDir::new(run);
    let Ok(trajs) = run_dir.trajectories() else { return out };
    let verified: Vec<_> = trajs
        .into_iter()
        .filter(|(_, t)| matches!(t.task_eval, Some(trajectory::TaskEvalSpec::Verified(_))))
        .collect();
    if verified.is_empty() {
        return out;
    }
    let store = snapshots::Store::open_read_only(store).map_err(Arc::new);
    let store_err = |e: &Arc<snapshots::StoreError>| EventsError::Store(e.clone());
    for (dir, t) in verified {
        let r = if keeps_wire_log(t.mode) {
            match dir.read_wire(&t) {
                Ok(None) => Err(EventsError::NoWire),
                Err(e) => Err(EventsError::Wire(Arc::new(e))),
                Ok(Some(log)) => match &store {
                    Err(e) => Err(store_err(e)),
                    Ok(store) => events_of_wire(store, &log).map_err(|e| EventsError::Wire(Arc::new(e))),
                },
            }
        } else {
            match (&store, t.snapshot.as_deref()) {
                (_, None) => Err(EventsError::NoSnapshot),
                (Err(e), Some(_)) => Err(store_err(e)),
                (Ok(store), Some(name)) => events_of(store, name)
                    .map(|events| RunEvents {
                        events,
                        wire: WireSource::Recording { snapshot: name.to_string() },
                    })
                    .map_err(|e| EventsError::Snapshot { name: name.to_string(), source: Arc::new(e) }),
            }
        };
        out.insert(t.task_id.clone(), r);
    }
    out
}

fn content_type(h: &[(String, String)]) -> String {
    h.iter().find(|(n, _)| n.eq_ignore_ascii_case("content-type")).map(|(_, v)| v.clone()).unwrap_or_default()
}

/// Response bodies `response_content` can ask about: JSON and form bodies.
use trajectory::proxy_report::wire::readable_body as readable;

/// A task's wire log as network events; response bodies read from the store by the hash the log kept.
fn events_of_wire(
    store: &snapshots::Store,
    log: &trajectory::wire::WireLog,
) -> Result<RunEvents, snapshots::StoreError> {
    let mut events = Vec::with_capacity(log.entries.len());
    for e in &log.entries {
        let rct = content_type(&e.response_headers);
        let response = match (&e.response_text, &e.response_body) {
            (Some(text), _) if readable(&rct) => Some((rct, text.clone())),
            (None, Some(hash)) if readable(&rct) => {
                Some((rct, String::from_utf8_lossy(&store.blob_bytes(hash)?).into_owned()))
            }
            _ => None,
        };
        events.push(Event {
            method: e.method.clone(),
            url: e.url.clone(),
            request_headers: e.request_headers.clone(),
            post: e.request_body.as_ref().map(|b| (content_type(&e.request_headers), b.clone())),
            status: if e.status == 0 { -1 } else { i64::from(e.status) },
            response_headers: e.response_headers.clone(),
            response,
        });
    }
    Ok(RunEvents {
        events,
        wire: WireSource::Own { requests: log.entries.len(), truncated: log.truncated.clone() },
    })
}

/// A snapshot's exchanges as network events: request and response heads, the request body, and JSON or
/// form response bodies (what `response_content` can ask about).
fn events_of(store: &snapshots::Store, name: &str) -> Result<Vec<Event>, snapshots::StoreError> {
    let m = store.manifest(name)?;
    let pairs =
        |h: &[snapshots::Header]| h.iter().map(|h| (h.name.clone(), h.value.clone())).collect::<Vec<_>>();
    let mut out = Vec::new();
    for x in store.exchanges(&m) {
        let x = x?;
        let text = |hash: &str| -> Result<String, snapshots::StoreError> {
            Ok(String::from_utf8_lossy(&store.blob_bytes(hash)?).into_owned())
        };
        let (req_h, res_h) = (pairs(&x.request.headers), pairs(&x.response.headers));
        let post = match &x.request.body {
            Some(b) => Some((content_type(&req_h), text(&b.hash)?)),
            None => None,
        };
        let rct = content_type(&res_h);
        let response = match &x.response.body {
            Some(b) if readable(&rct) => Some((rct, text(&b.hash)?)),
            _ => None,
        };
        out.push(Event {
            method: x.request.method.clone(),
            url: x.request.url.clone(),
            request_headers: req_h,
            post,
            status: i64::from(x.response.status),
            response_headers: res_h,
            response,
        });
    }
    Ok(out)
}

use replay::epochs::is_state_write;

/// For each replayed task whose checks read the site's state (`program_html`, `page_image_query`): a
/// difference between its writes (its wire log) and the writes its recording made, when they differ. The
/// frozen pages show the state the recording's writes made; a run that wrote otherwise (or nothing) cannot
/// be scored on them. Writes are compared as multisets (the evaluator's own requests, such as a REST
/// helper's token, may come at another point), telemetry left out, and only on the hosts the recording
/// talked to (the browser's own background writes are not the task's).
pub(crate) fn state_diverged(
    store: &std::path::Path,
    run: &std::path::Path,
) -> std::collections::BTreeMap<String, String> {
    let mut out = std::collections::BTreeMap::new();
    let Ok(trajs) = trajectory::RunDir::new(run).trajectories() else { return out };
    let todo: Vec<_> = trajs
        .into_iter()
        .filter(|(_, t)| {
            t.mode == trajectory::RunMode::Replay
                && t.task_eval
                    .as_ref()
                    .and_then(trajectory::TaskEvalSpec::webarena)
                    .is_some_and(|w| w.has_browser_checks())
        })
        .collect();
    if todo.is_empty() {
        return out;
    }
    let Ok(store) = snapshots::Store::open_read_only(store) else { return out };
    for (dir, t) in todo {
        let why = match (dir.read_wire(&t), t.snapshot.as_deref()) {
            (Ok(None), _) => Some("no wire log (made by an older webfreeze)".to_string()),
            (Err(e), _) => Some(e.to_string()),
            (_, None) => Some("no recording named".to_string()),
            (Ok(Some(log)), Some(name)) => match recorded_writes(&store, name) {
                Err(e) => Some(format!("{name}: {e}")),
                Ok((theirs, hosts)) => {
                    let mine: Vec<Write> = log
                        .entries
                        .iter()
                        .filter(|e| is_state_write(&e.method, &e.url) && hosts.contains(&host_of(&e.url)))
                        .map(|e| {
                            (e.method.clone(), e.url.clone(), e.request_body.clone().unwrap_or_default())
                        })
                        .collect();
                    first_difference(&mine, &theirs)
                }
            },
        };
        if let Some(why) = why {
            out.insert(t.task_id.clone(), why);
        }
    }
    out
}

type Write = (String, String, String);

fn host_of(url: &str) -> String {
    url.parse::<http::Uri>().ok().and_then(|u| u.host().map(str::to_ascii_lowercase)).unwrap_or_default()
}

/// The writes a recording made, and the hosts it talked to.
fn recorded_writes(
    store: &snapshots::Store,
    name: &str,
) -> Result<(Vec<Write>, std::collections::BTreeSet<String>), snapshots::StoreError> {
    let m = store.manifest(name)?;
    let mut out = Vec::new();
    let mut hosts = std::collections::BTreeSet::new();
    for x in store.exchanges(&m) {
        let x = x?;
        hosts.insert(host_of(&x.request.url));
        if !is_state_write(&x.request.method, &x.request.url) {
            continue;
        }
        let body = match &x.request.body {
            Some(b) => String::from_utf8_lossy(&store.blob_bytes(&b.hash)?).into_owned(),
            None => String::new(),
        };
        out.push((x.request.method.clone(), x.request.url.clone(), body));
    }
    Ok((out, hosts))
}

/// A write the run and its recording do not share (compared as multisets), in words; None when they made
/// the same writes.
fn first_difference(mine: &[Write], theirs: &[Write]) -> Option<String> {
    let show = |w: &Write| format!("{} {}", w.0, w.1);
    let mut left: Vec<&Write> = theirs.iter().collect();
    let mut extra: Vec<&Write> = Vec::new();
    for w in mine {
        match left.iter().position(|t| *t == w) {
            Some(i) => {
                left.remove(i);
            }
            None => extra.push(w),
        }
    }
    match (extra.first(), left.first()) {
        (None, None) => None,
        (Some(a), Some(b)) if a.0 == b.0 && a.1 == b.1 => {
            Some(format!("{} sent another body than the recording's", show(a)))
        }
        (Some(a), _) => Some(format!("wrote {}, which the recording never did", show(a))),
        (None, Some(b)) => Some(format!("never wrote {}, which the recording did", show(b))),
    }
}

/// Each task's own requests as HAR 1.2 in `dir/<task-id>.har`: a replayed task's from its wire log, a
/// recorded task's from its snapshot. Returns how many were written and, for the others, why not.
pub(crate) fn export_har(
    store: &std::path::Path,
    run: &std::path::Path,
    dir: &std::path::Path,
) -> anyhow::Result<(usize, Vec<String>)> {
    use anyhow::Context as _;
    std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    let store = snapshots::Store::open_read_only(store)?;
    let header =
        |(name, value): &(String, String)| snapshots::Header { name: name.clone(), value: value.clone() };
    let (mut written, mut skipped) = (0, Vec::new());
    for (task_dir, t) in trajectory::RunDir::new(run).trajectories()? {
        let path = dir.join(format!("{}.har", trajectory::run_dir::task_dir_name(&t.task_id)));
        let file =
            std::fs::File::create(&path).with_context(|| format!("cannot write {}", path.display()))?;
        let shown = path.display().to_string();
        let done = if keeps_wire_log(t.mode) {
            match task_dir.read_wire(&t) {
                Ok(Some(log)) => {
                    let records: Vec<archive::har::WireRecord<'_>> = log
                        .entries
                        .iter()
                        .map(|e| archive::har::WireRecord {
                            method: &e.method,
                            url: &e.url,
                            request_headers: e.request_headers.iter().map(header).collect(),
                            request_body: e.request_body.as_deref(),
                            status: e.status,
                            response_headers: e.response_headers.iter().map(header).collect(),
                            response_body: e.response_body.as_deref(),
                            response_text: e.response_text.as_deref(),
                        })
                        .collect();
                    let comment = format!("the wire log of task {} of {}", t.task_id, run.display());
                    archive::har::export_records(&store, &records, &comment, file, &shown)
                        .map(|_| ())
                        .map_err(|e| e.to_string())
                }
                Ok(None) => Err("no wire log".to_string()),
                Err(e) => Err(e.to_string()),
            }
        } else if let Some(name) = t.snapshot.as_deref() {
            archive::har::export(&store, name, file, &shown).map(|_| ()).map_err(|e| e.to_string())
        } else {
            Err("the task keeps no requests (a live run made by an older webfreeze)".to_string())
        };
        match done {
            Ok(()) => written += 1,
            Err(why) => {
                let _ = std::fs::remove_file(&path);
                skipped.push(format!("{}: {why}", t.task_id));
            }
        }
    }
    Ok((written, skipped))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writes_compared() {
        let w = |m: &str, u: &str, b: &str| (m.to_string(), u.to_string(), b.to_string());
        let add = w("POST", "https://s.test/cart/add", "slug=jar");
        let other = w("POST", "https://s.test/cart/add", "slug=mug");
        let pay = w("POST", "https://s.test/checkout", "");
        for (mine, theirs, want) in [
            (vec![add.clone(), pay.clone()], vec![add.clone(), pay.clone()], None),
            (vec![], vec![add.clone()], Some("never wrote POST https://s.test/cart/add")),
            (vec![other.clone()], vec![add.clone()], Some("sent another body")),
            (vec![add.clone(), pay.clone()], vec![add.clone()], Some("which the recording never did")),
            (vec![pay.clone()], vec![add.clone()], Some("which the recording never did")),
            // The same writes in another order are the same state.
            (vec![pay.clone(), add.clone()], vec![add.clone(), pay.clone()], None),
        ] {
            let got = first_difference(&mine, &theirs);
            match want {
                None => assert_eq!(got, None),
                Some(w) => assert!(got.as_deref().is_some_and(|g| g.contains(w)), "{got:?} / {w}"),
            }
        }
        assert!(!is_state_write("POST", "https://s.test/g/collect?v=2"));
        assert!(!is_state_write("GET", "https://s.test/cart"));
        assert!(is_state_write("POST", "https://s.test/cart/add"));
    }
}
