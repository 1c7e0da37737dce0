//! The single-writer lock: a writable open takes an exclusive lock on `webfreeze.lock` in the store
//! directory and writes its pid and command line there, so a second writer is told who holds it.

use std::fs::{File, OpenOptions};
use std::io::{Read, Seek, Write};
use std::path::Path;

use crate::StoreError;

const LOCK_FILE: &str = "webfreeze.lock";

pub(super) fn take_lock(dir: &Path) -> Result<File, StoreError> {
    let lock_path = dir.join(LOCK_FILE);
    let mut f = OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(&lock_path)
        .map_err(|e| StoreError::io(format!("cannot open lock file {}", lock_path.display()), e))?;
    match f.try_lock() {
        Ok(()) => {
            let cmd: Vec<String> = std::env::args().collect();
            let me = format!("pid {}: {}", std::process::id(), cmd.join(" "));
            // Best effort: the lock itself is what matters; the text only names the holder.
            let _ = f.set_len(0);
            let _ = f.rewind();
            let _ = f.write_all(me.as_bytes());
            let _ = f.flush();
            Ok(f)
        }
        Err(std::fs::TryLockError::WouldBlock) => {
            let mut holder = String::new();
            let _ = f.read_to_string(&mut holder);
            if holder.trim().is_empty() {
                holder = "unknown process".into();
            }
            Err(StoreError::Locked {
                path: dir.to_path_buf(),
                holder: holder.trim().to_string(),
                lock: lock_path,
            })
        }
        Err(std::fs::TryLockError::Error(e)) => {
            Err(StoreError::io(format!("cannot lock {}", lock_path.display()), e))
        }
    }
}
