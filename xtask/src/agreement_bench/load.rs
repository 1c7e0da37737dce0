//! What `bench agreement` measures of a loaded machine: threads that spin for the whole bench (`--hog N`)
//! and the script batches of an application's frozen runs (issue 61 part 5's ResourceLoader race).

use std::path::Path;
use std::sync::Arc;

/// Script batches over an application's frozen runs (issue 61 part 5).
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct Batches {
    /// Frozen runs read.
    pub(super) runs: usize,
    /// `load.php` requests the frozen runs made (their wire logs).
    pub(super) asked: usize,
    /// Batches assembled from recorded ones.
    pub(super) assembled: usize,
    /// `load.php` requests that missed every layer.
    pub(super) missed: usize,
}

impl Batches {
    /// Adds the frozen run `run`'s task `id`.
    pub(super) fn add(&mut self, run: &Path, id: &str) {
        let dir = trajectory::RunDir::new(run).task(id);
        let Some(t) = dir.read_trajectory().ok().flatten() else { return };
        if let Ok(Some(log)) = dir.read_wire(&t) {
            self.asked += log.entries.iter().filter(|e| e.url.contains("/load.php?")).count();
        }
        let Some(r) = t.proxy_report.as_ref().and_then(|r| r.replay()) else { return };
        self.runs += 1;
        self.assembled += r.assembled.len();
        self.missed += r.misses.iter().filter(|m| m.url.contains("/load.php?")).count();
    }
}

/// Threads that spin until dropped: a loaded machine (`--hog N`).
pub(super) struct Hogs(Arc<std::sync::atomic::AtomicBool>, Vec<std::thread::JoinHandle<()>>);

impl Hogs {
    pub(super) fn start(n: usize) -> Hogs {
        let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let threads = (0..n)
            .map(|_| {
                let stop = stop.clone();
                std::thread::spawn(move || {
                    let mut x = 0u64;
                    while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                        x = std::hint::black_box(x.wrapping_mul(6364136223846793005).wrapping_add(1));
                    }
                })
            })
            .collect();
        Hogs(stop, threads)
    }
}

impl Drop for Hogs {
    fn drop(&mut self) {
        self.0.store(true, std::sync::atomic::Ordering::Relaxed);
        for t in self.1.drain(..) {
            let _ = t.join();
        }
    }
}
