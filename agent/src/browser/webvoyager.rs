//! WebVoyager's actions carried out in the page (click, type, scroll, wait, back, search), each followed
//! by the page settling; a click labels the requests it causes with its control's text for the
//! side-effect guard.

use super::{bounded, BrowserError, Session};
use crate::action::{ScrollTarget, WebVoyagerAction};

/// The request header that carried the label of the control a click used (older agents; the proxy still
/// reads it). This agent tells the proxy through [`CONTROL_PATH`] instead, so no request gets a header the
/// page did not send (which would make Chromium preflight a cross-origin request).
pub const CONTROL_HEADER: &str = "x-webfreeze-control";

/// The proxy endpoint the clicked control's label goes to (`proxy::guard::CONTROL_PATH`): `PUT` the label
/// before the click, `DELETE` after its requests.
pub const CONTROL_PATH: &str = "/__webfreeze/control";

/// Points a clicked element's link or form at this tab (a link that would open a new tab opens in this
/// one), and answers the visible label of its control (its text, value or aria-label), printable ASCII
/// (a header value), at most 100 characters.
const CONTROL_LABEL_JS: &str =
    "function() { const a = this.closest('a,form'); if (a) a.setAttribute('target', '_self'); \
     const c = this.closest('button,a,input,[role=button],summary') || this; \
     const l = (c.getAttribute('aria-label') || c.value || c.innerText || '').replace(/\\s+/g, ' ').trim(); \
     return l.replace(/[^\\x20-\\x7e]/g, '').slice(0, 100); }";

impl Session {
    pub(super) async fn marked(&self, n: u32) -> Result<chromiumoxide::Element, BrowserError> {
        if self.crashed() {
            return Err(BrowserError::Crashed);
        }
        let sel = format!("[data-wf-mark=\"{n}\"]");
        let page = self.page()?;
        match bounded(self.opts.page_timeout, "finding the element", page.find_element(sel)).await {
            Ok(e) => Ok(e),
            Err(BrowserError::Cdp(_)) => Err(BrowserError::Action(format!(
                "there is no element labelled [{n}] on this page; use a label from the latest screenshot"
            ))),
            Err(e) => Err(e),
        }
    }

    /// Carry out an action (not `ANSWER`, which ends the task) and let the page settle.
    pub async fn perform(&self, action: &WebVoyagerAction) -> Result<(), BrowserError> {
        let t = self.opts.page_timeout;
        self.begin_action();
        // A click (or a Type's Enter) sends its control's label with the requests it causes, until the page
        // settles.
        let mut labelled = false;
        match action {
            WebVoyagerAction::Click(n) => {
                let el = self.marked(*n).await?;
                // Links that would open a new tab open in this one; the side-effect guard judges a write
                // also by the control that sent it (one call for both).
                let control =
                    bounded(t, "reading the control's label", el.call_js_fn(CONTROL_LABEL_JS, false))
                        .await
                        .ok()
                        .and_then(|r| r.result.value.and_then(|v| v.as_str().map(str::to_string)))
                        .filter(|l| !l.is_empty());
                if let Some(l) = &control {
                    self.set_control_label(Some(l)).await;
                    labelled = true;
                }
                let clicked = bounded(t, "the click", el.click()).await;
                if clicked.is_err() && labelled {
                    self.set_control_label(None).await;
                }
                clicked?;
            }
            WebVoyagerAction::Type { label, text } => {
                let el = self.marked(*label).await?;
                // Returns "" when the field was focused and cleared, else the tag of what it is instead.
                let cleared = bounded(
                    t,
                    "clearing the field",
                    el.call_js_fn(
                        "function() { const tag = this.tagName.toLowerCase(); \
                         const text = (tag === 'textarea') || (tag === 'input' && !/^(button|submit|reset|checkbox|radio|file|image|hidden|range|color)$/i.test(this.type)); \
                         if (!text && !this.isContentEditable) { return tag; } \
                         this.focus(); if (text) { this.value = ''; } else { this.textContent = ''; } return ''; }",
                        false,
                    ),
                )
                .await?;
                let not_text =
                    cleared.result.value.as_ref().and_then(|v| v.as_str()).unwrap_or("").to_string();
                if !not_text.is_empty() {
                    return Err(BrowserError::Action(format!(
                        "element [{label}] is a <{not_text}>, not a text field: Type needs an input, a textarea or an editable element"
                    )));
                }
                bounded(t, "typing", el.type_str(text)).await?;
                // Enter submits the field's form with its default button: its label goes with the
                // requests Enter causes, as a click's does (typing itself carries none).
                let submit = bounded(
                    t,
                    "reading the form's button",
                    el.call_js_fn(super::webarena::label::SUBMIT_LABEL_JS, false),
                )
                .await
                .ok()
                .and_then(|r| r.result.value.and_then(|v| v.as_str().map(str::to_string)))
                .filter(|l| !l.is_empty());
                if let Some(l) = &submit {
                    self.set_control_label(Some(l)).await;
                    labelled = true;
                }
                let entered = bounded(t, "pressing Enter", el.press_key("Enter")).await;
                if entered.is_err() && labelled {
                    self.set_control_label(None).await;
                }
                entered?;
            }
            WebVoyagerAction::Scroll { target, down } => {
                let sign = if *down { 1 } else { -1 };
                match target {
                    ScrollTarget::Window => {
                        let js = format!(
                            "window.scrollBy(0, {sign} * Math.round(window.innerHeight * 2 / 3)); true"
                        );
                        let _: bool = self.eval(&js).await?;
                    }
                    ScrollTarget::Element(n) => {
                        let el = self.marked(*n).await?;
                        let js = format!(
                            "function() {{ this.scrollBy(0, {sign} * Math.max(50, Math.round(this.clientHeight * 2 / 3))); }}"
                        );
                        bounded(t, "scrolling the element", el.call_js_fn(js, false)).await?;
                    }
                }
            }
            WebVoyagerAction::Wait => tokio::time::sleep(self.opts.wait).await,
            WebVoyagerAction::GoBack => {
                let _: bool = self.eval("history.back(); true").await?;
            }
            WebVoyagerAction::Google => {
                let url = self.opts.search_url.clone();
                return self.goto(&url).await;
            }
            WebVoyagerAction::Answer(_) => {}
        }
        self.settle(true).await;
        if labelled {
            self.set_control_label(None).await;
        }
        Ok(())
    }

    /// Tell the task's proxy the label of the control being clicked (None: the click is over), through
    /// [`CONTROL_PATH`]: the requests meanwhile are judged with it, and none carries a header for it.
    pub(super) async fn set_control_label(&self, label: Option<&str>) {
        let url = format!("http://{}{CONTROL_PATH}", self.opts.proxy);
        let client = &self.control_client;
        let req = match label {
            Some(l) => client.put(&url).body(l.to_string()),
            None => client.delete(&url),
        };
        match tokio::time::timeout(self.opts.page_timeout, req.send()).await {
            Ok(Ok(r)) if r.status().is_success() => {}
            Ok(Ok(r)) => tracing::debug!("control label: the proxy answered {}", r.status()),
            Ok(Err(e)) => tracing::debug!("control label: {e}"),
            Err(_) => tracing::debug!("control label: the proxy did not answer"),
        }
    }
}
