//! The full-text index behind the frozen search engine, on tantivy: each recorded document's title, text
//! and URL; BM25-ranked (tantivy's: k1 = 1.2, b = 0.75, per field, the title boosted 2x); queries in
//! tantivy's syntax, words OR-ed by default (`"a phrase"`, `+must`, `-not`, `AND`, `OR`), read leniently
//! (what does not parse is dropped, never an error page); ties broken by URL, so the same query over the
//! same documents gives the same results in the same order, whichever build made the index.
//! Size: one room for the index (its schema, build, join, query and packing, which share its fields and
//! readers), then its table tests; the per-process sharing is `shared.rs`.
//!
//! An index lives in memory (tantivy's `RamDirectory`) and leaves it as its files ([`SearchIndex::files`]),
//! which `stored` packs into one content-addressed blob beside the snapshot. A replay over several
//! snapshots (the replayed one and its overlays) joins their indexes without re-indexing: every part's
//! segments are listed in one index, and a document whose URL an earlier part holds is hidden (the
//! replayed snapshot's page wins, as it does in replay). A hidden document still counts in the BM25
//! statistics (document frequencies, average lengths), so a joined index ranks as one built over all the
//! documents would, up to those few counts.

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::path::Path;
use std::sync::Arc;

use tantivy::collector::{Collector, SegmentCollector};
use tantivy::directory::{Directory, RamDirectory};
use tantivy::index::SegmentId;
use tantivy::query::{BooleanQuery, ConstScoreQuery, EmptyQuery, Occur, Query, QueryParser, TermQuery};
use tantivy::schema::{Field, IndexRecordOption, Schema, TextFieldIndexing, TextOptions, Value, STRING};
use tantivy::store::Compressor;
use tantivy::{
    DocAddress, DocId, Index, IndexReader, IndexSettings, ReloadPolicy, Score, SegmentOrdinal, SegmentReader,
    TantivyDocument, TantivyError, Term,
};

use super::words::{self, TOKENIZER};

/// Derivation version of the index (engine, schema, tokenizer, text extraction, ranking): a change to any of
/// them bumps it. 1 was the hand-written BM25 index stored as JSON.
pub const INDEX_VERSION: u32 = 2;

/// Characters of a document's text kept for snippets and indexing.
const TEXT_MAX: usize = 64 * 1024;
/// The indexer's memory budget (one thread): segments are flushed at this size and merged into one.
const WRITER_BUDGET: usize = 64 << 20;
/// The title's weight against the text's.
const TITLE_BOOST: Score = 2.0;
/// The index's list of segments.
const META: &str = "meta.json";
/// The index's list of the files it manages (not stored: written on opening).
const MANAGED: &str = ".managed.json";

/// One recorded document.
#[derive(Debug, Clone, PartialEq)]
pub struct Doc {
    /// Its URL (what a result links to).
    pub url: String,
    /// Its `<title>`.
    pub title: String,
    /// Its text, one line per run of text: what the browser rendered when a recording observed it, else the
    /// recorded HTML's visible text, entities decoded.
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
    pub score: f32,
}

/// Per segment, its documents hidden by an earlier part's document of the same URL (shared with each
/// query's collector, not copied).
type Hidden = HashMap<SegmentId, Arc<HashSet<DocId>>>;

#[derive(Clone, Copy)]
struct Fields {
    url: Field,
    host: Field,
    title: Field,
    text: Field,
}

fn schema() -> (Schema, Fields) {
    let words = TextOptions::default()
        .set_indexing_options(
            TextFieldIndexing::default()
                .set_tokenizer(TOKENIZER)
                .set_index_option(IndexRecordOption::WithFreqsAndPositions),
        )
        .set_stored();
    let mut b = Schema::builder();
    // The URL is a column too: joining parts reads every document's URL from it, not from the doc store.
    let url = b.add_text_field("url", TextOptions::default().set_stored().set_fast("raw"));
    let host = b.add_text_field("host", STRING);
    let title = b.add_text_field("title", words.clone());
    let text = b.add_text_field("text", words);
    (b.build(), Fields { url, host, title, text })
}

/// The full-text index of some documents: an opened index ([`Core`], shared by every view of a joined
/// index) and the documents this view hides.
pub struct SearchIndex {
    core: Arc<Core>,
    hidden: Hidden,
    docs: usize,
}

/// An index's files, opened.
struct Core {
    index: Index,
    dir: RamDirectory,
    reader: IndexReader,
    fields: Fields,
}

impl std::fmt::Debug for SearchIndex {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SearchIndex").field("docs", &self.docs).finish_non_exhaustive()
    }
}

fn io_err(what: &str, e: impl std::fmt::Display) -> TantivyError {
    TantivyError::SystemError(format!("{what}: {e}"))
}

impl SearchIndex {
    /// Index `docs`; a URL seen twice keeps its first document (the replayed snapshot comes first).
    pub fn build(docs: impl IntoIterator<Item = Doc>) -> Result<Self, TantivyError> {
        let (schema, f) = schema();
        let dir = RamDirectory::create();
        let settings = IndexSettings { docstore_compression: Compressor::Lz4, ..IndexSettings::default() };
        let index = Index::create(dir.clone(), schema, settings)?;
        index.tokenizers().register(TOKENIZER, words::analyzer());
        let mut w = index.writer_with_num_threads::<TantivyDocument>(1, WRITER_BUDGET)?;
        // One segment at the end, merged here: no merge thread runs behind the build.
        w.set_merge_policy(Box::new(tantivy::indexer::NoMergePolicy));
        let mut seen = BTreeSet::new();
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
            let host = url::Url::parse(&d.url).ok().and_then(|u| u.host_str().map(str::to_string));
            let mut doc = TantivyDocument::default();
            doc.add_text(f.url, &d.url);
            doc.add_text(f.host, host.as_deref().unwrap_or(""));
            doc.add_text(f.title, &d.title);
            doc.add_text(f.text, &d.text);
            w.add_document(doc)?;
        }
        w.commit()?;
        let segments = index.searchable_segment_ids()?;
        if segments.len() > 1 {
            w.merge(&segments).wait()?;
        }
        w.wait_merging_threads()?;
        Self::open(index, dir, HashMap::new())
    }

    fn open(index: Index, dir: RamDirectory, hidden: Hidden) -> Result<Self, TantivyError> {
        Ok(Self::view(Arc::new(Core::open(index, dir)?), hidden))
    }

    /// `core` with `hidden`'s documents hidden.
    fn view(core: Arc<Core>, hidden: Hidden) -> Self {
        let all = core.reader.searcher().num_docs() as usize;
        let docs = all - hidden.values().map(|h| h.len()).sum::<usize>();
        SearchIndex { core, hidden, docs }
    }

    /// The index's files (name, bytes), by name: what [`SearchIndex::from_files`] opens again. A segment is
    /// named by the hash of its files (tantivy names it by a random id), so the same documents give the
    /// same files, and a stored index is content-addressed by what it holds.
    pub fn files(&self) -> Result<Vec<(String, Vec<u8>)>, TantivyError> {
        if !self.hidden.is_empty() {
            return Err(TantivyError::InvalidArgument("a joined index is not stored".into()));
        }
        let mut files = self.raw_files()?;
        for m in &self.core.index.searchable_segment_metas()? {
            let old = m.id().uuid_string();
            let mut h = blake3::Hasher::new();
            for (name, bytes) in files.iter().filter(|(n, _)| n.starts_with(&old)) {
                h.update(&name.as_bytes()[old.len()..]);
                h.update(&(bytes.len() as u64).to_le_bytes());
                h.update(bytes);
            }
            let new = h.finalize().to_hex()[..32].to_string();
            files = rename_segment(files, &old, &new);
        }
        Ok(files.into_iter().collect())
    }

    /// The index's files under the names it has now.
    fn raw_files(&self) -> Result<BTreeMap<String, Vec<u8>>, TantivyError> {
        let mut names: BTreeSet<String> = BTreeSet::from([META.to_string()]);
        names.extend(
            self.core
                .index
                .load_metas()?
                .list_segment_files()
                .into_iter()
                .map(|p| p.to_string_lossy().into_owned()),
        );
        let mut files = BTreeMap::new();
        for name in names {
            // A segment lists components it may not have (deletes, a temporary store).
            if !self.core.dir.exists(Path::new(&name)).map_err(|e| io_err(&name, e))? {
                continue;
            }
            let bytes =
                self.core.dir.open_read(Path::new(&name))?.read_bytes().map_err(|e| io_err(&name, e))?;
            files.insert(name, bytes.as_slice().to_vec());
        }
        Ok(files)
    }

    /// An index from its files, every file's checksum checked.
    pub fn from_files<B: AsRef<[u8]>>(
        files: impl IntoIterator<Item = (String, B)>,
    ) -> Result<Self, TantivyError> {
        let dir = RamDirectory::create();
        let mut names = Vec::new();
        for (name, bytes) in files {
            dir.atomic_write(Path::new(&name), bytes.as_ref()).map_err(|e| io_err(&name, e))?;
            names.push(name);
        }
        // tantivy checks the checksums of the files its managed list names: all of them.
        let managed = serde_json::to_vec(&names).map_err(|e| io_err(MANAGED, e))?;
        dir.atomic_write(Path::new(MANAGED), &managed).map_err(|e| io_err(MANAGED, e))?;
        let index = Index::open(dir.clone())?;
        index.tokenizers().register(TOKENIZER, words::analyzer());
        let bad = index.validate_checksum()?;
        if !bad.is_empty() {
            let names: BTreeSet<String> = bad.iter().map(|p| p.display().to_string()).collect();
            return Err(TantivyError::SystemError(format!("checksum mismatch in {names:?}")));
        }
        Self::open(index, dir, HashMap::new())
    }

    /// One index of several (each snapshot's, the replayed one first), without re-indexing: their segments
    /// listed together, a document hidden when an earlier part holds its URL.
    pub fn join(parts: Vec<SearchIndex>) -> Result<Self, TantivyError> {
        let order: Vec<usize> = (0..parts.len()).collect();
        Ok(Joined::new(parts)?.view(&order))
    }

    /// Whether two indexes read the same opened files (views of one [`Joined`]).
    pub fn same_files(&self, other: &SearchIndex) -> bool {
        Arc::ptr_eq(&self.core, &other.core)
    }

    /// Documents indexed (a joined index: those not hidden).
    pub fn len(&self) -> usize {
        self.docs
    }

    /// Whether nothing was indexed.
    pub fn is_empty(&self) -> bool {
        self.docs == 0
    }

    /// Documents matching `query`, best first (ties by URL), of `host` when given (a site's own search):
    /// `(total, hits[offset..offset+limit])`.
    pub fn search(
        &self,
        query: &str,
        offset: usize,
        limit: usize,
        host: Option<&str>,
    ) -> Result<(usize, Vec<Hit>), TantivyError> {
        self.search_except(query, offset, limit, host, &BTreeSet::new())
    }

    /// [`SearchIndex::search`] without the documents whose URL is in `except` (a held-out task's private
    /// pages): left out before the ranking is paged, so every page is full and the total exact.
    pub fn search_except(
        &self,
        query: &str,
        offset: usize,
        limit: usize,
        host: Option<&str>,
        except: &BTreeSet<String>,
    ) -> Result<(usize, Vec<Hit>), TantivyError> {
        let f = self.core.fields;
        let mut parser = QueryParser::for_index(&self.core.index, vec![f.title, f.text]);
        parser.set_field_boost(f.title, TITLE_BOOST);
        let (q, _dropped) = parser.parse_query_lenient(query);
        let q: Box<dyn Query> = match host {
            _ if query.trim().is_empty() => Box::new(EmptyQuery),
            Some(h) => Box::new(BooleanQuery::new(vec![
                (Occur::Must, q),
                // Every document of the host scores the same for it: the order is the query's.
                (
                    Occur::Must,
                    Box::new(ConstScoreQuery::new(
                        Box::new(TermQuery::new(Term::from_field_text(f.host, h), IndexRecordOption::Basic)),
                        0.0,
                    )),
                ),
            ])),
            None => q,
        };
        let searcher = self.core.reader.searcher();
        let mut ranked = searcher.search(&q, &Matches { hidden: &self.hidden, except })?;
        // Best first; equal scores in document order for now, by URL below.
        ranked.sort_by(|a, b| b.0.total_cmp(&a.0).then_with(|| a.1.cmp(&b.1)));
        let total = ranked.len();
        let end = (offset + limit).min(total);
        if offset >= end {
            return Ok((total, Vec::new()));
        }
        // Order the page's documents and every document tied with its first or last by URL: only those
        // documents' URLs are read.
        let (mut lo, mut hi) = (offset, end);
        while lo > 0 && ranked[lo - 1].0 == ranked[offset].0 {
            lo -= 1;
        }
        while hi < total && ranked[hi].0 == ranked[end - 1].0 {
            hi += 1;
        }
        let mut window = Vec::with_capacity(hi - lo);
        for &(score, addr) in &ranked[lo..hi] {
            let doc: TantivyDocument = searcher.doc(addr)?;
            let get = |field| doc.get_first(field).and_then(|v| v.as_str()).unwrap_or("").to_string();
            window.push((score, get(f.url), get(f.title), get(f.text)));
        }
        window.sort_by(|a, b| b.0.total_cmp(&a.0).then_with(|| a.1.cmp(&b.1)));
        let asked: BTreeSet<String> = words::words(query).into_iter().collect();
        let hits = window
            .into_iter()
            .skip(offset - lo)
            .take(end - offset)
            .map(|(score, url, title, text)| Hit {
                title: if title.is_empty() { url.clone() } else { title },
                snippet: snippet(&text, &asked),
                url,
                score,
            })
            .collect();
        Ok((total, hits))
    }
}

impl Core {
    fn open(index: Index, dir: RamDirectory) -> Result<Self, TantivyError> {
        let (_, fields) = schema();
        let reader = index.reader_builder().reload_policy(ReloadPolicy::Manual).try_into()?;
        Ok(Core { index, dir, reader, fields })
    }
}

/// Several indexes' segments listed in one index, before any document is hidden: what every replay over
/// the same snapshots shares whatever its order of them ([`Joined::view`]). A document whose URL another
/// part holds too is hidden only in a view, where the part first in the view's order keeps it.
pub struct Joined {
    core: Arc<Core>,
    /// Parts joined.
    parts: usize,
    /// Each segment's part and its number of documents (a part left out of a view hides them all).
    segments: Vec<(usize, SegmentId, DocId)>,
    /// Per URL held by more than one document, its documents: (part, position of the document's segment
    /// in its part, segment, document).
    repeated: Vec<Vec<(usize, usize, SegmentId, DocId)>>,
}

impl std::fmt::Debug for Joined {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Joined").field("parts", &self.parts).finish_non_exhaustive()
    }
}

impl Joined {
    /// The segments of `parts` (each an index of its own, none hidden) in one index.
    pub fn new(parts: Vec<SearchIndex>) -> Result<Self, TantivyError> {
        let n = parts.len();
        if n <= 1 {
            let core = match parts.into_iter().next() {
                Some(p) => p.core,
                None => SearchIndex::build([])?.core,
            };
            let segments = core
                .reader
                .searcher()
                .segment_readers()
                .iter()
                .map(|r| (0, r.segment_id(), r.max_doc()))
                .collect();
            return Ok(Joined { core, parts: n, segments, repeated: Vec::new() });
        }
        let dir = RamDirectory::create();
        let mut meta: Option<serde_json::Value> = None;
        // Every segment: (part, position in the part, id).
        let mut order: Vec<(usize, usize, SegmentId)> = Vec::new();
        for (p, part) in parts.iter().enumerate() {
            // Two parts of the same documents have segments of the same name: each part's get its own.
            let mut files = part.raw_files()?;
            let ids = segment_ids(&files);
            for (k, old) in ids.iter().enumerate() {
                let new = format!("{p:016x}{k:016x}");
                files = rename_segment(files, old, &new);
                let id = SegmentId::from_uuid_string(&new)
                    .map_err(|e| io_err("a segment id", format!("{e:?}")))?;
                order.push((p, k, id));
            }
            for (name, bytes) in files {
                if name == META {
                    let m: serde_json::Value =
                        serde_json::from_slice(&bytes).map_err(|e| io_err("an index's meta.json", e))?;
                    let segs = m.get("segments").and_then(|s| s.as_array()).cloned().unwrap_or_default();
                    match meta.as_mut().and_then(|all| all.get_mut("segments")).and_then(|s| s.as_array_mut())
                    {
                        Some(all) => all.extend(segs),
                        None => meta = Some(m),
                    }
                    continue;
                }
                dir.atomic_write(Path::new(&name), &bytes).map_err(|e| io_err(&name, e))?;
            }
        }
        drop(parts);
        let meta = meta.ok_or_else(|| io_err("joining indexes", "no meta.json"))?;
        let bytes = serde_json::to_vec(&meta).map_err(|e| io_err("joining indexes", e))?;
        dir.atomic_write(Path::new(META), &bytes).map_err(|e| io_err(META, e))?;
        let index = Index::open(dir.clone())?;
        index.tokenizers().register(TOKENIZER, words::analyzer());
        let core = Core::open(index, dir)?;
        // Each URL's documents, in join order; those of URLs held once are dropped.
        let searcher = core.reader.searcher();
        let by_id: HashMap<SegmentId, &SegmentReader> =
            searcher.segment_readers().iter().map(|r| (r.segment_id(), r)).collect();
        let mut by_url: HashMap<String, Vec<(usize, usize, SegmentId, DocId)>> = HashMap::new();
        let mut segments = Vec::with_capacity(order.len());
        for (p, k, id) in order {
            let Some(r) = by_id.get(&id) else { continue };
            segments.push((p, id, r.max_doc()));
            let urls =
                r.fast_fields().str("url")?.ok_or_else(|| io_err("joining indexes", "no URL column"))?;
            let mut url = String::new();
            for doc in 0..r.max_doc() {
                url.clear();
                let Some(ord) = urls.term_ords(doc).next() else { continue };
                urls.ord_to_str(ord, &mut url).map_err(|e| io_err("reading a URL column", e))?;
                let held = (p, k, id, doc);
                match by_url.get_mut(url.as_str()) {
                    Some(docs) => docs.push(held),
                    None => {
                        by_url.insert(url.clone(), vec![held]);
                    }
                }
            }
        }
        let repeated = by_url.into_values().filter(|d| d.len() > 1).collect();
        drop(searcher);
        Ok(Joined { core: Arc::new(core), parts: n, segments, repeated })
    }

    /// Parts joined.
    pub fn parts(&self) -> usize {
        self.parts
    }

    /// The joined index as a replay reads it: `order` lists the parts (by their index in [`Joined::new`])
    /// first to last, and a URL's document is the first part's in that order (then its segments' and
    /// documents' order); the others are hidden. The files are shared, not copied.
    ///
    /// A part `order` does not list is left out: every document of it is hidden (a held-out task's own
    /// snapshot, whose replay shares the index of its whole site). Its documents still count in the
    /// ranking statistics, as every hidden document does.
    pub fn view(&self, order: &[usize]) -> SearchIndex {
        let mut rank = vec![usize::MAX; self.parts];
        for (r, &p) in order.iter().enumerate() {
            if let Some(slot) = rank.get_mut(p) {
                *slot = (*slot).min(r);
            }
        }
        let mut hidden: HashMap<SegmentId, HashSet<DocId>> = HashMap::new();
        for (p, id, docs) in &self.segments {
            if rank.get(*p).is_none_or(|r| *r == usize::MAX) {
                hidden.entry(*id).or_default().extend(0..*docs);
            }
        }
        for docs in &self.repeated {
            let first = docs.iter().min_by_key(|(p, k, _, doc)| (rank[*p], *k, *doc));
            for held in docs.iter().filter(|d| Some(*d) != first) {
                hidden.entry(held.2).or_default().insert(held.3);
            }
        }
        let hidden = hidden.into_iter().map(|(id, docs)| (id, Arc::new(docs))).collect();
        SearchIndex::view(self.core.clone(), hidden)
    }
}

/// The segment ids an index's files name (in its meta.json), in its order.
fn segment_ids(files: &BTreeMap<String, Vec<u8>>) -> Vec<String> {
    let meta: serde_json::Value =
        files.get(META).and_then(|b| serde_json::from_slice(b).ok()).unwrap_or_default();
    meta.get("segments")
        .and_then(|s| s.as_array())
        .map(|segs| {
            segs.iter().filter_map(|s| s.get("segment_id")?.as_str().map(|id| id.replace('-', ""))).collect()
        })
        .unwrap_or_default()
}

/// `files` with segment `old` named `new` (32 hex digits each): its files' names (the digits) and its entry in
/// meta.json (a UUID's hyphenated form).
fn rename_segment(files: BTreeMap<String, Vec<u8>>, old: &str, new: &str) -> BTreeMap<String, Vec<u8>> {
    let uuid = |id: &str| {
        let d = |r: std::ops::Range<usize>| id.get(r).unwrap_or("");
        format!("\"{}-{}-{}-{}-{}\"", d(0..8), d(8..12), d(12..16), d(16..20), d(20..32))
    };
    files
        .into_iter()
        .map(|(name, bytes)| match name.strip_prefix(old) {
            _ if name == META => {
                let meta = String::from_utf8_lossy(&bytes).replace(&uuid(old), &uuid(new));
                (name, meta.into_bytes())
            }
            Some(rest) => (format!("{new}{rest}"), bytes),
            None => (name, bytes),
        })
        .collect()
}

/// Every matching document not hidden and whose URL is not in `except`, with its score.
struct Matches<'a> {
    hidden: &'a Hidden,
    except: &'a BTreeSet<String>,
}

struct SegmentMatches {
    segment: SegmentOrdinal,
    hidden: Option<Arc<HashSet<DocId>>>,
    /// The segment's URL column and the term ordinals of the excepted URLs it holds.
    except: Option<(tantivy::columnar::StrColumn, HashSet<u64>)>,
    out: Vec<(Score, DocAddress)>,
}

impl Collector for Matches<'_> {
    type Fruit = Vec<(Score, DocAddress)>;
    type Child = SegmentMatches;

    fn for_segment(&self, segment: SegmentOrdinal, r: &SegmentReader) -> tantivy::Result<SegmentMatches> {
        let mut except = None;
        if !self.except.is_empty() {
            if let Some(urls) = r.fast_fields().str("url")? {
                let ords: HashSet<u64> =
                    self.except.iter().filter_map(|u| urls.dictionary().term_ord(u).ok().flatten()).collect();
                if !ords.is_empty() {
                    except = Some((urls, ords));
                }
            }
        }
        Ok(SegmentMatches {
            segment,
            hidden: self.hidden.get(&r.segment_id()).cloned(),
            except,
            out: Vec::new(),
        })
    }

    fn requires_scoring(&self) -> bool {
        true
    }

    fn merge_fruits(&self, parts: Vec<Vec<(Score, DocAddress)>>) -> tantivy::Result<Self::Fruit> {
        Ok(parts.into_iter().flatten().collect())
    }
}

impl SegmentCollector for SegmentMatches {
    type Fruit = Vec<(Score, DocAddress)>;

    fn collect(&mut self, doc: DocId, score: Score) {
        let excepted = || {
            self.except.as_ref().is_some_and(|(urls, ords)| urls.term_ords(doc).any(|o| ords.contains(&o)))
        };
        if self.hidden.as_ref().is_none_or(|h| !h.contains(&doc)) && !excepted() {
            self.out.push((score, DocAddress::new(self.segment, doc)));
        }
    }

    fn harvest(self) -> Self::Fruit {
        self.out
    }
}

fn snippet(text: &str, asked: &BTreeSet<String>) -> String {
    let mut analyzer = words::analyzer();
    let line = text
        .lines()
        .find(|l| words::words_with(&mut analyzer, l).iter().any(|t| asked.contains(t)))
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

    fn urls(ix: &SearchIndex, q: &str) -> Vec<String> {
        ix.search(q, 0, 10, None).unwrap().1.into_iter().map(|h| h.url).collect()
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
            doc("https://s.test/cafe", "Café", "Café crème, 東京タワー"),
            doc("https://s.test/kyoto", "京都", "京都 タワー"),
        ])
        .unwrap();
        assert_eq!(ix.len(), 7);
        for (query, expect) in [
            ("kettle", &["https://s.test/kettle"][..]),
            ("KETTLE!", &["https://s.test/kettle"]),
            // The title counts twice: the teapot's title beats the kettle's text.
            ("tea teapot", &["https://s.test/teapot", "https://s.test/kettle"]),
            ("jar", &["https://s.test/a-jar", "https://s.test/b-jar"]),
            ("duplicate", &[]),
            ("", &[]),
            ("nothing here", &[]),
            // Phrases and boolean queries.
            ("\"blue kettle\"", &["https://s.test/kettle"]),
            ("\"kettle blue\"", &[]),
            ("+tea -teapot", &["https://s.test/kettle"]),
            ("café", &["https://s.test/cafe"]),
            // A CJK run is a phrase of its characters: 東京タワー, not every page with タワー or 京.
            ("東京タワー", &["https://s.test/cafe"]),
            ("京都", &["https://s.test/kyoto"]),
            // What does not parse is dropped, not an error.
            ("kettle AND (", &["https://s.test/kettle"]),
        ] {
            assert_eq!(urls(&ix, query), expect, "{query:?}");
            assert_eq!(ix.search(query, 0, 10, None).unwrap().0, expect.len(), "{query:?}");
        }
        let (_, hits) = ix.search("price", 0, 10, None).unwrap();
        assert_eq!(hits[0].snippet, "Price 24.00");
        // Paging.
        let (total, page2) = ix.search("jar glass", 1, 1, None).unwrap();
        assert_eq!((total, page2.len(), page2[0].url.as_str()), (2, 1, "https://s.test/b-jar"));
        // A host's own documents.
        let (total, _) = ix.search("tea", 0, 10, Some("t.test")).unwrap();
        assert_eq!(total, 0);
        assert_eq!(ix.search("tea", 0, 10, Some("s.test")).unwrap().0, 2);
    }

    /// Issue 61: a held-out task's private pages leave the ranking before it is paged: every page is full,
    /// the total exact, whatever page the excepted documents would have been on.
    #[test]
    fn excepted_urls_leave_before_the_results_are_paged() {
        let docs: Vec<Doc> =
            (0..6).map(|i| doc(&format!("https://s.test/{i}"), "Same", "same words")).collect();
        let ix = SearchIndex::build(docs).unwrap();
        let except: BTreeSet<String> =
            ["https://s.test/0", "https://s.test/3", "https://s.test/elsewhere"].map(String::from).into();
        let page = |offset: usize| {
            let (total, hits) = ix.search_except("same", offset, 2, None, &except).unwrap();
            (
                total,
                hits.into_iter().map(|h| h.url.rsplit('/').next().unwrap().to_string()).collect::<Vec<_>>(),
            )
        };
        assert_eq!(page(0), (4, vec!["1".to_string(), "2".to_string()]));
        assert_eq!(page(2), (4, vec!["4".to_string(), "5".to_string()]));
        assert_eq!(page(4), (4, vec![]));
        assert_eq!(ix.search_except("same", 0, 10, None, &BTreeSet::new()).unwrap().0, 6);
    }

    #[test]
    fn ties_are_ordered_by_url_across_pages() {
        let docs: Vec<Doc> =
            (0..40).rev().map(|i| doc(&format!("https://s.test/{i:02}"), "Same", "same words")).collect();
        let ix = SearchIndex::build(docs).unwrap();
        let mut all = Vec::new();
        for page in 0..4 {
            let (total, hits) = ix.search("same", page * 10, 10, None).unwrap();
            assert_eq!(total, 40);
            all.extend(hits.into_iter().map(|h| h.url));
        }
        let expect: Vec<String> = (0..40).map(|i| format!("https://s.test/{i:02}")).collect();
        assert_eq!(all, expect);
    }

    #[test]
    fn stored_files_reopen_and_joined_indexes_hide_later_parts_urls() {
        let a = [
            doc("https://s.test/kettle", "Blue Kettle", "A blue kettle for tea."),
            doc("https://s.test/mug", "Red Mug", "A red mug for tea"),
        ];
        let b = [
            doc("https://s.test/mug", "Shadowed", "the first part's document of a URL wins"),
            doc("https://s.test/teapot", "Green Teapot", "Green teapot, tea for two"),
        ];
        let c = [doc("https://t.test/pot", "Pot", "tea pot tea")];
        let all = SearchIndex::build(a.iter().chain(&b).chain(&c).cloned()).unwrap();
        let reopen =
            |d: &[Doc]| SearchIndex::from_files(SearchIndex::build(d.to_vec()).unwrap().files().unwrap());
        let joined =
            SearchIndex::join(vec![reopen(&a).unwrap(), reopen(&b).unwrap(), reopen(&c).unwrap()]).unwrap();
        assert_eq!(joined.len(), 4);
        for q in ["tea", "kettle mug", "shadowed", "teapot two", "pot"] {
            assert_eq!(urls(&joined, q), urls(&all, q), "{q}");
        }
        assert_eq!(urls(&joined, "shadowed"), Vec::<String>::new());
        // The same documents make the same files, and two snapshots holding them join.
        assert_eq!(
            SearchIndex::build(a.to_vec()).unwrap().files().unwrap(),
            SearchIndex::build(a.to_vec()).unwrap().files().unwrap()
        );
        let twice = SearchIndex::join(vec![reopen(&a).unwrap(), reopen(&a).unwrap()]).unwrap();
        assert_eq!((twice.len(), urls(&twice, "tea")), (2, urls(&reopen(&a).unwrap(), "tea")));
        // A changed byte is found.
        let mut files = SearchIndex::build(a.to_vec()).unwrap().files().unwrap();
        let (_, bytes) = files.iter_mut().find(|(n, _)| n.ends_with(".idx")).unwrap();
        bytes[0] ^= 0xff;
        assert!(SearchIndex::from_files(files).is_err());
    }
}
