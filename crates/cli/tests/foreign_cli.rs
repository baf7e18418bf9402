//! `validate` on plans of other tools, where the command line adds to the
//! reader: Taskmaster's current tag read beside the file, and reports
//! printed file by file as each is checked.

use planwright_testkit::Cli;
use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Command, Stdio};

const BIN: &str = env!("CARGO_BIN_EXE_planwright");

const TAGGED: &str = r#"{"master": {"tasks": [{"id": 1, "title": "m", "description": "d", "relevantFiles": [{"path": "a.py", "action": "modify"}]}]},
  "feature": {"tasks": [{"id": 1, "title": "f", "description": "d", "relevantFiles": [{"path": "a.py", "action": "modify"}]},
                        {"id": 2, "title": "g", "description": "d", "dependencies": [1], "relevantFiles": [{"path": "b.py", "action": "modify"}]}]}}"#;

fn write(dir: &Path, name: &str, text: &str) {
    let path = dir.join(name);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

fn stdout(o: &std::process::Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

#[test]
fn taskmaster_current_tag_is_read_from_state_json() {
    let cli = Cli::new(BIN);
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), ".taskmaster/tasks/tasks.json", TAGGED);
    let file = ".taskmaster/tasks/tasks.json";
    let out = cli.run(dir.path(), &["validate", file]);
    assert!(
        stdout(&out).contains("valid taskmaster plan, 1 ticket"),
        "{}",
        stdout(&out)
    );
    write(
        dir.path(),
        ".taskmaster/state.json",
        r#"{"currentTag": "feature"}"#,
    );
    let out = cli.run(dir.path(), &["validate", file]);
    assert!(
        stdout(&out).contains("valid taskmaster plan, 2 tickets"),
        "{}",
        stdout(&out)
    );
    let out = cli.run(dir.path(), &["validate", file, "--tag", "master"]);
    assert!(
        stdout(&out).contains("valid taskmaster plan, 1 ticket"),
        "--tag wins: {}",
        stdout(&out)
    );
    // From another folder, the file's own `.taskmaster` is the one read.
    let out = cli.run(
        &dir.path().join(".taskmaster"),
        &["validate", "tasks/tasks.json"],
    );
    assert!(stdout(&out).contains("2 tickets"), "{}", stdout(&out));
    write(
        dir.path(),
        ".taskmaster/state.json",
        r#"{"currentTag": "gone"}"#,
    );
    write(
        dir.path(),
        ".taskmaster/tasks/tasks.json",
        &TAGGED.replace("\"master\"", "\"main\""),
    );
    let out = cli.run(dir.path(), &["validate", file]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stdout(&out).contains("no tag to read: Taskmaster reads the current tag (`gone` in `.taskmaster/state.json`), else `master`, and this tasks.json has tags `main`, `feature`"),
        "{}",
        stdout(&out)
    );
}

/// A file's report is printed before the next file is read: the second
/// plan is a FIFO that the test fills only once the first report is out.
#[test]
fn reports_are_printed_as_each_file_is_checked() {
    for output in ["human", "json-lines"] {
        let dir = tempfile::tempdir().unwrap();
        write(dir.path(), "a.json", TAGGED);
        let made = Command::new("mkfifo")
            .arg(dir.path().join("b.json"))
            .status()
            .unwrap();
        assert!(made.success());
        let mut child = Command::new(BIN)
            .args(["validate", "a.json", "b.json", "--output", output])
            .current_dir(dir.path())
            .env("NO_COLOR", "1")
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
        // Blocks until the first file's report names it.
        let first = lines
            .by_ref()
            .map(Result::unwrap)
            .find(|l| l.contains("a.json"))
            .unwrap_or_else(|| panic!("{output}: no report of a.json"));
        let mut fifo = std::fs::OpenOptions::new()
            .write(true)
            .open(dir.path().join("b.json"))
            .unwrap();
        fifo.write_all(TAGGED.as_bytes()).unwrap();
        drop(fifo);
        let rest: Vec<String> = lines.map(Result::unwrap).collect();
        assert!(
            rest.iter().any(|l| l.contains("b.json")),
            "{output}: {rest:?}"
        );
        assert!(child.wait().unwrap().success());
        if output == "json-lines" {
            let v: serde_json::Value = serde_json::from_str(&first).unwrap();
            assert_eq!(v["file"], "a.json");
            assert_eq!(v["valid"], true);
        }
    }
}

#[test]
fn json_lines_is_for_validate_only() {
    let cli = Cli::new(BIN);
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "a.json", TAGGED);
    let out = cli.run(dir.path(), &["show", "a.json", "--output", "json-lines"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr)
        .contains("`--output json-lines` applies to `validate` only, not `show`"));
}
