//! The `cmd` agent: any program, from a template split into words like a
//! shell splits them (no shell runs), with placeholders per argument.

use super::limits::{self, Now};
use super::{
    add_attempt_env, agent_env, blocked_reason, record_env, Agent, AgentOutcome, AgentReport,
    AttemptContext,
};
use crate::error::EngineError;
use planwright_os::process::{self, Cancel, Exit, Spec};
use std::time::Duration;

/// The exit code that says "the provider refused me, try again later":
/// `EX_TEMPFAIL` of `sysexits.h`.
pub(crate) const EX_TEMPFAIL: i32 = 75;

/// A program run once per attempt.
pub struct CmdAgent {
    template: Vec<String>,
    env: Vec<String>,
    model: Option<String>,
}

impl CmdAgent {
    /// Parses `template` (`"my-agent --prompt {prompt_file}"`); its
    /// program is [`anchored`](super::anchored).
    pub fn new(template: &str) -> Result<CmdAgent, EngineError> {
        let mut words: Vec<String> = shlex::split(template)
            .filter(|w| !w.is_empty())
            .ok_or_else(|| {
                EngineError::Settings(format!(
                    "cannot split the agent command into words (unbalanced quote?): `{template}`"
                ))
            })?;
        if let Some(program) = words.first_mut() {
            *program = super::anchored(program);
        }
        Ok(CmdAgent {
            template: words,
            env: Vec::new(),
            model: None,
        })
    }

    /// The same agent also given the variables `names` (`[agent] env`)
    /// besides the base set: the template is the user's, so they name what
    /// it needs.
    pub fn with_env(mut self, names: Vec<String>) -> CmdAgent {
        self.env = names;
        self
    }

    /// The same agent running `model` (`[agent] model`) in every attempt,
    /// whatever routing chose.
    pub fn with_model(mut self, model: Option<String>) -> CmdAgent {
        self.model = model;
        self
    }

    /// The attempt's model: `[agent] model`, else routing's.
    fn model_of<'a>(&'a self, ctx: &'a AttemptContext) -> Option<&'a str> {
        self.model.as_deref().or(ctx.model.as_deref())
    }

    /// The argv for one attempt. `{model}` is the attempt's model
    /// (`[agent] model`, else routing's), or empty when there is none.
    pub fn argv(&self, ctx: &AttemptContext) -> Vec<String> {
        let model = self.model_of(ctx).unwrap_or("");
        self.template
            .iter()
            .map(|w| {
                let workspace = ctx.workspace.display().to_string();
                w.replace("{workspace}", &workspace)
                    .replace("{worktree}", &workspace)
                    .replace("{prompt_file}", &ctx.prompt_file.display().to_string())
                    .replace("{ticket}", &ctx.ticket)
                    .replace("{attempt}", &ctx.attempt.to_string())
                    .replace("{model}", model)
            })
            .collect()
    }
}

impl Agent for CmdAgent {
    fn name(&self) -> &str {
        "cmd"
    }

    fn program(&self) -> Option<String> {
        self.template.first().cloned()
    }

    fn model(&self) -> Option<&str> {
        self.model.as_deref()
    }

    fn attempt(&self, ctx: &AttemptContext, cancel: &Cancel) -> Result<AgentReport, EngineError> {
        let mut env = agent_env(ctx, &self.env);
        add_attempt_env(&mut env, ctx);
        record_env(&ctx.log, &env)?;
        let spec = Spec {
            argv: self.argv(ctx),
            cwd: ctx.workspace.clone(),
            env,
            stdin: Some(ctx.prompt_file.clone()),
            timeout: ctx.timeout,
            grace: Duration::from_secs(5),
            log: Some(ctx.log.clone()),
            lines: None,
            confine: ctx.confine.clone(),
            log_limit: ctx.log_limit,
        };
        let done = process::run(&spec, cancel)?;
        let outcome = match done.exit {
            Exit::TimedOut => AgentOutcome::TimedOut,
            Exit::Cancelled => AgentOutcome::Cancelled,
            _ => match blocked_reason(&done.stdout_tail) {
                Some(reason) => AgentOutcome::Blocked(reason),
                None if done.success() => AgentOutcome::Finished,
                None => failed_or_unavailable(&done, Now::system()),
            },
        };
        Ok(AgentReport {
            model: self.model_of(ctx).map(String::from),
            ..AgentReport::outcome(outcome)
        })
    }
}

/// A failed program is `Unavailable` (its pool pauses, no strike) when it
/// exited [`EX_TEMPFAIL`] or the last line of its stderr is its provider's
/// refusal ([`limits::is_provider_line`]), with the reset time that line
/// names; any other failure is `Failed` with the output's tail, whatever
/// words the output holds elsewhere.
fn failed_or_unavailable(done: &process::Finished, now: Now) -> AgentOutcome {
    let (exit, tail) = (&done.exit, &done.output_tail);
    let last = limits::last_line(&done.stderr_tail);
    let tempfail = *exit == Exit::Code(EX_TEMPFAIL);
    if !tempfail && !limits::is_provider_line(last) {
        return AgentOutcome::Failed(format!("ended with {exit}\n{tail}"));
    }
    let reason = if last.is_empty() {
        format!("ended with {exit} (EX_TEMPFAIL)")
    } else {
        last.to_string()
    };
    AgentOutcome::Unavailable {
        retry_after: limits::retry_after(last, now),
        reason,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn placeholders_fill_each_argument() {
        let agent = CmdAgent::new(
            "run-agent --in '{workspace}' -p {prompt_file} {ticket}-{attempt} -m={model} --old={worktree}",
        )
        .unwrap();
        let ctx = AttemptContext {
            ticket: "T1".into(),
            attempt: 2,
            workspace: "/w t".into(),
            prompt_file: "/p.md".into(),
            log: "/l".into(),
            timeout: None,
            model: Some("gpt-5.4".into()),
            env: vec![],
            confine: None,
            log_limit: None,
            usage_sink: None,
            activity_sink: None,
        };
        assert_eq!(
            agent.argv(&ctx),
            [
                "run-agent",
                "--in",
                "/w t",
                "-p",
                "/p.md",
                "T1-2",
                "-m=gpt-5.4",
                "--old=/w t"
            ]
        );
        let fixed = CmdAgent::new("run-agent -m={model}")
            .unwrap()
            .with_model(Some("claude-opus-4-6".into()));
        assert_eq!(fixed.argv(&ctx), ["run-agent", "-m=claude-opus-4-6"]);
        assert!(CmdAgent::new("a 'b").is_err());
        assert_eq!(
            blocked_reason("work\nTICKET-BLOCKED: no spec\n\n"),
            Some("no spec".into())
        );
        assert_eq!(blocked_reason("TICKET-BLOCKED: x\nmore"), None);
    }

    const NOW: Now = Now {
        unix: 1_796_040_000,
        utc_offset: 0,
    };

    /// A program that ended with `code`, having written `stderr` after
    /// `stdout`.
    fn ended(code: i32, stdout: &str, stderr: &str) -> process::Finished {
        process::Finished {
            exit: Exit::Code(code),
            stdout_tail: stdout.into(),
            stderr_tail: stderr.into(),
            output_tail: format!("{stdout}{stderr}"),
            duration: Duration::ZERO,
            limit: None,
        }
    }

    #[test]
    fn exit_75_or_a_provider_last_line_is_unavailable_and_other_failures_are_not() {
        assert_eq!(
            failed_or_unavailable(
                &ended(1, "", "working\nError: rate limit exceeded, retry in 2h\n"),
                NOW
            ),
            AgentOutcome::Unavailable {
                retry_after: Some(Duration::from_secs(7200)),
                reason: "Error: rate limit exceeded, retry in 2h".into()
            }
        );
        assert_eq!(
            failed_or_unavailable(&ended(EX_TEMPFAIL, "", ""), NOW),
            AgentOutcome::Unavailable {
                retry_after: None,
                reason: "ended with exit code 75 (EX_TEMPFAIL)".into()
            }
        );
        let quota_test = "test quota::refuses_past_the_limit ... FAILED\nquota exceeded: expected 3, got 4\ntest result: FAILED. 1 passed; 1 failed\n";
        assert_eq!(
            failed_or_unavailable(&ended(101, "", quota_test), NOW),
            AgentOutcome::Failed(format!("ended with exit code 101\n{quota_test}"))
        );
        assert_eq!(
            failed_or_unavailable(&ended(2, "", "syntax error\n"), NOW),
            AgentOutcome::Failed("ended with exit code 2\nsyntax error\n".into())
        );
        // A refusal printed to stdout, with stderr quiet, is the program's
        // own output (a test that prints one), not its provider's refusal.
        assert!(matches!(
            failed_or_unavailable(&ended(1, "429 Too Many Requests\n", ""), NOW),
            AgentOutcome::Failed(_)
        ));
    }
}
