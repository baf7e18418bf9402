//! `planwright init` in a new user's project, then `planwright run` on the
//! plan it wrote, merged by the project's own tests (docs/cli.md).

use planwright_testkit::{assert_exit, assert_says, git, text, Env};
use std::ffi::OsStr;
use std::path::PathBuf;

const BIN: &str = env!("CARGO_BIN_EXE_planwright");

/// `files` committed in `repo/` on the branch `master` (as many projects
/// are), the binary run in the root.
fn on_master(files: &[(&str, &str)]) -> Env {
    Env::new(files).with_cli(BIN).on_master()
}

/// `COMMAND PLAN --repo repo --agent scripted:... EXTRA...` in `env`.
fn scripted(env: &Env, command: &str, plan: &str, extra: &[&str]) -> std::process::Output {
    let agent = format!("scripted:{}", env.fixtures().display());
    let mut args = vec![command, plan, "--repo", "repo", "--agent", &agent];
    args.extend_from_slice(extra);
    env.planwright(&args)
}

/// `init` in a fresh project of each kind: a commented planwright.toml with
/// the set-up its lock file needs and a plan gated by its tests, said as it
/// writes them; it never overwrites; the Node project's plan then merges.
#[test]
fn init_writes_a_configuration_and_a_plan_for_the_project_it_finds() {
    // (files, what init says, the set-up line, the plan's gate)
    type Kind<'a> = (&'a [(&'a str, &'a str)], &'a str, &'a str, &'a str);
    let kinds: [Kind; 3] = [
        (
            &[
                ("package.json", "{\"scripts\": {\"test\": \"node -e 0\"}}\n"),
                ("README.md", "hi\n"),
            ],
            "found a Node project (`package.json`)",
            "# setup = ",
            "[\"npm\",\"test\"]",
        ),
        (
            &[
                (
                    "pyproject.toml",
                    "[project]\nname = \"p\"\n\n[dependency-groups]\ndev = [\"pytest\"]\n",
                ),
                ("uv.lock", "\n"),
            ],
            "found a Python project (`pyproject.toml`)",
            "setup = [[\"uv\", \"sync\", \"--frozen\"]]",
            "[\".venv/bin/python\",\"-m\",\"pytest\"]",
        ),
        (
            &[
                ("Cargo.toml", "[package]\nname = \"c\"\n"),
                ("Cargo.lock", "\n"),
            ],
            "found a Rust project (`Cargo.toml`)",
            "setup = [[\"cargo\", \"fetch\", \"--locked\"]]",
            "[\"cargo\",\"test\"]",
        ),
    ];
    for (files, said, setup, gate) in kinds {
        let env = on_master(files);
        let out = env.planwright(&["init", "--repo", "repo"]);
        let stdout = text(&out.stdout);
        assert_eq!(out.status.code(), Some(0), "{stdout}{}", text(&out.stderr));
        assert!(stdout.contains(said), "{stdout}");
        // What to type next works from here, where init ran.
        assert!(
            stdout.contains("`planwright run repo/plan.json --repo repo`"),
            "{stdout}"
        );
        let config = std::fs::read_to_string(env.repo().join("planwright.toml")).unwrap();
        assert!(config.contains(setup), "{config}");
        let plan = std::fs::read_to_string(env.repo().join("plan.json")).unwrap();
        assert!(
            plan.contains(gate) && plan.contains("\"base\": \"master\""),
            "{plan}"
        );
        let out = env.planwright(&["validate", "repo/plan.json"]);
        assert_says(&out.stdout, "(0 errors, 0 warnings)");
        // Never over a file that is there.
        let again = env.planwright(&["init", "--repo", "repo"]);
        assert_eq!(again.status.code(), Some(2));
        assert_says(&again.stderr, "exists already");
        assert_eq!(
            std::fs::read_to_string(env.repo().join("planwright.toml")).unwrap(),
            config
        );
        if !said.contains("Node") {
            continue;
        }
        git(&env.repo(), &["add", "planwright.toml"]);
        git(&env.repo(), &["commit", "-qm", "planwright.toml"]);
        env.fixture("first", 0, "src/hello.js", "module.exports = 1\n");
        let out = scripted(&env, "run", "repo/plan.json", &[]);
        let said = text(&out.stdout);
        assert_eq!(out.status.code(), Some(0), "{said}{}", text(&out.stderr));
        assert_eq!(
            git(&env.repo(), &["show", "master:src/hello.js"]),
            "module.exports = 1"
        );
    }
}

/// The binary's command in `env` with `path` as its `PATH`.
fn with_path(env: &Env, path: &OsStr, args: &[&str]) -> std::process::Output {
    let out = env.command().env("PATH", path).args(args).output().unwrap();
    assert_exit(&out, 0);
    out
}

/// `init`, then `planwright.toml` committed and `run` on the plan `init`
/// wrote, with the scripted agent writing `file` as `content`: merged.
fn init_commit_and_run(env: &Env, path: &OsStr, file: &str, content: &str) {
    with_path(env, path, &["init", "--repo", "repo"]);
    git(&env.repo(), &["add", "planwright.toml"]);
    git(&env.repo(), &["commit", "-qm", "planwright.toml"]);
    env.fixture("first", 0, file, content);
    let agent = format!("scripted:{}", env.fixtures().display());
    let run = ["run", "repo/plan.json", "--repo", "repo", "--agent", &agent];
    let out = with_path(env, path, &run);
    assert_says(&out.stdout, "1 merged");
    let merged = git(&env.repo(), &["show", &format!("master:{file}")]);
    assert_eq!(merged, content.trim_end());
}

/// A Python project's metadata, its module before and after the ticket.
const PYPROJECT: &str = "[project]\nname = \"calc\"\nversion = \"0.1.0\"\n";
const ADD: &str = "def add(a, b):\n    return a + b\n";
const ADD_AND_SUB: &str =
    "def add(a, b):\n    return a + b\n\n\ndef sub(a, b):\n    return a - b\n";

/// A Python project whose tests are the standard library's `unittest`
/// (nothing names pytest, which is not installed): `init` gates it with
/// `python3 -m unittest`, and the plan it wrote merges its ticket.
#[test]
fn init_then_run_merges_a_python_project_tested_with_unittest() {
    let env = on_master(&[
        ("pyproject.toml", PYPROJECT),
        ("src/__init__.py", ""),
        ("src/calc.py", ADD),
        (
            "test_calc.py",
            "import unittest\nfrom src import calc\n\n\nclass Calc(unittest.TestCase):\n    \
             def test_add(self):\n        self.assertEqual(calc.add(2, 3), 5)\n",
        ),
    ]);
    let path = std::env::var_os("PATH").unwrap_or_default();
    init_commit_and_run(&env, &path, "src/calc.py", ADD_AND_SUB);
    let plan = std::fs::read_to_string(env.repo().join("plan.json")).unwrap();
    assert!(plan.contains(r#"["python3","-m","unittest"]"#), "{plan}");
}

/// pytest's wheels in the test cache `.ci/fetch-test-packages` fills,
/// when the package tier runs (`PLANWRIGHT_PACKAGE_TESTS=1`, which then
/// needs them).
fn pytest_wheels() -> Option<PathBuf> {
    if std::env::var("PLANWRIGHT_PACKAGE_TESTS").map_or(true, |v| v != "1") {
        eprintln!("not run; set PLANWRIGHT_PACKAGE_TESTS=1 (needs pytest's wheels)");
        return None;
    }
    let root = match std::env::var_os("PLANWRIGHT_CACHE") {
        Some(dir) => PathBuf::from(dir),
        None => PathBuf::from(std::env::var_os("HOME")?).join(".cache/planwright-ci"),
    };
    let dir = root.join("packages/pytest");
    assert!(
        dir.join("pytest-8.3.4-py3-none-any.whl").is_file(),
        "PLANWRIGHT_PACKAGE_TESTS=1 but {} has no pytest: run .ci/fetch-test-packages",
        dir.display()
    );
    Some(dir)
}

/// A Python project tested with pytest, which its `requirements.txt`
/// pins (found offline, in the test cache): `init` writes the set-up that
/// makes `.venv` and installs into it, and gates with that interpreter's
/// pytest (a `pytest` on `PATH` would not be the one installed); preflight
/// leaves `.venv/bin/python` to the set-up, and the ticket merges.
#[test]
fn init_then_run_merges_a_python_project_whose_requirements_install_pytest() {
    let Some(wheels) = pytest_wheels() else {
        return;
    };
    let requirements = format!(
        "--no-index\n--find-links {}\npytest==8.3.4\n",
        wheels.display()
    );
    let env = on_master(&[
        ("pyproject.toml", PYPROJECT),
        ("requirements.txt", &requirements),
        (".gitignore", ".venv/\n"),
        ("src/__init__.py", ""),
        ("src/calc.py", ADD),
        (
            "test_calc.py",
            "from src import calc\n\n\ndef test_add():\n    assert calc.add(2, 3) == 5\n",
        ),
    ]);
    let path = std::env::var_os("PATH").unwrap_or_default();
    init_commit_and_run(&env, &path, "src/calc.py", ADD_AND_SUB);
    let plan = std::fs::read_to_string(env.repo().join("plan.json")).unwrap();
    assert!(
        plan.contains(r#"[".venv/bin/python","-m","pytest"]"#),
        "{plan}"
    );
}

/// Where the tests' `cargo` is rustup's: the real folders of its proxies
/// and of its toolchains (`RUSTUP_HOME`, else `~/.rustup`).
fn rustup() -> Option<(PathBuf, PathBuf)> {
    let path = std::env::var_os("PATH")?;
    let bin = std::env::split_paths(&path).find(|d| d.join("cargo").is_file())?;
    let real = std::fs::canonicalize(bin.join("cargo")).ok()?;
    if real.file_name()? != "rustup" {
        return None;
    }
    let home = match std::env::var_os("RUSTUP_HOME") {
        Some(h) => h.into(),
        None => PathBuf::from(std::env::var_os("HOME")?).join(".rustup"),
    };
    Some((bin, home))
}

/// A Rust crate, with `init`'s set-up (`cargo fetch --locked`) and gate
/// (`cargo test`), run by a user whose toolchain is rustup's in their
/// home: `~/.cargo/bin` on `PATH` holding rustup's proxies, `~/.rustup`
/// its settings and toolchains (here the test's own home is made so: its
/// proxies link to the tests' `rustup`, its toolchains to theirs). The
/// gates find the toolchain through the view of the home planwright gives
/// them, and the ticket merges. Then, for preflight's trial of the set-up
/// and the gate on the base: a user whose `~/.cargo` and `~/.rustup` are
/// links to another disk, and one whose toolchains are where
/// `RUSTUP_HOME` says (as in the Rust images).
#[test]
fn init_then_run_merges_a_rust_crate_with_the_users_rustup_toolchain() {
    let lib = "pub fn one() -> u32 {\n    1\n}\n\n#[test]\nfn it_is_one() {\n    assert_eq!(one(), 1);\n}\n";
    let manifest = "[package]\nname = \"c\"\nversion = \"0.1.0\"\nedition = \"2021\"\n";
    let env = on_master(&[
        ("Cargo.toml", manifest),
        ("src/lib.rs", lib),
        (".gitignore", "target/\n"),
    ]);
    let path = std::env::var_os("PATH").unwrap_or_default();
    let mut dirs: Vec<PathBuf> = std::env::split_paths(&path).collect();
    let rustup = rustup();
    if let Some((bin, toolchains)) = &rustup {
        let home = env.cli().home();
        let proxies = home.join(".cargo/bin");
        std::fs::create_dir_all(&proxies).unwrap();
        for entry in std::fs::read_dir(bin).unwrap() {
            let entry = entry.unwrap().path();
            let real = std::fs::canonicalize(&entry).unwrap();
            std::os::unix::fs::symlink(real, proxies.join(entry.file_name().unwrap())).unwrap();
        }
        std::fs::create_dir(home.join(".rustup")).unwrap();
        std::fs::copy(
            toolchains.join("settings.toml"),
            home.join(".rustup/settings.toml"),
        )
        .unwrap();
        std::os::unix::fs::symlink(
            toolchains.join("toolchains"),
            home.join(".rustup/toolchains"),
        )
        .unwrap();
        dirs.retain(|d| d != bin);
        dirs.insert(0, proxies);
    }
    let path = std::env::join_paths(dirs).unwrap();
    let locked = std::process::Command::new("cargo")
        .args(["generate-lockfile", "--offline"])
        .current_dir(env.repo())
        .status()
        .unwrap();
    assert!(locked.success());
    git(&env.repo(), &["add", "Cargo.lock"]);
    git(&env.repo(), &["commit", "-qm", "Cargo.lock"]);
    let two = lib.replace(
        "1\n}\n\n#",
        "1\n}\n\npub fn two() -> u32 {\n    one() + 1\n}\n\n#",
    );
    init_commit_and_run(&env, &path, "src/lib.rs", &two);
    let Some((bin, toolchains)) = rustup else {
        return;
    };
    let preflight = |rustup_home: Option<&PathBuf>| {
        let mut cmd = env.command();
        cmd.env("PATH", &path);
        if let Some(home) = rustup_home {
            cmd.env("RUSTUP_HOME", home);
        }
        let args = ["preflight", "repo/plan.json", "--repo", "repo"];
        let out = cmd.args(args).args(["--agent", "scripted:/"]).output();
        let out = out.unwrap();
        assert_exit(&out, 0);
        assert_says(&out.stdout, "the set-up runs on the base commit");
        assert_says(&out.stdout, "`cargo test` pass on the base commit");
    };
    // `~/.cargo` and `~/.rustup` links to another disk: each child looks
    // them up through links its view of the hidden home must have.
    let home = env.cli().home();
    std::fs::remove_dir_all(home.join(".cargo")).unwrap();
    std::fs::remove_dir_all(home.join(".rustup")).unwrap();
    std::os::unix::fs::symlink(bin.parent().unwrap(), home.join(".cargo")).unwrap();
    std::os::unix::fs::symlink(&toolchains, home.join(".rustup")).unwrap();
    if bin.file_name().is_some_and(|n| n == "bin") {
        preflight(None);
    }
    std::fs::remove_file(home.join(".rustup")).unwrap();
    preflight(Some(&toolchains));
}
