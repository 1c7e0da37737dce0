//! Fault points for the kill tests (`tests/faults.rs`), on TiKV's fail-rs.
//!
//! A point does nothing unless the `FAILPOINTS` environment variable configures it (the binary calls
//! `fail::FailScenario::setup()`). Configured with `return`, a point announces itself on stderr and holds
//! the thread for good, so a test can SIGKILL the process at exactly that point without guessing a delay:
//! `FAILPOINTS="snapshot-append=100*off->return"` holds a writer right after its 100th exchange is stored.
//!
//! The points exist only in builds with the `faults` feature (`cargo test --features webfreeze/faults`, as
//! the test command runs); elsewhere `fail_point!` expands to nothing.
//!
//! Points: `snapshot-append` (after each exchange is durably written), `gc-batch` (after each batch of
//! gc deletions), `store-lookup` (before an index lookup: a lookup that blocks, for the test that it
//! stalls no other connection).

/// Announce the point on stderr and never return.
#[cfg_attr(not(feature = "faults"), allow(dead_code))] // the points compile to nothing without the feature
pub(crate) fn hold(point: &str) -> ! {
    eprintln!("fault point {point}: holding");
    loop {
        std::thread::park();
    }
}
