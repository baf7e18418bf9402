//! What an agent says is shown, never acted on: escape sequences and HTML
//! in a `TICKET-BLOCKED` reason reach `run`, `status` and the Markdown
//! report inert.
#![forbid(unsafe_code)]

use planwright_testkit::{text, Env};

const BIN: &str = env!("CARGO_BIN_EXE_planwright");

#[test]
fn escapes_and_html_from_an_agent_are_shown_inert() {
    let env = Env::new(&[("a.txt", "a\n")]).with_cli(BIN);
    let agent = env.root().join("agent.sh");
    std::fs::write(
        &agent,
        "printf 'TICKET-BLOCKED: \\033[2J\\033]0;owned\\007<img src=x onerror=alert(1)>\\n'\n",
    )
    .unwrap();
    let plan = r#"{"planwright": 1, "source_format": "native", "base": "main",
      "gates": [{"name": "true", "argv": ["true"]}],
      "tickets": [{"id": "A", "title": "a", "body": "b",
                   "scope": [{"pattern": "a.txt", "op": "any"}]}]}"#;
    std::fs::write(env.root().join("plan.json"), plan).unwrap();
    let cmd = format!("sh {}", agent.display());
    let run = env.planwright(&[
        "run",
        "plan.json",
        "--repo",
        "repo",
        "--agent",
        "cmd",
        "--agent-cmd",
        &cmd,
        "--strikes",
        "1",
    ]);
    let status = env.planwright(&["status", "--repo", "repo"]);
    let report = env.planwright(&["report", "--repo", "repo", "--to", "md"]);
    for (what, out) in [("run", &run), ("status", &status), ("report", &report)] {
        let shown = text(&out.stdout) + &text(&out.stderr);
        assert!(
            !shown.contains('\x1b') && !shown.contains('\x07'),
            "{what}: {shown:?}"
        );
        assert!(
            shown.contains("\\x1b[2J"),
            "{what} shows the escape as text: {shown}"
        );
    }
    let md = text(&report.stdout);
    assert!(!md.contains("<img"), "{md}");
    assert!(md.contains("&lt;img src=x onerror=alert(1)&gt;"), "{md}");
}
