//! A real session through the library, for tests that drive the agent with `Op`s:
//! [`SessionBuilder`] resolves a `Config` against a [`MockServer`] (a `$HARNESS9_HOME` of
//! its own, an API key, the model `mock-model`, a project folder) and spawns the agent;
//! [`Session`] sends ops and waits, with a deadline, for the events that answer them.
//! It knows the library's public API (config, session, agent, protocol), not the binary.

use std::path::{Path, PathBuf};
use std::time::Duration;

use harness9::agent::{AgentHandle, Approver, SessionInfo};
use harness9::config::{Config, EndpointNeed, OllamaProbe, Overrides};
use harness9::protocol::{
    ApprovalAsk, ApprovalDecision, ApprovalMode, Event, Invocation, Op, TurnOutcome,
};

use super::MockServer;

/// How long [`Session::until`] waits for a matching event.
pub const WAIT: Duration = Duration::from_secs(20);

/// What a session is started with; see the setters for the defaults.
pub struct SessionBuilder {
    base_url: String,
    workdir: PathBuf,
    config_toml: String,
    overrides: Overrides,
    approver: Approver,
}

impl SessionBuilder {
    /// A session on `server` in the project folder `workdir`, with `config.toml`
    /// `max_retries = 1`, `idle_timeout_secs = 10`, the default approval mode and nobody
    /// to ask for approvals ([`Approver::Nobody`]).
    pub fn new(server: &MockServer, workdir: &Path) -> SessionBuilder {
        SessionBuilder {
            base_url: server.url(),
            workdir: workdir.to_path_buf(),
            config_toml: "max_retries = 1\nidle_timeout_secs = 10\n".into(),
            overrides: Overrides::default(),
            approver: Approver::Nobody,
        }
    }

    /// Replaces the whole `config.toml` of the session's home.
    pub fn config_toml(mut self, text: &str) -> SessionBuilder {
        self.config_toml = text.into();
        self
    }

    /// Command-line settings (`workdir` is always the builder's).
    pub fn overrides(mut self, overrides: Overrides) -> SessionBuilder {
        self.overrides = overrides;
        self
    }

    /// `--approval-mode`.
    pub fn approval_mode(mut self, mode: ApprovalMode) -> SessionBuilder {
        self.overrides.approval_mode = Some(mode);
        self
    }

    /// Who answers approval requests.
    pub fn approver(mut self, approver: Approver) -> SessionBuilder {
        self.approver = approver;
        self
    }

    /// The resolved config and the home it points at (keep the home alive).
    pub fn config(&self) -> (Config, tempfile::TempDir) {
        let home = tempfile::tempdir().unwrap();
        std::fs::write(home.path().join("config.toml"), &self.config_toml).unwrap();
        let h = home.path().to_str().unwrap().to_string();
        let url = self.base_url.clone();
        let env = move |k: &str| match k {
            "HARNESS9_HOME" => Some(h.clone()),
            "OPENAI_API_KEY" => Some("test-key".to_string()),
            "OPENAI_BASE_URL" => Some(url.clone()),
            "HARNESS9_MODEL" => Some("mock-model".to_string()),
            _ => None,
        };
        let overrides = Overrides {
            workdir: Some(self.workdir.clone()),
            ..self.overrides.clone()
        };
        let config = Config::resolve(
            &overrides,
            &env,
            EndpointNeed::Required,
            OllamaProbe::Disabled,
        )
        .unwrap();
        (config, home)
    }

    /// Prepares the session and spawns its agent.
    pub fn start(self) -> Session {
        let (config, home) = self.config();
        let (handle, info) = harness9::session::prepare(&config, self.approver)
            .unwrap()
            .spawn();
        Session {
            handle,
            info,
            events: Vec::new(),
            _home: home,
        }
    }
}

/// A running session and every event it has sent so far.
pub struct Session {
    /// Ops in, events out.
    pub handle: AgentHandle,
    /// What the session told its frontend at start (the catalog, the model...).
    pub info: SessionInfo,
    /// The events [`Session::until`] has received, in order.
    pub events: Vec<Event>,
    _home: tempfile::TempDir,
}

impl Session {
    /// Sends an op; the agent must still be running.
    pub fn op(&self, op: Op) {
        self.handle.ops.send(op).unwrap();
    }

    /// Sends a user message.
    pub fn send(&self, text: &str) {
        self.op(Op::typed(text));
    }

    /// Waits up to [`WAIT`] for the next event matching `pred`, keeping every event seen;
    /// panics with them when none comes.
    pub async fn until(&mut self, pred: impl Fn(&Event) -> bool) -> Event {
        let deadline = tokio::time::Instant::now() + WAIT;
        loop {
            let event = tokio::time::timeout_at(deadline, self.handle.events.recv())
                .await
                .unwrap_or_else(|_| {
                    panic!("no matching event within {WAIT:?}; saw {:#?}", self.events)
                })
                .expect("agent stopped");
            self.events.push(event.clone());
            if pred(&event) {
                return event;
            }
        }
    }

    /// Waits for the end of the turn under way: its outcome and final text.
    pub async fn until_complete(&mut self) -> (TurnOutcome, String) {
        match self
            .until(|e| matches!(e, Event::TurnComplete { .. }))
            .await
        {
            Event::TurnComplete {
                outcome,
                final_text,
                ..
            } => (outcome, final_text.into_string()),
            _ => unreachable!("until returns a matching event"),
        }
    }

    /// One whole turn: sends `text` and waits for it to complete.
    pub async fn turn(&mut self, text: &str) -> (TurnOutcome, String) {
        self.send(text);
        self.until_complete().await
    }

    /// One whole turn that must complete; returns its final text.
    pub async fn completed_turn(&mut self, text: &str) -> String {
        let (outcome, final_text) = self.turn(text).await;
        assert_eq!(outcome, TurnOutcome::Completed, "{final_text}");
        final_text
    }

    /// Waits for the next approval request.
    pub async fn next_approval(&mut self) -> ApprovalAsk {
        match self.until(|e| matches!(e, Event::ApprovalRequest(_))).await {
            Event::ApprovalRequest(ask) => ask,
            _ => unreachable!("until returns a matching event"),
        }
    }

    /// Answers the approval request of `call_id` with `decision`.
    pub fn decide(&self, call_id: String, decision: ApprovalDecision) {
        self.op(Op::Approval { call_id, decision });
    }

    /// `/name args`: invokes a skill and waits for the turn to complete.
    pub async fn invoke(&mut self, name: &str, args: &str) -> (TurnOutcome, String) {
        self.op(Op::Invoke(Invocation::Skill {
            name: name.into(),
            args: args.into(),
        }));
        self.until_complete().await
    }
}
