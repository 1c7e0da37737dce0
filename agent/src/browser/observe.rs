//! What the agent sees at a step: the Set-of-Marks labels, the screenshot, the element list or the
//! accessibility tree, the tabs.

use std::collections::BTreeMap;
use std::time::Instant;

use chromiumoxide::cdp::browser_protocol::page::CaptureScreenshotParams;
use chromiumoxide::page::Page;

use super::{bounded, cdp, BrowserError, ObservationKind, Session};
use crate::axtree;
use crate::som::{self, Mark};

/// What the element ids of the latest observation point at.
#[derive(Debug, Clone, Default)]
pub(super) enum Targets {
    /// Set-of-Marks labels (`data-wf-mark`).
    #[default]
    Marks,
    /// Accessibility-tree ids: id -> backend DOM node id.
    Nodes(BTreeMap<u32, i64>),
}

/// What the agent sees at one step.
#[derive(Debug, Clone)]
pub struct Observation {
    /// Current URL.
    pub url: String,
    /// PNG with the labels drawn.
    pub screenshot: Vec<u8>,
    /// Labelled elements (empty for an `axtree` observation).
    pub marks: Vec<Mark>,
    /// The text observation: the element list (`som`) or the accessibility tree.
    pub text: String,
    /// Every tab's title, in order, when the session has real tabs (the active one is
    /// [`Observation::active_tab`]).
    pub tabs: Vec<String>,
    /// Index of the tab observed.
    pub active_tab: usize,
    /// Time to label, screenshot and unlabel.
    pub ms: u64,
    /// Set when the page had not settled within the page timeout (the observation is of what was there):
    /// the requests still in flight.
    pub unsettled: Option<Vec<String>>,
}

impl Session {
    /// Observe the active tab: with labels, label, screenshot, list, unlabel (the `data-wf-mark` tags
    /// stay for the actions); with the accessibility tree, read it and keep its ids for the actions.
    pub async fn observe(&self) -> Result<Observation, BrowserError> {
        // A page that navigates while it is being observed (a late redirect, a script's location change)
        // takes the observation's JavaScript context with it: settle and look again, twice at most.
        let mut tries = 0;
        loop {
            match self.observe_once().await {
                Err(e) if e.is_context_lost() && tries < 2 => tries += 1,
                r => return r,
            }
        }
    }

    async fn observe_once(&self) -> Result<Observation, BrowserError> {
        let unsettled = (!self.settle(false).await).then(|| self.pending());
        let t0 = Instant::now();
        let url = self.url().await?;
        let page = self.page()?;
        let kind = self.opts.observation;
        let marks: Vec<Mark> = if kind == ObservationKind::AxTree {
            // No labels, but the caret is hidden all the same (its blink would reach the screenshot).
            let _: bool = self.eval(som::CARET_OFF_JS).await?;
            Vec::new()
        } else {
            let json: String = self.eval(som::MARK_JS).await?;
            serde_json::from_str(&json).map_err(cdp)?
        };
        let shot = self.capture(&page).await;
        let _: Result<bool, _> = self.eval(som::UNMARK_JS).await;
        let screenshot = shot?;
        let (text, targets) = match kind {
            ObservationKind::Som => (som::element_text(&marks), Targets::Marks),
            ObservationKind::AxTree => {
                let tree = self.accessibility_tree(false).await?;
                (tree.text, Targets::Nodes(tree.nodes))
            }
            ObservationKind::SomAxTree => (self.accessibility_tree(true).await?.text, Targets::Marks),
        };
        if let Ok(mut t) = self.targets.lock() {
            *t = targets;
        }
        let (tabs, active_tab) = if self.opts.real_tabs { self.tab_titles().await } else { (Vec::new(), 0) };
        Ok(Observation {
            url,
            screenshot,
            marks,
            text,
            tabs,
            active_tab,
            ms: t0.elapsed().as_millis() as u64,
            unsettled,
        })
    }

    /// A PNG of the tab's viewport. `Page.captureScreenshot` itself: chromiumoxide's `Page::screenshot`
    /// first activates the target, a round trip an observation of the active tab does not need.
    async fn capture(&self, page: &Page) -> Result<Vec<u8>, BrowserError> {
        use base64::Engine as _;
        let shot = bounded(
            self.opts.page_timeout,
            "the screenshot",
            page.execute(CaptureScreenshotParams::default()),
        )
        .await?;
        base64::engine::general_purpose::STANDARD.decode(shot.result.data.as_ref() as &str).map_err(cdp)
    }

    /// The active tab's accessibility tree in WebArena's text form, the viewport's part of it; `marks`:
    /// ids are the Set-of-Marks labels of the latest labelling.
    pub async fn accessibility_tree(&self, marks: bool) -> Result<axtree::AxTree, BrowserError> {
        let page = self.page()?;
        let tree = self
            .raw(
                &page,
                "reading the accessibility tree",
                "Accessibility.getFullAXTree",
                serde_json::json!({}),
            )
            .await?;
        let snap = self
            .raw(
                &page,
                "reading the layout",
                "DOMSnapshot.captureSnapshot",
                serde_json::json!({"computedStyles": []}),
            )
            .await?;
        let viewport: Vec<f64> =
            self.eval("[window.scrollX, window.scrollY, window.innerWidth, window.innerHeight]").await?;
        let (mut boxes, attrs) = axtree::snapshot_tables(&snap, "data-wf-mark");
        let labels: std::collections::HashMap<i64, u32> =
            attrs.into_iter().filter_map(|(b, v)| Some((b, v.parse().ok()?))).collect();
        let nodes = tree.get("nodes").and_then(|n| n.as_array()).cloned().unwrap_or_default();
        // A node the layout snapshot has no box for (a textarea's text, ...): its box the way WebArena
        // measures every node, one call each, only for the nodes that would be printed.
        let (sx, sy) = (viewport.first().copied().unwrap_or(0.0), viewport.get(1).copied().unwrap_or(0.0));
        for b in axtree::unmeasured(&nodes, &boxes) {
            if let Some([x, y, w, h]) = self.client_rect(&page, b).await {
                boxes.insert(b, [x + sx, y + sy, w, h]);
            }
        }
        let ids = if marks { axtree::Ids::Marks(&labels) } else { axtree::Ids::Sequential };
        let vp = match viewport[..] {
            [x, y, w, h] => Some([x, y, w, h]),
            _ => None,
        };
        Ok(axtree::render(&nodes, &boxes, vp, ids))
    }

    /// A DOM node's `getBoundingClientRect` (a range's for a text node), by backend id; None when it
    /// cannot be resolved (pseudo-elements) or measured.
    async fn client_rect(&self, page: &Page, backend: i64) -> Option<[f64; 4]> {
        let obj = self
            .raw(page, "finding a node", "DOM.resolveNode", serde_json::json!({"backendNodeId": backend}))
            .await
            .ok()?;
        let id = obj.pointer("/object/objectId")?.as_str()?.to_string();
        let f = "function() { let b; if (this.nodeType === 3) { const r = document.createRange(); r.selectNode(this); b = r.getBoundingClientRect(); } else { b = this.getBoundingClientRect(); } return [b.x, b.y, b.width, b.height]; }";
        let params = serde_json::json!({"objectId": id, "functionDeclaration": f, "returnByValue": true});
        let r = self.raw(page, "measuring a node", "Runtime.callFunctionOn", params).await.ok()?;
        let v: Vec<f64> = r.pointer("/result/value")?.as_array()?.iter().filter_map(|x| x.as_f64()).collect();
        match v[..] {
            [x, y, w, h] => Some([x, y, w, h]),
            _ => None,
        }
    }
}
