//! The requests of a run's WebArena-Verified tasks, read from their snapshots, for their network checks
//! (`evaluator::verified::network`). Used by `eval` and the WebArena demo.

use evaluator::verified::network::EventsError;

/// The requests of each WebArena-Verified task's snapshot, for their network checks. A replay re-execution
/// points at the snapshot it replayed: its requests are the recording's.
pub(crate) fn for_run(
    store: &std::path::Path,
    run: &std::path::Path,
) -> std::collections::BTreeMap<String, Result<Vec<evaluator::verified::network::Event>, EventsError>> {
    let mut out = std::collections::BTreeMap::new();
    let Ok(trajs) = trajectory::RunDir::new(run).trajectories() else { return out };
    let verified: Vec<_> = trajs
        .into_iter()
        .map(|(_, t)| t)
        .filter(|t| matches!(t.task_eval, Some(trajectory::TaskEvalSpec::Verified(_))))
        .collect();
    if verified.is_empty() {
        return out;
    }
    let store = snapshots::Store::open_read_only(store).map_err(std::sync::Arc::new);
    for t in verified {
        let r = match (&store, t.snapshot.as_deref()) {
            (_, None) => Err(EventsError::NoSnapshot),
            (Err(e), Some(_)) => Err(EventsError::Store(e.clone())),
            (Ok(store), Some(name)) => events_of(store, name).map_err(|e| EventsError::Snapshot {
                name: name.to_string(),
                source: std::sync::Arc::new(e),
            }),
        };
        out.insert(t.task_id.clone(), r);
    }
    out
}

/// A snapshot's exchanges as network events: request and response heads, the request body, and JSON or
/// form response bodies (what `response_content` can ask about).
fn events_of(
    store: &snapshots::Store,
    name: &str,
) -> Result<Vec<evaluator::verified::network::Event>, snapshots::StoreError> {
    let m = store.manifest(name)?;
    let pairs =
        |h: &[snapshots::Header]| h.iter().map(|h| (h.name.clone(), h.value.clone())).collect::<Vec<_>>();
    let ctype = |h: &[snapshots::Header]| {
        h.iter()
            .find(|h| h.name.eq_ignore_ascii_case("content-type"))
            .map(|h| h.value.clone())
            .unwrap_or_default()
    };
    let mut out = Vec::new();
    for x in store.exchanges(&m) {
        let x = x?;
        let text = |hash: &str| -> Result<String, snapshots::StoreError> {
            Ok(String::from_utf8_lossy(&store.blob_bytes(hash)?).into_owned())
        };
        let post = match &x.request.body {
            Some(b) => Some((ctype(&x.request.headers), text(&b.hash)?)),
            None => None,
        };
        let rct = ctype(&x.response.headers);
        let response = match &x.response.body {
            Some(b) if rct.contains("json") || rct.contains("x-www-form-urlencoded") => {
                Some((rct, text(&b.hash)?))
            }
            _ => None,
        };
        out.push(evaluator::verified::network::Event {
            method: x.request.method.clone(),
            url: x.request.url.clone(),
            request_headers: pairs(&x.request.headers),
            post,
            status: i64::from(x.response.status),
            response_headers: pairs(&x.response.headers),
            response,
        });
    }
    Ok(out)
}
