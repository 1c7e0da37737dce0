//! The coverage bench's third application, one nothing here was tuned on (issue 61 part 6): Debian's
//! WordPress (`wordpress`, 6.1 with its block theme Twenty Twenty-Three) on Debian's MariaDB, served by nginx
//! over TLS (a throwaway CA, `blog.test`) and php-fpm on loopback, all three children of the bench with their
//! configuration and data under its work directory (WordPress's code copied from /usr/share/wordpress, a
//! private MariaDB data directory on a private socket, no TCP port but nginx's).
//!
//! The blog is seeded with WordPress's own PHP API (`wp_install`, `wp_insert_post`, ...): [`POSTS`] generated
//! posts in [`CATEGORIES`] categories, each with three of [`TAGS`] tags, ten posts a page, pretty permalinks
//! (`/<slug>/`, `/category/x/page/2/`, `/tag/y/`, `/page/2/`, `/?s=word`). As a site owner would through the
//! site editor, the theme's header part gets the search box and its footer part the category list and the
//! tag cloud (Twenty Twenty-Three's own parts have neither, so a reader could not search from a page).
//!
//! Its paths ([`PATHS`]) are rules over the live site's links (the k-th post of a list, a post's own
//! category, its k-th tag, the next page, a query typed in the header's search box), resolved and checked
//! against the pages the site serves before anything is recorded: every step is a link of the page before it,
//! or the URL its search form sends. Half of them start deep (a category page, a category's second page, a
//! tag page, a search results page); four search.

mod content;
mod server;

pub(crate) use content::{capitalise, Article};
pub(crate) use server::WordPress;

use std::collections::BTreeSet;
use std::path::Path;
use std::time::Instant;

use anyhow::{bail, Context as _};

use super::{App, AppPath};
use content::*;

/// The application's name (the tasks' site).
pub(crate) const NAME: &str = "WordPress";
pub(crate) const HOST: &str = "blog.test";
/// Generated posts.
pub(super) const POSTS: usize = 300;
/// Posts on a list page (WordPress's default `posts_per_page`).
pub(super) const PER_PAGE: usize = 10;
/// Crawl budget (pages): the bench's standing budget, below the blog's size ([`site_size`]).
const CRAWL_BUDGET: usize = 300;
pub(super) const PACKAGES: &str = "wordpress mariadb-server nginx-light php-fpm php-mysql";

/// One step of a path, resolved on the live site against the page before it.
#[derive(Debug, Clone, Copy)]
enum Step {
    /// The path's start (a path on the blog).
    Start(&'static str),
    /// The k-th post (1-based) a list page links, in page order.
    Post(usize),
    /// The post's own category (the first category link, the post's meta line).
    Category,
    /// The post's k-th tag (1-based).
    Tag(usize),
    /// The list's next page (`/page/N+1/`).
    Next,
    /// A word typed into the header's search box (`/?s=word`, what the form sends).
    Search(&'static str),
}

use Step::{Category, Next, Post, Search, Start, Tag};

/// The paths, as rules: some from the home page, some starting deep; the ones with a [`Step::Search`] (or
/// starting on a results page) are the search paths. Written before the bench ever ran on the blog.
const PATHS: &[&[Step]] = &[
    &[Start("/"), Next, Next, Post(4), Category, Next],
    &[Start("/category/birds/"), Next, Post(2), Tag(2), Next, Post(5)],
    &[Start("/category/music/page/2/"), Post(7), Tag(1), Post(3), Category, Post(1)],
    &[Start("/tag/field-notes/"), Next, Post(4), Category, Next, Post(6)],
    &[Start("/?s=lantern"), Next, Post(3), Tag(3), Post(2), Category],
    &[Start("/"), Post(1), Search("orchard"), Next, Post(5), Tag(2)],
    &[Start("/category/tools/"), Search("harbour"), Post(1), Category, Next, Post(8)],
    &[Start("/tag/recipes/page/2/"), Post(2), Search("meadow"), Post(2), Tag(1), Post(4)],
];

/// The page's links (absolute, without fragments), distinct, in page order.
fn links(html: &str, base: &url::Url) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for h in html.split("<a ").skip(1).filter_map(|a| a.split("href=\"").nth(1)?.split('"').next()) {
        let Ok(mut u) = base.join(&html_escape::decode_html_entities(h)) else { continue };
        u.set_fragment(None);
        let s = u.to_string();
        if !out.contains(&s) {
            out.push(s);
        }
    }
    out
}

/// Whether the page has the site's search form: a GET form sending a box named `s` to the home page.
fn has_search_form(html: &str) -> bool {
    html.split("<form").skip(1).any(|f| {
        let f = f.split("</form>").next().unwrap_or_default();
        let head = f.split('>').next().unwrap_or_default();
        head.contains("method=\"get\"")
            && head.contains(&format!("action=\"https://{HOST}/\""))
            && f.contains("name=\"s\"")
    })
}

/// Resolve the paths on the live blog (each step a link of the page before it, or its search form's URL).
fn resolve(wp: &WordPress, slugs: &BTreeSet<String>) -> anyhow::Result<Vec<AppPath>> {
    let mut out = Vec::new();
    for (n, rules) in PATHS.iter().enumerate() {
        let mut urls: Vec<String> = Vec::new();
        let mut html = String::new();
        for rule in rules.iter() {
            let here = urls.last().map(|u| url::Url::parse(u)).transpose()?;
            let page_links = here.as_ref().map(|b| links(&html, b)).unwrap_or_default();
            let of = |pred: &dyn Fn(&url::Url) -> bool| -> Vec<String> {
                page_links
                    .iter()
                    .filter(|l| url::Url::parse(l).map(|u| pred(&u)).unwrap_or(false))
                    .cloned()
                    .collect()
            };
            let on_blog = |u: &url::Url| u.host_str() == Some(HOST);
            let is_post = |u: &url::Url| on_blog(u) && slugs.contains(u.path().trim_matches('/'));
            let term = |kind: &'static str| {
                move |u: &url::Url| on_blog(u) && u.path().starts_with(kind) && !u.path().contains("/page/")
            };
            let pick = |v: Vec<String>, k: usize, what: &str| -> anyhow::Result<String> {
                v.get(k - 1).cloned().with_context(|| {
                    format!("path {n}: {} links no {what} {k}", urls.last().map(String::as_str).unwrap_or(""))
                })
            };
            let url = match *rule {
                Start(p) => format!("https://{HOST}{p}"),
                Post(k) => pick(of(&is_post), k, "post")?,
                Tag(k) => pick(of(&term("/tag/")), k, "tag")?,
                Category => pick(of(&term("/category/")), 1, "category")?,
                Next => {
                    let here = here.as_ref().context("a path starts with Start")?;
                    let page: usize = here
                        .path()
                        .split("/page/")
                        .nth(1)
                        .and_then(|s| s.trim_matches('/').parse().ok())
                        .unwrap_or(1);
                    let want = format!("/page/{}/", page + 1);
                    pick(of(&|u: &url::Url| on_blog(u) && u.path().contains(&want)), 1, "next page")?
                }
                Search(q) => {
                    if !has_search_form(&html) {
                        bail!(
                            "path {n}: {} has no search form",
                            urls.last().map(String::as_str).unwrap_or("")
                        );
                    }
                    format!("https://{HOST}/?s={q}")
                }
            };
            html = wp.get(&url).with_context(|| format!("path {n}"))?;
            urls.push(url);
        }
        let search =
            rules.iter().any(|r| matches!(r, Search(_))) || urls.first().is_some_and(|u| u.contains("?s="));
        out.push(AppPath { urls, search });
    }
    Ok(out)
}

/// Seed and serve the blog, resolve its paths: the bench's WordPress application.
pub(crate) fn start(work: &Path) -> anyhow::Result<App> {
    let posts = posts()?;
    let t0 = Instant::now();
    let wp = WordPress::start(work, &posts, &[])?;
    let slugs: BTreeSet<String> = posts.iter().map(|p| p.slug.clone()).collect();
    let paths = resolve(&wp, &slugs)?;
    let size = site_size(&posts);
    eprintln!(
        "bench coverage: WordPress up and seeded in {:.0} s ({} posts, {size} pages reachable by links)",
        t0.elapsed().as_secs_f64(),
        posts.len()
    );
    Ok(App {
        name: NAME,
        host: HOST,
        addr: wp.addr,
        ca_file: wp.ca_file.clone(),
        paths,
        home: format!("https://{HOST}/"),
        budget: CRAWL_BUDGET,
        size,
        size_note: format!(
            "{POSTS} posts in {} categories, {} tags, 2 pages, and the list pages with their paging \
             (home, categories, tags; {PER_PAGE} posts a page)",
            CATEGORIES.len(),
            TAGS.len()
        ),
        search_field: Some("s"),
        server: Box::new(wp),
    })
}
