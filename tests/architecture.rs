//! docs/ARCHITECTURE.md's invariants, checked against the code, so the document cannot drift from it:
//! each test fails naming the file (or crate edge) that broke the rule and the rule it broke.
//!
//! - the crate graph (`cargo metadata`) equals the `crate-graph` block of ARCHITECTURE.md;
//! - only `agent` depends on chromiumoxide (the root package's tests too, as a dev-dependency);
//! - in `snapshots`, only `format.rs` derives `Deserialize` (the persisted format), and only it and
//!   `diff.rs` (its JSON output) derive `Serialize`;
//! - library crates read no environment variable, nor name one (`WEBFREEZE_...`); the binary reads them only
//!   by the names `env_names` lists;
//! - `unsafe` code only in `upstream-boring/src/ffi.rs`; every crate takes the workspace lints (which
//!   forbid it) but upstream-boring, which denies it outside that module;
//! - library crates fail with typed errors: no `Result<_, String>` (nor `type Err = String`) outside tests;
//! - the binary's `cmd_*` modules never import each other;
//! - no crate's top-level modules use each other in a circle (`crate::` paths outside comments and tests),
//!   nor the files of one module directory (`super::` paths), but the circles `SIBLING_CIRCLES` lists
//!   with why; a name the parent file re-exports (`pub use server::Proxy` in lib.rs) counts as its
//!   defining module (`architecture/module_graph.rs`);
//! - a task proxy alone (`session` without its `run` feature) pulls in no browser, archive or S3 crate;
//! - a Rust file over 600 lines says why at its top (a `Size:` line in its opening doc comment);
//! - library code writes files only in the rooms listed in `FILE_WRITERS`: a run's files only through
//!   `trajectory::run_dir` (`RunDir`, `TaskDir`), so every one goes down atomically.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

mod module_graph;
use module_graph::{circles, module_uses, sibling_uses};

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// Every `.rs` file under `dir`, sorted.
fn rust_files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else { continue };
        for e in entries.flatten() {
            let p = e.path();
            if p.is_dir() {
                todo.push(p);
            } else if p.extension().is_some_and(|x| x == "rs") {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}

fn rel(p: &Path) -> String {
    p.strip_prefix(root()).unwrap_or(p).display().to_string()
}

/// The workspace's packages from `cargo metadata`: (short name, manifest directory, dependencies as
/// (name, kind)).
struct Package {
    name: String,
    dir: PathBuf,
    deps: Vec<(String, Option<String>)>,
}

fn packages() -> Vec<Package> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let out = std::process::Command::new(cargo)
        .args(["metadata", "--format-version", "1", "--no-deps", "--offline"])
        .current_dir(root())
        .output()
        .expect("run cargo metadata");
    assert!(out.status.success(), "cargo metadata: {}", String::from_utf8_lossy(&out.stderr));
    let m: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    m["packages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| Package {
            name: short(p["name"].as_str().unwrap()),
            dir: Path::new(p["manifest_path"].as_str().unwrap()).parent().unwrap().to_path_buf(),
            deps: p["dependencies"]
                .as_array()
                .unwrap()
                .iter()
                .map(|d| (short(d["name"].as_str().unwrap()), d["kind"].as_str().map(str::to_string)))
                .collect(),
        })
        .collect()
}

/// `webfreeze-replay` -> `replay` (the binary's package stays `webfreeze`).
fn short(name: &str) -> String {
    name.strip_prefix("webfreeze-").unwrap_or(name).to_string()
}

/// The `crate-graph` block of ARCHITECTURE.md: `crate -> dep dep ...` per line.
fn documented_graph() -> BTreeMap<String, BTreeSet<String>> {
    let doc = std::fs::read_to_string(root().join("docs/ARCHITECTURE.md")).unwrap();
    let start = doc.find("```text crate-graph\n").expect("ARCHITECTURE.md has a ```text crate-graph block");
    let body = &doc[start..].split_once('\n').unwrap().1;
    let body = &body[..body.find("```").expect("the crate-graph block is closed")];
    body.lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| {
            let (from, to) = l.split_once("->").unwrap_or_else(|| panic!("crate-graph line without ->: {l}"));
            (from.trim().to_string(), to.split_whitespace().map(str::to_string).collect())
        })
        .collect()
}

#[test]
fn the_crate_graph_is_the_documented_one() {
    let pkgs = packages();
    let members: BTreeSet<String> = pkgs.iter().map(|p| p.name.clone()).collect();
    let actual: BTreeMap<String, BTreeSet<String>> = pkgs
        .iter()
        .map(|p| {
            let deps = p
                .deps
                .iter()
                .filter(|(n, kind)| kind.is_none() && members.contains(n))
                .map(|(n, _)| n.clone())
                .collect();
            (p.name.clone(), deps)
        })
        .collect();
    let documented = documented_graph();
    let mut wrong = Vec::new();
    for name in members.iter().chain(documented.keys()).collect::<BTreeSet<_>>() {
        let (a, d) = (actual.get(name), documented.get(name));
        match (a, d) {
            (Some(a), Some(d)) => {
                for x in a.difference(d) {
                    wrong.push(format!("{name} -> {x}: in Cargo.toml, not in ARCHITECTURE.md"));
                }
                for x in d.difference(a) {
                    wrong.push(format!("{name} -> {x}: in ARCHITECTURE.md, not in Cargo.toml"));
                }
            }
            (Some(_), None) => {
                wrong.push(format!("crate {name} is missing from ARCHITECTURE.md's crate-graph"))
            }
            (None, _) => {
                wrong.push(format!("crate {name} is in ARCHITECTURE.md's crate-graph but not a member"))
            }
        }
    }
    assert!(wrong.is_empty(), "the crate graph drifted from docs/ARCHITECTURE.md:\n{}", wrong.join("\n"));
}

#[test]
fn only_the_agent_drives_chromium() {
    let users: Vec<String> = packages()
        .iter()
        .filter(|p| p.deps.iter().any(|(n, kind)| n == "chromiumoxide" && kind.is_none()))
        .map(|p| p.name.clone())
        .collect();
    assert_eq!(users, ["agent"], "only agent may depend on chromiumoxide (tests may, as a dev-dependency)");
}

#[test]
fn only_the_format_module_derives_the_persisted_serde() {
    let mut wrong = Vec::new();
    for f in rust_files(&root().join("snapshots/src")) {
        let text = std::fs::read_to_string(&f).unwrap();
        let derives: Vec<&str> = text.lines().filter(|l| l.trim_start().starts_with("#[derive(")).collect();
        let name = f.file_name().unwrap().to_string_lossy().to_string();
        if derives.iter().any(|l| l.contains("Deserialize")) && name != "format.rs" {
            wrong.push(format!(
                "{}: derives Deserialize (only format.rs, the persisted format, may)",
                rel(&f)
            ));
        }
        if derives.iter().any(|l| l.contains("Serialize")) && name != "format.rs" && name != "diff.rs" {
            wrong.push(format!("{}: derives Serialize (only format.rs and diff.rs's output may)", rel(&f)));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

/// A call that reads (or changes) the process environment.
const ENV_CALLS: &[&str] =
    &["env::var(", "env::var_os(", "env::vars(", "env::vars_os(", "env::set_var(", "env::remove_var("];

#[test]
fn libraries_read_no_environment_and_the_binary_reads_only_listed_names() {
    let pkgs = packages();
    let mut wrong = Vec::new();
    for p in pkgs.iter().filter(|p| p.name != "webfreeze" && p.name != "xtask") {
        for f in rust_files(&p.dir.join("src")) {
            let text = std::fs::read_to_string(&f).unwrap();
            for (n, line) in text.lines().enumerate() {
                if ENV_CALLS.iter().any(|c| line.contains(c)) {
                    wrong.push(format!(
                        "{}:{}: library code reads the environment: {}",
                        rel(&f),
                        n + 1,
                        line.trim()
                    ));
                }
                // Nor names it: the binary's config::env lists the names, and its --help shows them.
                if line.contains("WEBFREEZE_") {
                    wrong.push(format!(
                        "{}:{}: library code names an environment variable; src/env_names.rs owns the names: {}",
                        rel(&f),
                        n + 1,
                        line.trim()
                    ));
                }
            }
        }
    }
    for f in rust_files(&root().join("src")) {
        let text = std::fs::read_to_string(&f).unwrap();
        for (n, line) in text.lines().enumerate() {
            let Some(at) = ENV_CALLS.iter().find_map(|c| line.find(c).map(|i| i + c.len())) else { continue };
            // By a `config::env` name, or by the name a flag gave (`--api-key-env`), never by a literal.
            if line[at..].trim_start().starts_with('"') {
                wrong.push(format!(
                    "{}:{}: reads a variable by a literal name; list it in src/env_names.rs: {}",
                    rel(&f),
                    n + 1,
                    line.trim()
                ));
            }
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

/// The error types of `Result<..>`s in `line` whose error is a bare `String`.
fn string_errors(line: &str) -> bool {
    if line.contains("type Err = String") {
        return true;
    }
    let mut rest = line;
    while let Some(i) = rest.find("Result<") {
        let after = &rest[i + "Result<".len()..];
        let (mut depth, mut last_comma, mut end) = (0usize, None, None);
        for (j, c) in after.char_indices() {
            match c {
                '<' | '(' | '[' => depth += 1,
                '>' | ')' | ']' if depth == 0 => {
                    end = Some(j);
                    break;
                }
                '>' | ')' | ']' => depth -= 1,
                ',' if depth == 0 => last_comma = Some(j),
                _ => {}
            }
        }
        if let (Some(c), Some(e)) = (last_comma, end) {
            if after[c + 1..e].trim() == "String" {
                return true;
            }
        }
        rest = after;
    }
    false
}

#[test]
fn libraries_fail_with_typed_errors() {
    // The scanner itself: what it must and must not flag.
    for (line, flagged) in [
        ("fn f() -> Result<u8, String> {", true),
        ("fn f() -> Result<Vec<(u8, String)>, String> {", true),
        ("type Err = String;", true),
        ("fn f() -> Result<String, Error> {", false),
        ("fn f() -> Result<BTreeMap<String, String>, StoreError> {", false),
        ("fn f() -> std::io::Result<String> {", false),
    ] {
        assert_eq!(string_errors(line), flagged, "{line}");
    }
    let mut wrong = Vec::new();
    for p in packages().iter().filter(|p| p.name != "webfreeze" && p.name != "xtask") {
        for f in rust_files(&p.dir.join("src")) {
            if f.file_name().is_some_and(|n| n == "tests.rs") {
                continue;
            }
            let text = std::fs::read_to_string(&f).unwrap();
            // A file's unit tests come last, after `#[cfg(test)]`.
            for (n, line) in text.lines().take_while(|l| l.trim() != "#[cfg(test)]").enumerate() {
                if string_errors(line) {
                    wrong.push(format!(
                        "{}:{}: a library error as a bare String; give it a type that says which side failed: {}",
                        rel(&f),
                        n + 1,
                        line.trim()
                    ));
                }
            }
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

/// Library files that write files, and what they write. A run directory's files go only through
/// `trajectory/src/run_dir.rs`; a new writer is added here with what it writes, or goes through it.
const FILE_WRITERS: &[(&str, &str)] = &[
    ("trajectory/src/run_dir.rs", "a run directory's files, atomically"),
    ("trajectory/src/wire.rs", "a task's wire log, as the run goes (a zstd stream)"),
    ("proxy/src/ca.rs", "the CA's certificate and key (0600)"),
    ("snapshots/src/store/lock.rs", "the store's lock file (the holder's pid and command line)"),
    ("bundle/src/create.rs", "the bundle archive itself (temp + rename)"),
    ("bundle/src/remote.rs", "a bundle downloaded from object storage (temp + rename)"),
    ("session/src/network_events.rs", "`eval --har`: a run's own requests as a HAR file"),
];

const WRITE_CALLS: &[&str] = &["fs::write(", "File::create(", "fs::copy(", "OpenOptions::new("];

#[test]
fn library_code_writes_files_only_where_listed() {
    let mut wrong = Vec::new();
    for p in packages().iter().filter(|p| !["webfreeze", "xtask", "demo"].contains(&p.name.as_str())) {
        for f in rust_files(&p.dir.join("src")) {
            if f.file_name().is_some_and(|n| n == "tests.rs") {
                continue;
            }
            let name = rel(&f);
            if FILE_WRITERS.iter().any(|(w, _)| *w == name) {
                continue;
            }
            let text = std::fs::read_to_string(&f).unwrap();
            for (n, line) in text.lines().take_while(|l| l.trim() != "#[cfg(test)]").enumerate() {
                if WRITE_CALLS.iter().any(|c| line.contains(c)) && !line.trim_start().starts_with("//") {
                    wrong.push(format!(
                        "{name}:{}: writes a file outside the rooms that may (a run's files go through \
                         trajectory::RunDir; list another writer in FILE_WRITERS): {}",
                        n + 1,
                        line.trim()
                    ));
                }
            }
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
    // Each listed writer still writes (a stale entry would let a new writer hide behind it).
    for (w, what) in FILE_WRITERS {
        let text = std::fs::read_to_string(root().join(w)).unwrap_or_default();
        let body: String =
            text.lines().take_while(|l| l.trim() != "#[cfg(test)]").collect::<Vec<_>>().join("\n");
        assert!(
            WRITE_CALLS.iter().any(|c| body.contains(c)),
            "{w} is listed as writing {what} but writes nothing"
        );
    }
}

#[test]
fn unsafe_code_lives_only_in_the_boringssl_ffi_module() {
    let mut wrong = Vec::new();
    let allowed = root().join("upstream-boring/src/ffi.rs");
    for p in packages() {
        let manifest = std::fs::read_to_string(p.dir.join("Cargo.toml")).unwrap();
        // upstream-boring denies it (its ffi.rs allows it for itself); every other crate forbids it.
        let lints =
            if p.name == "upstream-boring" { "unsafe_code = \"deny\"" } else { "[lints]\nworkspace = true" };
        if !manifest.contains(lints) {
            wrong.push(format!("{}/Cargo.toml lacks `{lints}`, which keeps unsafe code out", p.name));
        }
        for dir in ["src", "tests", "examples", "benches"] {
            for f in rust_files(&p.dir.join(dir)) {
                // This file names the keywords it looks for.
                if f == allowed || f.ends_with("tests/architecture.rs") {
                    continue;
                }
                let text = std::fs::read_to_string(&f).unwrap();
                for (n, line) in text.lines().enumerate() {
                    let code = line.split("//").next().unwrap_or("");
                    let hit = ["unsafe {", "unsafe fn", "unsafe impl", "unsafe trait", "unsafe extern"]
                        .iter()
                        .any(|k| code.contains(k));
                    if hit {
                        wrong.push(format!(
                            "{}:{}: unsafe outside upstream-boring/src/ffi.rs",
                            rel(&f),
                            n + 1
                        ));
                    }
                }
            }
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
fn the_binarys_commands_never_import_each_other() {
    let src = root().join("src");
    let mut wrong = Vec::new();
    for f in rust_files(&src) {
        let r = f.strip_prefix(&src).unwrap();
        let first = r.components().next().unwrap().as_os_str().to_string_lossy().to_string();
        let Some(own) = first.strip_suffix(".rs").or(Some(first.as_str())).filter(|m| m.starts_with("cmd_"))
        else {
            continue;
        };
        let text = std::fs::read_to_string(&f).unwrap();
        for (n, line) in text.lines().enumerate() {
            for (i, _) in line.match_indices("crate::cmd_") {
                let other: String = line[i + "crate::".len()..]
                    .chars()
                    .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                    .collect();
                if other != own {
                    wrong.push(format!("{}:{}: {own} imports {other}", rel(&f), n + 1));
                }
            }
        }
    }
    assert!(
        wrong.is_empty(),
        "cmd_*.rs never import each other; shared code goes in a library or a non-command module:\n{}",
        wrong.join("\n")
    );
}

#[test]
fn a_task_proxy_alone_compiles_no_browser_archive_or_s3_crate() {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let out = std::process::Command::new(cargo)
        .args(["tree", "-p", "webfreeze-session", "--no-default-features", "-e", "normal", "--offline"])
        .args(["--prefix", "none", "--format", "{p}"])
        .current_dir(root())
        .output()
        .expect("run cargo tree");
    assert!(out.status.success(), "cargo tree: {}", String::from_utf8_lossy(&out.stderr));
    let tree = String::from_utf8_lossy(&out.stdout);
    let crates: BTreeSet<&str> = tree.lines().filter_map(|l| l.split_whitespace().next()).collect();
    assert!(crates.contains("webfreeze-replay"), "the tree was read: {crates:?}");
    let found: Vec<&str> = ["chromiumoxide", "webfreeze-agent", "webfreeze-bundle", "object_store", "tar"]
        .into_iter()
        .filter(|c| crates.contains(c))
        .collect();
    assert!(found.is_empty(), "session without its run feature depends on {found:?}");
}

/// A file's opening `//!` doc comment says why it is big (`Size: ...`).
fn says_its_size(text: &str) -> bool {
    text.lines()
        .take_while(|l| l.starts_with("//!") || l.trim().is_empty())
        .any(|l| l.starts_with("//! Size:"))
}

#[test]
fn files_over_600_lines_say_why() {
    for (text, ok) in [
        ("//! A room.\n//!\n//! Size: one format, both ways.\nuse x;", true),
        ("//! A room.\nuse x;\n// Size: said too late.", false),
        ("use x;", false),
    ] {
        assert_eq!(says_its_size(text), ok, "{text}");
    }
    let mut dirs: Vec<PathBuf> = packages()
        .iter()
        .filter(|p| p.name != "webfreeze")
        .flat_map(|p| ["src", "tests", "examples"].map(|d| p.dir.join(d)))
        .collect();
    dirs.extend(["src", "tests"].map(|d| root().join(d)));
    let mut wrong = Vec::new();
    for f in dirs.iter().flat_map(|d| rust_files(d)) {
        let text = std::fs::read_to_string(&f).unwrap();
        let n = text.lines().count();
        if n > 600 && !says_its_size(&text) {
            wrong.push(format!("{}: {n} lines and no `//! Size:` line at its top saying why", rel(&f)));
        }
    }
    assert!(wrong.is_empty(), "split these files, or say why they are one room:\n{}", wrong.join("\n"));
}

#[test]
fn no_crate_has_modules_that_use_each_other_in_a_circle() {
    let mut wrong = Vec::new();
    for p in packages() {
        let uses = module_uses(&p.dir.join("src"));
        for group in circles(&uses) {
            let edges: Vec<String> = group
                .iter()
                .flat_map(|m| {
                    uses[m]
                        .iter()
                        .filter(|(n, _)| group.contains(n))
                        .map(move |(n, at)| format!("{m} -> {n} ({at})"))
                })
                .collect();
            wrong.push(format!("{}: {}", p.name, edges.join(", ")));
        }
    }
    assert!(
        wrong.is_empty(),
        "modules that use each other in a circle (one of them should own what both need):\n{}",
        wrong.join("\n")
    );
}

/// The circles among sibling files that are known and kept, each with why (`CRATE/src/DIR: a, b`). None
/// now: `evaluator/src/verified`'s url and value were the last (a URL's typed query parameters are typed by
/// the network rules, `NormUrl::type_query`, so `url` no longer reads `value`).
const SIBLING_CIRCLES: &[(&str, &str)] = &[];

#[test]
fn no_module_directory_has_files_that_use_each_other_in_a_circle() {
    let mut wrong = Vec::new();
    for p in packages() {
        let src = p.dir.join("src");
        let mut dirs = vec![src.clone()];
        let mut all = Vec::new();
        while let Some(d) = dirs.pop() {
            for e in std::fs::read_dir(&d).unwrap().filter_map(Result::ok) {
                if e.path().is_dir() {
                    dirs.push(e.path());
                    all.push(e.path());
                }
            }
        }
        for d in all {
            for group in circles(&sibling_uses(&d)) {
                let key = format!("{}: {}", rel(&d), group.join(", "));
                if !SIBLING_CIRCLES.iter().any(|(k, _)| *k == key) {
                    wrong.push(key);
                }
            }
        }
    }
    assert!(
        wrong.is_empty(),
        "files of one module directory that use each other in a circle (one of them should own what both \
         need, or SIBLING_CIRCLES says why not):\n{}",
        wrong.join("\n")
    );
}
