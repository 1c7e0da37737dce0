//! `cargo xtask bench fidelity DIR_OF_HARS [--loads N]`: how much of a real captured page each replay
//! system serves, with the right content, counted in the browser.
//!
//! Per HAR file with an HTML page that has a body, its first such page is loaded N times (default 3) in
//! headless Chromium 156 driven by Playwright (`playwright-core` from npm, the system Chromium through
//! `executablePath`) under three systems side by side:
//! - webfreeze: `snapshots import` then `webfreeze replay` (the release binary) as the browser's proxy;
//! - Playwright: `routeFromHAR(har, { notFound: "abort" })`;
//! - mitmproxy 12 (PyPI): `mitmdump --server-replay HAR` with `server_replay_extra=404`, flows reused.
//!
//! A request counts as served with content when the browser got a response that is not a replay miss
//! (a 404 the capture did not record, a request aborted by the replayer) and not an answer without the
//! captured body (an entry the HAR recorded with no body, webfreeze's `x-webfreeze` markers for
//! not-captured bodies and synthetic icons). Every system is judged by the same rule. webfreeze's own
//! report adds its layer breakdown, and how many of its misses the page's rendering needed (by the
//! request's `Sec-Fetch-Dest`: document, frame, style, script, font, image, media). Text and screenshot hashes tell whether the N loads were identical.
//! Nothing from the corpus is written outside a temporary directory.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{bail, Context as _};
use serde_json::{json, Value};

use crate::proxy_bench::{mitmdump, spawn_mitm, webfreeze_bin};
use crate::spawn::spawn_listening;

const DRIVER: &str = include_str!("fidelity.js");

/// playwright-core from npm, installed into the build cache on first use.
fn playwright() -> anyhow::Result<PathBuf> {
    let dir = std::env::var_os("WEBFREEZE_BUILD_CACHE")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            PathBuf::from(std::env::var("HOME").unwrap_or_default()).join(".cache/webfreeze-build")
        })
        .join("playwright");
    if !dir.join("node_modules/playwright-core").exists() {
        eprintln!("installing playwright-core into {} ...", dir.display());
        std::fs::create_dir_all(&dir)?;
        let ok = Command::new("npm")
            .args(["install", "--silent", "--no-audit", "--no-fund", "playwright-core@1"])
            .current_dir(&dir)
            .status()
            .map(|s| s.success())
            .unwrap_or(false);
        if !ok {
            bail!("npm install playwright-core failed (needs node and npm: apt-get install -y nodejs npm)");
        }
    }
    Ok(dir)
}

/// What the capture says about a URL.
struct Capture {
    first_page: Option<String>,
    /// URLs the capture recorded as 404 (a 404 for them is the right answer).
    recorded_404: BTreeSet<String>,
    /// URLs the capture recorded only without a body (an answer for them has no right content).
    bodyless: BTreeSet<String>,
}

fn capture(har: &Value) -> Capture {
    let mut c = Capture { first_page: None, recorded_404: BTreeSet::new(), bodyless: BTreeSet::new() };
    let mut with_body = BTreeSet::new();
    for e in har["log"]["entries"].as_array().into_iter().flatten() {
        let url = e["request"]["url"].as_str().unwrap_or("").to_string();
        let status = e["response"]["status"].as_i64().unwrap_or(0);
        let content = &e["response"]["content"];
        let has_text = content["text"].as_str().is_some_and(|t| !t.is_empty());
        if status == 404 {
            c.recorded_404.insert(url.clone());
        }
        if has_text {
            with_body.insert(url.clone());
        } else if (200..300).contains(&status) && status != 204 {
            c.bodyless.insert(url.clone());
        }
        let html = content["mimeType"].as_str().is_some_and(|m| m.contains("html"));
        if c.first_page.is_none() && status == 200 && html && has_text {
            c.first_page = Some(url);
        }
    }
    c.bodyless.retain(|u| !with_body.contains(u));
    c
}

/// Figures of one system on one page, averaged over the loads.
#[derive(Default)]
struct Figures {
    made: f64,
    served: f64,
    same_text: bool,
    same_shot: bool,
    /// webfreeze: exact, normalised, fuzzy, without body, synthetic icon, missed, and of the misses those
    /// the rendering needed (per load).
    layers: Option<[f64; 7]>,
    error: Option<String>,
    /// Loads done (0: the system could not replay the file at all).
    loads: usize,
}

fn served(r: &Value, cap: &Capture) -> bool {
    let url = r["url"].as_str().unwrap_or("");
    if r["failed"].as_bool().unwrap_or(false) || !r["marker"].is_null() {
        return false;
    }
    let Some(status) = r["status"].as_i64() else { return false };
    if status == 404 && !cap.recorded_404.contains(url) {
        return false;
    }
    !cap.bodyless.contains(url)
}

fn figures(out: &Value, cap: &Capture) -> Figures {
    let loads = out["loads"].as_array().cloned().unwrap_or_default();
    let n = loads.len().max(1) as f64;
    let mut f = Figures { loads: loads.len(), ..Figures::default() };
    for l in &loads {
        let reqs = l["requests"].as_array().cloned().unwrap_or_default();
        f.made += reqs.len() as f64 / n;
        f.served += reqs.iter().filter(|r| served(r, cap)).count() as f64 / n;
        if f.error.is_none() {
            f.error = l["error"].as_str().map(str::to_string);
        }
    }
    let all_same = |k: &str| loads.windows(2).all(|w| w[0][k] == w[1][k]);
    f.same_text = all_same("text");
    f.same_shot = all_same("shot");
    // webfreeze: the report accumulates over the loads; the last one over n loads gives the per-load mean.
    if let Some(r) = loads.last().map(|l| &l["report"]).filter(|r| !r.is_null()) {
        let g = |k: &str| r[k].as_f64().unwrap_or(0.0) / n;
        f.layers = Some([
            g("exact"),
            g("normalised"),
            g("fuzzy"),
            g("without_body"),
            g("synthetic"),
            g("missed"),
            g("render_misses"),
        ]);
    }
    f
}

fn drive(work: &Path, cfg: Value) -> anyhow::Result<Value> {
    let script = work.join("fidelity.js");
    let out = Command::new("node").arg(&script).arg(cfg.to_string()).output().context("running node")?;
    if !out.status.success() {
        bail!("the browser driver failed: {}", String::from_utf8_lossy(&out.stderr).trim());
    }
    Ok(serde_json::from_slice(&out.stdout)?)
}

pub(crate) fn run(dir: &Path, loads: usize) -> anyhow::Result<()> {
    let wf = webfreeze_bin()?;
    let pw = playwright()?;
    let (py, mitm) = mitmdump().context(
        "mitmproxy 12 could not be installed (needs Python 3.13 under ~/.pyenv and PyPI: pip install mitmproxy==12.2.3)",
    )?;
    let chromium = std::path::PathBuf::from("/usr/bin/chromium");
    if !chromium.exists() {
        bail!("Chromium not found at /usr/bin/chromium: apt-get install -y chromium");
    }
    let work = std::env::temp_dir().join(format!("webfreeze-bench-fidelity-{}", std::process::id()));
    std::fs::create_dir_all(&work)?;
    std::fs::write(work.join("fidelity.js"), DRIVER)?;
    let home = work.join("home");
    let mut hars: Vec<PathBuf> = std::fs::read_dir(dir)
        .with_context(|| format!("cannot read {}", dir.display()))?
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "har"))
        .collect();
    hars.sort();
    println!("fidelity: requests the page made and served with content, mean of {loads} loads per system");
    println!(
        "{:<44} {:>5} {:>6} {:>5} {:>5} {:>5} {:>6} {:>4} {:>5} {:>6} | {:>5} {:>6} | {:>5} {:>6} | same text/shot wf pw mitm",
        "file", "made", "wf", "exact", "norm", "fuzzy", "nobody", "icon", "miss", "render", "made", "pw", "made", "mitm"
    );
    let (mut tw, mut tp, mut tm) = ((0.0, 0.0), (0.0, 0.0), (0.0, 0.0));
    let mut worse = Vec::new();
    for (i, har_path) in hars.iter().enumerate() {
        let name = har_path.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
        let text = std::fs::read_to_string(har_path)?;
        let har: Value = match serde_json::from_str(text.trim_start_matches('\u{feff}')) {
            Ok(v) => v,
            Err(e) => {
                println!("{name:<44} (not JSON: {e})");
                continue;
            }
        };
        let cap = capture(&har);
        let Some(url) = cap.first_page.clone() else {
            println!("{name:<44} (no HTML page with a body: not loadable)");
            continue;
        };
        // webfreeze.
        let snap = format!("f{i}");
        let st = Command::new(&wf)
            .args(["snapshots", "import"])
            .arg(har_path)
            .args(["--snapshot", &snap])
            .env("WEBFREEZE_HOME", &home)
            .env("RUST_LOG", "error")
            .output()?;
        if !st.status.success() {
            println!("{name:<44} (webfreeze import failed: {})", String::from_utf8_lossy(&st.stderr).trim());
            continue;
        }
        let w = {
            let (_kill, addr) = spawn_listening(&wf, &home, &["replay", "--snapshot", &snap])?;
            let cfg = json!({"pw": pw, "chromium": chromium, "url": url, "loads": loads,
                             "proxy": addr.to_string(), "webfreeze": true});
            figures(&drive(&work, cfg)?, &cap)
        };
        // Playwright's own HAR replay.
        let p = {
            let cfg = json!({"pw": pw, "chromium": chromium, "url": url, "loads": loads, "har": har_path});
            figures(&drive(&work, cfg)?, &cap)
        };
        // mitmproxy server replay (a HAR it cannot read serves nothing of the page).
        let m = {
            let confdir = work.join(format!("mitm-{i}"));
            std::fs::create_dir_all(&confdir)?;
            let har_arg = har_path.display().to_string();
            let opts = [
                "--server-replay",
                &har_arg,
                "--set",
                "server_replay_extra=404",
                "--set",
                "server_replay_reuse=true",
                "--set",
                "connection_strategy=lazy",
                "--set",
                "ssl_insecure=true",
            ];
            match spawn_mitm(&py, &mitm, &confdir, &opts) {
                Ok((_kill, addr)) => {
                    let cfg = json!({"pw": pw, "chromium": chromium, "url": url, "loads": loads,
                                     "proxy": addr.to_string()});
                    figures(&drive(&work, cfg)?, &cap)
                }
                Err(e) => Figures {
                    made: w.made.max(p.made),
                    error: Some(format!("mitmdump could not replay this HAR: {e}")),
                    ..Figures::default()
                },
            }
        };
        let l = w.layers.unwrap_or_default();
        let yn = |f: &Figures| match f.loads {
            0 => "-".to_string(),
            _ => format!("{}/{}", if f.same_text { "y" } else { "n" }, if f.same_shot { "y" } else { "n" }),
        };
        println!(
            "{:<44} {:>5.1} {:>6.1} {:>5.1} {:>5.1} {:>5.1} {:>6.1} {:>4.1} {:>5.1} {:>6.1} | {:>5.1} {:>6.1} | {:>5.1} {:>6.1} | {} {} {}",
            name.chars().take(44).collect::<String>(),
            w.made, w.served, l[0], l[1], l[2], l[3], l[4], l[5], l[6],
            p.made, p.served, m.made, m.served,
            yn(&w), yn(&p), yn(&m)
        );
        for (who, f) in [("webfreeze", &w), ("playwright", &p), ("mitmproxy", &m)] {
            if let Some(e) = &f.error {
                println!("    {who}: {e}");
            }
        }
        // A replayer that fails the page early makes the page ask for less: the page's demand is the most
        // requests any system's load made, and every system is scored against it.
        let demand = w.made.max(p.made).max(m.made);
        if w.served + 1e-9 < p.served.max(m.served) {
            worse.push(name.clone());
        }
        tw = (tw.0 + demand, tw.1 + w.served);
        tp = (tp.0 + demand, tp.1 + p.served);
        tm = (tm.0 + demand, tm.1 + m.served);
    }
    let pct = |t: (f64, f64)| if t.0 > 0.0 { 100.0 * t.1 / t.0 } else { 0.0 };
    println!(
        "total served with content, of the pages' demand (per file the most requests any system's load made): webfreeze {:.1}% ({:.1}/{:.1}), Playwright {:.1}% ({:.1}/{:.1}), mitmproxy {:.1}% ({:.1}/{:.1})",
        pct(tw), tw.1, tw.0, pct(tp), tp.1, tp.0, pct(tm), tm.1, tm.0
    );
    if worse.is_empty() {
        println!(
            "webfreeze served at least as many requests with content as the best peer on every loadable file"
        );
    } else {
        println!("webfreeze below the best peer on: {}", worse.join(", "));
    }
    let _ = std::fs::remove_dir_all(&work);
    Ok(())
}
