//! GraphQL judged (issue 60): the operations a request carries, parsed with a crate (`apollo-parser`:
//! each operation's type, name and root fields) from a JSON body, a batch, a GET's query string, or only
//! named (a persisted operation: `operationName`, `queryId`, a name in the URL); and what they say, by
//! the act vocabulary (`acts::classify`): a mutation acts unless its names say it is harmless, a query or
//! a subscription never does.

use super::acts::{classify, Says};

/// One GraphQL operation of a request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GqlOp {
    /// `query`, `mutation`, `subscription`, or "" when only a name was sent (a persisted operation).
    pub kind: String,
    /// Its name, if any.
    pub name: String,
    /// The root fields it selects (`placeOrder`, `cartLinesAdd`).
    pub fields: Vec<String>,
}

/// Parse a GraphQL document: its operations, each with its type, name and root fields. None when the
/// text is not a document.
pub fn parse_graphql(doc: &str) -> Option<Vec<GqlOp>> {
    use apollo_parser::cst::{CstNode, Definition, Selection};
    let tree = apollo_parser::Parser::new(doc).parse();
    let mut ops = Vec::new();
    for def in tree.document().definitions() {
        let Definition::OperationDefinition(op) = def else { continue };
        let kind = match op.operation_type() {
            Some(t) if t.mutation_token().is_some() => "mutation",
            Some(t) if t.subscription_token().is_some() => "subscription",
            _ => "query",
        };
        let name = op.name().map(|n| n.text().to_string()).unwrap_or_default();
        let fields = op
            .selection_set()
            .map(|s| {
                s.selections()
                    .filter_map(|sel| match sel {
                        Selection::Field(f) => f.name().map(|n| n.text().to_string()),
                        _ => None,
                    })
                    .collect()
            })
            .unwrap_or_default();
        let _ = op.syntax();
        ops.push(GqlOp { kind: kind.to_string(), name, fields });
    }
    (!ops.is_empty()).then_some(ops)
}

/// The GraphQL operations a request carries: a JSON body (`query`, or a persisted `operationName` /
/// `id` / `extensions.persistedQuery`), a batch of them, or the query string of a GET; the operation
/// named in the URL (`?operationName=`, `?opname=`, `/graphql/<id>/<Name>`) when the body names none.
pub fn graphql_ops(path_and_query: &str, json: Option<&serde_json::Value>) -> Vec<GqlOp> {
    let mut ops = Vec::new();
    let mut one = |o: &serde_json::Map<String, serde_json::Value>| {
        let name = o.get("operationName").and_then(|v| v.as_str()).unwrap_or_default().to_string();
        match o.get("query").and_then(|q| q.as_str()).and_then(parse_graphql) {
            Some(parsed) => {
                for mut p in parsed {
                    if p.name.is_empty() {
                        p.name = name.clone();
                    }
                    ops.push(p);
                }
            }
            None => {
                let persisted = o.contains_key("extensions")
                    || o.contains_key("id")
                    || o.contains_key("queryId")
                    || o.contains_key("documentId")
                    || o.contains_key("variables");
                if persisted && (o.contains_key("operationName") || o.contains_key("queryId")) {
                    ops.push(GqlOp { kind: String::new(), name, fields: Vec::new() });
                } else if let Some(kind) =
                    o.get("extensions").and_then(|e| e.get("operationType")).and_then(|t| t.as_str())
                {
                    ops.push(GqlOp { kind: kind.to_string(), name, fields: Vec::new() });
                }
            }
        }
    };
    match json {
        Some(serde_json::Value::Object(o)) => one(o),
        Some(serde_json::Value::Array(a)) => a.iter().filter_map(|v| v.as_object()).for_each(&mut one),
        _ => {}
    }
    let (path, query) = path_and_query.split_once('?').unwrap_or((path_and_query, ""));
    let params: Vec<(String, String)> =
        form_urlencoded::parse(query.as_bytes()).map(|(k, v)| (k.into_owned(), v.into_owned())).collect();
    let param = |k: &str| params.iter().find(|(n, _)| n.eq_ignore_ascii_case(k)).map(|(_, v)| v.clone());
    if ops.is_empty() {
        if let Some(parsed) = param("query").and_then(|q| parse_graphql(&q)) {
            ops.extend(parsed);
        }
    }
    let graphql_path = path.to_ascii_lowercase().contains("graphql") || path.contains("/gql");
    let url_name = param("operationName").or_else(|| param("opname")).or_else(|| {
        // `/graphql/<hash>/<Name>` (X), `/graphql/<name>` (DoorDash), `/api/v3/<Name>/<hash>` (Airbnb).
        graphql_path.then(|| path.rsplit('/').next().unwrap_or_default().to_string()).filter(|n| {
            !n.is_empty()
                && n.chars().next().is_some_and(|c| c.is_ascii_alphabetic())
                && !n.contains("graphql")
                // The endpoint's own words (`/graphql/query`, `/api/gql/batch`), not an operation's name.
                && !matches!(n.to_ascii_lowercase().as_str(), "query" | "gql" | "batch" | "api" | "graph")
        })
    });
    if let Some(n) = url_name {
        if ops.is_empty() {
            if graphql_path {
                let kind = param("optype").unwrap_or_default();
                ops.push(GqlOp { kind, name: n, fields: Vec::new() });
            }
        } else if let Some(o) = ops.iter_mut().find(|o| o.name.is_empty()) {
            o.name = n;
        }
    }
    ops
}

/// The type a persisted operation's name gives it: Relay's compiler requires an operation's name to end
/// in its type (`usePolarisLikeMediaLikeMutation`, `PolarisProfilePageContentQuery`), and clients that
/// follow it keep the suffix when they send the name alone.
fn kind_of_name(name: &str) -> &'static str {
    if name.ends_with("Mutation") {
        "mutation"
    } else if name.ends_with("Query") || name.ends_with("Subscription") {
        "query"
    } else {
        ""
    }
}

/// What a persisted operation known only by its name says: the act vocabulary's reading, or, when it
/// reads nothing, a name that starts with a write verb (`addToLibrary`, `setHold`) is a mutation that
/// says nothing harmless: a write. A name that leads with a read verb reads.
fn judge_name(name: &str) -> Says {
    // A name that leads with a read verb reads whatever it names after it (`searchBuy`: a search of
    // homes to buy).
    let first = super::acts::words(name).into_iter().next().unwrap_or_default();
    if matches!(
        first.as_str(),
        "search" | "get" | "list" | "fetch" | "find" | "query" | "load" | "lookup" | "browse"
    ) {
        return Says::Harmless;
    }
    match classify(name) {
        Says::Nothing => {
            let first = super::acts::words(name).into_iter().next().unwrap_or_default();
            if super::acts::is_write_word(&first) {
                Says::Act("post")
            } else {
                Says::Nothing
            }
        }
        says => says,
    }
}

/// What a request's GraphQL operations say: an act if any operation acts; harmless when every
/// operation is a query or a harmless mutation; nothing when they name nothing.
pub fn judge_graphql(ops: &[GqlOp]) -> Says {
    if ops.is_empty() {
        return Says::Nothing;
    }
    let mut all_harmless = true;
    for op in ops {
        let kind = if op.kind.is_empty() { kind_of_name(&op.name) } else { op.kind.as_str() };
        let says = match kind {
            "query" | "subscription" => Says::Harmless,
            "mutation" => {
                let mut s = Says::Nothing;
                for ident in op.fields.iter().chain(std::iter::once(&op.name)) {
                    match classify(ident) {
                        Says::Act(r) => {
                            s = Says::Act(r);
                            break;
                        }
                        Says::Harmless => s = Says::Harmless,
                        Says::Nothing => {}
                    }
                }
                // A mutation that says nothing harmless is a write.
                if s == Says::Nothing {
                    Says::Act("post")
                } else {
                    s
                }
            }
            _ => judge_name(&op.name),
        };
        match says {
            Says::Act(r) => return Says::Act(r),
            Says::Harmless => {}
            Says::Nothing => all_harmless = false,
        }
    }
    if all_harmless {
        Says::Harmless
    } else {
        Says::Nothing
    }
}
