//! `cargo xtask bench guard`: the side-effect guard over its tables of real sites' requests: the table the
//! rules were first written against (`proxy::guard::cases`); the first table of issue 60
//! (`proxy::guard::heldout`, `requests.json`), whose two halves are both tuning material now (its held-out
//! half was spent once its failures were read); every later table in the order it was written
//! (`heldout::LATER_TABLES`), each spent in turn but the last; and the last, the held-out table, written by
//! helpers who never read the rules and committed after the rules and model it measures, which gives the
//! figures. Precision and recall of each, and the time per judgement. The held-out table's failures are
//! never printed.
//!
//! The spent tables are judged by the rules alone (`WriteRules::without_learned`): the learned judge is
//! trained on every spent table, so its figures there would be its training fit. The held-out table is
//! judged by the rules alone and as a run judges it, rules and learned judge together, default and strict;
//! and each later table from the eighth on by the model alone, trained on the tables written before it
//! (`proxy::guard::learned::measure`).

use proxy::guard::heldout::{self, Score};

fn line(name: &str, h: &Score) {
    counts(name, [h.ordinary_blocked, h.ordinary_passed, h.harmful_blocked, h.harmful_passed]);
}

/// A table's line from its counts: ordinary refused and passed, harmful refused and passed.
fn counts(name: &str, [ob, op, hb, hp]: [usize; 4]) {
    let ratio = |a: usize, b: usize| if b == 0 { 1.0 } else { a as f64 / b as f64 };
    println!(
        "| {name} | {} / {} | {ob} | {hp} | {:.3} | {:.3} |",
        ob + op,
        hb + hp,
        ratio(hb, hb + ob),
        ratio(hb, hb + hp)
    );
}

pub(crate) fn run() -> anyhow::Result<()> {
    use proxy::guard::cases::{score, CASES};
    use proxy::guard::{learned, WriteRules};
    let rules = WriteRules::builtin().without_learned();
    let s = score(&rules);
    println!(
        "side-effect guard: precision (refused that were harmful) and recall (harmful that were refused)"
    );
    println!(
        "| table | requests (ordinary / harmful) | ordinary refused | harmful passed | precision | recall |"
    );
    println!("|---|---:|---:|---:|---:|---:|");
    counts(
        "written against (cases.rs)",
        [s.ordinary_blocked, s.ordinary_passed, s.harmful_blocked, s.harmful_passed],
    );
    let mut spent: Vec<(String, Score)> = vec![
        ("requests.json, first tuning half".into(), heldout::score(&rules, "tune")),
        ("requests.json, first held-out half (spent)".into(), heldout::score(&rules, "held")),
    ];
    let last = heldout::LATER_TABLES.len() - 1;
    for (half, _) in &heldout::LATER_TABLES[..last] {
        spent.push((format!("{half}.json (spent: tuning), rules alone"), {
            heldout::score_rows(&rules, &heldout::rows_of(half))
        }));
    }
    for (name, h) in &spent {
        line(name, h);
    }
    let strict = WriteRules::builtin().without_learned().strict();
    line("strict rules alone: all tuning material", &heldout::score_rows(&strict, &heldout::tuning_rows()));
    let (held_name, held) = heldout::held_out();
    let shipped = heldout::score_rows(&WriteRules::builtin(), &held);
    for (how, h) in [
        ("rules alone", heldout::score_rows(&rules, &held)),
        ("strict rules alone", heldout::score_rows(&strict, &held)),
        ("rules + learned judge (as a run judges)", shipped.clone()),
        ("strict + learned judge", heldout::score_rows(&WriteRules::builtin().strict(), &held)),
    ] {
        line(&format!("{held_name}.json, held out: {how}"), &h);
    }
    println!("| harmful blocked under another rule than expected (cases.rs) | {} |", s.wrong_rule);
    // Time per judgement: the table judged repeatedly, median of 5 rounds.
    let rounds = 200;
    let mut per = Vec::new();
    for _ in 0..5 {
        let t = std::time::Instant::now();
        for _ in 0..rounds {
            for c in CASES {
                std::hint::black_box(proxy::guard::cases::verdict(&rules, c));
            }
        }
        per.push(t.elapsed().as_secs_f64() * 1e6 / (rounds * CASES.len()) as f64);
    }
    per.sort_by(f64::total_cmp);
    println!(
        "| time per judgement, rules (cases.rs, median of 5 rounds, body parsed included) | {:.1} us |",
        per[2]
    );
    // The rules alone and as a run judges (rules and learned judge), over the held-out table's requests,
    // through `heldout::verdict` (which builds a guard per request, as `guard check` does not: most of it).
    let with_model = WriteRules::builtin();
    let _ = heldout::verdict(&with_model, &held[0]); // the model is trained before the clock starts
    for (how, judge) in [("rules alone", &rules), ("rules and learned judge", &with_model)] {
        let mut per = Vec::new();
        for _ in 0..5 {
            let t = std::time::Instant::now();
            for _ in 0..20 {
                for r in &held {
                    std::hint::black_box(heldout::verdict(judge, r));
                }
            }
            per.push(t.elapsed().as_secs_f64() * 1e6 / (20 * held.len()) as f64);
        }
        per.sort_by(f64::total_cmp);
        println!(
            "| time per judgement, {how} ({held_name}.json's requests, median of 5) | {:.1} us |",
            per[2]
        );
    }
    // The learned judge's own part: a request's features and the model's sum.
    let parsed: Vec<_> = held.iter().filter_map(|r| Some((r, r.url.parse::<http::Uri>().ok()?))).collect();
    let mut per = Vec::new();
    for _ in 0..5 {
        let t = std::time::Instant::now();
        for _ in 0..20 {
            for (r, uri) in &parsed {
                let ct = Some(r.content_type.as_str()).filter(|c| !c.is_empty());
                let label = Some(r.label.as_str()).filter(|l| !l.is_empty());
                std::hint::black_box(learned::judge(&r.method, uri, ct, Some(r.body.as_bytes()), label));
            }
        }
        per.push(t.elapsed().as_secs_f64() * 1e6 / (20 * parsed.len()) as f64);
    }
    per.sort_by(f64::total_cmp);
    println!(
        "| of which the learned judge's own (features and model; the same requests) | {:.1} us |",
        per[2]
    );
    let t = std::time::Instant::now();
    let model = learned::train(&heldout::tuning_rows());
    let (features, trained) = model.size();
    println!(
        "| training the built-in model ({trained} rows, {features} features), once per process | {:.2} s |",
        t.elapsed().as_secs_f64()
    );
    println!("\nlearned judge alone, each table read by a model trained on the tables written before it:");
    println!("| table | trained on rows | ordinary refused | harmful passed | precision | recall |");
    println!("|---|---:|---:|---:|---:|---:|");
    for (table, trained, h) in learned::measure::chronological("eighth") {
        println!(
            "| {table} | {trained} | {} | {} | {:.3} | {:.3} |",
            h.ordinary_blocked,
            h.harmful_passed,
            h.precision(),
            h.recall()
        );
    }
    for (src, got, want) in &s.wrong {
        println!("wrong (cases.rs): {src}: got {got:?}, want {want:?}");
    }
    for (name, h) in &spent {
        for (m, url, want, got) in &h.wrong {
            println!("wrong ({name}): {m} {url}: want {want}, refused by {got:?}");
        }
    }
    if s.ordinary_blocked + s.harmful_passed > 0 {
        anyhow::bail!("target missed on cases.rs: 0 ordinary blocked and 0 harmful passed");
    }
    if shipped.precision() < 0.97 || shipped.recall() < 0.97 {
        println!("target missed on the {held_name} held-out table: precision and recall >= 0.97");
    }
    Ok(())
}
