//! The agents of a run: one, or one per model family (`[agents]`), with
//! the run's own agent for the tickets no family's entry serves.

use super::{from_options, Agent};
use crate::error::EngineError;
use planwright_config::{AgentSpec, AgentsSpec};
use std::sync::Arc;

/// The agents a run sends its tickets to (see [`crate::run::lanes`] for
/// which ticket goes to which).
#[derive(Clone)]
pub struct Agents {
    run: Option<Arc<dyn Agent>>,
    by_family: Vec<(String, Arc<dyn Agent>)>,
    /// What they were built from, when settings named them: a worker on
    /// another machine builds the same agent from it.
    spec: Option<AgentsSpec>,
}

impl std::fmt::Debug for Agents {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let names: Vec<&str> = self.each().map(|a| a.name()).collect();
        f.debug_tuple("Agents").field(&names).finish()
    }
}

impl From<Arc<dyn Agent>> for Agents {
    fn from(agent: Arc<dyn Agent>) -> Agents {
        Agents {
            run: Some(agent),
            by_family: Vec::new(),
            spec: None,
        }
    }
}

impl Agents {
    /// The agents `spec` names. An `[agents]` entry whose adapter runs only
    /// another family's models is refused: routing would hand it a model
    /// it cannot run.
    pub fn build(spec: &AgentsSpec) -> Result<Agents, EngineError> {
        let run = match &spec.run {
            Some(s) => Some(Arc::from(from_options(&s.name, &s.options)?)),
            None => None,
        };
        let mut by_family = Vec::new();
        for (family, s) in &spec.by_family {
            let entry = |e: String| {
                EngineError::Settings(format!("`[agents] {family} = \"{}\"`: {e}", s.name))
            };
            let agent: Arc<dyn Agent> =
                Arc::from(from_options(&s.name, &s.options).map_err(|e| entry(e.to_string()))?);
            if let Some(own) = agent.family().filter(|own| own != family) {
                return Err(entry(format!(
                    "the `{}` adapter runs only {own} models; map it as `[agents] {own} = \"{}\"`",
                    s.name, s.name
                )));
            }
            by_family.push((family.clone(), agent));
        }
        Ok(Agents {
            run,
            by_family,
            spec: Some(spec.clone()),
        })
    }

    /// The settings of the agent [`Agents::get`] gives for `family`;
    /// `None` for an agent no settings named (a test's own).
    pub fn spec(&self, family: Option<&str>) -> Option<&AgentSpec> {
        let spec = self.spec.as_ref()?;
        match family {
            None => spec.run.as_ref(),
            Some(f) => spec.by_family.iter().find(|(k, _)| k == f).map(|(_, s)| s),
        }
    }

    /// The run's own agent, for the tickets no family's entry serves.
    pub fn run_agent(&self) -> Option<&Arc<dyn Agent>> {
        self.run.as_ref()
    }

    /// The agent of `[agents]` entry `family`; `None`: the run's own.
    pub fn get(&self, family: Option<&str>) -> Option<&Arc<dyn Agent>> {
        match family {
            None => self.run.as_ref(),
            Some(f) => self.by_family.iter().find(|(k, _)| k == f).map(|(_, a)| a),
        }
    }

    /// The families `[agents]` maps, in its order.
    pub fn families(&self) -> impl Iterator<Item = &str> {
        self.by_family.iter().map(|(f, _)| f.as_str())
    }

    /// Every agent: the run's own first, then `[agents]`'s.
    pub fn each(&self) -> impl Iterator<Item = &dyn Agent> {
        self.entries().map(|(_, a)| a)
    }

    /// Every agent with its `[agents]` entry (`None`: the run's own), as
    /// [`Agents::each`] orders them.
    pub fn entries(&self) -> impl Iterator<Item = (Option<&str>, &dyn Agent)> {
        let rest = (self.by_family.iter()).map(|(f, a)| (Some(f.as_str()), a.as_ref()));
        (self.run.iter()).map(|a| (None, a.as_ref())).chain(rest)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use planwright_config::AgentOptions;

    fn spec(name: &str, cmd: Option<&str>) -> AgentSpec {
        AgentSpec {
            name: name.into(),
            options: AgentOptions {
                cmd: cmd.map(String::from),
                ..AgentOptions::default()
            },
        }
    }

    fn built(by_family: &[(&str, AgentSpec)]) -> Result<Agents, String> {
        let spec = AgentsSpec {
            run: None,
            by_family: by_family
                .iter()
                .map(|(f, s)| (f.to_string(), s.clone()))
                .collect(),
        };
        Agents::build(&spec).map_err(|e| e.to_string())
    }

    #[test]
    fn an_entry_gets_its_familys_adapter_and_an_acp_entry_its_command() {
        let agents = built(&[
            ("claude", spec("claude", None)),
            ("gemini", spec("acp", Some("gemini --acp"))),
        ])
        .unwrap();
        assert_eq!(agents.get(Some("claude")).unwrap().name(), "claude");
        assert_eq!(agents.get(Some("gemini")).unwrap().name(), "acp");
        assert!(agents.get(None).is_none(), "no `[agent] name`");
        assert_eq!(agents.families().collect::<Vec<_>>(), ["claude", "gemini"]);
    }

    #[test]
    fn an_entry_of_another_familys_adapter_or_an_unknown_one_is_refused() {
        let err = built(&[("gemini", spec("claude", None))]).unwrap_err();
        assert!(
            err.contains("`[agents] gemini = \"claude\"`")
                && err.contains("runs only claude models")
                && err.contains("`[agents] claude = \"claude\"`"),
            "{err}"
        );
        let err = built(&[("gpt", spec("codx", None))]).unwrap_err();
        assert!(
            err.contains("`[agents] gpt = \"codx\"`: unknown agent `codx`"),
            "{err}"
        );
        let err = built(&[("gemini", spec("acp", None))]).unwrap_err();
        assert!(err.contains("needs the command"), "{err}");
    }
}
