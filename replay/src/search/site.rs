//! A site's own search, frozen (`--search site`, opt-in): a GET to a path the recording saw answered for
//! other values of one query parameter (`/search?q=kettle` recorded, `/search?q=teapot` asked) is a search
//! the recording did not make; so is a GET to the action of a search form a recorded page declares (a GET
//! form with a text or search box: `<form action="/" method="get"><input type="search" name="s">`,
//! [`declared_searches`]) or an OpenSearch description a recorded page links and the recording holds
//! ([`opensearch_search`]), whether or not any recording searched. The frozen search engine answers it with the site's recorded documents that
//! match, on a page shaped like its own (the same path, the same parameter, the request's other parameters
//! kept), marked as frozen search like an engine's.

/// A request recognised as a site search.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SiteSearch {
    /// The query parameter (`q`, `search`, `k` ...).
    pub field: String,
    /// Its value in the request.
    pub query: String,
    /// Results skipped (the `start` our result pages link to).
    pub offset: usize,
    /// The request's other parameters, kept by the form that searches again.
    pub hidden: Vec<(String, String)>,
}

/// Parameter names that sites use for their search box, in order of preference when several parameters of
/// a request take values the recording never saw.
const QUERY_NAMES: &[&str] = &[
    "q",
    "query",
    "search",
    "search_query",
    "searchterm",
    "keyword",
    "keywords",
    "k",
    "s",
    "term",
    "text",
    "w",
    "p",
];

/// Search-box names that are as often a page's or a post's id (WordPress's `?p=123` is post 123, Yahoo's
/// `?p=kettle` a search): their value is a query only when it is not id-shaped ([`id_shaped`]).
const ID_OR_QUERY: &[&str] = &["p"];

/// Whether a value looks like an id rather than words: no space, and digits only (with `-`, `_`, `.`,
/// `:` between them) or letters and digits mixed (`B07XJ8C8F5`, `post-42`).
pub fn id_shaped(v: &str) -> bool {
    let v = v.trim();
    !v.is_empty()
        && v.bytes().any(|b| b.is_ascii_digit())
        && v.bytes().all(|b| b.is_ascii_alphanumeric() || b"-_.:".contains(&b))
}

/// The site search `url` is, given the URLs of the documents recorded at its host and path: a query
/// parameter whose value none of them had while some had another value for it, named like a search box
/// ([`QUERY_NAMES`]) or holding free text (several words). Anything else (a product id, a page number, an
/// id-shaped `p`: [`ID_OR_QUERY`]) is not taken for a search: guessing would serve a results page where the
/// site serves an item.
pub fn site_search(url: &str, recorded: &[String]) -> Option<SiteSearch> {
    let u = url::Url::parse(url).ok()?;
    let pairs: Vec<(String, String)> =
        u.query_pairs().map(|(k, v)| (k.into_owned(), v.into_owned())).collect();
    if pairs.is_empty() {
        return None;
    }
    let recorded: Vec<Vec<(String, String)>> = recorded
        .iter()
        .filter_map(|r| url::Url::parse(r).ok())
        .map(|r| r.query_pairs().map(|(k, v)| (k.into_owned(), v.into_owned())).collect())
        .collect();
    let unseen_value = |k: &str, v: &str| {
        let values: Vec<&str> = recorded
            .iter()
            .flat_map(|r| r.iter().filter(|(rk, _)| rk == k).map(|(_, rv)| rv.as_str()))
            .collect();
        !values.is_empty() && !values.contains(&v)
    };
    let id_not_query =
        |k: &str, v: &str| ID_OR_QUERY.iter().any(|n| k.eq_ignore_ascii_case(n)) && id_shaped(v);
    let candidates: Vec<&(String, String)> = pairs
        .iter()
        .filter(|(k, v)| k != "start" && !v.trim().is_empty() && unseen_value(k, v) && !id_not_query(k, v))
        .collect();
    let known =
        QUERY_NAMES.iter().find_map(|name| candidates.iter().find(|(k, _)| k.eq_ignore_ascii_case(name)));
    let (field, query) = match (known, candidates.as_slice()) {
        (Some(p), _) => (*p).clone(),
        // Another name: only free text (words with spaces, in the request or the recording), not an id.
        (None, [(k, v)]) if v.trim().contains(' ') || recorded_text(&recorded, k) => (k.clone(), v.clone()),
        _ => return None,
    };
    let offset = pairs.iter().find(|(k, _)| k == "start").and_then(|(_, v)| v.parse().ok()).unwrap_or(0);
    let hidden = pairs.into_iter().filter(|(k, _)| *k != field && k != "start").collect();
    Some(SiteSearch { field, query: query.trim().to_string(), offset, hidden })
}

/// A GET search form a recorded page declares: where it sends (host, path) and its text box's name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeclaredSearch {
    /// The action's host.
    pub host: String,
    /// The action's path.
    pub path: String,
    /// The text box's name.
    pub field: String,
}

/// The GET search forms of a page at `page_url`: forms whose method is GET (the default) with a text or
/// search box (`type` search, text or none), the first such box's name as the field. A form with a
/// password box is a log-in, not a search.
pub fn declared_searches(html: &str, page_url: &str) -> Vec<DeclaredSearch> {
    use std::sync::OnceLock;
    static FORM: OnceLock<Option<(regex::Regex, regex::Regex, regex::Regex)>> = OnceLock::new();
    let Some((form, input, attr)) = FORM
        .get_or_init(|| {
            Some((
                regex::Regex::new(r"(?is)<form\b([^>]*)>(.*?)</form>").ok()?,
                regex::Regex::new(r"(?is)<input\b([^>]*)>").ok()?,
                regex::Regex::new(r#"(?is)\b([a-z-]+)\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s>]+))"#).ok()?,
            ))
        })
        .as_ref()
    else {
        return Vec::new();
    };
    let attrs = |s: &str| -> Vec<(String, String)> {
        attr.captures_iter(s)
            .map(|c| {
                let v = c.get(2).or(c.get(3)).or(c.get(4)).map(|m| m.as_str()).unwrap_or("");
                (c[1].to_ascii_lowercase(), v.replace("&amp;", "&"))
            })
            .collect()
    };
    let Ok(base) = url::Url::parse(page_url) else { return Vec::new() };
    let mut out = Vec::new();
    for f in form.captures_iter(html) {
        let fa = attrs(&f[1]);
        let get = |k: &str| fa.iter().find(|(n, _)| n == k).map(|(_, v)| v.clone());
        if get("method").is_some_and(|m| !m.eq_ignore_ascii_case("get")) {
            continue;
        }
        let inputs: Vec<Vec<(String, String)>> = input.captures_iter(&f[2]).map(|i| attrs(&i[1])).collect();
        let ty = |i: &Vec<(String, String)>| {
            i.iter().find(|(n, _)| n == "type").map(|(_, v)| v.to_ascii_lowercase()).unwrap_or_default()
        };
        if inputs.iter().any(|i| ty(i) == "password") {
            continue;
        }
        let Some(field) = inputs
            .iter()
            .filter(|i| matches!(ty(i).as_str(), "" | "text" | "search"))
            .find_map(|i| i.iter().find(|(n, _)| n == "name").map(|(_, v)| v.clone()))
            .filter(|n| !n.is_empty())
        else {
            continue;
        };
        let Ok(action) = base.join(get("action").as_deref().unwrap_or("")) else { continue };
        let Some(host) = action.host_str() else { continue };
        out.push(DeclaredSearch { host: host.to_ascii_lowercase(), path: action.path().to_string(), field });
    }
    out
}

/// The OpenSearch descriptions a page links (`<link rel="search" type="application/opensearchdescription+xml"
/// href>`, as MediaWiki, Discourse, GitLab and many more publish), as absolute URLs.
pub fn opensearch_links(html: &str, page_url: &str) -> Vec<String> {
    let Ok(base) = url::Url::parse(page_url) else { return Vec::new() };
    let lower = html.to_ascii_lowercase();
    let mut out = Vec::new();
    let mut at = 0;
    while let Some(i) = lower[at..].find("<link") {
        let start = at + i;
        let end = lower[start..].find('>').map_or(lower.len(), |e| start + e);
        let tag = &html[start..end];
        let tl = &lower[start..end];
        if tl.contains("opensearchdescription+xml") && tl.contains("search") {
            if let Some(h) = tl.find("href=") {
                let rest = &tag[h + 5..];
                let quote = rest.chars().next().filter(|c| *c == '"' || *c == '\'');
                let value = match quote {
                    Some(q) => rest[1..].split(q).next().unwrap_or(""),
                    None => rest.split([' ', '/', '>']).next().unwrap_or(""),
                };
                if let Ok(u) = base.join(&value.replace("&amp;", "&")) {
                    out.push(u.to_string());
                }
            }
        }
        at = end;
    }
    out
}

/// The HTML search an OpenSearch description declares: its `<Url type="text/html" template="...">` whose
/// query holds `{searchTerms}` (the parameter that does is the search box).
pub fn opensearch_search(xml: &str) -> Option<DeclaredSearch> {
    let lower = xml.to_ascii_lowercase();
    let mut at = 0;
    while let Some(i) = lower[at..].find("<url") {
        let start = at + i;
        let end = lower[start..].find('>').map_or(lower.len(), |e| start + e);
        let tag = &xml[start..end];
        at = end;
        if !tag.to_ascii_lowercase().contains("text/html") {
            continue;
        }
        let t = tag.find("template=")?;
        let rest = &tag[t + 9..];
        let q = rest.chars().next()?;
        let template = rest[1..].split(q).next()?.replace("&amp;", "&");
        let u = url::Url::parse(&template.replace("{searchTerms}", "SEARCHTERMS")).ok()?;
        let field = u.query_pairs().find(|(_, v)| v == "SEARCHTERMS").map(|(k, _)| k.into_owned())?;
        return Some(DeclaredSearch {
            host: u.host_str()?.to_ascii_lowercase(),
            path: u.path().to_string(),
            field,
        });
    }
    None
}

/// The search `url` makes through a declared form (its host, path and text box), if it does: the box's
/// value is the query (empty: no search), the request's other parameters kept.
pub fn declared_search(url: &str, declared: &[DeclaredSearch]) -> Option<SiteSearch> {
    let u = url::Url::parse(url).ok()?;
    let host = u.host_str()?.to_ascii_lowercase();
    let d = declared.iter().find(|d| {
        d.host == host && d.path == u.path() && u.query_pairs().any(|(k, _)| k == d.field.as_str())
    })?;
    let pairs: Vec<(String, String)> =
        u.query_pairs().map(|(k, v)| (k.into_owned(), v.into_owned())).collect();
    let query = pairs.iter().find(|(k, _)| *k == d.field).map(|(_, v)| v.trim().to_string())?;
    if query.is_empty() {
        return None;
    }
    let offset = pairs.iter().find(|(k, _)| k == "start").and_then(|(_, v)| v.parse().ok()).unwrap_or(0);
    let hidden = pairs.into_iter().filter(|(k, _)| *k != d.field && k != "start").collect();
    Some(SiteSearch { field: d.field.clone(), query, offset, hidden })
}

/// Whether a recorded value of `k` is several words.
fn recorded_text(recorded: &[Vec<(String, String)>], k: &str) -> bool {
    recorded.iter().flatten().any(|(rk, rv)| rk == k && rv.trim().contains(' '))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn opensearch_descriptions() {
        let page = r#"<head><link rel="search" type="application/opensearchdescription+xml" href="/w/opensearch_desc.php" title="Wiki (en)"></head>"#;
        assert_eq!(
            opensearch_links(page, "https://w.test/wiki/Oak"),
            ["https://w.test/w/opensearch_desc.php"]
        );
        assert!(opensearch_links("<link rel=stylesheet href=a.css>", "https://w.test/").is_empty());
        let xml = r#"<OpenSearchDescription xmlns="http://a9.com/-/spec/opensearch/1.1/"><ShortName>Wiki</ShortName>
            <Url type="application/x-suggestions+json" method="get" template="https://w.test/w/api.php?action=opensearch&amp;search={searchTerms}"/>
            <Url type="text/html" method="get" template="https://w.test/w/index.php?title=Special:Search&amp;search={searchTerms}"/>
            </OpenSearchDescription>"#;
        assert_eq!(
            opensearch_search(xml),
            Some(DeclaredSearch {
                host: "w.test".into(),
                path: "/w/index.php".into(),
                field: "search".into()
            })
        );
        assert_eq!(opensearch_search("<OpenSearchDescription/>"), None);
    }

    #[test]
    fn search_forms_a_page_declares() {
        let page = r#"<html><body>
          <form role="search" method="get" class="search-form" action="https://blog.test/">
            <label>Search for: <input type="search" class="search-field" value="" name="s"></label>
            <input type="submit" value="Search"></form>
          <form action='/doku.php' accept-charset='utf-8' id='dw__search' method='get'>
            <input type='hidden' name='do' value='search' /><input type='text' name='q' /></form>
          <form method="post" action="/comments"><input name="author"><textarea name="comment"></textarea></form>
          <form action="/login"><input name="user"><input type="password" name="pass"></form>
        </body></html>"#;
        let d = declared_searches(page, "https://blog.test/2024/05/garden/");
        let got: Vec<(&str, &str, &str)> =
            d.iter().map(|d| (d.host.as_str(), d.path.as_str(), d.field.as_str())).collect();
        assert_eq!(got, [("blog.test", "/", "s"), ("blog.test", "/doku.php", "q")]);
        assert_eq!(
            declared_search("https://blog.test/?s=garden", &d),
            Some(SiteSearch { field: "s".into(), query: "garden".into(), offset: 0, hidden: vec![] })
        );
        let dw = declared_search("https://blog.test/doku.php?do=search&q=fern", &d).unwrap();
        assert_eq!((dw.field.as_str(), dw.query.as_str()), ("q", "fern"));
        assert_eq!(dw.hidden, vec![("do".to_string(), "search".to_string())]);
        // Not a search: another path, no query, an empty box.
        for url in [
            "https://blog.test/about/?s=x",
            "https://blog.test/",
            "https://blog.test/?s=",
            "https://other.test/?s=x",
        ] {
            assert_eq!(declared_search(url, &d), None, "{url}");
        }
    }

    #[test]
    fn site_searches() {
        let rec = |urls: &[&str]| urls.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        let shop = rec(&["https://shop.test/search?q=kettle", "https://shop.test/search?q=mug&cat=all"]);
        let two = rec(&["https://s.test/find?cat=tea&term=green", "https://s.test/find?cat=mugs&term=red"]);
        let ss = |field: &str, query: &str, offset: usize, hidden: &[(&str, &str)]| {
            Some(SiteSearch {
                field: field.into(),
                query: query.into(),
                offset,
                hidden: hidden.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect(),
            })
        };
        for (url, recorded, want) in [
            ("https://shop.test/search?q=teapot", &shop, ss("q", "teapot", 0, &[])),
            (
                "https://shop.test/search?q=teapot&cat=all&start=10",
                &shop,
                ss("q", "teapot", 10, &[("cat", "all")]),
            ),
            // A recorded value is not a search the recording lacks.
            ("https://shop.test/search?q=kettle&cat=new", &shop, None),
            ("https://shop.test/search?q=%20", &shop, None),
            ("https://shop.test/search", &shop, None),
            // Nothing recorded at the path.
            ("https://shop.test/search?q=teapot", &rec(&[]), None),
            // A parameter the recording never had says nothing.
            ("https://shop.test/search?x=teapot", &shop, None),
            // Two unseen values: the search box's name decides ...
            ("https://s.test/find?cat=pots&term=blue", &two, ss("term", "blue", 0, &[("cat", "pots")])),
            // ... and without one it is not a search.
            ("https://s.test/item?id=7&v=2", &rec(&["https://s.test/item?id=1&v=1"]), None),
            ("https://s.test/item?id=7", &rec(&["https://s.test/item?id=1"]), None),
            // Issue 61: WordPress's `?p=123` is post 123, not a search for "123"; words under `p` are.
            ("https://blog.test/?p=123", &rec(&["https://blog.test/?p=45"]), None),
            ("https://blog.test/?p=post-9", &rec(&["https://blog.test/?p=45"]), None),
            (
                "https://y.test/search?p=kettle",
                &rec(&["https://y.test/search?p=mug"]),
                ss("p", "kettle", 0, &[]),
            ),
            // Free text under another name is.
            (
                "https://s.test/look?phrase=blue+kettle",
                &rec(&["https://s.test/look?phrase=red"]),
                ss("phrase", "blue kettle", 0, &[]),
            ),
            (
                "https://s.test/look?phrase=blue",
                &rec(&["https://s.test/look?phrase=red+mug"]),
                ss("phrase", "blue", 0, &[]),
            ),
        ] {
            assert_eq!(site_search(url, recorded), want, "{url}");
        }
    }
}
