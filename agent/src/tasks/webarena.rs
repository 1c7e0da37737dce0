//! WebArena and VisualWebArena task configs.
//!
//! One JSON object per task (`task_id`, `intent`, `start_url`, `sites`, `storage_state`, `geolocation`,
//! `viewport_size`, `image`, `require_login`, `require_reset`, `eval`, ...), in a file of its own (a
//! directory of them, as WebArena's `config_files/`), or an array of them (`test.raw.json`). Site
//! placeholders (`__SHOPPING__`, `__REDDIT__`, `__GITLAB__`, ...) in URLs and in the `eval` spec are
//! replaced by the URLs of `--site NAME=URL`; several start pages are joined by ` |AND| ` (one tab each).
//! A missing site, a `storage_state` file that does not exist or a field of the wrong type is an error
//! naming the file, the task and the field.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::Value;
use trajectory::{TaskEvalSpec, WebArenaEval};

use super::{Task, TaskError};

/// Why sites cannot be read, or a placeholder resolved.
#[derive(Debug, thiserror::Error)]
pub enum SitesError {
    /// A `NAME=URL` pair without its `=`.
    #[error("--site {0:?}: expected NAME=URL, e.g. SHOPPING=http://localhost:7770")]
    NotAPair(String),
    /// A pair with an empty name or a URL that is not http(s).
    #[error("--site {0:?}: expected NAME=URL with an http(s) URL")]
    NotHttp(String),
    /// The sites file cannot be read.
    #[error("cannot read sites file {path}: {source}")]
    Read {
        /// The file.
        path: String,
        /// The error.
        #[source]
        source: std::io::Error,
    },
    /// The sites file starts as JSON but is not an object of names to URLs.
    #[error("{path}: not a JSON object of NAME: URL: {source}")]
    NotJson {
        /// The file.
        path: String,
        /// The error.
        #[source]
        source: serde_json::Error,
    },
    /// A pair in the sites file is bad.
    #[error("{path}: {pair}")]
    InFile {
        /// The file.
        path: String,
        /// What is wrong with the pair.
        pair: Box<SitesError>,
    },
    /// A `__NAME__` placeholder no site is given for.
    #[error("placeholder __{0}__ has no site: pass --site {0}=URL (or a --sites file)")]
    NoSite(String),
}

/// Site placeholder -> base URL (`SHOPPING` -> `http://shop.example:7770`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Sites(BTreeMap<String, String>);

impl Sites {
    /// From `NAME=URL` pairs (`--site`, repeatable). Names are upper-cased; a trailing `/` is dropped.
    pub fn from_pairs<S: AsRef<str>>(pairs: &[S]) -> Result<Sites, SitesError> {
        let mut m = BTreeMap::new();
        for p in pairs {
            let p = p.as_ref();
            let (name, url) = p.split_once('=').ok_or_else(|| SitesError::NotAPair(p.to_string()))?;
            let name = name.trim().trim_matches('_').to_ascii_uppercase();
            let url = url.trim().trim_end_matches('/');
            if name.is_empty() || !(url.starts_with("http://") || url.starts_with("https://")) {
                return Err(SitesError::NotHttp(p.to_string()));
            }
            m.insert(name, url.to_string());
        }
        Ok(Sites(m))
    }

    /// From a sites file: a JSON object `{"SHOPPING": "http://...", ...}` or `NAME=URL` lines (`#` comments).
    pub fn from_file(path: &Path) -> Result<Sites, SitesError> {
        let p = path.display().to_string();
        let text =
            std::fs::read_to_string(path).map_err(|source| SitesError::Read { path: p.clone(), source })?;
        let in_file = |e: SitesError| SitesError::InFile { path: p.clone(), pair: Box::new(e) };
        let t = text.trim_start_matches('\u{feff}').trim();
        if t.starts_with('{') {
            let m: BTreeMap<String, String> =
                serde_json::from_str(t).map_err(|source| SitesError::NotJson { path: p.clone(), source })?;
            let pairs: Vec<String> = m.into_iter().map(|(k, v)| format!("{k}={v}")).collect();
            return Sites::from_pairs(&pairs).map_err(in_file);
        }
        let pairs: Vec<&str> =
            t.lines().map(str::trim).filter(|l| !l.is_empty() && !l.starts_with('#')).collect();
        Sites::from_pairs(&pairs).map_err(in_file)
    }

    /// Adds (or replaces) the entries of `other`.
    pub fn extend(&mut self, other: Sites) {
        self.0.extend(other.0);
    }

    /// The pairs, for run metadata.
    pub fn pairs(&self) -> &BTreeMap<String, String> {
        &self.0
    }

    /// The sites' host names: sites the run owns, whose writes the side-effect guard lets through.
    pub fn hosts(&self) -> Vec<String> {
        let mut h: Vec<String> =
            self.0.values().filter_map(|u| url::Url::parse(u).ok()?.host_str().map(str::to_string)).collect();
        h.sort();
        h.dedup();
        h
    }

    /// Replaces every `__NAME__` placeholder; the first one without a site is the error.
    pub fn resolve(&self, s: &str) -> Result<String, SitesError> {
        let mut out = String::with_capacity(s.len());
        let mut rest = s;
        while let Some(i) = rest.find("__") {
            let after = &rest[i + 2..];
            match after.find("__") {
                Some(j)
                    if j > 0
                        && after[..j]
                            .bytes()
                            .all(|b| b.is_ascii_uppercase() || b.is_ascii_digit() || b == b'_') =>
                {
                    let name = &after[..j];
                    match self.0.get(name) {
                        Some(url) => {
                            out.push_str(&rest[..i]);
                            out.push_str(url);
                            rest = &after[j + 2..];
                        }
                        None => return Err(SitesError::NoSite(name.to_string())),
                    }
                }
                _ => {
                    out.push_str(&rest[..i + 2]);
                    rest = after;
                }
            }
        }
        out.push_str(rest);
        Ok(out)
    }
}

/// What a WebArena-format task sets up before its first navigation.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(default)]
pub struct TaskSetup {
    /// Every start page (one tab each); the first is also [`Task::start_url`].
    pub start_urls: Vec<String>,
    /// Cookies and localStorage to load (Playwright's storage-state JSON), resolved against the task file.
    pub storage_state: Option<PathBuf>,
    /// Viewport width and height, where the task sets them (VWA often sets the width alone).
    pub viewport: (Option<u32>, Option<u32>),
    /// `{"latitude": .., "longitude": .., "accuracy": ..}`, when the task sets one.
    pub geolocation: Option<Value>,
    /// Input images (VWA): URLs or paths, given to the model.
    pub images: Vec<String>,
    /// The task needs a logged-in session (its storage_state).
    pub require_login: bool,
    /// The task changes site state: a live site must be reset before it runs again.
    pub require_reset: bool,
    /// The `eval` spec with placeholders resolved, typed (scored by the evaluator).
    pub eval: Option<trajectory::TaskEvalSpec>,
    /// Sites the task uses (`sites`).
    pub sites: Vec<String>,
    /// The shop (`SHOPPING` site) whose REST API the eval's helpers call, when they call one
    /// ([`crate::tasks::shop_api`]).
    pub shop_api: Option<String>,
    /// The task's reference answers, for the contamination check ([`crate::contamination`]): WebArena's
    /// `reference_answers`, a WebVoyager line's `eval.must_include` or `reference_answer`, or
    /// `run --reference-file`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub reference_answers: Vec<String>,
}

/// A URL as it is; a relative path joined to `base` (the task file's directory).
fn local_to(base: &Path, s: &str) -> String {
    let url = ["http://", "https://", "data:"].iter().any(|p| s.starts_with(p));
    if url || s.is_empty() || Path::new(s).is_absolute() {
        s.to_string()
    } else {
        base.join(s).display().to_string()
    }
}

/// Whether the text is WebArena-format: a JSON array, or a single object with an `intent`.
pub(crate) fn looks_like(text: &str) -> bool {
    let t = text.trim_start_matches('\u{feff}').trim_start();
    if t.starts_with('[') {
        return true;
    }
    // A WebVoyager file is one object per line: a whole-file parse fails on its second line.
    t.starts_with('{') && serde_json::from_str::<Value>(t).is_ok_and(|v| v.get("intent").is_some())
}

/// Every `*.json` in a directory, in numeric then name order (WebArena's `0.json`, `1.json`, ...).
pub(crate) fn load_dir(dir: &Path, sites: &Sites) -> Result<Vec<Task>, TaskError> {
    let io = |e: std::io::Error| TaskError::Io { path: dir.display().to_string(), source: e };
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .map_err(io)?
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    files.sort_by_key(|p| {
        let stem = p.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
        (stem.parse::<u64>().unwrap_or(u64::MAX), stem)
    });
    let mut out: Vec<Task> = Vec::new();
    let mut seen = std::collections::HashSet::new();
    for f in files {
        let p = f.display().to_string();
        let text = std::fs::read_to_string(&f).map_err(|e| TaskError::Io { path: p.clone(), source: e })?;
        for t in parse(&text, &p, dir, sites)? {
            if !seen.insert(t.id.clone()) {
                return Err(TaskError::Duplicate { path: p, line: 1, id: t.id });
            }
            out.push(t);
        }
    }
    if out.is_empty() {
        return Err(TaskError::Bad {
            path: dir.display().to_string(),
            line: 0,
            detail: "no *.json task configs in this directory".into(),
        });
    }
    Ok(out)
}

/// Parse a WebArena-format file's text (one object or an array). `base` resolves relative
/// `storage_state` paths.
pub(crate) fn parse(text: &str, path: &str, base: &Path, sites: &Sites) -> Result<Vec<Task>, TaskError> {
    from_value(json_text(text, path)?, path, base, sites)
}

/// A task file's JSON (a byte-order mark allowed); a syntax error names the file and line.
pub(crate) fn json_text(text: &str, path: &str) -> Result<Value, TaskError> {
    serde_json::from_str(text.trim_start_matches('\u{feff}')).map_err(|e| TaskError::Bad {
        path: path.to_string(),
        line: e.line(),
        detail: e.to_string(),
    })
}

/// [`parse`] of JSON already read.
pub(crate) fn from_value(v: Value, path: &str, base: &Path, sites: &Sites) -> Result<Vec<Task>, TaskError> {
    let items = match v {
        Value::Array(a) => a,
        o @ Value::Object(_) => vec![o],
        _ => {
            return Err(TaskError::Bad {
                path: path.to_string(),
                line: 1,
                detail: "expected a task object or an array of them".into(),
            })
        }
    };
    let mut out = Vec::with_capacity(items.len());
    let mut seen = std::collections::HashSet::new();
    for (i, item) in items.iter().enumerate() {
        let t = one(item, i, path, base, sites)?;
        if !seen.insert(t.id.clone()) {
            return Err(TaskError::Field {
                path: path.to_string(),
                task: t.id,
                field: "task_id".into(),
                detail: "appears twice; ids name run directories and snapshots".into(),
            });
        }
        out.push(t);
    }
    Ok(out)
}

/// A task's name for messages: its `task_id`, or `#INDEX` when it has none.
pub(super) fn task_name(v: &Value, index: usize) -> String {
    match v.get("task_id") {
        Some(Value::Number(n)) => n.to_string(),
        Some(Value::String(s)) if !s.trim().is_empty() => s.trim().to_string(),
        _ => format!("#{index}"),
    }
}

/// The error for a bad field of the task named `task` in the file `path`.
pub(super) fn field_error(path: &str, task: &str, field: &str, detail: impl std::fmt::Display) -> TaskError {
    TaskError::Field {
        path: path.to_string(),
        task: task.to_string(),
        field: field.to_string(),
        detail: detail.to_string(),
    }
}

fn one(v: &Value, index: usize, path: &str, base: &Path, sites: &Sites) -> Result<Task, TaskError> {
    let task_name = task_name(v, index);
    let err = |field: &str, detail: String| field_error(path, &task_name, field, detail);
    if !v.is_object() {
        return Err(err("(task)", "not a JSON object".into()));
    }
    let id = match v.get("task_id") {
        Some(Value::Number(_)) | Some(Value::String(_)) if !task_name.starts_with('#') => task_name.clone(),
        Some(_) => return Err(err("task_id", "expected a number or a non-empty string".into())),
        None => return Err(err("task_id", "missing".into())),
    };
    let intent = match v.get("intent") {
        Some(Value::String(s)) if !s.trim().is_empty() => s.clone(),
        Some(_) => return Err(err("intent", "expected a non-empty string".into())),
        None => return Err(err("intent", "missing".into())),
    };
    let start = match v.get("start_url") {
        Some(Value::String(s)) if !s.trim().is_empty() => s.clone(),
        Some(_) => return Err(err("start_url", "expected a non-empty string".into())),
        None => return Err(err("start_url", "missing".into())),
    };
    let mut start_urls = Vec::new();
    for u in start.split(" |AND| ") {
        let u = sites.resolve(u.trim()).map_err(|e| err("start_url", e.to_string()))?;
        if !(u.starts_with("http://") || u.starts_with("https://")) {
            return Err(err("start_url", format!("{u:?} is not an http(s) URL")));
        }
        start_urls.push(u);
    }
    let site_names: Vec<String> = match v.get("sites") {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::Array(a)) => a.iter().filter_map(Value::as_str).map(str::to_string).collect(),
        Some(_) => return Err(err("sites", "expected an array of site names".into())),
    };
    let storage_state = match v.get("storage_state") {
        None | Some(Value::Null) => None,
        Some(Value::String(s)) if s.trim().is_empty() => None,
        Some(Value::String(s)) => {
            let p = PathBuf::from(s);
            let p = if p.is_absolute() { p } else { base.join(p) };
            if !p.is_file() {
                return Err(err(
                    "storage_state",
                    format!(
                        "{} does not exist (WebArena writes these with its auto-login script)",
                        p.display()
                    ),
                ));
            }
            Some(p)
        }
        Some(_) => return Err(err("storage_state", "expected a file path or null".into())),
    };
    let viewport = match v.get("viewport_size") {
        None | Some(Value::Null) => (None, None),
        Some(vp @ Value::Object(_)) => {
            let dim = |k: &str| -> Result<Option<u32>, TaskError> {
                match vp.get(k) {
                    None | Some(Value::Null) => Ok(None),
                    Some(n) => match n.as_u64().filter(|n| (100..=10_000).contains(n)) {
                        Some(n) => Ok(Some(n as u32)),
                        None => Err(err(
                            "viewport_size",
                            format!("{k}: expected a number of pixels (100 to 10000)"),
                        )),
                    },
                }
            };
            (dim("width")?, dim("height")?)
        }
        Some(_) => return Err(err("viewport_size", "expected {\"width\": N, \"height\": N}".into())),
    };
    let geolocation = match v.get("geolocation") {
        None | Some(Value::Null) => None,
        Some(g) => {
            let ok = |k: &str| g.get(k).and_then(Value::as_f64).is_some();
            if !(ok("latitude") && ok("longitude")) {
                return Err(err(
                    "geolocation",
                    "expected {\"latitude\": N, \"longitude\": N} or null".into(),
                ));
            }
            Some(g.clone())
        }
    };
    let images = match v.get("image") {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::String(s)) => vec![s.clone()],
        Some(Value::Array(a)) => a.iter().filter_map(Value::as_str).map(str::to_string).collect(),
        Some(_) => return Err(err("image", "expected a URL or path, an array of them, or null".into())),
    };
    // URLs as they are (placeholders resolved), paths relative to the task file, like gold images.
    let images = images
        .iter()
        .map(|i| sites.resolve(i).map(|i| local_to(base, &i)).map_err(|e| err("image", e.to_string())))
        .collect::<Result<Vec<_>, _>>()?;
    let flag = |k: &str| -> Result<bool, TaskError> {
        match v.get(k) {
            None | Some(Value::Null) => Ok(false),
            Some(Value::Bool(b)) => Ok(*b),
            Some(_) => Err(err(k, "expected true or false".into())),
        }
    };
    let mut eval = match v.get("eval") {
        None | Some(Value::Null) => None,
        Some(e @ Value::Object(_)) => {
            let e = resolve_value(e, sites).map_err(|d| err("eval", d.to_string()))?;
            Some(WebArenaEval::from_value(e).map_err(|e| err(&e.path, e.detail))?)
        }
        Some(_) => return Err(err("eval", "expected an object".into())),
    };
    // VWA's gold images may be paths relative to the task file (`coco_images/...jpg`).
    for q in eval.iter_mut().flat_map(|e| e.page_image_query.iter_mut()) {
        if let Some(gold) = q.eval_fuzzy_image_match.as_mut() {
            *gold = gold.split(" |OR| ").map(|g| local_to(base, g.trim())).collect::<Vec<_>>().join(" |OR| ");
        }
    }
    // The shop REST helpers take the shop from WebArena's SHOPPING setting, as theirs do.
    let shop_api = match eval.as_ref().filter(|e| e.helper_texts().any(super::shop_api::calls_one)) {
        None => None,
        Some(_) => Some(sites.resolve("__SHOPPING__").map_err(|e| {
            err("eval", format!("a shop REST helper (func:shopping_get_...) needs the shop: {e}"))
        })?),
    };
    let web = start_urls[0].clone();
    let web_name = if site_names.is_empty() { super::site_name_of(&web) } else { site_names.join("+") };
    Ok(Task {
        web_name,
        id,
        question: intent,
        start_url: web,
        benchmark: trajectory::Benchmark::WebArena,
        setup: TaskSetup {
            start_urls,
            storage_state,
            viewport,
            geolocation,
            images,
            require_login: flag("require_login")?,
            require_reset: flag("require_reset")?,
            reference_answers: eval.as_ref().map(WebArenaEval::answer_texts).unwrap_or_default(),
            eval: eval.map(|e| TaskEvalSpec::WebArena(Box::new(e))),
            sites: site_names,
            shop_api,
        },
    })
}

/// Resolves placeholders in every string of a JSON value.
fn resolve_value(v: &Value, sites: &Sites) -> Result<Value, SitesError> {
    Ok(match v {
        Value::String(s) => Value::String(sites.resolve(s)?),
        Value::Array(a) => Value::Array(a.iter().map(|x| resolve_value(x, sites)).collect::<Result<_, _>>()?),
        Value::Object(o) => Value::Object(
            o.iter()
                .map(|(k, x)| Ok((k.clone(), resolve_value(x, sites)?)))
                .collect::<Result<_, SitesError>>()?,
        ),
        other => other.clone(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sites() -> Sites {
        Sites::from_pairs(&["SHOPPING=http://shop.local:7770/", "reddit=http://forum.local:9999"]).unwrap()
    }

    #[test]
    fn placeholders_table() {
        let s = sites();
        for (input, want) in [
            ("__SHOPPING__/checkout", Ok("http://shop.local:7770/checkout".to_string())),
            ("__REDDIT__ and __SHOPPING__", Ok("http://forum.local:9999 and http://shop.local:7770".into())),
            ("snake__case__ stays", Ok("snake__case__ stays".into())),
            ("no placeholders", Ok("no placeholders".into())),
            ("__GITLAB__/x", Err("--site GITLAB=URL".to_string())),
        ] {
            match (s.resolve(input), want) {
                (Ok(got), Ok(w)) => assert_eq!(got, w, "{input}"),
                (Err(e), Err(w)) => assert!(e.to_string().contains(&w), "{input}: {e}"),
                (got, w) => panic!("{input}: {got:?} vs {w:?}"),
            }
        }
        assert!(Sites::from_pairs(&["SHOPPING"]).is_err());
        assert!(Sites::from_pairs(&["SHOPPING=ftp://x"]).is_err());
    }

    #[test]
    fn a_webarena_config_loads_with_every_field() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join(".auth")).unwrap();
        std::fs::write(dir.path().join(".auth/shopping_state.json"), "{\"cookies\": []}").unwrap();
        let text = r#"[{"sites": ["shopping", "reddit"], "task_id": 7, "require_login": true,
            "storage_state": "./.auth/shopping_state.json",
            "start_url": "__SHOPPING__/ |AND| __REDDIT__/forums",
            "geolocation": null, "viewport_size": {"width": 1280, "height": 720},
            "intent_template": "x", "instantiation_dict": {}, "intent": "What is the price?",
            "require_reset": false, "image": null,
            "eval": {"eval_types": ["string_match", "url_match"], "reference_answers": {"exact_match": "$5"},
                     "reference_url": "__SHOPPING__/cart", "program_html": [], "string_note": "", "url_note": "GOLD in PRED"}}]"#;
        let t = parse(text, "test.raw.json", dir.path(), &sites()).unwrap();
        assert_eq!(t.len(), 1);
        let t = &t[0];
        assert_eq!(
            (t.id.as_str(), t.start_url.as_str(), t.web_name.as_str()),
            ("7", "http://shop.local:7770/", "shopping+reddit")
        );
        assert_eq!(t.setup.start_urls, vec!["http://shop.local:7770/", "http://forum.local:9999/forums"]);
        assert_eq!(t.setup.viewport, (Some(1280), Some(720)));
        assert!(t.setup.require_login && !t.setup.require_reset);
        assert!(t.setup.storage_state.as_ref().unwrap().ends_with(".auth/shopping_state.json"));
        let eval = t.setup.eval.as_ref().and_then(TaskEvalSpec::webarena).unwrap();
        assert_eq!(eval.reference_url.as_deref(), Some("http://shop.local:7770/cart"));
        assert_eq!(t.setup.reference_answers, ["$5"]);
        assert!(looks_like(text));
        assert!(!looks_like("{\"id\": \"a\", \"ques\": \"q\", \"web\": \"https://a\"}\n{\"id\": \"b\", \"ques\": \"q\", \"web\": \"https://a\"}"));
    }

    #[test]
    fn bad_configs_name_file_task_and_field() {
        let dir = tempfile::tempdir().unwrap();
        let ok = r#""task_id": 3, "intent": "q", "start_url": "__SHOPPING__""#;
        for (text, needle) in [
            (
                format!("[{{{ok}, \"storage_state\": \"./.auth/missing.json\"}}]"),
                "t.json: task 3: storage_state: ",
            ),
            (format!("[{{{ok}, \"viewport_size\": {{\"width\": 5}}}}]"), "task 3: viewport_size: width"),
            (format!("[{{{ok}, \"require_login\": \"yes\"}}]"), "task 3: require_login"),
            (format!("[{{{ok}, \"eval\": [1]}}]"), "task 3: eval"),
            (
                format!("[{{{ok}, \"eval\": {{\"program_html\": [{{\"url\": \"last\", \"prep_actions\": [{{}}]}}]}}}}]"),
                "task 3: eval.program_html[0].prep_actions: expected a text or a number in the list",
            ),
            (
                "[{\"task_id\": 4, \"intent\": \"q\", \"start_url\": \"__GITLAB__\"}]".to_string(),
                "task 4: start_url: placeholder __GITLAB__",
            ),
            ("[{\"task_id\": 5, \"start_url\": \"http://a\"}]".to_string(), "task 5: intent: missing"),
            ("[{\"intent\": \"q\", \"start_url\": \"http://a\"}]".to_string(), "task #0: task_id: missing"),
            (format!("[{{{ok}}}, {{{ok}}}]"), "task 3: task_id: appears twice"),
            ("[1, 2".to_string(), "t.json"),
        ] {
            let e = parse(&text, "t.json", dir.path(), &sites()).unwrap_err().to_string();
            assert!(e.contains(needle), "{needle}: {e}");
        }
    }

    #[test]
    fn a_directory_of_configs_loads_in_numeric_order() {
        let dir = tempfile::tempdir().unwrap();
        for i in [10, 2, 1] {
            std::fs::write(
                dir.path().join(format!("{i}.json")),
                format!("{{\"task_id\": {i}, \"intent\": \"q{i}\", \"start_url\": \"__SHOPPING__\"}}"),
            )
            .unwrap();
        }
        let t = load_dir(dir.path(), &sites()).unwrap();
        assert_eq!(t.iter().map(|t| t.id.as_str()).collect::<Vec<_>>(), ["1", "2", "10"]);
        let empty = tempfile::tempdir().unwrap();
        assert!(load_dir(empty.path(), &sites()).unwrap_err().to_string().contains("no *.json"));
    }
}
