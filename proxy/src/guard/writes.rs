//! The side-effect rule table: which requests act in the world (place an order, pay, book, post, send a
//! message, delete an account) and must not reach a site the user does not own.
//!
//! A request is judged by what it *does*, strongest evidence first:
//! 1. GET and HEAD only when they name an act and carry a token (`guard::links::judge_link`: a vote link,
//!    an unsubscribe or confirmation link, an invitation accepted), carry a GraphQL mutation, call a
//!    signed query API's write action (`Action=TerminateInstances`), or were clicked on a label that names
//!    an act and carry a secret (`Approve` on a link with its token); OPTIONS never. A form's `_method`
//!    override (`_method=delete`) is the method judged;
//! 2. a label that names an act outranks a path that only sounds like a check (`/Payment/Validate`
//!    pressed as "Valider et payer"); payment processors by host ([`super::platforms::processor`]); the
//!    pressed button (a preview or a diff saves nothing); MediaWiki's `api.php` by its `action`; the site's
//!    own routes where its platform is known ([`super::platforms`]: Magento, WooCommerce, Shopify,
//!    MediaWiki, WordPress, Discourse, GitLab, Reddit-like forums): the first row that matches decides,
//!    harmless or not; GraphQL by its
//!    parsed operations or a persisted operation's name ([`super::graphql::judge_graphql`]); a SQL
//!    statement by its kind (`guard::sql`: `SELECT` reads, `DELETE FROM` writes);
//! 3. the user's rules file (its harmless paths, then its rules), which knows the user's sites;
//! 4. the body at every depth: fields that only an act carries (a card number, an order confirmation, a
//!    recipient, a new password and its confirmation) block; a log-in form (a password without its
//!    confirmation) passes; the user's preferences (`/user/preferences`) pass; a body whose shape is an
//!    act (`guard::bodies`: a trade order, a text to a phone number) blocks; then the control's label
//!    when it names an act; then the words the request
//!    names its action with (a query or body `action`, an RPC method, the path's last words:
//!    [`super::acts::classify`]), a POST to a collection of acts, recipients at any depth, and the verb
//!    (DELETE, PUT, PATCH write unless on the session's own state); a resume attached applies;
//! 5. what the form's action says it is (`guard::table::SAFE_PATH`: a search, results, a filter, a translation, a
//!    quote, a log-in, the session's cart, a preview, telemetry) passes;
//! 6. the control the agent used (its text, value or aria-label, handed over by the agent as
//!    [`CONTROL_HEADER`]): "Place order", "Pay now", "Send message", "Post comment" block, a neutral label
//!    ("Submit", "Go", "Continue") says nothing;
//! 7. the action's path (`guard::table::RULES`): `/checkout`, `/payments`, `/book`, `/comments`, `/vote`, ... block;
//! 8. a published text (a long or multi-line `body`, `comment`, `review`, `message`, `content` or `text`,
//!    or a `title` with a body) blocks as a post;
//! 9. what none of these names: a control whose label reads (`Search`) passes, and so does what
//!    `guard::harmless` reads as harmless (telemetry, a read, the session's own state); a POST with a body
//!    to an API's collection creates ([`super::creates::creates_resource`]); a label that commits its form
//!    (`Submit`, `Save`, `Absenden`; not `Save draft`) writes; what is left is `unnamed`: refused under
//!    strict, else read by the learned judge (`guard::learned`). A flight search posting `from` and `to`,
//!    a job search posting `title`, a translation posting `text` are no acts.
//!
//! A user file adds rules and harmless paths:
//!
//! ```json
//! { "rules": [ { "id": "tip", "why": "leaves a tip", "methods": ["POST"], "path": "/tip(/|$)",
//!                "fields": "^tip_amount$", "label": "^leave a tip$" } ],
//!   "safe_paths": ["/api/preview"] }
//! ```
//!
//! What a request is judged by is `guard::facts`; a user's rules file is read by `guard::rules_file`.

use regex::{Regex, RegexBuilder};

use super::facts::{key_leaf, parent_is_recipient, WriteFacts};
#[cfg(test)]
use super::rules_file::parse_rules;
use super::rules_file::{read_rules, GuardRulesError, RulesFile, RULES_SHAPE};
use super::table::{
    ACT_FIELDS, PASSWORD_FIELD, RESUME, RULES, SAFE_PATH, SAFE_READS, TEXT_FIELDS, TITLE_FIELDS, VERB_SAFE,
};

/// The request header the agent sets while it clicks a control: the control's visible label. The proxy
/// removes it from every request before any handler sees it (the guard gets it as a
/// [`super::ControlLabel`]), so it is never forwarded or recorded.
pub const CONTROL_HEADER: &str = "x-webfreeze-control";
/// The rule of a write no rule names: refused under strict, else read by the learned judge.
pub const UNNAMED: &str = "unnamed";

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

/// Why a request was judged a write that acts in the world.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
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
    platforms: Vec<super::platforms::PlatformRule>,
    safe: Vec<Regex>,
    rules: Vec<WriteRule>,
    user_safe: Vec<Regex>,
    user_rules: Vec<WriteRule>,
    act_fields: Vec<(&'static str, &'static str, Regex)>,
    text_fields: Regex,
    title_fields: Regex,
    password: Regex,
    /// Refuse a write no rule names, instead of letting it pass ([`WriteRules::strict`]).
    strict: bool,
    /// Ask the learned judge of what the rules leave unnamed ([`super::learned`]; off: `without_learned`).
    pub(super) learned: bool,
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
        // The built-in patterns are constants; a table test checks each compiles.
        let re = |p: &str| pattern(p).ok().flatten();
        let never = || Regex::new("$^").unwrap_or_else(|_| unreachable!("a constant pattern"));
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
        Self {
            platforms: super::platforms::compiled(),
            safe: re(SAFE_PATH).into_iter().collect(),
            rules,
            user_safe: Vec::new(),
            user_rules: Vec::new(),
            act_fields: ACT_FIELDS.iter().filter_map(|(id, why, p)| Some((*id, *why, re(p)?))).collect(),
            text_fields: re(TEXT_FIELDS).unwrap_or_else(never),
            title_fields: re(TITLE_FIELDS).unwrap_or_else(never),
            password: re(PASSWORD_FIELD).unwrap_or_else(never),
            strict: false,
            learned: true,
        }
    }

    /// These rules, refusing every POST, PUT, PATCH or DELETE that no rule names, harmful or harmless, as
    /// well as those a rule names as acts (`--strict-write-guard`): for live runs where a missed act costs
    /// more than a refused ordinary request.
    pub fn strict(mut self) -> Self {
        self.strict = true;
        self
    }

    /// Whether these rules refuse what no rule names ([`WriteRules::strict`]).
    pub fn is_strict(&self) -> bool {
        self.strict
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
            self.user_rules.push(WriteRule {
                path: re("path", &r.path)?,
                fields: re("fields", &r.fields)?,
                label: re("label", &r.label)?,
                methods: r.methods.iter().map(|m| m.to_ascii_uppercase()).collect(),
                id: r.id,
                why: r.why,
            });
        }
        for s in f.safe_paths {
            self.user_safe.extend(re("safe path", &regex::escape(&s))?);
        }
        Ok(self)
    }

    /// The rule a request breaks, if any (see the module docs for the order).
    pub fn judge(&self, f: &WriteFacts<'_>) -> Option<WriteHit> {
        self.judge_as(f, self.strict)
    }

    /// [`WriteRules::judge`], with a write no rule names refused as `unnamed` (`strict`) or passed.
    pub(super) fn judge_as(&self, f: &WriteFacts<'_>, strict: bool) -> Option<WriteHit> {
        use super::acts::{classify, Says};
        use super::graphql::judge_graphql;
        let hit = |rule: &str, why: &str, matched| WriteHit { rule: rule.into(), why: why.into(), matched };
        let why_of =
            |rule: &str| RULES.iter().find(|r| r.0 == rule).map(|r| r.1).unwrap_or("acts in the world");
        if matches!(f.method, "GET" | "HEAD") {
            // A GraphQL mutation by GET, a link that acts, a labelled link with its token (`guard::links`).
            let label_act = |label: Option<&str>| {
                Self::by_rules(&self.rules, &WriteFacts { label, method: "POST", ..Default::default() }, "")
            };
            return super::links::judge_link(f, label_act);
        }
        if !matches!(f.method, "POST" | "PUT" | "PATCH" | "DELETE") {
            return None;
        }
        // 1b. The browser's own reports (CSP violations, the Reporting API, network errors) never act.
        let ct = f.content_type.unwrap_or("").to_ascii_lowercase();
        if ct.starts_with("application/csp-report") || ct.starts_with("application/reports+json") {
            return None;
        }
        // 2a. Payment processors, by host.
        if let Some((p, rule, why)) = super::platforms::processor(f.host, f.method, f.path) {
            return (!rule.is_empty()).then(|| hit(rule, why, format!("{p} route")));
        }
        // 2a'. A dry run, a read receipt or a typing indicator changes nothing (`guard::creates`).
        let params: Vec<(String, String)> =
            form_urlencoded::parse(f.path.split_once('?').unwrap_or_default().1.as_bytes())
                .map(|(k, v)| (k.to_ascii_lowercase(), v.into_owned()))
                .collect();
        // A label that names an act outranks a path that only sounds like a check (`/Payment/Validate`
        // pressed as "Valider et payer"); a dry run's flag still wins.
        let act_label = Self::by_rules(
            &self.rules,
            &WriteFacts { label: f.label, method: f.method, ..Default::default() },
            "",
        );
        let dry_path_only = super::creates::dry_run(f.path.split('?').next().unwrap_or(f.path), &[], &[])
            && !super::creates::dry_run("", &params, &f.leaves);
        if dry_path_only && act_label.is_some() {
            return act_label;
        }
        if super::creates::dry_run(f.path, &params, &f.leaves)
            || super::creates::own_signal(&f.leaves)
            || super::flags::harmless_flag(f.method, &params, &f.leaves)
            || super::flags::consent_record(f.host, f.path)
        {
            return None;
        }
        // 2a''. A form service: the form goes to the site's owner.
        if f.method == "POST" && super::platforms::form_backend(f.host) {
            return Some(hit(
                "message",
                "sends a form to the site's owner",
                format!("form service {}", f.host),
            ));
        }
        // 2a'''. A batch of requests is what its requests do: a cart's, or an order.
        match super::flags::batch(&f.leaves) {
            Some(Some(rule)) => return Some(hit(rule, why_of(rule), "a batched request".into())),
            Some(None) => return None,
            None => {}
        }
        // 2b. A form's pressed button: a preview or a diff saves nothing (MediaWiki's wpPreview/wpDiff,
        // phpBB's preview, WordPress's wp-preview, Drupal's `op=Preview`), a save button saves.
        let field = |n: &str| f.leaves.iter().find(|(k, v)| k == n && !v.is_empty()).map(|(_, v)| v.as_str());
        let previewed = ["wppreview", "wpdiff", "preview", "wp-preview"].iter().any(|n| field(n).is_some())
            // A form's pressed preview button named in brackets (DokuWiki's `do[preview]`).
            || f.leaves.iter().any(|(k, v)| !v.is_empty() && (k.ends_with("[preview]") || k.ends_with(".preview")))
            || field("op").is_some_and(|v| v.eq_ignore_ascii_case("preview"));
        let saved = ["wpsave", "post", "publish", "save", "submit"].iter().any(|n| field(n).is_some());
        if previewed && !saved {
            return None;
        }
        // 2c. MediaWiki's API routes by its `action`, in the query or the body.
        if let Some(h) = super::platforms::mediawiki_api(f.path, &field) {
            return (!h.0.is_empty()).then(|| hit(h.0, h.1, "mediawiki action".into()));
        }
        // 2. The platform's own routes.
        if let Some(p) = super::platforms::find(&self.platforms, f.method, f.path) {
            return (!p.rule.is_empty()).then(|| hit(p.rule, p.why, format!("{} route", p.platform)));
        }
        let path = f.path.split('?').next().unwrap_or(f.path);
        // 2d. GraphQL: the operation's type from its document, a persisted operation's name.
        // A cart service's own GraphQL (`cart.` host) changes the cart.
        let cart_host = matches!(f.host.split('.').next(), Some("cart" | "basket"));
        match judge_graphql(&f.graphql) {
            Says::Act(_) if cart_host => return None,
            Says::Act(rule) => return Some(hit(rule, why_of(rule), "graphql operation".into())),
            Says::Harmless => return None,
            Says::Nothing => {}
        }
        // 2e. A statement sent to a database: its kind decides (`guard::sql`).
        match super::sql::statement_writes(&f.leaves) {
            Some(true) => return Some(hit("post", "changes a database", "sql statement".into())),
            Some(false) => return None,
            None => {}
        }
        // 3. The user's file.
        if self.user_safe.iter().any(|s| s.is_match(path)) {
            return None;
        }
        if let Some(h) = Self::by_rules(&self.user_rules, f, path) {
            return Some(h);
        }
        // 4. Fields only an act carries; a log-in form.
        for (id, why, p) in &self.act_fields {
            if let Some(name) = f.fields.iter().find(|n| p.is_match(n)) {
                return Some(hit(id, why, format!("field {name}")));
            }
        }
        if let Some((k, _)) = f.leaves.iter().find(|(k, v)| {
            let leaf = k.rsplit('.').next().unwrap_or(k);
            let parent = k.rsplit('.').nth(1).unwrap_or("");
            let _ = v;
            (matches!(leaf, "number" | "cvc" | "cvv") && parent.contains("card"))
                || matches!(
                    leaf,
                    "verification_value" | "encryptedcardnumber" | "encryptedsecuritycode" | "cardnumber"
                )
        }) {
            return Some(hit("payment", why_of("payment"), format!("field {k}")));
        }
        // 4'. The user's preferences (`/user/preferences`, `account_prefs_update`): their own view.
        if super::flags::own_view_path(f.path) || super::flags::names_preferences(&f.leaves) {
            return None;
        }
        // A raw signed transaction broadcast (`POST /api/tx` with its hex).
        if f.leaves.iter().any(|(k, _)| k == super::facts::SIGNED_HEX) {
            return Some(hit("payment", "broadcasts a signed transaction", "hex body".into()));
        }
        // 4a. A flag that says the request is the act (`_place`, `publish`, a `status` of `outbox`), or a
        // body whose shape is one (`guard::bodies`).
        if let Some((rule, m)) =
            super::flags::act_flag(&f.leaves).or_else(|| super::bodies::body_act(path, &f.leaves))
        {
            return Some(hit(rule, why_of(rule), m));
        }
        let idents = super::idents::action_idents(f.path, &f.leaves);
        let ident_words: Vec<String> = idents.iter().flat_map(|i| super::acts::words(i)).collect();
        let names = |set: &[&str]| ident_words.iter().any(|w| set.contains(&w.as_str()));
        let joined_names = |set: &[&str]| {
            ident_words.windows(2).any(|p| set.contains(&format!("{}{}", p[0], p[1]).as_str()))
        };
        // A password with no confirmation: a log-in, unless the request names an account's creation
        // (a sign-up, a registration, a POST to the users or accounts) or its change (an update).
        if f.fields.iter().any(|n| self.password.is_match(n)) {
            let creates = names(&["signup", "register", "registration", "join", "enroll", "createaccount"])
                || joined_names(&["signup", "createaccount", "newaccount"])
                || (f.method == "POST"
                    && idents.first().and_then(|i| super::acts::collection(i)) == Some("account"))
                || matches!(idents.first().map(|i| classify(i)), Some(Says::Act("account")));
            let logs_in = names(&["login", "signin", "session", "sessions", "token", "authenticate"])
                || joined_names(&["login", "signin"]);
            // ... or a password re-entered to confirm a deletion (`/profile/delete`).
            let deletes = matches!(idents.first().map(|i| classify(i)), Some(Says::Act("delete")));
            if (creates || deletes) && !logs_in {
                let rule = if deletes { "delete-account" } else { "account" };
                return Some(hit(rule, why_of(rule), format!("password sent to {}", idents[0])));
            }
            // A password for what a POST to an API's collection creates (a server's root password).
            let json = ct.contains("json");
            let made = (f.method == "POST" && !logs_in)
                .then(|| super::creates::creates_resource(f.host, path, &idents, true, json))
                .flatten();
            return made.map(|m| hit("post", "creates something on the site in the user's name", m));
        }
        // Asking a reset email for oneself: the request names a password (reset, forgot, change) and
        // carries none.
        if names(&["password", "passwd"])
            && names(&["change", "reset", "forgot", "forgotten", "lost", "recover"])
        {
            return None;
        }
        // A write to the session's cart or basket (a shipment chosen, a line removed): its own state.
        if super::flags::own_cart_write(f.method, path, &idents) {
            return None;
        }
        // 4b. What the request names its action: an act word in its last path words, its `action`, its
        // RPC method, outranks any harmless segment before it.
        // The control's label, when it names an act, before the words of the path (judged once, above).
        if act_label.is_some() {
            return act_label;
        }
        if f.method == "POST" {
            if let Some(rule) = idents.first().and_then(|i| super::acts::collection(i)) {
                return Some(hit(rule, why_of(rule), format!("POST to {}", idents[0])));
            }
        }
        // A command on what the user runs (`/machines/{id}/stop`, `/lock/unlock`): `guard::commands`.
        if f.method == "POST" {
            if let Some(m) = super::commands::command(f.host, path, &idents, ct.contains("json")) {
                return Some(hit("post", "runs a command on what the user runs or owns", m));
            }
        }
        // A command named by a key (`{"action": "UNLOCK"}`, `Execute=cancel`).
        if f.method == "POST" {
            let pairs: Vec<(String, String)> = params.iter().chain(f.leaves.iter()).cloned().collect();
            if let Some(m) =
                super::commands::named_command(f.host, path, &pairs, &idents, ct.contains("json"))
            {
                return Some(hit("post", "runs a command on what the user runs or owns", m));
            }
        }
        // The action's own words first; a read word on a segment before it (`/config/secrets`) reads
        // nothing of what is posted to it: only the session's own state there (`/cart/items`) is harmless.
        let own_action = idents.first().map(String::as_str);
        for ident in &idents {
            match super::acts::classify_for(f.method, ident) {
                Says::Act(rule) => return Some(hit(rule, why_of(rule), format!("action {ident}"))),
                Says::Harmless
                    if Some(ident.as_str()) == own_action
                        || !path.contains(ident.as_str())
                        || super::acts::names_own_state(ident) =>
                {
                    return None
                }
                Says::Harmless | Says::Nothing => {}
            }
        }
        // A generic create (`createRecord`, `POST /records`) of a kind the body names (AT Protocol's
        // `collection`: `app.bsky.feed.like`).
        if matches!(f.method, "POST" | "PUT")
            && names(&["create", "put", "add", "new", "apply", "records", "record"])
        {
            if let Some((rule, kind)) = super::acts::created_kind(&f.leaves) {
                return Some(hit(rule, why_of(rule), format!("creates a {kind}")));
            }
        }
        // 4c. Recipients at any depth: an address or a number under `to`, `recipients`, `attendees`.
        if let Some((k, _)) = f.leaves.iter().find(|(k, v)| {
            matches!(key_leaf(k), "to" | "_to" | "cc" | "bcc" | "address" | "email")
                && parent_is_recipient(k, v)
        }) {
            return Some(hit("message", why_of("message"), format!("field {k}")));
        }
        // 4c. The verb: DELETE, PUT and PATCH on a resource write, unless it is the session's own or the
        // body changes only the user's own view (`guard::flags::own_view`).
        if matches!(f.method, "DELETE" | "PUT" | "PATCH")
            && !path_words(path).any(|p| VERB_SAFE.contains(&p))
            && !(f.method != "DELETE" && super::flags::own_view(&f.leaves))
        {
            if let Some(h) = Self::by_rules(&self.rules, f, path) {
                return Some(h);
            }
            let rule = if f.method == "DELETE" { "delete" } else { "post" };
            return Some(hit(rule, "changes or deletes content", format!("{} on a resource", f.method)));
        }
        // 4d. Resumes and cover letters: a job application.
        if let Some(n) = f.fields.iter().find(|n| {
            let leaf = n.rsplit(['.', '[']).next().unwrap_or(n).trim_end_matches(']');
            RESUME.iter().any(|r| leaf.eq_ignore_ascii_case(r))
        }) {
            return Some(hit("booking", "applies, books or enrols", format!("field {n}")));
        }
        // 5. An action that says what it is: a search, results, a translation, the session's cart; unless
        // an act's path comes after it (`/oauth2/comments/post`: the comment is the action, the log-in
        // segment only the API's prefix).
        let safe_at = self.safe.iter().filter_map(|s| s.find_iter(path).last()).max_by_key(|m| m.start());
        if let Some(m) = safe_at {
            let act_after =
                self.rules.iter().filter(|r| r.methods.iter().any(|m| m == f.method)).any(|r| {
                    r.path.as_ref().is_some_and(|p| p.find_iter(path).any(|a| a.start() > m.start()))
                });
            // A read (a search of posts, a filter of reviews) reads whatever it names after it, and the
            // session's own state (its notifications, its cart) stays its own whatever follows.
            let word = m.as_str().trim_matches(|c: char| !c.is_ascii_alphanumeric()).to_ascii_lowercase();
            if !act_after
                || SAFE_READS.contains(&word.as_str())
                || path_words(path).any(|p| VERB_SAFE.contains(&p))
            {
                return None;
            }
        }

        // 6-7. The control's label, the action's path.
        if let Some(h) = Self::by_rules(&self.rules, f, path) {
            return Some(h);
        }
        // 8. A text someone wrote, to be published.
        let text = f.long_fields.iter().find(|n| self.text_fields.is_match(n));
        let titled = f.fields.iter().any(|n| self.title_fields.is_match(n))
            && f.fields.iter().any(|n| self.text_fields.is_match(n));
        match (text, titled) {
            (Some(name), _) => {
                Some(hit("post", "publishes a post, comment, review or reply", format!("text field {name}")))
            }
            (None, true) => Some(hit(
                "post",
                "publishes a post, comment, review or reply",
                "fields title and body".into(),
            )),
            // 9. What no list names: a POST to an API's collection, or a write verb on what it names.
            // A search's button (`Search`, `Rechercher`, `Cerca`) pressed: the POST reads.
            (None, false) if super::flags::read_label(f.label) => None,
            // What no act rule names and is harmless: telemetry, a read by its last word, the session's
            // own (`guard::harmless`).
            (None, false)
                if super::harmless::unnamed_harmless(f.method, f.host, path, &params, &f.leaves, &idents)
                    .is_some() =>
            {
                None
            }
            (None, false) => (f.method == "POST")
                .then(|| {
                    let json = ct.contains("json");
                    super::creates::creates_resource(f.host, path, &idents, !f.leaves.is_empty(), json)
                })
                .flatten()
                .map(|m| hit("post", "creates something on the site in the user's name", m))
                .or_else(|| {
                    super::flags::commit_label(f.label).map(|l| {
                        hit(
                            "post",
                            "commits what its form holds (the button pressed)",
                            format!("label {l:?}"),
                        )
                    })
                })
                .or_else(|| strict.then(|| hit(UNNAMED, "a write no rule names (strict)", "strict".into()))),
        }
    }

    /// The first of `rules` (for the request's method) whose label, else path, else field pattern matches.
    fn by_rules(rules: &[WriteRule], f: &WriteFacts<'_>, path: &str) -> Option<WriteHit> {
        let label = f.label.map(|l| l.split_whitespace().collect::<Vec<_>>().join(" "));
        let rules = || rules.iter().filter(|r| r.methods.iter().any(|m| m == f.method));
        let hit =
            |r: &WriteRule, matched: String| WriteHit { rule: r.id.clone(), why: r.why.clone(), matched };
        if let Some(l) = &label {
            if let Some(r) = rules().find(|r| r.label.as_ref().is_some_and(|p| p.is_match(l))) {
                return Some(hit(r, format!("label {l:?}")));
            }
        }
        if let Some(r) = rules().find(|r| r.path.as_ref().is_some_and(|p| p.is_match(path))) {
            return Some(hit(r, "path".into()));
        }
        for r in rules() {
            if let Some(name) = r.fields.as_ref().and_then(|p| f.fields.iter().find(|n| p.is_match(n))) {
                return Some(hit(r, format!("field {name}")));
            }
        }
        None
    }
}

fn path_words(path: &str) -> impl Iterator<Item = &str> {
    path.split(['/', '?', '&', '=']).filter(|s| !s.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;

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

    /// A safe prefix does not hide an act's path after it; a read reads what it names after it.
    #[test]
    fn a_safe_prefix_and_what_follows_it() {
        let r = WriteRules::builtin();
        let rows: &[(&str, &str, &str, Option<&str>)] = &[
            ("POST", "/api/v1/oauth2/comments/post/deviation/7A2B", "body=Nice", Some("post")),
            ("POST", "/search/threads/latest", "q=kettle", None),
            ("POST", "/filter/reviews/latest", "stars=5", None),
            ("PUT", "/notifications/threads", "x=1", None),
        ];
        for (method, path, body, want) in rows {
            let ct = Some("application/x-www-form-urlencoded");
            let f = WriteFacts::of(method, path, ct, Some(body.as_bytes()), None);
            assert_eq!(r.judge(&f).map(|h| h.rule), want.map(str::to_string), "{method} {path}");
        }
    }
}
