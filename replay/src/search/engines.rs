//! Which requests are a search engine's: results pages (and home pages, which hold the search box) of
//! Google, Bing and DuckDuckGo, and the search URL a run was given (`--search-url`), with the query and
//! the page asked for.

/// A request for a search engine's page.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SearchRequest {
    /// The query; None for the engine's home page (the search box only).
    pub query: Option<String>,
    /// Results skipped (paging: Google's and ours `start`, Bing's `first`, DuckDuckGo's `s`).
    pub offset: usize,
}

fn is_google(host: &str) -> bool {
    let h = host.strip_prefix("www.").unwrap_or(host);
    // google.com, google.de, google.co.uk ...
    h.strip_prefix("google.").is_some_and(|tld| !tld.is_empty() && tld.split('.').all(|p| p.len() <= 3))
}

/// The search request `url` is, if it is one. `search_urls` are further engines' search pages (a run's
/// `--search-url`): a GET to the same host and path is one.
pub fn search_request(url: &str, search_urls: &[String]) -> Option<SearchRequest> {
    let u = url::Url::parse(url).ok()?;
    let host = u.host_str()?.to_ascii_lowercase();
    let path = u.path();
    let param = |name: &str| u.query_pairs().find(|(k, _)| k == name).map(|(_, v)| v.into_owned());
    let query = param("q").or_else(|| param("p")).map(|q| q.trim().to_string()).filter(|q| !q.is_empty());
    let number = |name: &str| param(name).and_then(|v| v.parse::<usize>().ok());
    let bing = host == "bing.com" || host == "www.bing.com";
    let ddg = host == "duckduckgo.com" || host.ends_with(".duckduckgo.com");
    let engine_path = if is_google(&host) {
        matches!(path, "/" | "/search" | "/webhp")
    } else if bing {
        matches!(path, "/" | "/search")
    } else if ddg {
        matches!(path, "/" | "/html" | "/html/" | "/lite" | "/lite/")
    } else {
        search_urls.iter().filter_map(|s| url::Url::parse(s).ok()).any(|s| {
            s.host_str().is_some_and(|h| h.eq_ignore_ascii_case(&host))
                && (s.path() == path || (s.path() == "/" && path == "/search"))
        })
    };
    if !engine_path {
        return None;
    }
    let offset = if bing {
        number("first").map(|f| f.saturating_sub(1))
    } else if ddg {
        number("s")
    } else {
        None
    }
    .or_else(|| number("start"))
    .unwrap_or(0);
    Some(SearchRequest { query, offset })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn search_engine_requests() {
        let extra = vec!["https://search.test/find".to_string()];
        let q = |s: &str, o: usize| Some(SearchRequest { query: Some(s.into()), offset: o });
        let home = Some(SearchRequest { query: None, offset: 0 });
        for (url, want) in [
            ("https://www.google.com/search?q=blue+kettle", q("blue kettle", 0)),
            ("https://www.google.com/search?q=kettle&start=10", q("kettle", 10)),
            ("https://www.google.co.uk/search?q=kettle", q("kettle", 0)),
            ("https://www.google.com/", home.clone()),
            ("https://www.google.com/?q=%20", home.clone()),
            ("https://www.google.com/maps?q=x", None),
            ("https://www.bing.com/search?q=kettle&first=11", q("kettle", 10)),
            ("https://duckduckgo.com/?q=kettle", q("kettle", 0)),
            ("https://html.duckduckgo.com/html/?q=kettle&s=30", q("kettle", 30)),
            ("https://duckduckgo.com/", home.clone()),
            ("https://search.test/find?q=tea", q("tea", 0)),
            ("https://search.test/other?q=tea", None),
            ("https://shop.test/search?q=tea", None),
            ("https://google.evil.test/search?q=x", None),
            ("not a url", None),
        ] {
            assert_eq!(search_request(url, &extra), want, "{url}");
        }
    }
}
