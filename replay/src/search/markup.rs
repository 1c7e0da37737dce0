//! The markup a site search is read from, parsed by crates rather than by hand: a page's `<form>`s (with
//! their `<input>`s) and `<link>`s by html5ever's tokenizer, an OpenSearch description's `<Url>`s by
//! quick-xml's reader. Either way attribute values come entity-decoded (`&amp;`, `&#38;`, `&quot;` ...),
//! in any order, quoted or not; HTML attribute names are lowercased and a repeated attribute keeps its first
//! value, as a browser does; an HTML page's script and style text is not read as markup.
//!
//! Only the tokenizer runs (no tree is built): a `<form>` starts a form unless one is open, which its
//! `</form>` (or the end of the page) closes, as the HTML parser's form element pointer does; an
//! `<input>` belongs to the open form.

use std::cell::RefCell;

use html5ever::tendril::StrTendril;
use html5ever::tokenizer::states::RawKind;
use html5ever::tokenizer::{
    BufferQueue, Tag, TagKind, Token, TokenSink, TokenSinkResult, Tokenizer, TokenizerOpts,
};
use quick_xml::events::Event;
use quick_xml::XmlVersion;

/// A tag's attributes (name, decoded value) in document order.
pub(crate) type Attrs = Vec<(String, String)>;

/// The value of attribute `name` (lowercase) in `attrs`.
pub(crate) fn attr<'a>(attrs: &'a Attrs, name: &str) -> Option<&'a str> {
    attrs.iter().find(|(n, _)| n == name).map(|(_, v)| v.as_str())
}

/// One `<form>` and the `<input>`s in it.
#[derive(Debug, Default)]
pub(crate) struct Form {
    pub(crate) attrs: Attrs,
    pub(crate) inputs: Vec<Attrs>,
}

/// What a page's site search is read from.
#[derive(Debug, Default)]
pub(crate) struct PageTags {
    pub(crate) forms: Vec<Form>,
    pub(crate) links: Vec<Attrs>,
}

/// The forms and links of `html`.
pub(crate) fn page_tags(html: &str) -> PageTags {
    let input = BufferQueue::default();
    input.push_back(StrTendril::from_slice(html));
    let tok = Tokenizer::new(Collect::default(), TokenizerOpts::default());
    // The sink never blocks the tokenizer on a script: it reads to the end.
    let _ = tok.feed(&input);
    tok.end();
    let c = tok.sink;
    let mut tags = c.tags.into_inner();
    if let Some(open) = c.open.into_inner() {
        tags.forms.push(open);
    }
    tags
}

/// The tokenizer's sink: collects forms, their inputs, and links.
#[derive(Default)]
struct Collect {
    tags: RefCell<PageTags>,
    /// The form open now.
    open: RefCell<Option<Form>>,
}

fn attrs_of(tag: &Tag) -> Attrs {
    tag.attrs.iter().map(|a| (a.name.local.to_string(), a.value.to_string())).collect()
}

impl TokenSink for Collect {
    type Handle = ();

    fn process_token(&self, token: Token, _line: u64) -> TokenSinkResult<()> {
        let Token::TagToken(tag) = token else { return TokenSinkResult::Continue };
        let name: &str = &tag.name;
        match (tag.kind, name) {
            (TagKind::StartTag, "form") => {
                let mut open = self.open.borrow_mut();
                if open.is_none() {
                    *open = Some(Form { attrs: attrs_of(&tag), inputs: Vec::new() });
                }
            }
            (TagKind::EndTag, "form") => {
                if let Some(f) = self.open.borrow_mut().take() {
                    self.tags.borrow_mut().forms.push(f);
                }
            }
            (TagKind::StartTag, "input") => {
                if let Some(f) = self.open.borrow_mut().as_mut() {
                    f.inputs.push(attrs_of(&tag));
                }
            }
            (TagKind::StartTag, "link") => self.tags.borrow_mut().links.push(attrs_of(&tag)),
            // Text the tree builder would have the tokenizer read as text, not markup.
            (TagKind::StartTag, "script") if !tag.self_closing => {
                return TokenSinkResult::RawData(RawKind::ScriptData)
            }
            (TagKind::StartTag, "style" | "xmp" | "iframe" | "noembed" | "noframes") if !tag.self_closing => {
                return TokenSinkResult::RawData(RawKind::Rawtext)
            }
            (TagKind::StartTag, "textarea" | "title") if !tag.self_closing => {
                return TokenSinkResult::RawData(RawKind::Rcdata)
            }
            _ => {}
        }
        TokenSinkResult::Continue
    }
}

/// The attributes of each `<Url>` element of an OpenSearch description (names without their namespace
/// prefix), in document order, up to the first error in the XML.
pub(crate) fn opensearch_urls(xml: &str) -> Vec<Attrs> {
    let mut reader = quick_xml::Reader::from_str(xml);
    let mut out = Vec::new();
    loop {
        match reader.read_event() {
            Ok(Event::Start(e) | Event::Empty(e)) if e.local_name().as_ref().eq_ignore_ascii_case(b"url") => {
                let attrs = e
                    .attributes()
                    .flatten()
                    .filter_map(|a| {
                        let name = String::from_utf8_lossy(a.key.local_name().as_ref()).to_ascii_lowercase();
                        let value = a.normalized_value(XmlVersion::Implicit1_0).ok()?.into_owned();
                        Some((name, value))
                    })
                    .collect();
                out.push(attrs);
            }
            Ok(Event::Eof) | Err(_) => return out,
            Ok(_) => {}
        }
    }
}
