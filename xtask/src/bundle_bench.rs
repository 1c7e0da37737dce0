//! `cargo xtask bench bundle [--entries N] [--demo DIR]`: how big a bundle is next to the store and the
//! HAR and WACZ exports of the same snapshots, and how fast each is written (bundles also verified and
//! imported).
//!
//! Two inputs: a generated store of N exchanges (the HAR generator's pages, one snapshot), and, with
//! `--demo DIR`, the run a `webfreeze demo --dir DIR` recorded (`DIR/runs/recorded`, its store
//! `DIR/store`).

use std::path::Path;
use std::time::Instant;

use archive::{har, ImportOptions};
use bundle::BundleSource;
use snapshots::Store;

use crate::gen;
use crate::store_bench::dir_size;

fn mib(b: u64) -> f64 {
    b as f64 / (1024.0 * 1024.0)
}

fn measure(
    what: &str,
    store: &Store,
    store_dir: &Path,
    source: BundleSource<'_>,
    names: &[String],
    work: &Path,
) -> anyhow::Result<String> {
    let mut har_bytes = 0;
    let mut wacz_bytes = 0;
    let t = Instant::now();
    for n in names {
        let f = work.join("export.har");
        har::export(store, n, std::fs::File::create(&f)?, "export.har")?;
        har_bytes += std::fs::metadata(&f)?.len();
    }
    let har_s = t.elapsed().as_secs_f64();
    let t = Instant::now();
    for n in names {
        let f = work.join("export.wacz");
        let out = std::io::BufWriter::new(std::fs::File::create(&f)?);
        archive::warc::export_wacz(store, n, out, "export.wacz")?;
        wacz_bytes += std::fs::metadata(&f)?.len();
    }
    let wacz_s = t.elapsed().as_secs_f64();
    let file = work.join("b.wfb");
    let t = Instant::now();
    let made = bundle::create(store, source, &file)?;
    let create_s = t.elapsed().as_secs_f64();
    let t = Instant::now();
    bundle::verify(&file)?;
    let verify_s = t.elapsed().as_secs_f64();
    let fresh_dir = work.join("fresh");
    let _ = std::fs::remove_dir_all(&fresh_dir);
    let fresh = Store::open(&fresh_dir)?;
    let t = Instant::now();
    bundle::import(&file, &fresh, None, Some(&work.join("imported-run")))?;
    let import_s = t.elapsed().as_secs_f64();
    let _ = std::fs::remove_dir_all(work.join("imported-run"));
    drop(fresh);
    let body_bytes: u64 =
        names.iter().filter_map(|n| store.manifest(n).ok()).map(|m| m.counts.body_bytes).sum();
    let exchanges: u64 =
        names.iter().filter_map(|n| store.manifest(n).ok()).map(|m| m.counts.exchanges).sum();
    let b = made.bytes;
    let run_part: u64 =
        made.manifest.parts.iter().filter(|p| p.path.starts_with("run/")).map(|p| p.size).sum();
    Ok(format!(
        "{what:<22} {exchanges:>9} {:>10.2} {:>10.2} {:>10.2} {:>10.2} {:>10.2} {:>8.2} {:>8.1} {:>8.1} {:>8.1} {:>8.1} {:>8.1}   (snapshots alone: {:.2}x store, {:.2}x HAR, {:.2}x WACZ)",
        mib(body_bytes),
        mib(dir_size(store_dir)),
        mib(har_bytes),
        mib(wacz_bytes),
        mib(b),
        mib(run_part),
        mib(b) / create_s,
        mib(b) / verify_s,
        mib(b) / import_s,
        mib(har_bytes) / har_s,
        mib(wacz_bytes) / wacz_s,
        (b - run_part) as f64 / dir_size(store_dir).max(1) as f64,
        (b - run_part) as f64 / har_bytes.max(1) as f64,
        (b - run_part) as f64 / wacz_bytes.max(1) as f64
    ))
}

pub(crate) fn run(entries: usize, demo: &str) -> anyhow::Result<()> {
    let work = std::env::temp_dir().join(format!("webfreeze-bench-bundle-{}", std::process::id()));
    std::fs::create_dir_all(&work)?;
    let mut rows = Vec::new();
    if !demo.is_empty() {
        let d = Path::new(demo);
        let store_dir = d.join("store");
        let store = Store::open_read_only(&store_dir)?;
        let names: Vec<String> =
            store.manifests()?.into_iter().map(|m| m.name).filter(|n| n.starts_with("recorded/")).collect();
        eprintln!("bench bundle: the demo's recorded run ({} snapshots)", names.len());
        let run = d.join("runs/recorded");
        rows.push(measure(
            "demo run (recorded)",
            &store,
            &store_dir,
            BundleSource::Run(&run),
            &names,
            &work,
        )?);
    }
    eprintln!("bench bundle: generating and importing {entries} exchanges");
    let har_file = work.join("gen.har");
    gen::write_har(&har_file, entries, 42)?;
    let store_dir = work.join("gen-store");
    let store = Store::open(&store_dir)?;
    har::import(
        &store,
        std::fs::File::open(&har_file)?,
        &ImportOptions { snapshot: "gen".into(), source_file: "gen.har".into(), now_ms: 0 },
        |_| {},
    )?;
    store.flush()?;
    rows.push(measure(
        &format!("generated, {entries}"),
        &store,
        &store_dir,
        BundleSource::Snapshots("gen"),
        &["gen".into()],
        &work,
    )?);
    println!("bundle size and speed (MiB; MiB/s of bundle bytes; HAR/WACZ export: MiB/s of their output)");
    println!(
        "{:<22} {:>9} {:>10} {:>10} {:>10} {:>10} {:>10} {:>8} {:>8} {:>8} {:>8} {:>8} {:>8}",
        "input",
        "exchanges",
        "bodies",
        "store",
        "HAR",
        "WACZ",
        "bundle",
        "run dir",
        "create",
        "verify",
        "import",
        "HAR out",
        "WACZ out"
    );
    for r in rows {
        println!("{r}");
    }
    let _ = std::fs::remove_dir_all(&work);
    Ok(())
}
