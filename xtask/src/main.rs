//! Developer tasks. Benchmarks print figures measured in the run (ratios against a ceiling or a peer
//! measured in the same run), never a single absolute time from elsewhere.
//!
//! - `cargo xtask bench store [--entries N]`: generated HAR -> import rate, store size vs HAR and gzip(HAR),
//!   open + first lookup, lookup p50/p99, peak RSS at 10k and N exchanges.
//! - `cargo xtask bench proxy [--secs S]`: HTTPS keep-alive req/s and latency, direct vs `webfreeze proxy`
//!   vs mitmproxy 12.
//! - `cargo xtask bench replay [--secs S] [--throughput-only] [--before OLD_WEBFREEZE]`: replay vs an in-memory hyper+rustls server vs
//!   mitmproxy server replay, with each server's CPU time per request; then (unless `--throughput-only`)
//!   the store-bound cells and replay RSS and first-request latency for a 100- and a 100k-exchange snapshot.
//! - `cargo xtask bench coverage [--app dokuwiki,pythondocs,wordpress] [--keep]`: steps of unseen scripted
//!   paths served as recorded on real applications (DokuWiki with 232 pages, Python's documentation,
//!   WordPress with 300 posts: paths that start deep, page and search), leave-one-out: the site union, +
//!   exploration, + the frozen search engine with the site's own search, + the site's crawl (its budget
//!   against the site's size); each layer's cost, the crawl's per page.
//! - `cargo xtask bench agreement [--app dokuwiki|mediawiki|wordpress]`: live and frozen verdicts of state
//!   tasks side by side on real applications (DokuWiki and MediaWiki page edits; WordPress comments, held
//!   out), run by agents other than the recording one (issue 59).
//! - `cargo xtask bench coverage-demo`: the same on the demo sites and a 6-page DokuWiki (the last wave's).
//! - `cargo xtask bench agent [--tasks N]`: per-step agent overhead (observation, action) in replay vs live
//!   on the demo sites, browser start time per task.
//! - `cargo xtask bench fidelity DIR_OF_HARS [--loads N]`: each capture's first page in Chromium under
//!   webfreeze replay, Playwright's routeFromHAR and mitmproxy server replay: requests served with content.
//! - `cargo xtask bench throughput [--copies C] [--jobs 1,2,4] [--slurm-bin PATH] [--shards 1,3]`: demo
//!   tasks per hour in replay at each --jobs, and as Slurm arrays; where a task's time goes.
//! - `cargo xtask bench bundle [--entries N] [--demo DIR]`: bundle size vs the store and the HAR export,
//!   create / verify / import speed, for a generated store and a `webfreeze demo --dir DIR` run.
//! - `cargo xtask bench warc [--mib N] [--corpus DIR]`: import speed and peak RSS for a generated N-MiB
//!   `.warc.gz` and a quarter-size one (flat RSS = bounded streaming), WARC/WACZ export speed; with
//!   `--corpus`, what each archive in DIR imports as.
//! - `cargo xtask bench guard`: the side-effect guard over its table of real sites' requests: precision,
//!   recall, ordinary requests blocked, harmful ones passed, time per judgement.
//! - `cargo xtask bench wire [--run DIR]`: a replayed task's wire log: append time and bytes per entry;
//!   with a replayed run, its bytes per step.
//! - `cargo xtask bench union [--tasks N]`: a site union of N recordings: task start, union hit and miss
//!   against an exact hit and a miss without the union.
//! - `cargo xtask bench search [--pages N] [--dump-docs FILE]`: the frozen search index over N pages of real
//!   text (default 100,000): build time, stored bytes, load time, query p50/p99, results across rebuilds.
//! - `cargo xtask gen-har --entries N --out FILE`: the generator alone.
//! - `cargo xtask fuzz-seeds DIR`: the fuzz targets' seed corpus (`fuzz/`, see scripts/fuzz.sh).

#![allow(clippy::print_stdout, clippy::unwrap_used, clippy::expect_used)] // a developer tool that prints

mod agent_bench;
mod agreement_bench;
mod bundle_bench;
mod coverage_bench;
mod coverage_real;
mod fidelity;
mod fuzz_seeds;
mod gen;
mod golden;
mod guard_bench;
mod load;
mod load_bench;
mod proxy_bench;
mod replay_store_bench;
mod search_bench;
mod spawn;
mod store_bench;
mod throughput;
mod union_bench;
mod warc_bench;
mod wire_bench;

use anyhow::{bail, Context as _};

fn arg<T: std::str::FromStr>(args: &[String], name: &str, default: T) -> T {
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1))
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn main() -> anyhow::Result<()> {
    spawn::end_descendants_on_signal();
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.iter().map(String::as_str).collect::<Vec<_>>().as_slice() {
        ["bench", "store", ..] => store_bench::run(arg(&args, "--entries", 100_000)),
        ["bench", "store-phase", ..] => {
            store_bench::phase(arg(&args, "--entries", 10_000), &arg(&args, "--dir", String::new()))
        }
        ["bench", "store-lookup", ..] => {
            store_bench::lookups(arg(&args, "--entries", 10_000), &arg(&args, "--dir", String::new()))
        }
        ["bench", "proxy", ..] => proxy_bench::run_proxy(arg(&args, "--secs", 3.0)),
        ["bench", "replay", ..] => {
            let before = args
                .iter()
                .position(|a| a == "--before")
                .and_then(|i| args.get(i + 1))
                .map(std::path::PathBuf::from);
            proxy_bench::run_replay(
                arg(&args, "--secs", 3.0),
                args.iter().any(|a| a == "--throughput-only"),
                before,
            )
        }
        ["bench", "agent", ..] => agent_bench::run(
            arg(&args, "--tasks", 3),
            arg(&args, "--settle-ms", agent::runner::DEFAULT_SETTLE_MS),
        ),
        ["bench", "coverage", ..] => coverage_real::run(&args[2..]),
        ["bench", "agreement", ..] => agreement_bench::run(&args[2..]),
        ["bench", "coverage-demo", ..] => coverage_bench::run(),
        ["bench", "guard", ..] => guard_bench::run(),
        ["bench", "wire", ..] => wire_bench::run(&args),
        ["bench", "union", ..] => union_bench::run(&args),
        ["bench", "search", ..] => search_bench::run(&args),
        ["bench", "throughput", ..] => throughput::run(&args),
        ["bench", "load", ..] => {
            let conns = args
                .iter()
                .position(|a| a == "--conns")
                .and_then(|i| args.get(i + 1))
                .map(|v| v.split(',').filter_map(|n| n.parse().ok()).collect())
                .unwrap_or_else(|| vec![1000, 10_000]);
            load_bench::run_conns(&conns, arg(&args, "--secs", 10.0))
        }
        ["bench", "load-tasks", ..] => {
            load_bench::run_tasks(arg(&args, "--tasks", 1000), arg(&args, "--jobs", 100))
        }
        ["bench", "bundle", ..] => {
            bundle_bench::run(arg(&args, "--entries", 10_000), &arg(&args, "--demo", String::new()))
        }
        ["bench", "warc", ..] => {
            warc_bench::run(arg(&args, "--mib", 2048), &arg(&args, "--corpus", String::new()))
        }
        ["bench", "fidelity", dir, ..] => fidelity::run(std::path::Path::new(dir), arg(&args, "--loads", 3)),
        ["golden", ..] => golden::run(&std::env::current_dir()?),
        ["bench-origin", ..] => {
            proxy_bench::serve_origin(std::path::Path::new(&arg(&args, "--dir", String::new())))
        }
        ["gen-har", ..] => {
            let out: String = arg(&args, "--out", String::new());
            if out.is_empty() {
                bail!("gen-har needs --out FILE");
            }
            let info = gen::write_har(std::path::Path::new(&out), arg(&args, "--entries", 1000), 42)
                .context("generating")?;
            println!("wrote {} entries, {} bytes to {out}", info.urls.len(), info.bytes);
            Ok(())
        }
        ["fuzz-seeds", dir] => fuzz_seeds::write_all(std::path::Path::new(dir)),
        _ => {
            eprintln!("usage: cargo xtask fuzz-seeds DIR | bench store|proxy|replay|agent|coverage|coverage-demo|guard|wire|throughput|search|union|bundle|warc|load|load-tasks [--entries N] [--conns N,N] [--jobs N] [--secs S] [--tasks N] [--throughput-only] | bench fidelity DIR_OF_HARS [--loads N] | gen-har --entries N --out FILE");
            std::process::exit(2)
        }
    }
}

/// Peak resident set of this process (VmHWM), KiB.
pub fn peak_rss_kib(pid: u32) -> u64 {
    status_kib(pid, "VmHWM:")
}

/// A `/proc/PID/status` field in KiB (`VmHWM:`, `VmRSS:`); 0 when unknown.
fn status_kib(pid: u32, field: &str) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix(field))
                .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        })
        .unwrap_or(0)
}

/// Resident memory of a process now (VmRSS), in KiB; 0 when unknown.
pub fn rss_kib(pid: u32) -> u64 {
    status_kib(pid, "VmRSS:")
}

/// p-th percentile (0..=100) of sorted microsecond samples, in ms.
pub fn pct_ms(sorted_us: &[u64], p: f64) -> f64 {
    if sorted_us.is_empty() {
        return f64::NAN;
    }
    let i = ((p / 100.0) * (sorted_us.len() - 1) as f64).round() as usize;
    sorted_us[i.min(sorted_us.len() - 1)] as f64 / 1000.0
}
