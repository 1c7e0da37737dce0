//! What can go wrong in the browser, and the bound every CDP call gets (the page timeout).

use std::time::Duration;

/// The command that installs the browser on Debian/Ubuntu (what a missing browser's error says to run).
pub const INSTALL_HINT: &str = "apt-get install -y chromium";

/// Browser failures.
#[derive(Debug, thiserror::Error)]
pub enum BrowserError {
    /// No browser binary.
    #[error("no Chromium found (looked for {looked}); install it with `{INSTALL_HINT}` or name one with --chrome PATH")]
    NotFound {
        /// Where we looked.
        looked: String,
    },
    /// The browser did not start.
    #[error("cannot start Chromium {path}: {detail}")]
    Launch {
        /// Binary.
        path: String,
        /// Why.
        detail: String,
    },
    /// A CDP call failed; the browser is still reachable (a node gone, a script that threw, a bad
    /// parameter).
    #[error("browser: {0}")]
    Cdp(String),
    /// The DevTools connection to the browser is gone (it exited, or closed the socket): nothing more can
    /// be done in this browser.
    #[error("browser connection lost: {0}")]
    Disconnected(String),
    /// The action cannot apply to this page (goes back to the model).
    #[error("{0}")]
    Action(String),
    /// A call took longer than the page timeout.
    #[error("{what} did not finish within {secs:.0}s")]
    Timeout {
        /// What was waited for.
        what: &'static str,
        /// The limit.
        secs: f64,
    },
    /// The page's renderer crashed.
    #[error("the page crashed (renderer gone)")]
    Crashed,
    /// The task's set-up (storage state, geolocation) could not be applied.
    #[error("task set-up: {0}")]
    Setup(String),
}

impl BrowserError {
    /// True when the browser or the page is gone and the task cannot go on.
    pub fn is_fatal(&self) -> bool {
        matches!(
            self,
            BrowserError::Crashed
                | BrowserError::Disconnected(_)
                | BrowserError::Launch { .. }
                | BrowserError::NotFound { .. }
        )
    }

    /// True when a call failed because the page navigated under it: the JavaScript context it ran in is
    /// gone (CDP's "Cannot find context with specified id", "Execution context was destroyed"). Looking
    /// again, once the page has settled, sees the new page.
    pub fn is_context_lost(&self) -> bool {
        match self {
            BrowserError::Cdp(m) => {
                m.contains("Cannot find context with specified id")
                    || m.contains("Execution context was destroyed")
            }
            _ => false,
        }
    }
}

/// Whether chromiumoxide's error says the DevTools link itself is gone (its socket, its channel, or no
/// answer at all), rather than that one call failed.
fn link_lost(e: &chromiumoxide::error::CdpError) -> bool {
    use chromiumoxide::error::CdpError;
    matches!(e, CdpError::Ws(_) | CdpError::Io(_) | CdpError::ChannelSendError(_) | CdpError::NoResponse)
}

/// A failed browser call as a [`BrowserError`]: [`BrowserError::Disconnected`] when it is chromiumoxide's
/// error for a lost link, else [`BrowserError::Cdp`] (also for the other errors of a call: JSON that does
/// not decode, a builder's missing field).
pub(super) fn cdp<E: std::fmt::Display + 'static>(e: E) -> BrowserError {
    let any: &dyn std::any::Any = &e;
    match any.downcast_ref::<chromiumoxide::error::CdpError>() {
        Some(c) if link_lost(c) => BrowserError::Disconnected(e.to_string()),
        _ => BrowserError::Cdp(e.to_string()),
    }
}

pub(super) async fn bounded<T, E: std::fmt::Display + 'static>(
    limit: Duration,
    what: &'static str,
    fut: impl std::future::Future<Output = Result<T, E>>,
) -> Result<T, BrowserError> {
    match tokio::time::timeout(limit, fut).await {
        Ok(r) => r.map_err(cdp),
        Err(_) => Err(BrowserError::Timeout { what, secs: limit.as_secs_f64() }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_lost_devtools_link_is_fatal_and_a_failed_call_is_not() {
        use chromiumoxide::error::CdpError;
        let reset = || std::io::Error::new(std::io::ErrorKind::ConnectionReset, "reset by peer");
        let cases: Vec<(BrowserError, bool)> = vec![
            (cdp(CdpError::NoResponse), true),
            (cdp(CdpError::Io(reset())), true),
            (cdp(CdpError::Timeout), false),
            (cdp(CdpError::NotFound), false),
            (cdp(CdpError::msg("No node with given id found")), false),
            // A message that merely mentions a connection is not a lost link (the old substring rule
            // called this fatal).
            (cdp(CdpError::msg("net::ERR_CONNECTION_REFUSED")), false),
            // Not chromiumoxide's error at all.
            (cdp("connection closed"), false),
            (cdp(reset()), false),
            (BrowserError::Crashed, true),
            (BrowserError::Action("no element".into()), false),
        ];
        for (i, (e, fatal)) in cases.into_iter().enumerate() {
            assert_eq!(e.is_fatal(), fatal, "case {i}: {e}");
        }
    }

    #[test]
    fn a_page_that_navigated_under_a_call_is_told_apart() {
        use chromiumoxide::error::CdpError;
        // (error, the page navigated under it)
        let cases: Vec<(BrowserError, bool)> = vec![
            (cdp(CdpError::msg("Error -32000: Cannot find context with specified id")), true),
            (
                cdp(CdpError::msg("Execution context was destroyed, most likely because of a navigation")),
                true,
            ),
            (cdp(CdpError::msg("No node with given id found")), false),
            (cdp(CdpError::NoResponse), false),
            (BrowserError::Action("Cannot find context with specified id".into()), false),
        ];
        for (i, (e, lost)) in cases.into_iter().enumerate() {
            assert_eq!(e.is_context_lost(), lost, "case {i}: {e}");
        }
    }
}
