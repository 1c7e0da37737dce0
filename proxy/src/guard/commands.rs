//! Commands (issue 60, the fourth round): an API POST whose action is a verb that changes the state of
//! what the user runs or owns on the site: a machine stopped, a service suspended, a door unlocked, a
//! deploy restored, a ticket voided, an order acknowledged, a build started, a piece of work turned in.
//! These name no object the act vocabulary knows (`/machines/{id}/stop`, `/services/lock/unlock`,
//! `/deploys/{id}/restore`), often carry no body at all, and act on something others use or see.
//!
//! Read only on an API (`creates::api_call`), on the request's own action word (the path's last word, or
//! the last two joined: `turnIn`), and never when the action names the session's own state (a session
//! started, a cart restored).

use super::acts::words;

/// Verbs that run a command on what they are posted to (lower case, as the path spells them).
const COMMANDS: &[&str] = &[
    "stop",
    "start",
    "restart",
    "reboot",
    "poweroff",
    "poweron",
    "shutdown",
    "suspend",
    "unsuspend",
    "resume",
    "pause",
    "unpause",
    "void",
    "acknowledge",
    "restore",
    "unlock",
    "lock",
    "activate",
    "deactivate",
    "enable",
    "disable",
    "trash",
    "trashed",
    "untrash",
    "deploy",
    "redeploy",
    "builds",
    "deploys",
    "promote",
    "trigger",
    "execute",
    "turnin",
    "resolve",
    "escalate",
    "mute",
    "unmute",
    "block",
    "unblock",
    "pin",
    "unpin",
    "hide",
    "unhide",
    "decline",
    // The sixth round: a card frozen, a build aborted or started, a cache purged, a job run, a shift
    // clocked.
    "freeze",
    "unfreeze",
    "abort",
    "cancel",
    "purge",
    "purgeall",
    "flush",
    "run",
    "rerun",
    "retry",
    "build",
    "rebuild",
    "clockin",
    "clockout",
    "skip",
    "terminate",
    "reboot",
    "retire",
    "deprecate",
    "unpublish",
    // The tenth round: a server power-cycled or deprovisioned, a cache cleared, a job run now.
    "powercycle",
    "deprovision",
    "clearcache",
    "runnow",
    "revoke",
    // The twelfth round: a pipeline scheduled to run.
    "schedule",
];

/// Whether `w` (a lower-case word) is a command verb ([`COMMANDS`]).
pub(crate) fn is_command(w: &str) -> bool {
    COMMANDS.contains(&w)
}

/// Keys whose value names the command a body runs (`{"action": "UNLOCK"}`, `Execute=cancel`).
const COMMAND_KEYS: &[&str] = &["action", "command", "execute", "cmd"];

/// Words beside a `run` or an `execute` that make it a read (a query run, a report run).
const READ_RUNS: &[&str] =
    &["query", "queries", "search", "report", "reports", "preview", "test", "tests", "dry"];

/// What is the session's own: a command on it acts on nothing outside the session.
const OWN: &[&str] = &[
    "session",
    "sessions",
    "cart",
    "basket",
    "token",
    "upload",
    "timer",
    "player",
    "playback",
    "notification",
    "notifications",
    "banner",
    "tooltip",
    "onboarding",
    "tour",
    "preferences",
    "checkout",
    "checkouts",
];

/// The command an API POST runs, if it runs one (see the module docs): `idents` are the request's action
/// words (`idents::action_idents`), the first the path's last word.
pub(crate) fn command(host: &str, path: &str, idents: &[String], json: bool) -> Option<String> {
    if !super::creates::api_call(host, path, json) {
        return None;
    }
    let all: Vec<String> = idents.iter().flat_map(|i| words(i)).collect();
    let own = all.iter().any(|w| OWN.contains(&w.as_str()));
    let reads = all.iter().any(|w| READ_RUNS.contains(&w.as_str()));
    let first = idents.first().filter(|i| path.contains(i.as_str()))?;
    let ws = words(first);
    let last = ws.last()?;
    let joined = ws.len() >= 2 && COMMANDS.contains(&format!("{}{}", ws[ws.len() - 2], last).as_str());
    let runs = matches!(last.as_str(), "run" | "rerun" | "execute");
    // A command verb that leads the action's words (`purgeCache`, `stopInstance`).
    let leads =
        ws.len() >= 2 && COMMANDS.contains(&ws[0].as_str()) && !matches!(ws[0].as_str(), "start" | "run");
    ((COMMANDS.contains(&last.as_str()) || joined || leads) && !own && !(runs && reads))
        .then(|| format!("command {first}"))
}

/// The command a body or query names by its key (`{"action": "UNLOCK"}`, `Execute=cancel`) on an API,
/// if it names one of [`COMMANDS`] and the request's words name nothing of the session's own.
pub(crate) fn named_command(
    host: &str,
    path: &str,
    pairs: &[(String, String)],
    idents: &[String],
    json: bool,
) -> Option<String> {
    // An API call, or a bodiless POST whose query names the command (`?action=STOP`).
    let bodiless = !pairs.iter().any(|(k, _)| !COMMAND_KEYS.contains(&k.rsplit('.').next().unwrap_or(k)));
    if !super::creates::api_call(host, path, json) && !bodiless {
        return None;
    }
    let own = idents.iter().flat_map(|i| words(i)).any(|w| OWN.contains(&w.as_str()));
    if own {
        return None;
    }
    // An action named by the body's one top-level key (OpenStack's `{"os-stop": {...}}`, `{"reboot": ...}`).
    let tops: std::collections::BTreeSet<&str> =
        pairs.iter().filter_map(|(k, _)| k.split('.').next()).filter(|k| k.len() > 2).collect();
    if tops.len() == 1 && json {
        let top = tops.iter().next().copied().unwrap_or_default();
        if words(top).last().is_some_and(|w| COMMANDS.contains(&w.as_str())) {
            return Some(format!("command {top}"));
        }
    }
    pairs.iter().find_map(|(k, v)| {
        let leaf = k.rsplit('.').next().unwrap_or(k).to_ascii_lowercase();
        let v = v.to_ascii_lowercase();
        (COMMAND_KEYS.contains(&leaf.as_str()) && COMMANDS.contains(&v.as_str()))
            .then(|| format!("command {leaf}={v}"))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn commands_on_what_the_user_runs() {
        let ids = |xs: &[&str]| xs.iter().map(|x| x.to_string()).collect::<Vec<_>>();
        type Row = (&'static str, &'static str, Vec<String>, bool);
        let rows: Vec<Row> = vec![
            ("api.fly.test", "/v1/apps/a/machines/3d8d/stop", ids(&["stop", "machines"]), true),
            ("api.hetzner.test", "/v1/servers/42/actions/poweroff", ids(&["poweroff", "actions"]), true),
            ("h.test", "/api/services/lock/unlock", ids(&["unlock", "lock", "lock/unlock"]), true),
            ("c.test", "/v1/courses/1/work/2/subs/Cg:turnIn", ids(&["Cg:turnIn", "subs"]), true),
            ("api.shop.test", "/v1/sessions/start", ids(&["start", "sessions"]), false),
            ("api.shop.test", "/v1/cart/restore", ids(&["restore", "cart"]), false),
            ("www.shop.test", "/machines/3/stop", ids(&["stop", "machines"]), false),
            ("api.shop.test", "/v1/machines", ids(&["machines"]), false),
            ("api.shop.test", "/v1/notifications/12/hide", ids(&["hide", "notifications"]), false),
            ("api.bank.test", "/cards/7/freeze", ids(&["freeze", "cards"]), true),
            ("api.cdn.test", "/service/S1/purge_all", ids(&["purge_all", "service"]), true),
            ("api.ci.test", "/v2/jobs/98/run/", ids(&["run", "jobs"]), true),
            ("api.db.test", "/v1/queries/run", ids(&["run", "queries"]), false),
            ("api.hr.test", "/shifts/clock_in", ids(&["clock_in", "shifts"]), true),
            ("api.cdn.test", "/pullzone/7/purgeCache", ids(&["purgeCache", "pullzone"]), true),
            ("api.shop.test", "/v1/session/startSession", ids(&["startSession", "session"]), false),
        ];
        for (host, path, idents, want) in rows {
            assert_eq!(command(host, path, &idents, false).is_some(), want, "{host}{path}");
        }
    }

    #[test]
    fn commands_named_by_a_key() {
        let kv = |k: &str, v: &str| vec![(k.to_string(), v.to_string())];
        type Row<'a> = (&'a str, Vec<(String, String)>, &'a [&'a str], bool);
        let rows: &[Row] = &[
            ("/v2/vehicles/1/security", kv("action", "UNLOCK"), &["security"], true),
            ("/v6/appointment/update", kv("Execute", "cancel"), &["update"], true),
            ("/v1/cart/items", kv("action", "cancel"), &["items", "cart"], false),
            ("/v1/search", kv("action", "filter"), &["search"], false),
            ("/20160918/instances/ocid1", kv("action", "STOP"), &["instances"], true),
            ("/v1/p/cloudservers/action", kv("os-stop.type", "HARD"), &["action", "cloudservers"], true),
            ("/v1/p/cloudservers/action", kv("os-stop.type", "HARD"), &["action", "cart"], false),
        ];
        for (path, pairs, idents, want) in rows {
            let idents: Vec<String> = idents.iter().map(|s| s.to_string()).collect();
            let got = named_command("api.test", path, pairs, &idents, true);
            assert_eq!(got.is_some(), *want, "{path} {pairs:?}");
        }
    }
}
