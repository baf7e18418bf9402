//! GitHub REST v3 (github.com and GitHub Enterprise Server).
//!
//! Pull requests are `/repos/{owner}/{repo}/pulls`; comments in a pull
//! request's conversation are its issue's comments. The REST `PATCH` of a
//! pull request ignores `draft`, so draft state is changed with the
//! GraphQL mutations `convertPullRequestToDraft` and
//! `markPullRequestReadyForReview` on the pull request's `node_id`.

use crate::http::{encode, Http, Method};
use crate::hub::Hub;
use crate::shape::{choose, not_found, tail, update_fields};
use crate::{
    Check, CheckState, Comment, CommentOn, Forge, ForgeError, ForgeKind, Issue, IssueLink,
    IssueQuery, LinkKind, NewPullRequest, Options, Permission, PullRequest, PullRequestUpdate,
    Repository, RepositoryInfo, Review, ReviewComment, Token,
};
use serde_json::{json, Value};

/// The GitHub client: the GitHub-shaped layer, and GraphQL for drafts.
#[derive(Debug)]
pub(crate) struct Github {
    hub: Hub,
    graphql_url: String,
}

impl Github {
    pub fn new(
        api_url: &str,
        repository: Repository,
        token: &Token,
        options: Options,
    ) -> Result<Github, ForgeError> {
        let http = Http::new(ForgeKind::Github, api_url, repository, token, options)?;
        let graphql_url = graphql_url(&http.api_url);
        Ok(Github {
            hub: Hub::new(http, "per_page=100", &[]),
            graphql_url,
        })
    }

    fn http(&self) -> &Http {
        &self.hub.http
    }

    /// A milestone's number, by its title.
    fn milestone(&self, title: &str) -> Result<u64, ForgeError> {
        let path = self.hub.listing("milestones?state=all");
        let found = self.http().all_pages(&path, None)?;
        let milestone = found.iter().find(|m| m["title"].as_str() == Some(title));
        match milestone {
            Some(m) => self.hub.body(Method::Get, &path).number(m, "number"),
            None => Err(not_found(self.http(), format!("milestone `{title}`"))),
        }
    }

    /// The issues a links listing names; none when the endpoint is not
    /// there (an older GitHub Enterprise Server) or, for `parent`, when
    /// the issue has none.
    fn linked(&self, issue: u64, tail: &str, kind: LinkKind) -> Result<Vec<IssueLink>, ForgeError> {
        let path = format!("{}/issues/{issue}/{tail}", self.hub.repo());
        let reply = self.http().send(Method::Get, &path, None)?;
        if reply.status == 404 {
            let what = format!("issue {issue}");
            return match self.issue(issue)? {
                Some(_) => Ok(Vec::new()),
                None => Err(self.http().error(Method::Get, &path, &reply, Some(&what))),
            };
        }
        if !reply.ok() {
            return Err(self.http().error(Method::Get, &path, &reply, None));
        }
        let items = match self.http().parse(Method::Get, &path, &reply)? {
            Value::Array(items) => items,
            // `parent` is one issue.
            one => vec![one],
        };
        self.hub.links(&path, &items, kind, |v| {
            v["repository_url"].as_str()?.split("/repos/").nth(1)
        })
    }

    /// Runs one GraphQL mutation on a pull request's node id.
    fn mutate(&self, mutation: &str, node_id: &str) -> Result<(), ForgeError> {
        let query = format!(
            "mutation($id: ID!) {{ {mutation}(input: {{pullRequestId: $id}}) {{ pullRequest {{ isDraft }} }} }}"
        );
        let request = json!({ "query": query, "variables": { "id": node_id } });
        let v = self
            .http()
            .json(Method::Post, &self.graphql_url, Some(&request), None)?;
        // GraphQL answers 200 with `errors` when it refuses.
        if let Some(errors) = v["errors"].as_array().filter(|e| !e.is_empty()) {
            let message = errors
                .iter()
                .filter_map(|e| e["message"].as_str())
                .collect::<Vec<_>>()
                .join("; ");
            return Err(ForgeError::Validation {
                kind: ForgeKind::Github,
                status: 200,
                message,
            });
        }
        Ok(())
    }
}

/// GitHub's GraphQL endpoint beside a REST root: `https://api.github.com`
/// -> `https://api.github.com/graphql`; GitHub Enterprise's
/// `https://HOST/api/v3` -> `https://HOST/api/graphql`.
fn graphql_url(api_url: &str) -> String {
    match api_url.strip_suffix("/api/v3") {
        Some(host) => format!("{host}/api/graphql"),
        None => format!("{api_url}/graphql"),
    }
}

impl Forge for Github {
    fn kind(&self) -> ForgeKind {
        ForgeKind::Github
    }

    fn repository(&self) -> &Repository {
        &self.http().repository
    }

    fn login(&self) -> Result<String, ForgeError> {
        self.hub.login()
    }

    fn repository_info(&self) -> Result<RepositoryInfo, ForgeError> {
        let path = self.hub.repo();
        let v = self.http().json(Method::Get, &path, None, None)?;
        let b = self.hub.body(Method::Get, &path);
        Ok(RepositoryInfo {
            full_name: b.required(&v, "full_name")?,
            url: b.required(&v, "html_url")?,
            default_branch: b.required(&v, "default_branch")?,
        })
    }

    fn find_pull_request(&self, head: &str) -> Result<Option<PullRequest>, ForgeError> {
        let owner = self.http().repository.owner();
        let query = encode(&format!("{owner}:{head}"));
        let path = self.hub.listing(&format!("pulls?head={query}&state=all"));
        let items = self.http().all_pages(&path, None)?;
        let pulls = items
            .iter()
            .map(|v| self.hub.pull(Method::Get, &path, v))
            .collect::<Result<Vec<_>, _>>()?;
        // The filter is the forge's; a branch of another name never counts.
        Ok(choose(
            pulls.into_iter().filter(|p| p.head == head).collect(),
        ))
    }

    fn open_pull_request(&self, new: &NewPullRequest) -> Result<PullRequest, ForgeError> {
        let path = format!("{}/pulls", self.hub.repo());
        let request = json!({
            "title": new.title,
            "body": new.body,
            "head": new.head,
            "base": new.base,
            "draft": new.draft,
        });
        let v = self
            .http()
            .json(Method::Post, &path, Some(&request), None)?;
        self.hub.pull(Method::Post, &path, &v)
    }

    fn update_pull_request(
        &self,
        number: u64,
        update: &PullRequestUpdate,
    ) -> Result<PullRequest, ForgeError> {
        let path = format!("{}/pulls/{number}", self.hub.repo());
        let what = format!("pull request {number}");
        let current = match update_fields(update.title.clone(), update, ["body", "base"]) {
            None => self.http().json(Method::Get, &path, None, Some(&what))?,
            Some(request) => self
                .http()
                .json(Method::Patch, &path, Some(&request), Some(&what))?,
        };
        let pull = self.hub.pull(Method::Patch, &path, &current)?;
        match update.draft {
            Some(draft) if draft != pull.draft => {
                let node_id = self
                    .hub
                    .body(Method::Get, &path)
                    .required(&current, "node_id")?;
                let mutation = if draft {
                    "convertPullRequestToDraft"
                } else {
                    "markPullRequestReadyForReview"
                };
                self.mutate(mutation, &node_id)?;
                self.pull_request(number)
            }
            _ => Ok(pull),
        }
    }

    fn pull_request(&self, number: u64) -> Result<PullRequest, ForgeError> {
        self.hub.pull_request(number)
    }

    fn issue(&self, number: u64) -> Result<Option<Issue>, ForgeError> {
        self.hub.issue(number)
    }

    fn post_comment(&self, on: CommentOn, body: &str) -> Result<Comment, ForgeError> {
        self.hub.post_comment(on, body)
    }

    fn comments(&self, on: CommentOn) -> Result<Vec<Comment>, ForgeError> {
        self.hub.comments(on)
    }

    fn issues(&self, query: &IssueQuery) -> Result<Vec<Issue>, ForgeError> {
        let mut path = self.hub.listing("issues?state=open");
        if !query.labels.is_empty() {
            path.push_str(&format!("&labels={}", encode(&query.labels.join(","))));
        }
        if let Some(title) = &query.milestone {
            path.push_str(&format!("&milestone={}", self.milestone(title)?));
        }
        self.hub.issues_of(&path)
    }

    fn add_labels(&self, issue: u64, labels: &[String]) -> Result<(), ForgeError> {
        let path = format!("{}/issues/{issue}/labels", self.hub.repo());
        let request = json!({ "labels": labels });
        let what = format!("issue {issue}");
        self.http()
            .json(Method::Post, &path, Some(&request), Some(&what))
            .map(drop)
    }

    fn remove_label(&self, issue: u64, label: &str) -> Result<(), ForgeError> {
        let path = format!(
            "{}/issues/{issue}/labels/{}",
            self.hub.repo(),
            encode(label)
        );
        self.hub.unlabel(issue, &path)
    }

    fn permission(&self, user: &str) -> Result<Permission, ForgeError> {
        self.hub.permission(user, permission_of)
    }

    fn reviews(&self, pull: u64) -> Result<Vec<Review>, ForgeError> {
        self.hub.reviews(pull)
    }

    fn review_comments(&self, pull: u64) -> Result<Vec<ReviewComment>, ForgeError> {
        let path = self.hub.listing(&format!("pulls/{pull}/comments"));
        let items = self
            .http()
            .all_pages(&path, Some(&format!("pull request {pull}")))?;
        let b = self.hub.body(Method::Get, &path);
        let comment = |v: &Value| {
            Ok(ReviewComment {
                id: b.number(v, "id")?,
                author: b.text(v, "user.login"),
                body: b.text(v, "body"),
                path: b.required(v, "path")?,
                // `line` is null on an outdated comment or one on the file.
                line: v["line"].as_u64(),
                created_at: b.text(v, "created_at"),
            })
        };
        items.iter().map(comment).collect()
    }

    fn checks(&self, pull: u64) -> Result<Vec<Check>, ForgeError> {
        let sha = self.hub.head_sha(pull)?;
        let path = self
            .hub
            .listing(&format!("commits/{}/check-runs", encode(&sha)));
        let runs = self.http().all_pages_in(&path, Some("check_runs"), None)?;
        let b = self.hub.body(Method::Get, &path);
        let mut checks = Vec::new();
        for v in &runs {
            let state = match (
                b.text(v, "status").as_str(),
                b.text(v, "conclusion").as_str(),
            ) {
                ("completed", "success") => CheckState::Success,
                ("completed", "failure" | "timed_out" | "action_required" | "startup_failure") => {
                    CheckState::Failure
                }
                ("completed", _) => CheckState::Skipped,
                _ => CheckState::Pending,
            };
            let text = b.text(v, "output.text");
            let summary = [b.text(v, "output.title"), b.text(v, "output.summary")];
            checks.push(Check {
                name: b.required(v, "name")?,
                state,
                url: v["html_url"].as_str().map(str::to_string),
                summary: summary
                    .into_iter()
                    .filter(|s| !s.is_empty())
                    .collect::<Vec<_>>()
                    .join(": "),
                log_tail: (!text.is_empty()).then(|| tail(&text)),
            });
        }
        checks.extend(self.hub.status_checks(&sha, "state")?);
        Ok(checks)
    }

    fn issue_links(&self, issue: u64) -> Result<Vec<IssueLink>, ForgeError> {
        let mut links = self.linked(issue, "dependencies/blocked_by", LinkKind::BlockedBy)?;
        links.extend(self.linked(issue, "dependencies/blocking", LinkKind::Blocks)?);
        links.extend(self.linked(issue, "sub_issues", LinkKind::Child)?);
        links.extend(self.linked(issue, "parent", LinkKind::Parent)?);
        Ok(links)
    }
}

/// GitHub's permission names, as `permission` reports them (maintain is
/// `write`, triage is `read` there).
fn permission_of(name: &str) -> Permission {
    match name {
        "admin" => Permission::Admin,
        "write" | "maintain" => Permission::Write,
        "read" | "triage" => Permission::Read,
        _ => Permission::None,
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn graphql_sits_beside_the_rest_root() {
        assert_eq!(
            super::graphql_url("https://api.github.com"),
            "https://api.github.com/graphql"
        );
        assert_eq!(
            super::graphql_url("https://ghe.example.com/api/v3"),
            "https://ghe.example.com/api/graphql"
        );
    }
}
