//! What a write is, in one place: which requests change the state a site shows, which of them count, how
//! two of them are compared, and where a run's writes leave it against a recording's. Replay's write
//! epochs (`replay::epochs`), the recorder's count of writes (which starts a state probe), the frozen
//! verdict of a state task (`session::frozen_verdict`) and the network checks all read this module, so
//! they cannot disagree on what moved the state.
//!
//! The rule:
//! - **A write** is a POST, PUT, PATCH or DELETE that is not telemetry (a beacon, analytics, logs), not a
//!   credential exchange (a `/token` endpoint: the REST helpers' admin token), and not a GraphQL query
//!   (a GraphQL document whose operation is not a `mutation`).
//! - **It counts** when it changed the state: the origin answered it 2xx or 3xx. A recorded write that
//!   failed moved nothing, in the recording and in a run that replays it.
//! - **Two writes are the same** when method, URL and canonical body are: a form's pairs sorted, a JSON
//!   body's keys sorted, anything else as sent.
//! - **Order matters**: a run's counted writes leave it at epoch *k* when they are the recording's first
//!   *k* writes, in the recording's order ([`classify`]). Anything else (another item, another text, the
//!   same writes in another order, a write the replay could not answer) leaves the run's state unknown,
//!   and the first such write is named. A PUT or DELETE made again right after the same one is not a new
//!   write: both methods are idempotent (RFC 9110, 9.2.2), so the state is the one the first left.

use serde::{Deserialize, Serialize};

/// Path pieces of telemetry writes, which change no state a page shows.
const TELEMETRY: &[&str] =
    &["collect", "beacon", "analytics", "track", "telemetry", "metrics", "rum", "log", "logs"];

/// Whether a request with this method and URL may change state: a write method, not telemetry, not a
/// credential exchange. [`is_write`] also reads the body (a GraphQL query is a read).
pub fn is_state_write(method: &str, url: &str) -> bool {
    if !matches!(method.to_ascii_uppercase().as_str(), "POST" | "PUT" | "PATCH" | "DELETE") {
        return false;
    }
    let path = url.split(['?', '#']).next().unwrap_or(url).to_ascii_lowercase();
    let path = path.split_once("://").map_or(path.as_str(), |(_, rest)| rest);
    let segments: Vec<&str> = path.split('/').skip(1).filter(|s| !s.is_empty()).collect();
    if segments.last().is_some_and(|s| *s == "token") {
        return false;
    }
    !segments.iter().flat_map(|s| s.split(['.', '-', '_'])).any(|seg| TELEMETRY.contains(&seg))
}

/// Whether a request is a write ([`is_state_write`]), its body read too: a GraphQL document whose
/// operations are all queries or subscriptions reads, whatever the method, and so does an editor's
/// preview or comparison (a form whose pressed button is a preview or a diff: MediaWiki's `wpPreview` /
/// `wpDiff`, DokuWiki's `do[preview]`, a `preview` action; MediaWiki's API `action=stashedit`, which parses
/// the text being typed ahead of a save, and `action=parse`, its live preview), which shows or prepares a
/// page and saves nothing.
pub fn is_write(method: &str, url: &str, content_type: &str, body: &str) -> bool {
    is_state_write(method, url) && !is_graphql_read(content_type, body) && !is_preview(content_type, body)
}

/// A form body whose submit is a preview or a diff.
fn is_preview(content_type: &str, body: &str) -> bool {
    let ct = content_type.to_ascii_lowercase();
    if !(ct.is_empty() || ct.contains("x-www-form-urlencoded") || ct.contains("multipart")) {
        return false;
    }
    if ct.contains("multipart") {
        return ["name=\"wpPreview\"", "name=\"wpDiff\"", "name=\"do[preview]\"", "name=\"do[diff]\""]
            .iter()
            .any(|m| body.contains(m));
    }
    form_urlencoded::parse(body.as_bytes()).any(|(k, v)| {
        matches!(k.as_ref(), "wpPreview" | "wpDiff" | "do[preview]" | "do[diff]")
            || (matches!(k.as_ref(), "do" | "action" | "mode") && matches!(v.as_ref(), "preview" | "diff"))
            || (k == "action" && matches!(v.as_ref(), "stashedit" | "parse"))
    })
}

/// A JSON body `{"query": "..."}` (or a batch of them) whose documents hold no `mutation`.
fn is_graphql_read(content_type: &str, body: &str) -> bool {
    if !content_type.to_ascii_lowercase().contains("json") {
        return false;
    }
    let Ok(v) = serde_json::from_str::<serde_json::Value>(body) else { return false };
    let ops: Vec<&serde_json::Value> = match &v {
        serde_json::Value::Array(a) => a.iter().collect(),
        other => vec![other],
    };
    !ops.is_empty()
        && ops.iter().all(|op| {
            op.get("query").and_then(|q| q.as_str()).is_some_and(|q| {
                let q = q.trim_start();
                !q.is_empty()
                    && !q.split(|c: char| !c.is_ascii_alphanumeric() && c != '_').any(|w| w == "mutation")
            })
        })
}

/// Whether a write answered with `status` changed the state (2xx, 3xx).
pub fn counts(status: u16) -> bool {
    (200..400).contains(&status)
}

/// A body in the form two writes are compared in: a form's pairs sorted (a multipart form's too, without
/// its boundary, which the browser draws afresh for every submission), a JSON body's keys sorted (at every
/// depth), anything else as it is.
pub fn canonical_body(content_type: &str, body: &str) -> String {
    let ct = content_type.to_ascii_lowercase();
    if ct.starts_with("multipart/form-data") {
        if let Some(mut pairs) = multipart_pairs(content_type, body) {
            pairs.sort();
            return form_urlencoded::Serializer::new(String::new()).extend_pairs(pairs).finish();
        }
    }
    if ct.contains("json") {
        if let Ok(v) = serde_json::from_str::<serde_json::Value>(body) {
            // serde_json's maps are ordered by key (no `preserve_order`): writing one back sorts them.
            return v.to_string();
        }
    }
    if ct.contains("x-www-form-urlencoded") || (ct.is_empty() && body.contains('=') && !body.contains(' ')) {
        let mut pairs: Vec<(String, String)> =
            form_urlencoded::parse(body.as_bytes()).map(|(k, v)| (k.into_owned(), v.into_owned())).collect();
        pairs.sort();
        return form_urlencoded::Serializer::new(String::new()).extend_pairs(pairs).finish();
    }
    body.to_string()
}

/// A multipart form's (name, value) pairs (a file part's value is its file name and content), or None when
/// the body does not split on the content type's boundary. Written here, not taken from a crate: only names
/// and values are needed to compare two submissions, and the multipart crates (multer) parse an async
/// stream of a request being received, not a recorded body.
fn multipart_pairs(content_type: &str, body: &str) -> Option<Vec<(String, String)>> {
    let boundary = content_type.split(';').find_map(|p| {
        let (k, v) = p.split_once('=')?;
        k.trim().eq_ignore_ascii_case("boundary").then(|| v.trim().trim_matches('"').to_string())
    })?;
    let delimiter = format!("--{boundary}");
    let mut parts = body.split(delimiter.as_str());
    parts.next()?; // the preamble
    let mut out = Vec::new();
    for part in parts {
        if part.starts_with("--") {
            break; // the closing delimiter
        }
        let part = part.strip_prefix("\r\n").or_else(|| part.strip_prefix('\n')).unwrap_or(part);
        let (head, value) = part.split_once("\r\n\r\n").or_else(|| part.split_once("\n\n"))?;
        let value = value.strip_suffix("\r\n").or_else(|| value.strip_suffix('\n')).unwrap_or(value);
        let disposition =
            head.lines().find(|l| l.to_ascii_lowercase().starts_with("content-disposition:"))?;
        let param = |key: &str| {
            disposition.split(';').find_map(|p| {
                let (k, v) = p.split_once('=')?;
                (k.trim() == key).then(|| v.trim().trim_matches('"').to_string())
            })
        };
        let name = param("name")?;
        match param("filename") {
            Some(file) => out.push((name, format!("{file}:{value}"))),
            None => out.push((name, value.to_string())),
        }
    }
    (!out.is_empty()).then_some(out)
}

/// One write, as compared.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Write {
    /// Method, upper case.
    pub method: String,
    /// Absolute URL.
    pub url: String,
    /// The canonical body ([`canonical_body`]).
    pub body: String,
}

impl Write {
    /// A write as sent (the body made canonical here).
    pub fn new(method: &str, url: &str, content_type: &str, body: &str) -> Write {
        Write {
            method: method.to_ascii_uppercase(),
            url: url.to_string(),
            body: canonical_body(content_type, body),
        }
    }

    /// `POST https://shop.test/cart/add (slug=mug)`, the body cut at 80 characters.
    pub fn describe(&self) -> String {
        let mut s = format!("{} {}", self.method, self.url);
        if !self.body.is_empty() {
            let cut: String = self.body.chars().take(80).collect();
            let more = if cut.len() < self.body.len() { "..." } else { "" };
            s.push_str(&format!(" ({cut}{more})"));
        }
        s
    }
}

/// A run's write and how the frozen web answered it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RunWrite {
    /// Answered from a recorded exchange.
    Answered {
        /// The write.
        write: Write,
        /// The recorded answer's status (a failed write moved nothing).
        status: u16,
    },
    /// The frozen web had no answer (a miss): the agent's attempt, whose effect nobody knows.
    Missed(Write),
}

/// Where a run's writes leave it against its recording's.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum FrozenState {
    /// The run's counted writes are the recording's first `epoch` writes, in order: the frozen web knows
    /// the state it left (the recording's after those writes).
    Epoch(usize),
    /// The run made a write the recording did not make at that point: nobody knows the state it left.
    Unknown {
        /// The first such write, in words (`wrote POST ... which the recording never did`).
        why: String,
    },
}

/// Where the run's writes (`run`, in the order made) leave it against the recording's counted writes
/// (`recorded`, in order). See the module docs for the rule.
pub fn classify(run: &[RunWrite], recorded: &[Write]) -> FrozenState {
    let mut k = 0;
    for w in run {
        match w {
            RunWrite::Answered { status, .. } if !counts(*status) => continue,
            RunWrite::Missed(w) => {
                return FrozenState::Unknown {
                    why: format!(
                        "wrote {}, which the frozen web could not answer (the recording never made it)",
                        w.describe()
                    ),
                }
            }
            RunWrite::Answered { write, .. } => {
                if recorded.get(k) == Some(write) {
                    k += 1;
                    continue;
                }
                // PUT and DELETE are idempotent (RFC 9110, 9.2.2): the same one again, right after it,
                // leaves the state the first left.
                if matches!(write.method.as_str(), "PUT" | "DELETE")
                    && k > 0
                    && recorded.get(k - 1) == Some(write)
                {
                    continue;
                }
                let why = match recorded.iter().position(|r| r == write) {
                    Some(j) if j < k => {
                        format!("wrote {} again, which the recording did once", write.describe())
                    }
                    Some(_) => format!(
                        "wrote {} out of the recording's order (its next write was {})",
                        write.describe(),
                        recorded.get(k).map_or_else(|| "none".to_string(), Write::describe)
                    ),
                    None => match recorded.get(k) {
                        Some(r) if r.method == write.method && r.url == write.url => format!(
                            "wrote {} with another body than the recording's ({})",
                            write.describe(),
                            r.body
                        ),
                        _ => format!("wrote {}, which the recording never did", write.describe()),
                    },
                };
                return FrozenState::Unknown { why };
            }
        }
    }
    FrozenState::Epoch(k)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn w(m: &str, u: &str, b: &str) -> Write {
        Write::new(m, u, "application/x-www-form-urlencoded", b)
    }
    fn ok(x: &Write) -> RunWrite {
        RunWrite::Answered { write: x.clone(), status: 302 }
    }

    /// Epochs x writes: none, prefix, all, other, reordered, repeated, failed, missed, another body.
    #[test]
    fn a_runs_writes_against_the_recordings() {
        let add = w("POST", "https://s.test/cart/add", "slug=jar&qty=1");
        let pay = w("POST", "https://s.test/checkout", "");
        let mug = w("POST", "https://s.test/cart/add", "slug=mug&qty=1");
        let rec = [add.clone(), pay.clone()];
        let put = w("PUT", "https://s.test/profile", "name=Ann");
        let rec_put = [put.clone(), add.clone()];
        let failed = RunWrite::Answered { write: pay.clone(), status: 500 };
        type Row = (&'static str, Vec<RunWrite>, Result<usize, &'static str>);
        let rows: Vec<Row> = vec![
            ("none", vec![], Ok(0)),
            ("prefix", vec![ok(&add)], Ok(1)),
            ("all", vec![ok(&add), ok(&pay)], Ok(2)),
            (
                "the same form, fields in another order",
                vec![ok(&w("POST", "https://s.test/cart/add", "qty=1&slug=jar"))],
                Ok(1),
            ),
            ("a failed write moves nothing", vec![ok(&add), failed], Ok(1)),
            ("another item", vec![ok(&mug)], Err("another body")),
            ("another write", vec![ok(&w("POST", "https://s.test/wishlist", "slug=jar"))], Err("never did")),
            ("reordered", vec![ok(&pay), ok(&add)], Err("out of the recording's order")),
            ("repeated", vec![ok(&add), ok(&add)], Err("again")),
            ("a PUT repeated at once is idempotent", vec![ok(&put), ok(&put)], Ok(1)),
            ("a PUT repeated after another write is not", vec![ok(&put), ok(&add), ok(&put)], Err("again")),
            ("past the recording", vec![ok(&add), ok(&pay), ok(&pay)], Err("again")),
            ("missed", vec![RunWrite::Missed(mug.clone())], Err("could not answer")),
        ];
        for (name, run, want) in rows {
            let got = classify(&run, if name.contains("PUT") { &rec_put } else { &rec });
            match want {
                Ok(k) => assert_eq!(got, FrozenState::Epoch(k), "{name}"),
                Err(w) => match &got {
                    FrozenState::Unknown { why } => assert!(why.contains(w), "{name}: {why}"),
                    other => panic!("{name}: {other:?}"),
                },
            }
        }
    }

    #[test]
    fn which_requests_are_writes() {
        for (m, u, ct, body, want) in [
            ("POST", "https://s.test/cart/add", "", "slug=jar", true),
            ("DELETE", "https://s.test/api/posts/3", "", "", true),
            ("PATCH", "https://s.test/api/posts/3", "application/json", "{}", true),
            ("GET", "https://s.test/cart", "", "", false),
            ("POST", "https://s.test/g/collect?v=2", "", "", false),
            ("POST", "https://s.test/rest/V1/integration/admin/token", "application/json", "{}", false),
            (
                "POST",
                "https://s.test/graphql",
                "application/json",
                r#"{"query":"query Cart { cart { id } }"}"#,
                false,
            ),
            ("POST", "https://s.test/graphql", "application/json", r#"{"query":"{ cart { id } }"}"#, false),
            (
                "POST",
                "https://s.test/graphql",
                "application/json",
                r#"{"query":"mutation { addToCart(id: 3) { id } }"}"#,
                true,
            ),
            (
                "POST",
                "https://s.test/graphql",
                "application/json",
                r#"{"operationName":"AddToCart","variables":{}}"#,
                true,
            ),
            (
                "POST",
                "https://w.test/doku.php",
                "application/x-www-form-urlencoded",
                "id=a&wikitext=x&do%5Bpreview%5D=Preview",
                false,
            ),
            (
                "POST",
                "https://w.test/doku.php",
                "application/x-www-form-urlencoded",
                "id=a&wikitext=x&do%5Bsave%5D=Save",
                true,
            ),
            (
                "POST",
                "https://w.test/index.php?title=A&action=submit",
                "application/x-www-form-urlencoded",
                "wpTextbox1=x&wpPreview=Show+preview",
                false,
            ),
            (
                "POST",
                "https://w.test/api.php",
                "application/x-www-form-urlencoded",
                "action=stashedit&title=A&text=x&summary=&contentmodel=wikitext&format=json",
                false,
            ),
            (
                "POST",
                "https://w.test/api.php",
                "application/x-www-form-urlencoded",
                "action=edit&title=A&text=x",
                true,
            ),
            (
                "POST",
                "https://w.test/index.php?title=A&action=submit",
                "application/x-www-form-urlencoded",
                "wpTextbox1=x&wpSave=Save",
                true,
            ),
        ] {
            assert_eq!(is_write(m, u, ct, body), want, "{m} {u} {body}");
        }
        assert_eq!(
            canonical_body("application/json", r#"{"b":1,"a":{"d":2,"c":3}}"#),
            r#"{"a":{"c":3,"d":2},"b":1}"#
        );
        assert!(counts(200) && counts(302) && !counts(404) && !counts(500));
    }

    /// A multipart form is compared by its fields, never by the boundary the browser drew for it (found on
    /// MediaWiki's edit form: the same save, submitted twice, had two boundaries).
    #[test]
    fn multipart_forms_compare_by_their_fields() {
        let form = |b: &str, fields: &[(&str, &str)]| {
            let mut s = String::new();
            for (k, v) in fields {
                s.push_str(&format!("--{b}\r\nContent-Disposition: form-data; name=\"{k}\"\r\n\r\n{v}\r\n"));
            }
            s.push_str(&format!("--{b}--\r\n"));
            (format!("multipart/form-data; boundary={b}"), s)
        };
        let text = "Tomatoes need sun.\r\nWater them daily.";
        let (ct1, a) = form("----WebKitFormBoundaryA1", &[("wpTextbox1", text), ("wpSave", "Save")]);
        let (ct2, b) = form("----WebKitFormBoundaryZ9", &[("wpSave", "Save"), ("wpTextbox1", text)]);
        let (ct3, c) =
            form("----WebKitFormBoundaryQ5", &[("wpTextbox1", "Tomatoes need shade."), ("wpSave", "Save")]);
        let (ct4, d) = form("\"quoted\"", &[("wpTextbox1", text), ("wpSave", "Save")]);
        let canon = |ct: &str, body: &str| canonical_body(ct, body);
        assert_eq!(canon(&ct1, &a), canon(&ct2, &b), "another boundary and order: the same write");
        assert_eq!(canon(&ct1, &a), canon(&ct4, &d.replace("--\"quoted\"", "--quoted")), "a quoted boundary");
        assert_ne!(canon(&ct1, &a), canon(&ct3, &c), "another text: another write");
        assert!(canon(&ct1, &a).contains("wpTextbox1=Tomatoes"), "{}", canon(&ct1, &a));
        // A body that does not split on its boundary is compared as it is.
        assert_eq!(canon("multipart/form-data; boundary=zz", "not a form"), "not a form");
        assert_eq!(canon("multipart/form-data", &a), a);
    }
}
