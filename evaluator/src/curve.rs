//! `webfreeze compare RUN RUN RUN...`: the success rate of the same tasks over several evaluated runs in
//! time order (one per date, say): per site and overall, as a table and as a line plot in one HTML page.
//! The drift curve of a benchmark on the live web, or its flat line on a snapshot.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use maud::html;

use serde::Serialize;
use trajectory::RunDir;

use crate::evaluate::{read_report, EvalError, GroupStats};

/// One run on the curve.
#[derive(Debug, Clone, Serialize)]
pub struct Point {
    /// The run directory.
    pub run: String,
    /// When it started (ms since epoch, from run.json).
    pub started_ms: i64,
    /// That date, UTC (`YYYY-MM-DD HH:MM`).
    pub date: String,
    /// Per site.
    pub sites: BTreeMap<String, GroupStats>,
    /// Overall.
    pub overall: GroupStats,
}

/// The runs in time order.
#[derive(Debug, Clone, Serialize)]
pub struct Curve {
    /// Every site seen in any run.
    pub sites: Vec<String>,
    /// One point per run, oldest first.
    pub points: Vec<Point>,
}

fn date(ms: i64) -> String {
    let fmt = time::macros::format_description!("[year]-[month]-[day] [hour]:[minute]");
    time::OffsetDateTime::from_unix_timestamp_nanos(i128::from(ms) * 1_000_000)
        .ok()
        .and_then(|t| t.format(&fmt).ok())
        .unwrap_or_else(|| ms.to_string())
}

/// Read each run's `eval.json` and `run.json`; order them by start time.
pub fn curve(runs: &[&Path]) -> Result<Curve, EvalError> {
    let mut points = Vec::with_capacity(runs.len());
    let mut sites = BTreeSet::new();
    for dir in runs {
        let report = read_report(dir)?;
        let started_ms = RunDir::new(dir).read_run_file().map(|r| r.started_ms).unwrap_or_default();
        sites.extend(report.sites.keys().cloned());
        points.push(Point {
            run: dir.display().to_string(),
            started_ms,
            date: date(started_ms),
            sites: report.sites,
            overall: report.overall,
        });
    }
    points.sort_by_key(|p| p.started_ms);
    Ok(Curve { sites: sites.into_iter().collect(), points })
}

fn cell(g: Option<&GroupStats>) -> String {
    match g {
        Some(g) if g.n > 0 => format!("{:.1}% ({}/{})", g.rate * 100.0, g.success, g.n),
        _ => "-".into(),
    }
}

/// The curve as a Markdown table, a row per run.
pub fn markdown(c: &Curve) -> String {
    let mut s = String::from("## Success rate over time\n\n| run | started (UTC) |");
    for site in &c.sites {
        s.push_str(&format!(" {site} |"));
    }
    s.push_str(" overall |\n|---|---|");
    s.push_str(&"---:|".repeat(c.sites.len() + 1));
    s.push('\n');
    for p in &c.points {
        s.push_str(&format!("| {} | {} |", p.run, p.date));
        for site in &c.sites {
            s.push_str(&format!(" {} |", cell(p.sites.get(site))));
        }
        s.push_str(&format!(" {} |\n", cell(Some(&p.overall))));
    }
    s
}

/// The curve as one self-contained HTML page: the table and an SVG line per site (and overall).
pub fn html(c: &Curve) -> String {
    const W: f64 = 640.0;
    const H: f64 = 260.0;
    const PAD: f64 = 40.0;
    const COLOURS: [&str; 6] = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b"];
    let n = c.points.len().max(2) as f64 - 1.0;
    let x = |i: usize| PAD + (W - 2.0 * PAD) * i as f64 / n;
    let y = |rate: f64| H - PAD - (H - 2.0 * PAD) * rate;
    // Each series: its name, colour and points (runs where the site had no task are left out).
    type Series<'a> = (String, &'a str, Vec<(f64, f64)>);
    let series: Vec<Series> = c
        .sites
        .iter()
        .map(|s| {
            let rates = c.points.iter().map(|p| p.sites.get(s).filter(|g| g.n > 0).map(|g| g.rate));
            (s.clone(), rates.collect::<Vec<_>>())
        })
        .chain([(
            "overall".to_string(),
            c.points.iter().map(|p| (p.overall.n > 0).then_some(p.overall.rate)).collect(),
        )])
        .enumerate()
        .map(|(k, (name, rates))| {
            let colour = if name == "overall" { "#000" } else { COLOURS[k % COLOURS.len()] };
            let pts = rates.iter().enumerate().filter_map(|(i, r)| r.map(|r| (x(i), y(r)))).collect();
            (name, colour, pts)
        })
        .collect();
    let polyline =
        |pts: &[(f64, f64)]| pts.iter().map(|(a, b)| format!("{a:.1},{b:.1}")).collect::<Vec<_>>().join(" ");
    let body = html! {
        h1 { "Success rate over time" }
        svg xmlns="http://www.w3.org/2000/svg" width=(W) height=(H) role="img" aria-label="success rate per run" {
            line x1=(PAD) y1=(y(0.0)) x2=(W - PAD) y2=(y(0.0)) stroke="#999" {}
            line x1=(PAD) y1=(PAD) x2=(PAD) y2=(y(0.0)) stroke="#999" {}
            text x="4" y=(y(1.0) + 4.0) font-size="11" { "100%" }
            text x="12" y=(y(0.0)) font-size="11" { "0%" }
            @for (_, colour, pts) in &series {
                polyline fill="none" stroke=(colour) stroke-width="2" points=(polyline(pts)) {}
                @for (px, py) in pts {
                    circle cx=(format!("{px:.1}")) cy=(format!("{py:.1}")) r="3" fill=(colour) {}
                }
            }
            @for (i, p) in c.points.iter().enumerate() {
                text x=(format!("{:.1}", x(i))) y=(format!("{:.1}", H - PAD + 16.0)) font-size="10" text-anchor="middle" {
                    (p.date.get(..10).unwrap_or(&p.date))
                }
            }
        }
        p { @for (name, colour, _) in &series { span style=(format!("color:{colour}")) { "■ " (name) } " " } }
        table {
            tr { th { "run" } th { "started (UTC)" } @for s in &c.sites { th { (s) } } th { "overall" } }
            @for p in &c.points {
                tr {
                    td { code { (p.run) } }
                    td { (p.date) }
                    @for s in &c.sites { td { (cell(p.sites.get(s))) } }
                    td { (cell(Some(&p.overall))) }
                }
            }
        }
    };
    crate::compare::page("webfreeze: success rate over time", &[crate::compare::PAGE_CSS], body)
}

#[cfg(test)]
mod tests {
    #[test]
    fn dates_are_civil_utc() {
        for (ms, want) in [
            (0, "1970-01-01 00:00"),
            (951_782_400_000, "2000-02-29 00:00"),
            (1_795_600_000_000, "2026-11-25 09:46"),
            (-60_000, "1969-12-31 23:59"),
        ] {
            assert_eq!(super::date(ms), want, "{ms}");
        }
    }
}
