//! `planwright graph PLAN --to dot|mermaid`: the ticket DAG as a picture
//! source, waves as ranks, the critical path highlighted.
//!
//! The picture language is `--to`, as the written format is in `convert`
//! and `report`, because `--format` names the plan's format in every command
//! (`--as` is its old spelling). `--output json` wraps the picture and the
//! graph's parts in one JSON object.

use super::{load_plan, Loaded, PlanArgs};
use crate::error::{exit, CliResult};
use crate::{Global, Output};
use clap::ValueEnum;
use planwright_plan::analysis::{self, Analysis};
use planwright_plan::graph::TicketGraph;
use planwright_plan::Plan;
use std::collections::HashSet;
use std::fmt::Write;

/// Print the ticket graph as Graphviz DOT or a Mermaid flowchart.
#[derive(clap::Args, Debug)]
pub(crate) struct Args {
    #[command(flatten)]
    pub plan: PlanArgs,
    /// The picture language to write (`--as` until the next release).
    #[arg(long, value_enum, default_value_t = Picture::Dot)]
    pub to: Picture,
    /// Write to this file instead of standard output.
    #[arg(short = 'o', long, value_name = "FILE")]
    pub output_file: Option<std::path::PathBuf>,
}

/// A picture language.
#[derive(ValueEnum, Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Picture {
    /// Graphviz DOT (`dot -Tsvg`).
    Dot,
    /// A Mermaid flowchart.
    Mermaid,
}

/// Runs the command.
pub(crate) fn run(args: Args, global: &Global) -> CliResult {
    let Loaded { plan, .. } = load_plan(&args.plan, None, None, global)?;
    // One graph for the analysis and the edges drawn.
    let graph = TicketGraph::new(&plan);
    let analysis = analysis::analyse(&plan, &graph);
    let parts = parts(&plan, &analysis, graph.edges());
    let mut text = match args.to {
        Picture::Dot => dot(&plan, &parts),
        Picture::Mermaid => mermaid(&plan, &parts),
    };
    if global.output == Output::Json {
        text = json(&plan, &analysis, &parts.edges, args.to, text);
    }
    super::write_output(args.output_file.as_deref(), &text)?;
    Ok(exit::OK)
}

/// `--output json`: the picture with the nodes, edges and waves it draws.
fn json(
    plan: &Plan,
    a: &Analysis,
    edges: &[(usize, usize)],
    to: Picture,
    picture: String,
) -> String {
    let edges: Vec<serde_json::Value> = edges
        .iter()
        .map(|&(from, to)| serde_json::json!({"from": plan.tickets[from].id, "to": plan.tickets[to].id}))
        .collect();
    let doc = serde_json::json!({
        "to": to.to_possible_value().map(|v| v.get_name().to_string()),
        "nodes": plan.tickets.iter().map(|t| &t.id).collect::<Vec<_>>(),
        "edges": edges,
        "waves": a.waves,
        "critical_path": a.critical_path,
        "picture": picture,
    });
    serde_json::to_string_pretty(&doc).expect("graphs serialize") + "\n"
}

/// The graph parts both pictures need, by plan index.
struct Parts {
    edges: Vec<(usize, usize)>,
    on_path: HashSet<usize>,
    path_edges: HashSet<(usize, usize)>,
    waves: Vec<Vec<usize>>,
}

fn parts(plan: &Plan, a: &Analysis, edges: Vec<(usize, usize)>) -> Parts {
    let index: std::collections::HashMap<&str, usize> = plan
        .tickets
        .iter()
        .enumerate()
        .rev()
        .map(|(i, t)| (t.id.as_str(), i))
        .collect();
    let path: Vec<usize> = a
        .critical_path
        .iter()
        .map(|id| index[id.as_str()])
        .collect();
    Parts {
        edges,
        on_path: path.iter().copied().collect(),
        path_edges: path.windows(2).map(|w| (w[0], w[1])).collect(),
        waves: a
            .waves
            .iter()
            .map(|w| w.iter().map(|id| index[id.as_str()]).collect())
            .collect(),
    }
}

/// A DOT double-quoted string: `"` and `\` escaped, line breaks as `\n`
/// (which labels show as a line break), other control characters dropped.
fn dot_quote(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            c if c.is_control() => {}
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

fn dot(plan: &Plan, p: &Parts) -> String {
    let mut out =
        String::from("digraph plan {\n  rankdir=LR;\n  node [shape=box, style=rounded];\n");
    for (w, wave) in p.waves.iter().enumerate() {
        let _ = write!(out, "  subgraph wave_{} {{\n    rank=same;\n", w + 1);
        for &i in wave {
            let _ = writeln!(out, "    n{i};");
        }
        out.push_str("  }\n");
    }
    for (i, t) in plan.tickets.iter().enumerate() {
        let label = if t.title.is_empty() {
            t.id.clone()
        } else {
            format!("{}\n{}", t.id, t.title)
        };
        let style = if p.on_path.contains(&i) {
            ", color=red, penwidth=2"
        } else {
            ""
        };
        let _ = writeln!(
            out,
            "  n{i} [label={}, tooltip={}{style}];",
            dot_quote(&label),
            dot_quote(&t.id)
        );
    }
    for &(from, to) in &p.edges {
        let style = if p.path_edges.contains(&(from, to)) {
            " [color=red, penwidth=2]"
        } else {
            ""
        };
        let _ = writeln!(out, "  n{from} -> n{to}{style};");
    }
    out.push_str("}\n");
    out
}

/// Mermaid label text inside `"..."`: quotes, angle brackets, `#`, `&`,
/// backslashes and backticks as entity codes, line breaks as `<br/>`.
fn mermaid_text(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '"' => out.push_str("#quot;"),
            '#' => out.push_str("#35;"),
            '<' => out.push_str("#lt;"),
            '>' => out.push_str("#gt;"),
            '`' => out.push_str("#96;"),
            '&' => out.push_str("#amp;"),
            '\\' => out.push_str("#92;"),
            '\n' => out.push_str("<br/>"),
            c if c.is_control() => {}
            c => out.push(c),
        }
    }
    out
}

fn mermaid(plan: &Plan, p: &Parts) -> String {
    let mut out = String::from("flowchart LR\n");
    for (w, wave) in p.waves.iter().enumerate() {
        let _ = writeln!(out, "  subgraph wave_{} [\"wave {}\"]", w + 1, w + 1);
        for &i in wave {
            let t = &plan.tickets[i];
            let label = if t.title.is_empty() {
                mermaid_text(&t.id)
            } else {
                format!("{}<br/>{}", mermaid_text(&t.id), mermaid_text(&t.title))
            };
            let _ = writeln!(out, "    n{i}[\"{label}\"]");
        }
        out.push_str("  end\n");
    }
    let mut highlighted = Vec::new();
    for (k, &(from, to)) in p.edges.iter().enumerate() {
        let _ = writeln!(out, "  n{from} --> n{to}");
        if p.path_edges.contains(&(from, to)) {
            highlighted.push(k.to_string());
        }
    }
    if !p.on_path.is_empty() {
        out.push_str("  classDef critical stroke:#d00,stroke-width:3px\n");
        let mut nodes: Vec<usize> = p.on_path.iter().copied().collect();
        nodes.sort_unstable();
        let nodes: Vec<String> = nodes.iter().map(|i| format!("n{i}")).collect();
        let _ = writeln!(out, "  class {} critical", nodes.join(","));
    }
    if !highlighted.is_empty() {
        let _ = writeln!(
            out,
            "  linkStyle {} stroke:#d00,stroke-width:3px",
            highlighted.join(",")
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dot_strings_are_escaped() {
        assert_eq!(dot_quote(r#"a "b" \c"#), r#""a \"b\" \\c""#);
        assert_eq!(dot_quote("x\ny\u{7}"), r#""x\ny""#);
    }

    #[test]
    fn mermaid_text_is_escaped() {
        assert_eq!(
            mermaid_text("a \"b\" <c> #1 `d` & e \\"),
            "a #quot;b#quot; #lt;c#gt; #35;1 #96;d#96; #amp; e #92;"
        );
    }
}
