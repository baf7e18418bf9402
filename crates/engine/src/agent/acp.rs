//! The `acp` agent: any program that speaks the Agent Client Protocol
//! (JSON-RPC 2.0, one message a line, over its stdin and stdout), with
//! planwright as a client that lends nothing: no `fs` and no `terminal`
//! capability, permission requests answered by [`policy`], each answer
//! logged. The program is started from a template as `cmd` starts its
//! own, confined the same way.

mod policy;
mod session;

use super::limits::{self, Now};
use super::{
    add_attempt_env, agent_env, blocked_reason, record_env, Agent, AgentOptions, AgentOutcome,
    AgentReport, AttemptContext, CmdAgent,
};
use crate::error::EngineError;
use crate::process::{self, Cancel, LineSink, Spec};
use serde_json::Value;
use session::{Session, TurnEnd};
use std::sync::{mpsc, Arc};
use std::time::Duration;

/// The ACP version planwright speaks (the `protocolVersion` of
/// `initialize`); an agent that answers with another fails the attempt.
pub const PROTOCOL_VERSION: u64 = 1;

/// How long an agent has, once its turn is over or cancelled, to end.
const GRACE: Duration = Duration::from_secs(5);

/// An ACP agent started from a command template.
pub struct Acp {
    cmd: CmdAgent,
    env: Vec<String>,
    /// The adapter of the CLI the command starts, when planwright knows it
    /// (`gemini --acp`): the agent gets that CLI's slot home, environment
    /// names, hosts and model family, as the CLI's own adapter gives them.
    cli: Option<Box<dyn Agent>>,
}

impl Acp {
    /// Parses `template` (`"gemini --acp"`), placeholders as for `cmd`.
    pub fn new(template: &str, opts: &AgentOptions) -> Result<Acp, EngineError> {
        let cmd = CmdAgent::new(template)?;
        let known = cmd.program().and_then(|p| {
            let name = std::path::Path::new(&p).file_name()?.to_str()?.to_string();
            super::adapter(&name)
        });
        let cli = known.map(|adapter| {
            adapter.agent(&AgentOptions {
                program: None,
                cmd: None,
                ..opts.clone()
            })
        });
        Ok(Acp {
            cmd,
            env: opts.env.clone(),
            cli,
        })
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
        let mut env = agent_env(ctx, &self.env_names());
        add_attempt_env(&mut env, ctx);
        record_env(&ctx.log, &env)?;
        let charter = std::fs::read_to_string(&ctx.prompt_file)
            .map_err(|e| EngineError::io(&ctx.prompt_file, e))?;
        let fifo = ctx
            .prompt_file
            .with_file_name(format!("acp-{}.fifo", ctx.attempt));
        let _ = std::fs::remove_file(&fifo);
        process::make_fifo(&fifo).map_err(|e| EngineError::io(&fifo, e))?;
        let to_agent = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .open(&fifo)
            .map_err(|e| EngineError::io(&fifo, e))?;
        // The child holds its own descriptor: the name is not needed past
        // the start, and nothing else may open it.
        let stop = Cancel::default();
        let session = Arc::new(Session::new(to_agent, ctx, charter, stop.clone()));
        // Listening for this attempt only: the run's flag outlives it.
        let _listening = {
            let (session, stop) = (session.clone(), stop.clone());
            cancel.listen(move || {
                session.cancel_turn();
                stop.cancel();
            })
        };
        let done_tx = watch_timeout(&session, &stop, ctx.timeout);
        let lines = {
            let session = session.clone();
            LineSink::new(move |line| session.receive(line))
        };
        let spec = Spec {
            argv: self.cmd.argv(ctx),
            cwd: ctx.workspace.clone(),
            env,
            stdin: Some(fifo.clone()),
            timeout: None,
            grace: GRACE,
            log: Some(ctx.log.clone()),
            lines: Some(lines),
            confine: super::reading(ctx.confine.as_ref(), self),
            log_limit: ctx.log_limit,
        };
        session.start();
        let ran = process::run(&spec, &stop);
        drop(done_tx);
        let _ = std::fs::remove_file(&fifo);
        let done = ran?;
        let end = session.end();
        let outcome = outcome(end.turn, &done, cancel.is_cancelled(), &end.message);
        crate::log::append(&ctx.log, &format!("acp: outcome {outcome}\n"))?;
        Ok(AgentReport {
            model: ctx.model.clone(),
            usage: end.usage,
            final_message: (!end.message.is_empty()).then_some(end.message),
            session_id: end.session_id,
            ..AgentReport::outcome(outcome)
        })
    }
}

/// A thread that, past `timeout`, cancels the turn and then, past
/// [`GRACE`], stops the agent; dropping the sender ends it early.
fn watch_timeout(
    session: &Arc<Session>,
    stop: &Cancel,
    timeout: Option<Duration>,
) -> mpsc::Sender<()> {
    let (tx, rx) = mpsc::channel::<()>();
    if let Some(timeout) = timeout {
        let (session, stop) = (session.clone(), stop.clone());
        std::thread::spawn(move || {
            if rx.recv_timeout(timeout) == Err(mpsc::RecvTimeoutError::Timeout) {
                session.time_out();
                if rx.recv_timeout(GRACE) == Err(mpsc::RecvTimeoutError::Timeout) {
                    stop.cancel();
                }
            }
        });
    }
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
