//! Reading an issue's body (pure): the blockers its lines name
//! (`Depends on #N`, `Blocked by #N`, `Requires #N`, lists allowed), the
//! paths it names (backticked `path/to/file`, or a `Files:` list), and its
//! task list (`- [ ] ...`). Fenced code blocks are not read: a snippet of
//! code or a log is not a dependency.

/// The phrases that name blockers, in lower case.
const BLOCKER_PHRASES: [&str; 3] = ["depends on", "blocked by", "requires"];

/// One blocker a line of the body names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Named {
    /// The blocker's issue number.
    pub number: u64,
    /// The line that names it, trimmed.
    pub line: String,
}

/// What an issue's body says.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Reading {
    /// Blockers, in the order the body names them (each once).
    pub blockers: Vec<Named>,
    /// Paths, in order, each once.
    pub paths: Vec<String>,
    /// The task list's items, in order.
    pub tasks: Vec<String>,
}

/// Reads `body`.
pub fn read(body: &str) -> Reading {
    let mut reading = Reading::default();
    let mut fenced = false;
    let mut in_files = false;
    for raw in body.lines() {
        let line = raw.trim();
        if line.starts_with("```") || line.starts_with("~~~") {
            fenced = !fenced;
            in_files = false;
            continue;
        }
        if fenced {
            continue;
        }
        if in_files {
            match list_item(line) {
                Some(item) => {
                    push_path(&mut reading.paths, unticked(item));
                    continue;
                }
                None => in_files = false,
            }
        }
        if let Some(rest) = files_label(line) {
            in_files = rest.is_empty();
            for item in rest.split(',') {
                push_path(&mut reading.paths, unticked(item.trim()));
            }
            continue;
        }
        if let Some(task) = task(line) {
            reading.tasks.push(task.to_string());
        }
        for number in blockers_of(line) {
            if !reading.blockers.iter().any(|b| b.number == number) {
                reading.blockers.push(Named {
                    number,
                    line: line.to_string(),
                });
            }
        }
        for span in code_spans(line) {
            push_path(&mut reading.paths, span);
        }
    }
    reading
}

/// The issue numbers a line names after a blocker phrase: `Depends on #1,
/// #2 and #3`, `Blocked by: #4`.
fn blockers_of(line: &str) -> Vec<u64> {
    let lower = line.to_ascii_lowercase();
    let mut numbers = Vec::new();
    for phrase in BLOCKER_PHRASES {
        let mut from = 0;
        while let Some(at) = lower[from..].find(phrase) {
            let start = from + at + phrase.len();
            numbers.extend(number_list(&lower[start..]));
            from = start;
        }
    }
    numbers
}

/// `#1, #2 and #3` at the start of `text` (after spaces and a colon);
/// stops at the first word that is neither a number nor a separator.
fn number_list(text: &str) -> Vec<u64> {
    let mut numbers = Vec::new();
    let mut rest = text.trim_start_matches([' ', ':', '*', '_']);
    while let Some(after) = rest.strip_prefix('#') {
        let digits: String = after.chars().take_while(char::is_ascii_digit).collect();
        let Ok(n) = digits.parse::<u64>() else {
            break;
        };
        numbers.push(n);
        rest = after[digits.len()..].trim_start_matches([' ', ',', '&', '*', '_']);
        if let Some(r) = rest.strip_prefix("and ") {
            rest = r.trim_start();
        }
    }
    numbers
}

/// The rest of a `Files:` line (empty when the list follows below).
fn files_label(line: &str) -> Option<&str> {
    let bare = line.trim_start_matches(['#', '*', '_', ' ']);
    let (label, rest) = bare.split_once(':')?;
    label
        .trim_end_matches(['*', '_'])
        .eq_ignore_ascii_case("files")
        .then(|| rest.trim().trim_start_matches(['*', '_']).trim())
}

/// The text of a list item (`- x`, `* x`, `+ x`).
fn list_item(line: &str) -> Option<&str> {
    ["- ", "* ", "+ "]
        .iter()
        .find_map(|m| line.strip_prefix(m))
        .map(str::trim)
}

/// A task list item's text: `- [ ] text` or `- [x] text`.
fn task(line: &str) -> Option<&str> {
    let item = list_item(line)?;
    ["[ ] ", "[x] ", "[X] "]
        .iter()
        .find_map(|m| item.strip_prefix(m))
        .map(str::trim)
        .filter(|t| !t.is_empty())
}

/// `text` without the backticks around it.
fn unticked(text: &str) -> &str {
    text.trim().trim_matches('`').trim()
}

/// The spans between backticks of a line.
fn code_spans(line: &str) -> Vec<&str> {
    line.split('`')
        .enumerate()
        .filter(|(i, _)| i % 2 == 1)
        .map(|(_, s)| s)
        .collect()
}

fn push_path(paths: &mut Vec<String>, text: &str) {
    if looks_like_path(text) && !paths.iter().any(|p| p == text) {
        paths.push(text.to_string());
    }
}

/// A repository-relative path or glob: no spaces, no URL, no option, and
/// a folder (`a/b`) or a file name with an extension (`Cargo.toml`).
fn looks_like_path(text: &str) -> bool {
    let allowed = |c: char| c.is_ascii_alphanumeric() || "._-/*".contains(c);
    !text.is_empty()
        && text.chars().all(allowed)
        && !text.starts_with(['-', '/', '.'])
        && !text.contains("..")
        && !text.contains("//")
        && (text.contains('/') || extension(text))
}

fn extension(text: &str) -> bool {
    text.rsplit_once('.').is_some_and(|(stem, ext)| {
        !stem.is_empty()
            && !ext.is_empty()
            && ext.chars().all(|c| c.is_ascii_alphanumeric())
            && ext.chars().any(|c| c.is_ascii_alphabetic())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn numbers(body: &str) -> Vec<u64> {
        read(body).blockers.iter().map(|b| b.number).collect()
    }

    #[test]
    fn each_phrase_any_case_and_lists() {
        assert_eq!(numbers("Depends on #1"), [1]);
        assert_eq!(numbers("blocked BY #2, #3 and #4"), [2, 3, 4]);
        assert_eq!(numbers("- **Requires:** #5 & #6"), [5, 6]);
        assert_eq!(
            numbers("It depends on the weather; see #7"),
            Vec::<u64>::new()
        );
        assert_eq!(numbers("Depends on #1\nRequires #1"), [1]);
    }

    #[test]
    fn fenced_code_names_nothing() {
        let r = read("```\nDepends on #9\n- [ ] not a task\n`src/x.rs`\n```\nRequires #2");
        assert_eq!(r.blockers.iter().map(|b| b.number).collect::<Vec<_>>(), [2]);
        assert!(r.tasks.is_empty() && r.paths.is_empty());
    }

    #[test]
    fn paths_from_code_spans_and_a_files_list() {
        let r = read(
            "Change `src/lib.rs` and `Cargo.toml`, run `cargo test`, see `--flag`.\n\
             Files:\n- `docs/a.md`\n- tests/**\n\nFiles: b/c.txt, d.json",
        );
        assert_eq!(
            r.paths,
            [
                "src/lib.rs",
                "Cargo.toml",
                "docs/a.md",
                "tests/**",
                "b/c.txt",
                "d.json"
            ]
        );
    }

    #[test]
    fn task_lists_become_tasks() {
        let r = read("- [ ] parses empty input\n* [x] keeps order\n- plain item");
        assert_eq!(r.tasks, ["parses empty input", "keeps order"]);
    }
}
