//! The frozen search engine's tokenizer: Unicode words (UAX #29, the `unicode-segmentation` crate),
//! lower-cased, words longer than [`WORD_MAX`] bytes dropped.
//!
//! UAX #29 keeps a run of letters and digits as one word in alphabetic scripts (`café`, `x86`, `don't`)
//! and gives every Han ideograph and every hiragana its own word, while a katakana or hangul run stays one
//! word. A query word the tokenizer splits into several becomes a phrase query (tantivy's query parser
//! does this for any field with positions), so `東京タワー` finds the pages holding that run and not every
//! page holding 東. This is what Lucene's and Elasticsearch's `standard` analyzer do for CJK text; a
//! dictionary segmenter (jieba, lindera) would rank better but ships tens of MiB of dictionaries per
//! language.

use tantivy::tokenizer::{LowerCaser, RemoveLongFilter, TextAnalyzer, Token, TokenStream, Tokenizer};
use unicode_segmentation::UnicodeSegmentation;

/// The name the tokenizer is registered under in every index.
pub const TOKENIZER: &str = "webfreeze-words";

/// Longest word kept, in bytes (longer ones are base64, hashes and minified code, never searched for).
pub const WORD_MAX: usize = 64;

/// Unicode words (UAX #29), as tantivy tokens.
#[derive(Clone, Default)]
pub struct Words;

/// The words of one text, found up front.
pub struct WordStream {
    tokens: Vec<Token>,
    next: usize,
}

impl Tokenizer for Words {
    type TokenStream<'a> = WordStream;

    fn token_stream<'a>(&'a mut self, text: &'a str) -> WordStream {
        let tokens = text
            .unicode_word_indices()
            .enumerate()
            .map(|(position, (from, w))| Token {
                offset_from: from,
                offset_to: from + w.len(),
                position,
                text: w.to_string(),
                position_length: 1,
            })
            .collect();
        WordStream { tokens, next: 0 }
    }
}

impl TokenStream for WordStream {
    fn advance(&mut self) -> bool {
        self.next += 1;
        self.next <= self.tokens.len()
    }

    fn token(&self) -> &Token {
        &self.tokens[self.next - 1]
    }

    fn token_mut(&mut self) -> &mut Token {
        &mut self.tokens[self.next - 1]
    }
}

/// The analyzer every indexed field and every query uses.
pub fn analyzer() -> TextAnalyzer {
    TextAnalyzer::builder(Words).filter(RemoveLongFilter::limit(WORD_MAX)).filter(LowerCaser).build()
}

/// The words of `s` as the index sees them.
pub fn words(s: &str) -> Vec<String> {
    words_with(&mut analyzer(), s)
}

/// [`words`] with an analyzer the caller keeps (one per many texts).
pub fn words_with(a: &mut TextAnalyzer, s: &str) -> Vec<String> {
    let mut stream = a.token_stream(s);
    let mut out = Vec::new();
    while stream.advance() {
        out.push(stream.token().text.clone());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_table() {
        for (text, expect) in [
            ("Blue KETTLE, tea-for-two!", &["blue", "kettle", "tea", "for", "two"][..]),
            ("café crème", &["café", "crème"]),
            ("x86_64 don't", &["x86_64", "don't"]),
            // Han ideographs one by one; a katakana run stays whole.
            ("東京タワー", &["東", "京", "タワー"]),
            ("北京大学", &["北", "京", "大", "学"]),
            ("서울 특별시", &["서울", "특별시"]),
            ("", &[]),
        ] {
            assert_eq!(words(text), expect, "{text:?}");
        }
        let long = "a".repeat(WORD_MAX + 1);
        assert_eq!(words(&format!("short {long} end")), ["short", "end"]);
    }
}
