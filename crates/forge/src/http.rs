//! The one HTTP path of every client: the request, its bounded retries and
//! waits, the reading of error statuses, and pagination.

use crate::{ForgeError, ForgeKind, Options, Repository, Token};
use serde_json::Value;
use std::time::Duration;

/// An HTTP method the clients use.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Method {
    Get,
    Post,
    Put,
    Patch,
    Delete,
}

impl Method {
    fn as_str(self) -> &'static str {
        match self {
            Method::Get => "GET",
            Method::Post => "POST",
            Method::Put => "PUT",
            Method::Patch => "PATCH",
            Method::Delete => "DELETE",
        }
    }
}

/// An answer the client reads: any status that is not retried.
#[derive(Debug)]
pub(crate) struct Reply {
    pub status: u16,
    headers: Vec<(String, String)>,
    pub body: String,
}

impl Reply {
    /// A header's value (names are compared without case).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    pub fn ok(&self) -> bool {
        (200..300).contains(&self.status)
    }

    /// The forge's own words: `message` (a string, a list, or GitLab's map
    /// of fields), `error`, and the messages of `errors`.
    pub fn message(&self) -> String {
        let Ok(v) = serde_json::from_str::<Value>(&self.body) else {
            return first_line(&self.body);
        };
        let mut parts = Vec::new();
        for key in ["message", "error", "error_description"] {
            collect_text(&v[key], &mut parts);
        }
        if let Some(errors) = v["errors"].as_array() {
            for e in errors {
                match (
                    e["message"].as_str(),
                    e["field"].as_str(),
                    e["code"].as_str(),
                ) {
                    (Some(m), _, _) => parts.push(m.to_string()),
                    (None, Some(f), Some(c)) => parts.push(format!("{f}: {c}")),
                    _ => collect_text(e, &mut parts),
                }
            }
        }
        parts.dedup();
        if parts.is_empty() {
            first_line(&self.body)
        } else {
            parts.join("; ")
        }
    }
}

fn collect_text(v: &Value, out: &mut Vec<String>) {
    match v {
        Value::String(s) if !s.is_empty() => out.push(s.clone()),
        Value::Array(items) => items.iter().for_each(|i| collect_text(i, out)),
        Value::Object(map) => {
            for (field, msgs) in map {
                let mut inner = Vec::new();
                collect_text(msgs, &mut inner);
                out.push(format!("{field} {}", inner.join(", ")));
            }
        }
        _ => {}
    }
}

fn first_line(text: &str) -> String {
    let line = text.lines().next().unwrap_or("").trim();
    if line.is_empty() {
        "(no message)".to_string()
    } else {
        line.chars().take(200).collect()
    }
}

/// The HTTP side of a client: where, as whom, how patiently.
pub(crate) struct Http {
    pub kind: ForgeKind,
    /// The API root, without a trailing `/`.
    pub api_url: String,
    pub repository: Repository,
    authorization: String,
    agent: ureq::Agent,
    options: Options,
}

impl std::fmt::Debug for Http {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Http")
            .field("kind", &self.kind)
            .field("api_url", &self.api_url)
            .field("repository", &self.repository)
            .field("authorization", &"<redacted>")
            .field("options", &self.options)
            .finish()
    }
}

/// Checks an API URL: `https`, or `http` for a loopback host only; no
/// credentials, query or fragment in it.
pub(crate) fn check_api_url(url: &str) -> Result<(String, bool), ForgeError> {
    let refuse = |reason: &str| ForgeError::ApiUrl {
        url: without_credentials(url),
        reason: reason.to_string(),
    };
    let (scheme, rest) = url
        .split_once("://")
        .ok_or_else(|| refuse("it has no scheme (`https://`)"))?;
    let authority = rest.split('/').next().unwrap_or("");
    if authority.contains('@') {
        return Err(refuse(
            "it holds credentials; pass the token through `token_env`",
        ));
    }
    if rest.contains('?') || rest.contains('#') {
        return Err(refuse("it has a query or a fragment"));
    }
    let host = host_of(authority);
    if host.is_empty() {
        return Err(refuse("it has no host"));
    }
    let loopback = matches!(host, "127.0.0.1" | "::1" | "localhost")
        || host.starts_with("127.") && host.split('.').all(|p| p.parse::<u8>().is_ok());
    match scheme.to_ascii_lowercase().as_str() {
        "https" => {}
        "http" if loopback => {}
        "http" => return Err(refuse("plain `http` is allowed for loopback hosts only")),
        _ => return Err(refuse("its scheme is neither `https` nor `http`")),
    }
    Ok((url.trim_end_matches('/').to_string(), loopback))
}

/// The URL with any `user:password@` replaced, so no message shows it.
fn without_credentials(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else {
        return url.to_string();
    };
    let end = rest.find('/').unwrap_or(rest.len());
    match rest[..end].rfind('@') {
        Some(at) => format!("{scheme}://<redacted>@{}", &rest[at + 1..]),
        None => url.to_string(),
    }
}

fn host_of(authority: &str) -> &str {
    if let Some(rest) = authority.strip_prefix('[') {
        return rest.split(']').next().unwrap_or("");
    }
    authority.split(':').next().unwrap_or("")
}

/// What one try of a request came to.
enum Try {
    Done(Reply),
    /// Worth another try after this wait.
    Again(Duration, ForgeError),
    Fail(ForgeError),
}

impl Http {
    /// The HTTP side of a client of `kind`, with `token` in the
    /// `Authorization` header as the forge takes it: `Bearer` on GitHub
    /// and GitLab (which takes personal, project and group tokens as OAuth
    /// bearers), `token` on Forgejo and Gitea.
    pub fn new(
        kind: ForgeKind,
        api_url: &str,
        repository: Repository,
        token: &Token,
        options: Options,
    ) -> Result<Http, ForgeError> {
        let (api_url, loopback) = check_api_url(api_url)?;
        let secret = token.secret();
        let authorization = match kind {
            ForgeKind::Github | ForgeKind::Gitlab => format!("Bearer {secret}"),
            ForgeKind::Forgejo => format!("token {secret}"),
        };
        let tls = ureq::tls::TlsConfig::builder()
            .root_certs(ureq::tls::RootCerts::PlatformVerifier)
            .build();
        let mut config = ureq::Agent::config_builder()
            .http_status_as_error(false)
            .timeout_global(Some(options.timeout))
            .user_agent(concat!("planwright/", env!("CARGO_PKG_VERSION")))
            // A renamed repository answers with a redirect on the same host.
            .redirect_auth_headers(ureq::config::RedirectAuthHeaders::SameHost)
            .tls_config(tls);
        if loopback {
            // A proxy from the environment cannot reach this machine's loopback.
            config = config.proxy(None);
        }
        Ok(Http {
            kind,
            api_url,
            repository,
            authorization,
            agent: config.build().new_agent(),
            options,
        })
    }

    /// Sends `method path` (relative to the API root, or an absolute URL
    /// on the same API from a `Link` header), retrying as the policy says;
    /// returns the first answer that is not retried.
    pub fn send(
        &self,
        method: Method,
        path: &str,
        body: Option<&Value>,
    ) -> Result<Reply, ForgeError> {
        let url = if path.starts_with("http://") || path.starts_with("https://") {
            // A page link is followed only under the API root: the token
            // goes nowhere else.
            if !under(&self.api_url, path) {
                let message = format!("a link leads off the API, to `{path}`");
                return Err(self.response_error(method, path, &message));
            }
            path.to_string()
        } else {
            format!("{}{path}", self.api_url)
        };
        let retry = self.options.retry;
        let mut backoff = retry.backoff;
        let mut tries = 0;
        loop {
            tries += 1;
            let outcome = self.try_once(method, &url, body, tries, &mut backoff);
            match outcome {
                Try::Done(reply) => return Ok(reply),
                Try::Fail(e) => return Err(e),
                Try::Again(_, e) if tries >= retry.attempts.max(1) => return Err(e),
                Try::Again(wait, _) => self.options.timer.sleep(wait),
            }
        }
    }

    fn try_once(
        &self,
        method: Method,
        url: &str,
        body: Option<&Value>,
        tries: u32,
        backoff: &mut Duration,
    ) -> Try {
        let request = ureq::http::Request::builder()
            .method(method.as_str())
            .uri(url)
            .header("Authorization", &self.authorization)
            .header("Accept", self.accept());
        let sent = match body {
            Some(v) => request
                .header("Content-Type", "application/json")
                .body(v.to_string())
                .map(|r| self.agent.run(r)),
            None => request.body(()).map(|r| self.agent.run(r)),
        };
        let response = match sent {
            Ok(r) => r,
            Err(e) => return Try::Fail(self.url_error(url, &e.to_string())),
        };
        match response {
            Ok(mut response) => {
                let status = response.status().as_u16();
                let headers = response
                    .headers()
                    .iter()
                    .map(|(k, v)| {
                        (
                            k.as_str().to_string(),
                            String::from_utf8_lossy(v.as_bytes()).into(),
                        )
                    })
                    .collect();
                let text = match response.body_mut().read_to_string() {
                    Ok(text) => text,
                    Err(e) => return self.network(method, &e, tries, backoff),
                };
                let reply = Reply {
                    status,
                    headers,
                    body: text,
                };
                self.judge(method, reply, tries, backoff)
            }
            Err(e) => self.network(method, &e, tries, backoff),
        }
    }

    fn accept(&self) -> &'static str {
        match self.kind {
            ForgeKind::Github => "application/vnd.github+json",
            _ => "application/json",
        }
    }

    fn url_error(&self, url: &str, message: &str) -> ForgeError {
        ForgeError::ApiUrl {
            url: url.to_string(),
            reason: message.to_string(),
        }
    }

    /// A reply: done, or a rate limit or server error worth another try.
    fn judge(&self, method: Method, reply: Reply, tries: u32, backoff: &mut Duration) -> Try {
        if let Some(asked) = self.rate_limit(&reply) {
            let wait = asked.unwrap_or(Duration::from_secs(60));
            let limited = ForgeError::RateLimited {
                kind: self.kind,
                retry_after: Some(wait),
            };
            if wait > self.options.retry.max_wait {
                return Try::Fail(limited);
            }
            return Try::Again(wait, limited);
        }
        // A POST creates: after a 5xx it may have, so it is not sent again.
        if reply.status >= 500 && method != Method::Post {
            let error = ForgeError::Server {
                kind: self.kind,
                status: reply.status,
                attempts: tries,
                message: reply.message(),
            };
            return Try::Again(next_backoff(backoff), error);
        }
        if reply.status >= 500 {
            return Try::Fail(ForgeError::Server {
                kind: self.kind,
                status: reply.status,
                attempts: tries,
                message: reply.message(),
            });
        }
        Try::Done(reply)
    }

    /// `Some(wait)` when the reply is a rate limit (429, or GitHub's 403
    /// with a rate-limit header or message), with the wait the forge asked
    /// for when it said.
    fn rate_limit(&self, reply: &Reply) -> Option<Option<Duration>> {
        let remaining_zero = reply.header("x-ratelimit-remaining") == Some("0")
            || reply.header("ratelimit-remaining") == Some("0");
        let limited = match reply.status {
            429 => true,
            403 => {
                reply.header("retry-after").is_some()
                    || remaining_zero
                    || reply.message().to_ascii_lowercase().contains("rate limit")
            }
            _ => false,
        };
        if !limited {
            return None;
        }
        if let Some(secs) = reply
            .header("retry-after")
            .and_then(|v| v.trim().parse::<u64>().ok())
        {
            return Some(Some(Duration::from_secs(secs)));
        }
        let reset = reply
            .header("x-ratelimit-reset")
            .or_else(|| reply.header("ratelimit-reset"))
            .and_then(|v| v.trim().parse::<u64>().ok());
        if let Some(reset) = reset {
            let now = self
                .options
                .timer
                .now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_secs());
            return Some(Some(Duration::from_secs(reset.saturating_sub(now).max(1))));
        }
        Some(None)
    }

    /// A request that got no answer: retried after a backoff when it
    /// cannot have done anything twice.
    fn network(&self, method: Method, e: &ureq::Error, tries: u32, backoff: &mut Duration) -> Try {
        let error = ForgeError::Network {
            kind: self.kind,
            api_url: self.api_url.clone(),
            attempts: tries,
            message: e.to_string(),
        };
        let never_sent = matches!(e, ureq::Error::ConnectionFailed | ureq::Error::HostNotFound)
            || matches!(e, ureq::Error::Io(io) if io.kind() == std::io::ErrorKind::ConnectionRefused);
        match e {
            ureq::Error::BadUri(m) => Try::Fail(self.url_error(&self.api_url, m)),
            _ if method != Method::Post || never_sent => Try::Again(next_backoff(backoff), error),
            _ => Try::Fail(error),
        }
    }

    /// The JSON of a 2xx reply; any other status as its error. `what`
    /// names the thing a 404 is about ("pull request 7"); `None` when the
    /// path is the repository itself.
    pub fn json(
        &self,
        method: Method,
        path: &str,
        body: Option<&Value>,
        what: Option<&str>,
    ) -> Result<Value, ForgeError> {
        let reply = self.send(method, path, body)?;
        if !reply.ok() {
            return Err(self.error(method, path, &reply, what));
        }
        self.parse(method, path, &reply)
    }

    pub fn parse(&self, method: Method, path: &str, reply: &Reply) -> Result<Value, ForgeError> {
        serde_json::from_str(&reply.body)
            .map_err(|e| self.response_error(method, path, &e.to_string()))
    }

    pub fn response_error(&self, method: Method, path: &str, message: &str) -> ForgeError {
        ForgeError::Response {
            kind: self.kind,
            method: method.as_str().to_string(),
            path: strip_query(path).to_string(),
            message: message.to_string(),
        }
    }

    /// The error of a reply that is not 2xx (rate limits and 5xx were
    /// handled by `send`). A 404 about a thing is told apart from a 404
    /// about the repository by asking for the repository.
    pub fn error(
        &self,
        method: Method,
        path: &str,
        reply: &Reply,
        what: Option<&str>,
    ) -> ForgeError {
        match reply.status {
            401 | 403 => ForgeError::Unauthorized {
                kind: self.kind,
                status: reply.status,
                message: reply.message(),
            },
            404 => match what {
                Some(what) if self.repository_exists() => ForgeError::NotFound {
                    kind: self.kind,
                    repository: self.repository.clone(),
                    what: what.to_string(),
                },
                _ => ForgeError::RepositoryNotFound {
                    kind: self.kind,
                    repository: self.repository.clone(),
                },
            },
            400 | 409 | 422 => ForgeError::Validation {
                kind: self.kind,
                status: reply.status,
                message: reply.message(),
            },
            status => ForgeError::Unexpected {
                kind: self.kind,
                status,
                method: method.as_str().to_string(),
                path: strip_query(path).to_string(),
                message: reply.message(),
            },
        }
    }

    /// Whether the repository answers (used only to read a 404).
    fn repository_exists(&self) -> bool {
        let path = match self.kind {
            ForgeKind::Gitlab => format!("/projects/{}", encode(self.repository.as_str())),
            _ => format!("/repos/{}", self.repository),
        };
        matches!(self.send(Method::Get, &path, None), Ok(r) if r.ok())
    }

    /// Every item of a listing, following `Link: <…>; rel="next"` (GitHub,
    /// Forgejo) or `x-next-page` (GitLab) to the last page.
    pub fn all_pages(&self, first: &str, what: Option<&str>) -> Result<Vec<Value>, ForgeError> {
        self.all_pages_in(first, None, what)
    }

    /// Every item of a listing whose pages are objects holding the items
    /// under `key` (GitHub's `check_runs`), or arrays when `key` is `None`.
    pub fn all_pages_in(
        &self,
        first: &str,
        key: Option<&str>,
        what: Option<&str>,
    ) -> Result<Vec<Value>, ForgeError> {
        let mut items = Vec::new();
        let mut next = Some(first.to_string());
        let mut pages = 0;
        while let Some(path) = next.take() {
            pages += 1;
            if pages > 1000 {
                return Err(self.response_error(Method::Get, first, "more than 1000 pages"));
            }
            let reply = self.send(Method::Get, &path, None)?;
            if !reply.ok() {
                return Err(self.error(Method::Get, &path, &reply, what));
            }
            let mut page = self.parse(Method::Get, &path, &reply)?;
            if let Some(key) = key {
                page = page[key].take();
            }
            match page {
                Value::Array(page) => items.extend(page),
                _ => return Err(self.response_error(Method::Get, &path, "expected a JSON array")),
            }
            next = next_page(&reply, &path);
        }
        Ok(items)
    }
}

/// Whether `url` is the API root or beneath it (`root/…` or `root?…`).
fn under(root: &str, url: &str) -> bool {
    url.strip_prefix(root)
        .is_some_and(|rest| rest.is_empty() || rest.starts_with('/') || rest.starts_with('?'))
}

fn next_backoff(backoff: &mut Duration) -> Duration {
    let wait = *backoff;
    *backoff = backoff.saturating_mul(2);
    wait
}

fn strip_query(path: &str) -> &str {
    path.split('?').next().unwrap_or(path)
}

/// The next page's path or URL: GitLab's `x-next-page` (empty on the
/// last page) set on the current path's `page`, else the `Link` header's
/// `rel="next"` (GitHub, Forgejo; GitLab sends one too).
fn next_page(reply: &Reply, current: &str) -> Option<String> {
    if let Some(page) = reply.header("x-next-page") {
        let page = page.trim();
        return (!page.is_empty()).then(|| with_query(current, "page", page));
    }
    let link = reply.header("link")?;
    for part in link.split(',') {
        let mut pieces = part.split(';');
        let target = pieces.next()?.trim();
        if pieces.any(|p| p.trim().replace(' ', "") == "rel=\"next\"") {
            return Some(
                target
                    .trim_start_matches('<')
                    .trim_end_matches('>')
                    .to_string(),
            );
        }
    }
    None
}

/// `path` with `key=value` set in its query (replacing a former one).
pub(crate) fn with_query(path: &str, key: &str, value: &str) -> String {
    let (base, query) = path.split_once('?').unwrap_or((path, ""));
    let mut pairs: Vec<String> = query
        .split('&')
        .filter(|p| !p.is_empty() && p.split('=').next() != Some(key))
        .map(str::to_string)
        .collect();
    pairs.push(format!("{key}={value}"));
    format!("{base}?{}", pairs.join("&"))
}

/// Percent-encodes a path segment or a query value (a GitLab project
/// path's `/` included).
pub(crate) fn encode(text: &str) -> String {
    percent_encoding::utf8_percent_encode(text, percent_encoding::NON_ALPHANUMERIC)
        .to_string()
        .replace("%2D", "-")
        .replace("%5F", "_")
        .replace("%2E", ".")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn api_urls_are_https_or_loopback_http() {
        assert!(check_api_url("https://api.github.com").is_ok());
        assert!(check_api_url("http://127.0.0.1:8080/api/v4/").is_ok());
        assert!(check_api_url("http://[::1]:80").is_ok());
        assert!(check_api_url("http://localhost:3000/api/v1").is_ok());
        for bad in [
            "http://gitlab.example.com/api/v4",
            "http://127.0.0.1.example.com",
            "https://user:pw@api.github.com",
            "https://api.github.com/?access_token=x",
            "ftp://example.com",
            "api.github.com",
        ] {
            assert!(check_api_url(bad).is_err(), "{bad} accepted");
        }
    }

    #[test]
    fn links_are_followed_only_under_the_api_root() {
        let root = "https://ghe.example.com/api/v3";
        assert!(under(
            root,
            "https://ghe.example.com/api/v3/repositories/1/pulls?page=2"
        ));
        assert!(under(root, "https://ghe.example.com/api/v3?page=2"));
        assert!(!under(root, "https://ghe.example.com/api/v3x/pulls"));
        assert!(!under(root, "https://evil.example.com/api/v3/pulls"));
        assert!(!under(
            root,
            "https://ghe.example.com.evil.com/api/v3/pulls"
        ));
        assert!(!under(root, "http://ghe.example.com/api/v3/pulls"));
    }

    #[test]
    fn a_refused_url_never_shows_its_credentials() {
        let err = check_api_url("https://bot:ghp_secret@api.github.com/x").unwrap_err();
        assert!(!err.to_string().contains("ghp_secret"), "{err}");
        assert!(
            err.to_string()
                .contains("https://<redacted>@api.github.com/x"),
            "{err}"
        );
    }

    #[test]
    fn queries_are_set_once() {
        assert_eq!(
            with_query("/a?per_page=2&page=1", "page", "2"),
            "/a?per_page=2&page=2"
        );
        assert_eq!(with_query("/a", "page", "3"), "/a?page=3");
    }

    fn headers(pairs: &[(&str, &str)]) -> Reply {
        Reply {
            status: 200,
            headers: pairs
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
            body: "[]".into(),
        }
    }

    #[test]
    fn the_next_page_is_gitlabs_header_else_the_link() {
        let gitlab = headers(&[("x-next-page", "3"), ("x-page", "2")]);
        assert_eq!(
            next_page(&gitlab, "/p?per_page=2&page=2").unwrap(),
            "/p?per_page=2&page=3"
        );
        let last = headers(&[
            ("x-next-page", ""),
            ("link", "<https://h/p?page=1>; rel=\"first\""),
        ]);
        assert_eq!(next_page(&last, "/p?page=4"), None);
        let link = r#"<https://api.github.com/r?page=2>; rel="next", <https://api.github.com/r?page=5>; rel="last""#;
        assert_eq!(
            next_page(&headers(&[("Link", link)]), "/r").unwrap(),
            "https://api.github.com/r?page=2"
        );
        let only_prev = r#"<https://h/r?page=1>; rel="prev""#;
        assert_eq!(next_page(&headers(&[("link", only_prev)]), "/r"), None);
        assert_eq!(next_page(&headers(&[]), "/r"), None);
    }

    #[test]
    fn gitlab_paths_encode_their_slashes() {
        assert_eq!(encode("group/sub-1/my_repo.x"), "group%2Fsub-1%2Fmy_repo.x");
    }

    #[test]
    fn messages_are_read_from_each_forge_shape() {
        let reply = |body: &str| Reply {
            status: 422,
            headers: vec![],
            body: body.into(),
        };
        let github = r#"{"message":"Validation Failed","errors":[{"resource":"PullRequest","code":"custom","message":"A pull request already exists for o:b."}]}"#;
        assert_eq!(
            reply(github).message(),
            "Validation Failed; A pull request already exists for o:b."
        );
        let gitlab = r#"{"message":["Another open merge request already exists for this source branch: !1"]}"#;
        assert!(reply(gitlab)
            .message()
            .starts_with("Another open merge request"));
        let fields = r#"{"message":{"title":["can't be blank"]}}"#;
        assert_eq!(reply(fields).message(), "title can't be blank");
        assert_eq!(reply("").message(), "(no message)");
    }
}
