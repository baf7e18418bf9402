//! The engine's top-level modules depend on each other one way: the
//! folders of docs/architecture.md, with no import cycle between them.
#![forbid(unsafe_code)]

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// Each top-level module and the other top-level modules its code (not
/// its tests or comments) names as `crate::<module>`.
fn imports() -> BTreeMap<String, BTreeSet<String>> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let mut graph: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for file in files {
        let rel = file.strip_prefix(&src).unwrap();
        let top = rel.iter().next().unwrap().to_string_lossy();
        let top = top.trim_end_matches(".rs").to_string();
        if top == "lib" || rel.ends_with("tests.rs") {
            continue;
        }
        let text = std::fs::read_to_string(&file).unwrap();
        let code = text.split("#[cfg(test)]\nmod tests").next().unwrap();
        for line in code.lines().filter(|l| !l.trim_start().starts_with("//")) {
            for (i, _) in line.match_indices("crate::") {
                let name: String = line[i + 7..]
                    .chars()
                    .take_while(|c| c.is_ascii_lowercase() || *c == '_')
                    .collect();
                // planwright-os's modules, re-exported: not engine modules.
                let os = ["beneath", "process", "sandbox"].contains(&name.as_str());
                if !name.is_empty() && name != top && !os {
                    graph.entry(top.clone()).or_default().insert(name);
                }
            }
        }
    }
    graph
}

/// A cycle through `from`, if there is one.
fn cycle(
    graph: &BTreeMap<String, BTreeSet<String>>,
    path: &mut Vec<String>,
) -> Option<Vec<String>> {
    let last = path.last().unwrap().clone();
    for next in graph.get(&last).into_iter().flatten() {
        if let Some(at) = path.iter().position(|p| p == next) {
            let mut found = path[at..].to_vec();
            found.push(next.clone());
            return Some(found);
        }
        path.push(next.clone());
        if let Some(found) = cycle(graph, path) {
            return Some(found);
        }
        path.pop();
    }
    None
}

#[test]
fn the_engines_modules_import_each_other_one_way() {
    let graph = imports();
    assert!(
        graph.contains_key("run") && graph["run"].contains("store"),
        "{graph:?}"
    );
    for module in graph.keys() {
        if let Some(found) = cycle(&graph, &mut vec![module.clone()]) {
            panic!("an import cycle: {}", found.join(" -> "));
        }
    }
}
