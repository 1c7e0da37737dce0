//! A site's own search, frozen (`--search site`, opt-in): a GET to a path the recording saw answered for
//! other values of one query parameter (`/search?q=kettle` recorded, `/search?q=teapot` asked) is a search
//! the recording did not make. The frozen search engine answers it with the site's recorded documents that
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

/// The site search `url` is, given the URLs of the documents recorded at its host and path: a query
/// parameter whose value none of them had while some had another value for it, named like a search box
/// ([`QUERY_NAMES`]) or holding free text (several words). Anything else (a product id, a page number) is
/// not taken for a search: guessing would serve a results page where the site serves an item.
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
    let candidates: Vec<&(String, String)> =
        pairs.iter().filter(|(k, v)| k != "start" && !v.trim().is_empty() && unseen_value(k, v)).collect();
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

/// Whether a recorded value of `k` is several words.
fn recorded_text(recorded: &[Vec<(String, String)>], k: &str) -> bool {
    recorded.iter().flatten().any(|(rk, rv)| rk == k && rv.trim().contains(' '))
}

#[cfg(test)]
mod tests {
    use super::*;

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
