//! What a request is judged by ([`WriteFacts`]): its method, path, body fields at every depth, the
//! published texts among them, its GraphQL operations and the label of the control the agent used.

/// A value this long, or with a line break, is a text someone wrote, not a query.
const LONG_VALUE: usize = 80;

/// What a request is judged by.
#[derive(Debug, Clone, Default)]
pub struct WriteFacts<'a> {
    /// Method, upper case.
    pub method: &'a str,
    /// Path and query.
    pub path: &'a str,
    /// Form or JSON field names of the body (top level).
    pub fields: Vec<String>,
    /// Those of them whose value is a text someone wrote (long, or with a line break).
    pub long_fields: Vec<String>,
    /// The label of the control the agent used, when it said.
    pub label: Option<&'a str>,
    /// The request's host ("" when unknown): payment processors are known by theirs.
    pub host: &'a str,
    /// The body's leaves at every depth: (keys joined by `.`, lower case; value).
    pub leaves: Vec<(String, String)>,
    /// The GraphQL operations the request carries.
    pub graphql: Vec<super::graphql::GqlOp>,
    /// The body's content type, when it said.
    pub content_type: Option<&'a str>,
}

/// A recipient's field: its value is an address or a phone number, or its parent names recipients.
pub(super) fn parent_is_recipient(parent: &str, value: &str) -> bool {
    let v = value.trim();
    let digits = v.trim_start_matches('+');
    let phone = digits.len() >= 10 && digits.chars().all(|c| c.is_ascii_digit());
    let addressy = v.contains('@') || (v.starts_with('+') && v.len() > 7) || phone;
    let leaf = key_leaf(parent);
    addressy
        && (parent.contains("recipient")
            || parent.contains("attendee")
            || parent.contains("personalizations")
            || matches!(leaf, "to" | "_to" | "cc" | "bcc"))
}

/// A leaf's key with the array indexes that end it left out: `to.0` -> `to`, `messages.0.text` -> `text`.
pub(super) fn key_leaf(key: &str) -> &str {
    key.rsplit('.').find(|s| !s.is_empty() && !s.bytes().all(|b| b.is_ascii_digit())).unwrap_or(key)
}

/// The facts of a request's body: its top-level field names, and those whose value is a text someone
/// wrote (long or multi-line).
pub fn body_fields(content_type: Option<&str>, body: &[u8]) -> (Vec<String>, Vec<String>) {
    let ct = content_type.unwrap_or("").to_ascii_lowercase();
    let long = |v: &str| v.len() >= LONG_VALUE || v.contains('\n');
    if ct.contains("json") || body.first() == Some(&b'{') {
        if let Ok(serde_json::Value::Object(o)) = serde_json::from_slice::<serde_json::Value>(body) {
            let names = o.keys().cloned().collect();
            let longs =
                o.iter().filter(|(_, v)| v.as_str().is_some_and(long)).map(|(k, _)| k.clone()).collect();
            return (names, longs);
        }
    }
    if ct.contains("x-www-form-urlencoded") || ct.is_empty() {
        let pairs: Vec<(String, String)> = form_urlencoded::parse(body)
            .map(|(k, v)| (k.into_owned(), v.into_owned()))
            .filter(|(k, _)| !k.is_empty())
            .collect();
        let longs = pairs.iter().filter(|(_, v)| long(v)).map(|(k, _)| k.clone()).collect();
        return (pairs.into_iter().map(|(k, _)| k).collect(), longs);
    }
    (field_names(content_type, body), Vec::new())
}

impl<'a> WriteFacts<'a> {
    /// The facts of a request: its method, path and query, body (with its content type) and the label of
    /// the control the agent used.
    pub fn of(
        method: &'a str,
        path: &'a str,
        content_type: Option<&'a str>,
        body: Option<&[u8]>,
        label: Option<&'a str>,
    ) -> Self {
        Self::of_request(method, "", path, content_type, body, label)
    }

    /// [`WriteFacts::of`] for a request to `host`.
    pub fn of_request(
        method: &'a str,
        host: &'a str,
        path: &'a str,
        content_type: Option<&'a str>,
        body: Option<&[u8]>,
        label: Option<&'a str>,
    ) -> Self {
        let (mut fields, mut long_fields) = body.map(|b| body_fields(content_type, b)).unwrap_or_default();
        let (leaves, json) = body.map(|b| leaves(content_type, b)).unwrap_or_default();
        let mut graphql = super::graphql::graphql_ops(path, json.as_ref());
        // A persisted operation named in a form body (Instagram's `fb_api_req_friendly_name`): the body's
        // name, before any the URL gave.
        if let Some((_, name)) = leaves.iter().find(|(k, _)| k == "fb_api_req_friendly_name") {
            if graphql.iter().all(|o| o.kind.is_empty()) {
                graphql = vec![super::graphql::GqlOp {
                    kind: String::new(),
                    name: name.clone(),
                    fields: Vec::new(),
                }];
            }
        }
        let long = |v: &str| v.len() >= LONG_VALUE || v.contains('\n');
        for (k, v) in &leaves {
            if !k.contains('.') {
                continue;
            }
            let leaf = k.rsplit('.').next().unwrap_or(k).to_string();
            if k.contains("address") {
                continue;
            }
            if graphql.is_empty() && long(v) && !long_fields.contains(&leaf) {
                long_fields.push(leaf.clone());
            }
            if !fields.contains(&leaf) {
                fields.push(leaf);
            }
        }
        // A form's method override (Rails' and Laravel's `_method=delete`): the method the site acts on.
        let method = match leaves.iter().find(|(k, _)| k == "_method").map(|(_, v)| v.to_ascii_uppercase()) {
            Some(m) if method == "POST" && m == "DELETE" => "DELETE",
            Some(m) if method == "POST" && m == "PUT" => "PUT",
            Some(m) if method == "POST" && m == "PATCH" => "PATCH",
            _ => method,
        };
        WriteFacts { method, path, fields, long_fields, label, host, leaves, graphql, content_type }
    }
}

/// The top-level field names of a form or JSON body (nothing for other bodies).
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

/// A request's body as leaves: (path of keys joined by `.`, lower case; the value as text). JSON at every
/// depth, form names with brackets (`card[number]` -> `card.number`), multipart parts.
pub(super) fn leaves(
    content_type: Option<&str>,
    body: &[u8],
) -> (Vec<(String, String)>, Option<serde_json::Value>) {
    let ct = content_type.unwrap_or("").to_ascii_lowercase();
    let mut out = Vec::new();
    let first = body.iter().find(|b| !b.is_ascii_whitespace());
    if ct.contains("json") || matches!(first, Some(b'{') | Some(b'[')) {
        if let Ok(v) = serde_json::from_slice::<serde_json::Value>(body) {
            walk(&v, String::new(), &mut out, 0);
            return (out, Some(v));
        }
    }
    // A raw signed transaction posted as hex text (a blockchain API's broadcast).
    if ct.starts_with("text/plain") && body.len() >= 100 && body.iter().all(|b| b.is_ascii_hexdigit()) {
        out.push((SIGNED_HEX.to_string(), String::new()));
        return (out, None);
    }
    if ct.contains("xml") || first == Some(&b'<') {
        // XML-RPC's `methodName` and a SOAP body's operation: the call the request makes.
        let text = String::from_utf8_lossy(body);
        if let Some(op) = xml_operation(&text) {
            out.push(("methodname".to_string(), op));
        } else {
            // Any other XML is walked like JSON: element names below the root, joined by `.`.
            xml_leaves(&text, &mut out);
        }
        return (out, None);
    }
    if ct.contains("multipart/form-data") {
        let text = String::from_utf8_lossy(body);
        for part in text.split("name=\"").skip(1) {
            let Some((name, rest)) = part.split_once('"') else { continue };
            let value = rest.split_once("\r\n\r\n").map(|(_, v)| v).unwrap_or("");
            let value = value.split("\r\n--").next().unwrap_or("");
            out.push((bracket_path(name), value.to_string()));
        }
        return (out, None);
    }
    if ct.contains("x-www-form-urlencoded") || ct.is_empty() {
        for (k, v) in form_urlencoded::parse(body) {
            if !k.is_empty() {
                out.push((bracket_path(&k), v.into_owned()));
            }
        }
    }
    (out, None)
}

/// The leaf a raw signed transaction (a long hexadecimal text body) is read as.
pub(super) const SIGNED_HEX: &str = "signed_transaction_hex";

/// The call an XML body makes: XML-RPC's `<methodName>` text, or the first element inside a SOAP
/// `Body` (its local name, `FECAESolicitar`).
fn xml_operation(xml: &str) -> Option<String> {
    use quick_xml::events::Event;
    let mut reader = quick_xml::Reader::from_str(xml);
    let (mut in_method, mut in_body) = (false, false);
    loop {
        match reader.read_event() {
            Ok(Event::Start(e)) => {
                let name = String::from_utf8_lossy(e.local_name().as_ref()).into_owned();
                if in_body {
                    return Some(name);
                }
                in_method = name.eq_ignore_ascii_case("methodName");
                in_body = name.eq_ignore_ascii_case("Body");
            }
            Ok(Event::Empty(e)) if in_body => {
                return Some(String::from_utf8_lossy(e.local_name().as_ref()).into_owned());
            }
            Ok(Event::Text(t)) if in_method => {
                let text = String::from_utf8_lossy(t.as_ref()).trim().to_string();
                return (!text.is_empty()).then_some(text);
            }
            Ok(Event::Eof) | Err(_) => return None,
            Ok(_) => {}
        }
    }
}

/// An XML document's leaves: each element's text under the names of the elements above it, the root's
/// left out (`<messages><message><to>447...</to>` -> `message.to`), lower case, as [`walk`] gives JSON's.
fn xml_leaves(xml: &str, out: &mut Vec<(String, String)>) {
    use quick_xml::events::Event;
    let mut reader = quick_xml::Reader::from_str(xml);
    let mut stack: Vec<String> = Vec::new();
    while out.len() < 1024 {
        match reader.read_event() {
            Ok(Event::Start(e)) => {
                stack.push(String::from_utf8_lossy(e.local_name().as_ref()).to_ascii_lowercase())
            }
            Ok(Event::End(_)) => {
                stack.pop();
            }
            Ok(Event::Text(t)) if stack.len() >= 2 => {
                let text = String::from_utf8_lossy(t.as_ref()).trim().to_string();
                if !text.is_empty() {
                    out.push((stack[1..].join("."), text));
                }
            }
            Ok(Event::Eof) | Err(_) => return,
            Ok(_) => {}
        }
    }
}

fn bracket_path(name: &str) -> String {
    name.replace("][", ".").replace(['[', ']'], ".").trim_matches('.').to_ascii_lowercase()
}

fn walk(v: &serde_json::Value, path: String, out: &mut Vec<(String, String)>, depth: usize) {
    if depth > 32 {
        return;
    }
    let join = |k: &str| {
        if path.is_empty() {
            k.to_ascii_lowercase()
        } else {
            format!("{path}.{}", k.to_ascii_lowercase())
        }
    };
    match v {
        serde_json::Value::Object(o) => {
            for (k, x) in o {
                walk(x, join(k), out, depth + 1);
            }
        }
        serde_json::Value::Array(a) => {
            for x in a {
                walk(x, path.clone(), out, depth + 1);
            }
        }
        serde_json::Value::String(s) => out.push((path, s.clone())),
        other => out.push((path, other.to_string())),
    }
}
