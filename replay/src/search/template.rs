//! A site's own results page as the frozen search's template (issue 61, part 4): when the frozen web holds
//! the site's results page for another query, an unrecorded query is answered with that page, its result
//! list refilled with the frozen hits in the site's own markup, so the agent meets the page it would have
//! met (the site's header, its search box, its result markup) and a click on a result title lands on the
//! frozen article. The generic page (`page`) answers only when no recorded results page makes a template.
//!
//! The page is parsed into a tree (`scraper`, on html5ever: the same parser as the site-search markup) and
//! its result list found as the browser shows it, not by a site's class names:
//! - **the result list** is the element with the most children of one kind (tag and classes) that each
//!   link into the site (not back to the search), where most of the units they start mention the old
//!   query (results show what they matched; a menu or a sidebar of links does not). A unit is a result
//!   and the siblings up to the next one: DokuWiki's `<dt>` title with its `<dd>` snippet.
//! - **Refilled**: the first unit is the template; the old units go, and one copy per hit takes their
//!   place: its first link points to the hit and says its title, and the element holding the unit's
//!   longest other text says the hit's snippet. Other text in a unit longer than a label or holding a
//!   number (a date, a "3 hits" count of the old result) is cleared rather than left wrong.
//! - **The old query** is replaced by the new one in the page's text, its title, its search boxes'
//!   values and links that carried it (paging, sorting).
//! - **Marked** as today: the `frozen-search` layer (header, report) and a note at the top of the list.
//!
//! A page with no list that qualifies (fewer than two results, a list whose units do not mention the query)
//! is no template.

use ego_tree::NodeId;
use scraper::node::{Element, Text};
use scraper::{Html, Node};

use super::index::Hit;

/// Text longer than this in a result unit (outside its link and snippet), or holding a number, is the old
/// result's and is cleared; shorter text is a label (":", "-", "Hits").
const LABEL_MAX: usize = 12;

/// The note the refilled list starts with.
const NOTE: &str = "Frozen search (webfreeze): results from the recorded pages of this snapshot, shown in \
                    this site's results page for another query, not from the site's live search.";

/// The result list of a page: its parent and the first node of each unit, in order.
struct List {
    parent: NodeId,
    starts: Vec<NodeId>,
}

/// The site's results page `html` (at `page_url`, a search for `old_query` in parameter `field`) refilled
/// with `hits` for `new_query`; None when the page holds no result list to refill (see the module docs).
pub fn refill(
    html: &str,
    page_url: &str,
    field: &str,
    old_query: &str,
    new_query: &str,
    hits: &[Hit],
) -> Option<String> {
    let page = url::Url::parse(page_url).ok()?;
    let mut doc = Html::parse_document(html);
    let list = find_list(&doc, &page, field, old_query)?;
    let suffix = site_suffix(&doc);
    let units = units(&doc, &list);
    let template = units.first()?.clone();
    // Where the new units go: before whatever follows the last old one.
    let after =
        units.last().and_then(|u| u.last()).and_then(|n| doc.tree.get(*n)?.next_sibling().map(|s| s.id()));
    for n in units.iter().flatten() {
        if let Some(mut node) = doc.tree.get_mut(*n) {
            node.detach();
        }
    }
    // The old query is the new one's before the hits go in (a hit's snippet may hold the old query).
    replace_query(&mut doc, &page, field, old_query, new_query);
    let note = doc.tree.orphan(Node::Element(element("p", &[("class", "webfreeze-note")]))).id();
    doc.tree.get_mut(note)?.append(text(NOTE));
    let grand = doc.tree.get(list.parent)?.parent().map(|p| p.id());
    match grand {
        Some(g) => insert(&mut doc, g, Some(list.parent), note),
        None => insert(&mut doc, list.parent, after, note),
    }
    for hit in hits {
        for n in &template {
            let copy = deep_copy(&mut doc, *n);
            insert(&mut doc, list.parent, after, copy);
            fill(&mut doc, copy, hit, suffix.as_deref());
        }
    }
    Some(doc.html())
}

fn element(name: &str, attrs: &[(&str, &str)]) -> Element {
    use html5ever::{ns, Attribute, LocalName, QualName};
    let q = |n: &str| QualName::new(None, ns!(), LocalName::from(n));
    Element::new(q(name), attrs.iter().map(|(k, v)| Attribute { name: q(k), value: (*v).into() }).collect())
}

fn text(s: &str) -> Node {
    Node::Text(Text { text: s.into() })
}

/// Insert orphan `n` under `parent`, before `before` (at the end when None).
fn insert(doc: &mut Html, parent: NodeId, before: Option<NodeId>, n: NodeId) {
    match before.and_then(|b| doc.tree.get_mut(b)) {
        Some(mut b) => {
            b.insert_id_before(n);
        }
        None => {
            if let Some(mut p) = doc.tree.get_mut(parent) {
                p.append_id(n);
            }
        }
    }
}

/// A copy of `n` and everything under it, as an orphan.
fn deep_copy(doc: &mut Html, n: NodeId) -> NodeId {
    let value = doc.tree.get(n).map(|x| x.value().clone()).unwrap_or_else(|| text(""));
    let children: Vec<NodeId> =
        doc.tree.get(n).map(|x| x.children().map(|c| c.id()).collect()).unwrap_or_default();
    let copy = doc.tree.orphan(value).id();
    for c in children {
        let cc = deep_copy(doc, c);
        if let Some(mut p) = doc.tree.get_mut(copy) {
            p.append_id(cc);
        }
    }
    copy
}

/// The visible text under `n`.
fn text_of(doc: &Html, n: NodeId) -> String {
    let Some(node) = doc.tree.get(n) else { return String::new() };
    node.descendants().filter_map(|d| d.value().as_text().map(|t| t.to_string())).collect()
}

/// The first link under (or at) `n` with its target.
fn first_link(doc: &Html, n: NodeId) -> Option<(NodeId, String)> {
    doc.tree.get(n)?.descendants().find_map(|d| {
        let e = d.value().as_element()?;
        (e.name() == "a").then(|| e.attr("href").map(|h| (d.id(), h.to_string()))).flatten()
    })
}

/// Whether `href` (on `page`, a search in parameter `field`) links into the site, not back to its search
/// (another page of results, another order).
fn into_site(page: &url::Url, field: &str, href: &str) -> bool {
    match page.join(href) {
        Ok(u) => {
            let search_again = u.path() == page.path() && u.query_pairs().any(|(k, _)| k == field);
            u.host_str() == page.host_str()
                && matches!(u.scheme(), "http" | "https")
                && !href.starts_with('#')
                && !search_again
        }
        Err(_) => false,
    }
}

/// An element's kind: its tag and classes.
fn kind(e: &Element) -> String {
    let mut classes: Vec<&str> = e.classes().collect();
    classes.sort_unstable();
    format!("{}.{}", e.name(), classes.join("."))
}

/// Sibling elements grouped as one list's items: by tag, when the siblings of a tag share a class (or none
/// has any), whatever classes each adds of its own (WordPress gives each result `post-297`,
/// `category-rivers`, `tag-…` beside the `wp-block-post` they share); else by exact kind ([`kind`]), so a
/// menu's items and a result list's under one parent stay apart.
fn item_groups(items: Vec<(NodeId, &Element)>) -> Vec<Vec<NodeId>> {
    let mut by_tag: Vec<(&str, Vec<(NodeId, &Element)>)> = Vec::new();
    for (id, e) in items {
        match by_tag.iter_mut().find(|(t, _)| *t == e.name()) {
            Some((_, v)) => v.push((id, e)),
            None => by_tag.push((e.name(), vec![(id, e)])),
        }
    }
    let mut out = Vec::new();
    for (_, members) in by_tag {
        let first: std::collections::BTreeSet<&str> = members[0].1.classes().collect();
        let shared = first.iter().any(|c| members.iter().all(|(_, e)| e.classes().any(|x| x == *c)));
        if shared || members.iter().all(|(_, e)| e.classes().next().is_none()) {
            out.push(members.iter().map(|(id, _)| *id).collect());
            continue;
        }
        let mut exact: Vec<(String, Vec<NodeId>)> = Vec::new();
        for (id, e) in members {
            let k = kind(e);
            match exact.iter_mut().find(|(g, _)| *g == k) {
                Some((_, ids)) => ids.push(id),
                None => exact.push((k, vec![id])),
            }
        }
        out.extend(exact.into_iter().map(|(_, ids)| ids));
    }
    out
}

/// The page's result list (see the module docs).
fn find_list(doc: &Html, page: &url::Url, field: &str, old_query: &str) -> Option<List> {
    let words: Vec<String> =
        old_query.split_whitespace().map(|w| w.to_lowercase()).filter(|w| w.chars().count() >= 2).collect();
    if words.is_empty() {
        return None;
    }
    let mut best: Option<(usize, usize, List)> = None;
    for parent in doc.tree.nodes().filter(|n| n.value().is_element()) {
        // Children that link into the site, grouped as one list's items ([`item_groups`]), in order.
        let items: Vec<(NodeId, &Element)> = parent
            .children()
            .filter_map(|c| Some((c.id(), c.value().as_element()?)))
            .filter(|(id, _)| first_link(doc, *id).is_some_and(|(_, h)| into_site(page, field, &h)))
            .collect();
        for starts in item_groups(items) {
            if starts.len() < 2 {
                continue;
            }
            let list = List { parent: parent.id(), starts };
            let unit_texts: Vec<String> = units(doc, &list)
                .iter()
                .map(|u| u.iter().map(|n| text_of(doc, *n)).collect::<String>().to_lowercase())
                .collect();
            let mentions = unit_texts.iter().filter(|t| words.iter().any(|w| t.contains(w.as_str()))).count();
            // Most units mention the query: a result list, not a menu.
            if mentions * 2 < list.starts.len() {
                continue;
            }
            let len: usize = unit_texts.iter().map(String::len).sum();
            if best.as_ref().is_none_or(|(m, l, _)| (mentions, len) > (*m, *l)) {
                best = Some((mentions, len, list));
            }
        }
    }
    best.map(|(_, _, l)| l)
}

/// The units of `list`: each start and its following siblings up to the next start; the last one as long
/// (in elements) as the first.
fn units(doc: &Html, list: &List) -> Vec<Vec<NodeId>> {
    let Some(parent) = doc.tree.get(list.parent) else { return Vec::new() };
    let children: Vec<NodeId> = parent.children().map(|c| c.id()).collect();
    let pos = |id: NodeId| children.iter().position(|c| *c == id);
    let mut out = Vec::new();
    let elements_in = |range: &[NodeId]| {
        range.iter().filter(|n| doc.tree.get(**n).is_some_and(|x| x.value().is_element())).count()
    };
    let mut first_len = None;
    for (i, s) in list.starts.iter().enumerate() {
        let Some(a) = pos(*s) else { continue };
        let b = match list.starts.get(i + 1).and_then(|n| pos(*n)) {
            Some(b) => b,
            None => {
                // The last: as many elements as the first unit had.
                let want = first_len.unwrap_or(1);
                let mut b = a;
                let mut seen = 0;
                while b < children.len() && seen < want {
                    if doc.tree.get(children[b]).is_some_and(|x| x.value().is_element()) {
                        seen += 1;
                    }
                    b += 1;
                }
                b
            }
        };
        let unit = children[a..b].to_vec();
        first_len.get_or_insert_with(|| elements_in(&unit));
        out.push(unit);
    }
    out
}

/// Separators a page's `<title>` puts between what the page is and the site's name.
const TITLE_SEPARATORS: &[&str] = &[" \u{2013} ", " \u{2014} ", " | ", " - ", " \u{b7} ", " :: "];

/// The site's name as the results page's `<title>` ends with it, with its separator (` – Test Blog`).
fn site_suffix(doc: &Html) -> Option<String> {
    let sel = scraper::Selector::parse("title").ok()?;
    let title: String = doc.select(&sel).next()?.text().collect();
    TITLE_SEPARATORS
        .iter()
        .filter_map(|sep| title.rfind(sep).map(|i| title[i..].to_string()))
        .max_by_key(|s| s.len())
        .filter(|s| s.chars().count() < title.chars().count())
}

/// A hit's title as the site's list shows it: the page title without the site's name after it (a
/// frozen page's `<title>` is `Post – Blog`; the list says `Post`).
fn short_title<'a>(title: &'a str, suffix: Option<&str>) -> &'a str {
    suffix.and_then(|s| title.strip_suffix(s)).map(str::trim_end).filter(|t| !t.is_empty()).unwrap_or(title)
}

/// Fill a copied unit node with `hit`: its link, its longest other text (the snippet), and the rest of its
/// text cleared (see the module docs).
fn fill(doc: &mut Html, n: NodeId, hit: &Hit, suffix: Option<&str>) {
    let link = first_link(doc, n).map(|(id, _)| id);
    if let Some(l) = link {
        set_attr(doc, l, "href", &hit.url);
        set_children_text(doc, l, short_title(&hit.title, suffix));
    }
    let under_link = |doc: &Html, t: NodeId| {
        link.is_some_and(|l| doc.tree.get(t).is_some_and(|x| x.ancestors().any(|a| a.id() == l)))
    };
    let texts: Vec<(NodeId, usize)> = doc
        .tree
        .get(n)
        .map(|x| {
            x.descendants()
                .filter_map(|d| d.value().as_text().map(|t| (d.id(), t.trim().chars().count())))
                .collect()
        })
        .unwrap_or_default();
    let others: Vec<(NodeId, usize)> = texts.into_iter().filter(|(t, _)| !under_link(doc, *t)).collect();
    let snippet =
        others.iter().max_by_key(|(_, len)| *len).filter(|(_, len)| *len > LABEL_MAX).map(|(t, _)| *t);
    let numbered = |doc: &Html, t: NodeId| {
        doc.tree.get(t).and_then(|x| x.value().as_text().map(|s| s.chars().any(|c| c.is_ascii_digit())))
            == Some(true)
    };
    for (t, len) in &others {
        if (*len > LABEL_MAX || numbered(doc, *t)) && Some(*t) != snippet {
            if let Some(mut node) = doc.tree.get_mut(*t) {
                *node.value() = text("");
            }
        }
    }
    let Some(t) = snippet else { return };
    // The element holding the snippet says the hit's snippet alone (a highlighted word of the old query
    // goes with it), unless it holds the link too: then only the text itself changes.
    let parent = doc.tree.get(t).and_then(|x| x.parent()).map(|p| p.id());
    let holds_link =
        |p: NodeId| link.is_some_and(|l| doc.tree.get(l).is_some_and(|x| x.ancestors().any(|a| a.id() == p)));
    match parent.filter(|p| !holds_link(*p)) {
        Some(p) => set_children_text(doc, p, &hit.snippet),
        None => {
            if let Some(mut node) = doc.tree.get_mut(t) {
                *node.value() = text(&hit.snippet);
            }
        }
    }
}

fn set_attr(doc: &mut Html, n: NodeId, name: &str, value: &str) {
    if let Some(mut node) = doc.tree.get_mut(n) {
        if let Node::Element(e) = node.value() {
            match e.attrs.iter_mut().find(|(k, _)| &*k.local == name) {
                Some((_, v)) => *v = value.into(),
                None => {
                    *e = element_with(e, name, value);
                }
            }
        }
    }
}

/// `e` with attribute `name` added.
fn element_with(e: &Element, name: &str, value: &str) -> Element {
    let mut attrs: Vec<(String, String)> = e.attrs().map(|(k, v)| (k.to_string(), v.to_string())).collect();
    attrs.push((name.to_string(), value.to_string()));
    let pairs: Vec<(&str, &str)> = attrs.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    element(e.name(), &pairs)
}

/// Replace everything under `n` with one text.
fn set_children_text(doc: &mut Html, n: NodeId, s: &str) {
    let children: Vec<NodeId> =
        doc.tree.get(n).map(|x| x.children().map(|c| c.id()).collect()).unwrap_or_default();
    for c in children {
        if let Some(mut node) = doc.tree.get_mut(c) {
            node.detach();
        }
    }
    if let Some(mut node) = doc.tree.get_mut(n) {
        node.append(text(s));
    }
}

/// The old query replaced by the new one: in text (the title, a heading), search boxes' values, and links
/// that carried it in `field`.
fn replace_query(doc: &mut Html, page: &url::Url, field: &str, old: &str, new: &str) {
    let ids: Vec<NodeId> = doc.tree.nodes().map(|n| n.id()).collect();
    for id in ids {
        let Some(mut node) = doc.tree.get_mut(id) else { continue };
        match node.value() {
            Node::Text(t) if t.contains(old) => {
                let s = replace_whole(t, old, new);
                t.text = s.as_str().into();
            }
            Node::Element(e) => {
                for (k, v) in e.attrs.iter_mut() {
                    let name = &*k.local;
                    if name == "value" && &**v == old {
                        *v = new.into();
                    } else if name == "href" {
                        if let Some(changed) = with_query(page, v, field, old, new) {
                            *v = changed.as_str().into();
                        }
                    }
                }
            }
            _ => {}
        }
    }
}

/// `text` with each occurrence of `old` that stands as whole words (no letter or digit joined to either
/// end: "tea" in "Results for tea", not in "steam") replaced by `new`.
fn replace_whole(text: &str, old: &str, new: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(i) = rest.find(old) {
        let before = rest[..i].chars().next_back();
        let after = rest[i + old.len()..].chars().next();
        let joined = |c: Option<char>| c.is_some_and(char::is_alphanumeric);
        out.push_str(&rest[..i]);
        out.push_str(if joined(before) || joined(after) { old } else { new });
        rest = &rest[i + old.len()..];
    }
    out.push_str(rest);
    out
}

/// `href` (on `page`) with its `field` changed from `old` to `new`, when it carries it.
fn with_query(page: &url::Url, href: &str, field: &str, old: &str, new: &str) -> Option<String> {
    let mut u = page.join(href).ok()?;
    let pairs: Vec<(String, String)> =
        u.query_pairs().map(|(k, v)| (k.into_owned(), v.into_owned())).collect();
    if !pairs.iter().any(|(k, v)| k == field && v == old) {
        return None;
    }
    u.query_pairs_mut()
        .clear()
        .extend_pairs(pairs.iter().map(|(k, v)| (k.as_str(), if k == field { new } else { v.as_str() })));
    Some(u.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hit(url: &str, title: &str, snippet: &str) -> Hit {
        Hit { url: url.into(), title: title.into(), snippet: snippet.into(), score: 1.0 }
    }

    /// DokuWiki's results page (its markup, trimmed): a sidebar menu of links, the quick hits by page
    /// name, and the full-text results as `<dt>` titles with `<dd>` snippets.
    const DOKU: &str = r#"<!DOCTYPE html><html><head><title>Search results for tomatoes [Wiki]</title></head>
<body><div id="dokuwiki__aside"><ul><li><a href="/doku.php?id=start">Start</a></li><li><a href="/doku.php?id=garden">Garden</a></li><li><a href="/doku.php?id=kitchen">Kitchen</a></li></ul></div>
<form action="/doku.php" method="get" role="search"><input type="hidden" name="do" value="search"><input name="q" type="text" value="tomatoes"></form>
<div class="search_results"><h2>Results for tomatoes</h2><dl class="search_results">
<dt><a href="/doku.php?id=garden:tomatoes&amp;s[]=tomatoes" class="wikilink1">garden:tomatoes</a>: 3 Hits</dt><dd><strong class="search_hit">Tomatoes</strong> need sun and water every day in summer</dd>
<dt><a href="/doku.php?id=kitchen:sauce&amp;s[]=tomatoes" class="wikilink1">kitchen:sauce</a>: 1 Hits</dt><dd>A sauce of <strong class="search_hit">tomatoes</strong>, garlic and a long afternoon</dd>
</dl></div><a href="/doku.php?do=search&amp;q=tomatoes&amp;sort=mtime">Sort by date</a></body></html>"#;

    #[test]
    fn a_dokuwiki_results_page_refilled() {
        let hits = [
            hit(
                "https://wiki.test/doku.php?id=kitchen:tea",
                "kitchen:tea",
                "Green tea wants water at 80 degrees",
            ),
            hit(
                "https://wiki.test/doku.php?id=garden:herbs",
                "garden:herbs",
                "Mint makes a fine tea as well",
            ),
            hit("https://wiki.test/doku.php?id=start", "start", "Welcome: tea, herbs and tomatoes"),
        ];
        let page = "https://wiki.test/doku.php?do=search&q=tomatoes";
        let out = refill(DOKU, page, "q", "tomatoes", "tea", &hits).expect("a template");
        let doc = Html::parse_document(&out);
        let sel = |s: &str| scraper::Selector::parse(s).unwrap();
        let dts: Vec<String> =
            doc.select(&sel("dl.search_results dt a")).map(|a| a.text().collect()).collect();
        assert_eq!(dts, ["kitchen:tea", "garden:herbs", "start"], "{out}");
        let hrefs: Vec<&str> =
            doc.select(&sel("dl.search_results dt a")).filter_map(|a| a.attr("href")).collect();
        assert_eq!(hrefs[0], "https://wiki.test/doku.php?id=kitchen:tea");
        let dds: Vec<String> = doc.select(&sel("dl.search_results dd")).map(|a| a.text().collect()).collect();
        assert_eq!(dds[0], "Green tea wants water at 80 degrees", "{out}");
        assert_eq!(dds.len(), 3);
        // The old result's hit count is cleared, not left wrong; the site's own chrome stays.
        assert!(!out.contains("3 Hits") && !out.contains("garden:tomatoes"), "{out}");
        assert_eq!(doc.select(&sel("#dokuwiki__aside li")).count(), 3);
        // The query replaced: title, heading, search box, links that carried it.
        assert!(out.contains("<title>Search results for tea [Wiki]</title>"), "{out}");
        assert!(out.contains("Results for tea"));
        assert_eq!(doc.select(&sel("input[name=q]")).next().and_then(|i| i.attr("value")), Some("tea"));
        assert!(out.contains("q=tea&amp;sort=mtime"), "{out}");
        assert!(out.contains("webfreeze-note"));
    }

    #[test]
    fn no_template_without_a_result_list() {
        let page = "https://wiki.test/doku.php?do=search&q=tomatoes";
        // A menu of links that do not mention the query is not a result list.
        let menu = r#"<html><body><ul><li><a href="/a">Alpha</a></li><li><a href="/b">Beta</a></li></ul>
<p>No results for tomatoes.</p></body></html>"#;
        assert!(refill(menu, page, "q", "tomatoes", "tea", &[]).is_none());
        // One result is no list.
        let one = r#"<html><body><dl><dt><a href="/doku.php?id=x">x</a></dt><dd>tomatoes here</dd></dl></body></html>"#;
        assert!(refill(one, page, "q", "tomatoes", "tea", &[]).is_none());
        assert!(refill(DOKU, page, "q", "", "tea", &[]).is_none());
    }

    #[test]
    fn the_old_query_is_replaced_where_it_stands_alone() {
        for (text, want) in [
            ("Results for tea", "Results for kettle"),
            ("Steam and tea, tea.", "Steam and kettle, kettle."),
            ("teapots and steam", "teapots and steam"),
            ("", ""),
        ] {
            assert_eq!(replace_whole(text, "tea", "kettle"), want, "{text}");
        }
    }

    #[test]
    fn no_hits_leaves_the_page_with_an_empty_list() {
        let page = "https://wiki.test/doku.php?do=search&q=tomatoes";
        let out = refill(DOKU, page, "q", "tomatoes", "zzz", &[]).expect("a template");
        assert!(!out.contains("<dt>") && out.contains("webfreeze-note"), "{out}");
    }

    /// WordPress's results page (Twenty Twenty-Three, trimmed): each result's `<li>` adds classes of its
    /// own (`post-297`, `category-rivers`, `tag-…`) beside those they share; a category list in the footer.
    const WP: &str = r#"<!DOCTYPE html><html><head><title>Search Results for &#8220;lantern&#8221; &#8211; Blog</title></head>
<body><header><form role="search" method="get" action="https://blog.test/"><input type="search" name="s" value="lantern"></form></header>
<main><h1>Search results: &#8220;lantern&#8221;</h1><ul class="wp-block-post-template">
<li class="wp-block-post post-297 post type-post status-publish format-standard hentry category-rivers tag-lanterns"><h2 class="wp-block-post-title"><a href="https://blog.test/river-lantern-3/">River lantern 3</a></h2><div class="wp-block-post-excerpt"><p>The lantern by the river keeps its light.</p></div></li>
<li class="wp-block-post post-12 post type-post status-publish format-standard hentry category-tools tag-field-notes"><h2 class="wp-block-post-title"><a href="https://blog.test/old-lantern/">Old lantern</a></h2><div class="wp-block-post-excerpt"><p>An old lantern, copper and glass.</p></div></li>
</ul></main>
<footer><ul class="wp-block-categories-list"><li class="cat-item cat-item-2"><a href="https://blog.test/category/rivers/">Rivers</a></li><li class="cat-item cat-item-3"><a href="https://blog.test/category/tools/">Tools</a></li></ul></footer></body></html>"#;

    #[test]
    fn a_wordpress_results_page_refilled_whatever_classes_each_result_adds() {
        let hits = [
            // A frozen page's title ends with the site's name, as the results page's does; the list
            // shows the post's own.
            hit(
                "https://blog.test/orchard-walk/",
                "Orchard walk \u{2013} Blog",
                "The orchard in early light",
            ),
            hit("https://blog.test/meadow-orchard/", "Meadow orchard", "An orchard beside the meadow"),
        ];
        let out =
            refill(WP, "https://blog.test/?s=lantern", "s", "lantern", "orchard", &hits).expect("a template");
        let doc = Html::parse_document(&out);
        let sel = |s: &str| scraper::Selector::parse(s).unwrap();
        let titles: Vec<String> =
            doc.select(&sel("ul.wp-block-post-template li h2 a")).map(|a| a.text().collect()).collect();
        assert_eq!(titles, ["Orchard walk", "Meadow orchard"], "{out}");
        assert!(!out.contains("River lantern 3"), "{out}");
        // The footer's category list (items that share `cat-item`, mention no query) is left as it is.
        assert_eq!(doc.select(&sel(".wp-block-categories-list li")).count(), 2);
        // Items of one tag that share no class stay apart: a menu and results under one parent.
        let mixed = WP
            .replace("wp-block-post post-297 post type-post status-publish format-standard hentry category-rivers tag-lanterns", "menu-item")
            .replace("wp-block-post post-12 post type-post status-publish format-standard hentry category-tools tag-field-notes", "result");
        assert!(refill(&mixed, "https://blog.test/?s=lantern", "s", "lantern", "orchard", &hits).is_none());
    }
}
