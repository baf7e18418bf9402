//! `show`, `graph` and `convert` through the binary.

use planwright_testkit::Cli;
use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

const BIN: &str = env!("CARGO_BIN_EXE_planwright");

/// The agb template with T2 also claiming `lib/**`, and a title that needs
/// escaping in DOT and Mermaid.
fn write_plan(dir: &Path) -> PathBuf {
    let plan = json!({
        "repo": "/srv/repo",
        "base": "main",
        "gate": {"test": "npm test"},
        "tickets": [
            {"id": "T1", "title": "math \"utils\" \\ <b>", "body": "b", "scope": ["lib/math.mjs"],
             "edges": [{"to": "T3"}], "tier": "cheap", "pool_hint": "gemini"},
            {"id": "T2", "title": "slugify", "body": "b", "scope": ["lib/strings.mjs", "lib/**"]},
            {"id": "T3", "title": "mean", "body": "b", "scope": ["lib/stats.mjs"], "rails": ["lib/math.mjs"]}
        ]
    });
    let path = dir.join("plan.json");
    std::fs::write(&path, serde_json::to_string_pretty(&plan).unwrap()).unwrap();
    path
}

#[test]
fn show_json_is_the_analysis() {
    let cli = Cli::new(BIN);
    let dir = tempfile::tempdir().unwrap();
    write_plan(dir.path());
    let out = cli.run(dir.path(), &["show", "plan.json", "--output", "json"]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let got: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        got,
        json!({
            "ticket_count": 3,
            // The former name of `ticket_count`, for one release.
            "tickets": 3,
            "waves": [["T1", "T2"], ["T3"]],
            "critical_path": ["T1", "T3"],
            "critical_path_minutes": 2,
            // One group: T2 may run with T1 and with T3 (T3 waits for T1).
            "overlaps": [
                {"tickets": ["T1", "T2", "T3"],
                 "patterns": ["lib/math.mjs", "lib/strings.mjs", "lib/**", "lib/stats.mjs"]}
            ]
        })
    );
}

#[test]
fn show_for_people_lists_every_part() {
    let cli = Cli::new(BIN);
    let dir = tempfile::tempdir().unwrap();
    write_plan(dir.path());
    let out = cli.run(dir.path(), &["show", "plan.json"]);
    assert_eq!(out.status.code(), Some(0));
    let text = String::from_utf8(out.stdout).unwrap();
    for part in [
        "plan.json: agb plan, 3 tickets",
        "T3  mean (after T1)",
        "1  T1, T2",
        "Critical path (2 tickets, no estimates)\n  T1 -> T3",
        "Ready now\n  T1, T2",
        "3 tickets may run at the same time and may change the same paths (`lib/math.mjs`, `lib/strings.mjs`, `lib/**`, `lib/stats.mjs`): T1, T2, T3",
    ] {
        assert!(text.contains(part), "missing {part:?} in\n{text}");
    }
}

#[test]
fn validate_warns_once_per_overlapping_group_at_its_first_ticket() {
    let cli = Cli::new(BIN);
    let dir = tempfile::tempdir().unwrap();
    write_plan(dir.path());
    let out = cli.run(dir.path(), &["validate", "plan.json", "--output", "json"]);
    assert_eq!(out.status.code(), Some(0));
    let got: Value = serde_json::from_slice(&out.stdout).unwrap();
    let overlaps: Vec<&Value> = got[0]["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|d| d["code"] == "plan.scope.overlap")
        .collect();
    assert_eq!(overlaps.len(), 1);
    assert_eq!(overlaps[0]["severity"], "warning");
    assert_eq!(overlaps[0]["pointer"], "/tickets/0/scope");
    assert_eq!(got[0]["overlaps"][0]["tickets"], json!(["T1", "T2", "T3"]));
    // --verbose adds the pairs behind the group, each at its later ticket.
    let out = cli.run(
        dir.path(),
        &["validate", "plan.json", "--output", "json", "--verbose"],
    );
    let got: Value = serde_json::from_slice(&out.stdout).unwrap();
    let pairs: Vec<(&str, &str)> = got[0]["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|d| d["code"] == "plan.scope.overlap-pair")
        .map(|d| {
            (
                d["message"].as_str().unwrap(),
                d["pointer"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        pairs,
        [
            (
                "T1 and T2 may run at the same time and both may change `lib/math.mjs` / `lib/**`",
                "/tickets/1/scope"
            ),
            (
                "T2 and T3 may run at the same time and both may change `lib/**` / `lib/stats.mjs`",
                "/tickets/2/scope"
            ),
        ]
    );
}

#[test]
fn dot_output_renders_without_warnings() {
    let cli = Cli::new(BIN);
    let dir = tempfile::tempdir().unwrap();
    write_plan(dir.path());
    let out = cli.run(dir.path(), &["graph", "plan.json", "--to", "dot"]);
    assert_eq!(out.status.code(), Some(0));
    let dot_text = String::from_utf8(out.stdout).unwrap();
    assert!(
        dot_text.contains(r#"label="T1\nmath \"utils\" \\ <b>""#),
        "{dot_text}"
    );
    assert!(dot_text.contains("rank=same"), "{dot_text}");
    assert!(
        dot_text.contains("n0 -> n2 [color=red, penwidth=2];"),
        "{dot_text}"
    );
    check_dot(&dot_text);
    // Graphviz itself, where it is installed (CI installs it); the check
    // above needs nothing beyond this test.
    let Ok(mut child) = Command::new("dot")
        .arg("-Tsvg")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
    else {
        return;
    };
    use std::io::Write;
    child
        .stdin
        .take()
        .unwrap()
        .write_all(dot_text.as_bytes())
        .unwrap();
    let rendered = child.wait_with_output().unwrap();
    assert_eq!(rendered.status.code(), Some(0));
    assert_eq!(String::from_utf8_lossy(&rendered.stderr), "");
    assert!(String::from_utf8_lossy(&rendered.stdout).contains("<svg"));
}

/// DOT tokens: identifiers, quoted strings (escapes kept), `->` and punctuation.
fn dot_tokens(text: &str) -> Vec<String> {
    let mut tokens = Vec::new();
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            c if c.is_whitespace() => {}
            '"' => {
                let mut s = String::from('"');
                loop {
                    match chars.next() {
                        Some('\\') => {
                            s.push('\\');
                            s.push(chars.next().expect("an escape is followed by a character"));
                        }
                        Some('"') => break,
                        Some('\n') | None => panic!("unterminated DOT string: {s}"),
                        Some(c) => s.push(c),
                    }
                }
                s.push('"');
                tokens.push(s);
            }
            '-' if chars.peek() == Some(&'>') => {
                chars.next();
                tokens.push("->".into());
            }
            '{' | '}' | '[' | ']' | ';' | ',' | '=' => tokens.push(c.to_string()),
            c if c.is_alphanumeric() || c == '_' || c == '.' => {
                let mut s = c.to_string();
                while let Some(&n) = chars
                    .peek()
                    .filter(|n| n.is_alphanumeric() || **n == '_' || **n == '.')
                {
                    s.push(n);
                    chars.next();
                }
                tokens.push(s);
            }
            c => panic!("unexpected character {c:?} in DOT"),
        }
    }
    tokens
}

/// A grammar check of the DOT subset `graph` writes (graph, subgraphs,
/// node and edge statements with attribute lists, `a=b` statements), and
/// that every edge joins declared nodes.
fn check_dot(text: &str) {
    let t = dot_tokens(text);
    assert_eq!(&t[..3], ["digraph", "plan", "{"], "{text}");
    assert_eq!(t.last().map(String::as_str), Some("}"), "{text}");
    let is_id = |s: &str| {
        s.starts_with('"')
            || s.chars()
                .all(|c| c.is_alphanumeric() || c == '_' || c == '.')
    };
    let (mut nodes, mut edges, mut depth) = (Vec::new(), Vec::new(), 1);
    let mut i = 3;
    while i < t.len() - 1 {
        match t[i].as_str() {
            "subgraph" => {
                assert!(is_id(&t[i + 1]) && t[i + 2] == "{", "{text}");
                depth += 1;
                i += 3;
            }
            "}" => {
                depth -= 1;
                assert!(depth >= 1, "unbalanced braces: {text}");
                i += 1;
            }
            id => {
                assert!(is_id(id), "not an id: {id}");
                let mut j = i + 1;
                if t[j] == "->" {
                    assert!(is_id(&t[j + 1]), "{text}");
                    edges.push((id.to_string(), t[j + 1].clone()));
                    j += 2;
                } else if t[j] == "=" {
                    assert!(is_id(&t[j + 1]), "{text}");
                    j += 2;
                } else if !["node", "edge", "graph"].contains(&id) {
                    nodes.push(id.to_string());
                }
                if t[j] == "[" {
                    j += 1;
                    while t[j] != "]" {
                        assert!(
                            is_id(&t[j]) && t[j + 1] == "=" && is_id(&t[j + 2]),
                            "bad attribute at {}: {text}",
                            t[j]
                        );
                        j += 3;
                        if t[j] == "," {
                            j += 1;
                        }
                    }
                    j += 1;
                }
                assert_eq!(t[j], ";", "statement without `;` after {id}: {text}");
                i = j + 1;
            }
        }
    }
    assert_eq!(depth, 1, "unbalanced braces: {text}");
    for (from, to) in &edges {
        assert!(
            nodes.contains(from) && nodes.contains(to),
            "edge {from} -> {to} joins an undeclared node"
        );
    }
}

#[test]
fn the_dot_check_catches_broken_dot() {
    for broken in [
        "digraph plan {\n  n0 [label=\"x];\n}\n",
        "digraph plan {\n  n0 -> n1;\n}\n",
        "digraph plan {\n  n0 [label=\"x\"]\n}\n",
        "digraph plan {\n  subgraph w {\n  n0;\n}\n",
    ] {
        let caught = std::panic::catch_unwind(|| check_dot(broken));
        assert!(caught.is_err(), "not caught: {broken}");
    }
}

#[test]
fn mermaid_output_escapes_and_highlights() {
    let cli = Cli::new(BIN);
    let dir = tempfile::tempdir().unwrap();
    write_plan(dir.path());
    let out = cli.run(dir.path(), &["graph", "plan.json", "--to", "mermaid"]);
    assert_eq!(out.status.code(), Some(0));
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.starts_with("flowchart LR\n"), "{text}");
    assert!(
        text.contains(r#"n0["T1<br/>math #quot;utils#quot; #92; #lt;b#gt;"]"#),
        "{text}"
    );
    assert!(text.contains("subgraph wave_2 [\"wave 2\"]"), "{text}");
    assert!(text.contains("class n0,n2 critical"), "{text}");
    assert!(text.contains("linkStyle 0 stroke"), "{text}");
}

#[test]
fn graph_format_dot_points_at_to() {
    let cli = Cli::new(BIN);
    let dir = tempfile::tempdir().unwrap();
    write_plan(dir.path());
    let out = cli.run(dir.path(), &["graph", "--format", "dot", "plan.json"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("`graph --to dot`"));
}

#[test]
fn graph_rejects_an_unknown_picture_language() {
    let cli = Cli::new(BIN);
    let dir = tempfile::tempdir().unwrap();
    write_plan(dir.path());
    let out = cli.run(dir.path(), &["graph", "plan.json", "--to", "svg"]);
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn convert_to_agb_and_back_through_native() {
    let cli = Cli::new(BIN);
    let dir = tempfile::tempdir().unwrap();
    write_plan(dir.path());
    let out = cli.run(
        dir.path(),
        &[
            "convert",
            "plan.json",
            "--to",
            "native",
            "-o",
            "native.json",
        ],
    );
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let out = cli.run(dir.path(), &["convert", "native.json", "--to", "agb"]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let back: Value = serde_json::from_slice(&out.stdout).unwrap();
    let original: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("plan.json")).unwrap())
            .unwrap();
    assert_eq!(back, original);
}

/// With `--output json` stdout holds one document even when the plan is
/// invalid: the file report; the error line goes to stderr.
#[test]
fn an_invalid_plan_gives_one_json_document() {
    let cli = Cli::new(BIN);
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("plan.json"), "").unwrap();
    for command in ["show", "graph", "convert", "run"] {
        let mut args = vec![command, "plan.json", "--output", "json"];
        if command == "convert" {
            args.extend(["--to", "native"]);
        }
        let out = cli.run(dir.path(), &args);
        assert_eq!(out.status.code(), Some(1), "{command}");
        let got: Value = serde_json::from_slice(&out.stdout)
            .unwrap_or_else(|e| panic!("{command}: stdout is not one JSON document: {e}"));
        assert_eq!(got[0]["diagnostics"][0]["code"], "json.syntax", "{command}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            stderr.contains("is not a valid plan"),
            "{command}: {stderr}"
        );
    }
}

/// For people, an invalid plan's diagnostics are printed once, and the
/// error after them points at them rather than at another command.
#[test]
fn an_invalid_plan_is_reported_once_before_the_error() {
    let cli = Cli::new(BIN);
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("plan.json"), "{}").unwrap();
    for command in ["show", "graph", "run", "preflight"] {
        let out = cli.run(dir.path(), &[command, "plan.json"]);
        assert_eq!(out.status.code(), Some(1), "{command}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(
            stderr.matches("plan.format.unknown").count(),
            1,
            "{command}: {stderr}"
        );
        let error = stderr
            .find("is not a valid plan")
            .unwrap_or_else(|| panic!("{command}: {stderr}"));
        assert!(
            stderr.find("plan.format.unknown").unwrap() < error,
            "{command}: {stderr}"
        );
        assert!(
            stderr[error..].contains("fix what is reported above"),
            "{command}: {stderr}"
        );
    }
}

#[test]
fn convert_names_why_it_cannot_write() {
    let cli = Cli::new(BIN);
    let dir = tempfile::tempdir().unwrap();
    write_plan(dir.path());
    let cases = [
        (".", "cannot write `.`: it is a directory; name a file\n"),
        (
            "no/such/dir.json",
            "cannot write `no/such/dir.json`: its folder does not exist\n",
        ),
    ];
    for (target, want) in cases {
        let out = cli.run(
            dir.path(),
            &["convert", "plan.json", "--to", "native", "-o", target],
        );
        assert_eq!(out.status.code(), Some(2));
        assert_eq!(
            String::from_utf8_lossy(&out.stderr),
            format!("error: {want}")
        );
    }
}

/// The longest id git accepts as a branch component (255 bytes) must not
/// stretch or break the column layout.
#[test]
fn show_survives_a_huge_id() {
    let cli = Cli::new(BIN);
    let dir = tempfile::tempdir().unwrap();
    let big = format!("T{}", "x".repeat(254));
    let plan = json!({
        "repo": "/srv/repo", "gate": {"test": "npm test"},
        "tickets": [
            {"id": big, "title": "one", "body": "b", "scope": ["a"]},
            {"id": "T2", "title": "two", "body": "b", "scope": ["b"], "edges": [{"to": big}]}
        ]
    });
    std::fs::write(dir.path().join("plan.json"), plan.to_string()).unwrap();
    let out = cli.run(dir.path(), &["show", "plan.json"]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout
            .lines()
            .any(|l| l.starts_with("  T2 ") && l.ends_with(" two")),
        "{}",
        &stdout[..stdout.len().min(2000)]
    );
}
