//! `webfreeze bundle create|verify|import`: the format and the checks are `bundle`.

use std::path::Path;

use bundle::BundleSource;
use snapshots::Store;

use crate::cli::BundleCmd;
use crate::config::{s3_options, Config};
use bundle::remote::{self, Remote};

fn mib(b: u64) -> f64 {
    b as f64 / (1024.0 * 1024.0)
}

/// A progress bar over a bundle's parts and the callback that moves it.
fn parts_bar() -> (indicatif::ProgressBar, impl Fn(usize, usize)) {
    let bar = crate::output::progress_bar(0, "parts");
    let b = bar.clone();
    (bar, move |i: usize, n: usize| {
        b.set_length(n as u64);
        b.set_position(i as u64);
    })
}

fn runtime() -> anyhow::Result<tokio::runtime::Runtime> {
    Ok(tokio::runtime::Builder::new_multi_thread().enable_all().build()?)
}

pub(crate) fn run(cfg: &Config, cmd: BundleCmd) -> anyhow::Result<()> {
    match cmd {
        BundleCmd::Create { source, out } => {
            let store = Store::open_read_only(&cfg.store)?;
            let dir = Path::new(&source);
            let src = if dir.join("run.json").is_file() {
                BundleSource::Run(dir)
            } else {
                BundleSource::Snapshots(&source)
            };
            let r = bundle::create(&store, src, &out)?;
            let m = &r.manifest;
            let exchanges: u64 = m.snapshots.iter().map(|s| s.exchanges).sum();
            let blobs = m.parts.iter().filter(|p| p.path.starts_with("blobs/")).count();
            eprintln!(
                "wrote {} ({:.2} MiB): {} snapshot(s), {exchanges} exchanges, {blobs} distinct bodies{}",
                out.display(),
                mib(r.bytes),
                m.snapshots.len(),
                if m.has_run { ", the run directory and its task file" } else { "" }
            );
            if let Some(c) = m.meta.get("coverage") {
                eprintln!(
                    "coverage card (webfreeze coverage): {}/{} steps served as recorded by the rest of each site's frozen web",
                    c["total"]["served"], c["total"]["steps"]
                );
            }
            println!("{}", m.root);
        }
        BundleCmd::Verify { file } => {
            let r = bundle::verify(&file)?;
            eprintln!(
                "{}: whole; {} parts, {} snapshot(s), {} bodies and {} exchange records checked",
                file.display(),
                r.manifest.parts.len(),
                r.manifest.snapshots.len(),
                r.blobs,
                r.exchanges
            );
            println!("{}", r.manifest.root);
        }
        BundleCmd::Import { file, rename, run_dir } => {
            let store = Store::open(&cfg.store)?;
            let r = bundle::import(&file, &store, rename.as_deref(), run_dir.as_deref())?;
            // The bundle carries exchanges and bodies, not derived indexes: each snapshot's is made here.
            let names: std::collections::BTreeSet<&String> = r.imported.iter().chain(&r.redone).collect();
            for name in names {
                session::seal::after_seal(&store, name);
            }
            if !r.redone.is_empty() {
                eprintln!(
                    "note: imported again {} snapshot(s) an earlier import of this bundle left unfinished: {}",
                    r.redone.len(),
                    r.redone.join(", ")
                );
            }
            eprintln!(
                "imported {} snapshot(s) ({} already there from this bundle; {} bodies checked) into {}{}",
                r.imported.len(),
                r.already.len(),
                r.blobs,
                cfg.store.display(),
                r.run_dir.map(|d| format!("; run directory {}", d.display())).unwrap_or_default()
            );
        }
        BundleCmd::Push { file, url, endpoint } => {
            let remote = Remote::open(&url, &s3_options(endpoint.as_deref()))?;
            let (bar, progress) = parts_bar();
            let r = runtime()?.block_on(remote::push(&file, &remote, &progress));
            bar.finish_and_clear();
            let r = r?;
            eprintln!(
                "pushed {} to {url}: {} part(s) uploaded ({:.2} MiB), {} already there",
                file.display(),
                r.uploaded,
                mib(r.bytes),
                r.skipped
            );
            println!("{}", r.root);
        }
        BundleCmd::Pull { url, which, out, endpoint } => {
            let remote = Remote::open(&url, &s3_options(endpoint.as_deref()))?;
            let (bar, progress) = parts_bar();
            let r = runtime()?.block_on(remote::pull(&remote, &which, &out, &progress));
            bar.finish_and_clear();
            let r = r?;
            eprintln!(
                "pulled {} into {}: {} part(s) downloaded, {} from an earlier attempt; verified",
                r.root,
                out.display(),
                r.downloaded,
                r.resumed
            );
            println!("{}", r.root);
        }
    }
    Ok(())
}
