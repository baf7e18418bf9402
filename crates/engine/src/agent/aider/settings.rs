//! litellm's own retries under aider, bounded through aider's model
//! settings without replacing the user's.
//!
//! Each try aider makes is up to three calls against an OpenAI-style API:
//! litellm 1.81 gives its OpenAI client `max_retries` 2 unless the call
//! names one (`llms/openai/openai.py`, `inference_params.pop("max_retries",
//! 2)`; its `DEFAULT_MAX_RETRIES` variable does not reach that path), and
//! aider has no flag for it. aider passes a model's `extra_params` to every
//! call, and merges the entry named `aider/extra_params` into every
//! model's, key by key (aider 0.86.2 `models.py`
//! `configure_model_settings`), so one such entry with `max_retries: 0`
//! bounds litellm for every model and leaves each model's own settings as
//! they are. But aider keeps one entry per name, the last file's, so that
//! entry would replace one of the user's: planwright adds it only when no
//! settings aider could read name their own model settings file or an
//! `aider/extra_params` entry ([`own_settings`]).

use planwright_os::beneath::Dir;
use std::io::Read;
use std::path::{Path, PathBuf};

/// The slot home's model settings file, which planwright writes before
/// every attempt ([`bound`]) and names with `--model-settings-file`.
pub(crate) const FILE: &str = "model.settings.yml";

/// Its content: litellm makes no retry of its own; aider's own retry
/// stays (and planwright's bound on it, `MAX_RETRIES`).
pub(crate) const BOUND: &str =
    "# planwright: litellm makes no retries of its own (aider retries a refusal itself).\n\
- name: aider/extra_params\n  extra_params:\n    max_retries: 0\n";

/// The slot home's file, written over whatever the last attempt left.
pub(crate) fn bound(_seeded: Option<&[u8]>) -> Option<Vec<u8>> {
    Some(BOUND.as_bytes().to_vec())
}

/// The files in which aider finds settings (in the home, and in the
/// workspace: its git root and working directory), each read for
/// [`names_own`].
const READS: &[&str] = &[".aider.conf.yml", ".aider.model.settings.yml", ".env"];

/// The most of one settings file read.
const MAX_READ: u64 = 1 << 20;

/// Whether `text` names a model settings file of the user's
/// (`model-settings-file:` in `.aider.conf.yml`, `AIDER_MODEL_SETTINGS_FILE`
/// in `.env`) or holds an `aider/extra_params` entry, which planwright's
/// flag or entry would replace. A mention anywhere counts, a comment too:
/// when in doubt, the user's settings win.
fn names_own(text: &str) -> bool {
    let text = text.to_ascii_lowercase();
    [
        "model-settings-file",
        "model_settings_file",
        "aider/extra_params",
    ]
    .iter()
    .any(|w| text.contains(w))
}

/// Where the user's own aider settings name a model settings file or an
/// `aider/extra_params` entry, if they do: `AIDER_MODEL_SETTINGS_FILE` in
/// `var`, or one of [`READS`] in `home` or in `workspace`. The
/// workspace's files are read beneath it (no link followed: an agent may
/// have left them), the home's as the user's own.
pub(crate) fn own_settings(
    var: &dyn Fn(&str) -> Option<String>,
    home: Option<&Path>,
    workspace: &Path,
) -> Option<String> {
    if var("AIDER_MODEL_SETTINGS_FILE").is_some_and(|v| !v.is_empty()) {
        return Some("AIDER_MODEL_SETTINGS_FILE".to_string());
    }
    for name in READS {
        let Some(home) = home else { break };
        let path = home.join(name);
        let Ok(file) = std::fs::File::open(&path) else {
            continue;
        };
        if read_names_own(file) {
            return Some(path.display().to_string());
        }
    }
    let dir = Dir::open(workspace).ok()?;
    READS
        .iter()
        .find(|name| dir.reader(Path::new(name)).is_ok_and(read_names_own))
        .map(|name| workspace.join(name).display().to_string())
}

fn read_names_own(file: std::fs::File) -> bool {
    let mut bytes = Vec::new();
    let read = file.take(MAX_READ).read_to_end(&mut bytes);
    read.is_ok() && names_own(&String::from_utf8_lossy(&bytes))
}

/// The slot home's [`FILE`], beside the history file planwright names in
/// the attempt's environment; `None` when the attempt has no slot home
/// (`[agent] isolate = false`).
pub(crate) fn slot_file(env: &[(String, String)]) -> Option<PathBuf> {
    let (_, history) = env
        .iter()
        .rev()
        .find(|(k, _)| k == "AIDER_CHAT_HISTORY_FILE")?;
    Some(Path::new(history).with_file_name(FILE))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_mention_of_an_own_settings_file_or_entry_counts() {
        assert!(names_own("model-settings-file: ~/my.yml\n"));
        assert!(names_own("AIDER_MODEL_SETTINGS_FILE=x\n"));
        assert!(names_own(
            "- name: aider/extra_params\n  extra_params: {}\n"
        ));
        assert!(!names_own(
            "- name: openai/gpt-5.4\n  extra_params:\n    top_p: 1\n"
        ));
    }

    #[test]
    fn the_users_settings_are_found_in_the_env_home_and_workspace() {
        let tmp = tempfile::tempdir().unwrap();
        let (home, ws) = (tmp.path().join("home"), tmp.path().join("ws"));
        std::fs::create_dir_all(&home).unwrap();
        std::fs::create_dir_all(&ws).unwrap();
        let none = |_: &str| -> Option<String> { None };
        assert_eq!(own_settings(&none, Some(&home), &ws), None);
        let set = |_: &str| -> Option<String> { Some("x.yml".to_string()) };
        assert_eq!(
            own_settings(&set, Some(&home), &ws).as_deref(),
            Some("AIDER_MODEL_SETTINGS_FILE")
        );
        let entry = "- name: aider/extra_params\n  extra_params:\n    top_p: 1\n";
        std::fs::write(ws.join(".aider.model.settings.yml"), entry).unwrap();
        let found = own_settings(&none, Some(&home), &ws).unwrap();
        assert!(found.ends_with("ws/.aider.model.settings.yml"), "{found}");
        std::fs::write(home.join(".aider.conf.yml"), "model-settings-file: a.yml\n").unwrap();
        let found = own_settings(&none, Some(&home), &ws).unwrap();
        assert!(found.ends_with("home/.aider.conf.yml"), "{found}");
    }

    /// A link in the workspace is not followed.
    #[test]
    fn a_link_in_the_workspace_is_not_read() {
        let tmp = tempfile::tempdir().unwrap();
        let ws = tmp.path().join("ws");
        std::fs::create_dir_all(&ws).unwrap();
        let target = tmp.path().join("elsewhere.yml");
        std::fs::write(&target, "model-settings-file: a.yml\n").unwrap();
        std::os::unix::fs::symlink(&target, ws.join(".aider.conf.yml")).unwrap();
        assert_eq!(
            own_settings(&|_: &str| -> Option<String> { None }, None, &ws),
            None
        );
    }
}
