//! A file name git refuses to index is the attempt's fault: that attempt
//! is a `scope_violation` naming the path, and the run goes on.

use planwright_engine::FailureKind;
use planwright_testkit::*;
use serde_json::json;

/// Each ticket but `A` writes one of these under `lib/`; `A` writes a good file.
const BAD: [(&str, &str); 5] = [
    ("B1", ".GIT/config"),
    ("B2", ".git /x"),
    ("B3", "git~1/x"),
    ("B4", ".git./x"),
    // Indexed by git on Linux, refused where `core.protectHFS` is on.
    ("B5", ".g\u{200c}it/x"),
];

#[test]
fn a_name_git_refuses_fails_only_its_attempt() {
    let env = Env::new(&[("lib/keep", "x\n")]);
    let mut cases = String::new();
    for (id, rel) in BAD {
        cases.push_str(&format!(
            "  {id}) mkdir -p \"$(dirname \"lib/{rel}\")\"; echo bad > 'lib/{rel}' ;;\n"
        ));
    }
    let body = format!("cd \"$1\"\ncase \"$2\" in\n{cases}  A) echo good > lib/a.txt ;;\nesac\n");
    let agent = sh_agent(&env, &body, "{workspace} {ticket}");
    let mut tickets: Vec<_> = BAD
        .iter()
        .map(|(id, _)| ticket(id, json!([any("lib/**")])))
        .collect();
    tickets.push(ticket("A", json!([any("lib/**")])));
    let plan = plan(json!({"tickets": tickets, "gates": gate(&["true"])}));
    let mut s = settings();
    s.strikes = 1;
    let out = run_with(&env, &plan, &s, agent);
    assert_eq!(
        out.summary.merged,
        vec!["A".to_string()],
        "{:?}",
        out.summary
    );
    assert_eq!(git(&env.repo(), &["show", "main:lib/a.txt"]), "good");
    for (id, rel) in BAD {
        assert_eq!(failing_kind(&out, id), FailureKind::ScopeViolation, "{id}");
        let message = &out.summary.failed[id].message;
        assert!(message.contains(&format!("`lib/{rel}`")), "{id}: {message}");
        assert!(message.contains("git refuses"), "{id}: {message}");
    }
}
