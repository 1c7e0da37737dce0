//! Load a WebVoyager task file and print counts per site (a by-hand check on real files).
#![allow(clippy::print_stdout)]
fn main() {
    let Some(path) = std::env::args().nth(1) else {
        eprintln!("usage: load_tasks FILE.jsonl");
        std::process::exit(2);
    };
    match webfreeze_agent::tasks::load(std::path::Path::new(&path)) {
        Ok(tasks) => {
            let mut per_site = std::collections::BTreeMap::new();
            for t in &tasks {
                *per_site.entry(t.web_name.clone()).or_insert(0) += 1;
            }
            println!("{} tasks from {path}", tasks.len());
            for (site, n) in per_site {
                println!("  {site}: {n}");
            }
        }
        Err(e) => {
            eprintln!("error: {e}");
            std::process::exit(1);
        }
    }
}
