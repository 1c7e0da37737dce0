//! A site's own search, frozen (`--search site`, opt-in): a GET to a path the recording saw answered for
//! other values of one query parameter (`/search?q=kettle` recorded, `/search?q=teapot` asked) is a search
//! the recording did not make; so is a GET to the action of a search form a recorded page declares (a GET
//! form with a text or search box: `<form action="/" method="get"><input type="search" name="s">`,
//! [`declared_searches`]) or an OpenSearch description a recorded page links and the recording holds
//! ([`opensearch_search`]), whether or not any recording searched. The frozen search engine answers it with the site's recorded documents that
//! match, on a page shaped like its own (the same path, the same parameter, the request's other parameters
//! kept), marked as frozen search like an engine's. The markup is read by crates (`markup`).

use super::markup::{self, attr};

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
    /// Parameters the search always sends with these values (an OpenSearch template's literal ones:
    /// DokuWiki's `do=search`, MediaWiki's `title=Special:Search`): a request without them is no search, so
    /// `doku.php?id=tea` is the page, where the template's box is `id` too.
    pub fixed: Vec<(String, String)>,
}

/// The GET search forms of a page at `page_url`: forms whose method is GET (the default) with a text or
/// search box (`type` search, text or none), the first such box's name as the field. A form with a
/// password box is a log-in, not a search.
pub fn declared_searches(html: &str, page_url: &str) -> Vec<DeclaredSearch> {
    page_searches(html, page_url).0
}

/// The OpenSearch descriptions a page links (`<link rel="search" type="application/opensearchdescription+xml"
/// href>`, as MediaWiki, Discourse, GitLab and many more publish), as absolute URLs.
pub fn opensearch_links(html: &str, page_url: &str) -> Vec<String> {
    page_searches(html, page_url).1
}

/// A page's [`declared_searches`] and [`opensearch_links`], its markup read once.
pub fn page_searches(html: &str, page_url: &str) -> (Vec<DeclaredSearch>, Vec<String>) {
    let Ok(base) = url::Url::parse(page_url) else { return (Vec::new(), Vec::new()) };
    let tags = markup::page_tags(html);
    let forms = tags.forms.iter().filter_map(|f| form_search(f, &base)).collect();
    // The type names an OpenSearch description, whatever the `rel` (`search` by the spec).
    let links = tags
        .links
        .iter()
        .filter(|l| {
            attr(l, "type").is_some_and(|t| t.to_ascii_lowercase().contains("opensearchdescription+xml"))
        })
        .filter_map(|l| base.join(attr(l, "href")?).ok().map(|u| u.to_string()))
        .collect();
    (forms, links)
}

/// The search a form declares, if it is a GET search form (see [`declared_searches`]).
fn form_search(f: &markup::Form, base: &url::Url) -> Option<DeclaredSearch> {
    if attr(&f.attrs, "method").is_some_and(|m| !m.eq_ignore_ascii_case("get")) {
        return None;
    }
    let ty = |i: &markup::Attrs| attr(i, "type").map(str::to_ascii_lowercase).unwrap_or_default();
    if f.inputs.iter().any(|i| ty(i) == "password") {
        return None;
    }
    let field = f
        .inputs
        .iter()
        .filter(|i| matches!(ty(i).as_str(), "" | "text" | "search"))
        .find_map(|i| attr(i, "name"))
        .filter(|n| !n.is_empty())?;
    let action = base.join(attr(&f.attrs, "action").unwrap_or("")).ok()?;
    Some(DeclaredSearch {
        host: action.host_str()?.to_ascii_lowercase(),
        path: action.path().to_string(),
        field: field.to_string(),
        fixed: Vec::new(),
    })
}

/// The HTML search an OpenSearch description declares: its first `<Url type="text/html" template="...">`,
/// when its query holds `{searchTerms}` (the parameter that does is the search box).
pub fn opensearch_search(xml: &str) -> Option<DeclaredSearch> {
    let urls = markup::opensearch_urls(xml);
    let html = urls
        .iter()
        .find(|u| attr(u, "type").is_some_and(|t| t.to_ascii_lowercase().contains("text/html")))?;
    let template = attr(html, "template")?;
    let u = url::Url::parse(&template.replace("{searchTerms}", "SEARCHTERMS")).ok()?;
    let field = u.query_pairs().find(|(_, v)| v == "SEARCHTERMS").map(|(k, _)| k.into_owned())?;
    // The template's other parameters with a literal value; `{startPage?}`, `{count}` and the like vary.
    let fixed = u
        .query_pairs()
        .filter(|(k, v)| *k != field && !v.contains('{'))
        .map(|(k, v)| (k.into_owned(), v.into_owned()))
        .collect();
    Some(DeclaredSearch {
        host: u.host_str()?.to_ascii_lowercase(),
        path: u.path().to_string(),
        field,
        fixed,
    })
}

/// The search `url` makes through a declared form (its host, path and text box), if it does: the box's
/// value is the query (empty: no search), the request's other parameters kept.
pub fn declared_search(url: &str, declared: &[DeclaredSearch]) -> Option<SiteSearch> {
    let u = url::Url::parse(url).ok()?;
    let host = u.host_str()?.to_ascii_lowercase();
    let has = |k: &str, v: Option<&str>| u.query_pairs().any(|(a, b)| a == k && v.is_none_or(|v| b == v));
    let d = declared.iter().find(|d| {
        d.host == host
            && d.path == u.path()
            && has(&d.field, None)
            && d.fixed.iter().all(|(k, v)| has(k, Some(v)))
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
                field: "search".into(),
                fixed: vec![("title".into(), "Special:Search".into())],
            })
        );
        assert_eq!(opensearch_search("<OpenSearchDescription/>"), None);
    }

    /// The markup read as a browser reads it: entities decoded, attributes in any order, quoted or not, any
    /// case, a repeated one's first value; script text is not markup.
    #[test]
    fn entities_and_attribute_order_table() {
        let forms = |html: &str| -> Vec<(String, String, String)> {
            declared_searches(html, "https://s.test/a/")
                .into_iter()
                .map(|d| (d.host, d.path, d.field))
                .collect()
        };
        let one = |host: &str, path: &str, field: &str| vec![(host.into(), path.into(), field.into())];
        for (html, want) in [
            (r#"<form action="/find"><input type="search" name="q"></form>"#, one("s.test", "/find", "q")),
            (r#"<form action="/find"><input name="q" type="search"></form>"#, one("s.test", "/find", "q")),
            (r#"<FORM METHOD=GET ACTION=/find><INPUT NAME=q TYPE=TEXT></FORM>"#, one("s.test", "/find", "q")),
            (r#"<form action='/find' method='get'><input name='q'/></form>"#, one("s.test", "/find", "q")),
            (
                r#"<form action="/f&#105;nd?a=1&amp;b=2"><input name="&#113;"></form>"#,
                one("s.test", "/find", "q"),
            ),
            (
                r#"<form action="https://shop&#46;test/x"><input name="k"></form>"#,
                one("shop.test", "/x", "k"),
            ),
            (
                r#"<form action="/find"><input name="q" placeholder="a > b"></form>"#,
                one("s.test", "/find", "q"),
            ),
            // A repeated attribute keeps its first value.
            (
                r#"<form action="/find" method="get" method="post"><input name="q" name="x"></form>"#,
                one("s.test", "/find", "q"),
            ),
            (r#"<form method="post" method="get" action="/find"><input name="q"></form>"#, vec![]),
            (
                r#"<form action="/find"><input type="hidden" name="do"><input type="search" name="q"></form>"#,
                one("s.test", "/find", "q"),
            ),
            (r#"<form action="/find"><input name="user"><input name="pw" type="PASSWORD"></form>"#, vec![]),
            // A form inside script text is none.
            (r#"<script>var f = '<form action="/x"><input name="z"></form>';</script>"#, vec![]),
            (r#"<style>/* <form action="/x"><input name="z"></form> */</style>"#, vec![]),
            // A form left open is closed by the end of the page.
            (r#"<form action="/find"><input name="q">"#, one("s.test", "/find", "q")),
        ] {
            assert_eq!(forms(html), want, "{html}");
        }
        let base = "https://w.test/wiki/Oak";
        for (html, want) in [
            (
                r#"<link rel="search" type="application/opensearchdescription+xml" href="/os.xml">"#,
                vec!["https://w.test/os.xml"],
            ),
            (
                r#"<link href="/os.xml?a=1&amp;b=2" type="application/opensearchdescription+xml" rel="search">"#,
                vec!["https://w.test/os.xml?a=1&b=2"],
            ),
            (
                r#"<LINK REL=search TYPE=application/opensearchdescription+xml HREF=/os&#46;xml>"#,
                vec!["https://w.test/os.xml"],
            ),
            (
                r#"<link rel="search" type="application/opensearchdescription+xml" href='/w/os.php?x="1"' />"#,
                vec!["https://w.test/w/os.php?x=%221%22"],
            ),
            (r#"<link rel="search" type="application/opensearchdescription+xml">"#, vec![]),
            (
                r#"<script>"<link rel=search type=application/opensearchdescription+xml href=/os.xml>"</script>"#,
                vec![],
            ),
        ] {
            assert_eq!(opensearch_links(html, base), want, "{html}");
        }
        let declared = |host: &str, path: &str, field: &str, fixed: &[(&str, &str)]| {
            let fixed = fixed.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
            Some(DeclaredSearch { host: host.into(), path: path.into(), field: field.into(), fixed })
        };
        for (xml, want) in [
            (
                r#"<OpenSearchDescription><Url template="https://w.test/s?a=1&amp;q={searchTerms}" type="text/html"/></OpenSearchDescription>"#,
                declared("w.test", "/s", "q", &[("a", "1")]),
            ),
            (
                r#"<OpenSearchDescription><Url type='text/html' template='https://w.test/s?a=1&#38;k={searchTerms}'></Url></OpenSearchDescription>"#,
                declared("w.test", "/s", "k", &[("a", "1")]),
            ),
            (
                r#"<os:OpenSearchDescription xmlns:os="http://a9.com/-/spec/opensearch/1.1/"><os:Url type="text/html" template="https://w.test/s?q={searchTerms}"/></os:OpenSearchDescription>"#,
                declared("w.test", "/s", "q", &[]),
            ),
            (
                r#"<?xml version="1.0"?><OpenSearchDescription><Url type="application/rss+xml" template="https://w.test/rss?q={searchTerms}"/><Url type="TEXT/HTML" template="https://w.test/html?s={searchTerms}"/></OpenSearchDescription>"#,
                declared("w.test", "/html", "s", &[]),
            ),
            (
                r#"<OpenSearchDescription><Url type="text/html" template="https://w.test/s?q=fixed"/></OpenSearchDescription>"#,
                None,
            ),
            (r#"<OpenSearchDescription><Url type="text/html"/></OpenSearchDescription>"#, None),
        ] {
            assert_eq!(opensearch_search(xml), want, "{xml}");
        }
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
        // DokuWiki's OpenSearch template names its box `id`, as the wiki's pages name their page: only a
        // request with the template's `do=search` is a search, never the article.
        let xml = r#"<OpenSearchDescription><Url type="text/html" template="https://wiki.test/doku.php?do=search&amp;id={searchTerms}"/></OpenSearchDescription>"#;
        let os = vec![opensearch_search(xml).expect("a declared search")];
        assert_eq!(os[0].fixed, vec![("do".to_string(), "search".to_string())]);
        assert_eq!(declared_search("https://wiki.test/doku.php?id=tea:tea_09", &os), None);
        let q = declared_search("https://wiki.test/doku.php?do=search&id=kettle", &os).expect("a search");
        assert_eq!((q.field.as_str(), q.query.as_str()), ("id", "kettle"));
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
