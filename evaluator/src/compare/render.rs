//! A comparison as people read it: Markdown for the terminal and PRs, and one self-contained HTML page
//! (screenshots inlined) with the site diffs of flipped tasks. The analysis is `compare.rs`'s; this file
//! only renders. HTML is written as maud templates (`html!`): every value is escaped unless wrapped in
//! `PreEscaped`, which only the styles and [`site_diff_html`]'s own fragment are.

use std::collections::BTreeMap;
use std::path::Path;

use base64::Engine as _;
use maud::{html, Markup, PreEscaped, DOCTYPE};

use super::{CauseKind, Comparison, Flip, Side};
use crate::evaluate::GroupStats;

fn cause_name(k: CauseKind) -> &'static str {
    match k {
        CauseKind::Coverage => "coverage (the snapshot lacked what the agent asked for)",
        CauseKind::Drift => "drift (the same page changed)",
        CauseKind::Agent => "agent (same pages, other actions)",
        CauseKind::Unknown => "unknown",
    }
}

fn pct(g: &GroupStats) -> String {
    format!("{:.1}% ({}/{}){}", g.rate * 100.0, g.success, g.n, g.unknown_note())
}

/// Markdown report.
pub fn markdown(c: &Comparison) -> String {
    let mut s = format!("A = `{}`\nB = `{}`\n\n| site | A | B |\n|---|---:|---:|\n", c.a, c.b);
    for (site, (a, b)) in &c.sites {
        s.push_str(&format!("| {site} | {} | {} |\n", pct(a), pct(b)));
    }
    s.push_str(&format!("| **overall** | {} | {} |\n\n", pct(&c.overall.0), pct(&c.overall.1)));
    s.push_str(&format!(
        "Agreement {:.1}% over {} paired tasks; Cohen's kappa {:.3}; exact McNemar p = {:.4} (A only {}, B only {}).\n",
        c.agreement * 100.0,
        c.pairs.n(),
        c.kappa,
        c.mcnemar_p,
        c.pairs.a_only,
        c.pairs.b_only
    ));
    if c.flips.is_empty() {
        s.push_str("\nNo task changed its verdict.\n");
    }
    for f in &c.flips {
        s.push_str(&format!(
            "\n### {} ({}): A {} -> B {}\n",
            f.id,
            f.web_name,
            if f.a.success { "success" } else { "failure" },
            if f.b.success { "success" } else { "failure" }
        ));
        s.push_str(&format!(
            "- answers: A {:?} / B {:?}\n",
            f.a.answer.as_deref().unwrap_or("-"),
            f.b.answer.as_deref().unwrap_or("-")
        ));
        s.push_str(&format!("- final URLs: A {} / B {}\n", f.a.final_url, f.b.final_url));
        s.push_str(&format!("- cause: **{}**\n", cause_name(f.cause.kind)));
        for e in &f.cause.evidence {
            s.push_str(&format!("  - `{e}`\n"));
        }
        match &f.divergence {
            Some(d) => {
                s.push_str(&format!("- URLs diverge at step {}: A {} / B {}\n", d.step, d.a_url, d.b_url))
            }
            None => s.push_str("- the URLs never diverge\n"),
        }
        for (name, side) in [("A", &f.a), ("B", &f.b)] {
            if !side.misses.is_empty() {
                s.push_str(&format!("- {name} replay misses: {}\n", side.misses.join(", ")));
            }
            if !side.fuzzy.is_empty() {
                s.push_str(&format!("- {name} fuzzy matches: {}\n", side.fuzzy.join(", ")));
            }
            if !side.failed.is_empty() {
                s.push_str(&format!("- {name} requests without a response: {}\n", side.failed.join(", ")));
            }
        }
    }
    s.push_str(&blocked_markdown(c));
    if !c.guarded.is_empty() {
        s.push_str("\nGuards (writes refused, benchmark answers asked for or shown):\n\n");
        for (id, run, evidence) in &c.guarded {
            s.push_str(&format!("- {id} in {run}: {evidence}\n"));
        }
    }
    if !c.beyond_snapshot.is_empty() {
        s.push_str("\nServed beyond the task's own snapshot (a run that did not record it: other layers answered):\n\n");
        for (id, run, layers) in &c.beyond_snapshot {
            s.push_str(&format!("- {id} in {run}: {layers}\n"));
        }
    }
    if !c.unpaired.is_empty() {
        s.push_str(&format!(
            "\nLeft out of the paired statistics ({} task(s) scored in one run only): {}\n",
            c.unpaired.len(),
            c.unpaired.join(", ")
        ));
    }
    if !c.state_unknown.is_empty() {
        s.push_str("\nState unknown on the frozen web (counted apart: in each rate's bounds, as failures / as successes; not paired):\n\n");
        for (id, run, why) in &c.state_unknown {
            s.push_str(&format!("- {id} in {run}: {why}\n"));
        }
    }
    s
}

/// The blocked tasks, per site and with their evidence (Markdown).
fn blocked_markdown(c: &Comparison) -> String {
    if c.blocked.is_empty() {
        return String::new();
    }
    let mut s = String::from(
        "\nBlocked by the site (bot walls, denials, rate limits; not in the rates above):\n\n| site | A | B |\n|---|---:|---:|\n",
    );
    for (site, (a, b)) in &c.blocked {
        s.push_str(&format!("| {site} | {a} | {b} |\n"));
    }
    for (id, run, why) in &c.blocked_tasks {
        s.push_str(&format!("- {id} in {run}: {why}\n"));
    }
    s
}

/// The page frame every report shares: the title, the styles, the body.
pub(crate) fn page(title: &str, css: &[&str], body: Markup) -> String {
    html! {
        (DOCTYPE)
        html lang="en" {
            head {
                meta charset="utf-8";
                title { (title) }
                style { @for c in css { (PreEscaped(*c)) } }
            }
            body { (body) }
        }
    }
    .into_string()
}

/// The base styles of a report page.
pub(crate) const PAGE_CSS: &str =
    "body{font:15px/1.45 system-ui,sans-serif;margin:24px;color:#222;max-width:1400px}code{font-size:13px}\
     table{border-collapse:collapse;margin:8px 0}td,th{border:1px solid #ccc;padding:4px 10px;text-align:left}";

const COMPARE_CSS: &str = "tr.total td{font-weight:bold}.ok{color:#075}.bad{color:#b00}\
     section{border-top:2px solid #ddd;margin-top:24px}.grid{display:grid;grid-template-columns:70px 1fr 1fr;gap:8px;align-items:start}\
     .grid img{width:100%;border:1px solid #ccc}.head{font-weight:bold}.step{color:#666}figure{margin:0}figcaption{font-size:12px;color:#666}";

fn img(run: &Path, rel: &str) -> Markup {
    match std::fs::read(run.join(rel)) {
        Ok(b) => {
            let src =
                format!("data:image/png;base64,{}", base64::engine::general_purpose::STANDARD.encode(b));
            html! { figure { img alt=(rel) src=(src); figcaption { (rel) } } }
        }
        Err(_) => html! { figure { figcaption { (rel) " (missing)" } } },
    }
}

fn verdict(success: bool) -> Markup {
    if success {
        html! { b.ok { "success" } }
    } else {
        html! { b.bad { "failure" } }
    }
}

/// One self-contained HTML page (screenshots inlined).
pub fn html(c: &Comparison) -> String {
    html_with(c, &BTreeMap::new())
}

/// [`html`], with an HTML fragment per flipped task (by id) shown under its evidence: what changed on
/// the site between the two runs' recordings (`webfreeze snapshots diff`, rendered by [`site_diff_html`]).
pub fn html_with(c: &Comparison, site_diffs: &BTreeMap<String, String>) -> String {
    let (ra, rb) = (Path::new(&c.a), Path::new(&c.b));
    let body = html! {
        h1 { "webfreeze: run comparison" }
        p { "A = " code { (c.a) } br; "B = " code { (c.b) } }
        table {
            tr { th { "site" } th { "A" } th { "B" } }
            @for (site, (a, b)) in &c.sites {
                tr { td { (site) } td { (pct(a)) } td { (pct(b)) } }
            }
            tr.total { td { "overall" } td { (pct(&c.overall.0)) } td { (pct(&c.overall.1)) } }
        }
        p {
            "Agreement " b { (format!("{:.1}%", c.agreement * 100.0)) } " over " (c.pairs.n())
            " paired tasks; Cohen's kappa " b { (format!("{:.3}", c.kappa)) }
            "; exact McNemar p = " b { (format!("{:.4}", c.mcnemar_p)) }
            " (A only " (c.pairs.a_only) ", B only " (c.pairs.b_only) ")."
        }
        (sidelines_html(c))
        h2 { "Flipped tasks (" (c.flips.len()) ")" }
        @for f in &c.flips {
            (flip_html(f, (ra, rb), site_diffs.get(&f.id)))
        }
        @if c.flips.is_empty() {
            p { "No task changed its verdict." }
        }
    };
    page("webfreeze compare", &[PAGE_CSS, COMPARE_CSS, SITE_DIFF_CSS], body)
}

/// One flipped task: both sides, where they part, the cause and its evidence, the screenshots side by side.
fn flip_html(f: &Flip, (ra, rb): (&Path, &Path), site_diff: Option<&String>) -> Markup {
    let steps = f.a.screenshots.len().max(f.b.screenshots.len());
    let shot = |run: &Path, side: &Side, i: usize| side.screenshots.get(i).map(|r| img(run, r));
    html! {
        section {
            h3 { (f.id) " " small { (f.web_name) } }
            p { "A " (verdict(f.a.success)) " → B " (verdict(f.b.success)) }
            table {
                tr { th {} th { "A" } th { "B" } }
                tr {
                    td { "answer" }
                    td { (f.a.answer.as_deref().unwrap_or("-")) }
                    td { (f.b.answer.as_deref().unwrap_or("-")) }
                }
                tr { td { "final URL" } td { code { (f.a.final_url) } } td { code { (f.b.final_url) } } }
                tr {
                    td { "steps" }
                    td { (f.a.steps) " (" (f.a.outcome) ")" }
                    td { (f.b.steps) " (" (f.b.outcome) ")" }
                }
            }
            p {
                @match &f.divergence {
                    Some(d) => { "URLs diverge at step " (d.step) ": " code { (d.a_url) } " vs " code { (d.b_url) } }
                    None => { "the URLs never diverge" }
                }
            }
            ul {
                li {
                    "cause: " b { (cause_name(f.cause.kind)) }
                    pre { @for e in &f.cause.evidence { (e) "\n" } }
                }
                @if let (Some(d), Some(a), Some(b)) = (site_diff, &f.a.snapshot, &f.b.snapshot) {
                    li {
                        details open[f.cause.kind == CauseKind::Drift] {
                            summary {
                                "what changed on the site between the recordings ("
                                code { "snapshots diff " (a) " " (b) } ")"
                            }
                            // Rendered by site_diff_html, which escapes what it shows.
                            (PreEscaped(d))
                        }
                    }
                }
                @for (name, side) in [("A", &f.a), ("B", &f.b)] {
                    @for m in &side.misses { li { (name) " replay miss: " code { (m) } } }
                    @for m in &side.fuzzy { li { (name) " fuzzy match: " code { (m) } } }
                    @for m in &side.failed { li { (name) " no response: " code { (m) } } }
                }
            }
            div.grid {
                div {} div.head { "A" } div.head { "B" }
                @for i in 0..steps {
                    div.step { "step " (i + 1) }
                    div { @if let Some(m) = shot(ra, &f.a, i) { (m) } }
                    div { @if let Some(m) = shot(rb, &f.b, i) { (m) } }
                }
            }
        }
    }
}

/// What the rates leave out: blocked tasks, guarded ones, and answers from beyond a task's snapshot.
fn sidelines_html(c: &Comparison) -> Markup {
    html! {
        @if !c.blocked.is_empty() {
            h2 { "Blocked by the site" }
            p {
                "Bot walls, denials and rate limits: the agent could not attempt these tasks; they are not in \
                 the rates above."
            }
            table {
                tr { th { "site" } th { "A" } th { "B" } }
                @for (site, (a, b)) in &c.blocked { tr { td { (site) } td { (a) } td { (b) } } }
            }
            ul { @for (id, run, why) in &c.blocked_tasks { li { (id) " in " (run) ": " code { (why) } } } }
        }
        @if !c.guarded.is_empty() {
            h2 { "Guards" }
            p {
                "Live and recording runs: writes the side-effect guard refused, and contamination evidence (a \
                 place a benchmark's answers are published asked for, a page showing the question with its \
                 answer). Contaminated tasks are not in the rates above."
            }
            ul { @for (id, run, evidence) in &c.guarded { li { (id) " in " (run) ": " (evidence) } } }
        }
        @if !c.beyond_snapshot.is_empty() {
            h2 { "Served beyond the task's own snapshot" }
            p {
                "Layers that answered what a replayed task's own recording lacked (exploration, the site union, \
                 the frozen search engine)."
            }
            ul { @for (id, run, layers) in &c.beyond_snapshot { li { (id) " in " (run) ": " (layers) } } }
        }
    }
}

/// What changed between two recordings of a site, as an HTML fragment: the JSON `webfreeze snapshots diff
/// --json` prints (documents and resources added, removed or changed, with each changed page's changed
/// text lines), rendered for the comparison report and `snapshots diff --html`.
pub fn site_diff_html(d: &serde_json::Value) -> String {
    site_diff_markup(d).into_string()
}

fn site_diff_markup(d: &serde_json::Value) -> Markup {
    let list = |k: &str| d[k].as_array().cloned().unwrap_or_default();
    let (docs, res) = (list("documents"), list("resources"));
    let count = |v: &[serde_json::Value], kind: &str| v.iter().filter(|c| c["kind"] == kind).count();
    let summary = |v: &[serde_json::Value]| {
        format!(
            "{} changed, {} added, {} removed",
            count(v, "changed"),
            count(v, "added"),
            count(v, "removed")
        )
    };
    let side = |x: &serde_json::Value| {
        if x.is_null() {
            "-".to_string()
        } else {
            format!("{} {} B", x["status"], x["size"])
        }
    };
    let str_of = |v: &serde_json::Value| v.as_str().unwrap_or("").to_string();
    html! {
        p { "documents " (summary(&docs)) "; resources " (summary(&res)) "; " (d["unchanged"].as_u64().unwrap_or(0)) " unchanged" }
        @for (what, v) in [("document", &docs), ("resource", &res)] {
            @if !v.is_empty() {
                ul.sitediff {
                    @for c in v {
                        @let kind = c["kind"].as_str().unwrap_or("?");
                        @let lines: Vec<&str> = c["text_changes"]
                            .as_array()
                            .map(|l| l.iter().filter_map(|x| x.as_str()).collect())
                            .unwrap_or_default();
                        @let total = c["text_lines_changed"].as_u64().unwrap_or(lines.len() as u64);
                        li class=(kind) {
                            (kind) " " (what) " " code { (str_of(&c["method"])) " " (str_of(&c["url"])) }
                            " " small { "(" (side(&c["a"])) " → " (side(&c["b"])) ")" }
                            @if !lines.is_empty() {
                                pre.textdiff {
                                    @for l in &lines {
                                        span class=(if l.starts_with('+') { "add" } else { "del" }) { (l) } "\n"
                                    }
                                    @if total > lines.len() as u64 {
                                        "... " (total - lines.len() as u64) " more changed line(s)\n"
                                    }
                                }
                            } @else if kind == "changed" && what == "document" {
                                " " small { "(same visible text: markup, scripts or styles changed)" }
                            }
                        }
                    }
                }
            }
        }
    }
}

/// The styles [`site_diff_html`]'s fragment uses.
pub const SITE_DIFF_CSS: &str = "pre.textdiff{background:#f6f6f6;padding:6px 10px;margin:4px 0}\
     pre.textdiff .add{color:#075}pre.textdiff .del{color:#b00}ul.sitediff li.added{color:#075}\
     ul.sitediff li.removed{color:#b00}";

/// `webfreeze snapshots diff A B --html`: the fragment as a page.
pub fn site_diff_page(d: &serde_json::Value) -> String {
    let body = html! {
        h1 { "What changed: " code { (d["a"].as_str().unwrap_or("")) } " → " code { (d["b"].as_str().unwrap_or("")) } }
        (site_diff_markup(d))
    };
    page("webfreeze snapshots diff", &[PAGE_CSS, SITE_DIFF_CSS], body)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compare::{Cause, Divergence};
    use crate::stats::Pairs;

    const HOSTILE: &str = "<script>alert(\"x\")</script>&";
    const ESCAPED: &str = "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;&amp;";

    fn side(success: bool) -> Side {
        Side {
            success,
            outcome: "answered".into(),
            answer: Some(HOSTILE.into()),
            final_url: format!("https://s.test/?q={HOSTILE}"),
            steps: 2,
            misses: vec![HOSTILE.into()],
            fuzzy: vec![],
            failed: vec![],
            screenshots: vec!["missing.png".into()],
            snapshot: Some("snap-a".into()),
        }
    }

    /// Every value that comes from a run, a task file or a page is escaped wherever the reports show it:
    /// a task id, an answer, a URL, evidence, a blocked task's reason, a site diff's URL and lines.
    #[test]
    fn reports_escape_what_runs_and_pages_bring() {
        let flip = Flip {
            id: HOSTILE.into(),
            web_name: HOSTILE.into(),
            a: side(true),
            b: side(false),
            divergence: Some(Divergence { step: 1, a_url: HOSTILE.into(), b_url: "https://s.test/".into() }),
            cause: Cause { kind: CauseKind::Drift, evidence: vec![HOSTILE.into()] },
        };
        let c = Comparison {
            a: "runs/a".into(),
            b: "runs/b".into(),
            sites: BTreeMap::new(),
            overall: Default::default(),
            pairs: Pairs::default(),
            agreement: 1.0,
            kappa: 0.0,
            mcnemar_p: 1.0,
            flips: vec![flip],
            unpaired: vec![],
            state_unknown: vec![],
            blocked: [(HOSTILE.to_string(), (1, 0))].into_iter().collect(),
            blocked_tasks: vec![(HOSTILE.into(), "A".into(), HOSTILE.into())],
            beyond_snapshot: vec![],
            guarded: vec![(HOSTILE.into(), "B".into(), HOSTILE.into())],
        };
        let diff = serde_json::json!({
            "a": HOSTILE, "b": "snap-b", "unchanged": 0, "resources": [],
            "documents": [{"kind": "changed\" onclick=\"x", "method": "GET", "url": HOSTILE,
                           "a": {"status": 200, "size": 1}, "b": {"status": 200, "size": 2},
                           "text_changes": [format!("+ {HOSTILE}")], "text_lines_changed": 1}],
        });
        let fragment = site_diff_html(&diff);
        let pages = [
            ("compare", html_with(&c, &[(HOSTILE.to_string(), fragment.clone())].into_iter().collect())),
            ("site diff page", site_diff_page(&diff)),
        ];
        for (name, page) in &pages {
            assert!(!page.contains("<script>"), "{name}: a raw script tag:\n{page}");
            assert!(page.contains(ESCAPED), "{name}: the value escaped:\n{page}");
            assert!(page.starts_with("<!DOCTYPE html>"), "{name}");
        }
        let (_, compare) = &pages[0];
        // The site diff fragment is embedded as HTML (not escaped twice), its attribute value quoted.
        assert!(compare.contains("<li class=\"changed&quot; onclick=&quot;x\">"), "{compare}");
        assert!(compare.contains("<details open>"), "a drift flip opens its site diff");
        assert!(compare.contains("Flipped tasks (1)") && compare.contains("missing.png (missing)"));
        assert_eq!(compare.matches(ESCAPED).count(), 17, "{compare}");
    }
}
