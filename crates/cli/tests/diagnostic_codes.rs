//! The code tables of `docs/diagnostics.md` and the codes in the sources
//! agree both ways, so neither can drift from the other.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// The first segment of every diagnostic code.
const PREFIXES: &[&str] = &[
    "agb",
    "codeboost",
    "standard_v1",
    "plan",
    "sweep",
    "native",
    "convert",
    "yaml",
    "json",
    "taskmaster",
    "autoclaude",
    "speckit",
];

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

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

/// All library and binary sources (not the tests), concatenated.
fn sources() -> String {
    let mut files = Vec::new();
    for krate in std::fs::read_dir(root().join("crates")).unwrap() {
        rust_files(&krate.unwrap().path().join("src"), &mut files);
    }
    files.sort();
    files
        .iter()
        .map(|f| std::fs::read_to_string(f).unwrap())
        .collect::<Vec<_>>()
        .join("\n")
}

/// The codes in the first column of the tables of `docs/diagnostics.md`.
fn documented() -> BTreeSet<String> {
    let doc = std::fs::read_to_string(root().join("docs/diagnostics.md")).unwrap();
    doc.lines()
        .filter_map(|l| l.strip_prefix("| `"))
        .filter_map(|l| l.split_once('`').map(|(code, _)| code.to_string()))
        .filter(|c| c.contains('.') && PREFIXES.contains(&c.split('.').next().unwrap()))
        .collect()
}

/// `(former, current)` for every "formerly `X`, still accepted" note in the
/// code column of `docs/diagnostics.md`.
fn documented_former() -> BTreeSet<(String, String)> {
    let doc = std::fs::read_to_string(root().join("docs/diagnostics.md")).unwrap();
    doc.lines()
        .filter_map(|l| l.strip_prefix("| `"))
        .filter_map(|l| {
            let (code, rest) = l.split_once('`')?;
            let cell = rest.split(" | ").next()?;
            let former = cell.strip_prefix(" (formerly `")?;
            let (former, tail) = former.split_once('`')?;
            assert_eq!(tail, ", still accepted)", "the note on `{code}`");
            Some((former.to_string(), code.to_string()))
        })
        .collect()
}

fn is_code_char(c: char) -> bool {
    c.is_ascii_lowercase() || c.is_ascii_digit() || matches!(c, '_' | '.' | '-')
}

/// Every whole string literal that looks like a code: `"<prefix>.<rule>"`.
/// File names such as `"plan.json"` are not codes.
fn literal_codes(src: &str) -> BTreeSet<String> {
    let mut found = BTreeSet::new();
    for prefix in PREFIXES {
        let open = format!("\"{prefix}.");
        for (at, _) in src.match_indices(&open) {
            let rest = &src[at + 1..];
            let len = rest.find(|c| !is_code_char(c)).unwrap_or(rest.len());
            let (code, after) = rest.split_at(len);
            let file_name = [".json", ".yaml", ".yml", ".toml", ".md", ".db"]
                .iter()
                .any(|ext| code.ends_with(ext));
            if after.starts_with('"') && !code.ends_with('.') && !file_name {
                found.insert(code.to_string());
            }
        }
    }
    found
}

/// Helpers that put a prefix before the literal they are called with:
/// (file under `crates/plan/src/formats`, the call's tokens, which may be
/// split by whitespace and line breaks, code prefix).
const HELPERS: &[(&str, &str, &str)] = &[
    ("standard_v1/semantic.rs", "err(", "standard_v1."),
    ("standard_v1/gate.rs", "advisory(", "standard_v1."),
    ("standard_v1/emit.rs", "warn( sink,", "convert.standard_v1."),
    ("codeboost/emit.rs", "warn( sink,", "convert.codeboost."),
];

/// The codes made by [`HELPERS`] from a literal argument.
fn helper_codes(file: &str, call: &str, prefix: &str) -> BTreeSet<String> {
    let path = root().join("crates/plan/src/formats").join(file);
    let src = std::fs::read_to_string(path).unwrap();
    let mut tokens = call.split(' ');
    let first = tokens.next().unwrap();
    let more: Vec<&str> = tokens.collect();
    let mut found = BTreeSet::new();
    'calls: for (at, _) in src.match_indices(first) {
        let before = src[..at].chars().next_back();
        if before.is_some_and(|c| c.is_alphanumeric() || c == '_') {
            continue; // `Diagnostic::error(` is not `err(`, `x_err(` neither
        }
        let mut rest = &src[at + first.len()..];
        for token in &more {
            match rest.trim_start().strip_prefix(token) {
                Some(r) => rest = r,
                None => continue 'calls,
            }
        }
        let Some(rest) = rest.trim_start().strip_prefix('"') else {
            continue;
        };
        let len = rest.find(|c| !is_code_char(c)).unwrap_or(rest.len());
        if rest[len..].starts_with('"') && len > 0 {
            found.insert(format!("{prefix}{}", &rest[..len]));
        }
    }
    found
}

#[test]
fn every_code_in_the_sources_is_documented() {
    let documented = documented();
    let mut used = literal_codes(&sources());
    for (file, call, prefix) in HELPERS {
        let codes = helper_codes(file, call, prefix);
        // A renamed helper must not turn this check into a no-op.
        assert!(codes.len() >= 3, "{file}: `{call}` found {codes:?}");
        used.extend(codes);
    }
    let former: BTreeSet<String> = documented_former().into_iter().map(|(f, _)| f).collect();
    let missing: Vec<_> = used
        .into_iter()
        .filter(|c| !documented.contains(c) && !former.contains(c))
        .collect();
    assert!(
        missing.is_empty(),
        "codes used in crates/*/src but missing from the tables of docs/diagnostics.md: {missing:?}"
    );
}

/// Many codes are assembled (`format!("standard_v1.{code}")` with `code`
/// `"cap.near"`, `format!("{code}.depends-on-range")`), so a documented code
/// counts as used when the whole code or one of its trailing parts appears
/// in the sources as a literal or the end of one. Schema codes are named
/// after the JSON Schema keyword that failed and are not spelled out.
#[test]
fn every_documented_code_is_used() {
    let src = sources();
    let used = |code: &str| {
        let segments: Vec<&str> = code.split('.').collect();
        (0..segments.len()).any(|k| {
            let tail = segments[k..].join(".");
            [tail.clone(), tail.replace('-', "_")].iter().any(|t| {
                src.contains(&format!("\"{t}\""))
                    || (k > 0
                        && (src.contains(&format!(".{t}\"")) || src.contains(&format!("}}{t}\""))))
            })
        })
    };
    let unused: Vec<_> = documented()
        .into_iter()
        .filter(|c| !c.contains('<') && !c.contains(".schema."))
        .filter(|c| !used(c))
        .collect();
    assert!(
        unused.is_empty(),
        "codes in docs/diagnostics.md that no source file produces: {unused:?}"
    );
}

/// Each renamed code is an alias of its current one (the table the plan
/// crate matches and SARIF lists), noted on its current row, and no longer
/// a row of its own.
#[test]
fn renamed_codes_are_documented_as_former_spellings() {
    let table: BTreeSet<(String, String)> = planwright_plan::diag::RENAMED_CODES
        .iter()
        .map(|(f, c)| (f.to_string(), c.to_string()))
        .collect();
    assert!(table.contains(&("agb.graph.cycle".into(), "agb.dag.cycle".into())));
    assert_eq!(documented_former(), table);
    for (former, current) in &table {
        assert!(documented().contains(current) && !documented().contains(former));
        assert_eq!(planwright_plan::diag::current_code(former), current);
    }
}

#[test]
fn the_scan_sees_codes() {
    // Guards the two tests above against passing because nothing was read.
    assert!(documented().len() > 100);
    assert!(documented().contains("agb.edge.unknown-target"));
    assert!(literal_codes(&sources()).contains("json.syntax"));
    assert!(literal_codes("x(\"plan.json\"); y(\"agb.gate.missing\")")
        .into_iter()
        .eq(["agb.gate.missing".to_string()]));
}

/// Rust Debug formatting (`{:?}`, `{x:?}`, `{:#?}`) inside a line, if any.
fn debug_format(line: &str) -> Option<&str> {
    let mut rest = line;
    while let Some(open) = rest.find('{') {
        let after = &rest[open + 1..];
        if let Some(escaped) = after.strip_prefix('{') {
            // `{{` is a literal brace, not a placeholder.
            rest = escaped;
            continue;
        }
        let name = after
            .find(|c: char| !(c.is_alphanumeric() || c == '_' || c == '.'))
            .unwrap_or(after.len());
        let spec = &after[name..];
        if spec.starts_with(":?}") || spec.starts_with(":#?}") {
            return Some(&rest[open..open + 1 + name + spec.find('}').unwrap() + 1]);
        }
        rest = after;
    }
    None
}

/// Debug formatting that never reaches a user: internal panics whose text
/// is for the developer. Each is named by file and line content.
const DEBUG_ALLOWED: &[(&str, &str)] = &[
    // A cache key, never shown to anyone.
    (
        "crates/engine/src/exec/setup.rs",
        "let mut key = format!(\"{:?}\", self.settings.setup);",
    ),
];

/// Every line of the sources that may make a message, with its file
/// (relative to the repository) and 1-based number. Test modules (from a
/// `#[cfg(test)]` before `mod` to the module's closing brace, a `tests.rs`,
/// a `tests/` folder, the testkit) and comments are not messages.
fn message_lines() -> Vec<(String, usize, String)> {
    let mut files = Vec::new();
    for krate in std::fs::read_dir(root().join("crates")).unwrap() {
        rust_files(&krate.unwrap().path().join("src"), &mut files);
    }
    let tests = |f: &PathBuf| {
        f.components().any(|c| {
            ["tests.rs", "tests", "testkit"].contains(&c.as_os_str().to_str().unwrap_or(""))
        })
    };
    let mut out = Vec::new();
    for file in files.into_iter().filter(|f| !tests(f)) {
        let text = std::fs::read_to_string(&file).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        let shown = file
            .strip_prefix(root())
            .unwrap_or(&file)
            .display()
            .to_string();
        let mut in_tests = false;
        for (i, line) in lines.iter().enumerate() {
            if line.trim() == "#[cfg(test)]"
                && lines
                    .get(i + 1)
                    .is_some_and(|l| l.trim_start().starts_with("mod "))
            {
                in_tests = true;
            }
            if in_tests {
                // rustfmt puts a top-level module's closing brace alone at column 0.
                in_tests = *line != "}";
                continue;
            }
            if !line.trim_start().starts_with("//") {
                out.push((shown.clone(), i + 1, line.to_string()));
            }
        }
    }
    out
}

/// Messages say things in words (`exit code 3`, `'x'`), never in Rust's
/// Debug notation (`Code(3)`, `"x"` with escapes).
#[test]
fn no_message_uses_debug_formatting() {
    let mut found = Vec::new();
    for (shown, n, line) in message_lines() {
        let Some(spec) = debug_format(&line) else {
            continue;
        };
        let allowed = DEBUG_ALLOWED
            .iter()
            .any(|(f, content)| shown.ends_with(f) && line.contains(content));
        if !allowed {
            found.push(format!("{shown}:{n}: {spec} in {}", line.trim()));
        }
    }
    assert!(
        found.is_empty(),
        "Debug formatting in messages (quote with `planwright_plan::words::quoted`, or allow-list an internal use):\n{}",
        found.join("\n")
    );
}

/// The nouns messages count. A placeholder right before one of them in a
/// format string reads `1 tickets` when the number is one.
const COUNTED: &[&str] = &[
    "tickets",
    "attempts",
    "files",
    "lines",
    "errors",
    "warnings",
    "advisories",
    "tokens",
    "times",
    "stacks",
    "slots",
    "entries",
    "counterfactuals",
    "checks",
    "rounds",
    "calls",
    "waves",
    "edges",
    "commits",
    "paths",
    "strikes",
    "gate runs",
    "usage lines",
];

/// A placeholder followed by a counted noun in its plural (`{n} tickets`),
/// if `line` has one.
fn fixed_plural(line: &str) -> Option<String> {
    let mut rest = line;
    while let Some(close) = rest.find("} ") {
        let after = &rest[close + 2..];
        let placeholder = !rest[..close].ends_with('}') && rest[..close].contains('{');
        let noun = COUNTED.iter().find(|noun| {
            after
                .strip_prefix(**noun)
                .is_some_and(|tail| !tail.starts_with(|c: char| c.is_alphanumeric() || c == '_'))
        });
        if let (true, Some(noun)) = (placeholder, noun) {
            let open = rest[..close].rfind('{').unwrap();
            return Some(format!("{} {noun}", &rest[open..=close]));
        }
        rest = after;
    }
    None
}

/// Counts in messages agree with their number (`1 ticket`, `2 tickets`)
/// through one helper, `planwright_plan::words::count` (or `plural`).
#[test]
fn no_message_counts_with_a_fixed_plural() {
    let found: Vec<String> = (message_lines().into_iter())
        .filter_map(|(shown, n, line)| {
            let spec = fixed_plural(&line)?;
            Some(format!("{shown}:{n}: `{spec}` in {}", line.trim()))
        })
        .collect();
    assert!(
        found.is_empty(),
        "a count with a fixed plural reads `1 tickets` for one (use `planwright_plan::words::count`):\n{}",
        found.join("\n")
    );
}

#[test]
fn the_fixed_plural_finder_finds() {
    let find = |l: &str| fixed_plural(l);
    assert_eq!(
        find(r#"format!("{n} tickets merged")"#).as_deref(),
        Some("{n} tickets")
    );
    assert_eq!(
        find(r#"format!("{} gate runs)", n)"#).as_deref(),
        Some("{} gate runs")
    );
    assert_eq!(find(r#"format!("{} merged, {x} failed")"#), None);
    assert_eq!(find(r#"format!("{n} ticketsy")"#), None);
    assert_eq!(find(r#"format!("{{literal}} tickets")"#), None);
    assert_eq!(find(r#"format!("{}", count(n, "ticket"))"#), None);
}

#[test]
fn the_debug_format_finder_finds() {
    assert_eq!(debug_format(r#"format!("id {id:?} x")"#), Some("{id:?}"));
    assert_eq!(debug_format(r#"format!("{:#?}", v)"#), Some("{:#?}"));
    assert_eq!(debug_format(r#"format!("{} {x}", a)"#), None);
    assert_eq!(debug_format(r#"format!("{{:?}}")"#), None);
}
