//! `eval`'s per-site table as Markdown, with the notes under it (what was counted apart and why).

use super::{contaminated, guard_evidence, off_snapshot, EvalReport};

/// Appends a note under the table: `heading: item SEP item ...`, when there are items.
fn note<T: AsRef<str>>(s: &mut String, heading: &str, items: &[T], sep: &str) {
    if !items.is_empty() {
        let items: Vec<&str> = items.iter().map(AsRef::as_ref).collect();
        s.push_str(&format!("\n{heading}: {}\n", items.join(sep)));
    }
}

/// A success rate, and beside it, when runs were counted apart for an unknown state, how many, their share
/// and the bounds they leave (all failures - all successes): `50.0% (1 state unknown, 20%: 40.0-60.0%)`.
fn rate_cell(g: &super::GroupStats) -> String {
    format!("{:.1}%{}", g.rate * 100.0, g.unknown_note())
}

/// The per-site table as Markdown.
pub fn site_table(r: &EvalReport) -> String {
    let mut s = String::from(
        "| site | success rate | n | errored | blocked | off snapshot | contaminated | writes blocked | judge spread |\n|---|---:|---:|---:|---:|---:|---:|---:|---:|\n",
    );
    for (name, g) in r.sites.iter().map(|(k, v)| (k.as_str(), v)).chain([("**overall**", &r.overall)]) {
        s.push_str(&format!(
            "| {name} | {} | {} | {} | {} | {} | {} | {} | {:.2} |\n",
            rate_cell(g),
            g.n,
            g.errored,
            g.blocked,
            g.off_snapshot,
            g.contaminated,
            g.writes_blocked,
            g.judge_std
        ));
    }
    let blocked: Vec<String> = r
        .tasks
        .iter()
        .filter_map(|t| {
            t.blocked.as_ref().map(|b| format!("{} ({}: {}, status {})", t.id, b.host, b.marker, b.status))
        })
        .collect();
    note(
        &mut s,
        "Blocked by the site (not counted in n; `webfreeze run --retry-blocked` re-runs them)",
        &blocked,
        "; ",
    );
    let guarded: Vec<String> = r
        .tasks
        .iter()
        .filter(|t| t.guard.is_some())
        .map(|t| {
            let tag = if contaminated(t) { "contaminated, not counted in n" } else { "counted" };
            format!("{} ({tag}): {}", t.id, guard_evidence(t).join("; "))
        })
        .collect();
    note(
        &mut s,
        "Guards (live and record runs: writes refused, benchmark answers asked for or shown)",
        &guarded,
        " | ",
    );
    let off: Vec<String> = r
        .tasks
        .iter()
        .filter(|t| off_snapshot(t))
        .map(|t| {
            let steps = t.coverage.as_ref().map(|c| c.steps_document_missed.clone()).unwrap_or_default();
            let steps: Vec<String> = steps.iter().map(u32::to_string).collect();
            format!(
                "{} ({}, judged {})",
                t.id,
                if steps.is_empty() {
                    "start page".to_string()
                } else {
                    format!("step {}", steps.join(", "))
                },
                if t.success { "success" } else { "failure" }
            )
        })
        .collect();
    note(
        &mut s,
        "Off the frozen web (asked for a page the snapshot never recorded; not counted in n; merge a \
             recording of that path with `webfreeze snapshots merge`)",
        &off,
        "; ",
    );
    let union: Vec<String> = r
        .tasks
        .iter()
        .filter_map(|t| {
            let c =
                t.coverage.as_ref().filter(|c| c.explore + c.site_union + c.crawl + c.frozen_search > 0)?;
            let steps: Vec<String> = c.steps_site_union.iter().map(u32::to_string).collect();
            let mut parts = Vec::new();
            if c.explore > 0 {
                parts.push(format!("explore: {}", c.explore));
            }
            if c.site_union > 0 {
                parts.push(format!(
                    "site-union: {} request{}{}",
                    c.site_union,
                    if c.site_union == 1 { "" } else { "s" },
                    if steps.is_empty() { String::new() } else { format!(" at step {}", steps.join(", ")) }
                ));
            }
            if c.crawl > 0 {
                parts.push(format!("crawl: {}", c.crawl));
            }
            if c.frozen_search > 0 {
                parts.push(format!("frozen-search: {}", c.frozen_search));
            }
            Some(format!("{} ({})", t.id, parts.join("; ")))
        })
        .collect();
    note(&mut s, "Served beyond their own snapshot (`explore`: the task's exploration layer; `site-union`: other tasks' recordings of the site; `crawl`: the site's crawl, `--frozen-web \
             task` turns it off; `frozen-search`: search results from the recorded pages, `--search off`)", &union, "; ");
    note(&mut s, "Errored (counted as failures)", &r.errored, ", ");
    let unparseable: Vec<String> = r
        .tasks
        .iter()
        .filter_map(|t| {
            let n = t
                .judge
                .as_ref()?
                .verdicts
                .iter()
                .filter(|v| **v == crate::judge::Verdict::Unparseable)
                .count();
            (n > 0).then(|| format!("{} ({n})", t.id))
        })
        .collect();
    note(
        &mut s,
        "Judge replies with no SUCCESS / NOT SUCCESS verdict (counted as failures)",
        &unparseable,
        ", ",
    );
    let unscorable: Vec<String> = r
        .tasks
        .iter()
        .filter_map(|t| Some(format!("{} ({})", t.id, t.reference_error.as_deref()?)))
        .collect();
    note(&mut s, "Not scored (their eval spec could not be run)", &unscorable, "; ");
    note(
        &mut s,
        "State unknown on the frozen web (counted apart, not in n; each rate's bounds count them as failures / as successes)",
        &r.state_unknown,
        "; ",
    );
    let wires: Vec<String> =
        r.tasks.iter().filter_map(|t| Some(format!("{}: {}", t.id, t.wire.as_deref()?))).collect();
    note(
        &mut s,
        "Network checks scored on (a replayed task on its own wire, never its recording's)",
        &wires,
        "; ",
    );
    let unknown: Vec<String> = r
        .tasks
        .iter()
        .filter(|t| !t.unknown_spec_parts.is_empty())
        .map(|t| format!("{} ({})", t.id, t.unknown_spec_parts.join(", ")))
        .collect();
    note(
        &mut s,
        "Eval spec parts not known here, so not scored (see unknown_spec_parts in eval.json)",
        &unknown,
        "; ",
    );
    let judge_failed: Vec<&str> =
        r.tasks.iter().filter(|t| t.judge_error.is_some()).map(|t| t.id.as_str()).collect();
    note(&mut s, "The model judge failed on (see judge_error in eval.json)", &judge_failed, ", ");
    note(&mut s, "Not scored (no reference for them; not counted)", &r.unscored, ", ");
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue 59, part 4: beside each rate, the runs counted apart for an unknown state and the bounds.
    #[test]
    fn a_rate_says_how_much_of_it_is_unknown() {
        let mut g = super::super::GroupStats::default();
        for ok in [true, true, false, false] {
            g.add(ok, false, None);
        }
        assert_eq!(rate_cell(&g), "50.0%");
        g.state_unknown = 1;
        assert_eq!(g.bounds(), (0.4, 0.6));
        assert_eq!(rate_cell(&g), "50.0% (1 state unknown, 20%: 40.0-60.0%)");
    }
}
