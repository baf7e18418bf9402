//! Validation and analysis of generated agb plans of 100, 1,000 and 10,000
//! tickets. Figures and the machine are in `docs/performance.md`.
//!
//! The plans are layered DAGs: layers of 50 tickets, each ticket depending
//! on one to three tickets of the layer before. Every ticket owns a module
//! directory (`src/m<i>/**`) and a test file, reads a shared rail; one in
//! 25 also edits a shared file (`docs/*.md`, a crate manifest), which gives
//! the overlap forecast real pairs to find and many more to rule out.

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use planwright_plan::analysis::analyse;
use planwright_plan::graph::TicketGraph;
use planwright_plan::{validate_text, Options};
use serde_json::{json, Value};
use std::hint::black_box;
use std::time::Duration;

const LAYER: usize = 50;

/// A small deterministic generator, so that runs compare.
struct Lcg(u64);

impl Lcg {
    fn next(&mut self, below: usize) -> usize {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        ((self.0 >> 33) as usize) % below
    }
}

fn plan_text(n: usize) -> String {
    let mut rng = Lcg(n as u64);
    let mut tickets: Vec<Value> = (0..n)
        .map(|i| {
            let mut scope = vec![
                format!("src/m{i}/**"),
                format!("tests/m{i}_test.rs"),
                format!("src/m{i}.rs"),
            ];
            match rng.next(50) {
                0 => scope.push(format!("docs/*{}.md", i % 7)),
                1 => scope.push(format!("crates/c{}/Cargo.toml", i % 13)),
                _ => {}
            }
            let tier = ["cheap", "mid", "frontier"][i % 3];
            json!({
                "id": format!("T{i}"),
                "title": format!("module {i}"),
                "body": format!("Implement module {i} and its tests; `npm test` passes."),
                "scope": scope,
                "rails": ["package.json", "src/lib/**"],
                "tier": tier,
                "pool_hint": "auto",
            })
        })
        .collect();
    for i in LAYER..n {
        let layer_start = i / LAYER * LAYER - LAYER;
        let mut targets: Vec<usize> = (0..1 + rng.next(3))
            .map(|_| layer_start + rng.next(LAYER))
            .collect();
        targets.sort_unstable();
        targets.dedup();
        for from in targets {
            let edges = tickets[from]
                .as_object_mut()
                .expect("tickets are objects")
                .entry("edges")
                .or_insert_with(|| json!([]));
            edges
                .as_array_mut()
                .expect("edges are arrays")
                .push(json!({"to": format!("T{i}")}));
        }
    }
    let plan = json!({
        "repo": "/srv/repo",
        "base": "main",
        "gate": {"test": "npm test", "build": "npm run build"},
        "tickets": tickets,
    });
    serde_json::to_string_pretty(&plan).expect("plans serialize")
}

fn bench(c: &mut Criterion) {
    let options = Options::default();
    for n in [100, 1_000, 10_000] {
        let text = plan_text(n);
        let report = validate_text("plan.json", text.clone(), &options);
        assert!(
            report.valid,
            "generated plan is invalid: {:?}",
            report.diagnostics.first()
        );
        let plan = report.plan.expect("valid plan");
        let mut group = c.benchmark_group(format!("{n} tickets"));
        group.throughput(Throughput::Elements(n as u64));
        if n >= 10_000 {
            group.sample_size(10);
        }
        group.bench_with_input(BenchmarkId::new("validate", n), &text, |b, text| {
            b.iter(|| validate_text("plan.json", black_box(text.clone()), &options))
        });
        group.bench_with_input(BenchmarkId::new("analyse", n), &plan, |b, plan| {
            b.iter(|| analyse(black_box(plan), &TicketGraph::new(plan)))
        });
        group.finish();
    }
}

criterion_group! {
    name = benches;
    config = Criterion::default()
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(3));
    targets = bench
}
criterion_main!(benches);
