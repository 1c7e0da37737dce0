//! `cargo xtask bench guard`: the side-effect guard over its tables of real sites' requests: the table the
//! rules were first written against (`proxy::guard::cases`); the first table of issue 60
//! (`proxy::guard::heldout`, `requests.json`), whose two halves are both tuning material now (its held-out
//! half was spent once its failures were read); the fresh table (`fresh.json`), the third (`third.json`),
//! the fourth (`fourth.json`), the fifth (`fifth.json`), the sixth (`sixth.json`), the seventh
//! (`seventh.json`), the eighth (`eighth.json`), the ninth (`ninth.json`), the tenth (`tenth.json`), the
//! eleventh (`eleventh.json`) and the twelfth (`twelfth.json`), each spent in turn; and the thirteenth
//! held-out table (`thirteenth.json`), written by someone who never read the rules and committed after the
//! rules it measures, which gives the figures. Precision and recall of each, and the time per judgement.
//! The thirteenth table's failures are not printed (it stays held out).
//!
//! The tables' rows are judged by the rules alone (`WriteRules::without_learned`): the learned judge is
//! trained on every spent table, so its figures there would be its training fit. The held-out table is
//! then judged as a run judges it, rules and learned judge together, default and strict; and each later
//! table by the model alone trained on the tables before it (`proxy::guard::learned::measure`).

pub(crate) fn run() -> anyhow::Result<()> {
    use proxy::guard::cases::{score, CASES};
    use proxy::guard::{heldout, learned, WriteRules};
    let rules = WriteRules::builtin().without_learned();
    let s = score(&rules);
    let ordinary = s.ordinary_blocked + s.ordinary_passed;
    let harmful = s.harmful_blocked + s.harmful_passed;
    let tune = heldout::score(&rules, "tune");
    let held = heldout::score(&rules, "held");
    let fresh = heldout::score_rows(&rules, &heldout::fresh_rows());
    let third = heldout::score_rows(&rules, &heldout::third_rows());
    let fourth = heldout::score_rows(&rules, &heldout::fourth_rows());
    let fifth = heldout::score_rows(&rules, &heldout::fifth_rows());
    let sixth = heldout::score_rows(&rules, &heldout::sixth_rows());
    let seventh = heldout::score_rows(&rules, &heldout::seventh_rows());
    let eighth = heldout::score_rows(&rules, &heldout::eighth_rows());
    let ninth = heldout::score_rows(&rules, &heldout::ninth_rows());
    let tenth = heldout::score_rows(&rules, &heldout::tenth_rows());
    let eleventh = heldout::score_rows(&rules, &heldout::eleventh_rows());
    let twelfth = heldout::score_rows(&rules, &heldout::twelfth_rows());
    let thirteenth = heldout::score_rows(&rules, &heldout::thirteenth_rows());
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
    // The strict guard (`--strict-write-guard`): what no rule names is refused too.
    let strict = WriteRules::builtin().without_learned().strict();
    let strict_tuning = heldout::score_rows(&strict, &heldout::tuning_rows());
    let strict_thirteenth = heldout::score_rows(&strict, &heldout::thirteenth_rows());
    // As a run judges: the rules, then the learned judge of what they let pass.
    let with_learned = heldout::score_rows(&WriteRules::builtin(), &heldout::thirteenth_rows());
    let strict_with_learned =
        heldout::score_rows(&WriteRules::builtin().strict(), &heldout::thirteenth_rows());
    for (name, h) in [
        ("requests.json, first tuning half", &tune),
        ("requests.json, first held-out half (spent: now tuning)", &held),
        ("fresh.json (spent: now tuning)", &fresh),
        ("third.json (spent: now tuning)", &third),
        ("fourth.json (spent: now tuning)", &fourth),
        ("fifth.json (spent: now tuning)", &fifth),
        ("sixth.json (spent: now tuning)", &sixth),
        ("seventh.json (spent: now tuning)", &seventh),
        ("eighth.json (spent: now tuning)", &eighth),
        ("ninth.json (spent: now tuning)", &ninth),
        ("tenth.json (spent: now tuning)", &tenth),
        ("eleventh.json (spent: now tuning)", &eleventh),
        ("twelfth.json (spent: now tuning)", &twelfth),
        ("thirteenth.json, held out", &thirteenth),
        ("strict: all tuning material", &strict_tuning),
        ("strict: thirteenth.json, held out", &strict_thirteenth),
        ("rules + learned judge: thirteenth.json, held out", &with_learned),
        ("strict + learned judge: thirteenth.json, held out", &strict_with_learned),
    ] {
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
    let t = std::time::Instant::now();
    let model = learned::train(&heldout::tuning_rows());
    let (features, rows) = model.size();
    println!(
        "| training the built-in model ({rows} rows, {features} features) | {:.2} s |",
        t.elapsed().as_secs_f64()
    );
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
    // The same, as a run judges (rules and learned judge), over the held-out table's requests.
    let shipped = WriteRules::builtin();
    let requests = heldout::thirteenth_rows();
    let _ = heldout::verdict(&shipped, &requests[0]); // the model is trained on first use
    let mut per = Vec::new();
    for _ in 0..5 {
        let t = std::time::Instant::now();
        for _ in 0..20 {
            for r in &requests {
                std::hint::black_box(heldout::verdict(&shipped, r));
            }
        }
        per.push(t.elapsed().as_secs_f64() * 1e6 / (20 * requests.len()) as f64);
    }
    per.sort_by(f64::total_cmp);
    println!(
        "| time per judgement, rules and learned judge (thirteenth.json's requests) | {:.1} us |",
        per[2]
    );
    for (src, got, want) in &s.wrong {
        println!("wrong (cases.rs): {src}: got {got:?}, want {want:?}");
    }
    for (half, h) in [
        ("requests.json tuning", &tune),
        ("requests.json spent", &held),
        ("fresh.json spent", &fresh),
        ("third.json spent", &third),
        ("fourth.json spent", &fourth),
        ("fifth.json spent", &fifth),
        ("sixth.json spent", &sixth),
        ("seventh.json spent", &seventh),
        ("eighth.json spent", &eighth),
        ("ninth.json spent", &ninth),
        ("tenth.json spent", &tenth),
        ("eleventh.json spent", &eleventh),
        ("twelfth.json spent", &twelfth),
    ] {
        for (m, url, want, got) in &h.wrong {
            println!("wrong ({half}): {m} {url}: want {want}, refused by {got:?}");
        }
    }
    if s.ordinary_blocked + s.harmful_passed > 0 {
        anyhow::bail!("target missed on cases.rs: 0 ordinary blocked and 0 harmful passed");
    }
    if with_learned.precision() < 0.97 || with_learned.recall() < 0.97 {
        println!("target missed on the thirteenth held-out table: precision and recall >= 0.97");
    }
    Ok(())
}
