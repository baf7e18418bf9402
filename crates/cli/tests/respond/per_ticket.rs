//! Part of `respond.rs`: rounds on pull requests delivered with
//! `[forge] per = "ticket"`, one pull request per ticket.

use super::*;

#[test]
fn per_ticket_a_comment_on_bs_pull_request_is_a_round_of_b_on_its_branch_alone() {
    for api in [Api::Github, Api::Gitlab, Api::Forgejo] {
        let s = Setup::delivered_per(api, "", "ticket");
        let (a_head, a_pull) = s.pulls[0].clone();
        let a_tip = GitHttp::tip(&s.bare, &a_head).unwrap();
        let b_tip = GitHttp::tip(&s.bare, &s.head).unwrap();
        let c_tip = GitHttp::tip(&s.bare, &s.pulls[2].0).unwrap();
        s.env.fixture("B", 2, "b.txt", "B, as asked\n");
        s.forge
            .add_review_comment(REPO, s.pull, "ana", "b.txt", Some(1), "Capitalise.");
        let out = s.respond_ok();
        assert!(out.contains("round 1 on"), "{api:?}: {out}");
        assert_eq!(s.pushed("b.txt"), "B, as asked", "{api:?}");
        // One commit on top of B's branch: its change, nothing else.
        let tip = GitHttp::tip(&s.bare, &s.head).unwrap();
        assert_eq!(git(&s.bare, &["rev-parse", &format!("{tip}^")]), b_tip);
        let files = git(&s.bare, &["diff", "--name-only", &b_tip, &tip]);
        assert_eq!(files, "b.txt", "{api:?}");
        assert_eq!(GitHttp::tip(&s.bare, &a_head).unwrap(), a_tip, "{api:?}");
        let (c_head, c_pull) = s.pulls[2].clone();
        assert_eq!(GitHttp::tip(&s.bare, &c_head).unwrap(), c_tip, "{api:?}");
        assert!(s.replies_on(a_pull).is_empty() && s.replies_on(c_pull).is_empty());
        let replies = s.replies();
        assert_eq!(replies.len(), 1, "{api:?}: {replies:?}");
        assert!(
            replies[0].contains("Ticket `B` ran again")
                && replies[0].contains("Files changed:\n\n- `b.txt`\n"),
            "{api:?}: {}",
            replies[0]
        );
        // `deliver` again leaves the branch where the round left it.
        let out = s.command(&["deliver", "--repo", "repo"], false);
        assert!(out.status.success(), "{api:?}: {}", text(&out.stderr));
        assert_eq!(GitHttp::tip(&s.bare, &s.head).unwrap(), tip, "{api:?}");
        assert!(s.respond_ok().contains("nothing new"), "{api:?}");
    }
}

#[test]
fn per_ticket_one_respond_answers_each_pull_request_and_points_to_the_right_one() {
    let s = Setup::delivered_per(Api::Github, "", "ticket");
    let (a_head, a_pull) = s.pulls[0].clone();
    s.env.fixture("A", 2, "a.txt", "A again\n");
    s.env.fixture("B", 2, "b.txt", "B again\n");
    s.forge
        .add_review_comment(REPO, a_pull, "ana", "a.txt", Some(1), "for A");
    s.forge
        .add_review_comment(REPO, s.pull, "ana", "b.txt", Some(1), "for B");
    let out = s.respond_ok();
    assert_eq!(out.matches("round 1 on").count(), 2, "{out}");
    assert_eq!(s.pushed_on(&a_head, "a.txt"), "A again");
    assert_eq!(s.pushed("b.txt"), "B again");
    assert_eq!(s.pushed("a.txt"), "a", "A's round is A's pull request's");
    assert_eq!(s.replies_on(a_pull).len(), 1);
    assert_eq!(s.replies().len(), 1);
    // A ticket another pull request carries: a reply says where, and
    // nothing runs.
    s.forge
        .add_comment(REPO, s.pull, true, "ana", "/planwright ticket A\nagain");
    let out = s.respond_ok();
    assert!(out.contains("no round on"), "{out}");
    let replies = s.replies();
    assert_eq!(replies.len(), 2, "{replies:?}");
    assert!(
        replies[1].contains(&format!(
            "ticket 'A' is delivered by pull request #\u{200b}{a_pull} ('{a_head}'): comment there"
        )),
        "{}",
        replies[1]
    );
    let run = s.charter("A", 2);
    assert!(run.contains("for A"), "{run}");
    let runs = s.env.repo().join(".planwright/runs");
    let dir = std::fs::read_dir(&runs).unwrap().next().unwrap().unwrap();
    assert!(!dir.path().join("A/attempt-3.prompt.md").exists());
}

#[test]
fn per_ticket_watch_ends_when_every_pull_request_is_merged_or_closed() {
    let s = Setup::delivered_per(Api::Github, "", "ticket");
    let mut child = watch(&s, "1s");
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    for _ in &s.pulls {
        let line = lines.next().unwrap().unwrap();
        assert!(line.contains("nothing new"), "{line}");
    }
    s.forge.merge(REPO, s.pulls[0].1);
    s.forge.merge(REPO, s.pulls[1].1);
    s.forge.close_pull(REPO, s.pulls[2].1);
    let rest: Vec<String> = lines.map(Result::unwrap).collect();
    assert!(child.wait().unwrap().success(), "{rest:?}");
    let last = &rest[rest.len() - 3..];
    assert!(
        last[0].contains("is merged")
            && last[1].contains("is merged")
            && last[2].contains("is closed: nothing more"),
        "{rest:?}"
    );
}

#[test]
fn per_ticket_commits_pushed_on_a_lower_pull_request_are_taken_first() {
    let s = Setup::delivered_per(Api::Github, "", "ticket");
    // C merged after B: the run has gone past B's branch.
    let theirs = s.push_other("notes.txt", true);
    s.env.fixture("B", 2, "b.txt", "after theirs\n");
    s.forge
        .add_review_comment(REPO, s.pull, "ana", "b.txt", Some(1), "again");
    s.respond_ok();
    let tip = GitHttp::tip(&s.bare, &s.head).unwrap();
    assert_eq!(git(&s.bare, &["rev-parse", &format!("{tip}^")]), theirs);
    assert_eq!(s.pushed("notes.txt"), "theirs");
    assert_eq!(s.pushed("b.txt"), "after theirs");
    let files = git(&s.bare, &["ls-tree", "--name-only", &tip]);
    assert!(!files.contains("c.txt"), "{files}");
    // The run took their commit before the attempt: its merges hold it.
    let holding = git(&s.env.repo(), &["branch", "--contains", &theirs]);
    assert!(!holding.is_empty(), "no branch of the run holds theirs");
    let reply = &s.replies()[0];
    assert!(
        reply.contains("- `b.txt`") && !reply.contains("notes.txt"),
        "{reply}"
    );
    // Theirs conflicting with a ticket merged after B: nothing is pushed.
    let conflicting = s.push_other("c.txt", true);
    s.forge
        .add_review_comment(REPO, s.pull, "ana", "b.txt", Some(1), "more");
    let out = s.respond();
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("conflict with the run's merges in c.txt") && err.contains("hint:"),
        "{err}"
    );
    assert_eq!(GitHttp::tip(&s.bare, &s.head).unwrap(), conflicting);
    assert_eq!(s.replies().len(), 1);
}

#[test]
fn per_ticket_a_change_a_later_ticket_overlaps_is_not_carried_and_the_reply_says_why() {
    let s = Setup::delivered_with(Api::Github, "", "ticket", |env| {
        env.fixture("C", 1, "b.txt", "b, by C\n");
        0
    });
    let tip = GitHttp::tip(&s.bare, &s.head).unwrap();
    s.env.fixture("B", 2, "b.txt", "B again\n");
    s.forge
        .add_review_comment(REPO, s.pull, "ana", "b.txt", Some(1), "again");
    let out = s.respond_ok();
    assert!(out.contains("nothing changed (B)"), "{out}");
    assert_eq!(
        GitHttp::tip(&s.bare, &s.head).unwrap(),
        tip,
        "nothing pushed"
    );
    let replies = s.replies();
    assert_eq!(replies.len(), 1, "{replies:?}");
    assert!(
        replies[0].contains("its change conflicts on 'planwright/")
            && replies[0].contains("with the tickets merged after it, in b.txt"),
        "{}",
        replies[0]
    );
}

#[test]
fn per_ticket_a_ticket_that_did_not_merge_gets_a_reply_saying_how_to_deliver_it() {
    // C writes outside its scope on every attempt: it fails, and no pull
    // request carries it.
    let s = Setup::delivered_with(Api::Github, "", "ticket", |env| {
        env.fixture("C", 0, "x.txt", "out of scope\n");
        env.fixture("C", 1, "x.txt", "out of scope\n");
        1
    });
    assert_eq!(s.pulls.len(), 2, "{:?}", s.pulls);
    let tip = GitHttp::tip(&s.bare, &s.head).unwrap();
    s.forge
        .add_comment(REPO, s.pull, true, "ana", "/planwright ticket C\nfinish it");
    let out = s.respond_ok();
    assert!(out.contains("no round on"), "{out}");
    let replies = s.replies();
    assert_eq!(replies.len(), 1, "{replies:?}");
    assert!(
        replies[0].contains("ticket 'C' is on no pull request of this run (it did not merge): 'planwright run --rerun C', then 'planwright deliver', delivers it"),
        "{}",
        replies[0]
    );
    assert_eq!(
        GitHttp::tip(&s.bare, &s.head).unwrap(),
        tip,
        "nothing pushed"
    );
    let runs = s.env.repo().join(".planwright/runs");
    let run = std::fs::read_dir(&runs).unwrap().next().unwrap().unwrap();
    let attempts = std::fs::read_dir(run.path().join("C")).unwrap().count();
    let json = s.command(&["respond", "--repo", "repo", "--output", "json"], true);
    let lines: Vec<Value> = text(&json.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 2, "one line per pull request: {lines:?}");
    assert!(lines.iter().all(|l| l["outcome"] == "nothing"), "{lines:?}");
    let after = std::fs::read_dir(run.path().join("C")).unwrap().count();
    assert_eq!(attempts, after, "no attempt of C ran");
}
