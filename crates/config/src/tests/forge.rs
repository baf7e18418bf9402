//! `[forge]`: each key checked on its line, and what the remote implies.

use super::{parse, refusal};
use crate::forge::{self, ForgeKind, Per, RemoteUrl, Secret};
use crate::resolve::Env;
use crate::SettingsError;

fn env_with(tokens: &[(&str, &str)]) -> Env {
    Env {
        tokens: tokens
            .iter()
            .map(|(k, v)| (k.to_string(), Secret::new(*v)))
            .collect(),
        ..Env::default()
    }
}

fn settings(file: &str, url: &str, env: &Env) -> Result<crate::ForgeSettings, SettingsError> {
    forge::resolve(&parse(file).forge, url, env)
}

#[test]
fn the_public_hosts_give_kind_api_and_repository() {
    let env = env_with(&[("GH_TOKEN", "t1"), ("GITLAB_TOKEN", "t2"), ("GITEA_TOKEN", "t3")]);
    for (url, kind, api, repo) in [
        ("git@github.com:o/n.git", ForgeKind::Github, "https://api.github.com", "o/n"),
        ("https://gitlab.com/g/sub/n.git", ForgeKind::Gitlab, "https://gitlab.com/api/v4", "sub/n"),
        ("ssh://git@codeberg.org:22/o/n", ForgeKind::Forgejo, "https://codeberg.org/api/v1", "o/n"),
    ] {
        let s = settings("", url, &env).unwrap();
        assert_eq!((s.kind, s.api_url.as_str(), s.repository.as_str()), (kind, api, repo), "{url}");
        assert_eq!((s.remote.as_str(), s.per, s.draft), ("origin", Per::Run, false));
        assert_eq!(s.branch.expand("r1", None), "planwright/r1");
        assert!(s.token.is_some(), "{url}");
    }
}

#[test]
fn the_token_comes_from_the_first_variable_set_and_never_shows() {
    let both = env_with(&[("GITHUB_TOKEN", "a"), ("GH_TOKEN", "b")]);
    let s = settings("", "https://github.com/o/n", &both).unwrap();
    let (name, token) = s.token.clone().unwrap();
    assert_eq!((name.as_str(), token.expose()), ("GITHUB_TOKEN", "a"));
    assert!(!format!("{s:?}").contains("\"a\""));
    let named = settings("[forge]\ntoken_env = 'MY_T'\n", "https://github.com/o/n", &env_with(&[("GITHUB_TOKEN", "a"), ("MY_T", "m")])).unwrap();
    assert_eq!(named.token.unwrap().1.expose(), "m");
    assert_eq!(named.token_env, vec!["MY_T".to_string()]);
    let none = settings("", "https://github.com/o/n", &env_with(&[("GITLAB_TOKEN", "x"), ("GH_TOKEN", " ")])).unwrap();
    assert!(none.token.is_none());
    assert_eq!(none.token_env, vec!["GITHUB_TOKEN".to_string(), "GH_TOKEN".into()]);
    assert!(forge::token_variables(&parse("[forge]\ntoken_env = 'MY_T'\n").forge).contains(&"MY_T".to_string()));
}

#[test]
fn a_self_hosted_forge_needs_kind_and_api_url() {
    let env = Env::default();
    let url = "https://git.example.com/team/app.git";
    let Err(SettingsError::Forge(why)) = settings("", url, &env) else { panic!() };
    assert!(why.contains("`kind` is needed"), "{why}");
    let Err(SettingsError::Forge(why)) = settings("[forge]\nkind = 'gitea'\n", url, &env) else { panic!() };
    assert!(why.contains("`api_url` is needed"), "{why}");
    let s = settings("[forge]\nkind = 'gitea'\napi_url = 'https://git.example.com/api/v1/'\n", url, &env).unwrap();
    assert_eq!((s.kind, s.api_url.as_str(), s.repository.as_str()), (ForgeKind::Forgejo, "https://git.example.com/api/v1", "team/app"));
    // GitHub Enterprise on github.com's kind but another host.
    let Err(SettingsError::Forge(_)) = settings("[forge]\nkind = 'gitlab'\n", "https://github.com/o/n", &env) else { panic!() };
}

#[test]
fn per_ticket_branches_name_the_ticket() {
    let env = Env::default();
    let s = settings("[forge]\nper = 'ticket'\n", "https://github.com/o/n", &env).unwrap();
    assert_eq!(s.branch.expand("r1", Some("t-2")), "planwright/r1/t-2");
    let Err(SettingsError::Forge(why)) = settings("[forge]\nper = 'ticket'\nbranch = 'x/{run}'\n", "https://github.com/o/n", &env) else { panic!() };
    assert!(why.contains("needs `{ticket}`"), "{why}");
    let Err(SettingsError::Forge(why)) = settings("[forge]\nbranch = 'x/{ticket}'\n", "https://github.com/o/n", &env) else { panic!() };
    assert!(why.contains("for `per = \"ticket\"`"), "{why}");
    let Err(SettingsError::Forge(why)) = settings("[forge]\nrepository = 'o/n'\n", "/srv/x", &env) else { panic!() };
    assert!(why.contains("`kind` is needed"), "{why}");
}

#[test]
fn each_bad_value_is_refused_on_its_line() {
    for (text, says) in [
        ("[forge]\nkind = 'bitbucket'\n", "unknown variant"),
        ("[forge]\napi_url = 'http://ghe.example.com/api/v3'\n", "plain `http`"),
        ("[forge]\napi_url = 'ghe.example.com'\n", "has no scheme"),
        ("[forge]\nrepository = 'just-a-name'\n", "is not `owner/name`"),
        ("[forge]\ntoken_env = 'ghp_abc-123'\n", "never the token itself"),
        ("[forge]\nper = 'wave'\n", "unknown variant"),
        ("[forge]\nbranch = 'a/{id}'\n", "placeholder"),
        ("[forge]\nbranch = 'a..b/{run}'\n", "not a valid branch name"),
        ("[forge]\ndraft = 'yes'\n", "invalid type"),
        ("[forge]\ntoken = 'x'\n", "unknown field"),
    ] {
        let e = refusal(text).to_string();
        assert!(e.contains(says) && e.contains("line 2"), "{text}: {e}");
    }
    for loopback in ["http://127.0.0.1:8080/api/v3", "http://localhost/api", "http://[::1]:9/api"] {
        parse(&format!("[forge]\napi_url = '{loopback}'\n"));
    }
}

#[test]
fn remote_urls_are_taken_apart_as_git_reads_them() {
    let u = RemoteUrl::parse("git@host.example:team/app.git");
    assert_eq!((u.scheme.as_str(), u.host.as_deref(), u.path.as_str()), ("scp", Some("host.example"), "team/app"));
    let u = RemoteUrl::parse("https://user@Host.Example:8443/a/b/");
    assert_eq!((u.host.as_deref(), u.path.as_str(), u.is_http()), (Some("host.example"), "a/b", true));
    let u = RemoteUrl::parse("/srv/git/app.git");
    assert_eq!((u.scheme.as_str(), u.host, u.path.as_str()), ("file", None, "srv/git/app"));
}
