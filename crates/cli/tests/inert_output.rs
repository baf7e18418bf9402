//! What an agent says or names is shown, never acted on: escape sequences
//! and HTML in a `TICKET-BLOCKED` reason or a file name reach `run`,
//! `status`, the Markdown report and the SARIF log inert.

use planwright_testkit::{text, Env};
use std::process::Output;

const BIN: &str = env!("CARGO_BIN_EXE_planwright");

#[test]
fn escapes_and_html_from_an_agent_are_shown_inert() {
    let (env, run) = run_agent(
        "printf 'TICKET-BLOCKED: \\033[2J\\033]0;owned\\007<img src=x onerror=alert(1)>\\n'\n",
    );
    let md = shown_inert(&env, &run, "\\x1b[2J");
    assert!(!md.contains("<img"), "{md}");
    assert!(md.contains("&lt;img src=x onerror=alert(1)&gt;"), "{md}");
}

/// Checks that `run`'s output, `status` and the Markdown report of `env`'s
/// run hold nothing a terminal acts on, and each shows `spelled` (an
/// escape spelled out); returns the report.
fn shown_inert(env: &Env, run: &Output, spelled: &str) -> String {
    let status = env.planwright(&["status", "--repo", "repo"]);
    let report = env.planwright(&["report", "--repo", "repo", "--to", "md"]);
    for (what, out) in [("run", run), ("status", &status), ("report", &report)] {
        let shown = text(&out.stdout) + &text(&out.stderr);
        assert_eq!(acts(&shown), None, "{what}: {shown:?}");
        assert!(shown.contains(spelled), "{what} shows {spelled}: {shown}");
    }
    text(&report.stdout)
}

/// A file name that clears the screen and opens a script element.
const HOSTILE_NAME: &str = "a\x1b[2Jb<script>.txt";

/// Runs a one-ticket plan (scope `a.txt`, a title with an escape and
/// HTML) with the `sh` agent `script`, one strike; returns the environment
/// and `run`'s output.
fn run_agent(script: &str) -> (Env, Output) {
    let env = Env::new(&[("a.txt", "a\n")]).with_cli(BIN);
    let agent = env.root().join("agent.sh");
    std::fs::write(&agent, script).unwrap();
    let plan = r#"{"planwright": 1, "source_format": "native", "base": "main",
      "gates": [{"name": "true", "argv": ["true"]}],
      "tickets": [{"id": "A", "title": "a\u001b[31m<b>", "body": "b",
                   "scope": [{"pattern": "a.txt", "op": "any"}]}]}"#;
    std::fs::write(env.root().join("plan.json"), plan).unwrap();
    let cmd = format!("sh {}", agent.display());
    let run = env.cmd_agent("run", &cmd, &["--strikes", "1"]);
    (env, run)
}

/// Whether `text` holds a character a terminal would act on.
fn acts(text: &str) -> Option<char> {
    text.chars().find(|&c| {
        (c.is_control() && c != '\n' && c != '\t') || ('\u{202a}'..='\u{202e}').contains(&c)
    })
}

#[test]
fn a_hostile_file_name_is_shown_inert() {
    // The agent writes its file and one outside the scope, whose name
    // the rejection names.
    let (env, run) = run_agent(&format!(
        "echo b > a.txt\nprintf x > \"$(printf '{}')\"\n",
        HOSTILE_NAME.replace('\x1b', "\\033")
    ));
    let md = shown_inert(&env, &run, "a\\x1b[2Jb");
    assert!(!md.contains("<script>") && !md.contains("<b>"), "{md}");
    assert!(md.contains("&lt;script&gt;"), "{md}");
    assert!(md.contains("| a\\x1b[31m&lt;b&gt; |"), "{md}");
}

#[test]
fn a_sarif_log_of_a_hostile_plan_is_inert() {
    let env = Env::new(&[("a.txt", "a\n")]).with_cli(BIN);
    // The name of the file and of the ticket an edge points to carry
    // escapes and HTML; the plan also lacks its body, so a message names
    // the ticket.
    let id = r"T\u001b]0;owned\u0007<img src=x>";
    let plan = format!(
        r#"{{"repo": ".", "base": "main", "gate": {{"test": "npm test"}},
 "tickets": [{{"id": "{id}", "title": "t", "scope": ["a.txt"], "edges": [{{"to": "\u001b[2J"}}]}}]}}"#
    );
    let file = "p\x1b[2J<b>.json";
    std::fs::write(env.root().join(file), plan).unwrap();
    let out = env.planwright(&["validate", file, "--output", "sarif"]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    let log: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let results = log["runs"][0]["results"].as_array().unwrap();
    assert!(results.len() >= 2, "{log}");
    let mut strings = vec![];
    collect_strings(&log, &mut strings);
    for s in &strings {
        assert_eq!(acts(s), None, "{s:?} in {log}");
    }
    let messages: Vec<&str> = results
        .iter()
        .map(|r| r["message"]["text"].as_str().unwrap())
        .collect();
    assert!(messages.iter().any(|m| m.contains("\\x1b")), "{messages:?}");
    let uri = results[0]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
        .as_str()
        .unwrap();
    assert_eq!(uri, "p%1B%5B2J%3Cb%3E.json");
    // The human output of the same plan is inert too.
    let human = env.planwright(&["validate", file]);
    let shown = text(&human.stdout) + &text(&human.stderr);
    assert_eq!(acts(&shown), None, "{shown:?}");
}

fn collect_strings<'v>(v: &'v serde_json::Value, out: &mut Vec<&'v str>) {
    match v {
        serde_json::Value::String(s) => out.push(s),
        serde_json::Value::Array(a) => a.iter().for_each(|x| collect_strings(x, out)),
        serde_json::Value::Object(o) => o.values().for_each(|x| collect_strings(x, out)),
        _ => {}
    }
}
