//! `[forge]`: where `planwright deliver` pushes and opens pull requests.
//! Each value is checked as the file is read (so its error points at its
//! line), and [`resolve`] fills in what the remote's URL implies.
//!
//! The token itself is never part of the file: `token_env` names the
//! variable, and the caller reads it into [`crate::Env`].

use crate::resolve::{Env, SettingsError};
use serde::{Deserialize, Serialize};
use std::fmt;

/// `[forge] kind`: whose API the pull requests go through.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ForgeKind {
    /// GitHub and GitHub Enterprise (REST v3).
    Github,
    /// GitLab, hosted or self-managed (REST v4, merge requests).
    Gitlab,
    /// Forgejo and Gitea (API v1); `gitea` is read as this.
    #[serde(alias = "gitea")]
    Forgejo,
}

impl ForgeKind {
    /// Its name in the file, messages and JSON.
    pub fn name(self) -> &'static str {
        match self {
            ForgeKind::Github => "github",
            ForgeKind::Gitlab => "gitlab",
            ForgeKind::Forgejo => "forgejo",
        }
    }

    /// The variables a token is looked for in, in order, when
    /// `token_env` names none.
    pub fn token_variables(self) -> &'static [&'static str] {
        match self {
            ForgeKind::Github => &["GITHUB_TOKEN", "GH_TOKEN"],
            ForgeKind::Gitlab => &["GITLAB_TOKEN"],
            ForgeKind::Forgejo => &["FORGEJO_TOKEN", "GITEA_TOKEN"],
        }
    }

    /// What a token of this kind needs to be allowed, for messages.
    pub fn scopes(self) -> &'static str {
        match self {
            ForgeKind::Github => {
                "a classic token with the `repo` scope, or a fine-grained one with contents and pull requests write"
            }
            ForgeKind::Gitlab => "a token with the `api` scope",
            ForgeKind::Forgejo => {
                "a token with `write:repository` and `write:issue`"
            }
        }
    }
}

/// Every token variable of every kind, the ones a caller reads by default.
pub const TOKEN_VARIABLES: &[&str] = &[
    "GITHUB_TOKEN",
    "GH_TOKEN",
    "GITLAB_TOKEN",
    "FORGEJO_TOKEN",
    "GITEA_TOKEN",
];

/// `[forge] per`: one pull request per run, or one per merged ticket.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Per {
    /// One branch and pull request holding everything the run merged.
    #[default]
    Run,
    /// One branch and pull request per merged ticket, stacked along the DAG.
    Ticket,
}

/// `[forge] api_url`: `https://...`, or `http://` on a loopback host only.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct ApiUrl(String);

impl ApiUrl {
    /// Checks `text`; the error says what is wrong and what to write.
    pub fn parse(text: &str) -> Result<ApiUrl, String> {
        let bad = |why: &str| {
            format!("api_url `{text}` {why} (write the API's root, such as `https://ghe.example.com/api/v3`)")
        };
        let (scheme, rest) = text.split_once("://").ok_or_else(|| bad("has no scheme"))?;
        let host = host_of(rest);
        if host.is_empty() || rest.contains(char::is_whitespace) {
            return Err(bad("has no host"));
        }
        match scheme {
            "https" => {}
            "http" if is_loopback(host) => {}
            "http" => return Err(bad("is plain `http` to a host that is not loopback; use `https`")),
            _ => return Err(bad("is neither `https` nor `http`")),
        }
        Ok(ApiUrl(text.trim_end_matches('/').to_string()))
    }

    /// The URL, without a trailing `/`.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl TryFrom<String> for ApiUrl {
    type Error = String;
    fn try_from(s: String) -> Result<ApiUrl, String> {
        ApiUrl::parse(&s)
    }
}

impl From<ApiUrl> for String {
    fn from(u: ApiUrl) -> String {
        u.0
    }
}

impl fmt::Display for ApiUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// The host of what follows `scheme://`, without user, port or brackets.
fn host_of(rest: &str) -> &str {
    let authority = rest.split(['/', '?', '#']).next().unwrap_or("");
    let authority = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
    if let Some(v6) = authority.strip_prefix('[') {
        return v6.split(']').next().unwrap_or("");
    }
    authority.split(':').next().unwrap_or("")
}

fn is_loopback(host: &str) -> bool {
    host.eq_ignore_ascii_case("localhost")
        || host
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback())
}

/// `[forge] repository`: `owner/name` (GitLab: `group/subgroup/name`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct RepositoryName(String);

impl RepositoryName {
    /// Checks `text`; the error says what to write.
    pub fn parse(text: &str) -> Result<RepositoryName, String> {
        let parts: Vec<&str> = text.split('/').collect();
        let part_ok = |p: &&str| {
            !p.is_empty()
                && !p.starts_with('.')
                && p.bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b"-_.".contains(&b))
        };
        if parts.len() < 2 || !parts.iter().all(part_ok) {
            return Err(format!(
                "repository `{text}` is not `owner/name` (letters, digits, `-`, `_` and `.` in each part)"
            ));
        }
        Ok(RepositoryName(text.to_string()))
    }

    /// `owner/name`.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl TryFrom<String> for RepositoryName {
    type Error = String;
    fn try_from(s: String) -> Result<RepositoryName, String> {
        RepositoryName::parse(&s)
    }
}

impl From<RepositoryName> for String {
    fn from(r: RepositoryName) -> String {
        r.0
    }
}

impl fmt::Display for RepositoryName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// `[forge] token_env`: the name of an environment variable.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct VariableName(String);

impl TryFrom<String> for VariableName {
    type Error = String;
    fn try_from(s: String) -> Result<VariableName, String> {
        let ok = s
            .bytes()
            .next()
            .is_some_and(|b| b.is_ascii_alphabetic() || b == b'_')
            && s.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_');
        if ok {
            Ok(VariableName(s))
        } else {
            Err(format!(
                "token_env `{s}` is not the name of an environment variable (write its name, such as `GITHUB_TOKEN`, never the token itself)"
            ))
        }
    }
}

impl From<VariableName> for String {
    fn from(v: VariableName) -> String {
        v.0
    }
}

/// `[forge] branch`: the remote branch name, with `{run}` and `{ticket}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct BranchTemplate(String);

impl BranchTemplate {
    /// Checks `text`: only `{run}` and `{ticket}`, and a valid branch name.
    pub fn parse(text: &str) -> Result<BranchTemplate, String> {
        let rest = text.replace("{run}", "").replace("{ticket}", "");
        if rest.contains(['{', '}']) {
            return Err(format!(
                "branch `{text}` has a placeholder other than `{{run}}` and `{{ticket}}`"
            ));
        }
        let sample = text.replace("{run}", "r").replace("{ticket}", "t");
        if let Some(why) = planwright_plan::refname::ref_name_problem(&sample) {
            return Err(format!("branch `{text}` is not a valid branch name: {why}"));
        }
        Ok(BranchTemplate(text.to_string()))
    }

    /// The branch of run `run` (and ticket `ticket`, for `per = "ticket"`).
    pub fn expand(&self, run: &str, ticket: Option<&str>) -> String {
        let name = self.0.replace("{run}", run);
        match ticket {
            Some(t) => name.replace("{ticket}", t),
            None => name,
        }
    }

    /// Whether it names the ticket.
    pub fn has_ticket(&self) -> bool {
        self.0.contains("{ticket}")
    }

    /// The template as written.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl TryFrom<String> for BranchTemplate {
    type Error = String;
    fn try_from(s: String) -> Result<BranchTemplate, String> {
        BranchTemplate::parse(&s)
    }
}

impl From<BranchTemplate> for String {
    fn from(b: BranchTemplate) -> String {
        b.0
    }
}

/// A token, kept out of `Debug` output and messages.
#[derive(Clone, PartialEq, Eq)]
pub struct Secret(String);

impl Secret {
    /// Wraps a token read from the environment.
    pub fn new(value: impl Into<String>) -> Secret {
        Secret(value.into())
    }

    /// The token, for the one request or push that sends it.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Secret(..)")
    }
}

/// The `[forge]` a delivery works with: every default filled in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ForgeSettings {
    /// Whose API.
    pub kind: ForgeKind,
    /// The git remote pushed to.
    pub remote: String,
    /// The API's root URL, without a trailing `/`.
    pub api_url: String,
    /// `owner/name` on the forge.
    pub repository: String,
    /// One pull request per run or per ticket.
    pub per: Per,
    /// The remote branch names.
    pub branch: BranchTemplate,
    /// Open pull requests as drafts.
    pub draft: bool,
    /// The variables the token was looked for in, in order.
    pub token_env: Vec<String>,
    /// The variable the token was read from, and the token; `None` when
    /// none of `token_env` is set (a dry run needs none).
    pub token: Option<(String, Secret)>,
}

/// A remote's URL taken apart: its host (none for a local path) and its
/// path, without a leading `/` or a trailing `.git`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RemoteUrl {
    /// The scheme: `https`, `http`, `ssh`, `git`, `file`, or `scp` for
    /// `user@host:path`.
    pub scheme: String,
    /// The host, lower case, without user or port.
    pub host: Option<String>,
    /// The path on the host.
    pub path: String,
}

impl RemoteUrl {
    /// Reads the URL git has for a remote.
    pub fn parse(url: &str) -> RemoteUrl {
        let strip = |p: &str| {
            let p = p.trim_matches('/');
            p.strip_suffix(".git").unwrap_or(p).to_string()
        };
        if let Some((scheme, rest)) = url.split_once("://") {
            let host = host_of(rest).to_ascii_lowercase();
            let path = rest.find('/').map_or("", |i| &rest[i..]);
            return RemoteUrl {
                scheme: scheme.to_ascii_lowercase(),
                host: (!host.is_empty()).then_some(host),
                path: strip(path),
            };
        }
        // scp-like `[user@]host:path`, as git reads it: a colon before any slash.
        match url.split_once(':') {
            Some((authority, path)) if !authority.contains('/') && !authority.is_empty() => {
                let host = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
                RemoteUrl {
                    scheme: "scp".into(),
                    host: Some(host.to_ascii_lowercase()),
                    path: strip(path),
                }
            }
            _ => RemoteUrl {
                scheme: "file".into(),
                host: None,
                path: strip(url),
            },
        }
    }

    /// Whether a push to it may carry a token through a credential helper.
    pub fn is_http(&self) -> bool {
        matches!(self.scheme.as_str(), "http" | "https")
    }
}

/// The public forges: host, kind and API root.
const PUBLIC: &[(&str, ForgeKind, &str)] = &[
    ("github.com", ForgeKind::Github, "https://api.github.com"),
    ("gitlab.com", ForgeKind::Gitlab, "https://gitlab.com/api/v4"),
    ("codeberg.org", ForgeKind::Forgejo, "https://codeberg.org/api/v1"),
];

/// `[forge]` for the remote whose URL is `url`, with the token read from
/// `env`. `kind`, `api_url` and `repository` fall back to what the URL
/// says; a self-hosted forge needs `kind` and `api_url` written.
pub fn resolve(
    file: &crate::file::Forge,
    url: &str,
    env: &Env,
) -> Result<ForgeSettings, SettingsError> {
    let crate::file::Forge {
        kind,
        remote,
        api_url,
        repository,
        token_env,
        per,
        branch,
        draft,
    } = file;
    let remote = remote.clone().unwrap_or_else(|| "origin".into());
    let parsed = RemoteUrl::parse(url);
    let public = parsed
        .host
        .as_deref()
        .and_then(|h| PUBLIC.iter().find(|(host, _, _)| *host == h));
    let bad = |why: String| Err(SettingsError::Forge(why));
    let Some(kind) = kind.or(public.map(|p| p.1)) else {
        return bad(format!(
            "the remote `{remote}` ({url}) is not on github.com, gitlab.com or codeberg.org, so `kind` is needed: write `kind = \"github\"`, `\"gitlab\"` or `\"forgejo\"`"
        ));
    };
    let api_url = match (api_url, public) {
        (Some(u), _) => u.as_str().to_string(),
        (None, Some((_, public_kind, api))) if *public_kind == kind => api.to_string(),
        _ => {
            return bad(format!(
                "`api_url` is needed for a {} that is not the public one (such as `https://ghe.example.com/api/v3`, `https://gitlab.example.com/api/v4` or `https://forgejo.example.com/api/v1`)",
                kind.name()
            ))
        }
    };
    let repository = match repository {
        Some(r) => r.as_str().to_string(),
        None => {
            let parts: Vec<&str> = parsed.path.split('/').filter(|p| !p.is_empty()).collect();
            let guess = parts[parts.len().saturating_sub(2)..].join("/");
            match RepositoryName::parse(&guess) {
                Ok(r) => r.0,
                Err(_) => {
                    return bad(format!(
                        "the remote `{remote}` ({url}) does not end in `owner/name`: write `repository = \"owner/name\"`"
                    ))
                }
            }
        }
    };
    let per = *per;
    let branch = match (branch, per) {
        (Some(b), Per::Run) if b.has_ticket() => {
            return bad(format!(
                "`branch = \"{}\"` names `{{ticket}}`, which is for `per = \"ticket\"`",
                b.as_str()
            ))
        }
        (Some(b), Per::Ticket) if !b.has_ticket() => {
            return bad(format!(
                "`per = \"ticket\"` needs `{{ticket}}` in `branch` (it is `\"{}\"`), so each ticket has its own branch",
                b.as_str()
            ))
        }
        (Some(b), _) => b.clone(),
        (None, Per::Run) => BranchTemplate("planwright/{run}".into()),
        (None, Per::Ticket) => BranchTemplate("planwright/{run}/{ticket}".into()),
    };
    let token_env: Vec<String> = match token_env {
        Some(v) => vec![v.0.clone()],
        None => kind.token_variables().iter().map(|s| s.to_string()).collect(),
    };
    let token = token_env
        .iter()
        .find_map(|name| Some((name.clone(), env.tokens.get(name)?.clone())))
        .filter(|(_, t)| !t.expose().trim().is_empty());
    Ok(ForgeSettings {
        kind,
        remote,
        api_url,
        repository,
        per,
        branch,
        draft: *draft,
        token_env,
        token,
    })
}

/// The variables a caller should read for [`Env::tokens`]: every default
/// one, and the one `[forge] token_env` names.
pub fn token_variables(file: &crate::file::Forge) -> Vec<String> {
    let mut names: Vec<String> = TOKEN_VARIABLES.iter().map(|s| s.to_string()).collect();
    if let Some(v) = &file.token_env {
        names.push(v.0.clone());
    }
    names
}
