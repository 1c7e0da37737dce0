//! A frozen web that follows the run's writes: each recorded exchange belongs to a *write epoch*, the number
//! of state-changing writes the recording had made before it (POST, PUT, PATCH, DELETE answered 2xx or 3xx,
//! telemetry left out). Replay keeps the run's own epoch: a write of the run that matches a recorded write
//! (exact or normalised: same request, same body) moves it to just after that write. A page recorded several
//! times (the cart before and after "add to cart") is then answered from the recording of the run's epoch,
//! (only the recording's *next* write moves it: a later one out of order would carry the effects of the
//! writes the run skipped)
//! not by position: an agent that opens the cart twice without adding anything sees it empty twice; one that
//! adds sees the item after its add. A write the recording never made is answered by the miss policy (never
//! by the fuzzy layer, which would hand it another write's answer) and leaves the epoch where it was; `eval`
//! then counts the task's state checks as not scorable frozen.
//!
//! The recorded writes are read from the snapshot once, when a page recorded several times is first asked
//! for, or on the run's first write.

use snapshots::{Manifest, Store, StoreError};

/// Path pieces of telemetry writes, which change no state a page shows.
const TELEMETRY: &[&str] =
    &["collect", "beacon", "analytics", "track", "telemetry", "metrics", "rum", "log", "logs"];

/// Whether a request with this method and URL changes state (a write that is not telemetry).
pub fn is_state_write(method: &str, url: &str) -> bool {
    if !matches!(method.to_ascii_uppercase().as_str(), "POST" | "PUT" | "PATCH" | "DELETE") {
        return false;
    }
    let path = url.split('?').next().unwrap_or(url).to_ascii_lowercase();
    !path.split(['/', '.', '-', '_']).any(|seg| TELEMETRY.contains(&seg))
}

/// The sequence numbers of a snapshot's state-changing writes that succeeded, in order.
pub(crate) fn recorded_writes(store: &Store, m: &Manifest) -> Result<Vec<u64>, StoreError> {
    let mut out = Vec::new();
    for x in store.exchanges(m) {
        let x = x?;
        if is_state_write(&x.request.method, &x.request.url) && (200..400).contains(&x.response.status) {
            out.push(x.seq);
        }
    }
    Ok(out)
}

/// The epoch of the exchange recorded at `seq`: how many of `writes` came before it.
pub(crate) fn epoch_of(writes: &[u64], seq: u64) -> usize {
    writes.partition_point(|w| *w < seq)
}

/// Which candidate (index into `seqs`, recorded order) answers a page in the run's `epoch`: the `nth` of
/// those recorded in that epoch (the last one once they are used up), else the last one recorded before
/// it (the state the run's writes left), else the first.
pub(crate) fn pick(writes: &[u64], seqs: &[u64], epoch: usize, nth: usize) -> usize {
    let same: Vec<usize> = (0..seqs.len()).filter(|&i| epoch_of(writes, seqs[i]) == epoch).collect();
    if let Some(&i) = same.get(nth.min(same.len().saturating_sub(1))) {
        return i;
    }
    (0..seqs.len()).rev().find(|&i| epoch_of(writes, seqs[i]) < epoch).unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn epochs_and_picks() {
        // seq 1: GET /cart (empty); 2: POST /cart/add; 3: GET /cart (the item); 4: POST /checkout; 5: GET /cart.
        let writes = [2, 4];
        let cart = [1, 3, 5];
        assert_eq!(cart.map(|s| epoch_of(&writes, s)), [0, 1, 2]);
        // Never added: the empty cart, however often it is opened.
        assert_eq!((pick(&writes, &cart, 0, 0), pick(&writes, &cart, 0, 1)), (0, 0));
        // After the add: the cart with the item.
        assert_eq!(pick(&writes, &cart, 1, 0), 1);
        // An epoch the page was not recorded in: the last state before it.
        assert_eq!(pick(&writes, &[1, 5], 1, 0), 0);
        // Several recordings in one epoch (a poll): in order, then the last.
        assert_eq!([0, 1, 2].map(|n| pick(&[], &[7, 8], 0, n)), [0, 1, 1]);
        assert!(is_state_write("POST", "https://s.test/cart/add"));
        assert!(!is_state_write("POST", "https://s.test/g/collect?v=2"));
        assert!(!is_state_write("GET", "https://s.test/cart"));
    }
}
