//! Every command example of README.md and docs/ that can run offline, run:
//! the fenced blocks whose info string is `sh offline` (the convention in
//! docs/architecture.md). Each block runs in a scratch folder of its own
//! holding copies of the folders in [`COPIED`], its commands one after
//! another through `sh`, with the built binary first on `PATH` as
//! `planwright` and `TMPDIR` inside the scratch folder. A command must exit
//! 0, or the status its trailing `# exit N` comment names. In a block with
//! `$ ` prompts only the prompted lines are commands, and the lines after
//! one are its standard output (when it shows any), which must be what it
//! prints, but for trailing spaces.
//!
//! Beside them: every `toml` block is a configuration the binary reads, and
//! every relative link leads to a file and heading that exist.

use planwright_testkit::Cli;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The info string that marks a block as runnable offline.
const MARKER: &str = "sh offline";

/// What the scratch folder holds, at the same paths as in the repository.
const COPIED: &[&str] = &["examples", "schemas", "crates/plan/tests/data"];

/// One command of a marked block, with where it is written.
struct Example {
    file: PathBuf,
    line: usize,
    command: String,
    expected: i32,
    /// The standard output shown after a `$ ` command, if any.
    output: Vec<String>,
}

fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn doc_files(root: &Path) -> Vec<PathBuf> {
    let mut files = vec![root.join("README.md")];
    let mut dirs = vec![root.join("docs")];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                dirs.push(path);
            } else if path.extension().is_some_and(|e| e == "md") {
                files.push(path);
            }
        }
    }
    files.sort();
    files
}

/// The marked blocks of `text`, each as its lines with their 1-based numbers.
fn marked_blocks(text: &str) -> Vec<Vec<(usize, &str)>> {
    fenced_blocks(text, MARKER)
}

/// The fenced blocks of `text` whose info string is `info`.
fn fenced_blocks<'t>(text: &'t str, info: &str) -> Vec<Vec<(usize, &'t str)>> {
    let mut blocks = Vec::new();
    let mut open: Option<(bool, Vec<(usize, &str)>)> = None;
    for (index, line) in text.lines().enumerate() {
        let fence = line.trim_start().starts_with("```");
        match open.take() {
            None if fence => {
                let this = line.trim_start().trim_start_matches('`').trim();
                open = Some((this == info, Vec::new()));
            }
            None => {}
            Some((true, lines)) if fence => blocks.push(lines),
            Some((false, _)) if fence => {}
            Some((marked, mut lines)) => {
                lines.push((index + 1, line));
                open = Some((marked, lines));
            }
        }
    }
    // A block left open runs to the end of the file, as Markdown reads it.
    if let Some((true, lines)) = open {
        blocks.push(lines);
    }
    blocks
}

/// The commands of one block: continuation lines joined, comments and
/// output left out, `cargo run --release --` read as the binary.
fn commands(file: &Path, block: &[(usize, &str)]) -> Vec<Example> {
    let prompted = block.iter().any(|(_, l)| l.starts_with("$ "));
    let mut examples: Vec<Example> = Vec::new();
    let mut continued = false;
    for &(line, text) in block {
        if continued {
            let last = examples.last_mut().unwrap();
            last.command.push(' ');
            last.command.push_str(text.trim());
        } else {
            let text = match text.strip_prefix("$ ") {
                Some(command) => command,
                None if prompted => {
                    if let Some(last) = examples.last_mut() {
                        last.output.push(text.trim_end().to_string());
                    }
                    continue;
                }
                None => text,
            };
            if text.trim().is_empty() || text.trim_start().starts_with('#') {
                continue;
            }
            examples.push(Example {
                file: file.to_path_buf(),
                line,
                command: text.trim().to_string(),
                expected: 0,
                output: Vec::new(),
            });
        }
        let last = examples.last_mut().unwrap();
        continued = last.command.ends_with('\\');
        if continued {
            last.command.pop();
        }
    }
    for example in &mut examples {
        while example.output.last().is_some_and(|l| l.is_empty()) {
            example.output.pop();
        }
        example.expected = expected_status(&example.command);
        if let Some(rest) = example.command.strip_prefix("cargo run --release --") {
            example.command = format!("planwright{rest}");
        }
    }
    examples
}

/// The status a trailing `# exit N` names, else 0.
fn expected_status(command: &str) -> i32 {
    command
        .rsplit_once("# exit ")
        .and_then(|(_, n)| n.trim().parse().ok())
        .unwrap_or(0)
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let path = entry.unwrap().path();
        let target = to.join(path.file_name().unwrap());
        if path.is_dir() {
            copy_dir(&path, &target);
        } else {
            std::fs::copy(&path, &target).unwrap();
        }
    }
}

/// A folder with `planwright` in it, to put first on `PATH`.
fn bin_dir(scratch: &Path) -> PathBuf {
    let dir = scratch.join("bin");
    std::fs::create_dir_all(&dir).unwrap();
    std::os::unix::fs::symlink(env!("CARGO_BIN_EXE_planwright"), dir.join("planwright")).unwrap();
    dir
}

/// Runs one block's examples in a fresh scratch folder; a failure for each
/// example whose status is not the expected one or whose output is not the
/// one shown.
fn run_block(root: &Path, examples: &[Example]) -> Vec<String> {
    let scratch = tempfile::tempdir().unwrap();
    let work = scratch.path().join("work");
    for dir in COPIED {
        copy_dir(&root.join(dir), &work.join(dir));
    }
    let cli = Cli::with_home(
        env!("CARGO_BIN_EXE_planwright"),
        &scratch.path().join("home"),
    );
    let path = std::env::var("PATH").unwrap_or_default();
    let path = format!("{}:{path}", bin_dir(scratch.path()).display());
    // Where `demo` and `draft` make their folders, removed with the rest.
    let tmp = scratch.path().join("tmp");
    std::fs::create_dir_all(&tmp).unwrap();
    let mut failures = Vec::new();
    for example in examples {
        let mut sh = Command::new("sh");
        cli.hermetic(&mut sh);
        let output = sh
            .env("PATH", &path)
            .env("TMPDIR", &tmp)
            .current_dir(&work)
            .args(["-c", &example.command])
            .output()
            .expect("sh runs");
        let status = output.status.code().unwrap_or(-1);
        let stdout = String::from_utf8_lossy(&output.stdout);
        let printed: Vec<_> = stdout.trim_end().lines().map(str::trim_end).collect();
        let shown_differs = !example.output.is_empty() && printed != example.output;
        if status != example.expected || shown_differs {
            failures.push(format!(
                "{}:{}: `{}` exited {status}, expected {}{}\nstdout:\n{stdout}\nstderr:\n{}",
                example
                    .file
                    .strip_prefix(root)
                    .unwrap_or(&example.file)
                    .display(),
                example.line,
                example.command,
                example.expected,
                if shown_differs {
                    "; its output is not the one the docs show"
                } else {
                    ""
                },
                String::from_utf8_lossy(&output.stderr),
            ));
        }
    }
    failures
}

#[test]
fn every_offline_example_in_the_docs_runs() {
    let root = repo_root();
    let mut failures = Vec::new();
    let mut count = 0;
    for file in doc_files(&root) {
        let text = std::fs::read_to_string(&file).unwrap();
        for block in marked_blocks(&text) {
            let examples = commands(&file, &block);
            count += examples.len();
            failures.extend(run_block(&root, &examples));
        }
    }
    assert!(count > 0, "no `{MARKER}` block in README.md or docs/");
    assert!(
        failures.is_empty(),
        "{} of {count} doc examples failed:\n\n{}",
        failures.len(),
        failures.join("\n\n")
    );
}

/// Every `toml` block of the docs is a `planwright.toml` the binary takes:
/// `validate --config` on agb's example exits 2 only when the file is not.
#[test]
fn every_toml_block_in_the_docs_is_a_configuration() {
    let root = repo_root();
    let cli = Cli::new(env!("CARGO_BIN_EXE_planwright"));
    let scratch = tempfile::tempdir().unwrap();
    let config = scratch.path().join("planwright.toml");
    let plan = root.join("examples/agb/plan.example.json");
    let mut failures = Vec::new();
    for file in doc_files(&root) {
        let text = std::fs::read_to_string(&file).unwrap();
        for block in fenced_blocks(&text, "toml") {
            let body: Vec<&str> = block.iter().map(|(_, line)| *line).collect();
            std::fs::write(&config, body.join("\n")).unwrap();
            let plan = plan.to_str().unwrap();
            let output = cli.run(
                scratch.path(),
                &["validate", plan, "--config", "planwright.toml"],
            );
            if output.status.code() == Some(2) {
                failures.push(format!(
                    "{}:{}: not a planwright.toml:\n{}",
                    file.strip_prefix(&root).unwrap_or(&file).display(),
                    block[0].0,
                    String::from_utf8_lossy(&output.stderr),
                ));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

#[test]
fn a_block_is_read_as_its_commands() {
    let text = "```sh offline\n$ planwright show a.json\nT1  wave 0  \n\n$ cargo run --release -- validate b \\\n    --tag x   # exit 1\n```\n```sh\nplanwright run\n```\n";
    let blocks = marked_blocks(text);
    assert_eq!(blocks.len(), 1);
    let examples = commands(Path::new("x.md"), &blocks[0]);
    let read: Vec<_> = examples
        .iter()
        .map(|e| (e.line, e.command.as_str(), e.expected, e.output.clone()))
        .collect();
    assert_eq!(
        read,
        [
            (
                2,
                "planwright show a.json",
                0,
                vec!["T1  wave 0".to_string()]
            ),
            (5, "planwright validate b  --tag x   # exit 1", 1, vec![]),
        ]
    );
}

/// GitHub's anchor for a heading: lower case, punctuation dropped, spaces
/// as hyphens.
fn anchor(heading: &str) -> String {
    heading
        .trim()
        .to_lowercase()
        .chars()
        .filter(|c| c.is_alphanumeric() || matches!(c, '-' | '_' | ' '))
        .map(|c| if c == ' ' { '-' } else { c })
        .collect()
}

/// The anchors of a Markdown text's headings, fenced blocks left out.
fn anchors(text: &str) -> Vec<String> {
    let mut fenced = false;
    let mut found = Vec::new();
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
        } else if !fenced && line.starts_with('#') {
            found.push(anchor(line.trim_start_matches('#')));
        }
    }
    found
}

/// Every relative link of the docs names a file that exists, and a heading
/// of it when it names an anchor in a Markdown file.
#[test]
fn every_relative_link_in_the_docs_leads_somewhere() {
    let root = repo_root();
    let mut failures = Vec::new();
    for file in doc_files(&root) {
        let text = std::fs::read_to_string(&file).unwrap();
        for (at, _) in text.match_indices("](") {
            let rest = &text[at + 2..];
            let Some(link) = rest
                .split(')')
                .next()
                .filter(|l| !l.contains(char::is_whitespace))
            else {
                continue;
            };
            if link.contains(':') {
                continue;
            }
            let (path, fragment) = link.split_once('#').unwrap_or((link, ""));
            let target = if path.is_empty() {
                file.clone()
            } else {
                file.parent().unwrap().join(path)
            };
            let line = text[..at].lines().count();
            let place = format!("{}:{line}", file.strip_prefix(&root).unwrap().display());
            if !target.exists() {
                failures.push(format!("{place}: `{link}`: no such file"));
                continue;
            }
            let markdown = target.extension().is_some_and(|e| e == "md");
            if !fragment.is_empty() && markdown {
                let linked = std::fs::read_to_string(&target).unwrap();
                if !anchors(&linked).iter().any(|a| a == fragment) {
                    failures.push(format!("{place}: `{link}`: no heading `{fragment}` there"));
                }
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
