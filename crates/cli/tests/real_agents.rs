//! The real-agent tier: `planwright run` with each adapter's real CLI, set
//! up as docs/agents.md tells users (environment variables and the CLI's
//! own files in a test `$HOME`), against testkit's mock model server on
//! loopback, which they reach through planwright's proxy (the default
//! `[sandbox] agent_network`) by a name `[sandbox] hosts` maps to it.
//!
//! Runs when `PLANWRIGHT_REAL_AGENTS=1` (set by `.ci/run`, after
//! `.ci/install-agents` put the pinned CLIs in its cache); with it set, a
//! CLI that is missing, or a mock its CLI never called, fails the test.
//! The CLIs are found in the folders of `PLANWRIGHT_AGENT_BIN_DIRS` (`:`
//! between them), else in those listed in the cache's `agents/bin-dirs`.

use planwright_testkit::mock_model::{MockModel, Script, Trouble, USAGE};
use planwright_testkit::{text, Env};
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Output;

const BIN: &str = env!("CARGO_BIN_EXE_planwright");

/// What the ticket's file holds once its agent wrote it.
const CONTENT: &str = "made by a real agent";

/// Whether the tier was asked for; says why not otherwise.
fn wanted(test: &str) -> bool {
    let on = std::env::var("PLANWRIGHT_REAL_AGENTS").is_ok_and(|v| v == "1");
    if !on {
        eprintln!("{test}: not run; set PLANWRIGHT_REAL_AGENTS=1 (after .ci/install-agents)");
    }
    on
}

/// The folders the pinned CLIs were installed in.
fn bin_dirs() -> Vec<PathBuf> {
    if let Some(dirs) = std::env::var_os("PLANWRIGHT_AGENT_BIN_DIRS") {
        return std::env::split_paths(&dirs).collect();
    }
    let cache = std::env::var_os("PLANWRIGHT_CACHE").map_or_else(
        || PathBuf::from(std::env::var_os("HOME").unwrap_or_default()).join(".cache/planwright-ci"),
        PathBuf::from,
    );
    let listed = std::fs::read_to_string(cache.join("agents/bin-dirs")).unwrap_or_default();
    listed.lines().map(PathBuf::from).collect()
}

/// The folder holding `cli`, or a failure naming how to install it.
fn cli_dir(cli: &str) -> PathBuf {
    let dirs = bin_dirs();
    dirs.iter()
        .find(|d| d.join(cli).is_file())
        .cloned()
        .unwrap_or_else(|| {
            panic!(
                "PLANWRIGHT_REAL_AGENTS=1 but `{cli}` is in none of {dirs:?}: run .ci/install-agents \
                 (or set PLANWRIGHT_AGENT_BIN_DIRS)"
            )
        })
}

/// Where the tier puts the CLIs' installs in the test home.
const INSTALLS: &str = ".local/share/agents";

/// The folder holding `cli` as the tier runs it: its install (the folder
/// above `node_modules`) linked file by file into `home` (`cp -al`; a copy
/// where links cannot be made), so that the agent's view, which hides the
/// home, has to bind that install back. aider's virtualenv names its own
/// path in its scripts' `#!` lines, so it runs where it was installed.
fn installed(cli: &str, home: &Path) -> PathBuf {
    let dir = cli_dir(cli);
    let root = dir
        .ancestors()
        .find(|a| a.file_name().is_some_and(|n| n == "node_modules"))
        .and_then(Path::parent);
    let Some(root) = root else {
        return dir;
    };
    let to = home.join(INSTALLS).join(root.file_name().unwrap());
    if !to.exists() {
        std::fs::create_dir_all(to.parent().unwrap()).unwrap();
        let cp = |flags: &str| {
            let done = std::process::Command::new("cp")
                .arg(flags)
                .arg(root)
                .arg(&to)
                .status();
            done.is_ok_and(|s| s.success())
        };
        if !cp("-al") {
            let _ = std::fs::remove_dir_all(&to);
            assert!(
                cp("-a"),
                "cannot copy {} into the test home",
                root.display()
            );
        }
    }
    to.join(dir.strip_prefix(root).unwrap())
}

/// The name under which the agents reach the mock: planwright's proxy (the
/// default `agent_network`) maps it to the mock's loopback port through
/// `[sandbox] hosts`, as a user maps a local gateway.
const MOCK_HOST: &str = "mock-model.test";

/// Where each CLI is pointed: the mock, by its mapped name.
fn url(mock: &MockModel) -> String {
    mock.url_at(MOCK_HOST)
}

/// A loopback port that closes every connection as it comes: where the
/// tier maps every host an adapter's proxy allows by default (the
/// providers' APIs, their sign-in), so that no CLI leaves loopback, on a
/// machine with a network too. Kept bound while the test runs, so no other
/// server can take its port.
fn closed_port() -> std::net::SocketAddr {
    static CLOSED: std::sync::OnceLock<std::net::SocketAddr> = std::sync::OnceLock::new();
    *CLOSED.get_or_init(|| {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        std::thread::spawn(move || {
            for conn in listener.incoming() {
                drop(conn);
            }
        });
        addr
    })
}

/// Every host an adapter's proxy lets its CLI reach by default
/// (`planwright_engine::agent::ADAPTERS`), without its port.
fn default_hosts() -> Vec<&'static str> {
    let mut hosts: Vec<&str> = planwright_engine::agent::ADAPTERS
        .iter()
        .flat_map(|a| a.hosts.iter())
        .map(|h| h.rsplit_once(':').map_or(*h, |(name, _)| name))
        .collect();
    hosts.sort_unstable();
    hosts.dedup();
    hosts
}

/// `[sandbox] hosts`: [`MOCK_HOST`] to the mock, every default host to
/// [`closed_port`].
fn hosts_table(mock: &MockModel) -> String {
    let closed = closed_port();
    let mut entries = vec![format!("\"{MOCK_HOST}\" = \"{}\"", mock.addr())];
    entries.extend(
        default_hosts()
            .iter()
            .map(|h| format!("\"{h}\" = \"{closed}\"")),
    );
    format!("{{ {} }}", entries.join(", "))
}

/// No CLI could reach anything but loopback: every host its proxy
/// allowed (the `allow:` of each `network:` line of the agent logs) is
/// mapped, to the mock or to [`closed_port`], and every mapping is one of
/// those two.
fn assert_offline(env: &Env, mock: &MockModel) {
    let logs = logs(env);
    let lines: Vec<&str> = logs
        .lines()
        .filter(|l| l.starts_with("network: "))
        .collect();
    assert!(!lines.is_empty(), "no `network:` line in\n{logs}");
    let (mock_at, closed) = (mock.addr().to_string(), closed_port().to_string());
    for line in lines {
        let (allow, hosts) = line
            .split_once("; allow: ")
            .and_then(|(_, rest)| rest.split_once("; hosts: "))
            .unwrap_or_else(|| panic!("{line}"));
        let mapped: Vec<(&str, &str)> = hosts
            .split(", ")
            .map(|m| m.split_once(" = ").unwrap_or_else(|| panic!("{line}")))
            .collect();
        for (name, to) in &mapped {
            assert!(*to == mock_at || *to == closed, "{name} = {to}: {line}");
        }
        for entry in allow.split(", ").filter(|a| *a != "none") {
            let name = entry.rsplit_once(':').map_or(entry, |(n, _)| n);
            assert!(
                mapped.iter().any(|(n, _)| *n == name),
                "`{entry}` may leave loopback (add it to the tier's hosts): {line}"
            );
        }
    }
}

/// One CLI's set-up, as docs/agents.md describes it for a user with a
/// gateway.
struct Setup {
    /// The adapter.
    agent: &'static str,
    /// The CLI's program.
    cli: &'static str,
    /// The model `[agent] model` names (empty: none, the CLI's own).
    model: &'static str,
    /// Variables for planwright's environment.
    env: Vec<(&'static str, String)>,
    /// Files in the test `$HOME`.
    files: Vec<(String, String)>,
    /// More of `[agent]`.
    agent_toml: &'static str,
}

fn claude(mock: &MockModel) -> Setup {
    Setup {
        agent: "claude",
        cli: "claude",
        model: "claude-sonnet-4-6",
        env: vec![
            ("ANTHROPIC_BASE_URL", url(mock)),
            ("ANTHROPIC_API_KEY", "test-key".into()),
            ("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1".into()),
        ],
        files: vec![],
        agent_toml: "",
    }
}

fn gemini(mock: &MockModel) -> Setup {
    Setup {
        agent: "gemini",
        cli: "gemini",
        model: "gemini-2.5-flash",
        env: vec![
            ("GOOGLE_GEMINI_BASE_URL", url(mock)),
            ("GEMINI_API_KEY", "test-key".into()),
        ],
        files: vec![(
            ".gemini/settings.json".into(),
            json!({"security": {"auth": {"selectedType": "gemini-api-key"}}}).to_string(),
        )],
        agent_toml: "",
    }
}

/// Gemini CLI in its ACP mode, through the `acp` adapter, set up as for
/// its own adapter, on a model its session offers (set by
/// `session/set_model`).
fn gemini_acp(mock: &MockModel) -> Setup {
    Setup {
        agent: "acp",
        model: "gemini-2.5-pro",
        agent_toml: "cmd = \"gemini --acp\"\n",
        ..gemini(mock)
    }
}

fn codex(mock: &MockModel) -> Setup {
    let config = format!(
        "model = \"gpt-5.4\"\nmodel_provider = \"mock\"\n\n[model_providers.mock]\nname = \"mock\"\nbase_url = \"{}/v1\"\nenv_key = \"OPENAI_API_KEY\"\nwire_api = \"responses\"\n",
        url(mock)
    );
    Setup {
        agent: "codex",
        cli: "codex",
        model: "gpt-5.4",
        env: vec![("OPENAI_API_KEY", "test-key".into())],
        files: vec![(".codex/config.toml".into(), config)],
        agent_toml: "",
    }
}

/// A plugin opencode installs into its cache's `packages` (as it does a
/// provider's package it does not bundle), there as the user's opencode
/// left it: it says on stderr that it was loaded.
const PROBE_PLUGIN: &str = "opencode-planwright-probe";

/// What [`PROBE_PLUGIN`] prints as opencode loads it.
const PROBE_LOADED: &str = "opencode-planwright-probe: loaded";

fn opencode(mock: &MockModel) -> Setup {
    let plugin = format!(".cache/opencode/packages/{PROBE_PLUGIN}/node_modules/{PROBE_PLUGIN}");
    let config = json!({"plugin": [PROBE_PLUGIN], "provider": {"mock": {
        "npm": "@ai-sdk/openai-compatible",
        "name": "mock",
        "options": {"baseURL": format!("{}/v1", url(mock)), "apiKey": "test-key"},
        "models": {"gpt-5.4": {"name": "gpt-5.4",
            "cost": {"input": 2.5, "output": 15.0, "cache_read": 0.25, "cache_write": 2.5}}}}}});
    Setup {
        agent: "opencode",
        cli: "opencode",
        model: "mock/gpt-5.4",
        env: vec![
            ("OPENCODE_DISABLE_MODELS_FETCH", "1".into()),
            ("OPENCODE_DISABLE_AUTOUPDATE", "1".into()),
        ],
        // What opencode downloaded into its cache as the user ran it, which
        // planwright lends every slot read-only.
        files: vec![
            (".config/opencode/opencode.json".into(), config.to_string()),
            (
                ".cache/opencode/bin/rg".into(),
                "#!/bin/sh\nexit 2\n".into(),
            ),
            (
                format!("{plugin}/package.json"),
                json!({"name": PROBE_PLUGIN, "version": "1.0.0", "main": "index.js"}).to_string(),
            ),
            (
                format!("{plugin}/index.js"),
                format!("console.error({PROBE_LOADED:?});\nmodule.exports = {{}};\n"),
            ),
        ],
        agent_toml: "",
    }
}

fn aider(mock: &MockModel) -> Setup {
    Setup {
        agent: "aider",
        cli: "aider",
        model: "openai/gpt-5.4",
        env: vec![
            ("OPENAI_API_BASE", format!("{}/v1", url(mock))),
            ("OPENAI_API_KEY", "test-key".into()),
            // litellm's price list from its package, not from the network.
            ("LITELLM_LOCAL_MODEL_COST_MAP", "True".into()),
        ],
        files: vec![],
        agent_toml: "env = [\"LITELLM_LOCAL_MODEL_COST_MAP\"]\n",
    }
}

/// The Copilot CLI with its own model provider (BYOK), an
/// OpenAI-compatible gateway, in its offline mode (no GitHub sign-in).
fn copilot(mock: &MockModel) -> Setup {
    Setup {
        agent: "copilot",
        cli: "copilot",
        model: "gpt-5.4",
        env: vec![
            ("COPILOT_PROVIDER_BASE_URL", format!("{}/v1", url(mock))),
            ("COPILOT_PROVIDER_API_KEY", "test-key".into()),
            ("COPILOT_OFFLINE", "true".into()),
        ],
        files: vec![],
        agent_toml: "",
    }
}

/// aider against the Anthropic API: litellm reports the cache split
/// there, which aider prints (in full below 1000 tokens).
fn aider_anthropic(mock: &MockModel) -> Setup {
    Setup {
        agent: "aider",
        cli: "aider",
        model: "anthropic/claude-sonnet-4-6",
        env: vec![
            ("ANTHROPIC_BASE_URL", url(mock)),
            ("ANTHROPIC_API_KEY", "test-key".into()),
            ("LITELLM_LOCAL_MODEL_COST_MAP", "True".into()),
        ],
        files: vec![],
        agent_toml: "env = [\"LITELLM_LOCAL_MODEL_COST_MAP\"]\n",
    }
}

/// A repository with one ticket, `A`, that creates `a.txt`, checked by a
/// gate; the CLI's files and its install in a home outside `/tmp` (as a
/// user's is, and hidden from the agent as a user's is); `[agent]` as
/// given (no `model` when the set-up names none); `[sandbox] hosts`
/// mapping [`MOCK_HOST`] to the mock and the rest to [`closed_port`].
fn tier_env(setup: &Setup, mock: &MockModel, agent_toml: &str) -> Env {
    let env = Env::new_in(Path::new("/var/tmp"), &[("README.md", "hi\n")]).with_cli(BIN);
    let plan = json!({"planwright": 1, "source_format": "native", "base": "main",
        "gates": [{"name": "made", "argv": ["grep", "-qx", CONTENT, "a.txt"]}],
        "tickets": [{"id": "A", "title": "A",
            "body": format!("Create the file a.txt holding the line `{CONTENT}`."),
            "scope": [{"pattern": "a.txt", "op": "create"}]}]});
    std::fs::write(env.root().join("plan.json"), plan.to_string()).unwrap();
    for (rel, body) in &setup.files {
        planwright_testkit::write(env.cli().home(), rel, body);
    }
    let model = match setup.model {
        "" => String::new(),
        model => format!("model = \"{model}\"\n"),
    };
    let config = format!(
        "[agent]\n{model}program = \"{}\"\n{}{agent_toml}\n[sandbox]\nhosts = {}\n",
        installed(setup.cli, env.cli().home())
            .join(setup.cli)
            .display(),
        setup.agent_toml,
        hosts_table(mock)
    );
    std::fs::write(env.root().join("planwright.toml"), config).unwrap();
    env
}

/// Every file under `dir` with its content, but `repo/` (the run's own),
/// planwright's cache in the home and the CLIs' installs (which no
/// child's view lets it write).
fn tree(dir: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    let mut files = BTreeMap::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        for entry in std::fs::read_dir(&d).unwrap() {
            let path = entry.unwrap().path();
            // planwright's own: the run's repository, the CLIs' installs,
            // and its cache in the home (the workers' checkouts).
            let own = [
                dir.join("repo"),
                dir.join("home").join(INSTALLS),
                dir.join("home/.cache/planwright"),
            ];
            if own.contains(&path) {
                continue;
            }
            let meta = std::fs::symlink_metadata(&path).unwrap();
            if meta.is_dir() {
                todo.push(path);
            } else {
                let body = std::fs::read(&path).unwrap_or_default();
                files.insert(path.strip_prefix(dir).unwrap().to_path_buf(), body);
            }
        }
    }
    files
}

/// `planwright preflight` with the set-up's CLI, checking that nothing
/// outside the repository changed.
fn preflight(env: &Env, setup: &Setup) -> Output {
    // The tier's gate checks what the agent wrote, which the base lacks.
    let args = [
        "preflight",
        "plan.json",
        "--repo",
        "repo",
        "--no-gate-probe",
    ];
    unchanged_around(env, setup, &[&args[..], &["--agent", setup.agent]].concat())
}

/// `planwright run` with the set-up's CLI; the summary, after checking
/// that nothing outside the repository changed.
fn run(env: &Env, setup: &Setup) -> (Output, Value) {
    let args = ["run", "plan.json", "--repo", "repo", "--agent", setup.agent];
    let out = unchanged_around(
        env,
        setup,
        // The tier's gate checks what the agent wrote, which the base lacks.
        &[
            &args[..],
            &["--jobs", "1", "--output", "json", "--no-gate-probe"],
        ]
        .concat(),
    );
    let summary = serde_json::from_slice(&out.stdout).unwrap_or_else(|_| {
        panic!("{}\n{}", text(&out.stdout), text(&out.stderr));
    });
    (out, summary)
}

/// planwright with `args`, the set-up's environment and its CLI first on
/// `PATH`; its output, after checking that nothing outside the
/// repository changed.
fn unchanged_around(env: &Env, setup: &Setup, args: &[&str]) -> Output {
    let before = tree(env.root());
    let bin = installed(setup.cli, env.cli().home());
    let path = std::env::join_paths(std::iter::once(bin).chain(std::env::split_paths(
        &std::env::var_os("PATH").unwrap_or_default(),
    )))
    .unwrap();
    let mut cmd = env.command();
    cmd.args(args).env("PATH", path);
    for (k, v) in &setup.env {
        cmd.env(k, v);
    }
    let out = cmd.output().unwrap();
    let after = tree(env.root());
    let changed: Vec<&PathBuf> = after
        .iter()
        .filter(|(p, body)| before.get(*p) != Some(*body))
        .map(|(p, _)| p)
        .chain(before.keys().filter(|p| !after.contains_key(*p)))
        .collect();
    assert!(
        changed.is_empty(),
        "{} wrote outside its slot: {changed:?}",
        setup.agent
    );
    out
}

fn report(env: &Env) -> Value {
    let out = env.planwright(&["report", "--repo", "repo", "--output", "json"]);
    serde_json::from_slice(&out.stdout).unwrap_or_else(|_| panic!("{}", text(&out.stdout)))
}

fn events(env: &Env, name: &str) -> Vec<Value> {
    env.run_file("events.jsonl")
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|e| e["event"] == name)
        .collect()
}

/// The agent logs of the ticket's attempts, for failure messages.
fn logs(env: &Env) -> String {
    let mut all = String::new();
    let runs = env.repo().join(".planwright/runs");
    for run in std::fs::read_dir(runs).into_iter().flatten().flatten() {
        let dir = run.path().join("A");
        for f in std::fs::read_dir(dir).into_iter().flatten().flatten() {
            if f.file_name().to_string_lossy().ends_with(".agent.log") {
                all.push_str(&std::fs::read_to_string(f.path()).unwrap_or_default());
            }
        }
    }
    all
}

/// What the mock received, for failure messages: each request's path,
/// status and the start of its body.
fn seen(mock: &MockModel) -> String {
    let line = |r: &planwright_testkit::mock_model::Request| {
        let tools = r.body["tools"].as_array().cloned().unwrap_or_default();
        let names: Vec<String> = tools
            .iter()
            .map(|t| {
                let f = &t["function"];
                let name = f["name"].as_str().or(t["name"].as_str());
                let params = if f.is_object() {
                    &f["parameters"]
                } else {
                    &t["parameters"]
                };
                format!("{} {}", name.unwrap_or("?"), params["properties"])
            })
            .collect();
        format!("{} {} -> {}: tools {names:?}", r.method, r.path, r.status)
    };
    mock.requests()
        .iter()
        .map(line)
        .collect::<Vec<_>>()
        .join("\n")
}

/// The usage of `calls` answered calls, as planwright normalizes it; the
/// providers but Anthropic report no cache writes.
fn usage_of(calls: usize, cache_write: bool) -> Value {
    let n = calls as u64;
    json!({"input_tokens": USAGE.input * n, "output_tokens": USAGE.output * n,
        "cache_read_tokens": USAGE.cache_read * n,
        "cache_write_tokens": if cache_write { USAGE.cache_write * n } else { 0 }})
}

/// The price table's figure for `usage` of `model` (USD per million).
fn priced(usage: &Value, rates: [f64; 4]) -> f64 {
    let kinds = [
        "input_tokens",
        "output_tokens",
        "cache_read_tokens",
        "cache_write_tokens",
    ];
    kinds
        .iter()
        .zip(rates)
        .map(|(k, r)| usage[k].as_u64().unwrap() as f64 * r)
        .sum::<f64>()
        / 1e6
}

/// What the tests expect of a CLI's figures.
struct Expect {
    /// Its model, as the report names it.
    model: &'static str,
    cache_write: bool,
    /// The shipped prices of its model: input, output, cache read, cache write.
    rates: [f64; 4],
    cost_source: &'static str,
    /// Whether its figures leave out the calls that offer no tool (opencode
    /// counts only its session's steps, not its title request).
    tool_calls_only: bool,
    /// Whether it reports cached input as plain input (aider records no
    /// cache split for OpenAI-style APIs: docs/agents.md names the loss).
    cache_lumped: bool,
}

/// The ticket merged with the file's content, and its last attempt's
/// figures are exactly what the mock sent.
fn assert_merged(env: &Env, mock: &MockModel, summary: &Value, expect: &Expect) {
    let logs = logs(env);
    assert_eq!(summary["merged"], json!(["A"]), "{summary}\n{logs}");
    let file = std::fs::read_to_string(env.repo().join("a.txt")).unwrap_or_default();
    assert_eq!(file, format!("{CONTENT}\n"));
    let answered: Vec<_> = mock
        .answered()
        .into_iter()
        .filter(|r| !expect.tool_calls_only || r.offers_tools())
        .collect();
    assert!(
        !answered.is_empty(),
        "the CLI never called the mock\n{logs}"
    );
    let report = report(env);
    let attempts = report["tickets"][0]["attempts"].as_array().unwrap();
    let last = attempts.last().unwrap();
    assert_eq!(last["agent_outcome"], "finished", "{last}");
    assert_eq!(last["model"], expect.model, "{last}");
    // Only the last attempt's calls were answered.
    let mut usage = usage_of(answered.len(), expect.cache_write);
    if expect.cache_lumped {
        let all =
            usage["input_tokens"].as_u64().unwrap() + usage["cache_read_tokens"].as_u64().unwrap();
        usage["input_tokens"] = json!(all);
        usage["cache_read_tokens"] = json!(0);
    }
    assert_eq!(last["usage"], usage, "{} calls\n{logs}", answered.len());
    assert_eq!(last["cost_source"], expect.cost_source, "{last}");
    let cost = last["cost_usd"].as_f64().unwrap();
    let want = priced(&usage, expect.rates);
    assert!((cost - want).abs() < 1e-9, "cost {cost}, priced {want}");
}

const CLAUDE: Expect = Expect {
    model: "claude-sonnet-4-6",
    cache_write: true,
    rates: [3.0, 15.0, 0.3, 3.75],
    cost_source: "reported",
    tool_calls_only: false,
    cache_lumped: false,
};

const GEMINI: Expect = Expect {
    model: "gemini-2.5-flash",
    cache_write: false,
    rates: [0.30, 2.50, 0.03, 0.30],
    cost_source: "computed",
    tool_calls_only: false,
    cache_lumped: false,
};

const CODEX: Expect = Expect {
    model: "gpt-5.4",
    cache_write: false,
    rates: [2.5, 15.0, 0.25, 2.5],
    cost_source: "computed",
    tool_calls_only: false,
    cache_lumped: false,
};

/// Through the proxy, every call the mock saw came by its mapped name
/// (which only the proxy resolves), the log names the mapping, no call to
/// the mock was refused, and nothing could leave loopback
/// ([`assert_offline`]).
fn assert_proxied(env: &Env, mock: &MockModel) {
    assert_offline(env, mock);
    let logs = logs(env);
    let mapped = format!(" {MOCK_HOST} = {}", mock.addr());
    assert!(logs.contains(&mapped), "no `{mapped}` in\n{logs}");
    let refused = |l: &&str| {
        l.starts_with("proxy: refused")
            && (l.contains(MOCK_HOST) || l.contains(&mock.addr().to_string()))
    };
    let refusals: Vec<&str> = logs.lines().filter(refused).collect();
    assert!(refusals.is_empty(), "{refusals:?}");
    let host = format!("{MOCK_HOST}:{}", mock.addr().port());
    for r in mock.requests() {
        let to = r
            .headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case("host"));
        assert_eq!(
            to.map(|(_, v)| v.as_str()),
            Some(host.as_str()),
            "{} {}",
            r.method,
            r.path
        );
    }
}

/// The run of one ticket through the CLI of `setup`, which must merge
/// with exact figures; its environment, for more checks (`None` when the
/// tier is off).
fn ok(test: &str, setup: fn(&MockModel) -> Setup, expect: &Expect) -> Option<Env> {
    if !wanted(test) {
        return None;
    }
    let mock = MockModel::start(script(None));
    let setup = setup(&mock);
    let env = tier_env(&setup, &mock, "timeout_secs = 120\n");
    let (out, summary) = run(&env, &setup);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{summary}\n{}\n{}",
        logs(&env),
        seen(&mock)
    );
    assert_merged(&env, &mock, &summary, expect);
    assert_proxied(&env, &mock);
    Some(env)
}

/// `trouble` for the first `times` model calls; then the ticket must merge
/// (after the attempt outcomes `outcomes`) with the figures of the calls
/// answered.
fn troubled(
    test: &str,
    setup: fn(&MockModel) -> Setup,
    expect: &Expect,
    trouble: (Trouble, usize),
    outcomes: &[&str],
) -> (Env, MockModel) {
    let mock = MockModel::start(script(Some(trouble)));
    let setup = setup(&mock);
    // The agent's time limit ends only the attempts meant to time out (a
    // hung stream); elsewhere the CLI's own giving up or its answer ends
    // the attempt, however slow the machine, so the limit is far beyond.
    let limit = if outcomes.contains(&"timed_out") {
        HUNG_TIMEOUT_SECS
    } else {
        TROUBLE_TIMEOUT_SECS
    };
    // A pause is at least the first backoff, and at most `max_pause`.
    let pause = format!(
        "timeout_secs = {limit}\nmax_pause = {}\n",
        MAX_PAUSE_MS / 1000
    );
    let env = tier_env(&setup, &mock, &pause);
    let (out, summary) = run(&env, &setup);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{test}: {summary}\n{}\n{}",
        logs(&env),
        seen(&mock)
    );
    assert_merged(&env, &mock, &summary, expect);
    assert_proxied(&env, &mock);
    let seen_outcomes = attempt_outcomes(&env);
    assert_eq!(seen_outcomes, outcomes, "{test}\n{}", logs(&env));
    let troubled =
        mock.requests().iter().filter(|r| r.is_model_call()).count() - mock.answered().len();
    assert!(
        troubled >= trouble.1,
        "{test}: the CLI never met the trouble\n{}",
        seen(&mock)
    );
    (env, mock)
}

/// The agent outcomes of the one ticket's attempts, in order, as the
/// run's report gives them.
fn attempt_outcomes(env: &Env) -> Vec<String> {
    let report = report(env);
    (report["tickets"][0]["attempts"].as_array().unwrap().iter())
        .map(|a| a["agent_outcome"].as_str().unwrap().to_string())
        .collect()
}

/// `[agent] max_pause` of the trouble tests, in milliseconds.
const MAX_PAUSE_MS: u64 = 2000;

/// The agent's time limit where a stream hangs: the event the test waits
/// for is that limit ending the attempt. It is the run's limit, so the
/// attempt after the hang must also start its CLI and get its answer
/// within it, on a loaded machine too (20 s was not enough at load 46).
const HUNG_TIMEOUT_SECS: u64 = 60;

/// The agent's time limit of the other trouble tests, which it never
/// ends: the CLI gives up (or gets its answer) on its own retries' count.
const TROUBLE_TIMEOUT_SECS: u64 = 900;

fn script(trouble: Option<(Trouble, usize)>) -> Script {
    Script {
        file: "a.txt".into(),
        content: CONTENT.into(),
        trouble,
    }
}

/// Its running totals count each call's output as the call's stream
/// ends: an `agent_usage` event holds the first call's whole usage before
/// the result line gives the total.
#[test]
fn claude_ok() {
    let Some(env) = ok("claude_ok", claude, &CLAUDE) else {
        return;
    };
    let running: Vec<Value> = events(&env, "agent_usage")
        .into_iter()
        .map(|e| e["usage"].clone())
        .collect();
    assert!(running.contains(&usage_of(1, true)), "{running:?}");
    assert_eq!(running.last(), Some(&usage_of(2, true)), "{running:?}");
}

#[test]
fn gemini_ok() {
    ok("gemini_ok", gemini, &GEMINI);
}

#[test]
fn codex_ok() {
    ok("codex_ok", codex, &CODEX);
}

/// aider's figures from its analytics log: exact, the cache read lumped
/// into the input (it records no split for OpenAI-style APIs), the cost
/// computed from that (litellm has no price for the model).
const AIDER: Expect = Expect {
    model: "openai/gpt-5.4",
    cache_lumped: true,
    ..CODEX
};

/// Against the Anthropic API aider prints the split, in full: exact.
const AIDER_ANTHROPIC: Expect = Expect {
    model: "anthropic/claude-sonnet-4-6",
    cost_source: "computed",
    ..CLAUDE
};

const OPENCODE: Expect = Expect {
    model: "mock/gpt-5.4",
    cost_source: "reported",
    tool_calls_only: true,
    ..CODEX
};

/// Its tokens are its usage file's (OpenAI's way: input with the cache
/// in it, taken out), its cost computed.
const COPILOT: Expect = Expect {
    model: "gpt-5.4",
    ..CODEX
};

#[test]
fn copilot_ok() {
    let Some(env) = ok("copilot_ok", copilot, &COPILOT) else {
        return;
    };
    let logs = logs(&env);
    assert!(
        logs.contains("copilot: tokens from its usage file (1 model)"),
        "{logs}"
    );
    // In its offline mode it asks for nothing but the model.
    let refused: Vec<&str> = logs
        .lines()
        .filter(|l| l.starts_with("proxy: refused"))
        .collect();
    assert!(refused.is_empty(), "{refused:?}");
}

/// opencode also loads a plugin from the cache's `packages` planwright
/// lends it, without fetching it (which the proxy would refuse).
#[test]
fn opencode_ok() {
    if let Some(env) = ok("opencode_ok", opencode, &OPENCODE) {
        assert!(logs(&env).contains(PROBE_LOADED), "{}", logs(&env));
    }
}

/// aider's figures are its analytics log's, which the agent log says.
fn aider_recorded(env: &Env) {
    let note = "aider: tokens and cost from its analytics log (1 call)\n";
    assert!(logs(env).contains(note), "{}", logs(env));
}

#[test]
fn aider_ok() {
    if let Some(env) = ok("aider_ok", aider, &AIDER) {
        aider_recorded(&env);
    }
}

#[test]
fn aider_anthropic_ok() {
    if let Some(env) = ok("aider_anthropic_ok", aider_anthropic, &AIDER_ANTHROPIC) {
        aider_recorded(&env);
    }
}

/// A user whose gateway URL and key are in `~/.claude/settings.json`
/// (its `env`) and nowhere in the environment.
fn claude_in_its_settings(mock: &MockModel) -> Setup {
    let settings = json!({"env": {"ANTHROPIC_BASE_URL": url(mock),
        "ANTHROPIC_API_KEY": "test-key", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1"}});
    Setup {
        env: vec![],
        files: vec![(".claude/settings.json".into(), settings.to_string())],
        ..claude(mock)
    }
}

/// The slot's seeded copy of `settings.json` carries the gateway.
#[test]
fn claude_gateway_in_its_settings_ok() {
    ok(
        "claude_gateway_in_its_settings_ok",
        claude_in_its_settings,
        &CLAUDE,
    );
}

/// The model only in `~/.codex/config.toml`, none in `[agent] model`.
fn codex_configured(mock: &MockModel) -> Setup {
    Setup {
        model: "",
        ..codex(mock)
    }
}

/// The attempt's model is the one the seeded `config.toml` names, and
/// its cost is computed for it.
#[test]
fn codex_model_from_its_config_ok() {
    ok("codex_model_from_its_config_ok", codex_configured, &CODEX);
}

/// preflight's probe starts each real CLI as an attempt would: confined,
/// in a fresh CLI home, with no model call and nothing written outside
/// the repository.
#[test]
fn preflight_starts_each_real_cli_confined() {
    if !wanted("preflight_starts_each_real_cli_confined") {
        return;
    }
    let setups: [fn(&MockModel) -> Setup; 6] = [claude, codex, gemini, opencode, aider, copilot];
    for setup in setups {
        let mock = MockModel::start(script(None));
        let setup = setup(&mock);
        let env = tier_env(&setup, &mock, "");
        let out = preflight(&env, &setup);
        let stdout = text(&out.stdout);
        assert_eq!(out.status.code(), Some(0), "{stdout}{}", text(&out.stderr));
        let program = installed(setup.cli, env.cli().home()).join(setup.cli);
        // `copilot --version` is answered before its program starts.
        let probe = match setup.cli {
            "copilot" => "--no-auto-update --help",
            _ => "--version",
        };
        let started = format!(
            "agent `{}` started as an attempt would (confined, in a fresh CLI home): `{} {probe}`",
            setup.agent,
            program.display()
        );
        assert!(stdout.contains(&started), "{started}\n{stdout}");
        assert!(mock.requests().is_empty(), "{}", seen(&mock));
    }
}

#[path = "real_agents/acp.rs"]
mod acp;
#[path = "real_agents/refusals.rs"]
mod refusals;
#[path = "real_agents/troubles.rs"]
mod troubles;
