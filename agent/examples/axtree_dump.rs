//! Opens HTML files in headless Chromium and prints, per file, one JSON line: our accessibility-tree
//! text (`--observation axtree`), the raw `Accessibility.getFullAXTree` nodes, each node's
//! `getBoundingClientRect` (a range for text nodes) and the viewport size (Playwright sets the screen
//! to it, so it is what WebArena reads as `window.screen`): what
//! `scripts/validate/webarena_axtree.py` feeds WebArena's own renderer to compare the two texts.
//! Usage: axtree_dump CHROMIUM FILE.html...

use serde_json::json;
use webfreeze_agent::browser::{BrowserOptions, ObservationKind, Session};

const RECT_JS: &str = "function() { if (this.nodeType == 3) { const r = document.createRange(); r.selectNode(this); return r.getBoundingClientRect().toJSON(); } return this.getBoundingClientRect().toJSON(); }";

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (chrome, files) = args.split_first().ok_or("usage: axtree_dump CHROMIUM FILE.html...")?;
    let profile = tempfile::tempdir()?;
    let opts = BrowserOptions {
        chrome: chrome.into(),
        // Files need no proxy; a closed port makes sure nothing else loads.
        proxy: "127.0.0.1:9".parse()?,
        ca_spki: String::new(),
        width: 1280,
        height: 720,
        init_scripts: Vec::new(),
        time_zone: None,
        locale: None,
        page_timeout: std::time::Duration::from_secs(20),
        settle_quiet: std::time::Duration::from_millis(200),
        wait: std::time::Duration::from_secs(1),
        search_url: String::new(),
        profile: profile.path().to_path_buf(),
        js_heap_mb: None,
        disclose_automation: false,
        storage_state: None,
        geolocation: None,
        real_tabs: false,
        observation: ObservationKind::AxTree,
    };
    let session = Session::launch(opts).await?;
    for f in files {
        let path = std::fs::canonicalize(f)?;
        session.goto(&format!("file://{}", path.display())).await?;
        let ours = session.accessibility_tree(false).await?.text;
        let nodes = session.cdp("Accessibility.getFullAXTree", json!({})).await?["nodes"].clone();
        let mut rects = serde_json::Map::new();
        for n in nodes.as_array().into_iter().flatten() {
            let Some(b) = n["backendDOMNodeId"].as_i64() else { continue };
            let Ok(obj) = session.cdp("DOM.resolveNode", json!({"backendNodeId": b})).await else { continue };
            let Some(id) = obj["object"]["objectId"].as_str() else { continue };
            let r = session
                .cdp(
                    "Runtime.callFunctionOn",
                    json!({"objectId": id, "functionDeclaration": RECT_JS, "returnByValue": true}),
                )
                .await?;
            rects.insert(b.to_string(), r["result"]["value"].clone());
        }
        let win: Vec<f64> = serde_json::from_str(
            &session.evaluate_text("JSON.stringify([window.innerWidth, window.innerHeight])").await?,
        )?;
        println!("{}", json!({"file": f, "ours": ours, "nodes": nodes, "rects": rects, "win": win}));
    }
    session.close().await;
    Ok(())
}
