//! The requests of a run's WebArena-Verified tasks, for their network checks
//! (`evaluator::verified::network`). Used by `eval` and the WebArena demo.
//!
//! Each task is scored on its own wire: a replayed task on the wire log its proxy wrote as it ran
//! (`trajectory::wire`), never on the recording it replayed (that is what the *recording* agent sent); a
//! recorded task on its recording, which is exactly what its browser sent.

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
        let r = if t.mode == trajectory::RunMode::Replay {
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
fn readable(ctype: &str) -> bool {
    ctype.contains("json") || ctype.contains("x-www-form-urlencoded")
}

/// A task's wire log as network events; response bodies read from the store by the hash the log kept.
fn events_of_wire(
    store: &snapshots::Store,
    log: &trajectory::wire::WireLog,
) -> Result<RunEvents, snapshots::StoreError> {
    let mut events = Vec::with_capacity(log.entries.len());
    for e in &log.entries {
        let rct = content_type(&e.response_headers);
        let response = match &e.response_body {
            Some(hash) if readable(&rct) => {
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
