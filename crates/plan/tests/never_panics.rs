//! Mutated and truncated plans never make the validator panic: every input
//! gets diagnostics, whatever it is; and a plan that reads can be written
//! as a Taskmaster, Auto-Claude or Spec Kit plan.

use planwright_plan::{validate_text, Format, Options};
use proptest::prelude::*;
use serde_json::Value;

fn example_text() -> String {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../examples/agb/plan.example.json");
    std::fs::read_to_string(path).unwrap()
}

/// Characters that look like whitespace, or nothing, but are not JSON
/// whitespace; and the control characters a JSON string may not hold raw.
const INVISIBLE: [char; 9] = [
    '\u{a0}', '\u{b}', '\u{c}', '\u{85}', '\u{2028}', '\u{3000}', '\u{0}', '\u{1f}', '\t',
];

/// Pieces of JSON, and of what is nearly JSON, for the reader to meet in
/// any order.
const TOKENS: [&str; 24] = [
    "{",
    "}",
    "[",
    "]",
    ",",
    ":",
    "\"a\"",
    "\"tickets\"",
    "\"\\ud800\"",
    "\"\\u00e9\\n\"",
    "\"\\",
    "\"",
    "1",
    "-0.5e3",
    "01",
    "true",
    "nul",
    " ",
    "\n",
    "\u{a0}",
    "\u{2028}",
    "\"x\ty\"",
    "\u{feff}",
    "\u{0}",
];

/// The plans of other tools (Taskmaster, Auto-Claude: JSON; Spec Kit: Markdown).
const FOREIGN: [&str; 3] = [
    "taskmaster.tasks.json",
    "autoclaude.implementation_plan.json",
    "speckit.tasks.md",
];

fn foreign_text(name: &str) -> String {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/foreign")
        .join(name);
    std::fs::read_to_string(path).unwrap()
}

/// Pieces of tasks.md lines, for the Markdown reader to meet in any order.
const MARKDOWN: [&str; 20] = [
    "- [ ] ",
    "- [x] ",
    "* [X] ",
    "T001 ",
    "T0 ",
    "TXXX ",
    "[P] ",
    "[US1] ",
    "[",
    "]",
    "## Phase 1\n",
    "### Tests\n",
    "# Tasks\n",
    "```\n",
    "<!--",
    "-->",
    "---\n",
    "src/a.py ",
    "(depends on T001, T002) ",
    "\n  é\u{2028}\t\r\n",
];

fn check_every_way(text: &str) {
    check_as(text, "fuzz.json");
}

fn check_as(text: &str, name: &str) {
    let mut formats: Vec<Option<Format>> = vec![None];
    formats.extend(Format::ALL.into_iter().map(Some));
    for format in formats {
        let options = Options {
            format,
            ..Options::default()
        };
        let report = validate_text(name, text.to_string(), &options);
        assert_eq!(report.valid, report.errors == 0);
        for d in &report.diagnostics {
            assert!(d.line >= 1 && d.column >= 1);
            assert!(d.span.start <= d.span.end && d.span.end <= text.len().max(1));
        }
        // Whatever reads, the writers of the other tools' formats can write.
        if let Some(plan) = &report.plan {
            for to in [Format::Taskmaster, Format::Autoclaude, Format::Speckit] {
                planwright_plan::formats::write(plan, to, &mut Vec::new());
            }
        }
    }
}

/// Replaces the value at a random place in the tree with `replacement`.
fn replace_nth(value: &mut Value, n: &mut usize, replacement: &Value) -> bool {
    if *n == 0 {
        *value = replacement.clone();
        return true;
    }
    *n -= 1;
    match value {
        Value::Array(items) => items.iter_mut().any(|v| replace_nth(v, n, replacement)),
        Value::Object(map) => map.values_mut().any(|v| replace_nth(v, n, replacement)),
        _ => false,
    }
}

fn json_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        any::<f64>()
            .prop_filter("finite", |f| f.is_finite())
            .prop_map(Value::from),
        "[ -~]{0,12}".prop_map(Value::String),
        prop::sample::select(vec![
            "T1", "T3", "../x", "*", "a..b", "", "cheap", "npm test"
        ])
        .prop_map(Value::from),
    ];
    leaf.prop_recursive(3, 16, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            prop::collection::btree_map("[a-z_]{1,6}", inner, 0..4)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn truncated_plans(cut in 0usize..2000) {
        let text = example_text();
        let mut cut = cut.min(text.len());
        while !text.is_char_boundary(cut) { cut -= 1; }
        check_every_way(&text[..cut]);
    }

    #[test]
    fn byte_edits(edits in prop::collection::vec((any::<prop::sample::Index>(), any::<char>()), 1..6)) {
        let mut chars: Vec<char> = example_text().chars().collect();
        for (at, c) in edits {
            let i = at.index(chars.len());
            chars[i] = c;
        }
        check_every_way(&chars.into_iter().collect::<String>());
    }

    #[test]
    fn inserted_invisible_characters(edits in prop::collection::vec((any::<prop::sample::Index>(), prop::sample::select(INVISIBLE.to_vec())), 1..4)) {
        let mut chars: Vec<char> = example_text().chars().collect();
        for (at, c) in edits {
            chars.insert(at.index(chars.len() + 1), c);
        }
        check_every_way(&chars.into_iter().collect::<String>());
    }

    #[test]
    fn token_soup_reads_or_fails_at_a_place_in_it(tokens in prop::collection::vec(prop::sample::select(TOKENS.to_vec()), 0..40)) {
        let text = tokens.concat();
        match planwright_plan::json::parse("fuzz.json", text.clone()) {
            Ok(doc) => prop_assert!(doc.root().span().end <= text.len()),
            Err(e) => {
                prop_assert!(e.span.start <= e.span.end && e.span.end <= text.len());
                prop_assert!(e.diagnostic.code.starts_with("json."));
            }
        }
        check_every_way(&text);
    }

    #[test]
    fn tree_edits(at in 0usize..80, replacement in json_value()) {
        let mut plan: Value = serde_json::from_str(&example_text()).unwrap();
        let mut n = at;
        replace_nth(&mut plan, &mut n, &replacement);
        check_every_way(&serde_json::to_string_pretty(&plan).unwrap());
    }

    #[test]
    fn foreign_plans_truncated(which in 0usize..3, cut in 0usize..4000) {
        let name = FOREIGN[which];
        let text = foreign_text(name);
        let mut cut = cut.min(text.len());
        while !text.is_char_boundary(cut) { cut -= 1; }
        check_as(&text[..cut], name);
    }

    #[test]
    fn foreign_plans_byte_edits(which in 0usize..3, edits in prop::collection::vec((any::<prop::sample::Index>(), any::<char>()), 1..6)) {
        let name = FOREIGN[which];
        let mut chars: Vec<char> = foreign_text(name).chars().collect();
        for (at, c) in edits {
            let i = at.index(chars.len());
            chars[i] = c;
        }
        check_as(&chars.into_iter().collect::<String>(), name);
    }

    #[test]
    fn foreign_plans_tree_edits(which in 0usize..2, at in 0usize..120, replacement in json_value()) {
        let name = FOREIGN[which];
        let mut plan: Value = serde_json::from_str(&foreign_text(name)).unwrap();
        let mut n = at;
        replace_nth(&mut plan, &mut n, &replacement);
        check_as(&serde_json::to_string_pretty(&plan).unwrap(), name);
    }

    #[test]
    fn markdown_soup(pieces in prop::collection::vec(prop::sample::select(MARKDOWN.to_vec()), 0..60)) {
        check_as(&pieces.concat(), "fuzz.md");
    }
}
