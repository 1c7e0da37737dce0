//! A comparison as people read it: Markdown for the terminal and PRs, and one self-contained HTML page
//! (screenshots inlined) with the site diffs of flipped tasks. The analysis is `compare.rs`'s; this file
//! only renders. HTML is written with `format!` and [`esc`] on every value that comes from a run.

use std::collections::BTreeMap;
use std::path::Path;

use base64::Engine as _;

use super::{CauseKind, Comparison};
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
    format!("{:.1}% ({}/{})", g.rate * 100.0, g.success, g.n)
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
        s.push_str(&format!("\nEvaluated in one run only (not compared): {}\n", c.unpaired.join(", ")));
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

fn esc(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;")
}

fn img(run: &Path, rel: &str) -> String {
    match std::fs::read(run.join(rel)) {
        Ok(b) => format!(
            "<figure><img alt=\"{0}\" src=\"data:image/png;base64,{1}\"><figcaption>{0}</figcaption></figure>",
            esc(rel),
            base64::engine::general_purpose::STANDARD.encode(b)
        ),
        Err(_) => format!("<figure><figcaption>{} (missing)</figcaption></figure>", esc(rel)),
    }
}

/// One self-contained HTML page (screenshots inlined).
pub fn html(c: &Comparison) -> String {
    html_with(c, &BTreeMap::new())
}

/// [`html`], with an HTML fragment per flipped task (by id) shown under its evidence: what changed on
/// the site between the two runs' recordings (`webfreeze snapshots diff`).
pub fn html_with(c: &Comparison, site_diffs: &BTreeMap<String, String>) -> String {
    let (ra, rb) = (Path::new(&c.a), Path::new(&c.b));
    let mut rows = String::new();
    for (site, (a, b)) in &c.sites {
        rows.push_str(&format!("<tr><td>{}</td><td>{}</td><td>{}</td></tr>", esc(site), pct(a), pct(b)));
    }
    rows.push_str(&format!(
        "<tr class=total><td>overall</td><td>{}</td><td>{}</td></tr>",
        pct(&c.overall.0),
        pct(&c.overall.1)
    ));
    let mut flips = String::new();
    for f in &c.flips {
        let div = match &f.divergence {
            Some(d) => format!(
                "URLs diverge at step {}: <code>{}</code> vs <code>{}</code>",
                d.step,
                esc(&d.a_url),
                esc(&d.b_url)
            ),
            None => "the URLs never diverge".into(),
        };
        let mut evidence = format!("<li>cause: <b>{}</b><pre>", cause_name(f.cause.kind));
        for e in &f.cause.evidence {
            evidence.push_str(&esc(e));
            evidence.push('\n');
        }
        evidence.push_str("</pre></li>");
        if let (Some(d), Some(a), Some(b)) = (site_diffs.get(&f.id), &f.a.snapshot, &f.b.snapshot) {
            evidence.push_str(&format!(
                "<li><details{open}><summary>what changed on the site between the recordings \
                 (<code>snapshots diff {} {}</code>)</summary>{d}</details></li>",
                esc(a),
                esc(b),
                open = if f.cause.kind == CauseKind::Drift { " open" } else { "" },
            ));
        }
        for (name, side) in [("A", &f.a), ("B", &f.b)] {
            for m in &side.misses {
                evidence.push_str(&format!("<li>{name} replay miss: <code>{}</code></li>", esc(m)));
            }
            for m in &side.fuzzy {
                evidence.push_str(&format!("<li>{name} fuzzy match: <code>{}</code></li>", esc(m)));
            }
            for m in &side.failed {
                evidence.push_str(&format!("<li>{name} no response: <code>{}</code></li>", esc(m)));
            }
        }
        let n = f.a.screenshots.len().max(f.b.screenshots.len());
        let mut grid = String::new();
        for i in 0..n {
            let a = f.a.screenshots.get(i).map(|r| img(ra, r)).unwrap_or_default();
            let b = f.b.screenshots.get(i).map(|r| img(rb, r)).unwrap_or_default();
            grid.push_str(&format!("<div class=step>step {}</div><div>{a}</div><div>{b}</div>", i + 1));
        }
        let verdict = |s: bool| if s { "<b class=ok>success</b>" } else { "<b class=bad>failure</b>" };
        flips.push_str(&format!(
            "<section><h3>{id} <small>{site}</small></h3><p>A {va} &rarr; B {vb}</p>\
             <table><tr><th></th><th>A</th><th>B</th></tr>\
             <tr><td>answer</td><td>{aa}</td><td>{ba}</td></tr>\
             <tr><td>final URL</td><td><code>{au}</code></td><td><code>{bu}</code></td></tr>\
             <tr><td>steps</td><td>{asn} ({ao})</td><td>{bsn} ({bo})</td></tr></table>\
             <p>{div}</p><ul>{evidence}</ul><div class=grid><div></div><div class=head>A</div><div class=head>B</div>{grid}</div></section>",
            id = esc(&f.id),
            site = esc(&f.web_name),
            va = verdict(f.a.success),
            vb = verdict(f.b.success),
            aa = esc(f.a.answer.as_deref().unwrap_or("-")),
            ba = esc(f.b.answer.as_deref().unwrap_or("-")),
            au = esc(&f.a.final_url),
            bu = esc(&f.b.final_url),
            asn = f.a.steps,
            ao = esc(&f.a.outcome),
            bsn = f.b.steps,
            bo = esc(&f.b.outcome),
        ));
    }
    if c.flips.is_empty() {
        flips.push_str("<p>No task changed its verdict.</p>");
    }
    let mut blocked = String::new();
    if !c.blocked.is_empty() {
        blocked.push_str(
            "<h2>Blocked by the site</h2><p>Bot walls, denials and rate limits: the agent could not attempt \
             these tasks; they are not in the rates above.</p><table><tr><th>site</th><th>A</th><th>B</th></tr>",
        );
        for (site, (a, b)) in &c.blocked {
            blocked.push_str(&format!("<tr><td>{}</td><td>{a}</td><td>{b}</td></tr>", esc(site)));
        }
        blocked.push_str("</table><ul>");
        for (id, run, why) in &c.blocked_tasks {
            blocked.push_str(&format!("<li>{} in {run}: <code>{}</code></li>", esc(id), esc(why)));
        }
        blocked.push_str("</ul>");
    }
    if !c.guarded.is_empty() {
        blocked.push_str(
            "<h2>Guards</h2><p>Live and recording runs: writes the side-effect guard refused, and contamination \
             evidence (a place a benchmark's answers are published asked for, a page showing the question with \
             its answer). Contaminated tasks are not in the rates above.</p><ul>",
        );
        for (id, run, evidence) in &c.guarded {
            blocked.push_str(&format!("<li>{} in {run}: {}</li>", esc(id), esc(evidence)));
        }
        blocked.push_str("</ul>");
    }
    if !c.beyond_snapshot.is_empty() {
        blocked.push_str(
            "<h2>Served beyond the task's own snapshot</h2><p>Layers that answered what a replayed task's own \
             recording lacked (exploration, the site union, the frozen search engine).</p><ul>",
        );
        for (id, run, layers) in &c.beyond_snapshot {
            blocked.push_str(&format!("<li>{} in {run}: {}</li>", esc(id), esc(layers)));
        }
        blocked.push_str("</ul>");
    }
    format!(
        "<!doctype html><html lang=en><head><meta charset=utf-8><title>webfreeze compare</title><style>\
         body{{font:15px/1.45 system-ui,sans-serif;margin:24px;color:#222;max-width:1400px}}\
         table{{border-collapse:collapse;margin:8px 0}}td,th{{border:1px solid #ccc;padding:4px 10px;text-align:left}}\
         tr.total td{{font-weight:bold}}.ok{{color:#075}}.bad{{color:#b00}}code{{font-size:13px}}\
         section{{border-top:2px solid #ddd;margin-top:24px}}.grid{{display:grid;grid-template-columns:70px 1fr 1fr;gap:8px;align-items:start}}\
         .grid img{{width:100%;border:1px solid #ccc}}.head{{font-weight:bold}}.step{{color:#666}}figure{{margin:0}}figcaption{{font-size:12px;color:#666}}\
         {SITE_DIFF_CSS}</style></head><body><h1>webfreeze: run comparison</h1>\
         <p>A = <code>{a}</code><br>B = <code>{b}</code></p>\
         <table><tr><th>site</th><th>A</th><th>B</th></tr>{rows}</table>\
         <p>Agreement <b>{agr:.1}%</b> over {n} paired tasks; Cohen's kappa <b>{kappa:.3}</b>; exact McNemar p = <b>{p:.4}</b> \
         (A only {ao}, B only {bo}).</p>{blocked}<h2>Flipped tasks ({nf})</h2>{flips}</body></html>",
        a = esc(&c.a),
        b = esc(&c.b),
        agr = c.agreement * 100.0,
        n = c.pairs.n(),
        kappa = c.kappa,
        p = c.mcnemar_p,
        ao = c.pairs.a_only,
        bo = c.pairs.b_only,
        nf = c.flips.len(),
    )
}

/// What changed between two recordings of a site, as an HTML fragment: the JSON `webfreeze snapshots diff
/// --json` prints (documents and resources added, removed or changed, with each changed page's changed
/// text lines), rendered for the comparison report and `snapshots diff --html`.
pub fn site_diff_html(d: &serde_json::Value) -> String {
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
    let mut out = format!(
        "<p>documents {}; resources {}; {} unchanged</p>",
        summary(&docs),
        summary(&res),
        d["unchanged"].as_u64().unwrap_or(0)
    );
    for (what, v) in [("document", &docs), ("resource", &res)] {
        if v.is_empty() {
            continue;
        }
        out.push_str("<ul class=sitediff>");
        for c in v {
            let kind = c["kind"].as_str().unwrap_or("?");
            out.push_str(&format!(
                "<li class={kind}>{kind} {what} <code>{} {}</code> <small>({} &rarr; {})</small>",
                esc(c["method"].as_str().unwrap_or("")),
                esc(c["url"].as_str().unwrap_or("")),
                side(&c["a"]),
                side(&c["b"]),
            ));
            let lines: Vec<&str> = c["text_changes"]
                .as_array()
                .map(|l| l.iter().filter_map(|x| x.as_str()).collect())
                .unwrap_or_default();
            if !lines.is_empty() {
                out.push_str("<pre class=textdiff>");
                for l in &lines {
                    let class = if l.starts_with('+') { "add" } else { "del" };
                    out.push_str(&format!("<span class={class}>{}</span>\n", esc(l)));
                }
                let total = c["text_lines_changed"].as_u64().unwrap_or(lines.len() as u64);
                if total > lines.len() as u64 {
                    out.push_str(&format!("... {} more changed line(s)\n", total - lines.len() as u64));
                }
                out.push_str("</pre>");
            } else if kind == "changed" && what == "document" {
                out.push_str(" <small>(same visible text: markup, scripts or styles changed)</small>");
            }
            out.push_str("</li>");
        }
        out.push_str("</ul>");
    }
    out
}

/// The styles [`site_diff_html`]'s fragment uses.
pub const SITE_DIFF_CSS: &str = "pre.textdiff{background:#f6f6f6;padding:6px 10px;margin:4px 0}\
     pre.textdiff .add{color:#075}pre.textdiff .del{color:#b00}ul.sitediff li.added{color:#075}\
     ul.sitediff li.removed{color:#b00}";

/// `webfreeze snapshots diff A B --html`: the fragment as a page.
pub fn site_diff_page(d: &serde_json::Value) -> String {
    format!(
        "<!doctype html><html lang=en><head><meta charset=utf-8><title>webfreeze snapshots diff</title><style>\
         body{{font:15px/1.45 system-ui,sans-serif;margin:24px;color:#222;max-width:1400px}}code{{font-size:13px}}\
         {SITE_DIFF_CSS}</style></head><body><h1>What changed: <code>{}</code> &rarr; <code>{}</code></h1>{}</body></html>",
        esc(d["a"].as_str().unwrap_or("")),
        esc(d["b"].as_str().unwrap_or("")),
        site_diff_html(d)
    )
}
