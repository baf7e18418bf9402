//! The three clients against the three fake forges of `planwright-testkit`:
//! every operation, pagination, every error class, draft toggling, the
//! token kept out of URLs and `Debug` (`errors`), and the pull-request
//! loop's reads and writes (`feedback`).

mod delivery;
mod errors;
mod feedback;
mod live;

use planwright_forge::{
    connect, connect_with, CommentOn, Endpoint, Forge, ForgeError, ForgeKind, IssueState,
    NewPullRequest, Options, PullRequestUpdate, PullState, Repository, RetryPolicy, Timer, Token,
};
use planwright_testkit::forge::{Api, FakeForge, Fault, BOT, TOKEN};
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

const REPO: &str = "acme/widgets";
const HEAD: &str = "planwright/run-1";

/// A timer that records the waits it is asked for and returns at once.
struct Waits {
    slept: Mutex<Vec<Duration>>,
    now: SystemTime,
}

impl Timer for Waits {
    fn sleep(&self, duration: Duration) {
        self.slept.lock().unwrap().push(duration);
    }
    fn now(&self) -> SystemTime {
        self.now
    }
}

/// The fixed "now" of every test's timer.
const NOW: u64 = 1_800_000_000;

/// The client is dropped first: its kept-alive connections close, so the
/// fake's threads end at once.
struct Setup {
    forge: Box<dyn Forge>,
    fake: FakeForge,
    waits: Arc<Waits>,
    kind: ForgeKind,
}

impl Setup {
    fn slept(&self) -> Vec<Duration> {
        self.waits.slept.lock().unwrap().clone()
    }

    fn new_pull(&self, head: &str, draft: bool) -> NewPullRequest {
        NewPullRequest {
            title: format!("Deliver {head}"),
            body: "What was verified.".into(),
            head: head.into(),
            base: "main".into(),
            draft,
        }
    }

    /// A client of the same fake with another token or repository.
    fn other(&self, repository: &str, token: &str) -> Box<dyn Forge> {
        client(&self.fake, self.kind, repository, token, self.waits.clone())
    }
}

fn kind_of(api: Api) -> ForgeKind {
    match api {
        Api::Github => ForgeKind::Github,
        Api::Gitlab => ForgeKind::Gitlab,
        Api::Forgejo => ForgeKind::Forgejo,
    }
}

fn client(
    fake: &FakeForge,
    kind: ForgeKind,
    repository: &str,
    token: &str,
    waits: Arc<Waits>,
) -> Box<dyn Forge> {
    let endpoint = Endpoint {
        kind,
        api_url: fake.api_url(),
        repository: Repository::parse(repository).unwrap(),
        token: Token::new(token),
    };
    let options = Options {
        retry: RetryPolicy {
            attempts: 3,
            backoff: Duration::from_secs(1),
            max_wait: Duration::from_secs(60),
        },
        timer: waits,
        timeout: Duration::from_secs(20),
    };
    connect_with(&endpoint, options).unwrap()
}

fn setup(api: Api) -> Setup {
    let fake = FakeForge::start(api);
    fake.add_repository(REPO);
    fake.add_branch(REPO, HEAD);
    let waits = Arc::new(Waits {
        slept: Mutex::new(Vec::new()),
        now: UNIX_EPOCH + Duration::from_secs(NOW),
    });
    let kind = kind_of(api);
    let forge = client(&fake, kind, REPO, TOKEN, waits.clone());
    Setup {
        forge,
        fake,
        waits,
        kind,
    }
}

const APIS: [Api; 3] = [Api::Github, Api::Gitlab, Api::Forgejo];
