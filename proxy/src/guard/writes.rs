//! The side-effect rule table: which requests act in the world (place an order, pay, book, post, send a
//! message, delete an account) and must not reach a site the user does not own.
//!
//! A request is judged by what it is and what the page showed:
//! - only writes are judged (POST, PUT, PATCH, DELETE); GET, HEAD and OPTIONS always pass;
//! - harmless writes pass first ([`SAFE_PATH`]): search, filters, sign-in and sign-out, tokens,
//!   add-to-cart, wish lists, analytics beacons;
//! - then, among the rules whose methods include the request's ([`RULES`], then the user's file's), the
//!   first whose path pattern matches blocks it; else the first one of whose field-name pattern a form or
//!   JSON field matches; else the first whose label pattern matches the label of the control the agent
//!   used (its text, value or aria-label, sent by the agent as [`CONTROL_HEADER`]).
//!
//! A user file adds rules and harmless paths:
//!
//! ```json
//! { "rules": [ { "id": "tip", "why": "leaves a tip", "methods": ["POST"], "path": "/tip(/|$)",
//!                "fields": "^tip_amount$", "label": "^leave a tip$" } ],
//!   "safe_paths": ["/api/preview"] }
//! ```

use regex::{Regex, RegexBuilder};
use serde::Deserialize;

/// The request header the agent sets while it clicks a control: the control's visible label. The proxy
/// removes it from every request before any handler sees it (the guard gets it as a
/// [`super::ControlLabel`]), so it is never forwarded or recorded.
pub const CONTROL_HEADER: &str = "x-webfreeze-control";

/// Paths of harmless writes, checked before any rule.
pub const SAFE_PATH: &str = r"(?i)(^|[/_.-])(search|find|filter|filters|query|autocomplete|suggest|login|log-in|signin|sign-in|logout|log-out|signout|sign-out|auth|oauth|oauth2|session|sessions|token|csrf|cart/add|add-?to-?cart|addtocart|cart/update|wishlist|compare|collect|beacon|analytics|track|telemetry|log|logs|metrics|rum|graphql/query)([/_.?-]|$)";

/// One built-in rule: (id, why, methods, path, field names, control label). Empty patterns match nothing.
type Row = (&'static str, &'static str, &'static [&'static str], &'static str, &'static str, &'static str);

/// The built-in rules, in the order they are tried.
pub const RULES: &[Row] = &[
    (
        "purchase",
        "places an order or confirms a purchase",
        &["POST", "PUT", "PATCH"],
        r"(^|/)(checkout|place-?order|placeorder|purchase|buy-?now|order/(create|submit|confirm|place)|orders/(create|submit|confirm|place))(/|$|\.)",
        r"^(place_?order|confirm_?order|purchase)$",
        r"^(place (your )?order|buy now|complete (your )?(order|purchase)|confirm (order|purchase)|submit order|purchase)$",
    ),
    (
        "payment",
        "pays or submits card details",
        &["POST", "PUT", "PATCH"],
        r"(^|/)(pay|payment|payments|charge|charges|billing/submit)(/|$|\.)",
        r"^(card_?number|cc_?(number|num)|cvv|cvc|card_?cvc|card_?cvv)$",
        r"^(pay|pay now|pay \S.*|confirm payment|submit payment)$",
    ),
    (
        "booking",
        "books or reserves",
        &["POST", "PUT", "PATCH"],
        r"(^|/)(book|booking|bookings|reserve|reservation|reservations)(/|$|\.)",
        "",
        r"^(book|book now|reserve|reserve now|confirm (booking|reservation)|complete (booking|reservation))$",
    ),
    (
        "post",
        "publishes a post, comment, review or reply",
        &["POST", "PUT"],
        r"(^|/)(submit|post|posts|comment|comments|reply|replies|review|reviews|answer|answers|publish|thread|threads|topic|topics)(/|$|\.)",
        r"^(comment|review|reply|body|content|post|message|text|detail|title)$",
        r"^(post|publish|submit|reply|comment|add comment|post comment|submit review|post review)$",
    ),
    (
        "vote",
        "votes, likes, follows or subscribes",
        &["POST", "PUT"],
        r"(^|/)(vote|upvote|downvote|like|unlike|follow|unfollow|subscribe|star|rate)(/|$|\.)",
        "",
        r"^(upvote|downvote|like|follow|subscribe|star)$",
    ),
    (
        "message",
        "sends a message or email",
        &["POST", "PUT"],
        r"(^|/)(message|messages|send|sendmail|contact|compose|mail|chat|inbox)(/|$|\.)",
        r"^(recipient|recipients|to|subject)$",
        r"^(send|send message|send email|send now)$",
    ),
    (
        "delete-account",
        "deletes or closes an account",
        &["POST", "PUT", "PATCH", "DELETE"],
        r"(delete|remove|close|deactivate|cancel)[-_/]?(account|profile|membership|user)(/|$|\.)",
        "",
        r"^(delete|close|deactivate) (my )?(account|profile)$",
    ),
    (
        "delete-account",
        "deletes or closes an account",
        &["DELETE"],
        r"(^|/)(account|accounts|profile|me|user|users)(/[^/]*)?$",
        "",
        "",
    ),
];

/// A compiled rule.
#[derive(Debug, Clone)]
pub struct WriteRule {
    /// Its id (`purchase`, `post`, ... or the user's).
    pub id: String,
    /// What it blocks, in words.
    pub why: String,
    methods: Vec<String>,
    path: Option<Regex>,
    fields: Option<Regex>,
    label: Option<Regex>,
}

/// What a request is judged by.
#[derive(Debug, Clone, Default)]
pub struct WriteFacts<'a> {
    /// Method, upper case.
    pub method: &'a str,
    /// Path and query.
    pub path: &'a str,
    /// Form or JSON field names of the body (top level).
    pub fields: Vec<String>,
    /// The label of the control the agent used, when it said.
    pub label: Option<&'a str>,
}

/// Why a request was judged a write that acts in the world.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WriteHit {
    /// The rule's id.
    pub rule: String,
    /// What it blocks.
    pub why: String,
    /// What matched: `path`, `field NAME` or `label "TEXT"`.
    pub matched: String,
}

/// The rule table in force.
#[derive(Debug, Clone)]
pub struct WriteRules {
    safe: Vec<Regex>,
    rules: Vec<WriteRule>,
}

/// A rules file could not be used.
#[derive(Debug, thiserror::Error)]
pub enum GuardRulesError {
    /// Reading the file failed.
    #[error("cannot read guard rules file {path}: {source}")]
    Io {
        /// The file.
        path: String,
        /// The error.
        #[source]
        source: std::io::Error,
    },
    /// The file is not valid.
    #[error("guard rules file {path}: {detail}")]
    Invalid {
        /// The file.
        path: String,
        /// What is wrong.
        detail: String,
    },
}

/// A guard rules file as `T`: read from `path`, parsed as JSON; `shape` (the JSON expected) follows a
/// parse error. Returns the file's name for later errors too.
pub(super) fn read_rules<T: serde::de::DeserializeOwned>(
    path: &std::path::Path,
    shape: &str,
) -> Result<(T, String), GuardRulesError> {
    let p = path.display().to_string();
    let text =
        std::fs::read_to_string(path).map_err(|e| GuardRulesError::Io { path: p.clone(), source: e })?;
    Ok((parse_rules(&text, &p, shape)?, p))
}

/// [`read_rules`] on text already read.
pub(super) fn parse_rules<T: serde::de::DeserializeOwned>(
    text: &str,
    path: &str,
    shape: &str,
) -> Result<T, GuardRulesError> {
    serde_json::from_str(text).map_err(|e| GuardRulesError::Invalid {
        path: path.to_string(),
        detail: format!("{e} (expected JSON: {shape})"),
    })
}

/// The JSON a write rules file holds, for errors.
const RULES_SHAPE: &str =
    r#"{"rules": [{"id", "why", "methods", "path", "fields", "label"}], "safe_paths": [...]}"#;

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct RulesFile {
    #[serde(default)]
    rules: Vec<RuleFile>,
    #[serde(default)]
    safe_paths: Vec<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RuleFile {
    id: String,
    why: String,
    #[serde(default = "default_methods")]
    methods: Vec<String>,
    #[serde(default)]
    path: String,
    #[serde(default)]
    fields: String,
    #[serde(default)]
    label: String,
}

fn default_methods() -> Vec<String> {
    ["POST", "PUT", "PATCH", "DELETE"].map(String::from).to_vec()
}

fn pattern(p: &str) -> Result<Option<Regex>, regex::Error> {
    if p.is_empty() {
        return Ok(None);
    }
    RegexBuilder::new(p).case_insensitive(true).build().map(Some)
}

impl WriteRules {
    /// The built-in table.
    pub fn builtin() -> Self {
        let rules = RULES
            .iter()
            .filter_map(|(id, why, methods, path, fields, label)| {
                Some(WriteRule {
                    id: id.to_string(),
                    why: why.to_string(),
                    methods: methods.iter().map(|m| m.to_string()).collect(),
                    path: pattern(path).ok()?,
                    fields: pattern(fields).ok()?,
                    label: pattern(label).ok()?,
                })
            })
            .collect();
        Self { safe: pattern(SAFE_PATH).ok().flatten().into_iter().collect(), rules }
    }

    /// The built-in table plus a user file's rules (tried after the built-in ones) and harmless paths.
    pub fn with_file(path: &std::path::Path) -> Result<Self, GuardRulesError> {
        let (f, p) = read_rules(path, RULES_SHAPE)?;
        Self::builtin().with_rules(f, &p)
    }

    /// The rules in `text` added; `path` names the file in the error.
    #[cfg(test)]
    fn with_text(self, text: &str, path: &str) -> Result<Self, GuardRulesError> {
        self.with_rules(parse_rules(text, path, RULES_SHAPE)?, path)
    }

    /// A rules file's rules added.
    fn with_rules(mut self, f: RulesFile, path: &str) -> Result<Self, GuardRulesError> {
        let invalid = |detail: String| GuardRulesError::Invalid { path: path.to_string(), detail };
        let re = |what: &str, p: &str| pattern(p).map_err(|e| invalid(format!("{what} pattern {p:?}: {e}")));
        for r in f.rules {
            if r.path.is_empty() && r.fields.is_empty() && r.label.is_empty() {
                return Err(invalid(format!(
                    "rule {:?} has no path, fields or label pattern: it would match nothing",
                    r.id
                )));
            }
            self.rules.push(WriteRule {
                path: re("path", &r.path)?,
                fields: re("fields", &r.fields)?,
                label: re("label", &r.label)?,
                methods: r.methods.iter().map(|m| m.to_ascii_uppercase()).collect(),
                id: r.id,
                why: r.why,
            });
        }
        for s in f.safe_paths {
            self.safe.extend(re("safe path", &regex::escape(&s))?);
        }
        Ok(self)
    }

    /// The rule a request breaks, if any (see the module docs for the order).
    pub fn judge(&self, f: &WriteFacts<'_>) -> Option<WriteHit> {
        if !matches!(f.method, "POST" | "PUT" | "PATCH" | "DELETE") {
            return None;
        }
        let path = f.path.split('?').next().unwrap_or(f.path);
        if self.safe.iter().any(|s| s.is_match(path)) {
            return None;
        }
        let label = f.label.map(|l| l.split_whitespace().collect::<Vec<_>>().join(" "));
        let rules = || self.rules.iter().filter(|r| r.methods.iter().any(|m| m == f.method));
        let hit =
            |r: &WriteRule, matched: String| WriteHit { rule: r.id.clone(), why: r.why.clone(), matched };
        // The strongest evidence first: the path, then the fields sent, then the control's label.
        if let Some(r) = rules().find(|r| r.path.as_ref().is_some_and(|p| p.is_match(path))) {
            return Some(hit(r, "path".into()));
        }
        for r in rules() {
            if let Some(name) = r.fields.as_ref().and_then(|p| f.fields.iter().find(|n| p.is_match(n))) {
                return Some(hit(r, format!("field {name}")));
            }
        }
        let l = label?;
        rules()
            .find(|r| r.label.as_ref().is_some_and(|p| p.is_match(&l)))
            .map(|r| hit(r, format!("label {l:?}")))
    }
}

/// The top-level field names of a form or JSON body (nothing for other bodies).
pub fn field_names(content_type: Option<&str>, body: &[u8]) -> Vec<String> {
    let ct = content_type.unwrap_or("").to_ascii_lowercase();
    if ct.contains("json") || body.first() == Some(&b'{') {
        if let Ok(serde_json::Value::Object(o)) = serde_json::from_slice::<serde_json::Value>(body) {
            return o.keys().cloned().collect();
        }
    }
    if ct.contains("x-www-form-urlencoded") || ct.is_empty() {
        return form_urlencoded::parse(body).map(|(k, _)| k.into_owned()).filter(|k| !k.is_empty()).collect();
    }
    if ct.contains("multipart/form-data") {
        let text = String::from_utf8_lossy(body);
        return text
            .split("name=\"")
            .skip(1)
            .filter_map(|s| s.split('"').next())
            .map(str::to_string)
            .collect();
    }
    Vec::new()
}

/// The rule table's test rows: (method, path, content type, body, control label, the rule that must
/// block it or "" for pass). The unit tests check each; each is also a seed of the `guard_rules` fuzz
/// target (`xtask fuzz-seeds`).
pub const EXAMPLES: &[(&str, &str, &str, &str, &str, &str)] = &[
    // Harmless: what tasks need.
    ("GET", "/checkout", "", "", "", ""),
    ("GET", "/search?q=kettle", "", "", "", ""),
    ("POST", "/search", "application/x-www-form-urlencoded", "q=kettle", "Search", ""),
    ("POST", "/catalogsearch/result/filter", "application/json", r#"{"price":"0-20"}"#, "", ""),
    ("POST", "/login", "application/x-www-form-urlencoded", "user=alice&password=x", "Sign in", ""),
    (
        "POST",
        "/customer/account/loginPost/",
        "application/x-www-form-urlencoded",
        "login[username]=a",
        "",
        "",
    ),
    ("POST", "/cart/add", "application/x-www-form-urlencoded", "slug=glass-jar", "Add to cart", ""),
    ("POST", "/checkout/cart/add/uenc/x/product/5/", "application/x-www-form-urlencoded", "qty=1", "", ""),
    ("POST", "/rest/default/V1/integration/admin/token", "application/json", r#"{"username":"a"}"#, "", ""),
    ("POST", "/collect?v=2&tid=G-1", "text/plain", "en=page_view", "", ""),
    ("POST", "/api/graphql/query", "application/json", r#"{"query":"{ me }"}"#, "", ""),
    ("POST", "/newsletter/preview", "application/x-www-form-urlencoded", "q=1", "", ""),
    // Acting in the world.
    ("POST", "/checkout", "application/x-www-form-urlencoded", "", "", "purchase"),
    ("POST", "/checkout/onepage/saveOrder/", "", "", "Place Order", "purchase"),
    ("POST", "/api/v2/tx", "application/json", r#"{"items":[1]}"#, "Place your order", "purchase"),
    ("POST", "/api/v2/tx", "application/json", r#"{"place_order":true}"#, "", "purchase"),
    ("POST", "/payments/intent", "application/json", r#"{"amount":5}"#, "", "payment"),
    ("POST", "/x", "application/x-www-form-urlencoded", "card_number=4111&cvv=1", "", "payment"),
    ("POST", "/hotels/42/book", "application/x-www-form-urlencoded", "nights=2", "", "booking"),
    ("POST", "/api/slots/9", "application/json", "{}", "Reserve now", "booking"),
    ("POST", "/submit", "application/x-www-form-urlencoded", "title=Hello&body=World", "", "post"),
    ("POST", "/f/books/new", "application/x-www-form-urlencoded", "title=x&body=y", "", "post"),
    (
        "POST",
        "/review/product/post/id/red-mug/",
        "application/x-www-form-urlencoded",
        "nickname=Bo",
        "",
        "post",
    ),
    ("POST", "/vote", "application/x-www-form-urlencoded", "id=1", "", "vote"),
    ("POST", "/messages/new", "application/x-www-form-urlencoded", "to=bob&text=hi", "", "message"),
    ("POST", "/api/x", "application/json", r#"{"recipient":"bob"}"#, "", "message"),
    ("DELETE", "/api/account", "", "", "", "delete-account"),
    ("POST", "/settings/delete-account", "", "", "Delete my account", "delete-account"),
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rule_table() {
        let rules = WriteRules::builtin();
        assert_eq!(rules.rules.len(), RULES.len(), "every built-in pattern compiles");
        for (method, path, ct, body, label, want) in EXAMPLES {
            let facts = WriteFacts {
                method,
                path,
                fields: field_names(Some(*ct).filter(|c| !c.is_empty()), body.as_bytes()),
                label: Some(*label).filter(|l| !l.is_empty()),
            };
            let got = rules.judge(&facts).map(|h| h.rule).unwrap_or_default();
            assert_eq!(&got, want, "{method} {path} {body:?} label {label:?}");
        }
    }

    #[test]
    fn a_user_file_adds_rules_and_harmless_paths() {
        let r = WriteRules::builtin()
            .with_text(r#"{"rules":[{"id":"tip","why":"leaves a tip","path":"/tip$"}],"safe_paths":["/checkout/estimate"]}"#, "test")
            .unwrap();
        let judge = |m: &'static str, p: &'static str| {
            r.judge(&WriteFacts { method: m, path: p, ..Default::default() }).map(|h| h.rule)
        };
        assert_eq!(judge("POST", "/order/7/tip"), Some("tip".into()));
        assert_eq!(judge("POST", "/checkout/estimate"), None);
        assert_eq!(judge("POST", "/checkout"), Some("purchase".into()));
        for bad in [
            r#"{"rules":[{"id":"x","why":"y"}]}"#,
            r#"{"rules":[{"id":"x","why":"y","path":"("}]}"#,
            r#"{"nope":1}"#,
        ] {
            assert!(WriteRules::builtin().with_text(bad, "test").is_err(), "{bad}");
        }
    }
}
