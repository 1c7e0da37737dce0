//! The accessibility-tree observation (`--observation axtree`): Chromium's tree from CDP
//! (`Accessibility.getFullAXTree`) rendered in WebArena's text format, one node per line, indented by
//! depth with tabs: `[id] role 'name' prop: value ...`.
//!
//! As WebArena does: nodes that are ignored, have no role, or are empty containers (a nameless
//! `generic`, `list`, `paragraph`, ... without properties) are not printed but their children are, one
//! level up; the properties WebArena ignores (`focusable`, `editable`, ...) are left out; names are
//! written as Python's `repr` writes them; a `StaticText` that is empty or already said by one of the
//! three lines kept above it is dropped (compared with those lines' text without their ids, since the
//! ids differ); with a viewport, nodes outside it are dropped by WebArena's own ratio
//! ([`in_viewport`]; the root always stays).
//!
//! Ids differ from WebArena's on purpose: WebArena prints Chromium's AX node ids, which depend on the
//! renderer's history; here they are numbered 1, 2, ... in the order the lines are printed, so the same
//! page gives the same text (and a replayed trajectory's `click [n]` finds the same element). The map
//! from id to DOM node ([`AxTree::nodes`]) is what actions use. With Set-of-Marks labels
//! (`som+axtree`) a line whose element carries a label shows the label as its id and other lines show
//! none, so one number means one thing in the screenshot and in the text.

use std::collections::{BTreeMap, HashMap};

use serde_json::Value;

/// Properties WebArena leaves out of the text.
const IGNORED_PROPERTIES: &[&str] =
    &["focusable", "editable", "readonly", "level", "settable", "multiline", "invalid"];

/// Roles that say nothing without a name or properties.
const EMPTY_ROLES: &[&str] = &[
    "generic",
    "img",
    "list",
    "strong",
    "paragraph",
    "banner",
    "navigation",
    "Section",
    "LabelText",
    "Legend",
    "listitem",
];

/// Lines above a `StaticText` that may already say it.
const STATIC_TEXT_LOOKBACK: usize = 3;

/// Minimum share of a node's box inside the viewport.
const IN_VIEWPORT: f64 = 0.6;

/// How lines get their ids.
#[derive(Debug, Clone, Copy)]
pub enum Ids<'a> {
    /// 1, 2, ... in print order.
    Sequential,
    /// The Set-of-Marks label of the node's element (backend DOM node id -> label); other lines have none.
    Marks(&'a HashMap<i64, u32>),
}

/// A rendered tree.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct AxTree {
    /// The text the model sees.
    pub text: String,
    /// Id -> backend DOM node id.
    pub nodes: BTreeMap<u32, i64>,
}

struct Line {
    depth: usize,
    role: String,
    name: String,
    body: String,
    backend: Option<i64>,
}

/// Python's `repr` of a string (quotes chosen the way Python chooses them).
pub fn py_repr(s: &str) -> String {
    let quote = if s.contains('\'') && !s.contains('"') { '"' } else { '\'' };
    let mut out = String::with_capacity(s.len() + 2);
    out.push(quote);
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if c == quote => {
                out.push('\\');
                out.push(c);
            }
            c if (c as u32) < 0x20 || c as u32 == 0x7f => out.push_str(&format!("\\x{:02x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push(quote);
    out
}

/// A property value as Python's `str` prints it (`True`, `3`, `mixed`).
fn py_str(v: &Value) -> String {
    match v {
        Value::Bool(true) => "True".into(),
        Value::Bool(false) => "False".into(),
        Value::String(s) => s.clone(),
        Value::Null => "None".into(),
        Value::Number(n) => n.to_string(),
        other => other.to_string(),
    }
}

/// Render the nodes of `Accessibility.getFullAXTree` (the first is the root). `bounds`: backend DOM node
/// id -> `[x, y, width, height]` in page coordinates; `viewport`: the visible part of the page, same
/// coordinates (None: the whole page).
pub fn render(
    nodes: &[Value],
    bounds: &HashMap<i64, [f64; 4]>,
    viewport: Option<[f64; 4]>,
    ids: Ids<'_>,
) -> AxTree {
    // Chromium repeats a few nodes; the first occurrence counts (as in WebArena).
    let mut by_id: HashMap<&str, usize> = HashMap::new();
    for (i, n) in nodes.iter().enumerate() {
        if let Some(id) = n.get("nodeId").and_then(Value::as_str) {
            by_id.entry(id).or_insert(i);
        }
    }
    let mut lines = Vec::new();
    if !nodes.is_empty() {
        // Depth-first, children in order; an explicit stack keeps deep pages off the call stack.
        let mut stack = vec![(0usize, 0usize, true)];
        let mut seen = vec![false; nodes.len()];
        while let Some((idx, depth, is_root)) = stack.pop() {
            if std::mem::replace(&mut seen[idx], true) {
                continue;
            }
            let node = &nodes[idx];
            let line = line_of(node, depth, is_root, bounds, viewport);
            let child_depth = if line.is_some() { depth + 1 } else { depth };
            if let Some(l) = line {
                lines.push(l);
            }
            let children: Vec<usize> = node
                .get("childIds")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .filter_map(|c| by_id.get(c.as_str()?).copied())
                .collect();
            for c in children.into_iter().rev() {
                stack.push((c, child_depth, false));
            }
        }
    }
    // WebArena's clean-up: a StaticText said by one of the three lines kept just above goes.
    let mut keep = vec![false; lines.len()];
    let mut kept: Vec<usize> = Vec::new();
    for (i, l) in lines.iter().enumerate() {
        if l.role == "StaticText" {
            // Compared as printed (WebArena matches the repr's inside against the lines above).
            let r = py_repr(&l.name);
            let inner = &r[1..r.len() - 1];
            let from = kept.len().saturating_sub(STATIC_TEXT_LOOKBACK);
            if inner.is_empty() || kept[from..].iter().any(|&p| lines[p].body.contains(inner)) {
                continue;
            }
        }
        keep[i] = true;
        kept.push(i);
    }
    let mut out = AxTree::default();
    let mut next = 1u32;
    let mut text = Vec::new();
    for (l, _) in lines.iter().zip(&keep).filter(|(_, k)| **k) {
        let id = match ids {
            Ids::Sequential => {
                let id = next;
                next += 1;
                Some(id)
            }
            Ids::Marks(m) => l.backend.and_then(|b| m.get(&b).copied()),
        };
        let indent = "\t".repeat(l.depth);
        match id {
            Some(id) => {
                if let Some(b) = l.backend {
                    out.nodes.insert(id, b);
                }
                text.push(format!("{indent}[{id}] {}", l.body));
            }
            None => text.push(format!("{indent}{}", l.body)),
        }
    }
    out.text = text.join("\n");
    out
}

/// The line of one node, or None when it is not printed (its children still are).
fn line_of(
    node: &Value,
    depth: usize,
    is_root: bool,
    bounds: &HashMap<i64, [f64; 4]>,
    viewport: Option<[f64; 4]>,
) -> Option<Line> {
    if node.get("ignored").and_then(Value::as_bool).unwrap_or(false) {
        return None;
    }
    let role = node.pointer("/role/value").and_then(Value::as_str)?.to_string();
    let name = node.pointer("/name/value").and_then(Value::as_str)?.to_string();
    let backend = node.get("backendDOMNodeId").and_then(Value::as_i64);
    if !is_root {
        if let Some(vp) = viewport {
            let b = backend.and_then(|b| bounds.get(&b))?;
            if !in_viewport(*b, vp) {
                return None;
            }
        }
    }
    let props: Vec<String> = node
        .get("properties")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|p| {
            let n = p.get("name")?.as_str()?;
            if IGNORED_PROPERTIES.contains(&n) {
                return None;
            }
            Some(format!("{n}: {}", py_str(p.pointer("/value/value")?)))
        })
        .collect();
    if name.trim().is_empty()
        && ((props.is_empty() && EMPTY_ROLES.contains(&role.as_str()))
            || (!props.is_empty() && role == "listitem"))
    {
        return None;
    }
    let mut body = format!("{role} {}", py_repr(&name));
    for p in &props {
        body.push(' ');
        body.push_str(p);
    }
    Some(Line { depth, role, name, body, backend })
}

/// WebArena's viewport test, as its code computes the ratio: `overlap_w * overlap_h / w * h`, which
/// Python reads as `(overlap_w * overlap_h / w) * h` (not the visible share of the box), so in practice
/// a node stays when it touches the viewport by more than a sliver. Kept as it is so the observations
/// are the ones WebArena's agents saw.
fn in_viewport(b: [f64; 4], vp: [f64; 4]) -> bool {
    let [x, y, w, h] = b;
    if w <= 0.0 || h <= 0.0 {
        return false;
    }
    let ox = ((x + w).min(vp[0] + vp[2]) - x.max(vp[0])).max(0.0);
    let oy = ((y + h).min(vp[1] + vp[3]) - y.max(vp[1])).max(0.0);
    ox * oy / w * h >= IN_VIEWPORT
}

/// Backend ids of the nodes that would be printed (not ignored, a role and a name) but have no box in
/// `bounds`: the caller measures them another way.
pub fn unmeasured(nodes: &[Value], bounds: &HashMap<i64, [f64; 4]>) -> Vec<i64> {
    nodes
        .iter()
        .filter(|n| !n.get("ignored").and_then(Value::as_bool).unwrap_or(false))
        .filter(|n| n.pointer("/role/value").is_some() && n.pointer("/name/value").is_some())
        .filter_map(|n| n.get("backendDOMNodeId").and_then(Value::as_i64))
        .filter(|b| !bounds.contains_key(b))
        .collect()
}

/// Reads `DOMSnapshot.captureSnapshot`'s first document: backend DOM node id -> layout box, and
/// backend DOM node id -> value of `attribute` (for the Set-of-Marks labels).
pub fn snapshot_tables(snapshot: &Value, attribute: &str) -> (HashMap<i64, [f64; 4]>, HashMap<i64, String>) {
    let mut boxes = HashMap::new();
    let mut attrs = HashMap::new();
    let strings: Vec<&str> = snapshot
        .get("strings")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .map(|s| s.as_str().unwrap_or(""))
        .collect();
    let Some(doc) = snapshot.pointer("/documents/0") else { return (boxes, attrs) };
    let backend: Vec<i64> = doc
        .pointer("/nodes/backendNodeId")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .map(|v| v.as_i64().unwrap_or(-1))
        .collect();
    // Pseudo-elements (a list's `::marker`) have boxes but no DOM object: WebArena cannot measure them
    // and leaves them out; so do we.
    let pseudo: std::collections::HashSet<u64> = doc
        .pointer("/nodes/pseudoType/index")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_u64)
        .collect();
    let index = doc.pointer("/layout/nodeIndex").and_then(Value::as_array);
    let rects = doc.pointer("/layout/bounds").and_then(Value::as_array);
    if let (Some(index), Some(rects)) = (index, rects) {
        for (i, r) in index.iter().zip(rects) {
            let Some(i) = i.as_u64().filter(|i| !pseudo.contains(i)) else { continue };
            let Some(b) = backend.get(i as usize) else { continue };
            let r: Vec<f64> = r.as_array().into_iter().flatten().filter_map(Value::as_f64).collect();
            if let [x, y, w, h] = r[..] {
                // A node with several layout objects (an inline split over lines): their union.
                boxes
                    .entry(*b)
                    .and_modify(|u: &mut [f64; 4]| {
                        let (x0, y0) = (u[0].min(x), u[1].min(y));
                        let (x1, y1) = ((u[0] + u[2]).max(x + w), (u[1] + u[3]).max(y + h));
                        *u = [x0, y0, x1 - x0, y1 - y0];
                    })
                    .or_insert([x, y, w, h]);
            }
        }
    }
    for (i, list) in
        doc.pointer("/nodes/attributes").and_then(Value::as_array).into_iter().flatten().enumerate()
    {
        let list: Vec<usize> =
            list.as_array().into_iter().flatten().filter_map(|v| v.as_u64().map(|x| x as usize)).collect();
        for pair in list.chunks(2) {
            if let [k, v] = pair {
                if strings.get(*k) == Some(&attribute) {
                    if let (Some(b), Some(v)) = (backend.get(i), strings.get(*v)) {
                        attrs.insert(*b, v.to_string());
                    }
                }
            }
        }
    }
    (boxes, attrs)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn node(id: &str, role: &str, name: &str, backend: i64, children: &[&str]) -> Value {
        json!({"nodeId": id, "ignored": false, "role": {"type": "role", "value": role},
               "name": {"type": "computedString", "value": name}, "backendDOMNodeId": backend,
               "childIds": children})
    }

    fn page() -> Vec<Value> {
        let mut link = node("5", "link", "Cart (2)", 50, &["6"]);
        link["properties"] =
            json!([{"name": "focusable", "value": {"type": "booleanOrUndefined", "value": true}}]);
        let mut check = node("9", "checkbox", "Remember me", 90, &[]);
        check["properties"] = json!([{"name": "checked", "value": {"type": "tristate", "value": "false"}},
                                     {"name": "required", "value": {"type": "boolean", "value": true}}]);
        vec![
            node("1", "RootWebArea", "One Stop Market", 1, &["2", "7"]),
            node("2", "generic", "", 20, &["3", "5"]),
            node("3", "heading", "It's \"new\"", 30, &["4"]),
            node("4", "StaticText", "It's \"new\"", 40, &[]),
            link,
            node("6", "StaticText", "Cart (2)", 60, &[]),
            json!({"nodeId": "7", "ignored": true, "role": {"type": "role", "value": "none"}, "childIds": ["8", "9", "10"]}),
            node("8", "StaticText", "Welcome back", 80, &[]),
            check,
            node("10", "button", "Below the fold", 100, &[]),
        ]
    }

    #[test]
    fn webarena_text_format() {
        let t = render(&page(), &HashMap::new(), None, Ids::Sequential);
        let want = "[1] RootWebArea 'One Stop Market'\n\
                    \t[2] heading 'It\\'s \"new\"'\n\
                    \t[3] link 'Cart (2)'\n\
                    \t[4] StaticText 'Welcome back'\n\
                    \t[5] checkbox 'Remember me' checked: false required: True\n\
                    \t[6] button 'Below the fold'";
        assert_eq!(t.text, want);
        assert_eq!(t.nodes.get(&3), Some(&50));
        assert_eq!(t.nodes.get(&6), Some(&100));
        // The same input, the same text.
        assert_eq!(render(&page(), &HashMap::new(), None, Ids::Sequential), t);
    }

    #[test]
    fn viewport_and_marks() {
        let mut b = HashMap::new();
        for (id, y) in [(20, 0.0), (30, 10.0), (40, 10.0), (50, 40.0), (60, 40.0), (80, 80.0), (90, 90.0)] {
            b.insert(id, [0.0, y, 100.0, 20.0]);
        }
        b.insert(100, [0.0, 790.0, 100.0, 40.0]); // below a 768px viewport: dropped
        let t = render(&page(), &b, Some([0.0, 0.0, 1024.0, 768.0]), Ids::Sequential);
        assert!(!t.text.contains("Below the fold"), "{}", t.text);
        // 45% inside: WebArena's ratio keeps it (18 * 100 / 100 * 40 >= 0.6).
        b.insert(100, [0.0, 750.0, 100.0, 40.0]);
        let t2 = render(&page(), &b, Some([0.0, 0.0, 1024.0, 768.0]), Ids::Sequential);
        assert!(t2.text.contains("Below the fold"), "{}", t2.text);
        assert!(t.text.contains("[5] checkbox"), "{}", t.text);
        let marks: HashMap<i64, u32> = [(50, 0), (90, 1)].into();
        let t = render(&page(), &b, Some([0.0, 0.0, 1024.0, 768.0]), Ids::Marks(&marks));
        assert!(t.text.contains("\t[0] link 'Cart (2)'") && t.text.contains("\t[1] checkbox"), "{}", t.text);
        assert!(t.text.contains("\theading 'It"), "{}", t.text);
        assert_eq!(t.nodes, [(0, 50), (1, 90)].into());
    }

    #[test]
    fn repr_like_python() {
        for (s, want) in [
            ("plain", "'plain'"),
            ("it's", "\"it's\""),
            ("both ' and \"", "'both \\' and \"'"),
            ("a\nb\\c", "'a\\nb\\\\c'"),
            ("", "''"),
        ] {
            assert_eq!(py_repr(s), want, "{s}");
        }
    }

    #[test]
    fn snapshot_boxes_and_attributes() {
        let snap = json!({
            "strings": ["DIV", "data-wf-mark", "3", "class", "x", "marker"],
            "documents": [{
                "nodes": {"backendNodeId": [7, 8, 9, 10], "attributes": [[], [3, 4, 1, 2], [], []],
                          "pseudoType": {"index": [3], "value": [5]}},
                "layout": {"nodeIndex": [1, 2, 2, 3], "bounds": [[1, 2, 3, 4], [0, 0, 10, 10], [0, 20, 30, 10], [0, 0, 5, 5]]}
            }]
        });
        let (boxes, attrs) = snapshot_tables(&snap, "data-wf-mark");
        assert_eq!(boxes.get(&8), Some(&[1.0, 2.0, 3.0, 4.0]));
        assert_eq!(boxes.get(&9), Some(&[0.0, 0.0, 30.0, 30.0]));
        assert_eq!(boxes.get(&10), None, "a pseudo-element has no box here");
        assert_eq!(attrs.get(&8).map(String::as_str), Some("3"));
        assert_eq!(attrs.len(), 1);
        // Printable nodes without a box are the ones to measure another way.
        let nodes = page();
        let mut b: HashMap<i64, [f64; 4]> =
            [1, 20, 30, 40, 50, 60, 80].iter().map(|&i| (i, [0.0; 4])).collect();
        assert_eq!(unmeasured(&nodes, &b), vec![90, 100]);
        b.insert(90, [0.0; 4]);
        assert_eq!(unmeasured(&nodes, &b), vec![100]);
    }
}
