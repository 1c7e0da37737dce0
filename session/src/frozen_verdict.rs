//! Which replayed runs of state tasks the frozen web can score, and why the others are counted apart.
//!
//! A state task's checks read the site's state (WebArena's `program_html` and `page_image_query`, the
//! shop's REST helpers) or the run's own requests (WebArena-Verified's network checks). The frozen web
//! knows the state after every prefix of the recording's writes (replay serves each page by the run's
//! write epoch, `replay::epochs`, and the recording's state probes read the checked pages at each one), so:
//!
//! - a run whose counted writes are a prefix of the recording's (none included) is **scored** at its
//!   epoch, like any other run: the agent that answers without touching the shop fails, scored;
//! - a run that made a write the recording did not make at that point (another item, another text,
//!   another order, a write the replay could only miss) has an **unknown** state: counted apart, with that
//!   write named ([`proxy_report::writes::classify`], the one rule);
//! - a run that read a page whose state at its epoch no recording knows (a `state-unknown` miss in its
//!   wire log, such as a check page recorded only after a write the run did not make, in a recording made
//!   without state probes) is counted apart too, with the page named;
//! - WebArena-Verified's network checks read the run's own wire, so its writes in another order are its
//!   own to be judged on; only a write the replay answered with a miss (the site's answer unknown) puts a
//!   Verified run apart, or a read it missed that the run's network check depends on (scored with the read
//!   answered and without, the verdicts differ: [`verified_reads`]).

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use proxy_report::wire::{Answer, WireEntry};
use proxy_report::writes::{classify, counts, is_write, FrozenState, RunWrite, Write};
use trajectory::{RunDir, RunMode, TaskEvalSpec, Trajectory};

use crate::network_events::{wire_header, Events};

mod verified_reads;

/// Per replayed task counted apart: why (its first unknown write, or the page whose state is unknown).
/// Tasks the frozen web can score are not in it.
pub type CountedApart = BTreeMap<String, String>;

/// What kind of state a task's checks read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Reads {
    /// The site's state (pages, REST helpers): the run's epoch decides what they see.
    State,
    /// The run's own requests (Verified's network checks): only a missed write is unknown.
    OwnWire,
}

fn reads_of(t: &Trajectory) -> Option<Reads> {
    match t.task_eval.as_ref()? {
        TaskEvalSpec::Verified(_) => Some(Reads::OwnWire),
        spec => spec.webarena().filter(|w| w.has_browser_checks()).map(|_| Reads::State),
    }
}

/// The replayed state tasks of `run` the frozen web cannot score, and why (see the module docs). `network`
/// is the run's network events (`crate::network_events::for_run`), which Verified's checks read.
pub fn counted_apart(store: &Path, run: &Path, network: &Events) -> CountedApart {
    let mut out = CountedApart::new();
    let Ok(trajs) = RunDir::new(run).trajectories() else { return out };
    let todo: Vec<_> = trajs
        .into_iter()
        .filter(|(_, t)| t.mode == RunMode::Replay)
        .filter_map(|(dir, t)| reads_of(&t).map(|r| (dir, t, r)))
        .collect();
    if todo.is_empty() {
        return out;
    }
    let store = match snapshots::Store::open_read_only(store) {
        Ok(s) => s,
        Err(e) => {
            for (_, t, _) in todo {
                out.insert(t.task_id.clone(), format!("the store cannot be read: {e}"));
            }
            return out;
        }
    };
    for (dir, t, reads) in todo {
        let why = match (dir.read_wire(&t), t.snapshot.as_deref()) {
            (Ok(None), _) => Some("no wire log (made by an older webfreeze)".to_string()),
            (Err(e), _) => Some(e.to_string()),
            (_, None) => Some("no recording named".to_string()),
            (Ok(Some(log)), Some(name)) => match recorded_writes(&store, name) {
                Err(e) => Some(format!("{name}: {e}")),
                Ok((theirs, hosts)) => judge(&log.entries, &theirs, &hosts, reads).or_else(|| {
                    let TaskEvalSpec::Verified(v) = t.task_eval.as_ref()? else { return None };
                    let events = network.get(&t.task_id)?.as_ref().ok()?;
                    verified_reads::hangs_on_a_missed_read(v, &log.entries, &events.events)
                }),
            },
        };
        if let Some(why) = why {
            out.insert(t.task_id.clone(), why);
        }
    }
    out
}

/// Why a run with this wire is counted apart, or None when the frozen web can score it.
fn judge(entries: &[WireEntry], theirs: &[Write], hosts: &BTreeSet<String>, reads: Reads) -> Option<String> {
    let mine = run_writes(entries, hosts);
    match reads {
        Reads::OwnWire => mine.iter().find_map(|w| match w {
            RunWrite::Missed(w) => Some(format!(
                "wrote {}, which the frozen web could not answer (the recording never made it): the site's \
                 answer to it is unknown",
                w.describe()
            )),
            RunWrite::Answered { .. } => None,
        }),
        Reads::State => match classify(&mine, theirs) {
            FrozenState::Unknown { why } => Some(why),
            FrozenState::Epoch(k) => entries.iter().find(|e| e.answer == Answer::StateUnknown).map(|e| {
                format!(
                    "read {} {}, which the recording has only after writes this run did not make (state \
                     unknown at write epoch {k})",
                    e.method, e.url
                )
            }),
        },
    }
}

fn content_type(h: &[(String, String)]) -> &str {
    wire_header(h, "content-type").unwrap_or("")
}

/// The run's writes on the recording's hosts (the browser's own background writes are not the task's),
/// in the order they were answered, with how the frozen web answered each.
fn run_writes(entries: &[WireEntry], hosts: &BTreeSet<String>) -> Vec<RunWrite> {
    entries
        .iter()
        .filter(|e| hosts.contains(&host_of(&e.url)))
        .filter_map(|e| {
            let (ct, body) = (content_type(&e.request_headers), e.request_body.as_deref().unwrap_or(""));
            if !is_write(&e.method, &e.url, ct, body) {
                return None;
            }
            let write = Write::new(&e.method, &e.url, ct, body);
            match e.answer {
                Answer::Exact | Answer::Normalised | Answer::WithoutBody => {
                    Some(RunWrite::Answered { write, status: e.status })
                }
                // Refused by a guard or answered by replay itself: nothing reached any state.
                Answer::Blocked | Answer::Synthetic => None,
                // A miss, another recording's answer, the live site: the frozen web does not know its effect.
                _ => Some(RunWrite::Missed(write)),
            }
        })
        .collect()
}

fn host_of(url: &str) -> String {
    url::Url::parse(url).ok().and_then(|u| u.host_str().map(str::to_ascii_lowercase)).unwrap_or_default()
}

/// The writes a recording made that count (state probes left out), and the hosts it talked to.
fn recorded_writes(
    store: &snapshots::Store,
    name: &str,
) -> Result<(Vec<Write>, BTreeSet<String>), snapshots::StoreError> {
    let m = store.manifest(name)?;
    let mut out = Vec::new();
    let mut hosts = BTreeSet::new();
    for x in store.exchanges(&m) {
        let x = x?;
        hosts.insert(host_of(&x.request.url));
        if x.flags.probe || !counts(x.response.status) {
            continue;
        }
        let ct = x.request.header("content-type").unwrap_or_default().to_string();
        let body = match &x.request.body {
            Some(b) => String::from_utf8_lossy(&store.blob_bytes(&b.hash)?).into_owned(),
            None => String::new(),
        };
        if is_write(&x.request.method, &x.request.url, &ct, &body) {
            out.push(Write::new(&x.request.method, &x.request.url, &ct, &body));
        }
    }
    Ok((out, hosts))
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A wire log entry as the proxy writes one: a form request (body "" for none) and how it was answered.
    pub(crate) fn entry(method: &str, url: &str, body: &str, answer: Answer, status: u16) -> WireEntry {
        WireEntry {
            n: 0,
            method: method.into(),
            url: url.into(),
            request_headers: vec![
                ("content-type".into(), "application/x-www-form-urlencoded".into()),
                ("accept".into(), "text/html,application/xhtml+xml".into()),
            ],
            request_body: (!body.is_empty()).then(|| body.to_string()),
            request_body_cut: None,
            status,
            response_headers: Vec::new(),
            answer,
            overlay: None,
            recorded: None,
            response_body: None,
            response_text: None,
            control: None,
        }
    }

    /// The frozen verdict's table: which runs of a state task are scored, which counted apart, and why.
    #[test]
    fn which_runs_the_frozen_web_scores() {
        let add = Write::new(
            "POST",
            "https://shop.test/cart/add",
            "application/x-www-form-urlencoded",
            "slug=glass-jar",
        );
        let theirs = vec![add];
        let hosts: BTreeSet<String> = ["shop.test".to_string()].into();
        let cart = entry("GET", "https://shop.test/cart", "", Answer::Exact, 200);
        let added = entry("POST", "https://shop.test/cart/add", "slug=glass-jar", Answer::Exact, 302);
        let mug = entry("POST", "https://shop.test/cart/add", "slug=red-mug", Answer::Miss, 404);
        let unknown_cart = entry("GET", "https://shop.test/cart", "", Answer::StateUnknown, 404);
        let chrome =
            entry("POST", "https://update.googleapis.com/service/update2/json", "x", Answer::Miss, 404);
        type Row = (&'static str, Vec<WireEntry>, Reads, Option<&'static str>);
        let rows: Vec<Row> = vec![
            ("answer only, the cart probed at epoch 0", vec![cart.clone()], Reads::State, None),
            (
                "look only",
                vec![
                    entry("GET", "https://shop.test/product/glass-jar", "", Answer::Exact, 200),
                    cart.clone(),
                ],
                Reads::State,
                None,
            ),
            ("the recording's own write", vec![added.clone(), cart.clone()], Reads::State, None),
            ("another product", vec![mug.clone(), cart.clone()], Reads::State, Some("slug=red-mug")),
            (
                "the cart recorded only after the add",
                vec![unknown_cart.clone()],
                Reads::State,
                Some("state unknown at write epoch 0"),
            ),
            ("the browser's own background write", vec![chrome, cart.clone()], Reads::State, None),
            ("Verified: a missed write", vec![mug], Reads::OwnWire, Some("could not answer")),
            ("Verified: the recording's write", vec![added], Reads::OwnWire, None),
        ];
        for (name, wire, reads, want) in rows {
            let got = judge(&wire, &theirs, &hosts, reads);
            match want {
                None => assert_eq!(got, None, "{name}"),
                Some(w) => assert!(got.as_deref().is_some_and(|g| g.contains(w)), "{name}: {got:?}"),
            }
        }
    }
}
