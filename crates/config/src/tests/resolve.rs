//! Precedence, area by area: a flag over the file over the default.

use super::parse;
use crate::resolve::{self, AgentFlags, Env, RunFlags, ValidationFlags};
use crate::{defaults, AgentSpec, Config, ContainSettings, SandboxMode, SettingsError};
use planwright_plan::{Format, Options};
use std::path::PathBuf;
use std::time::Duration;

fn flags() -> RunFlags {
    RunFlags {
        plan: "plan.json".into(),
        ..RunFlags::default()
    }
}

fn env() -> Env {
    Env {
        home: Some(PathBuf::from("/home/u")),
        cache_home: None,
        agb_strict_gates: None,
        cores: Some(8),
        tokens: Default::default(),
    }
}

fn run(flags: RunFlags, file: &str) -> Result<crate::RunSettings, SettingsError> {
    resolve::run(flags, &parse(file), &env())
}

const FILE: &str = "[run]\njobs = 3\nstrikes = 4\ngate_timeout_secs = 30\n\
                    [agent]\ntimeout_secs = 90\nmax_pause = '1h'\nmax_unavailable = 2\n";

#[test]
fn run_flags_win_over_the_file_which_wins_over_the_defaults() {
    let s = run(flags(), "").unwrap();
    assert_eq!(
        (s.jobs, s.strikes, s.agent_timeout, s.gates.timeout),
        (
            8,
            defaults::STRIKES,
            Some(defaults::AGENT_TIMEOUT),
            Some(defaults::GATE_TIMEOUT)
        )
    );
    assert_eq!(
        (s.max_pause, s.max_unavailable),
        (defaults::MAX_PAUSE, defaults::MAX_UNAVAILABLE)
    );
    let s = run(flags(), FILE).unwrap();
    assert_eq!(
        (s.jobs, s.strikes, s.agent_timeout, s.gates.timeout),
        (
            3,
            4,
            Some(Duration::from_secs(90)),
            Some(Duration::from_secs(30))
        )
    );
    assert_eq!(
        (s.max_pause, s.max_unavailable),
        (Duration::from_secs(3600), 2)
    );
    let given = RunFlags {
        jobs: Some(5),
        strikes: Some(6),
        agent_timeout: Some(Duration::from_secs(7)),
        gate_timeout: Some(Duration::from_secs(8)),
        allow_config_change: true,
        ..flags()
    };
    let s = run(given, FILE).unwrap();
    assert_eq!(
        (s.jobs, s.strikes, s.agent_timeout, s.gates.timeout),
        (
            5,
            6,
            Some(Duration::from_secs(7)),
            Some(Duration::from_secs(8))
        )
    );
    assert!(s.allow_config_change);
    assert_eq!(s.plan_path, "plan.json");
}

#[test]
fn without_cores_a_run_gets_the_default_slots() {
    let s = resolve::run(flags(), &Config::default(), &Env::default()).unwrap();
    assert_eq!(s.jobs, defaults::JOBS);
}

#[test]
fn values_that_would_not_bound_are_refused_naming_the_key() {
    for (file, says) in [
        (
            "[run]\njobs = 0\n",
            "`[run] jobs = 0` in planwright.toml: it must be at least 1",
        ),
        ("[run]\nstrikes = 0\n", "`[run] strikes = 0`"),
        (
            "[agent]\nmax_unavailable = 0\n",
            "`[agent] max_unavailable = 0`",
        ),
        ("[agent]\nmax_pause = 0\n", "`[agent] max_pause = 0s`"),
        (
            "[agent]\nmax_pause = '169h'\n",
            "at least 1s and at most 168h",
        ),
    ] {
        let e = run(flags(), file).unwrap_err().to_string();
        assert!(e.contains(says), "{file}: {e}");
    }
    assert!(run(flags(), "[agent]\nmax_pause = '168h'\n").is_ok());
}

#[test]
fn file_gates_come_before_flag_gates() {
    let given = RunFlags {
        gates: vec!["sh -c 'test -n \"$HOME\"'".into()],
        ..flags()
    };
    let s = run(
        given,
        "[gates]\nrun = [['test', '-f', 'README.md'], []]\nenv = ['RUST_LOG']\n",
    )
    .unwrap();
    let argv: Vec<&[String]> = s.extra_gates.iter().map(|g| g.argv.as_slice()).collect();
    assert_eq!(argv.len(), 2, "an empty argv is no gate");
    assert_eq!(argv[0], ["test", "-f", "README.md"]);
    assert_eq!(argv[1], ["sh", "-c", "test -n \"$HOME\""]);
    assert_eq!(s.extra_gates[1].name, "sh -c 'test -n \"$HOME\"'");
    assert_eq!(s.gates.env, ["RUST_LOG"]);
    let bad = RunFlags {
        gates: vec!["echo 'open".into()],
        ..flags()
    };
    assert_eq!(
        run(bad, "").unwrap_err(),
        SettingsError::Unsplittable("echo 'open".into())
    );
}

#[test]
fn the_workspace_comes_from_the_file_under_either_name() {
    let s = run(flags(), "").unwrap();
    assert_eq!(s.workspace, crate::RunSettings::new("p").workspace);
    let file = "[worktree]\nsetup = [['npm', 'ci']]\nsetup_inputs = ['package-lock.json']\ncopy = ['.env']\npristine = true\n";
    let old = run(flags(), file).unwrap().workspace;
    let new = run(flags(), &file.replace("worktree", "workspace"))
        .unwrap()
        .workspace;
    assert_eq!(old, new);
    assert_eq!(new.setup, [["npm", "ci"]]);
    assert_eq!(new.setup_inputs, ["package-lock.json"]);
    assert_eq!(new.copy, [".env"]);
    assert!(new.pristine);
    assert_eq!(new.setup_timeout, Some(defaults::SETUP_TIMEOUT));
}

#[test]
fn the_sandbox_expands_home_and_caps_the_log() {
    let c = resolve::sandbox(&Config::default(), &env());
    assert_eq!(c, ContainSettings::default());
    let file = parse(
        "[sandbox]\nmode = 'off'\nwritable = ['~/.npm', '/opt/cache', '~user/x']\nreadable = ['~/.npmrc', '/srv/x']\ngate_network = true\ngate_overlay = false\n\
         [git]\nallow_config = ['filter.lfs.clean']\n[agent]\nlog_limit_mib = 8\n",
    );
    let c = resolve::sandbox(&file, &env());
    assert_eq!(c.mode, SandboxMode::Off);
    assert_eq!(
        c.writable,
        [
            PathBuf::from("/home/u/.npm"),
            PathBuf::from("/opt/cache"),
            PathBuf::from("~user/x")
        ]
    );
    assert_eq!(
        c.readable,
        [PathBuf::from("/home/u/.npmrc"), PathBuf::from("/srv/x")]
    );
    assert!(c.gate_network && !c.gate_overlay);
    assert_eq!(c.allow_config, ["filter.lfs.clean"]);
    assert_eq!(c.agent_log_limit, Some(8 * 1024 * 1024));
    let homeless = resolve::sandbox(&file, &Env::default());
    assert_eq!(homeless.writable[0], PathBuf::from("~/.npm"));
}

#[test]
fn the_agent_flags_win_over_agent_and_a_template_alone_means_cmd() {
    let none = resolve::agent(AgentFlags::default(), &Config::default());
    assert_eq!(none, Err(SettingsError::NoAgent));
    let file = parse(
        "[agent]\nname = 'codex'\ncmd = 'file {prompt_file}'\nmodel = 'm'\nargs = ['-x']\nprogram = '/opt/codex'\nisolate = false\nenv = ['MY_KEY', 'CORP_*']\n",
    );
    let from_file = resolve::agent(AgentFlags::default(), &file).unwrap();
    assert_eq!(from_file.name, "codex");
    assert_eq!(from_file.options.cmd.as_deref(), Some("file {prompt_file}"));
    assert_eq!(from_file.options.model.as_deref(), Some("m"));
    assert_eq!(from_file.options.args, ["-x"]);
    assert_eq!(from_file.options.program.as_deref(), Some("/opt/codex"));
    assert!(!from_file.options.isolate);
    assert_eq!(from_file.options.env, ["MY_KEY", "CORP_*"]);
    let flags = AgentFlags {
        name: Some("claude".into()),
        cmd: Some("flag {prompt_file}".into()),
    };
    let from_flags = resolve::agent(flags, &file).unwrap();
    assert_eq!(from_flags.name, "claude");
    assert_eq!(
        from_flags.options.cmd.as_deref(),
        Some("flag {prompt_file}")
    );
    let template = AgentFlags {
        cmd: Some("x".into()),
        ..AgentFlags::default()
    };
    let spec = resolve::agent(template, &Config::default()).unwrap();
    assert_eq!(spec, AgentSpec::cmd("x"));
    assert!(spec.options.isolate, "isolated by default");
    assert!(spec.options.env.is_empty(), "nothing named by default");
}

#[test]
fn the_reviewer_comes_from_review_only() {
    let s = resolve::review(&parse("[agent]\nname = 'claude'\n"));
    assert_eq!(s.reviewer, None);
    assert_eq!(s.timeout, Some(defaults::REVIEW_TIMEOUT));
    assert!(!s.counterfactuals_advisory);
    let s = resolve::review(&parse(
        "[review]\ncmd = 'review.sh'\nmodel = 'r'\nmax_diff_lines = 10\ntimeout_secs = 5\n[counterfactuals]\nmode = 'advisory'\n",
    ));
    let reviewer = s.reviewer.unwrap();
    assert_eq!(reviewer.name, "cmd");
    assert_eq!(reviewer.options.cmd.as_deref(), Some("review.sh"));
    assert_eq!(reviewer.options.model.as_deref(), Some("r"));
    assert_eq!(s.model.as_deref(), Some("r"));
    assert_eq!(s.max_diff_lines, Some(10));
    assert_eq!(s.timeout, Some(Duration::from_secs(5)));
    assert!(s.counterfactuals_advisory);
    let named = resolve::review(&parse("[review]\nagent = 'gemini'\n"));
    assert_eq!(named.reviewer.unwrap().name, "gemini");
}

#[test]
fn the_run_takes_routing_and_budget_from_the_file() {
    let s = run(
        flags(),
        "[routing.caps]\nclaude = 1\n[budget]\nmax_cost_usd = 2.5\n[budget.ticket]\nmax_tokens = 10\n",
    )
    .unwrap();
    assert_eq!(s.routing.caps["claude"], 1);
    assert_eq!(s.budget.max_cost_usd, Some(2.5));
    assert_eq!(s.budget.ticket.max_tokens, Some(10));
    assert_eq!(s.overlaps, None);
}

#[test]
fn validation_takes_flags_env_and_the_file() {
    let file = parse(
        "[commands]\nallow = [['npm', 'test']]\n[standard_v1]\nmax_files_changed = 12\ncalibration_hint = true\n",
    );
    let o = resolve::validation(ValidationFlags::default(), &file, &env());
    assert!(o.strict_gates);
    assert_eq!(o.allowed_commands, [["npm", "test"]]);
    assert_eq!(o.max_files_changed, None, "the file's cap is not a flag");
    assert!(!o.calibration_hint);
    assert_eq!(o.standard_v1.max_files_changed, Some(12));
    assert!(o.standard_v1.calibration_hint);
    let flags = ValidationFlags {
        format: Some(Format::StandardV1),
        no_strict_gates: false,
        issue: Some(7),
        coerce: true,
        max_files_changed: Some(3),
        calibration_hint: true,
        tag: Some("t".into()),
    };
    let o = resolve::validation(flags, &file, &env());
    assert_eq!(o.format, Some(Format::StandardV1));
    assert_eq!(
        (o.issue, o.coerce, o.max_files_changed),
        (Some(7), true, Some(3))
    );
    assert_eq!(o.tag.as_deref(), Some("t"));
    let lax = |no_strict_gates: bool, var: Option<&str>| {
        let flags = ValidationFlags {
            no_strict_gates,
            ..ValidationFlags::default()
        };
        let env = Env {
            agb_strict_gates: var.map(String::from),
            ..env()
        };
        !resolve::validation(flags, &Config::default(), &env).strict_gates
    };
    assert!(lax(true, None) && lax(false, Some("0")));
    assert!(!lax(false, Some("1")) && !lax(false, None));
    let routing = parse("[routing.hints]\nmine = ['claude']\n");
    let o = resolve::validation(ValidationFlags::default(), &routing, &env());
    assert!(o.routing.knows_hint("mine"));
    assert_eq!(Options::default().routing, Config::default().routing);
}

#[test]
fn agents_maps_families_and_the_agent_flag_takes_precedence() {
    let file = parse(
        "[agent]\nname = 'opencode'\nmodel = 'm'\nargs = ['-x']\nisolate = false\nenv = ['K']\n\
         [agents]\nclaude = 'claude'\ngemini = { adapter = 'acp', cmd = 'gemini --acp' }\n",
    );
    let spec = resolve::agents(AgentFlags::default(), &file).unwrap();
    assert_eq!(spec.run.as_ref().map(|s| s.name.as_str()), Some("opencode"));
    let entries: Vec<(&str, &str, Option<&str>)> = (spec.by_family.iter())
        .map(|(f, s)| (f.as_str(), s.name.as_str(), s.options.cmd.as_deref()))
        .collect();
    assert_eq!(
        entries,
        [
            ("claude", "claude", None),
            ("gemini", "acp", Some("gemini --acp"))
        ]
    );
    let claude = &spec.by_family[0].1.options;
    assert_eq!(
        (claude.model.as_deref(), claude.args.len()),
        (None, 0),
        "one CLI's own"
    );
    assert_eq!(
        (claude.isolate, claude.env.as_slice()),
        (false, &["K".to_string()][..])
    );
    let flagged = AgentFlags {
        name: Some("codex".into()),
        cmd: None,
    };
    let one = resolve::agents(flagged, &file).unwrap();
    assert_eq!(one.run.map(|s| s.name), Some("codex".to_string()));
    assert!(
        one.by_family.is_empty(),
        "--agent takes precedence over [agents]"
    );
    let only = resolve::agents(AgentFlags::default(), &parse("[agents]\ngpt = 'codex'\n")).unwrap();
    assert_eq!((only.run, only.by_family.len()), (None, 1));
    assert_eq!(
        resolve::agents(AgentFlags::default(), &Config::default()),
        Err(SettingsError::NoAgent)
    );
}

#[test]
fn the_family_table_is_the_defaults_with_the_files_rows_in_place() {
    let s = run(flags(), "[families.gpt]\nmid = 'gpt-5.3-codex'\n").unwrap();
    assert_eq!(s.families.model("gpt", "mid"), Some("gpt-5.3-codex"));
    assert_eq!(
        s.families.model("gpt", "cheap"),
        None,
        "the row is replaced"
    );
    assert_eq!(
        s.families.model("claude", "cheap"),
        Some("claude-haiku-4-5")
    );
}

#[test]
fn ssh_executors_get_a_slot_per_host_and_never_unchecked_host_keys() {
    let hosts = "[executor]\nkind = 'ssh'\nhosts = ['a', 'b']\nslots_per_host = 3\n";
    let s = run(flags(), hosts).unwrap();
    assert_eq!(s.jobs, 6, "hosts x slots_per_host, not the cores");
    let ran = run(
        RunFlags {
            jobs: Some(2),
            ..flags()
        },
        hosts,
    )
    .unwrap();
    assert_eq!(ran.jobs, 2, "--jobs wins");
    match s.executor {
        crate::ExecutorSettings::Ssh { ssh, command, .. } => {
            assert_eq!(
                (ssh, command),
                (
                    vec!["ssh".to_string()],
                    vec!["planwright".to_string(), "worker".to_string()]
                )
            );
        }
        other => panic!("{other:?}"),
    }
    for (text, said) in [
        ("[executor]\nkind = 'ssh'\n", "needs `hosts"),
        ("[executor]\nkind = 'ssh'\nhosts = ['a']\nslots_per_host = 0\n", "at least 1"),
        ("[executor]\nhosts = ['a']\n", "are for `kind = \"ssh\"`"),
        ("[executor]\nkind = 'process'\ncommand = []\n", "`command` is empty"),
        ("[executor]\nkind = 'ssh'\nhosts = ['a']\nssh_command = ['ssh', '-o', 'StrictHostKeyChecking=no']\n", "turns host-key checks off (`StrictHostKeyChecking=no`)"),
        ("[executor]\nkind = 'ssh'\nhosts = ['a']\nssh_command = ['ssh', '-oUserKnownHostsFile /dev/null']\n", "turns host-key checks off"),
    ] {
        let e = run(flags(), text).unwrap_err().to_string();
        assert!(e.contains(said), "{text}: {e}");
    }
    let fine = "[executor]\nkind = 'ssh'\nhosts = ['a']\nssh_command = ['ssh', '-o', 'StrictHostKeyChecking=yes']\n";
    assert!(run(flags(), fine).is_ok());
}

#[test]
fn workers_keep_in_touch_as_executor_says() {
    let s = run(flags(), "[executor]\nkind = 'process'\n").unwrap();
    assert_eq!(s.worker_link, crate::WorkerLink::default());
    assert_eq!(s.worker_link.lost_after, Duration::from_secs(30));
    let set = "[executor]\nkind = 'ssh'\nhosts = ['a']\nheartbeat = '2s'\nlost_after = '1m'\nallow_version_skew = true\nssh_keepalive = 5\nlost_backoff = '1s'\nmax_lost = 9\n";
    let s = run(flags(), set).unwrap();
    assert_eq!(
        s.worker_link,
        crate::WorkerLink {
            heartbeat: Duration::from_secs(2),
            lost_after: Duration::from_secs(60),
            allow_version_skew: true,
            lost_backoff: Duration::from_secs(1),
            max_lost: Some(9),
        }
    );
    match s.executor {
        crate::ExecutorSettings::Ssh { keepalive, .. } => {
            assert_eq!(keepalive, Duration::from_secs(5))
        }
        other => panic!("{other:?}"),
    }
    for (text, said) in [
        ("[executor]\nheartbeat = 0\n", "`heartbeat` is 0"),
        (
            "[executor]\nmax_lost = 0\n",
            "`max_lost` is 0; give at least 1",
        ),
        (
            "[executor]\nheartbeat = '10s'\nlost_after = '15s'\n",
            "shorter than two heartbeats",
        ),
        (
            "[executor]\nkind = 'process'\nssh_keepalive = 5\n",
            "are for `kind = \"ssh\"`",
        ),
        (
            "[executor]\nkind = 'ssh'\nhosts = ['a']\nssh_keepalive = 0\n",
            "`ssh_keepalive` is 0",
        ),
    ] {
        let e = run(flags(), text).unwrap_err().to_string();
        assert!(e.contains(said), "{text}: {e}");
    }
}

#[test]
fn the_base_flag_wins_over_run_base_and_neither_means_the_engine_picks() {
    let file = "[run]\nbase = \"develop\"\n";
    assert_eq!(run(flags(), "").unwrap().base, None);
    let from_file = run(flags(), file).unwrap().base.unwrap();
    assert_eq!(
        (from_file.name.as_str(), from_file.source),
        ("develop", crate::BaseSource::File)
    );
    let given = RunFlags {
        base: Some("master".into()),
        ..flags()
    };
    let from_flag = run(given, file).unwrap().base.unwrap();
    assert_eq!(
        (from_flag.name.as_str(), from_flag.source),
        ("master", crate::BaseSource::Flag)
    );
    let bad = run(flags(), "[run]\nbase = \"a..b\"\n").unwrap_err();
    assert!(
        bad.to_string()
            .starts_with("`[run] base` in planwright.toml `a..b` is not a valid branch name"),
        "{bad}"
    );
}

#[test]
fn a_configured_gate_may_be_a_command_line_as_gate_takes_it() {
    let s = run(
        flags(),
        "[gates]\nrun = [\"cargo test --all\", [\"make\", \"check\"]]\n",
    )
    .unwrap();
    let argvs: Vec<Vec<String>> = s.extra_gates.iter().map(|g| g.argv.clone()).collect();
    assert_eq!(
        argvs,
        [vec!["cargo", "test", "--all"], vec!["make", "check"]]
    );
    let bad = run(flags(), "[gates]\nrun = [\"sh -c 'oops\"]\n").unwrap_err();
    assert_eq!(bad, SettingsError::Unsplittable("sh -c 'oops".into()));
}

#[test]
fn gate_checkouts_live_in_the_users_cache_folder_outside_the_repository() {
    let at = |home: Option<&str>, cache: Option<&str>| {
        let env = Env {
            home: home.map(PathBuf::from),
            cache_home: cache.map(PathBuf::from),
            ..env()
        };
        resolve::sandbox(&Config::default(), &env).checkouts
    };
    let checkouts = |dir: &str| Some(PathBuf::from(dir).join("planwright/checkouts"));
    assert_eq!(at(Some("/home/u"), None), checkouts("/home/u/.cache"));
    assert_eq!(at(Some("/home/u"), Some("/c")), checkouts("/c"));
    // A relative XDG_CACHE_HOME is ignored, as the specification says.
    assert_eq!(at(Some("/home/u"), Some("c")), checkouts("/home/u/.cache"));
    assert_eq!(at(None, None), None);
    assert_eq!(at(Some("u"), None), None);
}
