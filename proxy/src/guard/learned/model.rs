//! A logistic regression over sets of named features, trained by L-BFGS: the learned judge's model.
//!
//! Written here rather than taken from a crate: the model is a sparse dot product over a few thousand
//! binary features, and the crates that fit one (linfa-logistic, smartcore) work on dense matrices
//! (6,000 rows by 10,000 features), bring ndarray or their own linear algebra, and do not promise the same
//! weights on every machine. This one is about a hundred lines, allocation-light, and deterministic: the
//! same rows give the same weights, bit for bit, so a figure printed once is printed again.
//!
//! The objective is scikit-learn's `LogisticRegression(C=1)`: the sum of the rows' log losses plus half the
//! squared norm of the weights (the bias is not penalised). The figures the judge was designed on were
//! computed with scikit-learn; this optimiser reaches the same minimum to within its tolerance.

use std::collections::{BTreeMap, BTreeSet, HashMap};

/// Features seen in fewer training rows than this are left out of the vocabulary.
const MIN_ROWS: usize = 2;
/// L-BFGS: corrections kept, iterations at most, and the gradient's largest component at which it stops.
const MEMORY: usize = 10;
const MAX_ITERATIONS: usize = 1000;
const TOLERANCE: f64 = 1e-5;

/// A trained model: a weight per known feature and a bias.
#[derive(Debug, Clone)]
pub struct Model {
    index: HashMap<String, usize>,
    names: Vec<String>,
    weights: Vec<f64>,
    bias: f64,
    rows: usize,
}

impl Model {
    /// Train on rows of (features, harmful).
    pub fn train(rows: &[(BTreeSet<String>, bool)]) -> Self {
        let mut seen: BTreeMap<&str, usize> = BTreeMap::new();
        for (f, _) in rows {
            for name in f {
                *seen.entry(name.as_str()).or_default() += 1;
            }
        }
        let names: Vec<String> =
            seen.into_iter().filter(|(_, n)| *n >= MIN_ROWS).map(|(k, _)| k.to_string()).collect();
        let index: HashMap<String, usize> = names.iter().enumerate().map(|(i, n)| (n.clone(), i)).collect();
        let data: Vec<(Vec<usize>, f64)> = rows
            .iter()
            .map(|(f, harmful)| {
                let idx = f.iter().filter_map(|n| index.get(n).copied()).collect();
                (idx, if *harmful { 1.0 } else { -1.0 })
            })
            .collect();
        let x = minimise(names.len() + 1, |x, g| objective(&data, x, g));
        let (weights, bias) = (x[..names.len()].to_vec(), x[names.len()]);
        Self { index, names, weights, bias, rows: rows.len() }
    }

    /// The probability that a request with these features is harmful.
    pub fn probability(&self, features: &BTreeSet<String>) -> f64 {
        let z = self.bias
            + features.iter().filter_map(|f| self.index.get(f)).map(|&i| self.weights[i]).sum::<f64>();
        1.0 / (1.0 + (-z).exp())
    }

    /// The features that pushed a request most towards harmful, strongest first (at most `n`).
    pub fn strongest(&self, features: &BTreeSet<String>, n: usize) -> Vec<(String, f64)> {
        let mut w: Vec<(String, f64)> = features
            .iter()
            .filter_map(|f| self.index.get(f).map(|&i| (f.clone(), self.weights[i])))
            .filter(|(_, w)| *w > 0.0)
            .collect();
        w.sort_by(|a, b| b.1.total_cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
        w.truncate(n);
        w
    }

    /// How many features it knows, and how many rows it was trained on.
    pub fn size(&self) -> (usize, usize) {
        (self.names.len(), self.rows)
    }
}

/// `log(1 + exp(-t))` without overflow.
fn log_loss(t: f64) -> f64 {
    if t > 0.0 {
        (-t).exp().ln_1p()
    } else {
        -t + t.exp().ln_1p()
    }
}

/// The objective at `x` (weights, then the bias), with its gradient written to `g`.
fn objective(data: &[(Vec<usize>, f64)], x: &[f64], g: &mut [f64]) -> f64 {
    let bias = x.len() - 1;
    let mut f = 0.0;
    for (i, gi) in g.iter_mut().enumerate() {
        *gi = if i == bias { 0.0 } else { x[i] };
        if i != bias {
            f += 0.5 * x[i] * x[i];
        }
    }
    for (idx, y) in data {
        let z = x[bias] + idx.iter().map(|&i| x[i]).sum::<f64>();
        f += log_loss(y * z);
        // d/dz log(1 + exp(-yz)) = -y / (1 + exp(yz))
        let d = -y / (1.0 + (y * z).exp());
        for &i in idx {
            g[i] += d;
        }
        g[bias] += d;
    }
    f
}

/// Minimise a smooth function of `n` variables from zero by L-BFGS with a backtracking line search.
fn minimise(n: usize, mut fg: impl FnMut(&[f64], &mut [f64]) -> f64) -> Vec<f64> {
    let dot = |a: &[f64], b: &[f64]| a.iter().zip(b).map(|(x, y)| x * y).sum::<f64>();
    let mut x = vec![0.0; n];
    let mut g = vec![0.0; n];
    let mut f = fg(&x, &mut g);
    let mut history: Vec<(Vec<f64>, Vec<f64>, f64)> = Vec::new(); // (s, y, 1 / y.s)
    let (mut xn, mut gn) = (vec![0.0; n], vec![0.0; n]);
    for _ in 0..MAX_ITERATIONS {
        if g.iter().fold(0.0_f64, |m, v| m.max(v.abs())) < TOLERANCE {
            break;
        }
        // The two-loop recursion: d = -H g.
        let mut q = g.clone();
        let mut alphas = Vec::with_capacity(history.len());
        for (s, y, rho) in history.iter().rev() {
            let a = rho * dot(s, &q);
            q.iter_mut().zip(y).for_each(|(qi, yi)| *qi -= a * yi);
            alphas.push(a);
        }
        let gamma = history
            .last()
            .map(|(s, y, _)| dot(s, y) / dot(y, y))
            .unwrap_or_else(|| 1.0 / dot(&g, &g).sqrt().max(1.0));
        q.iter_mut().for_each(|qi| *qi *= gamma);
        for ((s, y, rho), a) in history.iter().zip(alphas.iter().rev()) {
            let b = rho * dot(y, &q);
            q.iter_mut().zip(s).for_each(|(qi, si)| *qi += (a - b) * si);
        }
        let mut d: Vec<f64> = q.iter().map(|v| -v).collect();
        let mut slope = dot(&g, &d);
        if slope >= 0.0 {
            // Not a descent direction: start again from the gradient.
            history.clear();
            d = g.iter().map(|v| -v).collect();
            slope = dot(&g, &d);
        }
        // Backtracking (Armijo).
        let mut step = 1.0;
        let mut fnew;
        loop {
            xn.iter_mut().zip(&x).zip(&d).for_each(|((xi, x0), di)| *xi = x0 + step * di);
            fnew = fg(&xn, &mut gn);
            if fnew <= f + 1e-4 * step * slope || step < 1e-12 {
                break;
            }
            step *= 0.5;
        }
        let s: Vec<f64> = xn.iter().zip(&x).map(|(a, b)| a - b).collect();
        let y: Vec<f64> = gn.iter().zip(&g).map(|(a, b)| a - b).collect();
        let sy = dot(&s, &y);
        if sy > 1e-12 {
            history.push((s, y, 1.0 / sy));
            if history.len() > MEMORY {
                history.remove(0);
            }
        }
        let improved = f - fnew;
        std::mem::swap(&mut x, &mut xn);
        std::mem::swap(&mut g, &mut gn);
        f = fnew;
        if improved.abs() <= 1e-10 * f.abs().max(1.0) {
            break;
        }
    }
    x
}

#[cfg(test)]
mod tests {
    use super::*;

    fn set(items: &[&str]) -> BTreeSet<String> {
        items.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn the_optimiser_finds_a_known_minimum() {
        // (x0 - 3)^2 + 10 (x1 + 1)^2, minimum at (3, -1).
        let x = minimise(2, |x, g| {
            g[0] = 2.0 * (x[0] - 3.0);
            g[1] = 20.0 * (x[1] + 1.0);
            (x[0] - 3.0).powi(2) + 10.0 * (x[1] + 1.0).powi(2)
        });
        assert!((x[0] - 3.0).abs() < 1e-4 && (x[1] + 1.0).abs() < 1e-4, "{x:?}");
    }

    #[test]
    fn a_model_learns_which_words_act_and_is_the_same_every_time() {
        let mut rows = Vec::new();
        for i in 0..20 {
            let noise = format!("p:n{}", i % 4);
            rows.push((set(&["m:POST", "last:order", "place", &noise]), true));
            rows.push((set(&["m:POST", "last:search", "query", &noise]), false));
            rows.push((set(&["m:POST", "last:estimate", "order", &noise]), false));
        }
        let m = Model::train(&rows);
        let again = Model::train(&rows);
        assert_eq!(m.weights, again.weights, "trained twice on the same rows, the weights differ");
        assert!(m.probability(&set(&["m:POST", "last:order", "place"])) > 0.9);
        assert!(m.probability(&set(&["m:POST", "last:search", "query"])) < 0.1);
        assert!(m.probability(&set(&["m:POST", "last:estimate", "order"])) < 0.1);
        assert_eq!(m.strongest(&set(&["m:POST", "last:order", "place"]), 1)[0].0, "last:order");
        // A feature seen once is not learned.
        let mut once = rows.clone();
        once.push((set(&["rare"]), true));
        assert!(!Model::train(&once).index.contains_key("rare"));
    }

    #[test]
    fn log_loss_is_stable_at_both_ends() {
        assert!((log_loss(0.0) - std::f64::consts::LN_2).abs() < 1e-12);
        assert!(log_loss(800.0) >= 0.0 && log_loss(800.0) < 1e-300);
        assert!((log_loss(-800.0) - 800.0).abs() < 1e-9);
    }
}
