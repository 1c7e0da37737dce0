//! The label of the control a WebArena action uses, told to the task's proxy for the side-effect guard the
//! way a WebVoyager click tells it (and a WebVoyager `Type`, whose Enter submits a form, tells its
//! [`SUBMIT_LABEL_JS`] too) (`Session::set_control_label`, through the proxy's control endpoint):
//! for `click [id]`, the clicked control's text, value or aria-label; for `type [id] [text] [1]`, the
//! button Enter submits the field's form with (its default button: the form's first submit button, as
//! the browser's implicit submission picks it). The label is told just before the click or the Enter and
//! withdrawn once the page settled, so only the requests that action causes are judged with it; typing
//! itself (an autocomplete's requests) carries none. A field outside a form, or a form without a submit
//! button, tells nothing: what Enter does there is the page's script's, and no control says.

use super::super::Session;

/// How the action uses its element.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Use {
    /// Clicked: the label of the control the element is (or is in).
    Click,
    /// Typed into, then Enter: the label of the button that submits its form.
    Submit,
}

/// The clicked control's label (a text node's element's, as the accessibility tree may point at text).
const CLICK_LABEL_JS: &str = "function() {
  const el = this.nodeType === 1 ? this : this.parentElement;
  if (!el) return '';
  const c = el.closest('button,a,input,[role=button],summary') || el;
  const l = c.getAttribute('aria-label') || (c.tagName === 'INPUT' ? (c.value || c.alt || '') : '') || c.innerText || '';
  return l.replace(/\\s+/g, ' ').trim().replace(/[^\\x20-\\x7e]/g, '').slice(0, 100);
}";

/// The label of the button Enter in this field submits its form with ('' when none).
pub(in crate::browser) const SUBMIT_LABEL_JS: &str = "function() {
  const el = this.nodeType === 1 ? this : this.parentElement;
  if (!el) return '';
  const f = el.form || el.closest('form');
  if (!f) return '';
  const b = Array.from(f.elements).find((e) =>
    (e.tagName === 'BUTTON' && e.type === 'submit') || (e.tagName === 'INPUT' && /^(submit|image)$/i.test(e.type)));
  if (!b) return '';
  const l = b.getAttribute('aria-label') || (b.tagName === 'INPUT' ? (b.value || b.alt || '') : b.innerText) || '';
  return l.replace(/\\s+/g, ' ').trim().replace(/[^\\x20-\\x7e]/g, '').slice(0, 100);
}";

impl Session {
    /// Tell the proxy the label of the control element `id` of the latest observation is used as; true
    /// when one was told (withdraw it with `set_control_label(None)` once the action's requests are over).
    pub(super) async fn tell_control(&self, id: u32, how: Use) -> bool {
        let js = match how {
            Use::Click => CLICK_LABEL_JS,
            Use::Submit => SUBMIT_LABEL_JS,
        };
        // Best effort: an element that cannot be read tells nothing (the action itself then says why).
        let label = match self.element(id).await {
            Ok((page, obj)) => self.call_on(&page, &obj, js).await.ok(),
            Err(_) => None,
        };
        let label: Option<String> =
            label.and_then(|v| v.as_str().map(str::to_string)).filter(|l| !l.is_empty());
        match label {
            Some(l) => {
                self.set_control_label(Some(&l)).await;
                true
            }
            None => false,
        }
    }
}
