//! The frozen search engine's pages: plain HTML, no script, usable by an agent (a form that searches
//! again, a numbered result list of links, previous and next pages), and saying what it is.

use super::index::Hit;

/// Results per page.
pub const PER_PAGE: usize = 10;

/// Text or a double-quoted attribute value, escaped (`&`, `<`, `>`, `"`).
fn esc(s: &str) -> String {
    html_escape::encode_double_quoted_attribute(s).into_owned()
}

/// Where the page's search box sends: an engine's `q` to its results path, or a site's own parameter to
/// its search path with the request's other parameters.
#[derive(Debug, Clone, Default)]
pub struct Form {
    /// The path the form sends to.
    pub action: String,
    /// The query parameter's name.
    pub field: String,
    /// Other parameters sent along.
    pub hidden: Vec<(String, String)>,
}

fn link(form: &Form, query: &str, start: usize) -> String {
    let mut q = url::form_urlencoded::Serializer::new(String::new());
    for (k, v) in &form.hidden {
        q.append_pair(k, v);
    }
    q.append_pair(&form.field, query).append_pair("start", &start.to_string());
    format!("{}?{}", form.action, q.finish())
}

/// The page for `query` (None: the home page, a search box only).
pub fn render(
    form: &Form,
    query: Option<&str>,
    offset: usize,
    total: usize,
    hits: &[Hit],
    docs: usize,
) -> String {
    let q = query.unwrap_or("");
    let title = if q.is_empty() { "Search".to_string() } else { format!("{} - Search", esc(q)) };
    let hidden: String = form
        .hidden
        .iter()
        .map(|(k, v)| format!("<input type=hidden name=\"{}\" value=\"{}\">", esc(k), esc(v)))
        .collect();
    let mut body = format!(
        "<form action=\"{}\" method=get role=search>{hidden}<input type=search name=\"{}\" value=\"{}\" \
         aria-label=Search> <button type=submit>Search</button></form>\
         <p class=webfreeze-note>Frozen search (webfreeze): results from the {docs} recorded page(s) of this \
         snapshot, not from the live search engine.</p>",
        esc(&form.action),
        esc(&form.field),
        esc(q)
    );
    if query.is_some() {
        if total == 0 {
            body.push_str(&format!("<p id=result-stats>No recorded page matches <b>{}</b>.</p>", esc(q)));
        } else {
            body.push_str(&format!(
                "<p id=result-stats>Results {}-{} of {total}</p><ol id=results start={}>",
                offset + 1,
                offset + hits.len(),
                offset + 1
            ));
            for h in hits {
                body.push_str(&format!(
                    "<li class=result><a href=\"{u}\"><h3>{t}</h3></a><cite>{u}</cite><p>{s}</p></li>",
                    u = esc(&h.url),
                    t = esc(&h.title),
                    s = esc(&h.snippet)
                ));
            }
            body.push_str("</ol><nav>");
            if offset > 0 {
                body.push_str(&format!(
                    "<a rel=prev href=\"{}\">Previous</a> ",
                    esc(&link(form, q, offset.saturating_sub(PER_PAGE)))
                ));
            }
            if offset + hits.len() < total {
                body.push_str(&format!(
                    "<a rel=next href=\"{}\">Next</a>",
                    esc(&link(form, q, offset + PER_PAGE))
                ));
            }
            body.push_str("</nav>");
        }
    }
    format!("<!doctype html><html><head><meta charset=utf-8><title>{title}</title></head><body>{body}</body></html>")
}
