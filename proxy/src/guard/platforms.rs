//! What a request does on the web platforms agents meet most (Magento, WooCommerce, Shopify, MediaWiki,
//! WordPress, Discourse, GitLab, Reddit-like forums such as Postmill): the strongest evidence the side-effect
//! guard has, tried before the form and the path ([`super::writes`]). Each row names a request by its path
//! (and, where the platform routes by a parameter, by that parameter) and says what it does: harmless (a
//! search, a log-in, a cart change that stays in the session, telemetry) or the rule it breaks.
//!
//! The rows come from the platforms' public routes (their documented REST APIs and the forms their pages
//! serve); `cases` holds one request per row as a test.

use regex::{Regex, RegexBuilder};

/// One row: (platform, methods, path-and-query pattern, the rule it breaks or "" for harmless, why).
type Row = (&'static str, &'static [&'static str], &'static str, &'static str, &'static str);

const W: &[&str] = &["POST", "PUT", "PATCH"];
const ALL: &[&str] = &["POST", "PUT", "PATCH", "DELETE"];

/// The table, first match decides.
pub const ROWS: &[Row] = &[
    // Magento 2 (WebArena's shopping site and admin).
    (
        "magento",
        W,
        r"^/checkout/cart/(add|updatepost|updateitemoptions|couponpost|delete|configure|estimatepost|estimateupdatepost)(/|$)",
        "",
        "changes the session's cart",
    ),
    ("magento", W, r"^/checkout/sidebar/(removeitem|updateitemqty)(/|$)", "", "changes the session's cart"),
    (
        "magento",
        ALL,
        r"^/rest/[^/]+/v1/(guest-)?carts/[^/]+/(items|coupons|estimate-shipping-methods|totals-information|shipping-information)(/|$)",
        "",
        "changes the session's cart or asks a shipping estimate",
    ),
    (
        "magento",
        W,
        r"^/rest/[^/]+/v1/(guest-)?carts/[^/]+/(payment-information|order)(/|$)",
        "purchase",
        "places an order",
    ),
    (
        "magento",
        W,
        r"^/checkout/onepage/saveorder(/|$)|^/paypal/express/placeorder(/|$)",
        "purchase",
        "places an order",
    ),
    ("magento", W, r"^/customer/account/(loginpost|logout|forgotpasswordpost)(/|$)", "", "logs in or out"),
    ("magento", W, r"^/customer/account/createpost(/|$)", "account", "creates an account"),
    ("magento", W, r"^/customer/(account/editpost|address/formpost)(/|$)", "account", "changes an account"),
    ("magento", W, r"^/review/product/post(/|$)", "post", "publishes a product review"),
    ("magento", W, r"^/newsletter/subscriber/new(/|$)", "vote", "subscribes to a newsletter"),
    ("magento", W, r"^/(contact/index/post|sendfriend/product/sendmail)(/|$)", "message", "sends a message"),
    (
        "magento",
        W,
        r"^/(wishlist/index/(add|remove|update)|catalog/product_compare/(add|remove))(/|$)",
        "",
        "changes a wish list or comparison",
    ),
    ("magento", W, r"^/(catalogsearch|search/ajax)/", "", "searches"),
    ("magento", W, r"^/customer/section/load(/|$)|^/page_cache/block/", "", "loads page sections"),
    // VTEX: the orderForm is the shopper's cart; its transaction places the order.
    ("vtex", W, r"(?i)/api/checkout/pub/orderform/[^/]+/transaction(/|$)", "purchase", "places an order"),
    (
        "vtex",
        ALL,
        r"(?i)/api/checkout/pub/orderform(/[^/?]+)?(/(items|coupons|attachments|customdata|profile|clearmessages)(/|$|\?)|/?$|\?)",
        "",
        "changes the shopper's cart (the orderForm)",
    ),
    // WooCommerce (routes by ?wc-ajax=).
    (
        "woocommerce",
        W,
        r"[?&]wc-ajax=(add_to_cart|remove_from_cart|apply_coupon|remove_coupon|update_shipping_method|update_order_review|get_refreshed_fragments|get_variation)(&|$)",
        "",
        "changes the session's cart",
    ),
    ("woocommerce", W, r"[?&]wc-ajax=checkout(&|$)", "purchase", "places an order"),
    ("woocommerce", W, r"(^|/)wp-json/wc/store/(v1/)?cart/", "", "changes the session's cart"),
    ("woocommerce", W, r"(^|/)wp-json/wc/store/(v1/)?checkout", "purchase", "places an order"),
    // WordPress.
    ("wordpress", W, r"^/wp-comments-post\.php", "post", "publishes a comment"),
    (
        "wordpress",
        W,
        r"^/wp-login\.php($|\?(?:.*&)?action=(login|logout|lostpassword)?(&|$))",
        "",
        "logs in or out",
    ),
    ("wordpress", W, r"^/wp-login\.php\?(?:.*&)?action=register", "account", "creates an account"),
    (
        "wordpress",
        W,
        r"^/wp-admin/admin-ajax\.php\?(?:.*&)?action=(heartbeat|query-attachments)",
        "",
        "keeps the session alive",
    ),
    (
        "wordpress",
        W,
        r"^/wp-json/wp/v2/(posts|pages)/[0-9]+/autosaves(/|\?|$)",
        "",
        "the editor's autosave: a private revision",
    ),
    ("wordpress", W, r"^/wp-json/wp/v2/(posts|pages|comments|media)(/|\?|$)", "post", "publishes content"),
    (
        "google forms",
        W,
        r"^/forms/(u/[0-9]+/)?d/(e/)?[^/]+/formresponse(\?|$)",
        "post",
        "submits a form response",
    ),
    // Shopify.
    ("shopify", ALL, r"^/cart(/(add|change|update|clear))?(\.js)?(\?|$)", "", "changes the session's cart"),
    ("shopify", W, r"^/(localization|search)(\?|/|$)", "", "sets the locale or searches"),
    (
        "shopify",
        W,
        r"^/checkouts?/.*/(processing|payments|complete)|^/checkouts/[^/]+/?$",
        "purchase",
        "places an order",
    ),
    ("shopify", W, r"^/account/login(\?|$)|^/account/recover(\?|$)", "", "logs in"),
    ("shopify", W, r"^/account(\?|$)", "account", "creates an account"),
    ("shopify", W, r"^/contact(\?|$)", "message", "sends a message to the shop"),
    // MediaWiki (routes by ?action= and Special pages).
    (
        "mediawiki",
        W,
        r"[?&]title=special:(userlogin|search)|^/wiki/special:(userlogin|search)",
        "",
        "logs in or searches",
    ),
    (
        "mediawiki",
        W,
        r"[?&]title=special:createaccount|^/wiki/special:createaccount",
        "account",
        "creates an account",
    ),
    ("mediawiki", W, r"[?&]title=special:emailuser|^/wiki/special:emailuser", "message", "emails a user"),
    ("mediawiki", W, r"/index\.php\?(?:.*&)?action=(submit|edit)(&|$)", "post", "saves a page edit"),
    (
        "mediawiki",
        W,
        r"/index\.php\?(?:.*&)?action=(delete|protect)(&|$)",
        "delete",
        "deletes or protects a page",
    ),
    ("mediawiki", W, r"/index\.php\?(?:.*&)?action=(watch|unwatch)(&|$)", "vote", "watches a page"),
    (
        "mediawiki",
        W,
        r"/api\.php\?(?:.*&)?action=(query|parse|opensearch|login|clientlogin|compare|expandtemplates|tokens|visualeditor)(&|$)",
        "",
        "reads through the API or logs in",
    ),
    (
        "mediawiki",
        W,
        r"/api\.php\?(?:.*&)?action=(edit|upload|move|createaccount|emailuser|delete|watch|thank)(&|$)",
        "post",
        "changes the wiki",
    ),
    ("mediawiki", W, r"^/w/rest\.php/v1/search/", "", "searches"),
    // Discourse.
    (
        "discourse",
        W,
        r"^/(session|session/forgot_password|auth/[^/]+/callback)(\.json)?(\?|$)",
        "",
        "logs in",
    ),
    (
        "discourse",
        W,
        r"^/(topics/timings|message-bus/[^/]+/poll|presence/(update|get)|drafts(\.json)?|composer/mentions)(\?|/|$)",
        "",
        "telemetry or a private draft",
    ),
    ("discourse", W, r"^/posts(\.json)?(\?|$)", "post", "publishes a post"),
    ("discourse", W, r"^/post_actions(\.json)?(\?|$)", "vote", "likes or flags a post"),
    ("discourse", W, r"^/u(\.json)?(\?|$)", "account", "creates an account"),
    ("discourse", W, r"^/t/[^/]+/[0-9]+/(notifications|bookmark)", "vote", "follows or bookmarks a topic"),
    // GitLab.
    ("gitlab", W, r"^/users/(sign_in|auth/)", "", "logs in"),
    ("gitlab", W, r"^/users(\?|$)", "account", "creates an account"),
    ("gitlab", W, r"^/-/(snowplow|collect_events|track)|^/api/v4/usage_data/", "", "telemetry"),
    ("gitlab", W, r"^/search(/|\?|$)|^/-/autocomplete", "", "searches"),
    (
        "gitlab",
        W,
        r"^/[^?]+/-/(issues|merge_requests|milestones|labels|wikis|snippets)(/|\?|$)|/notes(\?|$)",
        "post",
        "opens an issue, a merge request or a comment",
    ),
    (
        "gitlab",
        W,
        r"^/api/v4/projects/[^/]+/(issues|merge_requests|repository/commits|repository/files|labels|milestones|members)",
        "post",
        "changes a project",
    ),
    (
        "gitlab",
        W,
        r"^/[^?]+/(toggle_star|star)(\.json)?(\?|$)|^/api/v4/projects/[^/]+/star",
        "vote",
        "stars a project",
    ),
    // Reddit-like forums (Postmill, WebArena's forum).
    ("postmill", W, r"^/login_check(\?|$)|^/logout(\?|$)", "", "logs in or out"),
    ("postmill", W, r"^/registration(\?|$)", "account", "creates an account"),
    ("postmill", W, r"^/(sv|cv)/[0-9]+", "vote", "votes"),
    ("postmill", W, r"^/f/[^/]+/(subscribe|unsubscribe)", "vote", "subscribes to a forum"),
    (
        "postmill",
        W,
        r"^/submit(/|\?|$)|^/f/[^/]+/[0-9]+/[^?]*comment|^/comment/",
        "post",
        "publishes a submission or comment",
    ),
    ("postmill", W, r"^/(user/[^/]+/)?message(s)?/|^/send_message", "message", "sends a private message"),
];

/// Payment processors, known by host: (name, host suffix, path pattern of their acts). Their other
/// routes (configuration, sessions, telemetry, fraud signals, previews) are harmless.
const PROCESSORS: &[(&str, &str, &str)] = &[
    (
        "stripe",
        "stripe.com",
        r"^/v1/(payment_intents/[^/]+/(confirm|capture)|payment_pages/[^/]+/confirm|charges|refunds|subscriptions|payment_methods|tokens|sources|setup_intents/[^/]+/confirm|checkout/sessions)(/|\?|$)",
    ),
    (
        "paypal",
        "paypal.com",
        r"/(capture|authorize|refund|payouts|billing/subscriptions|checkout/orders)(/|\?|$)",
    ),
    ("adyen", "adyen.com", r"/(payments|payments/details|refunds|captures|cancels|reversals)(/|\?|$)"),
    ("braintree", "braintreegateway.com", r"/payment_methods/|/transactions"),
    ("square", "squareup.com", r"^/v2/(payments|refunds)(/|\?|$)"),
    ("checkout.com", "api.checkout.com", r"^/(payments|tokens|instruments)(/|\?|$)"),
    ("klarna", "klarna.com", r"/authorizations/[^/]+/order|/orders(/|\?|$)"),
    ("mollie", "mollie.com", r"^/v2/(payments|orders|refunds)(/|\?|$)"),
    ("razorpay", "razorpay.com", r"/payments"),
    ("bigcommerce payments", "payments.bigcommerce.com", r"/payments"),
    ("mangopay", "mangopay.com", r"/(payins|payouts|refunds|transfers|preauthorizations)(/|\?|$)"),
];

/// Form services a site's contact, quote and sign-up forms post to: every POST to them sends the form to
/// the site's owner (Formspree, Formspark, Getform, FormSubmit, Basin, Web3Forms, Formcarry, Static Forms,
/// Netlify's form handler). Hosts, or their parents.
const FORM_BACKENDS: &[&str] = &[
    "formspree.io",
    "submit-form.com",
    "getform.io",
    "formsubmit.co",
    "usebasin.com",
    "api.web3forms.com",
    "formcarry.com",
    "api.staticforms.xyz",
    "forms.netlify.com",
];

/// Whether `host` is a form service's (`FORM_BACKENDS`).
pub fn form_backend(host: &str) -> bool {
    let host = host.to_ascii_lowercase();
    FORM_BACKENDS.iter().any(|h| host == *h || host.ends_with(&format!(".{h}")))
}

/// A payment processor's verdict on a request to `host`: (processor, rule or "" for harmless, why).
/// None when the host is no processor's (or a processor's GraphQL, judged by its operations).
pub fn processor(host: &str, method: &str, path: &str) -> Option<(&'static str, &'static str, &'static str)> {
    let host = host.to_ascii_lowercase();
    let (name, _, acts) =
        PROCESSORS.iter().find(|(_, h, _)| host == *h || host.ends_with(&format!(".{h}")))?;
    if path.contains("graphql") {
        return None;
    }
    let act = method != "GET"
        && RegexBuilder::new(acts).case_insensitive(true).build().is_ok_and(|r| r.is_match(path));
    Some(if act {
        (name, "payment", "pays, charges, refunds or submits card details")
    } else {
        (name, "", "")
    })
}

/// MediaWiki's `api.php`, routed by `action` in its query or its body: (rule or "" for harmless, why).
pub fn mediawiki_api<'f>(
    path: &str,
    field: &dyn Fn(&str) -> Option<&'f str>,
) -> Option<(&'static str, &'static str)> {
    let (route, query) = path.split_once('?').unwrap_or((path, ""));
    if !route.ends_with("/api.php") {
        return None;
    }
    let q =
        |k: &str| form_urlencoded::parse(query.as_bytes()).find(|(n, _)| n == k).map(|(_, v)| v.into_owned());
    let action = q("action").or_else(|| field("action").map(str::to_string))?.to_ascii_lowercase();
    let paction = q("paction").or_else(|| field("paction").map(str::to_string)).unwrap_or_default();
    Some(match action.as_str() {
        "visualeditoredit" if paction == "save" => ("post", "saves a page edit"),
        // VisualEditor's "review your changes" and its serialisations save nothing.
        "visualeditoredit" if matches!(paction.as_str(), "diff" | "serialize" | "serializeforcache") => {
            ("", "")
        }
        "edit"
        | "visualeditoredit"
        | "discussiontoolsedit"
        | "upload"
        | "move"
        | "rollback"
        | "undelete"
        | "protect"
        | "import"
        | "createaccount"
        | "emailuser"
        | "delete"
        | "watch"
        | "thank"
        | "review"
        | "flowthank"
        | "wbeditentity" => ("post", "changes the wiki"),
        // Reads, log-ins, parses and previews, diffs, the editor's edit stash: nothing is saved.
        _ => ("", ""),
    })
}

/// A compiled platform row.
#[derive(Debug, Clone)]
pub struct PlatformRule {
    /// The platform it describes.
    pub platform: &'static str,
    methods: &'static [&'static str],
    pattern: Regex,
    /// The rule it breaks; empty: harmless.
    pub rule: &'static str,
    /// What the request does.
    pub why: &'static str,
}

/// The compiled table.
pub fn compiled() -> Vec<PlatformRule> {
    ROWS.iter()
        .filter_map(|(platform, methods, p, rule, why)| {
            let pattern = RegexBuilder::new(p).case_insensitive(true).build().ok()?;
            Some(PlatformRule { platform, methods, pattern, rule, why })
        })
        .collect()
}

/// The row a request (method, path with its query) matches, if any.
pub fn find<'a>(rules: &'a [PlatformRule], method: &str, path_and_query: &str) -> Option<&'a PlatformRule> {
    rules.iter().find(|r| r.methods.contains(&method) && r.pattern.is_match(path_and_query))
}

#[cfg(test)]
mod tests {
    #[test]
    fn every_row_compiles() {
        assert_eq!(super::compiled().len(), super::ROWS.len());
    }
}
