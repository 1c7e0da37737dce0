//! The requests a run's tasks are scored on: a WebArena-Verified task's network checks read them
//! (`evaluator::verified::network`, [`for_run`]), and `eval --har` writes them as HAR ([`export_har`]).
//! Used by [`crate::eval_run`] (`webfreeze eval`, the WebArena demo, any harness).
//!
//! Each task is scored on its own wire: a replayed or live task on the wire log its proxy wrote as it ran
//! (`trajectory::wire`), never on the recording it replayed (that is what the *recording* agent sent); a
//! recorded task on its recording, which is exactly what its browser sent.

/// Whether a task's own wire is its wire log (replay and live) rather than its recording (record).
fn keeps_wire_log(mode: trajectory::RunMode) -> bool {
    matches!(mode, trajectory::RunMode::Replay | trajectory::RunMode::Live)
}

use std::sync::Arc;

use evaluator::verified::network::{Event, EventsError, RunEvents, WireSource};
use trajectory::proxy_report::wire::Answer;

use crate::error::SessionError;

/// Each WebArena-Verified task's network events, or why they could not be read, by task id.
pub type Events = std::collections::BTreeMap<String, Result<RunEvents, EventsError>>;

/// The requests of each WebArena-Verified task of `run`, for its network checks.
pub fn for_run(store: &std::path::Path, run: &std::path::Path) -> Events {
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

/// The first value of header `name` (any case) among a wire log entry's headers (name and value pairs;
/// a stored exchange's are `snapshots::format::header_value`'s).
pub(crate) fn wire_header<'a>(h: &'a [(String, String)], name: &str) -> Option<&'a str> {
    h.iter().find(|(n, _)| n.eq_ignore_ascii_case(name)).map(|(_, v)| v.as_str())
}

/// A wire log entry's `Content-Type`.
fn content_type(h: &[(String, String)]) -> String {
    wire_header(h, "content-type").unwrap_or_default().to_string()
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
            // A request replay missed got replay's own 404, not the site's answer: no response, as far as
            // the checks know (a missed write also puts a Verified run apart, `session::frozen_verdict`).
            status: if e.status == 0 || matches!(e.answer, Answer::Miss | Answer::StateUnknown) {
                -1
            } else {
                i64::from(e.status)
            },
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
        if x.flags.probe {
            // A state probe's read: the recorder's, never the agent's request.
            continue;
        }
        let text = |hash: &str| -> Result<String, snapshots::StoreError> {
            Ok(String::from_utf8_lossy(&store.blob_bytes(hash)?).into_owned())
        };
        let (req_h, res_h) = (pairs(&x.request.headers), pairs(&x.response.headers));
        let content_type = |v: Option<&str>| v.unwrap_or_default().to_string();
        let post = match &x.request.body {
            Some(b) => Some((content_type(x.request.header("content-type")), text(&b.hash)?)),
            None => None,
        };
        let rct = content_type(x.response.header("content-type"));
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

/// Each task's own requests as HAR 1.2 in `dir/<task-id>.har`: a replayed task's from its wire log, a
/// recorded task's from its snapshot. Returns how many were written and, for the others, why not.
pub fn export_har(
    store: &std::path::Path,
    run: &std::path::Path,
    dir: &std::path::Path,
) -> Result<(usize, Vec<String>), SessionError> {
    let io = |path: &std::path::Path| {
        let path = path.to_path_buf();
        move |source| SessionError::Io { path, source }
    };
    std::fs::create_dir_all(dir).map_err(io(dir))?;
    let store = snapshots::Store::open_read_only(store)?;
    let header =
        |(name, value): &(String, String)| snapshots::Header { name: name.clone(), value: value.clone() };
    let (mut written, mut skipped) = (0, Vec::new());
    for (task_dir, t) in trajectory::RunDir::new(run).trajectories()? {
        let path = dir.join(format!("{}.har", trajectory::run_dir::task_dir_name(&t.task_id)));
        let file = std::fs::File::create(&path).map_err(io(&path))?;
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
                            control: e.control.as_deref(),
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
