//! `cargo xtask bench store`: the snapshot store on a generated HAR.
//!
//! The parent generates the HARs (and gzips them for the size comparison); each measurement runs in a child
//! process so its peak RSS is the store's alone: import, store size, open + first lookup, lookup latency.

use std::io::Read;
use std::path::Path;
use std::process::Command;
use std::time::Instant;

use archive::{har, ImportOptions};
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use snapshots::{request_key, Store};

use crate::gen;
use crate::{pct_ms, peak_rss_kib};

pub(crate) fn dir_size(p: &Path) -> u64 {
    let mut total = 0;
    if let Ok(rd) = std::fs::read_dir(p) {
        for e in rd.flatten() {
            let m = match e.metadata() {
                Ok(m) => m,
                Err(_) => continue,
            };
            total += if m.is_dir() { dir_size(&e.path()) } else { m.len() };
        }
    }
    total
}

fn gzip_size(p: &Path) -> anyhow::Result<u64> {
    let mut f = std::fs::File::open(p)?;
    let mut enc = flate2::write::GzEncoder::new(CountingSink(0), flate2::Compression::default());
    let mut buf = vec![0u8; 1 << 20];
    loop {
        let n = f.read(&mut buf)?;
        if n == 0 {
            break;
        }
        std::io::Write::write_all(&mut enc, &buf[..n])?;
    }
    Ok(enc.finish()?.0)
}

struct CountingSink(u64);
impl std::io::Write for CountingSink {
    fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
        self.0 += b.len() as u64;
        Ok(b.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// Run one measurement phase in a child process and read the JSON line it prints.
fn run_phase(phase: &str, size: usize, dir: &Path) -> anyhow::Result<serde_json::Value> {
    let out = Command::new(std::env::current_exe()?)
        .args(["bench", phase, "--entries", &size.to_string(), "--dir", dir.to_str().unwrap_or(".")])
        .output()?;
    if !out.status.success() {
        anyhow::bail!("{phase} failed: {}", String::from_utf8_lossy(&out.stderr));
    }
    Ok(serde_json::from_slice(&out.stdout)?)
}

pub(crate) fn run(n: usize) -> anyhow::Result<()> {
    let work = std::env::temp_dir().join(format!("webfreeze-bench-store-{}", std::process::id()));
    std::fs::create_dir_all(&work)?;
    println!("webfreeze store benchmark (work dir {})", work.display());
    let mut rows = Vec::new();
    for size in [10_000usize.min(n), n] {
        let dir = work.join(format!("n{size}"));
        std::fs::create_dir_all(&dir)?;
        let har = dir.join("gen.har");
        let t = Instant::now();
        let info = gen::write_har(&har, size, 42)?;
        println!(
            "  generated {size} entries, {:.1} MB in {:.1}s",
            info.bytes as f64 / 1e6,
            t.elapsed().as_secs_f64()
        );
        let gz = gzip_size(&har)?;
        let mut v = run_phase("store-phase", size, &dir)?;
        let l = run_phase("store-lookup", size, &dir)?;
        for (k, val) in l.as_object().into_iter().flatten() {
            v[k] = val.clone();
        }
        v["har_bytes"] = info.bytes.into();
        v["gzip_bytes"] = gz.into();
        rows.push(v);
        let _ = std::fs::remove_file(&har);
    }
    println!();
    println!(
        "{:>9} {:>10} {:>8} {:>9} {:>9} {:>9} {:>11} {:>11} {:>11} {:>11} {:>9}",
        "exchanges",
        "import/s",
        "MB/s",
        "HAR MB",
        "gzip MB",
        "store MB",
        "store/HAR",
        "store/gzip",
        "open+1st ms",
        "lookup p50",
        "p99 ms"
    );
    for v in &rows {
        let f = |k: &str| v[k].as_f64().unwrap_or(f64::NAN);
        println!(
            "{:>9} {:>10.0} {:>8.1} {:>9.1} {:>9.1} {:>9.1} {:>11.3} {:>11.3} {:>11.1} {:>11.3} {:>9.3}",
            f("entries"),
            f("entries") / f("import_s"),
            f("har_bytes") / 1e6 / f("import_s"),
            f("har_bytes") / 1e6,
            f("gzip_bytes") / 1e6,
            f("store_bytes") / 1e6,
            f("store_bytes") / f("har_bytes"),
            f("store_bytes") / f("gzip_bytes"),
            f("open_first_ms"),
            f("lookup_p50_ms"),
            f("lookup_p99_ms"),
        );
    }
    println!();
    println!("{:>9} {:>14} {:>14}", "exchanges", "import RSS MB", "lookup RSS MB");
    for v in &rows {
        println!(
            "{:>9} {:>14.1} {:>14.1}",
            v["entries"],
            v["import_rss_kib"].as_f64().unwrap_or(0.0) / 1024.0,
            v["lookup_rss_kib"].as_f64().unwrap_or(0.0) / 1024.0
        );
    }
    println!("\ntargets: store <= 0.5x gzip(HAR); open + first lookup < 200 ms; lookup p99 < 1 ms; RSS flat in exchanges");
    let _ = std::fs::remove_dir_all(&work);
    Ok(())
}

/// One measurement in its own process: import `dir/gen.har` (or measure lookups with `--lookup-only`).
pub(crate) fn phase(n: usize, dir: &str) -> anyhow::Result<()> {
    let dir = Path::new(dir);
    let store_dir = dir.join("store");
    let _ = std::fs::remove_dir_all(&store_dir);
    let f = std::fs::File::open(dir.join("gen.har"))?;
    let t = Instant::now();
    let store = Store::open(&store_dir)?;
    let r = har::import(
        &store,
        f,
        &ImportOptions { snapshot: "bench".into(), source_file: "gen.har".into(), now_ms: 0 },
        |_| {},
    )?;
    store.flush()?;
    let import_s = t.elapsed().as_secs_f64();
    anyhow::ensure!(r.imported as usize == n, "imported {} of {n}", r.imported);
    drop(store);
    let import_rss = peak_rss_kib(std::process::id());
    let store_bytes = dir_size(&store_dir);

    println!(
        "{}",
        serde_json::json!({"entries": n, "import_s": import_s, "store_bytes": store_bytes, "import_rss_kib": import_rss})
    );
    Ok(())
}

/// Lookups in their own process (so the RSS is the reader's): open + first lookup, then 10k random lookups.
pub(crate) fn lookups(n: usize, dir: &str) -> anyhow::Result<()> {
    let store_dir = Path::new(dir).join("store");
    let mut rng = SmallRng::seed_from_u64(7);
    let mut opens = Vec::new();
    for _ in 0..5 {
        let i = rng.gen_range(0..n);
        let t = Instant::now();
        let s = Store::open_read_only(&store_dir)?;
        let m = s.manifest("bench")?;
        let hits = s.lookup(&m, &request_key("GET", &gen::url_for(i), None, b"")?)?;
        opens.push(t.elapsed().as_micros() as u64);
        anyhow::ensure!(hits.len() == 1, "lookup of entry {i} found {}", hits.len());
    }
    opens.sort_unstable();
    let s = Store::open_read_only(&store_dir)?;
    let m = s.manifest("bench")?;
    let before_lookups = peak_rss_kib(std::process::id());
    let mut lat = Vec::with_capacity(10_000);
    for _ in 0..10_000 {
        let key = request_key("GET", &gen::url_for(rng.gen_range(0..n)), None, b"")?;
        let t = Instant::now();
        let hits = s.lookup(&m, &key)?;
        lat.push(t.elapsed().as_micros() as u64);
        anyhow::ensure!(hits.len() == 1);
    }
    lat.sort_unstable();
    let v = serde_json::json!({
        "open_first_ms": opens[opens.len() / 2] as f64 / 1000.0,
        "lookup_p50_ms": pct_ms(&lat, 50.0),
        "lookup_p99_ms": pct_ms(&lat, 99.0),
        "lookup_rss_kib": peak_rss_kib(std::process::id()).max(before_lookups),
    });
    println!("{v}");
    Ok(())
}
