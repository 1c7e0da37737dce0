//! What a request's body says about itself (issue 60, the fourth round): flags that make a request
//! harmless or an act whatever its path says, and bodies that change only the user's own view.
//!
//! - [`harmless_flag`]: a sandbox (`sandbox_mode.enable`, `SandboxMode`), a validation only
//!   (`validate=true`), a plan that cannot apply (`plan-only`), and, on a POST that creates, an unpublished
//!   draft (`published: false`, `publish: false`, `status: draft`) change nothing anyone else sees. The
//!   unpublished flags are read on a POST only: on a PATCH, `published: false` takes a public thing down.
//! - [`act_flag`]: a flag that says the request is the act (`_place: true`, `publish: true`,
//!   `published: true`, a `status` of `publish`, `outbox`, `about_to_send`, `scheduled`): the order placed,
//!   the post published, the mail sent, whatever the path's words say (an order resource patched, a
//!   document created); never under a search's criteria (`filter.status: published` asks for posts).
//! - [`own_view`]: a PATCH or PUT whose every field is the user's own view of the site (preferences, a
//!   theme, a language, a read position, notification settings) changes nothing another user sees.

/// Leaf keys (lower case) whose true value makes any request a sandbox or a validation.
const SANDBOX_KEYS: &[&str] =
    &["sandboxmode", "sandbox", "sandbox_mode", "validate", "plan-only", "plan_only"];

/// Leaf keys whose false value makes a created thing an unpublished draft.
const PUBLISH_KEYS: &[&str] = &["publish", "published", "is_published", "ispublished"];

/// `status` values of a created thing that nobody else sees yet.
const DRAFT_STATUS: &[&str] = &["draft", "drafts", "unpublished"];

/// `status` values that publish or send.
const ACT_STATUS: &[&str] = &["publish", "published", "outbox", "about_to_send", "scheduled", "send"];

/// Leaf keys (`-` read as `_`) that schedule a publication or a send: it happens later, unattended.
const SCHEDULE_KEYS: &[&str] = &[
    "schedule_date",
    "scheduled_at",
    "schedule_at",
    "publish_at",
    "send_at",
    "scheduled_time",
    "scheduled_publish_time",
];

/// Parents under which a flag is a search's criterion, not the request's own act.
const CRITERIA: &[&str] = &["filter", "query", "where", "search", "criteria", "conditions", "facet"];

/// Leaf keys whose true value is the act itself (Commerce Layer's `_place` on an order).
const ACT_KEYS: &[(&str, &str)] = &[
    ("_place", "purchase"),
    ("place_order", "purchase"),
    ("publish", "post"),
    ("published", "post"),
    // A quiz attempt turned in (Moodle's `finishattempt=1`).
    ("finishattempt", "post"),
];

fn truthy(v: &str) -> bool {
    matches!(v.to_ascii_lowercase().as_str(), "true" | "1" | "yes" | "on")
}

fn falsy(v: &str) -> bool {
    matches!(v.to_ascii_lowercase().as_str(), "false" | "0" | "no" | "off")
}

/// Split a leaf's key path (`mail_settings.sandbox_mode.enable`) into its leaf and its parent.
fn leaf_and_parent(k: &str) -> (&str, &str) {
    let mut it = k.rsplit('.');
    (it.next().unwrap_or(k), it.next().unwrap_or(""))
}

/// Whether a request records the user's cookie or tracking consent (a path word `consent`, or a consent
/// service's host: `consent.api.example`): the site's own bookkeeping of a banner's answer, whatever its
/// `action` says (`onAcceptAllServices`).
pub(crate) fn consent_record(host: &str, path: &str) -> bool {
    host.to_ascii_lowercase().starts_with("consent.")
        || path.split(['/', '?', '.', '-']).any(|s| {
            let s = s.to_ascii_lowercase();
            s == "consent" || s == "consents" || s.ends_with("-consent") || s.ends_with("_consent")
        })
}

/// What a batch envelope's nested requests do (`{"requests": [{"path": ..., "method": ..., "body": ...}]}`,
/// WooCommerce's Store API batch): `Some(None)` when every nested request is under the shopper's cart,
/// `Some(Some(rule))` when one places an order; `None` when the body is no batch or says neither.
pub(crate) fn batch(leaves: &[(String, String)]) -> Option<Option<&'static str>> {
    let paths: Vec<String> = leaves
        .iter()
        .filter(|(k, _)| k.starts_with("requests.") && k.ends_with(".path") && k.matches('.').count() == 2)
        .map(|(_, v)| v.to_ascii_lowercase())
        .collect();
    if paths.is_empty() {
        return None;
    }
    if paths.iter().any(|p| p.contains("checkout") || p.contains("/order")) {
        return Some(Some("purchase"));
    }
    paths.iter().all(|p| p.split('/').any(|s| matches!(s, "cart" | "basket"))).then_some(None)
}

/// Whether a request's flags (query `params` and body `leaves`, keys lower case) make it harmless (see
/// the module docs); `method` upper case.
pub(crate) fn harmless_flag(method: &str, params: &[(String, String)], leaves: &[(String, String)]) -> bool {
    params.iter().chain(leaves).any(|(k, v)| {
        let (leaf, parent) = leaf_and_parent(k);
        let sandbox = (SANDBOX_KEYS.contains(&leaf) && truthy(v))
            || (leaf == "enable" && SANDBOX_KEYS.contains(&parent) && truthy(v));
        let status = leaf.trim_start_matches('_') == "status" || leaf == "post_status";
        let draft = method == "POST"
            && ((PUBLISH_KEYS.contains(&leaf) && falsy(v))
                || (status && DRAFT_STATUS.contains(&v.to_ascii_lowercase().as_str()))
                || (leaf == "draft" && truthy(v)));
        sandbox || draft
    })
}

/// The act a request's flags say it is (see the module docs): the rule and the flag.
pub(crate) fn act_flag(leaves: &[(String, String)]) -> Option<(&'static str, String)> {
    leaves.iter().find_map(|(k, v)| {
        // A search's or a listing's criteria (`filter.status: published`) ask for things, they do none.
        if k.split('.').any(|p| CRITERIA.iter().any(|c| p.starts_with(c))) {
            return None;
        }
        let (leaf, _) = leaf_and_parent(k);
        // A content store's mutations (`{"mutations": [{"delete": {...}}]}`, Sanity's and the like).
        let parts: Vec<&str> = k.split('.').collect();
        if let Some(w) = parts.windows(3).find(|w| w[0] == "mutations" && w[1].parse::<usize>().is_ok()) {
            if matches!(w[2], "create" | "createorreplace" | "createifnotexists" | "patch" | "delete") {
                let rule = if w[2] == "delete" { "delete" } else { "post" };
                return Some((rule, format!("mutation {}", w[2])));
            }
        }
        if let Some((_, rule)) = ACT_KEYS.iter().find(|(a, _)| *a == leaf).filter(|_| truthy(v)) {
            return Some((*rule, format!("flag {k}")));
        }
        if SCHEDULE_KEYS.contains(&leaf.replace('-', "_").as_str()) && !v.is_empty() && !falsy(v) {
            return Some(("post", format!("scheduled by {k}")));
        }
        (leaf == "status" && ACT_STATUS.contains(&v.to_ascii_lowercase().as_str()))
            .then(|| ("message", format!("status {v}")))
    })
}

/// First words of a control's label that commit what its form holds (`Submit`, `Save`, `Create ticket`,
/// `Confirm`, `Run now`): on a write that nothing else names, the button says it is no read. Labels that
/// name a draft or a preview keep it a draft.
const COMMIT_WORDS: &[&str] = &[
    "submit",
    "create",
    "confirm",
    "save",
    "run",
    "deploy",
    "schedule",
    "unlock",
    "abort",
    "build",
    "cast",
    "endorse",
    "freeze",
    "purge",
    "clock",
    "approve",
    "finish",
    "register",
    "enroll",
    "enrol",
    "donate",
    // The same in the languages of the tuning tables' sites (submit, confirm, validate, send, sign).
    "absenden",
    "einreichen",
    "bestätigen",
    "unterschreiben",
    "valider",
    "confirmer",
    "soumettre",
    "envoyer",
    "signer",
    "confirmar",
    "enviar",
    "firmar",
    "conferma",
    "invia",
    "inviare",
    "bevestigen",
    "verzenden",
    "versturen",
    "zatwierdź",
    "wyślij",
    // The twelfth round: renew, redeem, sponsor; confirm (Finnish), renew (Spanish), share (Polish).
    "renew",
    "redeem",
    "sponsor",
    "vahvista",
    "renovar",
    "udostępnij",
    // The thirteenth round: issue (Portuguese), submit (Portuguese), apply (Dutch), invest, enter a draw.
    "emitir",
    "submeter",
    "solliciteer",
    "invest",
    "enter",
    // The fourteenth round: confirm (Turkish), pay (Romanian, Polish).
    "onayla",
    "plătește",
    "wpłać",
];

/// Last words of a control's label that commit, in languages that put the verb last (`Angebot annehmen`,
/// `Schaden melden`, `Order senden`).
const COMMIT_LAST_WORDS: &[&str] = &[
    "annehmen",
    "melden",
    "senden",
    "absenden",
    "einreichen",
    "bestätigen",
    "abschließen",
    "übermitteln",
    "wechseln",
    "kopen",
];

/// First words of a control's label that read (a search, a filter, results shown), in the same languages.
const READ_LABEL_WORDS: &[&str] = &[
    "search",
    "find",
    "filter",
    "show",
    "see",
    "view",
    "browse",
    "check",
    "calculate",
    "compare",
    "rechercher",
    "chercher",
    "trouver",
    "afficher",
    "suchen",
    "finden",
    "anzeigen",
    "buscar",
    "ver",
    "cerca",
    "cercare",
    "trova",
    "zoeken",
    "vind",
    "szukaj",
    "pesquisar",
    "procurar",
    "検索",
    "搜索",
    "검색",
];

/// The label, if its first word reads (see [`READ_LABEL_WORDS`]).
pub(crate) fn read_label(label: Option<&str>) -> bool {
    let Some(l) = label.map(|l| l.trim().to_lowercase()) else { return false };
    let ws: Vec<&str> = l.split(|c: char| !c.is_alphanumeric()).filter(|w| !w.is_empty()).collect();
    let first = ws.first().copied().unwrap_or("");
    // A search's verb anywhere (`Tickets finden`) unless the label leads with a commit (`Save search`).
    let finds = ws.iter().any(|w| {
        matches!(*w, "search" | "find" | "finden" | "suchen" | "rechercher" | "buscar" | "cerca" | "zoeken")
    });
    // `Apply filters`; a cart's, a wish list's or a watch list's own button (`Add to cart`, `My List`).
    READ_LABEL_WORDS.contains(&first)
        || (finds && !COMMIT_WORDS.contains(&first))
        || (first == "apply" && ws.iter().any(|w| w.starts_with("filter")))
        || ws.iter().any(|w| matches!(*w, "cart" | "basket" | "bag" | "wishlist" | "watchlist"))
        || l == "my list"
}

/// The label, if its first word commits (see [`COMMIT_WORDS`]).
pub(crate) fn commit_label(label: Option<&str>) -> Option<&str> {
    let l = label?.trim();
    let lower = l.to_lowercase();
    let mut ws = lower.split(|c: char| !c.is_alphanumeric()).filter(|w| !w.is_empty());
    let first = ws.next()?;
    let rest: Vec<&str> = ws.collect();
    let draft = rest.iter().any(|w| matches!(*w, "draft" | "drafts" | "preview" | "for" | "later"));
    // A verb last (German), or a Japanese label that confirms (`座席を確定する`).
    let last = rest.last().is_some_and(|w| COMMIT_LAST_WORDS.contains(w)) || l.contains("確定");
    ((COMMIT_WORDS.contains(&first) || last) && !draft).then_some(l)
}

/// Whether a path names the user's preferences (`/user/preferences`, `DisplayPreferences`,
/// `account_prefs_update.php`) and no act besides (an unsubscribe under preferences acts).
pub(crate) fn own_view_path(path: &str) -> bool {
    let ws: Vec<String> = path.split('/').flat_map(super::acts::words).collect();
    ws.iter().any(|w| matches!(w.as_str(), "preferences" | "preference" | "prefs"))
        && !ws.iter().any(|w| {
            matches!(
                w.as_str(),
                "unsubscribe"
                    | "subscribe"
                    | "optout"
                    | "delete"
                    | "remove"
                    | "cancel"
                    | "close"
                    | "deactivate"
            )
        })
}

/// Whether an RPC's function names the user's preferences (Moodle's
/// `wsfunction=core_user_update_user_preferences`).
pub(crate) fn names_preferences(leaves: &[(String, String)]) -> bool {
    leaves.iter().any(|(k, v)| matches!(k.as_str(), "wsfunction" | "method" | "action") && own_view_path(v))
}

/// Whether a write changes only the session's cart or basket: a PUT, PATCH or DELETE under it, or a POST
/// of a line operation (`/cart/remove`, `/cart/update-item`), unless its action pays, orders or books
/// (`/cart/purchase`).
pub(crate) fn own_cart_write(method: &str, path: &str, idents: &[String]) -> bool {
    use super::acts::{classify, words, Says};
    let pays =
        matches!(idents.first().map(|i| classify(i)), Some(Says::Act("purchase" | "payment" | "booking")));
    let line_op = method == "POST"
        && idents.first().is_some_and(|i| {
            words(i).iter().all(|w| {
                matches!(
                    w.as_str(),
                    "remove"
                        | "delete"
                        | "update"
                        | "add"
                        | "set"
                        | "change"
                        | "clear"
                        | "empty"
                        | "item"
                        | "items"
                        | "line"
                        | "lines"
                        | "quantity"
                        | "qty"
                )
            })
        });
    (matches!(method, "DELETE" | "PUT" | "PATCH") || line_op) && cart_path(path) && !pays
}

/// Whether a path is under the session's cart or basket (`/baskets/{id}/shipments/{id}`).
pub(crate) fn cart_path(path: &str) -> bool {
    path.split('/')
        .flat_map(super::acts::words)
        .any(|w| matches!(super::acts::singular(&w).as_ref(), "cart" | "basket" | "bag" | "trolley"))
}

/// Fields of the user's own view of a site (lower case; a key that starts with one of these counts).
const OWN_VIEW: &[&str] = &[
    "preferences",
    "unread",
    "is_read",
    "isread",
    "played",
    "position_ms",
    "positionms",
    "dateformat",
    "date_format",
    "timeformat",
    "time_format",
    "week_start",
    "weekstart",
    "user_option",
    "autoplay",
    "entries_per_page",
    "per_page",
    "page_size",
    "appearance",
    "theme",
    "language",
    "locale",
    "timezone",
    "time_zone",
    "lastread",
    "last_read",
    "notify_",
    "email_notifications",
    "color_scheme",
    "colorscheme",
    "font_size",
    "density",
];

/// Whether a PATCH or PUT body (`leaves`) changes only the user's own view (see the module docs): every
/// field under a preference, or itself one, besides a JSON:API envelope's `type` and `id`.
pub(crate) fn own_view(leaves: &[(String, String)]) -> bool {
    let own = |k: &str| {
        k.split('.').any(|part| {
            let part = part.trim_end_matches(|c: char| c.is_ascii_digit());
            OWN_VIEW.iter().any(|o| part.starts_with(o))
        })
    };
    // An envelope's type and ids (`data.id`, `eid`, `folderId`): what the change is to, not the change.
    let envelope = |k: &str| {
        matches!(k, "data.type" | "type")
            || k.rsplit('.').next().is_some_and(|l| {
                l.ends_with("id") && !matches!(l, "paid" | "valid" | "invalid" | "void" | "bid" | "avoid")
            })
    };
    let fields: Vec<&str> = leaves.iter().map(|(k, _)| k.as_str()).filter(|k| !envelope(k)).collect();
    !fields.is_empty() && fields.iter().all(|k| own(k))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kv(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
        pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()
    }

    #[test]
    fn flags_that_say_what_a_request_is() {
        type Row = (&'static str, &'static str, Vec<(String, String)>, bool, Option<&'static str>);
        let rows: Vec<Row> = vec![
            ("sandboxed send", "POST", kv(&[("mail_settings.sandbox_mode.enable", "true")]), true, None),
            ("sandbox flag", "POST", kv(&[("sandboxmode", "true")]), true, None),
            ("validation only", "POST", kv(&[("validate", "true")]), true, None),
            ("a plan that cannot apply", "POST", kv(&[("data.attributes.plan-only", "true")]), true, None),
            ("an unpublished draft", "POST", kv(&[("article.published", "false")]), true, None),
            ("a draft status", "POST", kv(&[("status", "draft")]), true, None),
            ("a draft by its CMS status", "POST", kv(&[("title", "x"), ("_status", "draft")]), true, None),
            (
                "a scheduled post",
                "POST",
                kv(&[("content", "v2"), ("schedule-date", "next-free-slot")]),
                false,
                Some("post"),
            ),
            ("an unscheduled post", "POST", kv(&[("content", "v2"), ("send_at", "false")]), false, None),
            ("unpublishing a post", "PATCH", kv(&[("published", "false")]), false, None),
            ("a published article", "POST", kv(&[("article.published", "true")]), false, Some("post")),
            ("an order placed", "PATCH", kv(&[("data.attributes._place", "true")]), false, Some("purchase")),
            ("a mail to the outbox", "POST", kv(&[("status", "outbox")]), false, Some("message")),
            ("a sandbox turned off", "POST", kv(&[("sandbox_mode.enable", "false")]), false, None),
            ("nothing said", "POST", kv(&[("title", "Hello")]), false, None),
            ("a search for published posts", "POST", kv(&[("filter.status", "published")]), false, None),
        ];
        for (name, method, leaves, harmless, act) in rows {
            assert_eq!(harmless_flag(method, &[], &leaves), harmless, "{name}");
            assert_eq!(act_flag(&leaves).map(|a| a.0), act, "{name}");
        }
    }

    #[test]
    fn labels_that_commit_and_paths_of_ones_own() {
        let labels: &[(&str, bool)] = &[
            ("Submit", true),
            ("Create ticket", true),
            ("Run now", true),
            ("Save", true),
            ("Save draft", false),
            ("Save for later", false),
            ("Search", false),
            ("Add to cart", false),
            ("Valider ma déclaration", true),
            ("Bestätigen", true),
            // The verb last (German), a Japanese confirmation; a German log-out is no commit.
            ("Angebot annehmen", true),
            ("Schaden melden", true),
            ("座席を確定する", true),
            ("Abmelden", false),
            ("Renew now", true),
        ];
        for (l, want) in labels {
            assert_eq!(commit_label(Some(l)).is_some(), *want, "{l}");
        }
        for (l, want) in
            [("Search", true), ("Rechercher", true), ("検索", true), ("Submit", false), ("", false)]
        {
            assert_eq!(read_label(Some(l)), want, "{l}");
        }
        let paths: &[(&str, bool, bool)] = &[
            ("/api/v4/user/preferences", true, false),
            ("/DisplayPreferences/usersettings", true, false),
            ("/bugs/account_prefs_update.php", true, false),
            ("/preferences/email/unsubscribe", false, false),
            ("/checkout/shopper-baskets/v1/baskets/a1/shipments/me", false, true),
            ("/api/carts/7/items/2", false, true),
            ("/api/orders/7", false, false),
        ];
        for (p, prefs, cart) in paths {
            assert_eq!((own_view_path(p), cart_path(p)), (*prefs, *cart), "{p}");
        }
    }

    #[test]
    fn a_body_of_the_users_own_view() {
        let rows: Vec<(Vec<(String, String)>, bool)> = vec![
            (kv(&[("appearance", "dark"), ("theme_dark", "Default")]), true),
            (kv(&[("data.type", "users"), ("data.attributes.preferences.notify_mentions", "false")]), true),
            (kv(&[("data.type", "discussions"), ("data.attributes.lastreadpostnumber", "15")]), true),
            (kv(&[("appearance", "dark"), ("email", "new@example.com")]), false),
            (kv(&[("data.attributes.title", "New title")]), false),
            (kv(&[("data.type", "users")]), false),
        ];
        for (leaves, want) in rows {
            assert_eq!(own_view(&leaves), want, "{leaves:?}");
        }
    }

    /// Consent records pass; a batch is what its nested requests do.
    #[test]
    fn consent_records_and_batches() {
        assert!(consent_record("", "/consent/uw/3"));
        assert!(consent_record("", "/api/cookie-consent"));
        assert!(consent_record("", "/choice/consent-all"));
        assert!(consent_record("consent.api.example", "/record"));
        assert!(!consent_record("", "/api/consentforms/sign/extra"));
        let cart = kv(&[("requests.0.path", "/wc/store/v1/cart/add-item"), ("requests.0.body.id", "2")]);
        assert_eq!(batch(&cart), Some(None));
        let order = kv(&[
            ("requests.0.path", "/wc/store/v1/cart/add-item"),
            ("requests.1.path", "/wc/store/v1/checkout"),
        ]);
        assert_eq!(batch(&order), Some(Some("purchase")));
        assert_eq!(batch(&kv(&[("requests.0.path", "/wp/v2/posts")])), None);
        assert_eq!(batch(&kv(&[("path", "/cart")])), None);
    }
}
