//! WebArena's actions on a [`Session`]: elements are found by the latest observation's ids (a
//! Set-of-Marks label, or an accessibility-tree id's DOM node), clicked and hovered with the mouse at
//! their centre as WebArena does (scrolled into view first), typed into with key events; tabs are real.
//! A click and a Type+Enter tell the side-effect guard the label of the control they use ([`label`]).

pub(super) mod label;

use chromiumoxide::cdp::browser_protocol::input::{
    DispatchKeyEventParams, DispatchKeyEventType, InsertTextParams,
};
use chromiumoxide::layout::Point;
use chromiumoxide::page::Page;
use serde_json::json;

use super::{bounded, BrowserError, Session, Targets};
use crate::action::WebArenaAction;
use crate::som;

/// Returns the element's centre in the viewport after scrolling it into view when it is not fully in
/// it; null when it has no box. Text nodes (accessibility-tree `StaticText`) are measured by a range.
const CENTRE_JS: &str = "function() {
  const el = this.nodeType === 1 ? this : this.parentElement;
  if (!el) return null;
  const rect = () => { if (this.nodeType === 3) { const r = document.createRange(); r.selectNodeContents(this); return r.getBoundingClientRect(); } return el.getBoundingClientRect(); };
  let r = rect();
  if (r.top < 0 || r.left < 0 || r.bottom > window.innerHeight || r.right > window.innerWidth) {
    el.scrollIntoView({block: 'center', inline: 'center'});
    r = rect();
  }
  if (r.width === 0 && r.height === 0) return null;
  return [r.left + r.width / 2, r.top + r.height / 2];
}";

/// Empties a text field or an editable element and focuses it; returns the tag of anything else.
const CLEAR_JS: &str = "function() {
  const el = this.nodeType === 1 ? this : this.parentElement;
  const tag = el.tagName.toLowerCase();
  const text = tag === 'textarea' || (tag === 'input' && !/^(button|submit|reset|checkbox|radio|file|image|hidden|range|color)$/i.test(el.type));
  if (!text && !el.isContentEditable) return tag;
  el.focus();
  if (text) { el.value = ''; } else { el.textContent = ''; }
  el.dispatchEvent(new Event('input', {bubbles: true}));
  el.dispatchEvent(new Event('change', {bubbles: true}));
  return '';
}";

/// CDP modifier bits.
const MODIFIERS: &[(&str, &str, i64)] = &[
    ("alt", "Alt", 1),
    ("option", "Alt", 1),
    ("control", "Control", 2),
    ("ctrl", "Control", 2),
    ("meta", "Meta", 4),
    ("command", "Meta", 4),
    ("cmd", "Meta", 4),
    ("shift", "Shift", 8),
];

impl Session {
    /// Carry out a WebArena action (not `stop`, which ends the task), open the tabs it asked for, and
    /// let the page settle.
    pub async fn perform_webarena(&self, action: &WebArenaAction) -> Result<(), BrowserError> {
        self.begin_action();
        let t = self.opts.page_timeout;
        // A click, and an Enter that submits a form, tell the guard their control's label until the page
        // settled.
        let mut labelled = false;
        match action {
            WebArenaAction::Click(id) => {
                let p = self.centre(*id).await?;
                labelled = self.tell_control(*id, label::Use::Click).await;
                let page = self.page()?;
                let clicked = bounded(t, "the click", page.click(p)).await;
                if clicked.is_err() && labelled {
                    self.set_control_label(None).await;
                }
                clicked?;
            }
            WebArenaAction::Hover(id) => {
                let p = self.centre(*id).await?;
                bounded(t, "moving the mouse", self.page()?.move_mouse(p)).await?;
            }
            WebArenaAction::Type { id, text, enter } => {
                let p = self.centre(*id).await?;
                let page = self.page()?;
                bounded(t, "the click", page.click(p)).await?;
                self.type_text(&page, text).await?;
                if *enter {
                    labelled = self.tell_control(*id, label::Use::Submit).await;
                    let pressed = self.press(&page, "Enter").await;
                    if pressed.is_err() && labelled {
                        self.set_control_label(None).await;
                    }
                    pressed?;
                }
            }
            WebArenaAction::Press(keys) => {
                let page = self.page()?;
                self.press(&page, keys).await?;
            }
            WebArenaAction::Scroll { down } => {
                let sign = if *down { 1 } else { -1 };
                let js = format!(
                    "(() => {{ const e = document.scrollingElement || document.body; e.scrollTop = e.scrollTop + {sign} * window.innerHeight; return true; }})()"
                );
                let _: bool = self.eval(&js).await?;
            }
            WebArenaAction::NewTab => {
                self.open_tab("about:blank").await?;
            }
            WebArenaAction::TabFocus(n) => self.focus_tab(*n as usize).await?,
            WebArenaAction::CloseTab => self.close_tab().await?,
            WebArenaAction::Goto(url) => return self.goto(url).await,
            WebArenaAction::GoBack => {
                let _: bool = self.eval("history.back(); true").await?;
            }
            WebArenaAction::GoForward => {
                let _: bool = self.eval("history.forward(); true").await?;
            }
            WebArenaAction::Clear(id) => {
                let (page, obj) = self.element(*id).await?;
                let r = self.call_on(&page, &obj, CLEAR_JS).await?;
                if let Some(tag) = r.as_str().filter(|s| !s.is_empty()) {
                    return Err(BrowserError::Action(format!(
                        "element [{id}] is a <{tag}>, not a text field: clear needs an input, a textarea or an editable element"
                    )));
                }
            }
            WebArenaAction::Upload { id, file } => {
                let path = std::path::Path::new(file);
                let abs = std::fs::canonicalize(path)
                    .map_err(|e| BrowserError::Action(format!("cannot upload {file}: {e}")))?;
                let (page, obj) = self.element(*id).await?;
                let params = json!({"files": [abs.display().to_string()], "objectId": obj});
                self.raw(&page, "setting the file", "DOM.setFileInputFiles", params)
                    .await
                    .map_err(|e| BrowserError::Action(format!("element [{id}] does not take a file: {e}")))?;
            }
            WebArenaAction::Stop(_) => {}
        }
        self.settle(true).await;
        if labelled {
            self.set_control_label(None).await;
        }
        self.open_requested_tabs().await
    }

    /// Opens, in new tabs, what the page asked to open in one (links with a target, `window.open`); the
    /// last one opened becomes the active tab, as a user would see it.
    async fn open_requested_tabs(&self) -> Result<(), BrowserError> {
        let Ok(json) = self.eval::<String>(som::TAKE_OPENED_JS).await else { return Ok(()) };
        let urls: Vec<String> = serde_json::from_str(&json).unwrap_or_default();
        for u in urls {
            self.open_tab(&u).await?;
        }
        Ok(())
    }

    /// The page and a remote object id for element `id` of the latest observation.
    async fn element(&self, id: u32) -> Result<(Page, String), BrowserError> {
        let page = self.page()?;
        let targets = self.targets.lock().map(|t| t.clone()).unwrap_or_default();
        let gone = || {
            BrowserError::Action(format!(
                "there is no element [{id}] on this page; use an id from the latest observation"
            ))
        };
        let object = match targets {
            Targets::Marks => {
                let expr = format!("document.querySelector('[data-wf-mark=\"{id}\"]')");
                self.raw(&page, "finding the element", "Runtime.evaluate", json!({"expression": expr}))
                    .await?
                    .pointer("/result/objectId")
                    .and_then(|o| o.as_str())
                    .map(str::to_string)
            }
            Targets::Nodes(nodes) => {
                let backend = *nodes.get(&id).ok_or_else(gone)?;
                self.raw(&page, "finding the element", "DOM.resolveNode", json!({"backendNodeId": backend}))
                    .await
                    .ok()
                    .and_then(|r| r.pointer("/object/objectId").and_then(|o| o.as_str()).map(str::to_string))
            }
        };
        Ok((page, object.ok_or_else(gone)?))
    }

    async fn call_on(
        &self,
        page: &Page,
        object: &str,
        function: &str,
    ) -> Result<serde_json::Value, BrowserError> {
        let params = json!({"objectId": object, "functionDeclaration": function, "returnByValue": true});
        let r = self.raw(page, "a page script", "Runtime.callFunctionOn", params).await?;
        if let Some(e) = r.pointer("/exceptionDetails/exception/description").and_then(|d| d.as_str()) {
            return Err(BrowserError::Cdp(format!("page script threw: {e}")));
        }
        Ok(r.pointer("/result/value").cloned().unwrap_or(serde_json::Value::Null))
    }

    /// Element `id`'s centre, scrolled into view.
    async fn centre(&self, id: u32) -> Result<Point, BrowserError> {
        let (page, obj) = self.element(id).await?;
        let v = self.call_on(&page, &obj, CENTRE_JS).await?;
        match v.as_array().map(|a| a.iter().filter_map(|x| x.as_f64()).collect::<Vec<_>>()).as_deref() {
            Some([x, y]) => Ok(Point { x: *x, y: *y }),
            _ => Err(BrowserError::Action(format!(
                "element [{id}] is not visible (it has no box on the page)"
            ))),
        }
    }

    /// Types text into the focused element, a key event per character where the US layout has the key
    /// (so key handlers see it), inserted text otherwise; `\n` presses Enter.
    async fn type_text(&self, page: &Page, text: &str) -> Result<(), BrowserError> {
        let t = self.opts.page_timeout;
        for c in text.chars() {
            let s = if c == '\n' { "Enter".to_string() } else { c.to_string() };
            match chromiumoxide::keys::get_key_definition(&s) {
                Some(def) => self.key(page, def, 0).await?,
                None => {
                    bounded(t, "typing", page.execute(InsertTextParams::new(s))).await?;
                }
            }
        }
        Ok(())
    }

    /// Presses a key combination, Playwright's way of naming it: `Enter`, `Control+Enter`, `Meta+a`,
    /// `Shift+ArrowDown`. Modifiers go down in order and up in reverse.
    async fn press(&self, page: &Page, combo: &str) -> Result<(), BrowserError> {
        let parts: Vec<&str> = if combo.len() > 1 && combo.ends_with("++") {
            let mut p: Vec<&str> = combo[..combo.len() - 2].split('+').collect();
            p.push("+");
            p
        } else {
            combo.split('+').map(str::trim).collect()
        };
        let (key, mods) =
            parts.split_last().ok_or_else(|| BrowserError::Action("press needs a key".into()))?;
        let mut held = Vec::new();
        let mut bits = 0i64;
        for m in mods {
            let (_, name, bit) =
                MODIFIERS.iter().find(|(n, _, _)| n.eq_ignore_ascii_case(m)).ok_or_else(|| {
                    BrowserError::Action(format!(
                        "unknown modifier {m:?} in {combo:?}: use Control, Shift, Alt or Meta"
                    ))
                })?;
            held.push(*name);
            bits |= bit;
            self.key_event(page, name, DispatchKeyEventType::RawKeyDown, bits).await?;
        }
        let def = key_definition(key).ok_or_else(|| {
            BrowserError::Action(format!(
                "unknown key {key:?} in {combo:?}: use names like Enter, Tab, ArrowDown, PageDown, a"
            ))
        })?;
        self.key(page, def, bits).await?;
        for name in held.iter().rev() {
            let bit = MODIFIERS.iter().find(|(_, n, _)| n == name).map_or(0, |m| m.2);
            bits &= !bit;
            self.key_event(page, name, DispatchKeyEventType::KeyUp, bits).await?;
        }
        Ok(())
    }

    /// Presses and releases one key with the modifiers in `bits` held.
    async fn key(
        &self,
        page: &Page,
        def: &chromiumoxide::keys::KeyDefinition,
        bits: i64,
    ) -> Result<(), BrowserError> {
        let t = self.opts.page_timeout;
        // Text goes in only without Control/Alt/Meta (which make it a shortcut).
        let text =
            if bits & 7 == 0 { def.text.or((def.key.chars().count() == 1).then_some(def.key)) } else { None };
        let down =
            if text.is_some() { DispatchKeyEventType::KeyDown } else { DispatchKeyEventType::RawKeyDown };
        let mut b = DispatchKeyEventParams::builder()
            .key(def.key)
            .code(def.code)
            .windows_virtual_key_code(def.key_code)
            .native_virtual_key_code(def.key_code)
            .modifiers(bits);
        if let Some(txt) = text {
            b = b.text(txt);
        }
        let ev = |ty| b.clone().r#type(ty).build().map_err(BrowserError::Cdp);
        bounded(t, "pressing a key", page.execute(ev(down)?)).await?;
        bounded(t, "releasing a key", page.execute(ev(DispatchKeyEventType::KeyUp)?)).await?;
        Ok(())
    }

    async fn key_event(
        &self,
        page: &Page,
        key: &str,
        ty: DispatchKeyEventType,
        bits: i64,
    ) -> Result<(), BrowserError> {
        let def = key_definition(key).ok_or_else(|| BrowserError::Action(format!("unknown key {key:?}")))?;
        let ev = DispatchKeyEventParams::builder()
            .r#type(ty)
            .key(def.key)
            .code(def.code)
            .windows_virtual_key_code(def.key_code)
            .native_virtual_key_code(def.key_code)
            .modifiers(bits)
            .build()
            .map_err(BrowserError::Cdp)?;
        bounded(self.opts.page_timeout, "a key event", page.execute(ev)).await?;
        Ok(())
    }
}

/// A key by Playwright's name, case-insensitively for named keys (`enter`, `pagedown`).
fn key_definition(key: &str) -> Option<&'static chromiumoxide::keys::KeyDefinition> {
    chromiumoxide::keys::get_key_definition(key).or_else(|| {
        if key.chars().count() == 1 {
            return None;
        }
        let aliases = [
            ("esc", "Escape"),
            ("return", "Enter"),
            ("del", "Delete"),
            ("space", " "),
            ("up", "ArrowUp"),
            ("down", "ArrowDown"),
            ("left", "ArrowLeft"),
            ("right", "ArrowRight"),
        ];
        if let Some((_, k)) = aliases.iter().find(|(a, _)| a.eq_ignore_ascii_case(key)) {
            return chromiumoxide::keys::get_key_definition(k);
        }
        [
            "Enter",
            "Tab",
            "Escape",
            "Backspace",
            "Delete",
            "ArrowUp",
            "ArrowDown",
            "ArrowLeft",
            "ArrowRight",
            "PageUp",
            "PageDown",
            "Home",
            "End",
            "Insert",
            "Control",
            "Shift",
            "Alt",
            "Meta",
        ]
        .iter()
        .find(|k| k.eq_ignore_ascii_case(key))
        .and_then(chromiumoxide::keys::get_key_definition)
    })
}

#[cfg(test)]
mod tests {
    use super::key_definition;

    #[test]
    fn key_names() {
        for (name, key) in [
            ("Enter", "Enter"),
            ("enter", "Enter"),
            ("PageDown", "PageDown"),
            ("pagedown", "PageDown"),
            ("a", "a"),
            ("A", "A"),
            ("Esc", "Escape"),
            ("Control", "Control"),
            ("ArrowDown", "ArrowDown"),
        ] {
            assert_eq!(key_definition(name).map(|d| d.key), Some(key), "{name}");
        }
        assert!(key_definition("Hyper").is_none());
    }
}
