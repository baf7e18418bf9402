//! The examples every command's `--help` ends with, in one place: each is
//! a command line that works as written (a test parses every one with the
//! command line's own parser, and runs the ones that need no agent, run
//! or network in a project made by `planwright init`). A `# ...` after
//! two spaces says what it does; a `NAME=...` in front is a variable it
//! needs.

/// (command path, examples), the path as typed after `planwright`.
pub(crate) const EXAMPLES: &[(&str, &str)] = &[
    (
        "init",
        "planwright init    # in the repository's root: planwright.toml and plan.json
  planwright init --repo ../app --plan plans/first.json",
    ),
    (
        "validate",
        "planwright validate plan.json
  planwright validate plan.json --output json    # every diagnostic, for a program",
    ),
    (
        "convert",
        "planwright convert plan.json --to standard_v1 -o plan.standard_v1.json
  planwright convert tasks.json --format taskmaster --to native -o plan.json",
    ),
    (
        "schema",
        "planwright schema native    # the JSON Schema of the native format
  planwright schema codeboost --reference    # its fields, as Markdown",
    ),
    (
        "sweep",
        "planwright sweep sweep.json -o plan.json
  planwright sweep sweep.json --rev main --no-strict-gates",
    ),
    (
        "show",
        "planwright show plan.json    # tickets, waves, critical path, overlaps
  planwright show plan.json --output json",
    ),
    (
        "graph",
        "planwright graph plan.json --to mermaid
  planwright graph plan.json -o plan.dot    # Graphviz: dot -Tsvg plan.dot",
    ),
    (
        "preflight",
        "planwright preflight plan.json --agent claude --gate \"npm test\"
  planwright preflight plan.json --no-gate-probe --output json",
    ),
    (
        "run",
        "planwright run plan.json --agent claude --gate \"npm test\"
  planwright run plan.json --dry-run    # every check, the order tickets would start in, nothing started",
    ),
    (
        "status",
        "planwright status    # the newest run of the repository in this folder
  planwright status --repo ../app --run RUN_ID --output json",
    ),
    (
        "report",
        "planwright report --to html -o report.html
  planwright report --run RUN_ID --to json",
    ),
    (
        "deliver",
        "# What would be pushed and sent, without a token:
  planwright deliver --repo . --dry-run
  # A given run, as drafts, each pull request in JSON:
  GITHUB_TOKEN=... planwright deliver --repo . --run RUN_ID --draft --output json",
    ),
    (
        "respond",
        "# One round on the last run's pull request:
  GITHUB_TOKEN=... planwright respond --repo .
  # Keep answering every five minutes until it is merged or closed:
  GITHUB_TOKEN=... planwright respond --repo . --watch --interval 5m",
    ),
    (
        "import",
        "# The open issues labelled `planwright`, and how they were read:
  GITHUB_TOKEN=... planwright import issues --repo . --label planwright --dry-run
  # Two issues of a milestone, into a plan file:
  planwright import issues --repo . --milestone v2 --issue 12 14 -o plan.json",
    ),
    (
        "import issues",
        "# The open issues labelled `planwright`, and how they were read:
  GITHUB_TOKEN=... planwright import issues --repo . --label planwright --dry-run
  # Two issues of a milestone, into a plan file:
  planwright import issues --repo . --milestone v2 --issue 12 14 -o plan.json",
    ),
    (
        "replay",
        "planwright replay --repo . --commits HEAD~50..HEAD --gate \"npm test\"
  planwright replay --repo ../lib --commits v1.2.0..v1.3.0 --deps none --jobs 8
  planwright replay --commits HEAD~20..HEAD --agent-time 30s+0.5s/line --output json
  planwright replay --commits HEAD~20..HEAD --deps chain --into /tmp/replay    # the clone, kept",
    ),
    (
        "watch",
        "planwright watch    # the newest run, live, in the terminal
  planwright watch --repo ../app --once 100x30    # one frame as text",
    ),
    (
        "serve",
        "planwright serve    # the newest run, live, on a free port of 127.0.0.1
  planwright serve --run RUN_ID --port 8080",
    ),
    (
        "demo",
        "planwright demo    # four tickets run and merged in a throwaway repository
  planwright demo --keep    # and keep it, for status, report and git",
    ),
    (
        "completions",
        "planwright completions bash    # save it where bash-completion looks
  planwright completions zsh",
    ),
    (
        "man",
        "planwright man --command run
  planwright man --all man1    # every page into the folder man1",
    ),
    (
        "draft",
        "planwright draft --from spec.md --format native -o plan.json
  planwright draft --from spec.md --format codeboost --agent claude --repo . --rounds 2",
    ),
    (
        "worker",
        "planwright worker    # started by the coordinator, over ssh or [executor] command
  planwright worker --cache /var/cache/planwright",
    ),
];

/// `cmd` with each subcommand's examples after its help (`run`'s after
/// `--help` only: `run -h` is cut short).
pub(crate) fn add(cmd: clap::Command) -> clap::Command {
    EXAMPLES.iter().fold(cmd, |cmd, (path, text)| {
        let text = format!("Examples:\n  {text}");
        let mut names = path.split(' ');
        let first = names.next().expect("a command path");
        let nested: Vec<&str> = names.collect();
        cmd.mut_subcommand(first, |sub| match nested.as_slice() {
            [] if *path == "run" => sub.after_long_help(text),
            [] => sub.after_help(text),
            [name] => sub.mut_subcommand(*name, |s| s.after_help(text)),
            _ => unreachable!("command paths are one or two names deep"),
        })
    })
}

/// The command lines of an `Examples:` text: each line's `planwright ...`
/// without a comment after it or variables before it, split as a shell
/// splits words in double quotes.
#[cfg(test)]
fn command_lines(text: &str) -> Vec<Vec<String>> {
    let body = text.split_once("Examples:").map_or("", |(_, b)| b);
    (body.lines())
        .map(|l| l.split("  #").next().unwrap_or_default().trim())
        .filter(|l| !l.starts_with('#'))
        .map(|l| {
            let words = words(l);
            let vars = words.iter().take_while(|w| w.contains('=')).count();
            words[vars..].to_vec()
        })
        .filter(|w| w.first().is_some_and(|w| w == "planwright"))
        .collect()
}

/// `a "b c" d` as `a`, `b c`, `d`.
#[cfg(test)]
fn words(line: &str) -> Vec<String> {
    let (mut words, mut word, mut quoted, mut started) = (Vec::new(), String::new(), false, false);
    for c in line.chars() {
        match c {
            '"' => (quoted, started) = (!quoted, true),
            ' ' if !quoted => {
                if started {
                    words.push(std::mem::take(&mut word));
                }
                started = false;
            }
            c => {
                word.push(c);
                started = true;
            }
        }
    }
    if started {
        words.push(word);
    }
    words
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every command's help has examples, and each one is a command line
    /// the parser takes.
    #[test]
    fn every_command_has_examples_that_parse() {
        let cmd = crate::command();
        let mut seen = 0;
        let mut check = |path: String, sub: &clap::Command| {
            let help = sub
                .get_after_long_help()
                .or(sub.get_after_help())
                .map(|h| h.to_string())
                .unwrap_or_default();
            let lines = command_lines(&help);
            assert!(
                lines.len() >= 2,
                "`planwright {path} --help` has two examples: {help:?}"
            );
            for line in lines {
                let parsed = crate::command().try_get_matches_from(&line);
                assert!(parsed.is_ok(), "{line:?}: {}", parsed.unwrap_err());
                assert_eq!(
                    line.get(1).map(String::as_str),
                    path.split(' ').next(),
                    "{line:?} is an example of {path}"
                );
            }
            seen += 1;
        };
        for sub in cmd.get_subcommands().filter(|s| s.get_name() != "help") {
            check(sub.get_name().to_string(), sub);
            for nested in sub.get_subcommands().filter(|s| s.get_name() != "help") {
                check(format!("{} {}", sub.get_name(), nested.get_name()), nested);
            }
        }
        assert_eq!(seen, EXAMPLES.len(), "every entry names a command");
    }

    #[test]
    fn command_lines_drop_comments_and_variables_and_keep_quoted_words() {
        let text = "Examples:\n  # a comment\n  X=1 planwright run p.json --gate \"npm test\"  # why\n  planwright demo";
        assert_eq!(
            command_lines(text),
            [
                vec!["planwright", "run", "p.json", "--gate", "npm test"],
                vec!["planwright", "demo"]
            ]
        );
    }
}
