//! The full-text index behind the frozen search engine: the recorded HTML documents (title, URL, visible
//! text), BM25-ranked (Robertson's k1 = 1.2, b = 0.75; the title counted twice), ties broken by URL, so
//! the same query over the same snapshots gives the same results in the same order every time.
//!
//! Hand-written rather than tantivy: the corpus is the documents of the few snapshots one replay serves
//! (tens to a few thousand pages). Each snapshot's index is one value, stored as one content-addressed blob
//! beside the snapshot (`stored`), and a replay merges its snapshots' indexes in memory in milliseconds;
//! tantivy's on-disk segment directories, merge threads and file locks would sit beside the store (its
//! integrity checks, `gc`, bundles) rather than inside it, and be most of the code path and none of the
//! need. The ranking is the textbook formula, and its order is pinned by a table test.

use std::collections::{BTreeMap, BTreeSet};

use serde::{Deserialize, Serialize};

/// Derivation version of the index (tokens, fields, ranking): a change to any of them bumps it.
pub const INDEX_VERSION: u32 = 1;

const K1: f64 = 1.2;
const B: f64 = 0.75;
/// Characters of a document's text kept for snippets and indexing.
const TEXT_MAX: usize = 64 * 1024;

/// One recorded document.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Doc {
    /// Its URL (what a result links to).
    pub url: String,
    /// Its `<title>`.
    pub title: String,
    /// Its visible text, one line per run of text.
    pub text: String,
}

/// One result.
#[derive(Debug, Clone, PartialEq)]
pub struct Hit {
    /// The document's URL.
    pub url: String,
    /// Its title (the URL when it has none).
    pub title: String,
    /// A line of its text holding a query word (else its first line), cut to about 200 characters.
    pub snippet: String,
    /// BM25 score.
    pub score: f64,
}

/// The index.
#[derive(Debug, Default, Serialize, Deserialize)]
pub struct SearchIndex {
    docs: Vec<Doc>,
    lens: Vec<f64>,
    avg_len: f64,
    /// token -> (document, term frequency), documents ascending.
    postings: BTreeMap<String, Vec<(usize, u32)>>,
}

/// Lower-cased runs of letters and digits.
pub fn tokens(s: &str) -> Vec<String> {
    s.split(|c: char| !c.is_alphanumeric()).filter(|t| !t.is_empty()).map(str::to_lowercase).collect()
}

impl SearchIndex {
    /// Index `docs`; a URL seen twice keeps its first document (the replayed snapshot comes first).
    pub fn build(docs: impl IntoIterator<Item = Doc>) -> Self {
        let mut seen = BTreeSet::new();
        let mut ix = SearchIndex::default();
        for mut d in docs {
            if !seen.insert(d.url.clone()) {
                continue;
            }
            if d.text.len() > TEXT_MAX {
                let mut cut = TEXT_MAX;
                while !d.text.is_char_boundary(cut) {
                    cut -= 1;
                }
                d.text.truncate(cut);
            }
            let n = ix.docs.len();
            let mut tf: BTreeMap<String, u32> = BTreeMap::new();
            let toks: Vec<String> =
                tokens(&d.title).into_iter().chain(tokens(&d.title)).chain(tokens(&d.text)).collect();
            for t in &toks {
                *tf.entry(t.clone()).or_insert(0) += 1;
            }
            for (t, f) in tf {
                ix.postings.entry(t).or_default().push((n, f));
            }
            ix.lens.push(toks.len() as f64);
            ix.docs.push(d);
        }
        ix.avg_len =
            if ix.lens.is_empty() { 0.0 } else { ix.lens.iter().sum::<f64>() / ix.lens.len() as f64 };
        ix
    }

    /// One index of several (each snapshot's, the replayed one first), as [`SearchIndex::build`] over
    /// their documents in that order would make it: a URL seen twice keeps its first document.
    pub fn merge(parts: impl IntoIterator<Item = SearchIndex>) -> Self {
        let mut seen = BTreeSet::new();
        let mut ix = SearchIndex::default();
        for part in parts {
            // Old document number -> new; None for a URL an earlier part has.
            let renumber: Vec<Option<usize>> = part
                .docs
                .iter()
                .zip(&part.lens)
                .map(|(d, &len)| {
                    seen.insert(d.url.clone()).then(|| {
                        ix.docs.push(d.clone());
                        ix.lens.push(len);
                        ix.docs.len() - 1
                    })
                })
                .collect();
            // New numbers grow with each part: appending keeps every posting list ascending.
            for (t, post) in part.postings {
                let kept = post.into_iter().filter_map(|(d, f)| renumber[d].map(|n| (n, f)));
                ix.postings.entry(t).or_default().extend(kept);
            }
        }
        ix.postings.retain(|_, p| !p.is_empty());
        ix.avg_len =
            if ix.lens.is_empty() { 0.0 } else { ix.lens.iter().sum::<f64>() / ix.lens.len() as f64 };
        ix
    }

    /// What is wrong with it, if anything (a length per document, every posting naming a document in
    /// ascending order): what a stored index must pass before it serves a page.
    pub fn damage(&self) -> Option<String> {
        if self.lens.len() != self.docs.len() {
            return Some(format!("{} lengths for {} documents", self.lens.len(), self.docs.len()));
        }
        self.postings.iter().find_map(|(t, post)| {
            let bad =
                post.iter().any(|&(d, _)| d >= self.docs.len()) || post.windows(2).any(|w| w[0].0 >= w[1].0);
            bad.then(|| format!("the postings of {t:?} name documents it does not hold"))
        })
    }

    /// Documents indexed.
    pub fn len(&self) -> usize {
        self.docs.len()
    }

    /// Whether nothing was indexed.
    pub fn is_empty(&self) -> bool {
        self.docs.is_empty()
    }

    /// Documents matching any word of `query`, best first (ties by URL): `(total, hits[offset..offset+limit])`.
    pub fn search(&self, query: &str, offset: usize, limit: usize) -> (usize, Vec<Hit>) {
        self.search_where(query, offset, limit, |_| true)
    }

    /// [`SearchIndex::search`] over the documents whose URL `keep` accepts (a site's own search: its host).
    pub fn search_where(
        &self,
        query: &str,
        offset: usize,
        limit: usize,
        keep: impl Fn(&str) -> bool,
    ) -> (usize, Vec<Hit>) {
        let words: BTreeSet<String> = tokens(query).into_iter().collect();
        let n = self.docs.len() as f64;
        let mut scores: BTreeMap<usize, f64> = BTreeMap::new();
        for w in &words {
            let Some(post) = self.postings.get(w) else { continue };
            let df = post.len() as f64;
            let idf = (1.0 + (n - df + 0.5) / (df + 0.5)).ln();
            for &(d, f) in post {
                let f = f64::from(f);
                let norm = 1.0 - B + B * self.lens[d] / self.avg_len.max(1.0);
                *scores.entry(d).or_insert(0.0) += idf * f * (K1 + 1.0) / (f + K1 * norm);
            }
        }
        let mut ranked: Vec<(usize, f64)> =
            scores.into_iter().filter(|&(d, _)| keep(&self.docs[d].url)).collect();
        ranked.sort_by(|a, b| b.1.total_cmp(&a.1).then_with(|| self.docs[a.0].url.cmp(&self.docs[b.0].url)));
        let total = ranked.len();
        let hits = ranked
            .into_iter()
            .skip(offset)
            .take(limit)
            .map(|(d, score)| {
                let doc = &self.docs[d];
                Hit {
                    url: doc.url.clone(),
                    title: if doc.title.is_empty() { doc.url.clone() } else { doc.title.clone() },
                    snippet: snippet(&doc.text, &words),
                    score,
                }
            })
            .collect();
        (total, hits)
    }
}

fn snippet(text: &str, words: &BTreeSet<String>) -> String {
    let line = text
        .lines()
        .find(|l| tokens(l).iter().any(|t| words.contains(t)))
        .or_else(|| text.lines().next())
        .unwrap_or("");
    let mut out: String = line.chars().take(200).collect();
    if line.chars().count() > 200 {
        out.push('…');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn doc(url: &str, title: &str, text: &str) -> Doc {
        Doc { url: url.into(), title: title.into(), text: text.into() }
    }

    #[test]
    fn ranking_is_bm25_with_ties_by_url() {
        let ix = SearchIndex::build([
            doc("https://s.test/kettle", "Blue Kettle", "A blue kettle for tea.\nPrice 24.00"),
            doc("https://s.test/teapot", "Green Teapot", "Green teapot, tea for two"),
            doc("https://s.test/mug", "Red Mug", "A red mug"),
            doc("https://s.test/b-jar", "Jar", "glass"),
            doc("https://s.test/a-jar", "Jar", "glass"),
            doc("https://s.test/kettle", "Duplicate", "kept out: the first document of a URL wins"),
        ]);
        assert_eq!(ix.len(), 5);
        for (query, expect) in [
            ("kettle", &["https://s.test/kettle"][..]),
            ("KETTLE!", &["https://s.test/kettle"]),
            // The title counts twice: the teapot's title beats the kettle's text.
            ("tea teapot", &["https://s.test/teapot", "https://s.test/kettle"]),
            ("jar", &["https://s.test/a-jar", "https://s.test/b-jar"]),
            ("duplicate", &[]),
            ("", &[]),
            ("nothing here", &[]),
        ] {
            let (total, hits) = ix.search(query, 0, 10);
            let urls: Vec<&str> = hits.iter().map(|h| h.url.as_str()).collect();
            assert_eq!(urls, expect, "{query:?}");
            assert_eq!(total, expect.len(), "{query:?}");
        }
        let (_, hits) = ix.search("price", 0, 10);
        assert_eq!(hits[0].snippet, "Price 24.00");
        // Paging.
        let (total, page2) = ix.search("jar glass", 1, 1);
        assert_eq!((total, page2.len(), page2[0].url.as_str()), (2, 1, "https://s.test/b-jar"));
    }

    #[test]
    fn merged_indexes_rank_as_one_built_over_all_documents() {
        let a = [
            doc("https://s.test/kettle", "Blue Kettle", "A blue kettle for tea."),
            doc("https://s.test/mug", "Red Mug", "A red mug for tea"),
        ];
        let b = [
            doc("https://s.test/mug", "Shadowed", "the first part's document of a URL wins"),
            doc("https://s.test/teapot", "Green Teapot", "Green teapot, tea for two"),
        ];
        let c = [doc("https://t.test/pot", "Pot", "tea pot tea")];
        let all = SearchIndex::build(a.iter().chain(&b).chain(&c).cloned());
        let merged = SearchIndex::merge([
            SearchIndex::build(a.clone()),
            SearchIndex::build(b.clone()),
            SearchIndex::build(c.clone()),
        ]);
        assert_eq!(merged.damage(), None);
        assert_eq!(merged.len(), 4);
        for q in ["tea", "kettle mug", "shadowed", "teapot two", "pot"] {
            assert_eq!(merged.search(q, 0, 10), all.search(q, 0, 10), "{q}");
        }
        let mut broken = SearchIndex::build(a);
        broken.lens.pop();
        assert!(broken.damage().is_some());
    }
}
