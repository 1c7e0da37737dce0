//! A WebArena / VisualWebArena task's end-of-task checks, run in the task's browser the way their harnesses
//! run them: `program_html` (navigate, prepare, locate, with the `func:` helpers and the shop's REST
//! helpers) and `page_image_query` (the images saved for the evaluator). What they find is the
//! trajectory's evidence; the evaluator scores it, offline.

use crate::browser::Session;
use crate::tasks::helpers::{helper, Helper};
use crate::tasks::shop_api::{ShopApi, ShopApiError};
use trajectory::{CheckEvidence, EvalType, HtmlCheckSpec, ImageQuerySpec, WebArenaEval};

/// The shop REST client of a task whose checks call one (or why it could not be made).
type Shop<'a> = Option<&'a Result<ShopApi, ShopApiError>>;

/// Why a check's URL or shop helper gave no value (kept as the check's evidence, as text).
#[derive(Debug, thiserror::Error)]
enum CheckError {
    /// A `func:` helper this harness does not run (the helper's own words).
    #[error("{0}")]
    Unsupported(String),
    /// A helper that computes a value, not a URL, given as a check's URL.
    #[error("{0} is not supported as a URL")]
    NotAUrl(String),
    /// A shop REST helper, and no shop in the task.
    #[error("the task has no shop for its REST helpers (its SHOPPING site)")]
    NoShop,
    /// The shop REST client could not be made.
    #[error("{0}")]
    ShopClient(String),
    /// A shop REST helper failed.
    #[error("shop REST helper: {0}")]
    ShopCall(ShopApiError),
}

/// Runs a WebArena / VWA spec's end-of-task checks in the order of its `eval_types` (each may move the
/// page, as in their harnesses): `program_html` ([`html_checks`]) and `page_image_query`
/// ([`image_checks`], whose images are saved under `dir`).
pub(super) async fn final_checks(
    session: &Session,
    shop: Shop<'_>,
    eval: &WebArenaEval,
    dir: &std::path::Path,
) -> CheckEvidence {
    let (mut html, mut images) = (Vec::new(), Vec::new());
    for ty in &eval.eval_types {
        match ty {
            EvalType::ProgramHtml if !eval.program_html.is_empty() => {
                html = html_checks(session, shop, &eval.program_html).await
            }
            EvalType::PageImageQuery if !eval.page_image_query.is_empty() => {
                images = image_checks(session, shop, &eval.page_image_query, dir).await
            }
            _ => {}
        }
    }
    (html, images)
}

/// A check's URL: as given, or what a `func:` URL helper computes (`Err`: a helper not run here, or
/// one that failed).
async fn helper_url(url: &str, last: &str, shop: Shop<'_>) -> Result<String, CheckError> {
    if !url.starts_with("func:") {
        return Ok(url.to_string());
    }
    match helper(url, last) {
        Helper::Url(u) => Ok(u),
        Helper::ShopApi(c) if c.gives_url() => shop_call(shop, &c).await,
        Helper::Unsupported(e) => Err(CheckError::Unsupported(e)),
        Helper::Page(_) | Helper::ShopApi(_) => Err(CheckError::NotAUrl(url.to_string())),
    }
}

/// Runs a shop REST helper through the task's proxy.
async fn shop_call(shop: Shop<'_>, c: &crate::tasks::shop_api::ShopApiCall) -> Result<String, CheckError> {
    match shop {
        None => Err(CheckError::NoShop),
        Some(Err(e)) => Err(CheckError::ShopClient(e.to_string())),
        Some(Ok(api)) => api.call(c).await.map_err(CheckError::ShopCall),
    }
}

/// Runs a WebArena `program_html` spec's checks at the end of a task, as its harness does: each check
/// navigates to its `url` unless it is `last`, runs its `prep_actions`, then its `locator` (empty: the
/// page's HTML). A locator that throws gives `""` (WebArena's rule) with the error kept as evidence;
/// `func:` helpers run when they read the page or the URL ([`crate::tasks::helpers`]), the shop's REST
/// helpers as HTTP calls through the task's proxy ([`crate::tasks::shop_api`]); any other is reported as
/// not supported, by name.
async fn html_checks(
    session: &Session,
    shop: Shop<'_>,
    checks: &[HtmlCheckSpec],
) -> Vec<trajectory::HtmlCheck> {
    let mut out = Vec::with_capacity(checks.len());
    for c in checks {
        let (url, locator) = (c.url.clone(), c.locator.clone());
        let mut ev =
            trajectory::HtmlCheck { url: url.clone(), locator: locator.clone(), ..Default::default() };
        let last = session.url().await.unwrap_or_default();
        let target = match helper_url(&url, &last, shop).await {
            Ok(u) => u,
            Err(e) => {
                ev.error = Some(e.to_string());
                out.push(ev);
                continue;
            }
        };
        let page_helper = match locator.trim().starts_with("func:").then(|| helper(&locator, &last)) {
            None => None,
            Some(Helper::Page(js)) => Some(PageHelper::Script(js)),
            Some(Helper::ShopApi(c)) => Some(PageHelper::Shop(c)),
            Some(Helper::Unsupported(e)) | Some(Helper::Url(e)) => {
                ev.error = Some(if e.contains("is not supported") {
                    e
                } else {
                    format!("{locator} is not supported here")
                });
                out.push(ev);
                continue;
            }
        };
        if target != "last" && !target.is_empty() {
            if let Err(e) = session.goto(&target).await {
                ev.error = Some(format!("loading {target}: {e}"));
            }
        }
        ev.visited = session.url().await.unwrap_or_default();
        for js in &c.prep_actions {
            if let Err(e) = session.evaluate_text(js).await {
                ev.error.get_or_insert(format!("prep action {js:?}: {e}"));
            }
        }
        let r = match (&page_helper, locator.trim().is_empty()) {
            (Some(PageHelper::Script(js)), _) => session.evaluate_value(js).await,
            // Its value is text, as the Python helpers' `str` (a rating "80" is compared as text there).
            (Some(PageHelper::Shop(c)), _) => match shop_call(shop, c).await {
                Ok(v) => Ok((false, v)),
                Err(e) => {
                    ev.error.get_or_insert(e.to_string());
                    Ok((false, String::new()))
                }
            },
            (None, true) => session.html().await.map(|h| (false, h)),
            (None, false) => session.evaluate_value(&locator).await,
        };
        match r {
            Ok((numeric, text)) => (ev.numeric, ev.result) = (numeric, text),
            Err(e) => {
                ev.error.get_or_insert(format!("locator: {e}"));
            }
        }
        out.push(ev);
    }
    out
}

/// A `func:` locator: a script run in the page, or a shop REST call.
enum PageHelper {
    Script(String),
    Shop(crate::tasks::shop_api::ShopApiCall),
}

/// Collects a VWA `page_image_query` spec's images, as its harness does: each query navigates to its
/// `eval_image_url` unless it is `last`; `eval_image_class` selects the images (`.class`: the elements
/// that are images and the images inside the others; empty: every image on the page; anything else is
/// an error, as in VWA); each image and each `eval_fuzzy_image_match` gold image that is a URL is fetched
/// through the browser (so through the task's proxy: recorded, then replayed), local gold images are
/// read; all are saved under `dir` for the evaluator.
async fn image_checks(
    session: &Session,
    shop: Shop<'_>,
    queries: &[ImageQuerySpec],
    dir: &std::path::Path,
) -> Vec<trajectory::ImageCheck> {
    let mut out = Vec::with_capacity(queries.len());
    for (q, query) in queries.iter().enumerate() {
        let (url, locator) = (query.eval_image_url.clone(), query.eval_image_class.clone());
        let mut ev =
            trajectory::ImageCheck { url: url.clone(), locator: locator.clone(), ..Default::default() };
        let last = session.url().await.unwrap_or_default();
        let url = match helper_url(&url, &last, shop).await {
            Ok(u) => u,
            Err(e) => {
                ev.error = Some(e.to_string());
                out.push(ev);
                continue;
            }
        };
        if !locator.trim().is_empty() && !locator.starts_with('.') {
            ev.error = Some(format!(
                "unknown eval_image_class {locator:?} (VWA takes a .class selector or nothing)"
            ));
            out.push(ev);
            continue;
        }
        if url != "last" && !url.is_empty() {
            if let Err(e) = session.goto(&url).await {
                ev.error = Some(format!("loading {url}: {e}"));
            }
        }
        ev.visited = session.url().await.unwrap_or_default();
        let js = format!(
            "(() => {{ const loc = {}; let imgs = []; \
             if (!loc.trim()) {{ imgs = Array.from(document.querySelectorAll('img')).filter(i => i.getAttribute('alt') !== ''); }} \
             else {{ for (const el of document.querySelectorAll(loc)) {{ if (el.tagName === 'IMG') imgs.push(el); else imgs.push(...el.querySelectorAll('img')); }} }} \
             return JSON.stringify(imgs.map(i => i.getAttribute('src')).filter(Boolean).map(s => new URL(s, location.href).href)); }})()",
            serde_json::Value::String(locator.clone())
        );
        let srcs: Vec<String> = match session.evaluate_text(&js).await {
            Ok(j) => serde_json::from_str(&j).unwrap_or_default(),
            Err(e) => {
                ev.error.get_or_insert(format!("selecting the images: {e}"));
                Vec::new()
            }
        };
        for (i, src) in srcs.iter().enumerate() {
            let name = format!("check-image-{q}-{i}.img");
            ev.images.push(save_image(session, src, dir, &name).await);
        }
        let gold = query.eval_fuzzy_image_match.as_deref().unwrap_or("");
        for (g, alt) in gold.split(" |OR| ").map(str::trim).filter(|g| !g.is_empty()).enumerate() {
            let name = format!("check-gold-{q}-{g}.img");
            ev.gold.push(save_image(session, alt, dir, &name).await);
        }
        out.push(ev);
    }
    out
}

/// Fetches (a URL, through the browser) or reads (a path) an image and saves it as `dir/name`.
async fn save_image(
    session: &Session,
    src: &str,
    dir: &std::path::Path,
    name: &str,
) -> trajectory::ImageFile {
    let mut f = trajectory::ImageFile { url: src.to_string(), ..Default::default() };
    let bytes = if ["http://", "https://", "data:"].iter().any(|p| src.starts_with(p)) {
        session.fetch_bytes(src).await.map_err(|e| e.to_string())
    } else {
        std::fs::read(src).map_err(|e| e.to_string())
    };
    match bytes.and_then(|b| trajectory::write_atomic(&dir.join(name), &b).map_err(|e| e.to_string())) {
        Ok(()) => f.file = name.to_string(),
        Err(e) => f.error = Some(e),
    }
    f
}
