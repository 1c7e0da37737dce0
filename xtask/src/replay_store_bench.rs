//! The part of `cargo xtask bench replay` that reads the store on every request (issue 35.2), where the
//! warm rows answer from replay's in-memory caches:
//! - **cold**: a 100,000-exchange snapshot, every request a URL not asked before in the run, so no
//!   request is answered from replay's caches (exact matches, hot bodies): index lookups, candidate and
//!   body reads from RocksDB on each;
//! - **100,000 copies of one URL**: one URL recorded 100,000 times; repeated requests step through the
//!   copies (sequence semantics), each copy read from the store when served.
//!
//! Both at concurrency 1, 16 and 64, with the same keep-alive HTTPS client as the other rows.

use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::Arc;

use crate::load::{self, ConnPlan, Via};
use crate::spawn::spawn_listening;
use crate::{gen, pct_ms};

const CONCS: [usize; 3] = [1, 16, 64];

/// Hosts in the generated snapshot ([`gen::url_for`] spreads URLs over 50).
const HOSTS: usize = 50;

/// One row: target, concurrency, req/s, p50 ms, p99 ms, errors.
type Row = (&'static str, usize, f64, f64, f64, u64);

fn import(bin: &Path, home: &Path, har: &Path, name: &str) -> anyhow::Result<()> {
    let st = Command::new(bin)
        .env("WEBFREEZE_HOME", home)
        .args(["snapshots", "import"])
        .arg(har)
        .args(["--snapshot", name])
        .stdout(Stdio::null())
        .status()?;
    anyhow::ensure!(st.success(), "importing {} failed", har.display());
    let _ = std::fs::remove_file(har);
    Ok(())
}

fn host_and_path(url: &str) -> anyhow::Result<(String, String)> {
    let uri: http::Uri = url.parse()?;
    let host = uri.host().unwrap_or("").to_string();
    let pq = uri.path_and_query().map(|p| p.as_str().to_string()).unwrap_or_default();
    Ok((host, pq))
}

/// Cold plans: connection `c` asks host `c % 50` for its URLs, a stride apart so that no two
/// connections on one host ask for the same URL, and none repeats while the run lasts.
fn cold_plans(n: usize, conc: usize) -> anyhow::Result<Vec<ConnPlan>> {
    let per_host = n / HOSTS;
    let lanes = conc.div_ceil(HOSTS);
    (0..conc)
        .map(|c| {
            let (host_ix, lane) = (c % HOSTS, c / HOSTS);
            let mut host = String::new();
            let mut paths = Vec::new();
            for j in (lane..per_host).step_by(lanes) {
                let (h, p) = host_and_path(&gen::url_for(host_ix + HOSTS * j))?;
                host = h;
                paths.push(p);
            }
            Ok((host, Arc::new(paths)))
        })
        .collect()
}

/// One cell: a fresh replay of `snapshot` (nothing cached from the cell before) under `plans`.
async fn cell(
    bin: &Path,
    home: &Path,
    snapshot: &str,
    label: &'static str,
    conc: usize,
    plans: Vec<ConnPlan>,
    secs: f64,
) -> anyhow::Result<Row> {
    let (_rep, addr) = spawn_listening(bin, home, &["replay", "--snapshot", snapshot, "--no-inject-shim"])?;
    let ca = std::fs::read_to_string(home.join("ca/ca.pem"))?;
    let r = load::run_paths(Via::Proxy(addr), plans, secs, &[ca]).await;
    let rps = r.requests as f64 / r.secs;
    eprintln!("  {label:<20} c={conc:<3} {rps:>8.0} req/s");
    Ok((label, conc, rps, pct_ms(&r.lat_us, 50.0), pct_ms(&r.lat_us, 99.0), r.errors))
}

/// Runs the two cases and prints their table. `bin`: the release binary; `work`: a scratch directory.
pub(crate) async fn run(bin: &Path, work: &Path, secs: f64) -> anyhow::Result<()> {
    let mut rows: Vec<Row> = Vec::new();
    let n = 100_000;
    // Cold: a 100,000-exchange snapshot, each request a new URL.
    let home = work.join("cold");
    std::fs::create_dir_all(&home)?;
    let har = home.join("gen.har");
    gen::write_har(&har, n, 7)?;
    import(bin, &home, &har, "cold")?;
    for conc in CONCS {
        let plans = cold_plans(n, conc)?;
        rows.push(cell(bin, &home, "cold", "cold (new URL each)", conc, plans, secs).await?);
    }
    // One URL recorded 100,000 times.
    let home = work.join("copies");
    std::fs::create_dir_all(&home)?;
    let har = home.join("copies.har");
    let url = "https://copies.test/api/item?id=1";
    gen::write_copies_har(&har, url, n)?;
    import(bin, &home, &har, "copies")?;
    let (host, path) = host_and_path(url)?;
    for conc in CONCS {
        let plans = (0..conc).map(|_| (host.clone(), Arc::new(vec![path.clone()]))).collect();
        rows.push(cell(bin, &home, "copies", "100k copies, 1 URL", conc, plans, secs).await?);
    }
    println!(
        "\nreplay from the store: every request reads RocksDB (bodies 0.3-20 KB; a fresh replay per cell)"
    );
    println!(
        "{:<20} {:>5} {:>10} {:>9} {:>9} {:>7}",
        "target", "conc", "req/s", "p50 ms", "p99 ms", "errors"
    );
    for (t, c, rps, p50, p99, e) in rows {
        println!("{t:<20} {c:>5} {rps:>10.0} {p50:>9.2} {p99:>9.2} {e:>7}");
    }
    Ok(())
}
