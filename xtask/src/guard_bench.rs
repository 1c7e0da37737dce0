//! `cargo xtask bench guard`: the side-effect guard over its table of real sites' requests
//! (`proxy::guard::cases`): precision and recall, ordinary requests blocked, harmful requests passed,
//! and the time per judgement.

pub(crate) fn run() -> anyhow::Result<()> {
    use proxy::guard::cases::{score, CASES};
    use proxy::guard::WriteRules;
    let rules = WriteRules::builtin();
    let s = score(&rules);
    let ordinary = s.ordinary_blocked + s.ordinary_passed;
    let harmful = s.harmful_blocked + s.harmful_passed;
    println!(
        "side-effect guard over {} requests from real sites' forms ({ordinary} ordinary, {harmful} harmful)",
        CASES.len()
    );
    println!("| figure | value |\n|---|---:|");
    println!("| ordinary requests blocked (false positives) | {} |", s.ordinary_blocked);
    println!("| harmful requests passed (misses) | {} |", s.harmful_passed);
    println!("| precision (blocked that were harmful) | {:.3} |", s.precision());
    println!("| recall (harmful that were blocked) | {:.3} |", s.recall());
    println!("| harmful blocked under another rule than expected | {} |", s.wrong_rule);
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
        println!("wrong: {src}: got {got:?}, want {want:?}");
    }
    if s.ordinary_blocked + s.harmful_passed > 0 {
        anyhow::bail!("target missed: 0 ordinary blocked and 0 harmful passed");
    }
    Ok(())
}
