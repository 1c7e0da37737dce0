//! WebArena / VisualWebArena `func:` helpers in eval specs (`program_html` URLs and locators,
//! `page_image_query` URLs). Their harnesses `eval()` a Python call; here the call is parsed (a name,
//! then `__page__`, `__last_url__` or quoted string arguments) and run:
//!
//! - URL helpers, computed here: `reddit_get_post_url(URL)` (a Postmill comment URL to its post's URL);
//! - page helpers, run as JavaScript in the checked page (our own scripts, written from the helpers'
//!   documented behaviour): `get_query_text`, `get_query_text_lowercase`, the Magento product page's
//!   `shopping_get_product_attributes`, `shopping_get_product_price`, `shopping_get_num_reviews`,
//!   `shopping_get_rating_as_percentage`, its order page's `shopping_get_order_product_name_list`,
//!   `shopping_get_order_product_quantity`, `shopping_get_order_product_option`, Postmill's
//!   `reddit_get_latest_comment_content_by_username`,
//!   `reddit_get_parent_comment_username_of_latest_comment_by_username`, GitLab's
//!   `gitlab_get_project_memeber_role`;
//! - the shop's REST helpers (`shopping_get_latest_order_url`, `shopping_get_sku_latest_review_*`, ...),
//!   run as HTTP calls through the task's proxy ([`crate::tasks::shop_api`]);
//! - anything else is not supported: [`Helper::Unsupported`] names it.

use super::shop_api::ShopApiCall;

/// A parsed helper call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Helper {
    /// A URL computed here.
    Url(String),
    /// A script to evaluate in the page; its value is the helper's result.
    Page(String),
    /// A call to the shop's REST API.
    ShopApi(ShopApiCall),
    /// A helper this harness does not run (named).
    Unsupported(String),
}

/// Arguments as written: `__page__`, or a string.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Arg {
    Page,
    Str(String),
}

/// `name(arg, ...)` with Python string literals; `last_url` replaces `__last_url__`.
fn parse_call(call: &str, last_url: &str) -> Option<(String, Vec<Arg>)> {
    let call = call.trim().strip_prefix("func:").unwrap_or(call.trim()).trim();
    let open = call.find('(')?;
    let name = call[..open].trim().to_string();
    let inner = call[open + 1..].trim_end().strip_suffix(')')?;
    let mut args = Vec::new();
    let mut chars = inner.chars().peekable();
    loop {
        while chars.peek().is_some_and(|c| c.is_whitespace() || *c == ',') {
            chars.next();
        }
        let Some(&c) = chars.peek() else { break };
        if c == '\'' || c == '"' {
            chars.next();
            let mut s = String::new();
            loop {
                match chars.next()? {
                    '\\' => s.push(chars.next()?),
                    q if q == c => break,
                    x => s.push(x),
                }
            }
            args.push(Arg::Str(s.replace("__last_url__", last_url)));
        } else {
            let word: String = std::iter::from_fn(|| chars.next_if(|x| *x != ',')).collect();
            match word.trim() {
                "__page__" | "page" => args.push(Arg::Page),
                "__last_url__" => args.push(Arg::Str(last_url.to_string())),
                _ => return None,
            }
        }
    }
    Some((name, args))
}

/// Postmill: `/f/FORUM/ID/...` -> `/f/FORUM/ID/`; any other URL as is.
fn reddit_post_url(url: &str) -> String {
    let Ok(mut u) = url::Url::parse(url) else { return url.to_string() };
    let parts: Vec<String> = u.path().split('/').map(str::to_string).collect();
    if parts.len() < 4 || parts[1] != "f" {
        return url.to_string();
    }
    u.set_path(&format!("/f/{}/{}/", parts[2], parts[3]));
    u.set_query(None);
    u.set_fragment(None);
    u.to_string()
}

/// The page scripts, one function per helper; `HELPERS[name](...args)`.
const PAGE_HELPERS_JS: &str = r#"{
  text(sel) { try { return document.querySelector(sel).textContent; } catch (e) { return ''; } },
  get_query_text(sel) { return this.text(sel); },
  get_query_text_lowercase(sel) { return this.text(sel).toLowerCase(); },
  shopping_get_product_attributes(attr) {
    try {
      const terms = attr.toLowerCase().split(' |or| ');
      const rows = document.querySelector('#productDetails_detailBullets_sections1 > tbody').children;
      return Array.from(rows).filter(r => terms.some(t => r.children[0].outerText.toLowerCase().includes(t)))
        .map(r => r.children[1].outerText).join(', ');
    } catch (e) { return ''; }
  },
  shopping_get_product_price() {
    try {
      const el = document.querySelector('#maincontent > div.columns > div > div.product-info-main > div.product-info-price > div.price-box.price-final_price > span > span');
      const v = parseFloat(el.outerText.substr(1)); return v ? v : 0;
    } catch (e) { return 0; }
  },
  shopping_get_num_reviews() {
    try { const v = parseInt(document.querySelector('#tab-label-reviews-title').outerText.split(' ')[1]); return v ? v : 0; }
    catch (e) { return 0; }
  },
  shopping_get_rating_as_percentage() {
    try { const v = parseFloat(document.querySelector('.rating-result').title.replace('%', '')); return v ? v : 0; }
    catch (e) { return 0; }
  },
  orders() {
    try {
      return Array.from(document.querySelector('#my-orders-table').getElementsByTagName('tbody')).map(body => {
        const o = {};
        for (const td of body.getElementsByTagName('td')) {
          const key = td.className.split(' ')[1];
          o[key] = td.outerText;
          const dl = key === 'name' ? td.querySelector('dl') : null;
          if (dl) {
            o.options = {};
            const kids = Array.from(dl.children);
            for (let i = 0; i + 1 < kids.length; i += 2) o.options[kids[i].outerText] = kids[i + 1].outerText;
          }
        }
        return o;
      });
    } catch (e) { return []; }
  },
  shopping_get_order_product_name_list() { return this.orders().map(p => p.name).join(' |OR| '); },
  shopping_get_order_product_quantity(sku) {
    const skus = sku.split(' |OR| ');
    for (const p of this.orders()) {
      if (p.sku && skus.includes(p.sku.trim())) { const n = parseInt((p.qty || '').slice(7)); return isNaN(n) ? 0 : n; }
    }
    return 0;
  },
  shopping_get_order_product_option(sku, option) {
    for (const p of this.orders()) {
      if (p.sku && p.sku.trim() === sku) { return (p.options && p.options[option]) || ''; }
    }
    return '';
  },
  comments() {
    const build = (node, level) => {
      const t = {
        username: node.querySelector('.fg-inherit').outerText,
        content: node.querySelector('.comment__content').outerText,
        time: new Date(node.querySelector('.comment__main > header > h1 > span > time').dateTime).getTime(),
        children: [],
      };
      node.querySelectorAll('.comment').forEach(c => {
        if (parseInt(c.getAttribute('data-level')) === level + 1) t.children.push(build(c, level + 1));
      });
      return t;
    };
    try { return build(document.querySelector('#main'), 0); } catch (e) { return null; }
  },
  reddit_get_latest_comment_content_by_username(user) {
    let best = null;
    const walk = n => { if (n.username === user && (!best || n.time > best.time)) best = n; n.children.forEach(walk); };
    const tree = this.comments(); if (tree) walk(tree);
    return best ? best.content : '';
  },
  reddit_get_parent_comment_username_of_latest_comment_by_username(user) {
    let best = null, when = -Infinity;
    const walk = n => {
      for (const c of n.children) {
        if (c.username === user) { if (c.time > when) { when = c.time; best = n; } } else { walk(c); }
      }
    };
    const tree = this.comments(); if (tree) walk(tree);
    return best ? best.username : '';
  },
  gitlab_get_project_memeber_role(account) {
    try {
      const names = Array.from(document.querySelectorAll("td[data-label='Account'] span.gl-avatar-labeled-sublabel"));
      const i = names.findIndex(e => e.outerText === '@' + account);
      return document.querySelectorAll('td.col-max-role span')[i].outerText;
    } catch (e) { return ''; }
  },
}"#;

/// Page helpers and how many arguments they take after `__page__`.
const PAGE_HELPERS: &[(&str, usize)] = &[
    ("get_query_text", 1),
    ("get_query_text_lowercase", 1),
    ("shopping_get_product_attributes", 1),
    ("shopping_get_product_price", 0),
    ("shopping_get_num_reviews", 0),
    ("shopping_get_rating_as_percentage", 0),
    ("shopping_get_order_product_name_list", 0),
    ("shopping_get_order_product_quantity", 1),
    ("shopping_get_order_product_option", 2),
    ("reddit_get_latest_comment_content_by_username", 1),
    ("reddit_get_parent_comment_username_of_latest_comment_by_username", 1),
    ("gitlab_get_project_memeber_role", 1),
];

/// What a `func:` call is and how to run it; `last_url` is the page's URL at the check.
pub fn helper(call: &str, last_url: &str) -> Helper {
    let unsupported =
        || Helper::Unsupported(format!("{} is not supported (it needs the site's API)", call.trim()));
    let Some((name, args)) = parse_call(call, last_url) else { return unsupported() };
    if name == "reddit_get_post_url" {
        return match args.as_slice() {
            [Arg::Str(u)] => Helper::Url(reddit_post_url(u)),
            _ => unsupported(),
        };
    }
    if super::shop_api::NAMES.contains(&name.as_str()) {
        let strings: Option<Vec<String>> = args
            .iter()
            .map(|a| match a {
                Arg::Str(s) => Some(s.clone()),
                Arg::Page => None,
            })
            .collect();
        return match strings.and_then(|s| ShopApiCall::parse(&name, &s)) {
            Some(c) => Helper::ShopApi(c),
            None => unsupported(),
        };
    }
    let Some((_, n)) = PAGE_HELPERS.iter().find(|(h, _)| *h == name) else { return unsupported() };
    let strings: Vec<String> = args
        .iter()
        .filter_map(|a| match a {
            Arg::Str(s) => Some(serde_json::Value::String(s.clone()).to_string()),
            Arg::Page => None,
        })
        .collect();
    if args.first() != Some(&Arg::Page) || strings.len() != *n {
        return unsupported();
    }
    Helper::Page(format!(
        "(() => {{ const H = {PAGE_HELPERS_JS}; return H.{name}({}); }})()",
        strings.join(", ")
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn calls_table() {
        let last = "http://reddit:9999/f/books/59421/the-plot/12345";
        let page = |s: &str| matches!(helper(s, last), Helper::Page(js) if js.contains(s.split('(').next().unwrap().trim_start_matches("func:")));
        // (call, what it is)
        assert_eq!(
            helper("func:reddit_get_post_url('__last_url__')", last),
            Helper::Url("http://reddit:9999/f/books/59421/".into())
        );
        assert_eq!(
            helper("func:reddit_get_post_url('http://r/forums')", last),
            Helper::Url("http://r/forums".into())
        );
        assert!(page("func:get_query_text(__page__, '.price')"));
        assert!(page("func:get_query_text_lowercase(__page__, \"#x .y\")"));
        assert!(page("func:shopping_get_product_attributes(__page__, 'manufacturer |OR| brand name')"));
        assert!(page("func:shopping_get_product_price(__page__)"));
        assert!(page("func:shopping_get_order_product_option(__page__, 'B0', 'Size')"));
        assert!(page("func:reddit_get_latest_comment_content_by_username(__page__, 'MarvelsGrantMan136')"));
        assert_eq!(
            helper("func:shopping_get_latest_order_url()", last),
            Helper::ShopApi(ShopApiCall::LatestOrderUrl)
        );
        assert_eq!(
            helper("func:shopping_get_sku_latest_review_text(\"B09QYJJNW2\")", last),
            Helper::ShopApi(ShopApiCall::LatestReview {
                sku: "B09QYJJNW2".into(),
                field: super::super::shop_api::ReviewField::Text
            })
        );
        for bad in [
            "func:shopping_get_latest_order_url(__page__)",
            "func:shopping_get_sku_latest_review_author()",
            "func:shopping_get_mystery('B0')",
            "func:get_query_text(__page__)",
            "func:get_query_text('no page', '.x')",
            "func:os.system('rm')",
            "func:get_query_text(__page__, '.x'",
        ] {
            assert!(
                matches!(helper(bad, last), Helper::Unsupported(m) if m.contains("is not supported")),
                "{bad}"
            );
        }
        // Arguments are passed as JSON strings: quotes inside cannot break out of the script.
        let Helper::Page(js) = helper(r#"func:get_query_text(__page__, 'a\'); alert(1); (\'')"#, last) else {
            panic!()
        };
        assert!(js.contains(r#"H.get_query_text("a'); alert(1); ('")"#), "{js}");
    }
}
