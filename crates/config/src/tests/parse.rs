//! `planwright.toml` as text: every section, the errors, the former names.

use super::{parse, refusal};
use crate::{parse_duration, Config, ConfigError, Deprecation, DurationSetting, SandboxMode};
use std::time::Duration;

#[test]
fn config_overrides_and_rejects_typos() {
    let c = parse("[[routing.models]]\nname='m'\nfamily='claude'\ntiers=['cheap']\npool='p'\n");
    assert_eq!(c.routing.candidates("cheap", "claude").len(), 1);
    assert_eq!(c.routing.caps.get("claude"), Some(&4));
    let err = refusal("[routin]\n").to_string();
    assert!(err.contains("routin"), "{err}");
    let c = parse(
        "[gates]\nrun=[['cargo','test']]\nenv=['RUST_LOG']\n[run]\njobs=3\n[workspace]\npristine=true\n[agent]\nname='cmd'\ncmd='x {prompt_file}'\n",
    );
    assert_eq!(c.gates.run.len(), 1);
    assert!(c.gates.run[0] == ["cargo", "test"][..]);
    assert_eq!(c.run.jobs, Some(3));
    assert!(c.workspace.pristine);
    assert_eq!(c.agent.cmd.as_deref(), Some("x {prompt_file}"));
    assert_eq!(c.sandbox.mode, SandboxMode::Enforce);
    assert!(c.sandbox.gate_overlay);
    assert!(parse("[sandbox]\nmode='enforce'\n").sandbox.gate_overlay);
    let c = parse(
        "[sandbox]\nmode='off'\nwritable=['~/.npm']\ngate_network=true\ngate_overlay=false\n[git]\nallow_config=['filter.lfs.clean']\n[workspace]\nsetup_inputs=['package-lock.json']\n[agent]\nlog_limit_mib=8\n",
    );
    assert_eq!(c.sandbox.mode, SandboxMode::Off);
    assert_eq!(c.sandbox.writable, ["~/.npm"]);
    assert!(c.sandbox.gate_network);
    assert!(!c.sandbox.gate_overlay);
    assert_eq!(c.git.allow_config, ["filter.lfs.clean"]);
    assert_eq!(c.workspace.setup_inputs, ["package-lock.json"]);
    assert_eq!(c.agent.log_limit_mib, Some(8));
    refusal("[sandbox]\nmode='on'\n");
    let err = refusal("[gates]\nrn=[]\n").to_string();
    assert!(err.contains("rn"), "{err}");
}

#[test]
fn a_toml_error_shows_the_line_and_column() {
    let err = refusal("[run]\njobs = 2\nstrikez = 1\n").to_string();
    assert!(
        err.contains("line 3, column 1") && err.contains("strikez"),
        "{err}"
    );
    let err = refusal("[run\n").to_string();
    assert!(err.contains("line 1"), "{err}");
}

#[test]
fn prices_extend_the_defaults_and_match_suffixed_names() {
    let c = parse(
        "[prices.my-model]\ninput=1.0\noutput=2.0\n[prices.claude-sonnet-4-6]\ninput=4.0\noutput=20.0\n",
    );
    let mine = c.prices.find("my-model").unwrap();
    assert_eq!(mine.cost(1_000_000, 1_000_000, 1_000_000, 0), 4.0);
    assert_eq!(
        c.prices.find("claude-sonnet-4-6-20260217").unwrap().input,
        4.0
    );
    let flash = c.prices.find("gemini-3-flash-preview").unwrap();
    assert_eq!(flash.cost(2_000_000, 0, 0, 0), 1.0);
    assert!(c.prices.find("gpt-5.4-mini").unwrap().input < 1.0);
    assert!(c.prices.find("unknown").is_none());
    assert_eq!(c.prices.find("openai/gpt-5.4").unwrap().input, 2.5);
    assert!(
        Config::parse("[prices.m]\ninput=1\n").is_err(),
        "output is required"
    );
}

#[test]
fn the_pause_bounds_parse_as_seconds_or_with_a_unit() {
    let c = parse("[agent]\nmax_pause='90m'\nmax_unavailable=3\n");
    assert_eq!(
        c.agent.max_pause,
        Some(DurationSetting(Duration::from_secs(5400)))
    );
    assert_eq!(c.agent.max_unavailable, Some(3));
    let c = parse("[agent]\nmax_pause=120\n");
    assert_eq!(
        c.agent.max_pause,
        Some(DurationSetting(Duration::from_secs(120)))
    );
    let err = refusal("[agent]\nmax_pause='6x'\n").to_string();
    assert!(err.contains("unknown unit"), "{err}");
    assert!(parse_duration("99999999999999999999h").is_err());
}

#[test]
fn agent_and_budget_sections_parse() {
    let c = parse(
        "[agent]\nname='codex'\nmodel='gpt-5.4'\nargs=['-c','x=1']\nprogram='/opt/codex'\nisolate=false\n[budget]\nmax_cost_usd=20.5\nmax_tokens=1000\n[budget.ticket]\nmax_cost_usd=2.0\n",
    );
    assert_eq!(c.agent.model.as_deref(), Some("gpt-5.4"));
    assert_eq!(c.agent.args, ["-c", "x=1"]);
    assert_eq!(c.agent.isolate, Some(false));
    assert_eq!(c.budget.max_cost_usd, Some(20.5));
    assert_eq!(c.budget.ticket.max_cost_usd, Some(2.0));
    assert_eq!(c.budget.ticket.max_tokens, None);
    refusal("[budget]\nmax_dollars=1\n");
}

/// The former spelling, `[worktree]`, is the one this test keeps.
#[test]
fn worktree_copy_takes_paths_inside_the_repository_only() {
    let c = parse("[worktree]\ncopy=['.env','config/local.toml']\n");
    assert_eq!(c.workspace.copy, [".env", "config/local.toml"]);
    for (bad, why) in [
        ("/etc/passwd", "is absolute"),
        ("~/.aws/credentials", "is absolute"),
        ("../other/.env", "climbs out with `..`"),
        ("config/../../.env", "climbs out with `..`"),
        (".", "names the repository itself"),
        ("", "is empty"),
        (".git/config", "is inside `.git` or `.planwright`"),
    ] {
        let e = refusal(&format!("[worktree]\ncopy=['{bad}']\n")).to_string();
        assert!(
            e.contains(&format!("`[worktree] copy` entry `{bad}` {why}"))
                && e.contains("relative to the repository root"),
            "{bad}: {e}"
        );
    }
    let e = refusal("[worktree]\nsetup_inputs=['/tmp/lock']\n").to_string();
    assert!(e.contains("`[worktree] setup_inputs`"), "{e}");
}

#[test]
fn workspace_paths_are_checked_under_the_name_written() {
    let e = refusal("[workspace]\ncopy=['../.env']\n").to_string();
    assert!(
        e.contains("`[workspace] copy` entry `../.env` climbs out with `..`"),
        "{e}"
    );
}

#[test]
fn worktree_is_read_as_workspace_with_a_deprecation() {
    let text = "[run]\njobs = 1\n\n[worktree]\nsetup = [['npm', 'ci']]\npristine = true\n";
    let parsed = Config::parse(text).unwrap();
    assert_eq!(parsed.config.workspace.setup, [["npm", "ci"]]);
    assert!(parsed.config.workspace.pristine);
    assert_eq!(
        parsed.deprecations,
        [Deprecation {
            old: "worktree",
            new: "workspace",
            line: 4
        }]
    );
    let dotted = Config::parse("worktree.pristine = true\n").unwrap();
    assert!(dotted.config.workspace.pristine);
    assert_eq!(dotted.deprecations[0].line, 1);
    let current = Config::parse("[workspace]\npristine = true\n").unwrap();
    assert!(current.config.workspace.pristine && current.deprecations.is_empty());
}

#[test]
fn a_typo_under_the_former_name_points_at_the_users_line() {
    let err = refusal("[worktree]\npristine = true\nsetpu = []\n").to_string();
    assert!(
        err.contains("line 3") && err.contains("setpu") && err.contains("setpu = []"),
        "{err}"
    );
}

#[test]
fn both_names_at_once_are_refused_naming_both() {
    let e = refusal("[workspace]\npristine = true\n[worktree]\nsetup = []\n");
    assert_eq!(
        e,
        ConfigError::Renamed {
            old: "worktree",
            new: "workspace",
            old_line: 3,
            new_line: 1
        }
    );
    let text = e.to_string();
    assert!(
        text.contains("`[workspace]` (line 1)")
            && text.contains("`[worktree]` (line 3), its former name")
            && text.contains("keep `[workspace]` only"),
        "{text}"
    );
}

#[test]
fn every_example_configuration_parses() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples");
    let mut seen = 0;
    for dir in std::fs::read_dir(&root).unwrap() {
        let path = dir.unwrap().path().join("planwright.toml");
        if let Ok(text) = std::fs::read_to_string(&path) {
            let parsed = Config::parse(&text).unwrap_or_else(|e| panic!("{path:?}: {e}"));
            assert!(parsed.deprecations.is_empty(), "{path:?}");
            seen += 1;
        }
    }
    assert!(seen > 0, "no planwright.toml under {root:?}");
}

#[test]
fn the_network_keys_parse_and_a_bad_allow_entry_says_where_and_how() {
    use crate::AgentNetwork;
    assert_eq!(parse("").sandbox.agent_network, AgentNetwork::Proxy);
    // The example of docs/configuration.md.
    let c = parse(
        "[sandbox]\nagent_network = \"proxy\"\nallow = [\"api.github.com:443\", \"*.githubusercontent.com:443\"]\nhosts = { \"gateway.local\" = \"127.0.0.1:4000\" }\n",
    );
    let allow: Vec<String> = c.sandbox.allow.iter().map(|a| a.to_string()).collect();
    assert_eq!(allow, ["api.github.com:443", "*.githubusercontent.com:443"]);
    assert_eq!(
        c.sandbox.hosts.get("gateway.local"),
        Some(&"127.0.0.1:4000".parse().unwrap())
    );
    for mode in ["open", "none"] {
        let c = parse(&format!("[sandbox]\nagent_network = '{mode}'\n"));
        assert_ne!(c.sandbox.agent_network, AgentNetwork::Proxy);
    }
    refusal("[sandbox]\nagent_network = 'direct'\n");
    refusal("[sandbox]\nhosts = { 'x' = 'localhost' }\n");
    let err = refusal("[sandbox]\nallow = ['api.github.com']\n").to_string();
    assert!(
        err.contains("line 2") && err.contains("names no port"),
        "{err}"
    );
}

#[test]
fn agents_and_families_refuse_what_they_do_not_know_naming_the_place() {
    let err =
        refusal("[agents]\ngemini = { adapter = 'acp', command = 'gemini --acp' }\n").to_string();
    assert!(err.contains("command") && err.contains("line 2"), "{err}");
    let err = refusal("[agents]\ngemini = 3\n").to_string();
    assert!(
        err.contains("an agent name") && err.contains("adapter = \"acp\""),
        "{err}"
    );
    let err = refusal("[agents]\ngemini = { cmd = 'gemini --acp' }\n").to_string();
    assert!(err.contains("adapter"), "{err}");
    let err = refusal("[families.claude]\ncheep = 'claude-haiku-4-5'\n").to_string();
    assert!(err.contains("cheep") && err.contains("frontier"), "{err}");
}

#[test]
fn limits_and_the_disk_floor_parse_resolve_and_name_a_bad_value() {
    use crate::resolve::{self, Env};
    use crate::{defaults, MinFree};
    let defaulted = resolve::sandbox(&Config::default(), &Env::default());
    assert_eq!(defaulted.memory, Some(defaults::MEMORY));
    assert_eq!(defaulted.pids, Some(defaults::PIDS));
    let file = parse("[sandbox]\nmemory = \"512M\"\npids = 64\n[run]\nmin_free = \"5%\"\n");
    let set = resolve::sandbox(&file, &Env::default());
    assert_eq!((set.memory, set.pids), (Some(512 << 20), Some(64)));
    assert_eq!(file.run.min_free, Some(MinFree::Percent(5)));
    let off = resolve::sandbox(
        &parse("[sandbox]\nmemory = \"off\"\npids = \"off\"\n"),
        &Env::default(),
    );
    assert_eq!((off.memory, off.pids), (None, None));
    let err = refusal("[sandbox]\nmode = \"enforce\"\nmemory = \"4X\"\n").to_string();
    assert!(
        err.contains("line 3") && err.contains("unknown unit"),
        "{err}"
    );
    let err = refusal("[sandbox]\npids = 0\n").to_string();
    assert!(err.contains("line 2") && err.contains("\"off\""), "{err}");
    let err = refusal("[run]\nmin_free = \"500%\"\n").to_string();
    assert!(err.contains("line 2") && err.contains("5%"), "{err}");
}
