//! `cargo xtask bench union [--tasks N]`: a site union of many recordings (issue 49, part 2). A synthetic
//! site of N recorded tasks (default 1,000) x 50 exchanges each (10 pages every task saw, 40 of its own),
//! recorded twice into real RocksDB stores: once sealed as webfreeze seals now (each recording joins its
//! site union: `session::seal`), once without the union entries (as a webfreeze before them sealed, and as
//! this one replays such a store). Measured in one run:
//! - sealing: a recording joining its union;
//! - task start with `--frozen-web site` (`session::union_layers`: members listed, checked or vouched for,
//!   layered, the path sieve read or built): the first task of a process, then the next ones, per store;
//! - per request, answered in process by the replay handler: an exact hit on the task's own snapshot, a
//!   union hit on the last member in the union's order (the worst case for probing members in turn), and a
//!   miss, with the union (sieve read from the stored entries; sieve built in memory; no sieve, each member
//!   probed in turn) and without it.

use std::collections::BTreeMap;
use std::time::Instant;

use proxy::Handler as _;
use snapshots::{NewSnapshot, Seed, SnapshotSource, Store};

const PER_TASK: usize = 50;
const SHARED: usize = 10;

fn page(i: usize, j: usize) -> String {
    if j < SHARED {
        format!("https://site.test/common/{j}")
    } else {
        format!("https://site.test/t{i}/p{j}")
    }
}

/// Record task `i`; with `seal`, it joins its site union as sealing does now: the milliseconds that took.
fn record(store: &Store, i: usize, seal: bool) -> anyhow::Result<f64> {
    let w = store.create_snapshot(NewSnapshot {
        name: format!("bench/t{i:05}"),
        created_ms: 1,
        seed: Seed { start_ms: 1_700_000_000_000, time_zone: "UTC".into() },
        source: SnapshotSource::Record,
        labels: BTreeMap::from([
            ("web_name".to_string(), "site".to_string()),
            ("run".to_string(), "bench".to_string()),
        ]),
    })?;
    for j in 0..PER_TASK {
        let url = page(i, j);
        let body = format!("<html><body>page {i} {j}</body></html>").into_bytes();
        w.append(crate::gen::html_exchange(store, j as u64, url, &body)?)?;
    }
    let m = w.finalize(2)?;
    let t = Instant::now();
    if seal {
        anyhow::ensure!(
            session::seal::join_site_union(store, &m.name)?.is_some(),
            "{} joined no union",
            m.name
        );
    }
    Ok(t.elapsed().as_secs_f64() * 1e3)
}

/// Median microseconds of answering `url` `n` times with `r` (handler phases in process, no sockets); the
/// first answer (before any cache holds it) is [`first_us`]'s.
async fn answer_us(r: &replay::Replay, url: &str, n: usize) -> (f64, u16) {
    let (median, _, status) = answer_times(r, url, n).await;
    (median, status)
}

/// Microseconds of the first answer of `url` (nothing cached yet).
async fn first_us(r: &replay::Replay, url: &str) -> f64 {
    answer_times(r, url, 1).await.1
}

async fn answer_times(r: &replay::Replay, url: &str, n: usize) -> (f64, f64, u16) {
    let info = proxy::RequestInfo {
        id: 0,
        client_addr: "127.0.0.1:1".parse().expect("address"),
        tls: true,
        client_alpn: None,
        client_version: http::Version::HTTP_11,
    };
    let mut times = Vec::with_capacity(n);
    let mut status = 0;
    for _ in 0..n {
        let req = http::Request::get(url).body(proxy::body::empty()).expect("request");
        let t = Instant::now();
        let ctx = r.new_ctx(&info);
        if let proxy::Decision::Respond(res) = r.request(&ctx, req).await {
            status = res.status().as_u16();
        }
        r.complete(&ctx, Ok(()));
        times.push(t.elapsed().as_secs_f64() * 1e6);
    }
    let first = times[0];
    times.sort_by(f64::total_cmp);
    (times[times.len() / 2], first, status)
}

pub(crate) fn run(args: &[String]) -> anyhow::Result<()> {
    let tasks: usize = args
        .iter()
        .position(|a| a == "--tasks")
        .and_then(|i| args.get(i + 1))
        .map(|v| v.parse())
        .transpose()?
        .unwrap_or(1000);
    let (dir, old_dir) = (tempfile::tempdir()?, tempfile::tempdir()?);
    let (store, old) = (Store::open(dir.path())?, Store::open(old_dir.path())?);
    let t = Instant::now();
    let mut joins = Vec::with_capacity(tasks);
    for i in 0..tasks {
        joins.push(record(&store, i, true)?);
        record(&old, i, false)?;
    }
    joins.sort_by(f64::total_cmp);
    let join_ms = joins[joins.len() / 2];
    eprintln!(
        "bench union: {tasks} tasks x {PER_TASK} exchanges recorded twice in {:.1} s",
        t.elapsed().as_secs_f64()
    );
    let rt = tokio::runtime::Builder::new_multi_thread().enable_all().build()?;
    let own = store.manifest("bench/t00000")?;
    let start = |store: &Store, name: &str| -> anyhow::Result<(f64, replay::overlay::Overlays)> {
        let t = Instant::now();
        let own = store.manifest(name)?;
        store.check_snapshot(&own)?;
        let layers = session::UnionLayers {
            run: Some("bench"),
            web_name: "site",
            explore: true,
            ..Default::default()
        };
        let o = session::union_layers(store, &own, layers)?;
        Ok((t.elapsed().as_secs_f64() * 1e3, o))
    };
    let next_of = |store: &Store| -> anyhow::Result<f64> {
        let mut next = Vec::new();
        for i in 1..=5.min(tasks - 1) {
            next.push(start(store, &format!("bench/t{i:05}"))?.0);
        }
        next.sort_by(f64::total_cmp);
        Ok(next.get(next.len() / 2).copied().unwrap_or(f64::NAN))
    };
    let (first_ms, sieved) = start(&store, "bench/t00000")?;
    let next_ms = next_of(&store)?;
    let (old_first_ms, built) = start(&old, "bench/t00000")?;
    let old_next_ms = next_of(&old)?;
    anyhow::ensure!(sieved.sieve.is_some() && built.sieve.is_some(), "a union of {tasks} tasks got no sieve");
    let old_own = old.manifest("bench/t00000")?;
    let unsieved = replay::overlay::Overlays { sieve: None, ..built.clone() };
    let replay_with = |store: &Store, own: &snapshots::Manifest, overlays: replay::overlay::Overlays| {
        replay::Replay::new(
            store.clone(),
            own.clone(),
            replay::ReplayConfig { inject_shim: false, overlays, ..Default::default() },
        )
    };
    let (alone, with_sieve, with_built, without_sieve) = (
        replay_with(&store, &own, Default::default()),
        replay_with(&store, &own, sieved.clone()),
        replay_with(&old, &old_own, built),
        replay_with(&old, &old_own, unsieved),
    );
    let exact = page(0, SHARED);
    let union_hit = page(tasks - 1, SHARED + 1);
    let miss = "https://site.test/nowhere/at-all";
    let n = 200;
    rt.block_on(async {
        // Each handler's first answer sets it up: made on a page of the task that no row measures.
        for r in [&alone, &with_sieve, &with_built, &without_sieve] {
            first_us(r, &page(0, SHARED + 9)).await;
        }
        // First answers, before any cache holds them: another page of the last member, and of the task.
        let first_exact = first_us(&alone, &page(0, SHARED + 2)).await;
        let first_union = first_us(&with_sieve, &page(tasks - 1, SHARED + 2)).await;
        let first_union_built = first_us(&with_built, &page(tasks - 1, SHARED + 3)).await;
        let first_union_unsieved = first_us(&without_sieve, &page(tasks - 1, SHARED + 4)).await;
        let first_miss_alone = first_us(&alone, "https://site.test/nowhere/first-a").await;
        let first_miss = first_us(&with_sieve, "https://site.test/nowhere/first-b").await;
        let (exact_alone, s1) = answer_us(&alone, &exact, n).await;
        let (miss_alone, s2) = answer_us(&alone, miss, n).await;
        let (exact_sieved, s3) = answer_us(&with_sieve, &exact, n).await;
        let (union_sieved, s4) = answer_us(&with_sieve, &union_hit, n).await;
        let (miss_sieved, s5) = answer_us(&with_sieve, miss, n).await;
        let (union_built, s6) = answer_us(&with_built, &union_hit, n).await;
        let (miss_built, s7) = answer_us(&with_built, miss, n).await;
        let (union_unsieved, s8) = answer_us(&without_sieve, &union_hit, n / 10).await;
        let (miss_unsieved, s9) = answer_us(&without_sieve, miss, n / 10).await;
        let statuses = [s1, s2, s3, s4, s5, s6, s7, s8, s9];
        anyhow::ensure!(statuses == [200, 404, 200, 200, 404, 200, 404, 200, 404], "unexpected statuses: {statuses:?}");
        let x = |v: f64, of: f64| format!("{v:.1} us ({:.2}x)", v / of);
        println!("site union of {tasks} tasks x {PER_TASK} exchanges ({} layers)", sieved.layers.len());
        println!("| measure | union entries stored at seal (now) | derived in memory (a store sealed before) | target |");
        println!("|---|---:|---:|---|");
        println!("| sealing: a recording joins its union (median) | {join_ms:.2} ms | - | |");
        println!("| task start, first of the process | {first_ms:.1} ms | {old_first_ms:.1} ms | |");
        println!("| task start, next tasks (median of 5) | {next_ms:.1} ms | {old_next_ms:.1} ms | < 50 ms |");
        println!("| exact hit, no union | {exact_alone:.1} us | | |");
        println!("| exact hit, with the union | {} | | |", x(exact_sieved, exact_alone));
        println!(
            "| union hit on the last member (x the exact hit) | {} | {} | <= 2x |",
            x(union_sieved, exact_alone),
            x(union_built, exact_alone)
        );
        println!("| union hit, each member probed in turn (before the sieve) | | {} | |", x(union_unsieved, exact_alone));
        println!("| first answer of a page: exact hit, no union | {first_exact:.1} us | | |");
        println!(
            "| first answer of a page: union hit on the last member | {} | {} | |",
            x(first_union, first_exact),
            x(first_union_built, first_exact)
        );
        println!(
            "| first answer of a page: union hit, each member probed in turn | | {} | |",
            x(first_union_unsieved, first_exact)
        );
        println!("| miss, no union | {miss_alone:.1} us | | |");
        println!(
            "| miss with the union (x the miss without) | {} | {} | <= 2x |",
            x(miss_sieved, miss_alone),
            x(miss_built, miss_alone)
        );
        println!("| first miss of an address, no union / with the union | {first_miss_alone:.1} us / {} | | |", x(first_miss, first_miss_alone));
        println!("| miss, each member probed in turn (before the sieve) | | {} | |", x(miss_unsieved, miss_alone));
        Ok(())
    })
}
