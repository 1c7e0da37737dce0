//! A task's wire log, `<run>/<task>/wire.jsonl.zst`: the requests its browser made and what answered them
//! ([`proxy_report::wire::WireEntry`]), written as the run goes by the task's proxy and read by the
//! evaluator's network checks. A replayed task is scored on this log, never on its recording's requests.
//!
//! Format: one zstd stream of JSON lines. The first line is a [`WireHeader`] naming the run and task, so a
//! log copied from another task or run is refused by name; then one entry per line. The encoder is flushed
//! after every entry, so a crash (or a killed process) leaves every entry answered before it decodable: the
//! reader returns what it holds and says the log was cut ([`WireLog::truncated`]).

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use proxy_report::wire::{WireEntry, WireTap};
use serde::{Deserialize, Serialize};

/// The wire log's file name in a task's directory.
pub const WIRE_FILE: &str = "wire.jsonl.zst";
/// Format version of the wire log.
pub const WIRE_VERSION: u32 = 1;
const FORMAT: &str = "webfreeze-wire";

/// The first line of a wire log.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct WireHeader {
    /// Always `webfreeze-wire`.
    pub format: String,
    /// [`WIRE_VERSION`].
    pub v: u32,
    /// The run directory's name when the log was written (for messages: a run directory may be renamed).
    pub run: String,
    /// The task's id.
    pub task_id: String,
    /// When the task attempt started (its trajectory's `started_ms`): what ties the log to one attempt.
    pub started_ms: i64,
}

/// Why a wire log could not be read or written.
#[derive(Debug, thiserror::Error)]
pub enum WireError {
    /// I/O.
    #[error("{path}: {source}")]
    Io {
        /// File.
        path: String,
        /// Error.
        #[source]
        source: std::io::Error,
    },
    /// Not a wire log, or of a version this one cannot read.
    #[error("{path}: not a webfreeze wire log: {detail}")]
    Bad {
        /// File.
        path: String,
        /// Why.
        detail: String,
    },
    /// A wire log of another task or run.
    #[error(
        "{path}: the wire log of task {found_task} of run {found_run} (started at {found_started_ms} ms), \
         not of task {task} started at {started_ms} ms: refused"
    )]
    Other {
        /// File.
        path: String,
        /// The run it names.
        found_run: String,
        /// The task it names.
        found_task: String,
        /// The attempt it names.
        found_started_ms: i64,
        /// The task expected.
        task: String,
        /// The attempt expected.
        started_ms: i64,
    },
}

/// A wire log read back.
#[derive(Debug, Clone, PartialEq)]
pub struct WireLog {
    /// Its header.
    pub header: WireHeader,
    /// Its entries, in order.
    pub entries: Vec<WireEntry>,
    /// Set when the log ends mid-entry (a crash while writing): what was cut. The entries before it are
    /// whole.
    pub truncated: Option<String>,
}

/// Writes a task's wire log as requests are answered (a [`WireTap`]).
pub struct WireWriter {
    path: PathBuf,
    enc: Mutex<Option<zstd::stream::write::Encoder<'static, std::fs::File>>>,
}

impl std::fmt::Debug for WireWriter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WireWriter").field("path", &self.path).finish_non_exhaustive()
    }
}

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> WireError + '_ {
    move |source| WireError::Io { path: path.display().to_string(), source }
}

impl WireWriter {
    /// Start the wire log of the attempt of task `task_id` started at `started_ms`, of run `run`, in
    /// `task_dir` (replacing an earlier one: a rerun of a task starts it afresh).
    pub fn create(task_dir: &Path, run: &str, task_id: &str, started_ms: i64) -> Result<Self, WireError> {
        let path = task_dir.join(WIRE_FILE);
        let file = std::fs::File::create(&path).map_err(io(&path))?;
        // Level 3: a few microseconds per entry; the log is small next to the screenshots beside it.
        let enc = zstd::stream::write::Encoder::new(file, 3).map_err(io(&path))?;
        let w = WireWriter { path, enc: Mutex::new(Some(enc)) };
        let header = WireHeader {
            format: FORMAT.into(),
            v: WIRE_VERSION,
            run: run.into(),
            task_id: task_id.into(),
            started_ms,
        };
        w.write_line(&serde_json::to_vec(&header).map_err(|e| w.bad(e))?)?;
        Ok(w)
    }

    fn bad(&self, e: impl std::fmt::Display) -> WireError {
        WireError::Bad { path: self.path.display().to_string(), detail: e.to_string() }
    }

    fn write_line(&self, line: &[u8]) -> Result<(), WireError> {
        let mut g = self.enc.lock().map_err(|_| self.bad("writer lock poisoned"))?;
        let Some(enc) = g.as_mut() else { return Ok(()) };
        enc.write_all(line).map_err(io(&self.path))?;
        enc.write_all(b"\n").map_err(io(&self.path))?;
        // A flush ends a zstd block: everything written so far decodes even if the process dies now.
        enc.flush().map_err(io(&self.path))
    }

    /// Append one entry.
    pub fn append(&self, e: &WireEntry) -> Result<(), WireError> {
        let line = serde_json::to_vec(e).map_err(|e| self.bad(e))?;
        self.write_line(&line)
    }

    /// End the zstd frame and close the file (later entries are dropped).
    pub fn finish(&self) -> Result<(), WireError> {
        let enc = self.enc.lock().map_err(|_| self.bad("writer lock poisoned"))?.take();
        if let Some(enc) = enc {
            let f = enc.finish().map_err(io(&self.path))?;
            f.sync_all().map_err(io(&self.path))?;
        }
        Ok(())
    }

    /// The log's path.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

impl Drop for WireWriter {
    /// A writer dropped without [`WireWriter::finish`] (a task cancelled or timed out) still ends its frame:
    /// only a crash leaves a log cut.
    fn drop(&mut self) {
        if let Err(e) = self.finish() {
            tracing::warn!("wire log: {e}");
        }
    }
}

impl WireTap for WireWriter {
    fn record(&self, entry: WireEntry) {
        if let Err(e) = self.append(&entry) {
            tracing::warn!("wire log: {e}");
        }
    }
}

/// Read the wire log at `path`, refusing one written by another task or another attempt (another run) of it.
pub fn read(path: &Path, task_id: &str, started_ms: i64) -> Result<WireLog, WireError> {
    read_as(path, Some((task_id, started_ms)))
}

/// Read the wire log at `path` whatever task it names (its header says which): for a log that stands
/// alone, such as standalone replay's per-episode logs.
pub fn read_any(path: &Path) -> Result<WireLog, WireError> {
    read_as(path, None)
}

fn read_as(path: &Path, expect: Option<(&str, i64)>) -> Result<WireLog, WireError> {
    let file = std::fs::File::open(path).map_err(io(path))?;
    let bad = |detail: String| WireError::Bad { path: path.display().to_string(), detail };
    let dec = zstd::stream::read::Decoder::new(file).map_err(io(path))?;
    let mut lines = BufReader::new(dec);
    let mut buf = Vec::new();
    let mut header: Option<WireHeader> = None;
    let mut entries = Vec::new();
    let mut truncated = None;
    loop {
        buf.clear();
        match lines.read_until(b'\n', &mut buf) {
            Ok(0) => break,
            Ok(_) if buf.last() != Some(&b'\n') => {
                truncated = Some(format!("the log ends mid-entry after {} entries", entries.len()));
                break;
            }
            Ok(_) => {}
            // A stream cut by a crash: the decoder reports the missing end of its frame.
            Err(e) => {
                truncated = Some(format!("the log is cut after {} entries ({e})", entries.len()));
                break;
            }
        }
        let line = &buf[..buf.len() - 1];
        match &header {
            None => {
                let h: WireHeader = serde_json::from_slice(line).map_err(|e| bad(e.to_string()))?;
                if h.format != FORMAT {
                    return Err(bad(format!("format {:?}", h.format)));
                }
                if h.v > WIRE_VERSION {
                    return Err(bad(format!("version {} (this webfreeze reads up to {WIRE_VERSION})", h.v)));
                }
                if let Some((task_id, started_ms)) =
                    expect.filter(|(t, started)| h.task_id != *t || h.started_ms != *started)
                {
                    return Err(WireError::Other {
                        path: path.display().to_string(),
                        found_run: h.run,
                        found_task: h.task_id,
                        found_started_ms: h.started_ms,
                        task: task_id.into(),
                        started_ms,
                    });
                }
                header = Some(h);
            }
            Some(_) => match serde_json::from_slice::<WireEntry>(line) {
                Ok(e) => entries.push(e),
                Err(e) => return Err(bad(format!("entry {}: {e}", entries.len()))),
            },
        }
    }
    let header = header.ok_or_else(|| bad("empty (no header line)".into()))?;
    Ok(WireLog { header, entries, truncated })
}

#[cfg(test)]
mod tests {
    use super::*;
    use proxy_report::wire::Answer;

    fn entry(n: u64, url: &str) -> WireEntry {
        WireEntry {
            n,
            method: "POST".into(),
            url: url.into(),
            request_headers: vec![("content-type".into(), "application/x-www-form-urlencoded".into())],
            request_body: Some("q=1".into()),
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
    fn round_trip_and_refusals() {
        let dir = tempfile::tempdir().unwrap();
        let w = WireWriter::create(dir.path(), "run-a", "t1", 1000).unwrap();
        w.append(&entry(0, "https://a.test/x")).unwrap();
        w.append(&entry(1, "https://a.test/y")).unwrap();
        w.finish().unwrap();
        let p = dir.path().join(WIRE_FILE);
        let log = read(&p, "t1", 1000).unwrap();
        assert_eq!(log.entries, vec![entry(0, "https://a.test/x"), entry(1, "https://a.test/y")]);
        assert_eq!(log.truncated, None);
        // Another task's, another run's: refused by name.
        for (task, started) in [("t2", 1000), ("t1", 2000)] {
            let e = read(&p, task, started).unwrap_err();
            assert!(matches!(e, WireError::Other { .. }), "{e}");
            assert!(e.to_string().contains("task t1 of run run-a"), "{e}");
        }
        // Not a wire log.
        std::fs::write(&p, b"hello").unwrap();
        assert!(matches!(read(&p, "t1", 1000), Err(WireError::Io { .. } | WireError::Bad { .. })));
    }

    #[test]
    fn a_log_cut_by_a_crash_gives_what_it_holds() {
        let dir = tempfile::tempdir().unwrap();
        let w = WireWriter::create(dir.path(), "r", "t", 5).unwrap();
        for i in 0..3 {
            w.append(&entry(i, &format!("https://a.test/{i}"))).unwrap();
        }
        // No finish: the frame never ends, as after a crash.
        let p = w.path().to_path_buf();
        std::mem::forget(w);
        let log = read(&p, "t", 5).unwrap();
        assert_eq!(log.entries.len(), 3);
        assert!(log.truncated.is_some());
        // Cut inside the last block too: the whole entries before it remain.
        let bytes = std::fs::read(&p).unwrap();
        std::fs::write(&p, &bytes[..bytes.len() - 3]).unwrap();
        let log = read(&p, "t", 5).unwrap();
        assert!(log.entries.len() < 3 && log.truncated.is_some(), "{log:?}");
    }
}
