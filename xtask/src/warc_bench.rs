//! `cargo xtask bench warc [--mib N] [--corpus DIR]`: WARC import memory and speed, export speed.
//!
//! Generates a `.warc.gz` of about N MiB (default 2048; a record per gzip member; bodies of 1 KiB to
//! 1 MiB of incompressible bytes, some chunked, some gzip-encoded, every tenth response a revisit, every
//! response paired with its request) and a quarter-size one, imports both with the release binary under
//! `/usr/bin/time`, and prints throughput and peak RSS: memory that does not grow with the file is the
//! bounded-streaming claim. Then exports the big snapshot as WARC and as WACZ.
//!
//! `--corpus DIR` also imports every WARC/WACZ in DIR (e.g. `../shared/corpus/warc`) and prints what each
//! gave: records, exchanges, revisits, damage.

use std::io::Write;
use std::path::Path;
use std::process::Command;
use std::time::Instant;

use rand::{Rng, RngCore, SeedableRng};

use crate::proxy_bench::webfreeze_bin;

fn mib(b: u64) -> f64 {
    b as f64 / (1024.0 * 1024.0)
}

fn record(out: &mut Vec<u8>, fields: &[(&str, String)], block: &[u8]) {
    out.extend_from_slice(b"WARC/1.1\r\n");
    for (n, v) in fields {
        out.extend_from_slice(format!("{n}: {v}\r\n").as_bytes());
    }
    out.extend_from_slice(format!("Content-Length: {}\r\n\r\n", block.len()).as_bytes());
    out.extend_from_slice(block);
    out.extend_from_slice(b"\r\n\r\n");
}

/// Writes a generated archive of about `target` bytes; returns (bytes, responses).
fn generate(path: &Path, target: u64, seed: u64) -> anyhow::Result<(u64, u64)> {
    let mut rng = rand::rngs::SmallRng::seed_from_u64(seed);
    let mut f = std::io::BufWriter::with_capacity(1 << 20, std::fs::File::create(path)?);
    let mut written = 0u64;
    let mut n = 0u64;
    let mut body = vec![0u8; 1 << 20];
    let mut last_digest = String::new();
    while written < target {
        n += 1;
        let uri = format!("https://big.example/r/{n}");
        let date = "2025-01-02T03:04:05Z".to_string();
        let id = format!("<urn:uuid:00000000-0000-4000-8000-{n:012}>");
        let mut rec = Vec::new();
        if n.is_multiple_of(10) && !last_digest.is_empty() {
            record(
                &mut rec,
                &[
                    ("WARC-Type", "revisit".into()),
                    ("WARC-Record-ID", id.clone()),
                    ("WARC-Date", date.clone()),
                    ("WARC-Target-URI", uri.clone()),
                    (
                        "WARC-Profile",
                        "http://netpreserve.org/warc/1.1/revisit/identical-payload-digest".into(),
                    ),
                    ("WARC-Payload-Digest", last_digest.clone()),
                ],
                b"HTTP/1.1 200 OK\r\nContent-Type: application/octet-stream\r\n\r\n",
            );
        } else {
            let size = if rng.gen_bool(0.5) {
                rng.gen_range(1024..16 * 1024)
            } else {
                rng.gen_range(256 * 1024..1 << 20)
            };
            rng.fill_bytes(&mut body[..size]);
            let digest = format!("sha1:GEN{n}");
            let (headers, wire): (&str, Vec<u8>) = match n % 3 {
                0 => {
                    let mut c = Vec::new();
                    for chunk in body[..size].chunks(64 * 1024) {
                        c.extend_from_slice(format!("{:x}\r\n", chunk.len()).as_bytes());
                        c.extend_from_slice(chunk);
                        c.extend_from_slice(b"\r\n");
                    }
                    c.extend_from_slice(b"0\r\n\r\n");
                    ("Transfer-Encoding: chunked\r\n", c)
                }
                1 => {
                    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
                    e.write_all(&body[..size])?;
                    ("Content-Encoding: gzip\r\n", e.finish()?)
                }
                _ => ("", body[..size].to_vec()),
            };
            let mut http =
                format!("HTTP/1.1 200 OK\r\nContent-Type: application/octet-stream\r\n{headers}\r\n")
                    .into_bytes();
            http.extend_from_slice(&wire);
            record(
                &mut rec,
                &[
                    ("WARC-Type", "response".into()),
                    ("WARC-Record-ID", id.clone()),
                    ("WARC-Date", date.clone()),
                    ("WARC-Target-URI", uri.clone()),
                    ("WARC-Payload-Digest", digest.clone()),
                    ("Content-Type", "application/http; msgtype=response".into()),
                ],
                &http,
            );
            last_digest = digest;
        }
        let req = format!("GET /r/{n} HTTP/1.1\r\nHost: big.example\r\n\r\n");
        record(
            &mut rec,
            &[
                ("WARC-Type", "request".into()),
                ("WARC-Record-ID", format!("<urn:uuid:00000000-0000-4000-9000-{n:012}>")),
                ("WARC-Concurrent-To", id),
                ("WARC-Date", date),
                ("WARC-Target-URI", uri),
                ("Content-Type", "application/http; msgtype=request".into()),
            ],
            req.as_bytes(),
        );
        // One gzip member per record pair, as crawlers write them.
        let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        e.write_all(&rec)?;
        let member = e.finish()?;
        f.write_all(&member)?;
        written += member.len() as u64;
    }
    f.flush()?;
    Ok((written, n))
}

/// Runs the binary under `/usr/bin/time`; returns (seconds, peak RSS KiB, stdout).
fn timed(bin: &Path, home: &Path, args: &[&str]) -> anyhow::Result<(f64, u64, String)> {
    let t = Instant::now();
    let out = Command::new("/usr/bin/time")
        .args(["-f", "%M"])
        .arg(bin)
        .args(args)
        .env("WEBFREEZE_HOME", home)
        .output()
        .map_err(|e| anyhow::anyhow!("/usr/bin/time: {e} (apt-get install -y time)"))?;
    let secs = t.elapsed().as_secs_f64();
    let err = String::from_utf8_lossy(&out.stderr);
    anyhow::ensure!(out.status.success(), "{} {args:?} failed: {err}", bin.display());
    let rss = err.lines().last().and_then(|l| l.trim().parse().ok()).unwrap_or(0);
    Ok((secs, rss, String::from_utf8_lossy(&out.stdout).into_owned()))
}

pub(crate) fn run(target_mib: u64, corpus: &str) -> anyhow::Result<()> {
    let bin = webfreeze_bin()?;
    let work = std::env::temp_dir().join(format!("webfreeze-bench-warc-{}", std::process::id()));
    std::fs::create_dir_all(&work)?;
    let home = work.join("home");
    let mut rows = Vec::new();
    for (label, size) in [("quarter", target_mib / 4), ("full", target_mib)] {
        let file = work.join(format!("{label}.warc.gz"));
        eprintln!("bench warc: generating {size} MiB");
        let (bytes, n) = generate(&file, size << 20, 7)?;
        eprintln!("bench warc: importing {}", file.display());
        let (secs, rss, _) = timed(
            &bin,
            &home,
            &["snapshots", "import", file.to_str().unwrap_or_default(), "--snapshot", label],
        )?;
        rows.push((label, bytes, n, secs, rss));
        std::fs::remove_file(&file)?;
    }
    println!("WARC import (generated .warc.gz, release binary, peak RSS from /usr/bin/time)");
    println!(
        "{:<8} {:>10} {:>9} {:>9} {:>10} {:>12}",
        "file", "MiB", "records", "seconds", "MiB/s", "peak RSS MiB"
    );
    for (label, bytes, n, secs, rss) in &rows {
        println!(
            "{label:<8} {:>10.0} {:>9} {:>9.1} {:>10.1} {:>12.1}",
            mib(*bytes),
            n * 2,
            secs,
            mib(*bytes) / secs,
            *rss as f64 / 1024.0
        );
    }
    if let [(_, qb, _, _, qr), (_, fb, _, _, fr)] = rows.as_slice() {
        println!(
            "file {:.1}x larger, peak RSS {:.2}x ({}): memory is bounded by the window, not the file",
            *fb as f64 / *qb as f64,
            *fr as f64 / (*qr).max(1) as f64,
            if (*fr as f64) < 1.5 * (*qr as f64) { "flat" } else { "GROWS" }
        );
    }
    for (format, ext) in [("warc", "warc.gz"), ("wacz", "wacz")] {
        let out = work.join(format!("export.{ext}"));
        let (secs, rss, _) = timed(
            &bin,
            &home,
            &["snapshots", "export", "full", "--format", format, "--out", out.to_str().unwrap_or_default()],
        )?;
        let size = std::fs::metadata(&out)?.len();
        println!(
            "export {format:<5} {:>8.0} MiB in {secs:.1} s: {:.1} MiB/s, peak RSS {:.1} MiB",
            mib(size),
            mib(size) / secs,
            rss as f64 / 1024.0
        );
        std::fs::remove_file(&out)?;
    }
    if !corpus.is_empty() {
        println!("corpus {corpus}:");
        let mut entries: Vec<_> = std::fs::read_dir(corpus)?.flatten().map(|e| e.path()).collect();
        entries.sort();
        for (i, p) in entries.iter().enumerate() {
            let r = Command::new(&bin)
                .args([
                    "snapshots",
                    "import",
                    p.to_str().unwrap_or_default(),
                    "--snapshot",
                    &format!("corpus-{i}"),
                    "--json",
                ])
                .env("WEBFREEZE_HOME", &home)
                .output()?;
            let name = p.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
            if !r.status.success() {
                println!("  {name:<55} FAILED: {}", String::from_utf8_lossy(&r.stderr).trim());
                continue;
            }
            let v: serde_json::Value = serde_json::from_slice(&r.stdout)?;
            println!(
                "  {name:<55} {:>5} records {:>5} exchanges ({} paired, {} revisits resolved, {} unresolved, {} damaged)",
                v["records"], v["imported"], v["paired"], v["revisits_resolved"], v["revisits_unresolved"],
                v["damaged"].as_array().map_or(0, Vec::len)
            );
        }
    }
    let _ = std::fs::remove_dir_all(&work);
    Ok(())
}
