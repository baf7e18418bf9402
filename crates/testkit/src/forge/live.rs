//! The one live forge tier (docs/forge.md#the-live-tier): the forge
//! crate's client test and the CLI's `deliver` test run against one real
//! forge when `PLANWRIGHT_FORGE_TESTS` names it, with the same variables,
//! read here once. Unset, each test says in one line that it did not run;
//! set, a missing variable fails the test (it never passes by skipping).

/// The variable that turns the tier on and names the forge.
pub const SWITCH: &str = "PLANWRIGHT_FORGE_TESTS";

/// The tier's settings.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Live {
    /// `github`, `gitlab` or `forgejo`.
    pub kind: String,
    /// The token (`PLANWRIGHT_FORGE_TOKEN`).
    pub token: String,
    /// The scratch repository, `owner/name` (`PLANWRIGHT_FORGE_REPOSITORY`).
    pub repository: String,
    /// A branch of it that is not its default (`PLANWRIGHT_FORGE_BRANCH`),
    /// for the client's pull request.
    pub branch: String,
    /// The API's root (`PLANWRIGHT_FORGE_API_URL`; the public host's by
    /// default).
    pub api_url: String,
    /// The repository's https clone URL (`PLANWRIGHT_FORGE_REMOTE`; from
    /// the public host by default, required with `PLANWRIGHT_FORGE_API_URL`).
    pub remote: String,
}

impl Live {
    /// The tier's settings from the environment, or `None` when it is off
    /// (after saying so in one line naming `test`). Panics, naming the
    /// variable, when the tier is on and a variable is missing or wrong.
    pub fn from_env(test: &str) -> Option<Live> {
        let read = |name: &str| std::env::var(name).ok().filter(|v| !v.trim().is_empty());
        match Live::from_vars(read) {
            Ok(Some(live)) => Some(live),
            Ok(None) => {
                eprintln!(
                    "{test}: the live forge tier is off; set {SWITCH}=github|gitlab|forgejo to run it (docs/forge.md#the-live-tier)"
                );
                None
            }
            Err(e) => panic!("{test}: {e} (docs/forge.md#the-live-tier)"),
        }
    }

    /// The settings from `read` (a variable's value, if set).
    pub fn from_vars(read: impl Fn(&str) -> Option<String>) -> Result<Option<Live>, String> {
        let Some(kind) = read(SWITCH) else {
            return Ok(None);
        };
        let (api, host) = match kind.as_str() {
            "github" => ("https://api.github.com", "github.com"),
            "gitlab" => ("https://gitlab.com/api/v4", "gitlab.com"),
            "forgejo" => ("https://codeberg.org/api/v1", "codeberg.org"),
            other => {
                return Err(format!(
                    "{SWITCH} is `{other}`: write `github`, `gitlab` or `forgejo`"
                ))
            }
        };
        let required = |name: &str, what: &str| {
            read(name).ok_or_else(|| format!("{SWITCH} is set but `{name}` ({what}) is not"))
        };
        let token = required(
            "PLANWRIGHT_FORGE_TOKEN",
            "a token of the scratch repository",
        )?;
        let repository = required(
            "PLANWRIGHT_FORGE_REPOSITORY",
            "the scratch repository, `owner/name`",
        )?;
        let branch = required(
            "PLANWRIGHT_FORGE_BRANCH",
            "a branch of the scratch repository that is not its default",
        )?;
        let api_url = read("PLANWRIGHT_FORGE_API_URL");
        let remote = match (read("PLANWRIGHT_FORGE_REMOTE"), &api_url) {
            (Some(remote), _) => remote,
            (None, None) => format!("https://{host}/{repository}.git"),
            (None, Some(_)) => required(
                "PLANWRIGHT_FORGE_REMOTE",
                "the https clone URL, needed beside `PLANWRIGHT_FORGE_API_URL`",
            )?,
        };
        Ok(Some(Live {
            kind,
            token,
            repository,
            branch,
            api_url: api_url.unwrap_or_else(|| api.to_string()),
            remote,
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn vars(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
        let map: HashMap<String, String> = pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        move |name| map.get(name).cloned()
    }

    #[test]
    fn the_tier_is_off_unset_and_fails_on_a_missing_variable_when_set() {
        assert_eq!(Live::from_vars(vars(&[])), Ok(None));
        let err = Live::from_vars(vars(&[(SWITCH, "github")])).unwrap_err();
        assert!(err.contains("`PLANWRIGHT_FORGE_TOKEN`"), "{err}");
        let err = Live::from_vars(vars(&[(SWITCH, "gitea")])).unwrap_err();
        assert!(
            err.contains("write `github`, `gitlab` or `forgejo`"),
            "{err}"
        );
        let full = [
            (SWITCH, "forgejo"),
            ("PLANWRIGHT_FORGE_TOKEN", "t"),
            ("PLANWRIGHT_FORGE_REPOSITORY", "me/scratch"),
            ("PLANWRIGHT_FORGE_BRANCH", "live"),
        ];
        let live = Live::from_vars(vars(&full)).unwrap().unwrap();
        assert_eq!(live.api_url, "https://codeberg.org/api/v1");
        assert_eq!(live.remote, "https://codeberg.org/me/scratch.git");
        let mut own = full.to_vec();
        own.push(("PLANWRIGHT_FORGE_API_URL", "https://git.example.com/api/v1"));
        let err = Live::from_vars(vars(&own)).unwrap_err();
        assert!(err.contains("`PLANWRIGHT_FORGE_REMOTE`"), "{err}");
    }
}
