//! The `acp` agent: any program that speaks the Agent Client Protocol
//! (JSON-RPC 2.0, one message a line, over its stdin and stdout), with
//! planwright as a client that lends nothing: no `fs` and no `terminal`
//! capability, permission requests answered by [`policy`], each answer
//! logged. The program is started from a template as `cmd` starts its
//! own, confined the same way.

pub(crate) mod known;
mod policy;
mod probe;
mod session;

use super::limits::{self, Now};
use super::{
    add_attempt_env, agent_env, blocked_reason, record_env, Agent, AgentOptions, AgentOutcome,
    AgentReport, AttemptContext, CmdAgent, CostSource,
};
use crate::error::EngineError;
use planwright_config::Prices;
use planwright_os::process::{self, Cancel, LineSink, Spec};
use serde_json::Value;
pub(crate) use session::{not_offered, offered_as};
use session::{Ended, Session, TurnEnd};
use std::io::Write;
use std::sync::{mpsc, Arc};
use std::time::{Duration, Instant};

/// The ACP version planwright speaks (the `protocolVersion` of
/// `initialize`); an agent that answers with another fails the attempt.
pub(crate) const PROTOCOL_VERSION: u64 = 1;

/// How long an agent has, once its turn is over or cancelled, to end.
const GRACE: Duration = Duration::from_secs(5);

/// An ACP agent started from a command template.
pub(crate) struct Acp {
    cmd: CmdAgent,
    env: Vec<String>,
    /// `[agent] model`, over the attempt's.
    model: Option<String>,
    prices: Prices,
    /// The longest line of the agent's output read, in bytes.
    line_limit: u64,
    /// The agent, when planwright knows its program ([`known::KNOWN`]).
    known: Option<&'static known::KnownAcp>,
    /// The adapter whose set-up the agent gets (`[agent] state`, else the
    /// known agent's, else the CLI's of that file name: `gemini --acp`):
    /// that CLI's slot home, environment names, hosts and model family,
    /// as the CLI's own adapter gives them.
    cli: Option<Box<dyn Agent>>,
}

impl Acp {
    /// Parses `template` (`"gemini --acp"`), placeholders as for `cmd`.
    pub(crate) fn new(template: &str, opts: &AgentOptions) -> Result<Acp, EngineError> {
        let cmd = CmdAgent::new(template)?;
        let file = cmd.program().and_then(|p| {
            let name = std::path::Path::new(&p).file_name()?.to_str()?.to_string();
            Some(name)
        });
        let known = file.as_deref().and_then(known::known);
        let state = match &opts.state {
            Some(name) => Some(super::adapter(name).ok_or_else(|| {
                EngineError::Settings(format!(
                    "`[agent] state = \"{name}\"` names no adapter whose set-up an ACP agent could get; use one of {}",
                    super::ADAPTERS
                        .iter()
                        .map(|a| format!("`{}`", a.name))
                        .collect::<Vec<_>>()
                        .join(", ")
                ))
            })?),
            None => known
                .and_then(|k| super::adapter(k.state))
                .or_else(|| file.as_deref().and_then(super::adapter)),
        };
        let cli = state.map(|adapter| {
            adapter.agent(&AgentOptions {
                program: None,
                cmd: None,
                ..opts.clone()
            })
        });
        Ok(Acp {
            cmd,
            env: opts.env.clone(),
            model: opts.model.clone(),
            prices: opts.prices.clone(),
            line_limit: opts.line_limit,
            known,
            cli,
        })
    }

    /// Which set-up the agent gets, for preflight: `the set-up of
    /// \`claude\``, or none.
    pub(crate) fn setup(&self) -> String {
        match &self.cli {
            Some(cli) => format!("the `{}` adapter's set-up (slot home, environment, hosts)", cli.name()),
            None => "no CLI's set-up (the base environment and `[agent] env` only); name one with `[agent] state`".into(),
        }
    }
}

impl Agent for Acp {
    fn name(&self) -> &str {
        "acp"
    }

    fn program(&self) -> Option<String> {
        self.cmd.program()
    }

    fn family(&self) -> Option<&'static str> {
        self.cli.as_ref()?.family()
    }

    fn model(&self) -> Option<&str> {
        self.model.as_deref()
    }

    fn hosts(&self) -> &'static [&'static str] {
        self.cli.as_ref().map_or(&[], |c| c.hosts())
    }

    fn env_names(&self) -> Vec<String> {
        let own = self.cli.as_ref().map(|c| c.env_names());
        own.unwrap_or_else(|| self.env.clone())
    }

    fn reads(&self) -> Vec<std::path::PathBuf> {
        self.cli.as_ref().map(|c| c.reads()).unwrap_or_default()
    }

    fn isolate(&self, home: &std::path::Path) -> Result<Vec<(String, String)>, EngineError> {
        match &self.cli {
            Some(cli) => cli.isolate(home),
            None => Ok(Vec::new()),
        }
    }

    fn attempt(&self, ctx: &AttemptContext, cancel: &Cancel) -> Result<AgentReport, EngineError> {
        let charter = std::fs::read_to_string(&ctx.prompt_file)
            .map_err(|e| EngineError::io(&ctx.prompt_file, e))?;
        let model = self.model.clone().or_else(|| ctx.model.clone());
        let (done, session) = self.converse(ctx, cancel, |lines, stop| {
            let input = self.known.and_then(|k| k.input);
            Session::new(lines, ctx, charter, model, stop, input)
        })?;
        let end = session.end();
        self.report(end, &done, cancel.is_cancelled(), ctx)
    }

    /// Starts the agent as an attempt would (confined, with a fresh slot
    /// home below `scratch`) and asks for a session, no prompt: the
    /// command, the set-up it got and the models it offers; an agent
    /// that does not answer `session/new`, or does not offer `[agent]
    /// model`, fails here rather than in a paid attempt.
    fn probe(
        &self,
        scratch: &std::path::Path,
        confine: Option<&planwright_os::sandbox::Confine>,
    ) -> Result<Option<super::Probed>, String> {
        let ctx = probe::context(self, scratch, confine).map_err(|e| e.to_string())?;
        let converse = self.converse(&ctx, &Cancel::default(), |lines, stop| {
            Session::new(lines, &ctx, String::new(), None, stop, None).probing()
        });
        let (done, session) = converse.map_err(|e| e.to_string())?;
        let offered = session.offered();
        let end = session.end();
        let argv = self.cmd.argv(&ctx).join(" ");
        probe::verdict(
            &argv,
            &self.setup(),
            self.model.as_deref(),
            end.turn,
            offered,
            &done,
        )
    }
}

impl Acp {
    /// Runs the agent for the session `make` builds (given the agent's
    /// stdin and the flag that stops it), to its end.
    fn converse(
        &self,
        ctx: &AttemptContext,
        cancel: &Cancel,
        make: impl FnOnce(mpsc::Sender<String>, Cancel) -> Session,
    ) -> Result<(process::Finished, Arc<Session>), EngineError> {
        let mut env = agent_env(ctx, &self.env_names());
        add_attempt_env(&mut env, ctx);
        record_env(&ctx.log, &env)?;
        let (stdin, to_agent) = process::stdin_pipe()?;
        let stop = Cancel::default();
        let session = Arc::new(make(writer(to_agent), stop.clone()));
        let wake = watch(&session, &stop, ctx.timeout);
        // Listening for this attempt only: the run's flag outlives it.
        let _listening = {
            let wake = wake.clone();
            cancel.listen(move || {
                let _ = wake.send(Wake::Cancelled);
            })
        };
        let lines = {
            let session = session.clone();
            LineSink::noting(move |text, line| session.receive(text, line))
                .limit(usize::try_from(self.line_limit).unwrap_or(usize::MAX))
        };
        let spec = Spec {
            argv: self.cmd.argv(ctx),
            cwd: ctx.workspace.clone(),
            env,
            stdin: None,
            timeout: None,
            grace: GRACE,
            log: Some(ctx.log.clone()),
            lines: Some(lines),
            confine: super::reading(ctx.confine.as_ref(), self),
            log_limit: ctx.log_limit,
        };
        session.start();
        let ran = process::run_piped(&spec, stdin, &stop);
        let _ = wake.send(Wake::Done);
        Ok((ran?, session))
    }
}

impl Acp {
    fn report(
        &self,
        end: Ended,
        done: &process::Finished,
        cancelled: bool,
        ctx: &AttemptContext,
    ) -> Result<AgentReport, EngineError> {
        let outcome = outcome(end.turn, done, cancelled, &end.message);
        crate::log::append(&ctx.log, &format!("acp: outcome {outcome}\n"))?;
        let parsed = super::cli::Parsed {
            usage: end.usage,
            per_model: end.per_model,
            cost_usd: end.cost,
            ..Default::default()
        };
        let cost = super::cli::cost(&parsed, end.model.as_deref(), &self.prices);
        // Gemini's quota counts leave out the cache split and the thoughts.
        let cost = cost.map(|(usd, source)| match source {
            CostSource::Computed if end.estimated => (usd, CostSource::Estimated),
            source => (usd, source),
        });
        let notes =
            super::cli::figures_notes(false, end.usage.as_ref(), end.model.as_deref(), cost);
        for note in notes {
            crate::log::append(&ctx.log, &format!("{note}\n"))?;
        }
        Ok(AgentReport {
            cost,
            model: end.model,
            usage: end.usage,
            final_message: (!end.message.is_empty()).then_some(end.message),
            session_id: end.session_id,
            ..AgentReport::outcome(outcome)
        })
    }
}

/// A thread that writes each line it is sent to the agent's stdin, and
/// closes it once every sender is gone; it stops at the first failed
/// write (the agent closed its stdin). Writing apart from the thread that
/// reads the agent's output keeps a full pipe from stopping that reader.
fn writer(mut to_agent: std::fs::File) -> mpsc::Sender<String> {
    let (tx, rx) = mpsc::channel::<String>();
    std::thread::spawn(move || {
        for line in rx {
            if writeln!(to_agent, "{line}").is_err() {
                break;
            }
        }
    });
    tx
}

/// What wakes the [`watch`] thread before its deadline.
enum Wake {
    /// The run was cancelled (Ctrl-C).
    Cancelled,
    /// The agent's process ended.
    Done,
}

/// A thread that, past `timeout` or when the run is cancelled, cancels
/// the turn and then, past [`GRACE`] (at once when no turn is open),
/// stops the agent; a turn that ends in time stops it itself.
fn watch(session: &Arc<Session>, stop: &Cancel, timeout: Option<Duration>) -> mpsc::Sender<Wake> {
    let (tx, rx) = mpsc::channel::<Wake>();
    let (session, stop) = (session.clone(), stop.clone());
    std::thread::spawn(move || {
        let first = match timeout {
            Some(timeout) => rx.recv_timeout(timeout),
            None => rx.recv().map_err(|_| mpsc::RecvTimeoutError::Disconnected),
        };
        let open = match first {
            Err(mpsc::RecvTimeoutError::Timeout) => session.time_out(),
            Ok(Wake::Cancelled) => session.interrupt(),
            Ok(Wake::Done) | Err(mpsc::RecvTimeoutError::Disconnected) => return,
        };
        let deadline = Instant::now() + if open { GRACE } else { Duration::ZERO };
        loop {
            match rx.recv_timeout(deadline.saturating_duration_since(Instant::now())) {
                Ok(Wake::Cancelled) => continue,
                Ok(Wake::Done) | Err(mpsc::RecvTimeoutError::Disconnected) => return,
                Err(mpsc::RecvTimeoutError::Timeout) => break,
            }
        }
        if open {
            session.note("acp: the turn did not end in time; stopping the agent");
        }
        stop.cancel();
    });
    tx
}

/// The attempt's outcome from how its turn ended and how its process did.
fn outcome(
    turn: TurnEnd,
    done: &process::Finished,
    cancelled: bool,
    message: &str,
) -> AgentOutcome {
    match turn {
        TurnEnd::TimedOut => AgentOutcome::TimedOut,
        _ if cancelled => AgentOutcome::Cancelled,
        TurnEnd::Stopped(reason) if reason == "end_turn" => match blocked_reason(message) {
            Some(reason) => AgentOutcome::Blocked(reason),
            None => AgentOutcome::Finished,
        },
        TurnEnd::Stopped(reason) => AgentOutcome::Failed(format!("ended its turn: {reason}")),
        // Not the ticket's fault: no strike; routing may find another model.
        TurnEnd::ModelNotOffered(why) => AgentOutcome::Unavailable {
            retry_after: None,
            reason: why,
        },
        TurnEnd::Error(error) => error_outcome(&error, Now::system()),
        TurnEnd::Open => AgentOutcome::Failed(format!(
            "ended with {} before its turn did\n{}",
            done.exit, done.output_tail
        )),
    }
}

/// A JSON-RPC error: `Unavailable` when its message, or a text of its
/// data (a string, or a string field of an object), is the provider's
/// refusal (rate limit, quota, overload), else `Failed`.
fn error_outcome(error: &Value, now: Now) -> AgentOutcome {
    let message = error["message"].as_str().unwrap_or("");
    let mut texts = vec![message];
    match &error["data"] {
        Value::String(s) => texts.push(s),
        Value::Object(fields) => texts.extend(fields.values().filter_map(Value::as_str)),
        _ => {}
    }
    if let Some(refusal) = texts.iter().find(|t| limits::is_provider_line(t)) {
        return AgentOutcome::Unavailable {
            retry_after: limits::retry_after(refusal, now),
            reason: refusal.to_string(),
        };
    }
    let code = error["code"].as_i64().unwrap_or(0);
    let data = match &error["data"] {
        Value::Null => String::new(),
        data => format!(" {data}"),
    };
    AgentOutcome::Failed(format!("answered with error {code}: {message}{data}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const NOW: Now = Now {
        unix: 1_796_040_000,
        utc_offset: 0,
    };

    #[test]
    fn a_provider_error_is_unavailable_and_others_fail() {
        let limited = json!({"code": -32603, "message": "Internal error",
            "data": {"details": "429 Too Many Requests: rate limit exceeded, retry in 30s"}});
        assert!(matches!(
            error_outcome(&limited, NOW),
            AgentOutcome::Unavailable { retry_after: Some(d), .. } if d == Duration::from_secs(30)
        ));
        let plain = json!({"code": -32602, "message": "Invalid params"});
        assert_eq!(
            error_outcome(&plain, NOW),
            AgentOutcome::Failed("answered with error -32602: Invalid params".into())
        );
    }
}
