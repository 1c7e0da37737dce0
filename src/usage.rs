//! The binary's usage error: what `main` turns into exit code 2 and a one-line message. Its own room,
//! so the commands that raise it depend on it and not on `main`.

/// A usage error found after parsing (exit code 2).
#[derive(Debug)]
pub(crate) struct UsageError(pub String);

impl std::fmt::Display for UsageError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for UsageError {}
