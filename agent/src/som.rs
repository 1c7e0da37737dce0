//! Set-of-Marks: our own labelling script. It numbers the interactive elements visible in the viewport
//! (links, buttons, inputs, selects, textareas, elements with click roles), draws a box and the number at
//! each one's top left, tags each element with `data-wf-mark="n"` so actions can find it, and returns the
//! element list. [`UNMARK_JS`] removes the drawing (the tags stay until the next observation).
//!
//! Colours come from a fixed palette indexed by the label, so the same page gives the same pixels: a
//! replayed trajectory can be compared screenshot hash for screenshot hash. The text caret is hidden while
//! labels are shown for the same reason (its blink phase would otherwise leak into the screenshot).

use serde::{Deserialize, Serialize};

/// One labelled element.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Mark {
    /// Label number.
    pub n: u32,
    /// Lower-case tag name.
    pub tag: String,
    /// `type` attribute of inputs and buttons ("" when absent).
    #[serde(default)]
    pub input_type: String,
    /// Visible text, else value / placeholder / title (whitespace collapsed, at most 100 chars).
    #[serde(default)]
    pub text: String,
    /// `aria-label` ("" when absent).
    #[serde(default)]
    pub aria: String,
}

impl Mark {
    /// The element line shown to the model: `[n]: <tag> "text"`.
    pub fn line(&self) -> String {
        let tag = if self.input_type.is_empty() {
            format!("<{}>", self.tag)
        } else {
            format!("<{} type={}>", self.tag, self.input_type)
        };
        let text = if !self.text.is_empty() { self.text.as_str() } else { self.aria.as_str() };
        if text.is_empty() {
            format!("[{}]: {tag}", self.n)
        } else {
            format!("[{}]: {tag} \"{text}\"", self.n)
        }
    }
}

/// The element list as the model sees it, one line per label.
pub fn element_text(marks: &[Mark]) -> String {
    let mut s = String::new();
    for m in marks {
        s.push_str(&m.line());
        s.push('\n');
    }
    s
}

/// Draws the labels; evaluates to a JSON array of [`Mark`].
pub const MARK_JS: &str = r#"(() => {
  for (const e of document.querySelectorAll('[data-wf-mark]')) e.removeAttribute('data-wf-mark');
  const old = document.getElementById('__webfreeze_som'); if (old) old.remove();
  const palette = ['#d7263d','#1b998b','#2e86ab','#f46036','#6a4c93','#c5283d','#3a7d44','#b5651d'];
  const sel = 'a[href],button,input:not([type=hidden]),select,textarea,summary,[role=button],[role=link],' +
    '[role=checkbox],[role=radio],[role=tab],[role=menuitem],[role=option],[role=switch],[role=combobox],' +
    '[role=searchbox],[role=textbox],[onclick],[contenteditable=""],[contenteditable=true]';
  const vw = window.innerWidth, vh = window.innerHeight;
  const layer = document.createElement('div');
  layer.id = '__webfreeze_som';
  layer.setAttribute('style', 'position:fixed;left:0;top:0;width:0;height:0;z-index:2147483647;pointer-events:none');
  const style = document.createElement('style');
  style.textContent = '*{caret-color:transparent!important}';
  layer.appendChild(style);
  const out = [];
  const clean = s => (s || '').replace(/\s+/g, ' ').trim().slice(0, 100);
  for (const el of document.querySelectorAll(sel)) {
    if (el.disabled) continue;
    const r = el.getBoundingClientRect();
    if (r.width < 2 || r.height < 2) continue;
    if (r.bottom <= 0 || r.right <= 0 || r.top >= vh || r.left >= vw) continue;
    const cs = getComputedStyle(el);
    if (cs.visibility === 'hidden' || cs.display === 'none' || cs.opacity === '0') continue;
    const cx = Math.min(Math.max(r.left + r.width / 2, 0), vw - 1);
    const cy = Math.min(Math.max(r.top + r.height / 2, 0), vh - 1);
    const top = document.elementFromPoint(cx, cy);
    if (top && !(top === el || el.contains(top) || top.contains(el))) continue;
    const n = out.length;
    el.setAttribute('data-wf-mark', String(n));
    const color = palette[n % palette.length];
    const box = document.createElement('div');
    box.setAttribute('style', `position:fixed;left:${r.left}px;top:${r.top}px;width:${r.width}px;height:${r.height}px;` +
      `outline:2px dashed ${color};box-sizing:border-box;pointer-events:none`);
    const tag = document.createElement('span');
    tag.textContent = String(n);
    tag.setAttribute('style', `position:absolute;left:-2px;top:-16px;background:${color};color:#fff;` +
      'font:bold 12px/14px monospace;padding:0 2px;pointer-events:none');
    box.appendChild(tag);
    layer.appendChild(box);
    const t = el.getAttribute('type');
    const text = clean(el.innerText) || clean(el.value) || clean(el.getAttribute('placeholder')) || clean(el.getAttribute('title'));
    out.push({ n, tag: el.tagName.toLowerCase(), input_type: t ? t.toLowerCase() : '', text, aria: clean(el.getAttribute('aria-label')) });
  }
  document.documentElement.appendChild(layer);
  return JSON.stringify(out);
})()"#;

/// The caret-hiding part of [`MARK_JS`] alone (for observations without labels); [`UNMARK_JS`] undoes it.
pub const CARET_OFF_JS: &str = r#"(() => {
  const old = document.getElementById('__webfreeze_som'); if (old) old.remove();
  const layer = document.createElement('div');
  layer.id = '__webfreeze_som';
  layer.setAttribute('style', 'position:fixed;left:0;top:0;width:0;height:0;pointer-events:none');
  const style = document.createElement('style');
  style.textContent = '*{caret-color:transparent!important}';
  layer.appendChild(style);
  document.documentElement.appendChild(layer);
  return true;
})()"#;

/// Removes the drawing.
pub const UNMARK_JS: &str =
    "(() => { const l = document.getElementById('__webfreeze_som'); if (l) l.remove(); return true; })()";

/// Installed on every new document: links and `window.open` stay in the same tab, since the agent
/// watches one tab.
pub const SAME_TAB_JS: &str = r#"(() => {
  const retarget = ev => {
    const a = ev.target && ev.target.closest ? ev.target.closest('a[target],form[target]') : null;
    if (a) a.setAttribute('target', '_self');
  };
  document.addEventListener('click', retarget, true);
  document.addEventListener('submit', retarget, true);
  window.open = function (url) { if (url) { window.location.href = url; } return window; };
})();"#;

/// Installed on every new document when the agent has real tabs (WebArena): a link or `window.open`
/// that would open a tab asks the agent to open it instead (the URL is queued in the page and read after
/// the action), so the new tab gets the same page scripts (the determinism shim) before its first
/// document, which a tab Chromium opened by itself would not. Forms still submit in the same tab.
pub const NEW_TAB_JS: &str = r#"(() => {
  const queue = u => {
    try { (window.__webfreeze_opened = window.__webfreeze_opened || []).push(new URL(u, location.href).href); } catch (e) {}
  };
  document.addEventListener('click', ev => {
    const a = ev.target && ev.target.closest ? ev.target.closest('a[href]') : null;
    const t = a ? (a.getAttribute('target') || '').toLowerCase() : '';
    if (!a || ev.defaultPrevented || !t || t === '_self' || t === '_top' || t === '_parent') return;
    ev.preventDefault();
    queue(a.href);
  });
  document.addEventListener('submit', ev => {
    const f = ev.target && ev.target.closest ? ev.target.closest('form[target]') : null;
    if (f) f.setAttribute('target', '_self');
  }, true);
  window.open = function (url) { if (url) { queue(url); } return null; };
})();"#;

/// Takes the URLs [`NEW_TAB_JS`] queued (evaluates to a JSON array).
pub const TAKE_OPENED_JS: &str =
    "(() => { const o = window.__webfreeze_opened || []; window.__webfreeze_opened = []; return JSON.stringify(o); })()";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn element_lines() {
        let cases = [
            (
                Mark { n: 0, tag: "a".into(), input_type: "".into(), text: "Home".into(), aria: "".into() },
                "[0]: <a> \"Home\"",
            ),
            (
                Mark {
                    n: 3,
                    tag: "input".into(),
                    input_type: "search".into(),
                    text: "".into(),
                    aria: "Search".into(),
                },
                "[3]: <input type=search> \"Search\"",
            ),
            (
                Mark { n: 7, tag: "button".into(), input_type: "".into(), text: "".into(), aria: "".into() },
                "[7]: <button>",
            ),
        ];
        for (m, want) in cases {
            assert_eq!(m.line(), want);
        }
    }
}
