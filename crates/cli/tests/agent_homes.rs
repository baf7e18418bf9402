//! What an agent CLI finds around it in a run, end to end: its slot's
//! home reset to the seed before each ticket, no socket of the user's
//! home, a program lent read-only, and preflight starting it confined.

mod common;

use common::*;
use planwright_testkit::{text, write, Env};
use serde_json::Value;
use std::path::Path;
use std::process::Command;

/// A fake `claude` that fails when it finds anything an earlier ticket's
/// agent left in its slot home, then leaves a file and, where the seeded
/// settings were, a symlink to `outside`; it makes its ticket's file.
fn leaving_claude(outside: &Path) -> String {
    format!(
        r#"#!/bin/sh
cat > /dev/null
h="$CLAUDE_CONFIG_DIR"
if [ -e "$h/planted" ] || [ -L "$h/settings.json" ] || ! grep -q from-the-user "$h/settings.json"; then
  echo "left over in $h: $(ls -A "$h")" >&2
  exit 3
fi
echo planted > "$h/planted"
rm -f "$h/settings.json"
ln -s '{outside}' "$h/settings.json"
echo made > "$(echo "$PLANWRIGHT_TICKET" | tr A-Z a-z).txt"
echo '{{"type":"result","subtype":"success","is_error":false,"result":"Done.","session_id":"s","usage":{{"input_tokens":1,"output_tokens":1}}}}'
"#,
        outside = outside.display()
    )
}

/// Runs the three tickets of [`sh_env`] one after the other in one slot
/// with adapter `agent`, its program the fake CLI `script`: all merge.
fn all_three_merge_with_a_fake(env: &Env, agent: &str, script: &str) {
    use std::os::unix::fs::PermissionsExt;
    let fake = env.root().join("bin").join(agent);
    write(env.root(), &format!("bin/{agent}"), script);
    std::fs::set_permissions(&fake, std::fs::Permissions::from_mode(0o755)).unwrap();
    let config = format!("[agent]\nprogram = \"{}\"\n", fake.display());
    write(env.root(), "planwright.toml", &config);
    let out = env.planwright(&[
        "run",
        "plan.json",
        "--repo",
        "repo",
        "--agent",
        agent,
        "--jobs",
        "1",
        "--strikes",
        "1",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let status = env.status_json();
    assert_eq!(status["counts"]["merged"], 3, "{status}");
}

#[test]
fn a_slots_cli_home_is_reset_to_its_seed_before_each_ticket() {
    let env = sh_env();
    let outside = env.root().join("outside.json");
    write(env.root(), "outside.json", "untouched\n");
    let user = env.cli().home().join(".claude");
    std::fs::create_dir_all(&user).unwrap();
    std::fs::write(user.join("settings.json"), "{\"from-the-user\": true}\n").unwrap();
    all_three_merge_with_a_fake(&env, "claude", &leaving_claude(&outside));
    assert_eq!(
        std::fs::read_to_string(&outside).unwrap(),
        "untouched\n",
        "seeding wrote through no symlink"
    );
    assert_eq!(
        std::fs::read_to_string(user.join("settings.json")).unwrap(),
        "{\"from-the-user\": true}\n"
    );
}

/// A fake `claude` that fails unless it reads its linked login (in the
/// home, which its view hides but for that file), fails when it sees
/// `~/.ssh` or reaches a socket `connect.py` names, and makes its file.
const SOCKET_PROBING_CLAUDE: &str = r#"#!/bin/sh
cat > /dev/null
[ "$(cat "$CLAUDE_CONFIG_DIR/.credentials.json")" = "the user's login" ] || { echo "no login" >&2; exit 3; }
[ ! -e "$HOME/.ssh" ] || { echo "sees $(ls -A "$HOME/.ssh")" >&2; exit 4; }
python3 "$CONNECT" || exit 5
echo made > a.txt
echo '{"type":"result","subtype":"success","is_error":false,"result":"Done.","session_id":"s","usage":{"input_tokens":1,"output_tokens":1}}'
"#;

/// Pathname sockets in a home outside `/tmp` that no list names: an `ssh`
/// `ControlPath` in `~/.ssh` and an `ssh-agent -a` socket in a folder of
/// the home. The test reaches both; neither the agent (a fake `claude`
/// that still reads its linked login there) nor its gate does, as each
/// fails when a connect succeeds.
#[test]
fn no_socket_in_the_home_is_reached_by_agent_or_gate() {
    use std::os::unix::fs::PermissionsExt;
    use std::os::unix::net::{UnixListener, UnixStream};
    let env = Env::new_in(Path::new("/var/tmp"), &[("README.md", "hi\n")]).with_cli(BIN);
    let home = env.cli().home().to_path_buf();
    write(&home, ".claude/.credentials.json", "the user's login");
    let sockets = [
        home.join(".ssh/cm-git@example.com:22"),
        home.join("work/agent.sock"),
    ];
    let _listening: Vec<UnixListener> = sockets
        .iter()
        .map(|s| {
            std::fs::create_dir_all(s.parent().unwrap()).unwrap();
            UnixListener::bind(s).unwrap()
        })
        .collect();
    for s in &sockets {
        UnixStream::connect(s).unwrap_or_else(|e| panic!("the test reaches {}: {e}", s.display()));
    }
    let connect = env.root().join("connect.py");
    let list: Vec<String> = sockets
        .iter()
        .map(|s| format!("{:?}", s.display().to_string()))
        .collect();
    write(
        env.root(),
        "connect.py",
        &format!(
            "import socket, sys\n\
             for a in [{}]:\n\
             \x20   try:\n\
             \x20       socket.socket(socket.AF_UNIX).connect(a); sys.exit('reached ' + a)\n\
             \x20   except OSError:\n\
             \x20       pass\n",
            list.join(", ")
        ),
    );
    let c = connect.display().to_string();
    let plan = serde_json::json!({"planwright": 1, "source_format": "native", "base": "main",
        "gates": [{"name": "sockets", "argv": ["python3", c]}],
        "tickets": [{"id": "A", "title": "a", "body": "make a",
            "scope": [{"pattern": "a.txt", "op": "create"}]}]});
    write(env.root(), "plan.json", &plan.to_string());
    let fake = env.root().join("bin/claude");
    write(env.root(), "bin/claude", SOCKET_PROBING_CLAUDE);
    std::fs::set_permissions(&fake, std::fs::Permissions::from_mode(0o755)).unwrap();
    let config = format!(
        "[agent]\nprogram = \"{}\"\nenv = [\"CONNECT\"]\n",
        fake.display()
    );
    write(env.root(), "planwright.toml", &config);
    let out = env
        .command()
        .env("CONNECT", &connect)
        .args([
            "run",
            "plan.json",
            "--repo",
            "repo",
            "--agent",
            "claude",
            "--strikes",
            "1",
            // The gate under test is the run's, not preflight's trial.
            "--no-gate-probe",
        ])
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}\n{}",
        text(&out.stdout),
        text(&out.stderr)
    );
    assert_eq!(env.status_json()["counts"]["merged"], 1);
}

/// A fake `opencode` that fails unless its cache holds the seed alone (the
/// user's `bin` and `packages`, lent, and nothing an earlier ticket's agent
/// left), fails when it can write to either (through the link, or by
/// replacing a file there), then leaves a file in its cache and a `bin` and
/// `packages` of its own in place of the links; it makes its ticket's file.
const LEAVING_OPENCODE: &str = r#"#!/bin/sh
cat > /dev/null
c="$XDG_CACHE_HOME/opencode"
p="$c/packages/plugin/node_modules/plugin/index.js"
if [ -e "$c/planted" ] || [ ! -L "$c/bin" ] || [ "$(cat "$c/bin/rg")" != "the user's rg" ] \
   || [ ! -L "$c/packages" ] || [ "$(cat "$p")" != "the user's plugin" ]; then
  echo "not the seed in $c: $(ls -A "$c")" >&2
  exit 3
fi
if echo tampered 2>/dev/null > "$c/bin/rg" || touch "$c/bin/new" 2>/dev/null \
   || mv "$c/bin/rg" "$c/bin/old" 2>/dev/null || echo tampered 2>/dev/null > "$p" \
   || mkdir "$c/packages/other" 2>/dev/null; then
  echo "wrote a lent folder" >&2
  exit 4
fi
echo planted > "$c/planted"
rm "$c/bin" && mkdir "$c/bin" && echo mine > "$c/bin/rg" || exit 5
rm "$c/packages" && mkdir "$c/packages" || exit 6
echo made > "$(echo "$PLANWRIGHT_TICKET" | tr A-Z a-z).txt"
echo '{"type":"text","sessionID":"s","part":{"text":"Done."}}'
echo '{"type":"done","sessionID":"s"}'
"#;

/// Where a CLI needs a populated cache to start (opencode's `bin`), or
/// would fetch into it what it lacks (opencode's `packages`), planwright
/// lends every slot its copy of the user's, which no attempt writes; the
/// rest of the slot's cache is reset to its seed before each ticket, and
/// the user's folders are never written.
#[test]
fn opencodes_bin_is_lent_read_only_and_its_cache_is_reset_before_each_ticket() {
    let env = sh_env();
    let user_bin = env.cli().home().join(".cache/opencode/bin");
    write(&user_bin, "rg", "the user's rg");
    let user_packages = env.cli().home().join(".cache/opencode/packages");
    let plugin = "plugin/node_modules/plugin/index.js";
    write(&user_packages, plugin, "the user's plugin");
    all_three_merge_with_a_fake(&env, "opencode", LEAVING_OPENCODE);
    assert_eq!(
        std::fs::read_to_string(user_packages.join(plugin)).unwrap(),
        "the user's plugin"
    );
    assert_eq!(
        std::fs::read_dir(&user_bin).unwrap().count(),
        1,
        "nothing added to the user's folder"
    );
    assert_eq!(
        std::fs::read_to_string(user_bin.join("rg")).unwrap(),
        "the user's rg"
    );
}

/// preflight starts the chosen CLI as an attempt would: confined, in a
/// fresh slot home. Fake CLIs on a `PATH` the test makes fail as the real
/// ones did: an opencode that makes its cache under `$HOME` (outside what
/// it may write), a codex whose own sandbox cannot start.
#[test]
fn preflight_starts_the_cli_confined_and_reports_its_own_words() {
    use std::os::unix::fs::PermissionsExt;
    let env = sh_env();
    let bin = env.root().join("bin");
    let fake = |name: &str, body: &str| {
        write(
            env.root(),
            &format!("bin/{name}"),
            &format!("#!/bin/sh\n{body}"),
        );
        let path = bin.join(name);
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    };
    let preflight = |agent: &str| {
        let path = format!("{}:{}", bin.display(), std::env::var("PATH").unwrap());
        let out = env
            .command()
            .env("PATH", path)
            .args(["preflight", "plan.json", "--repo", "repo", "--agent", agent])
            .output()
            .unwrap();
        (out.status.code(), text(&out.stdout))
    };
    let cache = "mkdir -p \"${XDG_CACHE_HOME:-$HOME/.cache}/opencode\" 2>/dev/null || { echo \"EACCES: permission denied, mkdir '$HOME/.cache'\" >&2; exit 1; }\n";
    fake("opencode", cache);
    let (code, out) = preflight("opencode");
    assert_eq!(code, Some(0), "its cache is in its slot home:\n{out}");
    fake(
        "opencode",
        &cache.replace("${XDG_CACHE_HOME:-$HOME/.cache}", "$HOME/.cache"),
    );
    let (code, out) = preflight("opencode");
    assert_eq!(code, Some(1), "{out}");
    assert!(
        out.contains("error   agent: agent `opencode` did not start as an attempt would")
            && out.contains("EACCES: permission denied, mkdir '"),
        "{out}"
    );

    fake(
        "codex",
        "if [ \"$1\" = sandbox ]; then echo 'bwrap: Failed to make / slave: Operation not permitted' >&2; exit 1; fi\necho 'codex-cli 0.171.0'\n",
    );
    let (code, out) = preflight("codex");
    assert_eq!(
        code,
        Some(0),
        "inside planwright's sandbox codex uses none:\n{out}"
    );
    write(env.root(), "planwright.toml", "[sandbox]\nmode = \"off\"\n");
    let (code, out) = preflight("codex");
    assert_eq!(code, Some(1), "{out}");
    assert!(out.contains("bwrap: Failed to make / slave"), "{out}");
}

/// `./agent.sh`, typed as at a shell, is the script in the directory
/// `run` was started in, not one the ticket's workspace would have to hold.
#[test]
fn a_relative_agent_program_is_found_where_run_was_started() {
    let env = sh_env();
    write(
        env.root(),
        "agent.sh",
        "#!/bin/sh\nt=$(echo \"$PLANWRIGHT_TICKET\" | tr A-Z a-z)\necho x > \"$t.txt\"\n",
    );
    let script = env.root().join("agent.sh");
    let status = Command::new("chmod")
        .arg("+x")
        .arg(&script)
        .status()
        .unwrap();
    assert!(status.success());
    let args = [
        "plan.json",
        "--repo",
        "repo",
        "--agent",
        "cmd",
        "--agent-cmd",
        "./agent.sh {prompt_file}",
    ];
    let preflight = env.planwright(&[&["preflight"][..], &args].concat());
    assert_eq!(
        preflight.status.code(),
        Some(0),
        "{}",
        text(&preflight.stdout)
    );
    let out = env.planwright(&[&["run"][..], &args, &["--output", "json"]].concat());
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}{}",
        text(&out.stdout),
        text(&out.stderr)
    );
    let summary: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(summary["merged"], serde_json::json!(["A", "B", "C"]));
}
