//! The module graph the circle checks read: which top-level module of a crate uses which (`crate::NAME`
//! paths), which file of a module directory uses which sibling (`super::NAME` paths), each following the
//! names the parent file (`lib.rs`, `mod.rs` or `DIR.rs`) brings into scope with `use` (a re-export, a glob
//! of a child included), so `crate::Store` counts as a use of the module that defines `Store`; and the
//! circles in such a graph.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use super::{rel, rust_files};

/// module -> modules it uses, and one place each use is made.
pub(super) type Uses = BTreeMap<String, BTreeMap<String, String>>;

/// A file's code: comments cut (`//` to the end of its line) and its unit tests (from `#[cfg(test)]` on,
/// which may reach anywhere) left out; lines keep their numbers.
fn code_of(text: &str) -> String {
    let text = text.split("#[cfg(test)]").next().unwrap_or_default();
    text.lines().map(|l| l.split("//").next().unwrap_or_default()).collect::<Vec<_>>().join("\n")
}

/// The index of the `}` closing the `{` at `open` (the end of `s` if it is not closed).
fn closing_brace(s: &str, open: usize) -> usize {
    let mut depth = 0usize;
    for (i, c) in s[open..].char_indices() {
        match c {
            '{' => depth += 1,
            '}' if depth == 1 => return open + i,
            '}' => depth -= 1,
            _ => {}
        }
    }
    s.len()
}

/// `s` split at its commas outside braces.
fn split_top(s: &str) -> Vec<&str> {
    let (mut out, mut depth, mut start) = (Vec::new(), 0usize, 0);
    for (i, c) in s.char_indices() {
        match c {
            '{' => depth += 1,
            '}' => depth = depth.saturating_sub(1),
            ',' if depth == 0 => {
                out.push(&s[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    out.push(&s[start..]);
    out.into_iter().filter(|p| !p.trim().is_empty()).collect()
}

/// The paths a use tree names, each as its segments with the name it is known by there:
/// `a::{b, c::d as e, self}` gives (a::b, b), (a::c::d, e) and (a, a); a glob `a::b::*` gives (a::b, *),
/// for the caller to read the names `b` defines.
fn use_tree(tree: &str, prefix: &[String], out: &mut Vec<(Vec<String>, String)>) {
    let tree = tree.trim();
    let segments = |p: &str| -> Vec<String> {
        p.split("::").map(str::trim).filter(|s| !s.is_empty()).map(str::to_string).collect()
    };
    if let Some(open) = tree.find('{') {
        let head: Vec<String> = prefix.iter().cloned().chain(segments(&tree[..open])).collect();
        for item in split_top(&tree[open + 1..closing_brace(tree, open)]) {
            use_tree(item, &head, out);
        }
        return;
    }
    let (path, alias) = match tree.split_once(" as ") {
        Some((p, a)) => (p, Some(a.trim())),
        None => (tree, None),
    };
    let mut segs: Vec<String> = prefix.iter().cloned().chain(segments(path)).collect();
    if segs.last().is_some_and(|s| s == "self") {
        segs.pop();
    }
    let Some(last) = segs.last().cloned() else { return };
    if alias == Some("_") {
        return;
    }
    if last == "*" {
        segs.pop();
    }
    out.push((segs, alias.map_or(last, str::to_string)));
}

/// What a parent file (`lib.rs`, `mod.rs`, `DIR.rs`) brings into scope from its child modules with `use`
/// (`pub use`, `pub(crate) use`, or a plain `use`, which its children see as well): each name, with the
/// child that defines it. `pub use server::{Proxy, Config as C};` gives Proxy -> server and C -> server.
/// A glob (`pub use server::*;`) gives each name the child defines or re-exports itself
/// ([`public_names`]: `child_text` reads a child's file). At a crate's root `crate::` paths are its
/// children too.
pub(super) fn reexports(
    parent: &str,
    children: &BTreeSet<String>,
    root: bool,
    child_text: &dyn Fn(&str) -> String,
) -> BTreeMap<String, String> {
    let code = code_of(parent);
    let mut out = BTreeMap::new();
    for (i, _) in code.match_indices("use ") {
        // `use` the keyword: first on its line, or after `pub`, `pub(..)` or an attribute.
        let before = code[..i].rsplit('\n').next().unwrap_or_default().trim();
        let keyword = before.is_empty()
            || before == "pub"
            || [" pub", ")", "]"].iter().any(|end| before.ends_with(end));
        if !keyword {
            continue;
        }
        let Some(end) = code[i..].find(';') else { continue };
        let mut paths = Vec::new();
        use_tree(&code[i + "use ".len()..i + end], &[], &mut paths);
        for (segs, name) in paths {
            let skip = |s: &&String| s.as_str() == "self" || (root && s.as_str() == "crate");
            let segs: Vec<&String> = segs.iter().skip_while(skip).collect();
            match segs.as_slice() {
                [first] if name == "*" && children.contains(*first) => {
                    for n in public_names(&child_text(first)) {
                        out.entry(n).or_insert_with(|| (*first).clone());
                    }
                }
                [first, _, ..] if children.contains(*first) => {
                    out.insert(name, (*first).clone());
                }
                _ => {}
            }
        }
    }
    out
}

/// The names a module's file makes visible to a glob of it: its `pub`, `pub(crate)` and `pub(super)` items
/// (fn, struct, enum, trait, type, const, static, mod) and the names it re-exports with `pub use`.
fn public_names(text: &str) -> BTreeSet<String> {
    let code = code_of(text);
    let mut out = BTreeSet::new();
    let mut at = 0;
    for line in code.split_inclusive('\n') {
        let start = at;
        at += line.len();
        let l = line.trim_start();
        let Some(rest) = ["pub ", "pub(crate) ", "pub(super) "].iter().find_map(|p| l.strip_prefix(p)) else {
            continue;
        };
        let rest =
            rest.trim_start_matches("async ").trim_start_matches("unsafe ").trim_start_matches("const fn ");
        if rest.starts_with("use ") {
            // The whole statement, over as many lines as it takes.
            let from = start + code[start..].find("use ").unwrap_or(0) + "use ".len();
            let tree = code[from..].split(';').next().unwrap_or_default();
            let mut paths = Vec::new();
            use_tree(tree, &[], &mut paths);
            out.extend(paths.into_iter().map(|(_, name)| name).filter(|n| n != "*"));
            continue;
        }
        for kw in ["fn ", "struct ", "enum ", "trait ", "type ", "const ", "static ", "mod "] {
            if let Some(after) = rest.strip_prefix(kw) {
                let name: String =
                    after.chars().take_while(|c| c.is_ascii_alphanumeric() || *c == '_').collect();
                if !name.is_empty() {
                    out.insert(name);
                }
            }
        }
    }
    out
}

/// The names each `PREFIX` path in `code` starts with, with the 0-based line it is on: `crate::a::X` gives
/// a; `crate::{a::X, b}` gives a and b. A `PREFIX` inside a longer word (`$crate::`) is not one.
fn path_heads(code: &str, prefix: &str) -> Vec<(String, usize)> {
    let mut out = Vec::new();
    for (i, _) in code.match_indices(prefix) {
        if code[..i].ends_with(|c: char| c.is_ascii_alphanumeric() || c == '_' || c == '$') {
            continue;
        }
        let line = code[..i].matches('\n').count();
        let rest = &code[i + prefix.len()..];
        let ident = |s: &str| -> String {
            s.trim_start().chars().take_while(|c| c.is_ascii_alphanumeric() || *c == '_').collect()
        };
        match rest.strip_prefix('{') {
            Some(_) => {
                let group = &rest[1..closing_brace(rest, 0)];
                out.extend(split_top(group).into_iter().map(|item| (ident(item), line)));
            }
            None => out.push((ident(rest), line)),
        }
    }
    out
}

/// The module `name` names among `modules`: itself, or the one defining what the parent re-exports as it.
fn resolve(name: &str, modules: &BTreeSet<String>, reexported: &BTreeMap<String, String>) -> Option<String> {
    if modules.contains(name) {
        Some(name.to_string())
    } else {
        reexported.get(name).cloned()
    }
}

/// Each crate's top-level modules (`src/NAME.rs` or `src/NAME/`) and which others each one names by a
/// `crate::` path outside comments and tests, a name `lib.rs` (or `main.rs`) re-exports standing for the
/// module that defines it.
pub(super) fn module_uses(src: &Path) -> Uses {
    let top = |f: &Path| -> Option<String> {
        let first = f.strip_prefix(src).ok()?.components().next()?.as_os_str().to_string_lossy().to_string();
        let name = first.strip_suffix(".rs").unwrap_or(&first).to_string();
        (name != "lib" && name != "main").then_some(name)
    };
    let files = rust_files(src);
    let modules: BTreeSet<String> = files.iter().filter_map(|f| top(f)).collect();
    let child_text = |m: &str| {
        std::fs::read_to_string(src.join(format!("{m}.rs")))
            .or_else(|_| std::fs::read_to_string(src.join(m).join("mod.rs")))
            .unwrap_or_default()
    };
    let mut reexported = BTreeMap::new();
    for root in ["lib.rs", "main.rs"] {
        let text = std::fs::read_to_string(src.join(root)).unwrap_or_default();
        reexported.extend(reexports(&text, &modules, true, &child_text));
    }
    let mut uses = Uses::new();
    for f in &files {
        let Some(own) = top(f) else { continue };
        let code = code_of(&std::fs::read_to_string(f).unwrap());
        for (name, n) in path_heads(&code, "crate::") {
            match resolve(&name, &modules, &reexported) {
                Some(other) if other != own => add_use(&mut uses, &own, other, f, n),
                _ => {}
            }
        }
    }
    uses
}

/// Within one module directory (`evaluator/src/verified/`, `agent/src/browser/`, ...): which sibling files
/// use which (`super::NAME` paths, a name the directory's parent file re-exports standing for the sibling
/// that defines it), by file.
pub(super) fn sibling_uses(dir: &Path) -> Uses {
    let files: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "rs"))
        .collect();
    let name = |f: &Path| f.file_stem().unwrap().to_string_lossy().to_string();
    let siblings: BTreeSet<String> =
        files.iter().map(|f| name(f)).filter(|n| n != "mod" && n != "lib" && n != "main").collect();
    // The parent: `DIR/mod.rs`, else `DIR.rs` beside the directory.
    let parent = std::fs::read_to_string(dir.join("mod.rs"))
        .or_else(|_| std::fs::read_to_string(dir.with_extension("rs")))
        .unwrap_or_default();
    let child_text = |m: &str| {
        std::fs::read_to_string(dir.join(format!("{m}.rs")))
            .or_else(|_| std::fs::read_to_string(dir.join(m).join("mod.rs")))
            .unwrap_or_default()
    };
    let reexported = reexports(&parent, &siblings, false, &child_text);
    let mut uses = Uses::new();
    for f in &files {
        let own = name(f);
        if !siblings.contains(&own) {
            continue;
        }
        let code = code_of(&std::fs::read_to_string(f).unwrap());
        for (name, n) in path_heads(&code, "super::") {
            match resolve(&name, &siblings, &reexported) {
                Some(other) if other != own => add_use(&mut uses, &own, other, f, n),
                _ => {}
            }
        }
    }
    uses
}

/// Notes that `own` uses `other`, first at line `n` (0-based) of `f`.
fn add_use(uses: &mut Uses, own: &str, other: String, f: &Path, n: usize) {
    uses.entry(own.to_string()).or_default().entry(other).or_insert_with(|| format!("{}:{}", rel(f), n + 1));
}

/// The circles in a module graph: each strongly connected group of two or more modules, sorted.
pub(super) fn circles(uses: &Uses) -> Vec<Vec<String>> {
    let reach = |from: &str| -> BTreeSet<String> {
        let mut seen = BTreeSet::new();
        let mut todo = vec![from.to_string()];
        while let Some(m) = todo.pop() {
            for n in uses.get(&m).into_iter().flat_map(|u| u.keys()) {
                if seen.insert(n.clone()) {
                    todo.push(n.clone());
                }
            }
        }
        seen
    };
    let reached: BTreeMap<&String, BTreeSet<String>> = uses.keys().map(|m| (m, reach(m))).collect();
    let mut groups: BTreeSet<Vec<String>> = BTreeSet::new();
    for (m, r) in &reached {
        let mut group: Vec<String> =
            r.iter().filter(|n| reached.get(n).is_some_and(|back| back.contains(*m))).cloned().collect();
        if !group.is_empty() {
            if !group.contains(m) {
                group.push((*m).clone());
            }
            group.sort();
            groups.insert(group);
        }
    }
    groups.into_iter().filter(|g| g.len() > 1).collect()
}

#[test]
fn circles_are_found_in_a_module_graph() {
    let g = |edges: &[(&str, &str)]| {
        let mut u = Uses::new();
        for (a, b) in edges {
            u.entry(a.to_string()).or_default().insert(b.to_string(), String::new());
        }
        u
    };
    type Edges = Vec<(&'static str, &'static str)>;
    let cases: Vec<(Edges, Vec<Vec<&str>>)> = vec![
        (vec![("a", "b"), ("b", "c")], vec![]),
        (vec![("a", "b"), ("b", "a")], vec![vec!["a", "b"]]),
        (vec![("a", "b"), ("b", "c"), ("c", "a"), ("c", "d")], vec![vec!["a", "b", "c"]]),
        (vec![("a", "b"), ("b", "a"), ("c", "d"), ("d", "c")], vec![vec!["a", "b"], vec!["c", "d"]]),
    ];
    for (edges, want) in cases {
        let want: Vec<Vec<String>> = want.iter().map(|g| g.iter().map(|s| s.to_string()).collect()).collect();
        assert_eq!(circles(&g(&edges)), want, "{edges:?}");
    }
}

#[test]
fn the_module_graph_follows_paths_groups_and_reexports() {
    // (what the crate is, its files under src/, the circles found: `a, b` among top-level modules,
    // `DIR: x, y` among the files of a module directory).
    type Case = (&'static str, &'static [(&'static str, &'static str)], &'static [&'static str]);
    let cases: &[Case] = &[
        (
            "a path each way",
            &[
                ("lib.rs", "mod a;\nmod b;"),
                ("a.rs", "use crate::b::X;"),
                ("b.rs", "pub fn f() { crate::a::g() }"),
            ],
            &["a, b"],
        ),
        (
            "one way",
            &[("lib.rs", "mod a;\nmod b;"), ("a.rs", "use crate::b::X;"), ("b.rs", "pub struct X;")],
            &[],
        ),
        (
            // proxy's handler.rs -> crate::text_response (defined in server.rs) -> handler, before it broke.
            "a name re-exported by lib.rs",
            &[
                ("lib.rs", "mod handler;\nmod server;\npub use server::{text_response, Proxy};"),
                ("handler.rs", "fn f() { crate::text_response(); }"),
                ("server.rs", "use crate::handler::Handler;"),
            ],
            &["handler, server"],
        ),
        (
            "a renamed re-export inside a group, over lines",
            &[
                ("lib.rs", "mod a;\nmod b;\npub(crate) use b::{\n    inner::{X as Y},\n    Z,\n};"),
                ("a.rs", "use crate::Y;"),
                ("b.rs", "use crate::a;"),
            ],
            &["a, b"],
        ),
        (
            "a grouped path",
            &[
                ("lib.rs", "mod a;\nmod b;"),
                ("a.rs", "use crate::{\n    b::X,\n};"),
                ("b.rs", "use crate::a::f;"),
            ],
            &["a, b"],
        ),
        (
            "a comment, a test and a macro's $crate do not count",
            &[
                ("lib.rs", "mod a;\nmod b;\npub use b::X;"),
                (
                    "a.rs",
                    "// crate::b::X\nmacro_rules! m { () => { $crate::X } }\n#[cfg(test)]\nuse crate::b::X;",
                ),
                ("b.rs", "use crate::a::f;"),
            ],
            &[],
        ),
        (
            "a sibling re-exported by its directory's mod.rs, through super::",
            &[
                ("lib.rs", "mod d;"),
                ("d/mod.rs", "mod x;\nmod y;\npub use y::Y;"),
                ("d/x.rs", "use super::Y;"),
                ("d/y.rs", "use super::x::f;"),
            ],
            &["d: x, y"],
        ),
        (
            // src/cli/mod.rs's `pub(crate) use agent::*;`: a name of agent.rs reached as `super::NAME`.
            "a sibling re-exported by a glob, through super::",
            &[
                ("lib.rs", "mod d;"),
                ("d/mod.rs", "mod x;\nmod y;\npub(crate) use y::*;"),
                ("d/x.rs", "use super::Args;"),
                ("d/y.rs", "pub(crate) struct Args;\nfn f() { super::x::g() }"),
            ],
            &["d: x, y"],
        ),
        (
            "a crate root's glob of a module, and a name the module re-exports itself",
            &[
                ("lib.rs", "mod a;\nmod b;\npub use b::*;"),
                ("a.rs", "fn f() { crate::helper(); }"),
                ("b.rs", "pub use inner::helper;\nmod inner;\nuse crate::a;"),
            ],
            &["a, b"],
        ),
        (
            "a glob of a module whose re-export runs over lines",
            &[
                ("lib.rs", "mod a;\nmod b;\npub use b::*;"),
                ("a.rs", "fn f() { crate::second(); }"),
                ("b.rs", "pub use inner::{\n    first,\n    second,\n};\nmod inner;\nuse crate::a;"),
            ],
            &["a, b"],
        ),
        (
            "a glob does not name what the module keeps private",
            &[
                ("lib.rs", "mod a;\nmod b;\npub use b::*;"),
                ("a.rs", "fn f() { crate::hidden(); }"),
                ("b.rs", "fn hidden() {}\nuse crate::a;"),
            ],
            &[],
        ),
        (
            "a sibling imported by its directory's DIR.rs",
            &[
                ("lib.rs", "mod d;"),
                ("d.rs", "mod x;\nmod y;\nuse y::Y;"),
                ("d/x.rs", "use super::{Y, z};"),
                ("d/y.rs", "fn f() { super::x::g() }"),
            ],
            &["d: x, y"],
        ),
    ];
    for (what, files, want) in cases {
        let home = tempfile::tempdir().unwrap();
        let src = home.path().join("src");
        for (path, text) in *files {
            let p = src.join(path);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, text).unwrap();
        }
        let mut found: Vec<String> = circles(&module_uses(&src)).iter().map(|g| g.join(", ")).collect();
        for dir in ["d"].map(|d| src.join(d)).iter().filter(|d| d.is_dir()) {
            let name = dir.file_name().unwrap().to_string_lossy().to_string();
            found.extend(circles(&sibling_uses(dir)).iter().map(|g| format!("{name}: {}", g.join(", "))));
        }
        assert_eq!(found, *want, "{what}");
    }
}
