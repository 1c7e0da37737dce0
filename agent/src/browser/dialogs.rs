//! A page's JavaScript dialogs, answered as soon as they open: a dialog blocks its page (no script runs,
//! no navigation ends) until someone answers it, and the agent reads pages, not dialogs. Before this, a
//! page that asked "Leave site?" (MediaWiki's edit warning, after a preview) held the agent's next
//! navigation for the whole page timeout, live and recording alike, and the task ran out of time.
//!
//! The answers are Playwright's defaults (what WebArena's and BrowserGym's agents meet), except on
//! leaving: a `beforeunload` dialog is accepted, since the agent chose to leave the page; an `alert` is
//! accepted (its one button); a `confirm` or a `prompt` is dismissed, so a site's "Delete this?" is not
//! agreed to on the agent's behalf.

use chromiumoxide::cdp::browser_protocol::page::{
    DialogType, EventJavascriptDialogOpening, HandleJavaScriptDialogParams,
};
use chromiumoxide::page::Page;

/// Whether a dialog of type `t` is accepted (see the module docs).
pub(super) fn accepts(t: &DialogType) -> bool {
    matches!(t, DialogType::Beforeunload | DialogType::Alert)
}

/// Answer dialog `e` on `page`, without waiting for the answer.
pub(super) fn answer(page: &Page, e: &EventJavascriptDialogOpening) {
    let accept = accepts(&e.r#type);
    tracing::debug!(
        "dialog {:?} on {}: {:?}, {}",
        e.r#type,
        e.url,
        e.message,
        if accept { "accepted" } else { "dismissed" }
    );
    let page = page.clone();
    tokio::spawn(async move {
        if let Err(err) = page.execute(HandleJavaScriptDialogParams::new(accept)).await {
            tracing::debug!("answering a dialog: {err}");
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn leaving_and_alerts_are_accepted_questions_dismissed() {
        for (t, want) in [
            (DialogType::Beforeunload, true),
            (DialogType::Alert, true),
            (DialogType::Confirm, false),
            (DialogType::Prompt, false),
        ] {
            assert_eq!(accepts(&t), want, "{t:?}");
        }
    }
}
