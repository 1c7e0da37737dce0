//! A frozen web that follows the run's writes: each recorded exchange belongs to a *write epoch*, the number
//! of the recording's writes before it (what a write is, and which count, is `proxy_report::writes`: one
//! rule for replay, the recorder's state probes and scoring). Replay keeps the run's own epoch: a write of
//! the run that matches the recording's *next* write (exact or normalised: same request, same body) moves
//! it to just after that write; a later one out of order would carry the effects of the writes the run
//! skipped, so it leaves the epoch where it is. A page recorded several times (the cart before and after
//! "add to cart", or a state probe's reading at each epoch) is answered from the recording of the run's
//! epoch, not by position: an agent that opens the cart twice without adding anything sees it empty
//! twice; one that adds sees the item after its add.
//!
//! **Exactly**: a page that carries state (HTML, JSON, XML) whose recordings are all from *later* epochs
//! than the run's is not served: nobody knows what it showed before those writes. It is a miss marked
//! `state-unknown` (report, wire log), for the agent and the end-of-task checks alike, and the run's
//! verdict is counted apart. A page recorded at or before the run's epoch is served as the last state the
//! recording saw (the state probes record the checked pages at every epoch). Scripts, styles, images and
//! fonts are served at any epoch. A write the recording never made is answered by the miss policy (never
//! by the fuzzy layer, which would hand it another write's answer) and leaves the epoch where it was.
//!
//! The recorded writes are read from the snapshot once, on the first request that needs them.

use proxy_report::writes::{counts, is_write};
use snapshots::{Manifest, Store, StoreError};

pub use proxy_report::writes::is_state_write;

/// The sequence numbers of a snapshot's writes that count (`proxy_report::writes`), in order.
pub(crate) fn recorded_writes(store: &Store, m: &Manifest) -> Result<Vec<u64>, StoreError> {
    let mut out = Vec::new();
    for x in store.exchanges(m) {
        let x = x?;
        if !is_state_write(&x.request.method, &x.request.url) || !counts(x.response.status) {
            continue;
        }
        let ct = x.request.header("content-type").unwrap_or_default().to_string();
        // The body as the one rule reads it: a GraphQL query (JSON), a preview, a diff or an edit stash (a
        // form or multipart body) is not a write. Read for JSON only, a form's preview or stash counted
        // as the recording's write while the run's own was not (the run classified with its body), so a
        // run on the recording's path never reached the recording's epochs (MediaWiki's edit stash).
        let readable = ["json", "x-www-form-urlencoded", "multipart/form-data"];
        let body = match &x.request.body {
            Some(b) if readable.iter().any(|t| ct.contains(t)) || ct.is_empty() => {
                String::from_utf8_lossy(&store.blob_bytes(&b.hash)?).into_owned()
            }
            _ => String::new(),
        };
        if is_write(&x.request.method, &x.request.url, &ct, &body) {
            out.push(x.seq);
        }
    }
    Ok(out)
}

/// Whether every recording of a page (`seqs`) is from a later epoch than `epoch`: the page's state at
/// `epoch` is unknown.
pub(crate) fn all_later(writes: &[u64], seqs: &[u64], epoch: usize) -> bool {
    !writes.is_empty() && seqs.iter().min().is_some_and(|s| epoch_of(writes, *s) > epoch)
}

/// Whether a recorded answer shows the site's state: a successful page or API answer ([`bears_state`]),
/// not an error page, and not asked for as a picture, a script, a style or a font (a favicon recorded as
/// a 404 page is no state).
pub(crate) fn shows_state(x: &snapshots::Exchange, dest: Option<&str>) -> bool {
    let sub = matches!(
        dest.map(str::to_ascii_lowercase).as_deref(),
        Some("image" | "script" | "style" | "font" | "audio" | "video" | "track" | "manifest" | "worker")
    );
    !sub && (200..300).contains(&x.response.status)
        && bears_state(x.response.header("content-type").unwrap_or_default())
}

/// Whether a response of this content type shows state (a page, an API's data), as opposed to a script,
/// a style, an image or a font, which are served at any epoch.
pub(crate) fn bears_state(content_type: &str) -> bool {
    let ct = content_type.to_ascii_lowercase();
    ct.contains("html") || ct.contains("json") || ct.contains("xml")
}

/// The epoch of the exchange recorded at `seq`: how many of `writes` came before it.
pub(crate) fn epoch_of(writes: &[u64], seq: u64) -> usize {
    writes.partition_point(|w| *w < seq)
}

/// Which candidate (index into `seqs`, recorded order) answers a page in the run's `epoch`: the `nth` of
/// those recorded in that epoch (the last one once they are used up), else the last one recorded before
/// it (the state the run's writes left), else the first.
pub(crate) fn pick(writes: &[u64], seqs: &[u64], epoch: usize, nth: usize) -> usize {
    let same: Vec<usize> = (0..seqs.len()).filter(|&i| epoch_of(writes, seqs[i]) == epoch).collect();
    if let Some(&i) = same.get(nth.min(same.len().saturating_sub(1))) {
        return i;
    }
    (0..seqs.len()).rev().find(|&i| epoch_of(writes, seqs[i]) < epoch).unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The recording's writes are read by the one rule, with their bodies: MediaWiki's edit stash and
    /// preview (form and multipart bodies) are not writes, its save is; a GraphQL query is not, a
    /// mutation is. Read for JSON only, the stash was the recording's first write while a run's own
    /// stash was not, and a run on the recording's path never reached the state after its save.
    #[test]
    fn the_recordings_writes_are_read_with_their_bodies() {
        use snapshots::{Header, NewSnapshot, Seed, SnapshotSource};
        let store = Store::in_memory();
        let w = store
            .create_snapshot(NewSnapshot {
                name: "t".into(),
                created_ms: 1,
                seed: Seed { start_ms: 1, time_zone: "UTC".into() },
                source: SnapshotSource::Record,
                labels: Default::default(),
            })
            .unwrap();
        let mp = "multipart/form-data; boundary=XyZ";
        let part = |name: &str, v: &str| {
            format!("--XyZ\r\nContent-Disposition: form-data; name=\"{name}\"\r\n\r\n{v}\r\n")
        };
        let preview =
            format!("{}{}--XyZ--\r\n", part("wpTextbox1", "Red"), part("wpPreview", "Show preview"));
        let save = format!("{}{}--XyZ--\r\n", part("wpTextbox1", "Red"), part("wpSave", "Save page"));
        let rows: Vec<(&str, &str, &str, String)> = vec![
            ("GET", "https://w.test/index.php?title=T&action=edit", "", String::new()),
            (
                "POST",
                "https://w.test/api.php",
                "application/x-www-form-urlencoded",
                "action=stashedit&title=T&text=Red".into(),
            ),
            ("POST", "https://w.test/index.php?title=T&action=submit", mp, preview),
            ("POST", "https://w.test/index.php?title=T&action=submit", mp, save),
            (
                "POST",
                "https://w.test/graphql",
                "application/json",
                r#"{"query":"query { me { id } }"}"#.into(),
            ),
            (
                "POST",
                "https://w.test/graphql",
                "application/json",
                r#"{"query":"mutation { like(id: 1) { id } }"}"#.into(),
            ),
        ];
        for (i, (method, url, ct, body)) in rows.iter().enumerate() {
            let mut x =
                snapshots::fixtures::exchange(&store, i as u64, method, url, "text/html", b"ok").unwrap();
            if !body.is_empty() {
                x.request.headers.push(Header::new("content-type", *ct));
                x.request.body = Some(store.put_blob(body.as_bytes()).unwrap());
            }
            w.append(x).unwrap();
        }
        let m = w.finalize(2).unwrap();
        assert_eq!(recorded_writes(&store, &m).unwrap(), [3, 5]);
    }

    #[test]
    fn epochs_and_picks() {
        // seq 1: GET /cart (empty); 2: POST /cart/add; 3: GET /cart (the item); 4: POST /checkout; 5: GET /cart.
        let writes = [2, 4];
        let cart = [1, 3, 5];
        assert_eq!(cart.map(|s| epoch_of(&writes, s)), [0, 1, 2]);
        // Never added: the empty cart, however often it is opened.
        assert_eq!((pick(&writes, &cart, 0, 0), pick(&writes, &cart, 0, 1)), (0, 0));
        // After the add: the cart with the item.
        assert_eq!(pick(&writes, &cart, 1, 0), 1);
        // An epoch the page was not recorded in: the last state before it.
        assert_eq!(pick(&writes, &[1, 5], 1, 0), 0);
        // Several recordings in one epoch (a poll): in order, then the last.
        assert_eq!([0, 1, 2].map(|n| pick(&[], &[7, 8], 0, n)), [0, 1, 1]);
        // The page's recordings all after the run's epoch: its state is unknown; at or before: known.
        assert!(all_later(&writes, &[3, 5], 0));
        assert!(!all_later(&writes, &[3, 5], 1));
        assert!(!all_later(&writes, &cart, 0));
        assert!(!all_later(&[], &[3], 0), "a recording without writes has one state");
        assert!(bears_state("text/html; charset=utf-8") && bears_state("application/json"));
        assert!(
            !bears_state("text/css") && !bears_state("image/png") && !bears_state("application/javascript")
        );
    }
}
