//! The learned judge's figures: how a model trained on the tables written before a table reads that table
//! (`chronological`), which is how the judge meets requests it was not trained on. Figures only: the
//! rows it gets wrong are never printed for the held-out table.

use super::super::heldout::{rows, rows_of, Row, Score, LATER_TABLES};
use super::{features, train, THRESHOLD};

/// The model alone (no rules) on `rows`, trained on `train_rows`.
pub fn model_alone(train_rows: &[Row], rows: &[Row]) -> Score {
    let model = train(train_rows);
    let mut s = Score::default();
    for r in rows {
        let Some((f, harmful)) = super::row_features(r) else { continue };
        let eligible = r.url.parse().is_ok_and(|uri| features::eligible(&r.method, &uri));
        let refused = eligible && model.probability(&f) >= THRESHOLD;
        match (harmful, refused) {
            (true, true) => s.harmful_blocked += 1,
            (true, false) => s.harmful_passed += 1,
            (false, true) => s.ordinary_blocked += 1,
            (false, false) => s.ordinary_passed += 1,
        }
    }
    s
}

/// For each later table from `from` on (the held-out one last), the model alone trained on the first
/// table and every table written before it: (table, rows trained on, figures).
pub fn chronological(from: &str) -> Vec<(&'static str, usize, Score)> {
    let start = LATER_TABLES.iter().position(|(h, _)| *h == from).unwrap_or(0);
    let mut before: Vec<Row> = rows();
    for (h, _) in &LATER_TABLES[..start] {
        before.extend(rows_of(h));
    }
    let mut out = Vec::new();
    for (h, _) in &LATER_TABLES[start..] {
        let these = rows_of(h);
        out.push((*h, before.len(), model_alone(&before, &these)));
        before.extend(these);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The model alone, each later table read by a model trained on the tables before it. Prints figures
    /// only (`cargo test -p webfreeze-proxy --lib -- --ignored --nocapture chronological_figures`).
    #[test]
    #[ignore]
    fn chronological_figures() {
        for (h, n, s) in chronological("eighth") {
            println!(
                "{h}: model alone, trained on {n} rows: precision {:.3} recall {:.3} (ordinary refused {}, harmful passed {})",
                s.precision(),
                s.recall(),
                s.ordinary_blocked,
                s.harmful_passed
            );
        }
    }
}

#[cfg(test)]
mod floors {
    use super::super::super::heldout::{held_out, score_rows};
    use crate::guard::WriteRules;

    /// The rules with the learned judge on the held-out table, which neither the rules nor the model were
    /// written or trained from. The fifteenth, with the model trained on every table before it: 0.921 /
    /// 0.921 (rules alone 0.953 / 0.838), strict 0.866 / 0.942 (strict rules alone 0.864 / 0.929). The
    /// fourteenth, when it was held out: 0.917 / 0.917 (rules alone 0.931 / 0.842), strict 0.859 / 0.942;
    /// asked of everything the rules pass, as first committed, 0.910 / 0.925 there and 0.934 / 0.938 on
    /// the thirteenth. Floors about one row below the held-out table's; raise them when the judge gets
    /// better, never lower them to pass.
    #[test]
    fn the_held_out_table_stays_above_the_learned_floors() {
        let default = WriteRules::builtin();
        let strict = WriteRules::builtin().strict();
        let (name, rows) = held_out();
        for (how, rules, precision, recall) in
            [("default", &default, 0.917, 0.916), ("strict", &strict, 0.862, 0.937)]
        {
            let s = score_rows(rules, &rows);
            assert!(
                s.precision() >= precision && s.recall() >= recall,
                "{name}, {how}: precision {:.3} recall {:.3}",
                s.precision(),
                s.recall()
            );
        }
    }
}
