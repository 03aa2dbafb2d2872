//! No one participant outweighs the rest: the share cap the live score and agent
//! reputation apply to each agent and each network (SPEC §10).
//!
//! Weights are grouped (per agent, or per network), and each group's weight is limited to
//! a level `T` at which no group holds more than [`MAX_SHARE`] of the total, the others
//! unchanged (water-filling). With fewer than `1 / MAX_SHARE` groups the cap is `1 / n`:
//! then every group is limited to the lightest one's weight, so two agents weigh the same
//! however many calls either makes. One group alone is left as it is (it is all there is,
//! and the answer says how many groups stood behind it).

/// The most one group may hold of the weight it is counted in, with enough groups.
pub const MAX_SHARE: f64 = 0.2;

/// The factor (0 to 1) each group's weight is multiplied by so that none holds more than
/// `max(MAX_SHARE, 1 / groups)` of the total. Groups of no weight keep factor 1.
pub fn share_factors(weights: &[f64]) -> Vec<f64> {
    let present: Vec<f64> = weights.iter().copied().filter(|w| *w > 0.0).collect();
    let n = present.len();
    if n <= 1 {
        return vec![1.0; weights.len()];
    }
    let cap = MAX_SHARE.max(1.0 / n as f64);
    let level = fill_level(&present, cap);
    weights
        .iter()
        .map(|w| if *w > level { level / w } else { 1.0 })
        .collect()
}

/// The level `T` with `T = cap × Σ min(w, T)`: the heaviest groups are cut to `T`, and
/// then none holds more than `cap` of the total.
fn fill_level(weights: &[f64], cap: f64) -> f64 {
    let mut sorted = weights.to_vec();
    sorted.sort_by(|a, b| b.total_cmp(a));
    // With the k heaviest cut to T: T = cap × (k·T + rest) → T = cap·rest / (1 − cap·k).
    let mut rest: f64 = sorted.iter().sum();
    for k in 0..sorted.len() {
        let t = if k == 0 {
            cap * rest
        } else {
            let denominator = 1.0 - cap * k as f64;
            if denominator <= 0.0 {
                // Every group at the level: all equal to the lightest.
                return sorted[sorted.len() - 1];
            }
            cap * rest / denominator
        };
        // Consistent when the k heaviest are above T and the next is not.
        let next = sorted[k];
        if next <= t {
            return t;
        }
        rest -= next;
    }
    sorted[sorted.len() - 1]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shares(weights: &[f64]) -> Vec<f64> {
        let f = share_factors(weights);
        let scaled: Vec<f64> = weights.iter().zip(&f).map(|(w, f)| w * f).collect();
        let total: f64 = scaled.iter().sum();
        scaled.iter().map(|s| s / total).collect()
    }

    #[test]
    fn one_group_is_left_alone_and_two_weigh_the_same() {
        assert_eq!(share_factors(&[40.0]), [1.0]);
        assert_eq!(share_factors(&[]), Vec::<f64>::new());
        let s = shares(&[1000.0, 10.0]);
        assert!((s[0] - 0.5).abs() < 1e-9, "{s:?}");
    }

    #[test]
    fn no_group_holds_more_than_a_fifth_with_many() {
        let mut w = vec![1.0; 20];
        w.push(6000.0);
        let s = shares(&w);
        assert!(s.iter().all(|x| *x <= MAX_SHARE + 1e-9), "{s:?}");
        // The honest groups keep their weight.
        assert_eq!(share_factors(&w)[0], 1.0);
        // Balanced groups are untouched.
        assert!(share_factors(&[5.0; 10]).iter().all(|f| *f == 1.0));
    }

    #[test]
    fn several_heavy_groups_are_cut_to_one_level() {
        let s = shares(&[100.0, 90.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0]);
        assert!(
            (s[0] - s[1]).abs() < 1e-9 && s[0] <= MAX_SHARE + 1e-9,
            "{s:?}"
        );
        // Three groups: at most a third each.
        let s = shares(&[50.0, 30.0, 1.0]);
        assert!(s.iter().all(|x| *x <= 1.0 / 3.0 + 1e-9), "{s:?}");
        let zero = share_factors(&[0.0, 5.0]);
        assert_eq!(zero, [1.0, 1.0]);
    }
}
