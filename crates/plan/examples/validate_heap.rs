//! Validates one plan file as `planwright validate` does (`validate_text`)
//! and prints whether it is valid and its error count: a program small
//! enough to build in seconds, for measuring validation's heap with
//! `heaptrack` without the CLI (docs/performance.md, issue 53).
//!
//!     cargo build -p planwright-plan --example validate_heap
//!     heaptrack target/debug/examples/validate_heap plan.json

fn main() {
    let Some(path) = std::env::args().nth(1) else {
        eprintln!("usage: validate_heap PLAN.json");
        std::process::exit(2);
    };
    let text = match std::fs::read_to_string(&path) {
        Ok(text) => text,
        Err(e) => {
            eprintln!("validate_heap: cannot read {path}: {e}");
            std::process::exit(2);
        }
    };
    let options = planwright_plan::Options::default();
    let report = planwright_plan::validate_text(&path, text, &options);
    println!("valid: {}, errors: {}", report.valid, report.error_count);
}
