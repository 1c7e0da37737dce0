//! The order in which exploration and the crawl open a page's links: as an agent would meet them.
//!
//! A real site's first links are its chrome (log in, tools, history, the navigation bar), the same on every
//! page; the links an agent follows (articles, categories, results, posts, the next page) sit in the page's
//! main content. So links are taken in tiers, and in page order (above the fold first) within a tier:
//!
//! 0. links the observation labelled, in the main content;
//! 1. other visible links in the main content (the `main` landmark, an `article`, or the block holding the
//!    most paragraph text);
//! 2. other visible links outside navigation, headers, sidebars and footers;
//! 3. links in navigation, headers, sidebars and footers, and the site's chrome: a link seen on most of the
//!    site's pages ([`super::frontier`] counts them) is explored once per site, after the content;
//! 4. hidden links;
//! 5. tool and account pages (edit, history, revisions, permanent links, log in, sign up, print, share,
//!    feeds, special pages), recognised by what the link and its URL look like, not by a list per site.

use super::LinkCandidate;

pub use crate::browser::Region;

/// Words that mark a tool or account page in a link's text.
const TOOL_TEXT: &[&str] = &[
    "edit",
    "history",
    "revisions",
    "old revisions",
    "permanent link",
    "permalink",
    "page information",
    "what links here",
    "related changes",
    "recent changes",
    "backlinks",
    "log in",
    "login",
    "sign in",
    "sign up",
    "register",
    "create account",
    "create an account",
    "my account",
    "preferences",
    "print",
    "printable version",
    "share",
    "cite this page",
    "download as pdf",
    "export",
    "subscribe",
    "rss",
    "atom",
    "feed",
    "talk",
    "discussion",
    "view source",
    "media manager",
    "sitemap",
    "admin",
    "privacy policy",
    "terms of use",
    "cookie",
    "skip to",
    "jump to",
];

/// URL pieces that mark a tool or account page.
const TOOL_URL: &[&str] = &[
    "action=edit",
    "action=history",
    "action=info",
    "action=raw",
    "action=watch",
    "action=render",
    "do=edit",
    "do=revisions",
    "do=recent",
    "do=backlink",
    "do=login",
    "do=register",
    "do=media",
    "do=index",
    "do=export",
    "do=diff",
    "do=admin",
    "do=profile",
    "do=resendpwd",
    "oldid=",
    "diff=",
    "printable=",
    "rev=",
    "special:",
    "/login",
    "/signin",
    "/sign_in",
    "/signup",
    "/sign_up",
    "/register",
    "/account",
    "/users/",
    "/wp-login",
    "/wp-admin",
    "/feed",
    "/rss",
    ".rss",
    ".atom",
    "/print",
    "/share",
    "/history",
    "/revisions",
    "/edit",
    "/admin",
    "/preferences",
    "/settings",
    "mailto:",
];

/// Whether `u` holds `piece` as a whole piece: a piece ending in a letter or digit must not run on into
/// another word (`/edit` is in `/edit?x` and `/edit/`, not in `/edith_piaf`).
fn has_piece(u: &str, piece: &str) -> bool {
    let open = piece.chars().last().is_some_and(|c| c.is_ascii_alphanumeric());
    u.match_indices(piece).any(|(i, _)| {
        !open
            || u[i + piece.len()..]
                .chars()
                .next()
                .is_none_or(|c| !(c.is_alphanumeric() || c == '_' || c == '-'))
    })
}

/// Whether a link leads to a tool or account page, by its URL and text.
pub fn is_tool(url: &str, text: &str) -> bool {
    let u = url.to_ascii_lowercase();
    let t = text.trim().to_ascii_lowercase();
    TOOL_URL.iter().any(|p| has_piece(&u, p))
        || TOOL_TEXT
            .iter()
            .any(|w| t == *w || t.starts_with(&format!("{w} ")) || t.ends_with(&format!(" {w}")))
}

/// A link's tier (see the module docs); `chrome` says the site's frontier saw it on most pages.
pub fn tier(l: &LinkCandidate, chrome: bool) -> u8 {
    if is_tool(&l.url, &l.text) {
        return 5;
    }
    if !l.visible {
        return 4;
    }
    if chrome || l.region == Region::Chrome {
        return 3;
    }
    match (l.region, l.mark.is_some()) {
        (Region::Main, true) => 0,
        (Region::Main, false) => 1,
        _ => 2,
    }
}

/// `links` in the order to open them: by tier, then above the fold first, then page order (stable).
/// `is_chrome` says whether the site's frontier counts a URL as the site's chrome.
pub fn rank(mut links: Vec<LinkCandidate>, is_chrome: impl Fn(&str) -> bool) -> Vec<LinkCandidate> {
    let keyed: Vec<(u8, bool)> = links.iter().map(|l| (tier(l, is_chrome(&l.url)), !l.above_fold)).collect();
    let mut idx: Vec<usize> = (0..links.len()).collect();
    idx.sort_by_key(|&i| keyed[i]);
    let mut slots: Vec<Option<LinkCandidate>> = links.drain(..).map(Some).collect();
    idx.into_iter().filter_map(|i| slots[i].take()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn link(url: &str, text: &str, region: Region, mark: Option<u32>, above: bool) -> LinkCandidate {
        LinkCandidate {
            url: url.into(),
            text: text.into(),
            mark,
            in_form: false,
            region,
            visible: true,
            above_fold: above,
        }
    }

    /// A wiki article as Debian's DokuWiki and MediaWiki serve it: tools and account links first in the
    /// page, then the article's own links.
    #[test]
    fn a_wiki_article_content_before_chrome_and_tools() {
        let w = "https://wiki.test/doku.php";
        let page = vec![
            link(&format!("{w}?id=start&do=login"), "Log In", Region::Chrome, None, true),
            link(&format!("{w}?id=start&do=recent"), "Recent Changes", Region::Chrome, None, true),
            link(&format!("{w}?id=start&do=media"), "Media Manager", Region::Chrome, None, true),
            link(&format!("{w}?id=start&do=edit"), "Edit this page", Region::Chrome, None, true),
            link(&format!("{w}?id=start&do=revisions"), "Old revisions", Region::Chrome, None, true),
            link(&format!("{w}?id=start"), "Home", Region::Chrome, None, true),
            link(&format!("{w}?id=plants:fern"), "Ferns", Region::Main, None, false),
            link(&format!("{w}?id=plants:moss"), "Mosses", Region::Main, Some(3), true),
            link(&format!("{w}?id=plants:oak"), "Oaks", Region::Main, None, true),
            link(&format!("{w}?id=wiki:syntax"), "Formatting Syntax", Region::Other, None, false),
            link(
                "https://wiki.test/w/index.php?title=Oak&oldid=42",
                "Permanent link",
                Region::Other,
                None,
                true,
            ),
        ];
        let ranked: Vec<String> = rank(page, |_| false).into_iter().map(|l| l.text).collect();
        assert_eq!(
            ranked,
            [
                "Mosses",
                "Oaks",
                "Ferns",
                "Formatting Syntax",
                "Home",
                "Log In",
                "Recent Changes",
                "Media Manager",
                "Edit this page",
                "Old revisions",
                "Permanent link"
            ]
        );
    }

    #[test]
    fn the_sites_chrome_goes_after_content_and_hidden_links_after_it() {
        let mut hidden = link("https://s.test/menu/x", "X", Region::Other, None, true);
        hidden.visible = false;
        let page = vec![
            link("https://s.test/about", "About us", Region::Other, None, true),
            hidden,
            link("https://s.test/p/1", "Blue kettle", Region::Other, None, true),
        ];
        let ranked: Vec<String> = rank(page, |u| u.ends_with("/about")).into_iter().map(|l| l.url).collect();
        assert_eq!(ranked, ["https://s.test/p/1", "https://s.test/about", "https://s.test/menu/x"]);
    }

    #[test]
    fn tool_and_account_pages_by_what_they_look_like() {
        for (url, text, tool) in [
            ("https://w.test/index.php?title=Oak&action=history", "View history", true),
            ("https://w.test/wiki/Special:WhatLinksHere/Oak", "What links here", true),
            ("https://w.test/doku.php?id=a&do=edit", "Edit", true),
            ("https://s.test/customer/account/login/", "Sign In", true),
            ("https://s.test/customer/account/create/", "Create an Account", true),
            ("https://b.test/feed/", "Entries feed", true),
            ("https://b.test/2024/05/garden-notes/", "Garden notes", false),
            ("https://s.test/catalog/kettles?page=2", "Next page", false),
            ("https://w.test/wiki/Oak", "Oak", false),
            ("https://w.test/wiki/Edith_Piaf", "Édith Piaf", false),
        ] {
            assert_eq!(is_tool(url, text), tool, "{url} {text:?}");
        }
    }
}
