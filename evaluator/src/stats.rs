//! Agreement statistics for paired verdicts: Cohen's kappa and the exact McNemar test.

/// A 2x2 table of paired binary verdicts: `both` (A and B succeed), `a_only`, `b_only`, `neither`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
pub struct Pairs {
    /// Success in both.
    pub both: u64,
    /// Success in A only.
    pub a_only: u64,
    /// Success in B only.
    pub b_only: u64,
    /// Failure in both.
    pub neither: u64,
}

impl Pairs {
    /// Count pairs.
    pub fn count(pairs: impl IntoIterator<Item = (bool, bool)>) -> Self {
        let mut p = Pairs::default();
        for (a, b) in pairs {
            match (a, b) {
                (true, true) => p.both += 1,
                (true, false) => p.a_only += 1,
                (false, true) => p.b_only += 1,
                (false, false) => p.neither += 1,
            }
        }
        p
    }

    /// Number of pairs.
    pub fn n(&self) -> u64 {
        self.both + self.a_only + self.b_only + self.neither
    }

    /// Share of pairs with the same verdict.
    pub fn agreement(&self) -> f64 {
        if self.n() == 0 {
            return 1.0;
        }
        (self.both + self.neither) as f64 / self.n() as f64
    }

    /// Cohen's kappa; 1.0 when both raters are constant and agree (no variation to correct for chance).
    pub fn kappa(&self) -> f64 {
        let n = self.n() as f64;
        if n == 0.0 {
            return 1.0;
        }
        let po = self.agreement();
        let a_yes = (self.both + self.a_only) as f64 / n;
        let b_yes = (self.both + self.b_only) as f64 / n;
        let pe = a_yes * b_yes + (1.0 - a_yes) * (1.0 - b_yes);
        if (1.0 - pe).abs() < 1e-12 {
            return if (po - 1.0).abs() < 1e-12 { 1.0 } else { 0.0 };
        }
        (po - pe) / (1.0 - pe)
    }

    /// Exact two-sided McNemar p-value: a binomial test of the discordant pairs against p = 1/2.
    pub fn mcnemar_p(&self) -> f64 {
        let (b, c) = (self.a_only, self.b_only);
        let n = b + c;
        if n == 0 {
            return 1.0;
        }
        let k = b.min(c);
        // P(X <= k) for X ~ Bin(n, 1/2), in log space to stay finite for large n.
        let ln_half_n = n as f64 * 0.5f64.ln();
        let mut ln_c = 0.0f64; // ln C(n, 0)
        let mut tail = 0.0f64;
        for i in 0..=k {
            if i > 0 {
                ln_c += ((n - i + 1) as f64).ln() - (i as f64).ln();
            }
            tail += (ln_c + ln_half_n).exp();
        }
        (2.0 * tail).min(1.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-6
    }

    #[test]
    fn kappa_and_mcnemar_against_hand_computed_values() {
        // (both, a_only, b_only, neither, kappa, p)
        let cases = [
            // Perfect agreement with variation: kappa 1, no discordant pairs.
            (3, 0, 0, 3, 1.0, 1.0),
            // po = 0.7; a_yes = 0.5, b_yes = 0.4; pe = 0.2 + 0.3 = 0.5; kappa = 0.4.
            // discordant 2 vs 1: p = 2 * P(X<=1 | n=3) = 2 * (1 + 3)/8 = 1.0.
            (3, 2, 1, 4, 0.4, 1.0),
            // 6 vs 0 discordant: p = 2 * (1/64) = 0.03125.
            // po = 0.4, a_yes = 1.0, b_yes = 0.4, pe = 0.4: kappa 0.
            (4, 6, 0, 0, 0.0, 0.03125),
            // 10 vs 2: p = 2 * (1 + 12 + 66)/4096 = 0.03857421875.
            // n = 20, po = 8/20 = 0.4; a_yes = 0.7, b_yes = 0.3; pe = 0.21 + 0.21 = 0.42;
            // kappa = (0.4 - 0.42)/0.58 = -0.0344827586.
            (4, 10, 2, 4, -0.034_482_758_6, 0.038_574_218_75),
        ];
        for (both, a_only, b_only, neither, kappa, p) in cases {
            let t = Pairs { both, a_only, b_only, neither };
            assert!(close(t.kappa(), kappa), "kappa {t:?}: {}", t.kappa());
            assert!(close(t.mcnemar_p(), p), "p {t:?}: {}", t.mcnemar_p());
        }
    }

    #[test]
    fn constant_raters() {
        assert_eq!(Pairs { both: 5, ..Default::default() }.kappa(), 1.0);
        assert_eq!(Pairs::count([(true, true), (false, true)]).n(), 2);
    }
}
