//! Load a task file (WebVoyager JSON Lines, or WebArena / VWA configs with `NAME=URL` site pairs after
//! the path) and print counts per site, and for WebArena configs per eval type and set-up field: a
//! by-hand check on real files, e.g. the `test.raw.json` that PyPI's `libwebarena` ships.
#![allow(clippy::print_stdout)]
fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some(path) = args.first() else {
        eprintln!("usage: load_tasks FILE|DIR [NAME=URL ...]");
        std::process::exit(2);
    };
    let sites = match webfreeze_agent::tasks::Sites::from_pairs(&args[1..]) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("error: {e}");
            std::process::exit(2);
        }
    };
    match webfreeze_agent::tasks::load_with_sites(std::path::Path::new(path), &sites) {
        Ok(tasks) => {
            let mut per_site = std::collections::BTreeMap::new();
            let mut per_type = std::collections::BTreeMap::new();
            let mut setup = std::collections::BTreeMap::new();
            // func: helpers in the eval specs: run here (per name) or not (per name), and the tasks
            // left unscorable.
            let mut helpers = std::collections::BTreeMap::new();
            let mut unscorable = 0;
            // Spec parts the typed model does not know (kept, not scored).
            let mut unknown = std::collections::BTreeMap::new();
            for t in &tasks {
                let e = t.setup.eval.as_ref().and_then(trajectory::TaskEvalSpec::webarena);
                let mut bad = false;
                for call in e.into_iter().flat_map(|e| e.helper_texts()).filter(|c| c.starts_with("func:")) {
                    use webfreeze_agent::tasks::helpers::{helper, Helper};
                    let name = call[5..].split('(').next().unwrap_or("").to_string();
                    let ok = !matches!(helper(call, "http://x/f/forum/1/x"), Helper::Unsupported(_));
                    bad |= !ok;
                    *helpers.entry((ok, name)).or_insert(0) += 1;
                }
                unscorable += usize::from(bad);
                *per_site.entry(t.web_name.clone()).or_insert(0) += 1;
                let s = &t.setup;
                for ty in e.into_iter().flat_map(|e| &e.eval_types) {
                    *per_type.entry(ty.as_str().to_string()).or_insert(0) += 1;
                }
                for part in s.eval.iter().flat_map(|e| e.unknown_parts()) {
                    *unknown.entry(part).or_insert(0) += 1;
                }
                for (k, on) in [
                    ("storage_state", s.storage_state.is_some()),
                    ("several start pages", s.start_urls.len() > 1),
                    ("input images", !s.images.is_empty()),
                    ("viewport", s.viewport != (None, None)),
                    ("geolocation", s.geolocation.is_some()),
                    ("require_reset", s.require_reset),
                ] {
                    if on {
                        *setup.entry(k).or_insert(0) += 1;
                    }
                }
            }
            println!("{} tasks from {path}", tasks.len());
            for (site, n) in per_site {
                println!("  site {site}: {n}");
            }
            for (ty, n) in per_type {
                println!("  eval type {ty}: {n}");
            }
            for (k, n) in setup {
                println!("  with {k}: {n}");
            }
            for ((ok, name), n) in helpers {
                println!("  func:{name}: {n} ({})", if ok { "run here" } else { "not supported" });
            }
            println!("  tasks with a helper not supported here: {unscorable}");
            for (part, n) in unknown {
                println!("  eval part not known here: {part}: {n}");
            }
        }
        Err(e) => {
            eprintln!("error: {e}");
            std::process::exit(1);
        }
    }
}
