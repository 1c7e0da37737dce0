//! SQL sent over HTTP (issue 60, the sixth round): a warehouse's or a database console's statement API
//! (`POST /api/v2/statements {"statement": "SELECT ..."}`) reads or writes by its statement's kind, not by
//! its path. The kind is the statement's first keyword, and for a write the keyword after it (`DELETE
//! FROM`, `INSERT INTO`, `DROP TABLE`), so that a search box's text that starts with an English verb
//! ("delete my account") is never read as SQL.
//!
//! No SQL parser crate: the kind is all the guard needs, and a statement in any dialect starts with it;
//! a parser would refuse the dialects it does not know (Snowflake's, BigQuery's) and say less.

/// Body keys that hold a statement (lower case).
const KEYS: &[&str] = &["statement", "sql", "sqltext", "sql_text", "query", "querystring"];

/// What a body's statement says: `Some(true)` a write, `Some(false)` a read, `None` no statement.
pub(crate) fn statement_writes(leaves: &[(String, String)]) -> Option<bool> {
    leaves.iter().find_map(|(k, v)| {
        let leaf = k.rsplit('.').next().unwrap_or(k);
        KEYS.contains(&leaf).then(|| kind(v)).flatten()
    })
}

/// The kind of one statement (see the module docs).
fn kind(text: &str) -> Option<bool> {
    let mut words = text
        .split(|c: char| c.is_whitespace() || c == '(')
        .filter(|w| !w.is_empty())
        .map(|w| w.to_ascii_uppercase());
    let first = words.next()?;
    let second = words.next().unwrap_or_default();
    match first.as_str() {
        "SELECT" | "SHOW" | "DESCRIBE" | "DESC" | "EXPLAIN" => {
            // A read has more than one word: `SELECT region, SUM(amount) FROM ...`, `SHOW TABLES`.
            (!second.is_empty()).then_some(false)
        }
        "DELETE" => (second == "FROM").then_some(true),
        "INSERT" | "REPLACE" => (second == "INTO").then_some(true),
        "UPDATE" => text.to_ascii_uppercase().contains(" SET ").then_some(true),
        "DROP" | "CREATE" | "ALTER" | "TRUNCATE" => matches!(
            second.as_str(),
            "TABLE" | "DATABASE" | "SCHEMA" | "VIEW" | "INDEX" | "USER" | "ROLE" | "WAREHOUSE" | "OR"
        )
        .then_some(true),
        "MERGE" => (second == "INTO").then_some(true),
        "GRANT" | "REVOKE" => text.to_ascii_uppercase().contains(" ON ").then_some(true),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_statement_reads_or_writes_by_its_kind() {
        let rows: &[(&str, &str, Option<bool>)] = &[
            ("statement", "SELECT region, SUM(amount) FROM sales GROUP BY region", Some(false)),
            ("sql", "show tables", Some(false)),
            ("statement", "DELETE FROM customers WHERE last_order < '2019-01-01'", Some(true)),
            ("query", "INSERT INTO t (a) VALUES (1)", Some(true)),
            ("query", "update users set plan = 'free' where id = 7", Some(true)),
            ("statement", "DROP TABLE staging.events", Some(true)),
            ("statement", "CREATE OR REPLACE TABLE t AS SELECT 1", Some(true)),
            // A search's text that starts with a verb is no statement.
            ("query", "delete my account", None),
            ("query", "update iphone", None),
            ("query", "select", None),
            ("q", "DELETE FROM t", None),
        ];
        for (key, text, want) in rows {
            let leaves = vec![(key.to_string(), text.to_string())];
            assert_eq!(statement_writes(&leaves), *want, "{key}: {text}");
        }
    }
}
