//! `webfreeze snapshots crawl`: a site's crawl as a layer of the frozen web.
//!
//! The crawl of site S of recording R starts from the benchmark's start pages (where each of R's tasks on
//! S began) and any start URL given, never from a task's other pages (`reach`), and walks the site in the browser
//! (`agent::crawl`) through a recording proxy behind the side-effect guard. Each invocation records one
//! part, `R/crawl/<site>/NNN`; its state (queue, pages done, contents seen) is kept in a file after every
//! page, so a stopped crawl (Ctrl-C, a crash) resumes with the next invocation: no page is loaded twice.
//!
//! Replay consults the crawl's parts after the task's own snapshot, its exploration and the site union
//! (`frozen_web::layers`): a page a task of the benchmark recorded carries the state and the moment that
//! task saw, which is closer to what another agent on the same task would have seen than a crawl's; the
//! crawl is the widest and most generic layer, so it comes last.
//!
//! The crawl keeps to the site's own hosts (`site::site_hosts`: where its tasks started, `--start`, their
//! recorded subdomains, and `--host`), and its proxy's gate (`gate`) checks every navigation, a redirect's
//! target too, against those hosts and robots.txt (RFC 9309: 5xx or unreachable is disallow all).

#[cfg(feature = "run")]
mod gate;
pub(crate) mod reach;
#[cfg(feature = "run")]
mod site;
#[cfg(feature = "run")]
pub use site::{crawl_site, CrawlReport, CrawlSiteOptions, SiteCrawlProgress};
