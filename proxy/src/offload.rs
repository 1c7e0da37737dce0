//! Blocking work (store lookups, body reads and writes, decompression) kept off the async workers.
//!
//! A handler's phases run on tokio's workers, each of which serves many connections: a RocksDB lookup that
//! waits on the disk there stalls every connection on that worker. [`offload`] runs such work with
//! `tokio::task::block_in_place`: the calling worker hands its other tasks to a fresh worker first, so
//! they go on while the work blocks. It borrows, so the handlers' phases (synchronous hooks included) can
//! call it without cloning what they look at.
//!
//! Bounded: at most [`Offload::permits`] pieces of work block at once (the rest wait asynchronously, the
//! backpressure), and the threads come from tokio's bounded blocking pool. Work that is known to be cheap
//! (a hit in an in-memory cache) should not be offloaded: the hand-over costs a few microseconds.
//!
//! On a current-thread runtime (tests, small tools) or outside a runtime, the work runs inline.

use tokio::runtime::{Handle, RuntimeFlavor};
use tokio::sync::Semaphore;

/// Run `f`, which may block, without holding up the calling worker's other tasks (see the module docs).
/// For synchronous hooks: unbounded by permits; see [`Offload::run`] for the bounded form.
pub fn offload<T>(f: impl FnOnce() -> T) -> T {
    match Handle::try_current() {
        Ok(h) if h.runtime_flavor() == RuntimeFlavor::MultiThread => tokio::task::block_in_place(f),
        _ => f(),
    }
}

/// A bound on blocking work in flight: each [`Offload::run`] waits for a permit first.
#[derive(Debug)]
pub struct Offload {
    permits: Semaphore,
    n: usize,
}

impl Offload {
    /// At most `n` (at least 1) pieces of work at once.
    pub fn new(n: usize) -> Self {
        let n = n.max(1);
        Self { permits: Semaphore::new(n), n }
    }

    /// One per available core, twice over (store reads mostly wait on the page cache or the disk).
    pub fn per_core() -> Self {
        Self::new(2 * std::thread::available_parallelism().map(|n| n.get()).unwrap_or(2))
    }

    /// How many pieces of work may block at once.
    pub fn permits(&self) -> usize {
        self.n
    }

    /// Wait for a permit, then [`offload`] `f`.
    pub async fn run<T>(&self, f: impl FnOnce() -> T) -> T {
        // The semaphore is never closed, so acquiring cannot fail; if it ever did, run unbounded.
        let _permit = self.permits.acquire().await.ok();
        offload(f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Arc;

    #[tokio::test(flavor = "multi_thread", worker_threads = 1)]
    async fn blocking_work_holds_up_no_other_task_and_is_bounded() {
        // One worker, blocked in offloaded work that waits for another task: that task still runs (the
        // worker handed it over). Run inline, the two would wait for each other until the bound.
        let (tx, rx) = std::sync::mpsc::channel::<()>();
        let (started_tx, started_rx) = tokio::sync::oneshot::channel::<()>();
        let blocker = tokio::spawn(async move {
            let _ = started_tx.send(());
            offload(move || rx.recv_timeout(std::time::Duration::from_secs(20)).is_ok())
        });
        // The sender is spawned only once the blocker runs on the only worker.
        started_rx.await.unwrap();
        let sender = tokio::spawn(async move { tx.send(()).is_ok() });
        assert!(sender.await.unwrap());
        assert!(blocker.await.unwrap(), "the other task did not run while the work blocked");

        // At most `permits` run at once.
        let o = Arc::new(Offload::new(2));
        let (now, peak) = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)));
        let (go_tx, go_rx) = tokio::sync::watch::channel(false);
        let mut jobs = Vec::new();
        for _ in 0..6 {
            let (o, now, peak, mut go) = (o.clone(), now.clone(), peak.clone(), go_rx.clone());
            jobs.push(tokio::spawn(async move {
                let _ = go.wait_for(|g| *g).await;
                o.run(|| {
                    let n = now.fetch_add(1, Ordering::SeqCst) + 1;
                    peak.fetch_max(n, Ordering::SeqCst);
                    std::thread::yield_now();
                    now.fetch_sub(1, Ordering::SeqCst);
                })
                .await
            }));
        }
        go_tx.send(true).unwrap();
        for j in jobs {
            j.await.unwrap();
        }
        assert!(peak.load(Ordering::SeqCst) <= 2, "peak {}", peak.load(Ordering::SeqCst));
        assert_eq!(o.permits(), 2);
    }

    #[tokio::test(flavor = "current_thread")]
    async fn on_a_current_thread_runtime_it_runs_inline() {
        assert_eq!(offload(|| 7), 7);
        assert_eq!(Offload::new(1).run(|| 8).await, 8);
    }
}
