//! `cargo xtask bench guard`: the side-effect guard over its tables of real sites' requests: the table the
//! rules were first written against (`proxy::guard::cases`), and the held-out table of issue 60
//! (`proxy::guard::heldout`) in its two halves: the tuning half the rules were written from, and the
//! held-out half, which the rules never saw and which gives the figures. Precision and recall of each,
//! and the time per judgement.

pub(crate) fn run() -> anyhow::Result<()> {
    use proxy::guard::cases::{score, CASES};
    use proxy::guard::{heldout, WriteRules};
    let rules = WriteRules::builtin();
    let s = score(&rules);
    let ordinary = s.ordinary_blocked + s.ordinary_passed;
    let harmful = s.harmful_blocked + s.harmful_passed;
    let tune = heldout::score(&rules, "tune");
    let held = heldout::score(&rules, "held");
    let n =
        |h: &heldout::Score| (h.ordinary_blocked + h.ordinary_passed, h.harmful_blocked + h.harmful_passed);
    println!(
        "side-effect guard: precision (refused that were harmful) and recall (harmful that were refused)"
    );
    println!(
        "| table | requests (ordinary / harmful) | ordinary refused | harmful passed | precision | recall |"
    );
    println!("|---|---:|---:|---:|---:|---:|");
    println!(
        "| written against (cases.rs) | {ordinary} / {harmful} | {} | {} | {:.3} | {:.3} |",
        s.ordinary_blocked,
        s.harmful_passed,
        s.precision(),
        s.recall()
    );
    for (name, h) in [("issue 60, tuning half", &tune), ("issue 60, held-out half", &held)] {
        let (o, m) = n(h);
        println!(
            "| {name} | {o} / {m} | {} | {} | {:.3} | {:.3} |",
            h.ordinary_blocked,
            h.harmful_passed,
            h.precision(),
            h.recall()
        );
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
    println!("| time per judgement (median of 5 rounds, body parsed included) | {:.1} us |", per[2]);
    for (src, got, want) in &s.wrong {
        println!("wrong (cases.rs): {src}: got {got:?}, want {want:?}");
    }
    for (half, h) in [("tuning", &tune), ("held-out", &held)] {
        for (m, url, want, got) in &h.wrong {
            println!("wrong ({half} half): {m} {url}: want {want}, refused by {got:?}");
        }
    }
    if s.ordinary_blocked + s.harmful_passed > 0 {
        anyhow::bail!("target missed on cases.rs: 0 ordinary blocked and 0 harmful passed");
    }
    if held.precision() < 0.97 || held.recall() < 0.97 {
        println!("target missed on the held-out half: precision and recall >= 0.97");
    }
    Ok(())
}
