//! Standalone replay's own wire, one log per episode: [`EpisodeWire`] is the `WireTap` of
//! `webfreeze replay --wire-dir DIR`. Episode N's requests go to `DIR/episode-NNNN/wire.jsonl.zst` (the
//! layout and format of a run's task directory, `trajectory::wire`), its header naming the snapshot as the
//! run and `episode-N` as the task; `POST /__webfreeze/reset` ends the episode's log and starts the next.
//! A harness that scores episodes itself reads each log (JSON lines in one zstd stream) or hands it to
//! `trajectory::wire::read_any`.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use clock::Clock;
use proxy_report::wire::{WireEntry, WireTap};
use trajectory::wire::{WireError, WireWriter};

/// One wire log per replay episode. See the module docs.
pub struct EpisodeWire {
    dir: PathBuf,
    snapshot: String,
    clock: Arc<dyn Clock>,
    /// The episode being written and its log; None once finished.
    current: Mutex<Option<(u64, WireWriter)>>,
}

impl std::fmt::Debug for EpisodeWire {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EpisodeWire").field("dir", &self.dir).field("snapshot", &self.snapshot).finish()
    }
}

/// The directory of episode `n`'s log under `dir`.
pub fn episode_dir(dir: &Path, n: u64) -> PathBuf {
    dir.join(format!("episode-{n:04}"))
}

/// The task id episode `n`'s log header names.
pub fn episode_id(n: u64) -> String {
    format!("episode-{n}")
}

impl EpisodeWire {
    /// Start episode 1's log under `dir` (created if missing) for a replay of `snapshot`.
    pub fn create(dir: &Path, snapshot: &str, clock: Arc<dyn Clock>) -> Result<Self, WireError> {
        let w = EpisodeWire {
            dir: dir.to_path_buf(),
            snapshot: snapshot.into(),
            clock,
            current: Mutex::new(None),
        };
        let first = w.open(1)?;
        if let Ok(mut c) = w.current.lock() {
            *c = Some((1, first));
        }
        Ok(w)
    }

    fn open(&self, n: u64) -> Result<WireWriter, WireError> {
        let d = episode_dir(&self.dir, n);
        std::fs::create_dir_all(&d)
            .map_err(|source| WireError::Io { path: d.display().to_string(), source })?;
        WireWriter::create(&d, &self.snapshot, &episode_id(n), self.clock.now_ms())
    }

    /// End the current episode's log; returns how many episodes were logged.
    pub fn finish(&self) -> Result<u64, WireError> {
        let done = self.current.lock().ok().and_then(|mut c| c.take());
        match done {
            Some((n, w)) => w.finish().map(|_| n),
            None => Ok(0),
        }
    }
}

impl WireTap for EpisodeWire {
    fn record(&self, entry: WireEntry) {
        if let Ok(c) = self.current.lock() {
            if let Some((_, w)) = c.as_ref() {
                w.record(entry);
            }
        }
    }

    fn new_episode(&self, episode: u64) {
        let next = match self.open(episode) {
            Ok(w) => w,
            Err(e) => {
                tracing::warn!("wire log of episode {episode}: {e}");
                return;
            }
        };
        let old = self.current.lock().ok().and_then(|mut c| c.replace((episode, next)));
        if let Some((n, w)) = old {
            if let Err(e) = w.finish() {
                tracing::warn!("wire log of episode {n}: {e}");
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proxy_report::wire::Answer;

    fn entry(url: &str) -> WireEntry {
        WireEntry {
            n: 0,
            method: "GET".into(),
            url: url.into(),
            request_headers: Vec::new(),
            request_body: None,
            request_body_cut: None,
            status: 200,
            response_headers: Vec::new(),
            answer: Answer::Exact,
            overlay: None,
            recorded: None,
            response_body: None,
            response_text: None,
            control: None,
        }
    }

    #[test]
    fn one_log_per_episode() {
        let dir = tempfile::tempdir().unwrap();
        let clock: Arc<dyn Clock> = Arc::new(clock::FixedClock::new(5_000));
        let w = EpisodeWire::create(dir.path(), "rec/1", clock).unwrap();
        w.record(entry("https://a.test/1"));
        w.record(entry("https://a.test/2"));
        w.new_episode(2);
        w.record(entry("https://a.test/3"));
        assert_eq!(w.finish().unwrap(), 2);
        for (n, urls) in [(1, vec!["https://a.test/1", "https://a.test/2"]), (2, vec!["https://a.test/3"])] {
            let path = episode_dir(dir.path(), n).join(trajectory::wire::WIRE_FILE);
            let log = trajectory::wire::read(&path, &episode_id(n), 5_000).unwrap();
            assert_eq!(log.header.run, "rec/1");
            assert_eq!(log.entries.iter().map(|e| e.url.as_str()).collect::<Vec<_>>(), urls);
            assert!(log.truncated.is_none());
        }
    }
}
