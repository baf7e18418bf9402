//! Package managers under the default sandbox: a real project per package
//! manager with a registry dependency, whose `[workspace] setup` is the
//! command its users write (`npm ci`, `pnpm install --frozen-lockfile`,
//! `yarn install --frozen-lockfile`, `pip install -r requirements.txt`,
//! `uv pip install -r requirements.txt`, `cargo fetch`, `go mod
//! download`), merges its ticket. The packages, and the pinned pnpm, yarn,
//! uv and go, come from the test cache `.ci/fetch-test-packages` fills once
//! per machine (`${PLANWRIGHT_CACHE:-$HOME/.cache/planwright-ci}/packages`);
//! the tool reaches them through the project's own configuration (`.npmrc`
//! or `.yarnrc` naming a loopback registry, `--find-links` in the
//! requirements, a vendored `.cargo/config.toml` source, a `GOPROXY` of
//! files), so no test touches the network.
//!
//! These tests run when `PLANWRIGHT_PACKAGE_TESTS=1` (set by `.ci/run`),
//! and then fail when the package manager or its packages are missing.

use planwright_config::HostPort;
use planwright_engine::sandbox::{Containment, Mode};
use planwright_engine::{prepare, RunSettings};
use planwright_testkit::*;
use serde_json::json;
use std::io::{BufRead, BufReader, Write};
use std::net::TcpListener;
use std::path::{Path, PathBuf};

/// The test cache's directory for `tool`, when this test is to run: with
/// `PLANWRIGHT_PACKAGE_TESTS=1`, `program` and the cache must be there.
fn packages(test: &str, program: &str, tool: &str) -> Option<PathBuf> {
    if std::env::var("PLANWRIGHT_PACKAGE_TESTS").map_or(true, |v| v != "1") {
        eprintln!("{test}: not run; set PLANWRIGHT_PACKAGE_TESTS=1 (needs {program})");
        return None;
    }
    if planwright_engine::process::find_program(program, std::env::var("PATH").ok().as_deref())
        .is_none()
    {
        panic!("PLANWRIGHT_PACKAGE_TESTS=1 but `{program}` is not on PATH: install it");
    }
    let root = match std::env::var_os("PLANWRIGHT_CACHE") {
        Some(dir) => PathBuf::from(dir),
        None => PathBuf::from(std::env::var_os("HOME").expect("HOME")).join(".cache/planwright-ci"),
    };
    let dir = root.join("packages").join(tool);
    let filled = std::fs::read_dir(&dir).is_ok_and(|mut d| d.next().is_some());
    assert!(
        filled,
        "PLANWRIGHT_PACKAGE_TESTS=1 but {} is empty: run .ci/fetch-test-packages",
        dir.display()
    );
    Some(dir)
}

/// A package manager `.ci/fetch-test-packages` installed into the test
/// cache at `rel` below `dir`, pinned, so the test does not depend on the
/// machine's version of it.
fn cached_tool(dir: &Path, rel: &str) -> PathBuf {
    let program = dir.join(rel);
    assert!(
        program.is_file(),
        "PLANWRIGHT_PACKAGE_TESTS=1 but {} is missing: run .ci/fetch-test-packages",
        program.display()
    );
    program
}

/// Settings of a run under the default sandbox, whose confined processes
/// read the test cache `dir` where the project's configuration names it
/// (a confined process sees the home, where the cache lies, empty: a user
/// names a local mirror there in `[sandbox] readable` the same way).
fn reading(dir: &Path, setup: &[&[&str]]) -> RunSettings {
    let mut s = confined(setup);
    s.contain.readable = vec![dir.to_path_buf()];
    s
}

/// Settings of a run under the default sandbox; fails when the kernel
/// cannot confine.
fn confined(setup: &[&[&str]]) -> RunSettings {
    if let Err(e) = Containment::new(Mode::Enforce) {
        panic!("the package tests need Landlock and user namespaces: {e}");
    }
    let mut s = settings();
    s.strikes = 1;
    s.workspace.setup = setup
        .iter()
        .map(|argv| argv.iter().map(|a| a.to_string()).collect())
        .collect();
    s
}

/// Runs one ticket whose agent writes `42` to `answer.txt` (after running
/// `agent` in its workspace) and whose gate is `gate`; asserts it merged
/// and that the package manager's variable `var` pointed into the
/// per-slot caches of the workspace's and the gate checkout's set-ups.
fn merges(env: &Env, s: &RunSettings, gate_argv: &[&str], agent: &str, var: &str) {
    let plan = plan(
        json!({"gates": gate(gate_argv), "tickets": [ticket("A", json!([any("answer.txt")]))]}),
    );
    let body = format!("set -e\ncd \"$1\"\n{agent}\necho 42 > answer.txt\n");
    let out = run_with(env, &plan, s, sh_agent(env, &body, "{worktree}"));
    assert_eq!(out.summary.merged, ["A"], "{:?}", out.summary);
    let state = env.repo().join(".planwright");
    let logs = std::fs::read_dir(state.join("runs")).unwrap();
    let mut seen = String::new();
    for run in logs {
        let ticket = run.unwrap().path().join("A/ticket.log");
        seen.push_str(&std::fs::read_to_string(ticket).unwrap_or_default());
    }
    assert!(
        seen.contains(var),
        "the set-up's environment names {var}: {seen}"
    );
    for dir in ["agents/slot-1", "checkouts/slot-1"] {
        let cache = state.join("caches").join(dir);
        let filled = std::fs::read_dir(&cache).is_ok_and(|mut d| d.next().is_some());
        assert!(filled, "{} holds the set-up's cache", cache.display());
    }
}

/// The npm test cache's `is-number` tarball and its digests.
fn is_number(npm: &Path) -> (Vec<u8>, serde_json::Value) {
    let tarball = std::fs::read(npm.join("is-number-7.0.0.tgz")).unwrap();
    let digests = npm.join("is-number-7.0.0.dist.json");
    let digests = std::fs::read_to_string(&digests)
        .unwrap_or_else(|e| panic!("{}: {e}: run .ci/fetch-test-packages", digests.display()));
    (tarball, serde_json::from_str(&digests).unwrap())
}

/// A registry on loopback serving `tarball` as `name@version`, with the
/// digests `dist` (`integrity`, `shasum`) in its metadata.
fn registry(
    name: &'static str,
    version: &'static str,
    (tarball, mut dist): (Vec<u8>, serde_json::Value),
) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let file = format!("/{name}/-/{name}-{version}.tgz");
    dist["tarball"] = json!(format!("{url}{file}"));
    let packument = json!({
        "name": name,
        "dist-tags": {"latest": version},
        "versions": {version: {"name": name, "version": version, "dist": dist}}
    })
    .to_string();
    serve(
        listener,
        vec![
            (file, tarball),
            (format!("/{name}"), packument.into_bytes()),
        ],
    );
    url
}

/// Answers each GET on `listener` with the body of its path in `files`,
/// else 404, from a thread of its own.
fn serve(listener: TcpListener, files: Vec<(String, Vec<u8>)>) {
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            let mut reader = BufReader::new(stream.try_clone().unwrap());
            let mut line = String::new();
            let _ = reader.read_line(&mut line);
            loop {
                let mut header = String::new();
                if reader.read_line(&mut header).map_or(true, |n| n == 0) || header == "\r\n" {
                    break;
                }
            }
            let path = line.split_whitespace().nth(1).unwrap_or("");
            let (status, body) = match files.iter().find(|(p, _)| p == path) {
                Some((_, body)) => ("200 OK", body.clone()),
                None => ("404 Not Found", b"{}".to_vec()),
            };
            let head = format!(
                "HTTP/1.1 {status}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
                body.len()
            );
            let _ = stream.write_all(head.as_bytes());
            let _ = stream.write_all(&body);
        }
    });
}

/// A sparse Cargo registry on loopback holding `itoa 1.0.11`, packed from
/// the test cache's vendored copy; returns its address.
fn cargo_registry(dir: &Path, scratch: &Path) -> String {
    let unpacked = scratch.join("itoa-1.0.11");
    let copied = std::process::Command::new("cp")
        .args(["-r"])
        .arg(dir.join("vendor/itoa"))
        .arg(&unpacked)
        .status()
        .unwrap();
    assert!(copied.success());
    let _ = std::fs::remove_file(unpacked.join(".cargo-checksum.json"));
    let packed = scratch.join("itoa-1.0.11.crate");
    command(
        "tar",
        scratch,
        &["-czf", "itoa-1.0.11.crate", "itoa-1.0.11"],
        &[],
    );
    let bytes = std::fs::read(&packed).unwrap();
    let sum = std::process::Command::new("sha256sum")
        .arg(&packed)
        .output()
        .unwrap();
    let sum = String::from_utf8(sum.stdout).unwrap();
    let sum = sum.split_whitespace().next().unwrap();
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let address = listener.local_addr().unwrap().to_string();
    let config = json!({"dl": format!("http://{address}/dl/{{crate}}/{{version}}")});
    let index = json!({"name": "itoa", "vers": "1.0.11", "deps": [], "cksum": sum,
                       "features": {}, "yanked": false});
    serve(
        listener,
        vec![
            ("/config.json".into(), config.to_string().into_bytes()),
            ("/it/oa/itoa".into(), format!("{index}\n").into_bytes()),
            ("/dl/itoa/1.0.11".into(), bytes),
        ],
    );
    address
}

fn command(
    program: impl AsRef<std::ffi::OsStr>,
    dir: &Path,
    args: &[&str],
    envs: &[(&str, &Path)],
) {
    let program = program.as_ref();
    // Node keeps its compile cache in the temporary folder: one beside
    // `dir`, in the test's own, so that nothing is left in the machine's.
    let tmp = dir.parent().unwrap_or(dir).join("command-tmp");
    std::fs::create_dir_all(&tmp).unwrap();
    let out = std::process::Command::new(program)
        .args(args)
        .env("TMPDIR", &tmp)
        .envs(envs.iter().map(|(k, v)| (*k, *v)))
        .current_dir(dir)
        .output()
        .unwrap_or_else(|e| panic!("{program:?} runs: {e}"));
    assert!(
        out.status.success(),
        "{program:?} {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

const TEST_JS: &str = "const isNumber = require('is-number');\n\
const v = require('fs').readFileSync('answer.txt', 'utf8').trim();\n\
if (!isNumber(v) || v !== '42') { console.error('wrong answer: ' + v); process.exit(1); }\n";

#[test]
fn npm_ci_installs_a_registry_dependency_and_the_ticket_merges() {
    let Some(dir) = packages("npm", "npm", "npm") else {
        return;
    };
    let url = registry("is-number", "7.0.0", is_number(&dir));
    let npmrc = format!("registry={url}/\naudit=false\nfund=false\nupdate-notifier=false\n");
    let package = r#"{"name": "t", "version": "1.0.0", "scripts": {"test": "node test.js"}, "dependencies": {"is-number": "7.0.0"}}
"#;
    let env = Env::new(&[
        ("package.json", package),
        (".npmrc", &npmrc),
        ("test.js", TEST_JS),
        ("answer.txt", "0\n"),
        (".gitignore", "node_modules/\n"),
    ]);
    // The lock file, as the project's own `npm install` wrote it.
    let cache = env.root().join("npm-cache");
    command(
        "npm",
        &env.repo(),
        &["install", "--package-lock-only"],
        &[("npm_config_cache", &cache)],
    );
    git(&env.repo(), &["add", "-A"]);
    git(&env.repo(), &["commit", "-qm", "lock"]);
    let mut s = confined(&[&["npm", "ci"]]);
    // A registry on loopback is reached through the proxy only when named
    // by its address in `[sandbox] allow`.
    let address = url.trim_start_matches("http://");
    s.contain.allow.push(HostPort::parse(address).unwrap());
    // The agent installs too: its npm has a cache it may write, and none
    // it may not (the gate checkouts' set-ups' caches).
    let agent = "npm ci >/dev/null\nnode -e \"require('is-number')\"\n\
theirs=\"$npm_config_cache/../../../checkouts/slot-1/npm\"\n\
test -d \"$theirs\"\n\
if touch \"$theirs/poison\" 2>/dev/null; then echo 'wrote a set-up cache' >&2; exit 1; fi";
    merges(&env, &s, &["npm", "test"], agent, "npm_config_cache");
}

/// A Node project depending on `is-number` from a loopback registry (the
/// npm test's tarball), with `rc` (naming the registry as `{url}`) at
/// `rc_file`; returns it with the registry's address.
fn node_project(dir: &Path, rc_file: &str, rc: &str, ignore: &str) -> (Env, String) {
    let npm = dir.parent().unwrap().join("npm");
    let url = registry("is-number", "7.0.0", is_number(&npm));
    let package = r#"{"name": "t", "version": "1.0.0", "scripts": {"test": "node test.js"}, "dependencies": {"is-number": "7.0.0"}}
"#;
    let rc = rc.replace("{url}", &url);
    let env = Env::new(&[
        ("package.json", package),
        (rc_file, &rc),
        ("test.js", TEST_JS),
        ("answer.txt", "0\n"),
        (".gitignore", ignore),
    ]);
    (env, url.trim_start_matches("http://").to_string())
}

fn commit_lock(env: &Env) {
    git(&env.repo(), &["add", "-A"]);
    git(&env.repo(), &["commit", "-qm", "lock"]);
}

#[test]
fn pnpm_installs_a_registry_dependency_and_the_ticket_merges() {
    let Some(dir) = packages("pnpm", "node", "pnpm") else {
        return;
    };
    let pnpm = cached_tool(&dir, "node_modules/.bin/pnpm");
    let (env, address) = node_project(&dir, ".npmrc", "registry={url}/\n", "node_modules/\n");
    let home = env.root().join("pnpm-home");
    command(
        &pnpm,
        &env.repo(),
        &["install", "--lockfile-only"],
        &[("PNPM_HOME", &home)],
    );
    commit_lock(&env);
    let pnpm = pnpm.to_str().unwrap();
    let mut s = confined(&[&[pnpm, "install", "--frozen-lockfile"]]);
    s.contain.allow.push(HostPort::parse(&address).unwrap());
    let agent = "node -e \"require('is-number')\"\ntest -d \"$PNPM_HOME/store\"";
    merges(&env, &s, &[pnpm, "test"], agent, "PNPM_HOME");
}

#[test]
fn yarn_installs_a_registry_dependency_and_the_ticket_merges() {
    let Some(dir) = packages("yarn", "node", "yarn") else {
        return;
    };
    let yarn = cached_tool(&dir, "node_modules/.bin/yarn");
    let rc = "registry \"{url}/\"\ndisable-self-update-check true\n";
    let (env, address) = node_project(&dir, ".yarnrc", rc, "node_modules/\n");
    let cache = env.root().join("yarn-cache");
    command(
        &yarn,
        &env.repo(),
        &["install", "--ignore-scripts"],
        &[("YARN_CACHE_FOLDER", &cache)],
    );
    commit_lock(&env);
    let yarn = yarn.to_str().unwrap();
    let mut s = confined(&[&[yarn, "install", "--frozen-lockfile"]]);
    s.contain.allow.push(HostPort::parse(&address).unwrap());
    let agent = "node -e \"require('is-number')\"\ntest -d \"$YARN_CACHE_FOLDER\"";
    merges(&env, &s, &[yarn, "test"], agent, "YARN_CACHE_FOLDER");
}

#[test]
fn uv_installs_a_registry_dependency_into_a_venv_and_the_ticket_merges() {
    let Some(dir) = packages("uv", "python3", "uv") else {
        return;
    };
    let uv = cached_tool(&dir, "venv/bin/uv");
    let wheels = dir.parent().unwrap().join("pip");
    let requirements = format!(
        "--no-index\n--find-links {}\nsix==1.16.0\n",
        wheels.display()
    );
    let test_py = "import six\nv = open('answer.txt').read().strip()\n\
assert six.PY3 and v == '42', 'wrong answer: ' + v\n";
    let env = Env::new(&[
        ("requirements.txt", &requirements),
        ("test.py", test_py),
        ("answer.txt", "0\n"),
        (".gitignore", ".venv/\n"),
    ]);
    let uv = uv.to_str().unwrap();
    let s = reading(
        &wheels,
        &[
            &[uv, "venv", "--python", "python3", ".venv"],
            &[uv, "pip", "install", "-r", "requirements.txt"],
        ],
    );
    merges(
        &env,
        &s,
        &["sh", "-c", ".venv/bin/python test.py"],
        ".venv/bin/python -c 'import six'\ntest -d \"$UV_CACHE_DIR\"",
        "UV_CACHE_DIR",
    );
}

#[test]
fn pip_installs_a_registry_dependency_into_a_venv_and_the_ticket_merges() {
    let Some(dir) = packages("pip", "python3", "pip") else {
        return;
    };
    let requirements = format!("--no-index\n--find-links {}\nsix==1.16.0\n", dir.display());
    let test_py = "import six\nv = open('answer.txt').read().strip()\n\
assert six.PY3 and v == '42', 'wrong answer: ' + v\n";
    let env = Env::new(&[
        ("requirements.txt", &requirements),
        ("test.py", test_py),
        ("answer.txt", "0\n"),
        (".gitignore", ".venv/\n"),
    ]);
    let s = reading(
        &dir,
        &[
            &["python3", "-m", "venv", ".venv"],
            &[".venv/bin/pip", "install", "-r", "requirements.txt"],
        ],
    );
    merges(
        &env,
        &s,
        &["sh", "-c", ".venv/bin/python test.py"],
        ".venv/bin/python -c 'import six'",
        "PIP_CACHE_DIR",
    );
}

/// A crate depending on `itoa` 1.0.11 through the cargo `config`, whose
/// test `lib` reads `answer.txt` (0 on the base), and a cargo home of its
/// own beside the repository.
fn rust_crate(config: &str, lib: &str) -> (Env, PathBuf) {
    let manifest = "[package]\nname = \"t\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n\
[dependencies]\nitoa = \"=1.0.11\"\n";
    let env = Env::new(&[
        ("Cargo.toml", manifest),
        (".cargo/config.toml", config),
        ("src/lib.rs", lib),
        ("answer.txt", "0\n"),
        (".gitignore", "target/\n"),
    ]);
    let home = env.root().join("cargo-home");
    (env, home)
}

#[test]
fn cargo_fetches_a_registry_dependency_and_the_ticket_merges() {
    let Some(dir) = packages("cargo", "cargo", "cargo") else {
        return;
    };
    let config = format!(
        "[source.crates-io]\nreplace-with = \"vendored\"\n\n[source.vendored]\ndirectory = \"{}\"\n",
        dir.join("vendor").display()
    );
    let lib = "#[test]\nfn answer() {\n    let mut b = itoa::Buffer::new();\n    \
let v = std::fs::read_to_string(\"answer.txt\").unwrap();\n    \
assert_eq!(b.format(42), v.trim());\n}\n";
    let (env, home) = rust_crate(&config, lib);
    command(
        "cargo",
        &env.repo(),
        &["generate-lockfile", "--offline"],
        &[("CARGO_HOME", &home)],
    );
    git(&env.repo(), &["add", "-A"]);
    git(&env.repo(), &["commit", "-qm", "lock"]);
    let s = reading(&dir, &[&["cargo", "fetch"]]);
    merges(&env, &s, &["cargo", "test"], "true", "CARGO_HOME");
}

/// A Rust crate whose dependency comes from a registry the gates cannot
/// reach (here one on loopback, named only in `[sandbox] allow`; for
/// users, crates.io): without a set-up, preflight's gate probe fails on the
/// base and names `cargo fetch --locked`; with it, the gate checkout finds
/// the fetched crates offline (`cargo test --offline`) and the ticket merges.
#[test]
fn cargo_fetch_is_the_set_up_preflight_names_and_the_gate_finds_its_crates_offline() {
    let Some(dir) = packages("cargo_fetch", "cargo", "cargo") else {
        return;
    };
    let scratch = tempfile::tempdir().unwrap();
    let pack = scratch.path().join("pack");
    std::fs::create_dir(&pack).unwrap();
    let address = cargo_registry(&dir, &pack);
    let config = format!(
        "[source.crates-io]\nreplace-with = \"loopback\"\n\n[source.loopback]\nregistry = \"sparse+http://{address}/\"\n"
    );
    // Green on the base (0) and after the ticket (42) alike: the probe
    // passes once the crates are there.
    let lib = "#[test]\nfn answer() {\n    let mut b = itoa::Buffer::new();\n    \
let v = std::fs::read_to_string(\"answer.txt\").unwrap();\n    \
let n: u64 = v.trim().parse().unwrap();\n    assert_eq!(b.format(n), v.trim());\n}\n";
    let (env, home) = rust_crate(&config, lib);
    command(
        "cargo",
        &env.repo(),
        &["generate-lockfile"],
        &[("CARGO_HOME", &home)],
    );
    commit_lock(&env);
    let gate_argv = ["cargo", "test", "--offline"];
    let one_ticket = || {
        let tickets = [ticket("A", json!([any("answer.txt")]))];
        plan(json!({"gates": gate(&gate_argv), "tickets": tickets}))
    };
    let allowed = |setup: &[&[&str]]| {
        let mut s = confined(setup);
        s.contain.allow.push(HostPort::parse(&address).unwrap());
        s.gate_probe = true;
        s
    };
    let agent = sh_agent(&env, "echo 42 > \"$1/answer.txt\"\n", "{worktree}");
    let agents = planwright_engine::agent::Agents::from(std::sync::Arc::from(agent));
    let failed = prepare(
        &env.repo(),
        one_ticket(),
        allowed(&[]),
        Default::default(),
        &[],
        &agents,
    )
    .err()
    .expect("preflight refuses a red base");
    let probe = (failed.checks.iter())
        .find(|c| c.check == planwright_engine::CheckName::GateProbe)
        .unwrap_or_else(|| panic!("{:?}", failed.checks));
    assert_eq!(
        probe.status,
        planwright_engine::CheckStatus::Error,
        "{probe:?}"
    );
    let hint = probe.hint.as_deref().unwrap_or_default();
    assert!(
        hint.contains("setup = [[\"cargo\", \"fetch\", \"--locked\"]]"),
        "{probe:?}"
    );
    let s = allowed(&[&["cargo", "fetch", "--locked"]]);
    merges(&env, &s, &gate_argv, "true", "CARGO_HOME");
}

#[test]
fn go_downloads_a_module_dependency_and_the_ticket_merges() {
    let Some(dir) = packages("go", "python3", "go") else {
        return;
    };
    let go = cached_tool(&dir, "venv/bin/go");
    let module = "module t\n\ngo 1.25.0\n\nrequire golang.org/x/sync v0.20.0\n";
    let test_go = "package t\n\nimport (\n\t\"os\"\n\t\"strings\"\n\t\"testing\"\n\n\t\
\"golang.org/x/sync/errgroup\"\n)\n\nfunc TestAnswer(t *testing.T) {\n\tvar g errgroup.Group\n\t\
g.Go(func() error {\n\t\tb, err := os.ReadFile(\"answer.txt\")\n\t\t\
if err == nil && strings.TrimSpace(string(b)) != \"42\" {\n\t\t\tt.Errorf(\"wrong answer: %s\", b)\n\t\t}\n\t\t\
return err\n\t})\n\tif err := g.Wait(); err != nil {\n\t\tt.Fatal(err)\n\t}\n}\n";
    let env = Env::new(&[
        ("go.mod", module),
        ("answer_test.go", test_go),
        ("answer.txt", "0\n"),
    ]);
    // The module proxy is the project's: `GOPROXY` as its users set it.
    let proxy = format!("GOPROXY=file://{}", dir.join("proxy").display());
    let scratch = env.root().join("go-scratch");
    command(
        &go,
        &env.repo(),
        &["mod", "tidy"],
        &[
            ("GOPROXY", Path::new(&proxy["GOPROXY=".len()..])),
            ("GOMODCACHE", &scratch.join("mod")),
            ("GOCACHE", &scratch.join("build")),
            ("GOFLAGS", Path::new("-modcacherw")),
            // The rebuilt module is not the one the checksum database knows.
            ("GOSUMDB", Path::new("off")),
        ],
    );
    commit_lock(&env);
    let go = go.to_str().unwrap();
    let s = reading(&dir, &[&["env", &proxy, go, "mod", "download"]]);
    merges(
        &env,
        &s,
        &[go, "test", "./..."],
        "test -d \"$GOMODCACHE\"",
        "GOMODCACHE",
    );
}

/// A set-up that cannot work on the base commit would fail every ticket:
/// preflight says so with the tool's own words, and nothing runs.
#[test]
fn a_set_up_failing_on_the_base_commit_is_a_preflight_error_with_the_tools_message() {
    let env = Env::new(&[("README.md", "hi\n")]);
    let s = confined(&[&[
        "sh",
        "-c",
        "echo 'npm error code E404: left-pad is not in this registry' >&2; exit 3",
    ]]);
    let plan =
        plan(json!({"gates": gate(&["true"]), "tickets": [ticket("A", json!([any("a.txt")]))]}));
    let agent = sh_agent(&env, "echo a > \"$1/a.txt\"\n", "{worktree}");
    let failed = prepare(
        &env.repo(),
        plan,
        s,
        Default::default(),
        &[],
        &planwright_engine::agent::Agents::from(std::sync::Arc::from(agent)),
    )
    .err()
    .expect("preflight refuses");
    let setup: Vec<_> = failed
        .checks
        .iter()
        .filter(|c| c.check == planwright_engine::CheckName::Setup)
        .collect();
    assert_eq!(setup.len(), 1, "{:?}", failed.checks);
    assert_eq!(setup[0].status, planwright_engine::CheckStatus::Error);
    assert!(
        setup[0]
            .message
            .contains("left-pad is not in this registry")
            && setup[0].message.contains("exit"),
        "{}",
        setup[0].message
    );
    assert!(
        !env.repo().join(".planwright/runs").exists(),
        "no run started"
    );
}
