//! `cargo xtask bench search [--pages N] [--dump-docs FILE]`: the frozen search engine's index over a
//! whole-site capture (issue 49, part 3). A snapshot of N HTML pages (default 100,000) in a real RocksDB
//! store, each page made of paragraphs of real documents: the HTML of Debian's documentation under
//! `/usr/share/doc` (python3-doc's ~500 pages and others) and, when `../shared/corpus/html` is beside the
//! checkout, its saved article pages; a page is 6-24 paragraphs drawn by a seeded generator, so the
//! vocabulary and its distribution are real text's. Measured in one run:
//! - build: `snapshots search-index`'s path (every page read from the store, its text extracted, indexed,
//!   packed and stored), its time, the stored index's bytes and the process's peak memory;
//! - load: a replay's first search (the blob read, checked and opened), and a second replay's of the same
//!   snapshots while the first holds it (shared: `replay::search::shared`);
//! - query latency p50/p99 over 300 queries (one-, two- and three-word queries of the corpus's words and
//!   quoted phrases), the first page of ten;
//! - determinism: the index built a second time answers every query with the same URLs in the same order
//!   (and is stored as the same blob).
//!
//! `--dump-docs FILE` writes the indexed documents (JSON lines of url, title, text) and the queries
//! (`FILE.queries`, one per line) for measuring another index on the same input.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::{bail, Context as _};
use rand::rngs::SmallRng;
use rand::{Rng as _, SeedableRng as _};
use snapshots::{NewSnapshot, Seed, SnapshotSource, Store};

const SNAPSHOT: &str = "bench/site";
const QUERIES: usize = 300;

/// Paragraphs of real documents: runs of visible text of at least 60 characters, entities decoded.
fn paragraphs() -> anyhow::Result<Vec<String>> {
    let mut files = Vec::new();
    collect_html(Path::new("/usr/share/doc"), &mut files);
    let shared = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared/corpus/html");
    collect_html(&shared, &mut files);
    files.sort();
    let mut out = Vec::new();
    for f in &files {
        let Ok(bytes) = std::fs::read(f) else { continue };
        let text = html_escape::decode_html_entities(&wall::visible_text(&String::from_utf8_lossy(&bytes)))
            .into_owned();
        out.extend(text.lines().filter(|l| l.chars().count() >= 60).map(str::to_string));
    }
    out.sort();
    out.dedup();
    if out.len() < 1000 {
        bail!(
            "only {} paragraphs of real text found under /usr/share/doc: install Debian's python3-doc \
             (apt-get install python3-doc)",
            out.len()
        );
    }
    println!("corpus: {} paragraphs from {} HTML files", out.len(), files.len());
    Ok(out)
}

fn collect_html(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for e in entries.flatten() {
        let p = e.path();
        if p.is_dir() {
            collect_html(&p, out);
        } else if p.extension().is_some_and(|x| x == "html") {
            out.push(p);
        }
    }
}

/// Page `i`: a title of a paragraph's first words, then paragraphs, as HTML with entities escaped.
fn page(paras: &[String], rng: &mut SmallRng) -> (String, String) {
    let first = &paras[rng.gen_range(0..paras.len())];
    let title: String = first.split_whitespace().take(6).collect::<Vec<_>>().join(" ");
    let mut html = format!(
        "<!doctype html><html><head><title>{}</title></head><body><nav><a href=/>Home</a> <a href=/login>Log \
         in</a></nav><main>",
        html_escape::encode_text(&title)
    );
    for _ in 0..rng.gen_range(6..=24) {
        html.push_str("<p>");
        html.push_str(&html_escape::encode_text(&paras[rng.gen_range(0..paras.len())]));
        html.push_str("</p>\n");
    }
    html.push_str("</main></body></html>");
    (title, html)
}

fn record(store: &Store, paras: &[String], pages: usize) -> anyhow::Result<u64> {
    let w = store.create_snapshot(NewSnapshot {
        name: SNAPSHOT.into(),
        created_ms: 1,
        seed: Seed { start_ms: 1_700_000_000_000, time_zone: "UTC".into() },
        source: SnapshotSource::Record,
        labels: BTreeMap::new(),
    })?;
    let mut rng = SmallRng::seed_from_u64(49);
    let mut bytes = 0u64;
    for i in 0..pages {
        let url = format!("https://docs.test/p/{i}");
        let (_, html) = page(paras, &mut rng);
        bytes += html.len() as u64;
        w.append(crate::gen::html_exchange(store, i as u64, url, html.as_bytes())?)?;
        if (i + 1) % 20_000 == 0 {
            println!("  recorded {} pages", i + 1);
        }
    }
    w.finalize(2)?;
    Ok(bytes)
}

/// Queries of the corpus's own words: one, two and three words, and quoted two-word phrases.
fn queries(paras: &[String]) -> Vec<String> {
    let mut rng = SmallRng::seed_from_u64(7);
    let mut out = Vec::new();
    while out.len() < QUERIES {
        let p = &paras[rng.gen_range(0..paras.len())];
        let words: Vec<&str> =
            p.split(|c: char| !c.is_alphanumeric()).filter(|w| w.chars().count() >= 4).collect();
        if words.len() < 4 {
            continue;
        }
        let at = rng.gen_range(0..words.len() - 3);
        out.push(match out.len() % 4 {
            0 => words[at].to_string(),
            1 => words[at..at + 2].join(" "),
            2 => words[at..at + 3].join(" "),
            _ => format!("\"{}\"", words[at..at + 2].join(" ")),
        });
    }
    out
}

fn pct(sorted: &[f64], p: f64) -> f64 {
    sorted[((sorted.len() as f64 - 1.0) * p).round() as usize]
}

pub(crate) fn run(args: &[String]) -> anyhow::Result<()> {
    let pages: usize = crate::arg(args, "--pages", 100_000);
    let dump: String = crate::arg(args, "--dump-docs", String::new());
    let paras = paragraphs()?;
    let dir = tempfile::tempdir()?;
    let store = Store::open(&dir.path().join("store"))?;
    let t = Instant::now();
    let html_bytes = record(&store, &paras, pages)?;
    println!(
        "recorded {pages} pages ({:.0} MiB of HTML) in {:.1} s",
        html_bytes as f64 / (1 << 20) as f64,
        t.elapsed().as_secs_f64()
    );
    if !dump.is_empty() {
        let m = store.manifest(SNAPSHOT)?;
        let mut out = String::new();
        for d in replay::search::documents(&store, &m)? {
            out.push_str(&serde_json::json!({"url": d.url, "title": d.title, "text": d.text}).to_string());
            out.push('\n');
        }
        std::fs::write(&dump, out).with_context(|| format!("writing {dump}"))?;
        println!("wrote the documents to {dump}");
    }
    let qs = queries(&paras);
    if !dump.is_empty() {
        std::fs::write(format!("{dump}.queries"), qs.join("\n") + "\n")?;
    }

    let mut answers: Vec<Vec<Vec<String>>> = Vec::new();
    let mut blobs = Vec::new();
    for build in 1..=2 {
        let t = Instant::now();
        let stored = replay::search::store_index(&store, SNAPSHOT)?;
        let build_s = t.elapsed().as_secs_f64();
        let t = Instant::now();
        blobs.push(stored.manifest.search_index.clone().map(|r| r.hash).unwrap_or_default());
        let ix = replay::search::load_index(&store, &stored.manifest)?.context("the stored index loads")?;
        let load_ms = t.elapsed().as_secs_f64() * 1000.0;
        let mut lat = Vec::with_capacity(qs.len());
        let (mut results, mut empty) = (Vec::new(), 0);
        for q in &qs {
            let t = Instant::now();
            let (total, hits) = ix.search(q, 0, 10, None)?;
            lat.push(t.elapsed().as_secs_f64() * 1000.0);
            empty += usize::from(total == 0);
            results.push(hits.into_iter().map(|h| h.url).collect::<Vec<_>>());
        }
        lat.sort_by(f64::total_cmp);
        println!(
            "build {build}: {} documents indexed in {build_s:.1} s ({:.0} pages/s); stored index {:.1} MiB \
             ({:.0} bytes/page); load {load_ms:.0} ms; {} queries: p50 {:.2} ms, p99 {:.2} ms, max {:.2} ms \
             ({empty} with no result)",
            stored.documents,
            stored.documents as f64 / build_s,
            stored.bytes as f64 / (1 << 20) as f64,
            stored.bytes as f64 / stored.documents.max(1) as f64,
            qs.len(),
            pct(&lat, 0.5),
            pct(&lat, 0.99),
            lat.last().copied().unwrap_or(0.0),
        );
        answers.push(results);
    }
    // Issue 61: a second task's replay over the same snapshots shares the first's index (one load per
    // process and set of snapshots), instead of loading and joining its own; tasks that start together
    // wait for one load. Memory is this process's resident set before and after each.
    let m = store.manifest(SNAPSHOT)?;
    let mib = || crate::rss_kib(std::process::id()) as f64 / 1024.0;
    let rss0 = mib();
    let t = Instant::now();
    let first = replay::search::shared_index(&store, &[&m], None);
    first.get().map_err(|e| anyhow::anyhow!("the shared index: {e}"))?;
    let first_ms = t.elapsed().as_secs_f64() * 1000.0;
    let rss1 = mib();
    let t = Instant::now();
    let second = replay::search::shared_index(&store, &[&m], None);
    second.get().map_err(|e| anyhow::anyhow!("the shared index: {e}"))?;
    let second_ms = t.elapsed().as_secs_f64() * 1000.0;
    let rss2 = mib();
    println!(
        "shared index: the first task's load {first_ms:.0} ms (+{:.0} MiB resident), the second task's \
         {second_ms:.3} ms (+{:.1} MiB; one load: {})",
        rss1 - rss0,
        rss2 - rss1,
        first.load().is_some() && first.load() == second.load()
    );
    drop((first, second));
    // Eight tasks starting at once, none holding the index before: one load between them.
    let rss0 = mib();
    let t = Instant::now();
    let held: Vec<replay::search::SharedIndex> = std::thread::scope(|s| {
        let hs: Vec<_> = (0..8)
            .map(|_| {
                s.spawn(|| {
                    let ix = replay::search::shared_index(&store, &[&m], None);
                    ix.get().is_ok().then_some(ix)
                })
            })
            .collect();
        hs.into_iter().filter_map(|h| h.join().ok().flatten()).collect()
    });
    anyhow::ensure!(held.len() == 8, "only {} of 8 tasks could search the shared index", held.len());
    let mut distinct: Vec<Option<u64>> = held.iter().map(|ix| ix.load()).collect();
    distinct.sort();
    distinct.dedup();
    println!(
        "shared index, 8 tasks at once: {:.0} ms until all 8 could search, {} load(s) between them, +{:.0} MiB \
         resident while they held it",
        t.elapsed().as_secs_f64() * 1000.0,
        distinct.iter().filter(|l| l.is_some()).count(),
        mib() - rss0
    );
    drop(held);
    let same = answers[0] == answers[1];
    println!(
        "same results across the two builds: {same} ({} queries); same stored blob: {}",
        qs.len(),
        blobs[0] == blobs[1]
    );
    println!(
        "peak memory of this process: {:.0} MiB",
        crate::peak_rss_kib(std::process::id()) as f64 / 1024.0
    );
    if !same {
        bail!("two builds of the same documents answered differently");
    }
    Ok(())
}
