//! The REPL driven by a program over two-way stream-json (`--input-format stream-json`):
//! what each input line does. User messages wait in order for the turns before them;
//! approval answers, interrupts and mode changes act at once; approvals are put to the
//! driver as `approval_request` events and wait for its answer, matched by `call_id`.
//!
//! An answer naming no pending request (unknown, already answered, or its turn over) is
//! an `error` event naming the line and changes nothing. When the input ends (`end`, or
//! stdin closed) while approvals are pending, each is denied, the running turn stopped
//! and the messages not yet sent dropped: nobody is left to answer, so the run ends
//! (exit 130, `interrupted`). After the end a new request is denied at once, as in pipe
//! mode. It knows the REPL's state and the input schema, not how turns work.

use std::collections::{HashMap, VecDeque};
use std::io::{self, Write};

use super::stream_input::{DriverAnswer, DriverLine, InputProblem};
use super::{Asked, Repl, State};
use crate::input::{self, Routed};
use crate::protocol::{
    ApprovalAsk, ApprovalDecision, ErrorKind, Event, ImageInput, InputOrigin, Op,
};

/// What the driver's side of the REPL keeps.
#[derive(Debug, Default)]
pub(super) struct Driver {
    /// User messages not yet sent, with their line numbers, in order.
    queued: VecDeque<Queued>,
    /// Approval requests put to the driver and not yet answered.
    asks: HashMap<String, Asked>,
    /// Requests no longer pending, and why.
    closed: HashMap<String, Closed>,
}

/// A user message waiting to be sent.
#[derive(Debug)]
pub(super) struct Queued {
    /// The input line it came on.
    pub(super) line: u64,
    /// Its text.
    pub(super) text: String,
    /// The images it carries.
    pub(super) images: Vec<ImageInput>,
}

/// Why an approval request is no longer pending.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Closed {
    /// The driver answered it on this input line.
    Answered {
        /// The line.
        line: u64,
    },
    /// Its turn ended (stopped) before an answer came.
    TurnEnded,
    /// The input ended before an answer came: it was denied.
    InputEnded,
}

/// Why an approval answer was not used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
enum AnswerProblem {
    /// No request with this id was put to the driver.
    #[error("no approval request with call_id {0:?} was sent; ignored")]
    Unknown(String),
    /// Already answered.
    #[error("the approval request {call_id:?} was already answered (input line {line}); ignored")]
    Answered {
        /// The request.
        call_id: String,
        /// Where it was answered.
        line: u64,
    },
    /// Its turn ended first.
    #[error("the approval request {0:?} is no longer pending (its turn ended); ignored")]
    Gone(String),
    /// allow_once or allow_session for a plan.
    #[error(
        "{0:?} asks to approve a plan: answer approve_plan with a mode, or deny; still pending"
    )]
    PlanNeedsMode(String),
    /// approve_plan for a tool call.
    #[error(
        "{0:?} is a tool call, not a plan: answer allow_once, allow_session or deny; still pending"
    )]
    NotAPlan(String),
}

impl Driver {
    /// Whether a user message waits to be sent.
    pub(super) fn next_message(&mut self) -> Option<Queued> {
        self.queued.pop_front()
    }

    /// The requests still pending when a turn ended are gone with it.
    pub(super) fn turn_ended(&mut self) {
        for (call_id, _) in self.asks.drain() {
            self.closed.insert(call_id, Closed::TurnEnded);
        }
    }
}

impl<O: Write, E: Write> Repl<O, E> {
    /// One line the driver sent.
    pub(super) fn on_driver_line(&mut self, line: u64, input: DriverLine) -> io::Result<()> {
        match input {
            DriverLine::User { text, images } => {
                self.driver.queued.push_back(Queued { line, text, images });
                Ok(())
            }
            DriverLine::Approval { call_id, answer } => self.driver_answer(line, call_id, answer),
            // Nothing happens when no turn runs (the agent ignores it).
            DriverLine::Interrupt => {
                self.send(Op::Interrupt);
                Ok(())
            }
            DriverLine::SetMode { mode } => {
                self.send(Op::SetApprovalMode { mode });
                Ok(())
            }
            DriverLine::End => self.driver_input_ended(),
        }
    }

    /// A line that could not be used: an `error` naming it.
    pub(super) fn on_bad_input(&mut self, line: u64, problem: &InputProblem) -> io::Result<()> {
        self.renderer.input_error(line, &problem.to_string())
    }

    /// The next user message, routed as a pipe-mode line (its `@path` mentions are not
    /// read); a command that cannot run is an `error` naming its line.
    pub(super) fn send_driver_message(&mut self, message: Queued) -> io::Result<()> {
        let Queued { line, text, images } = message;
        let routed = input::route(&text, &self.commands);
        if let Routed::Error(message) = routed {
            return self.renderer.input_error(line, &message);
        }
        if !images.is_empty() {
            // Images go with a message to the model: the agent reads and checks them
            // as it does `--image` files.
            if !matches!(routed, Routed::Prompt(_)) {
                return self.renderer.input_error(
                    line,
                    "images go only with a message to the model, not with a command; the message was not sent",
                );
            }
            if let Some(op) = routed.to_op(InputOrigin::Piped) {
                self.send(op.with_images(images));
            }
            self.state = State::Turn;
            return Ok(());
        }
        self.on_line_from(&text, InputOrigin::Piped)?;
        // `/exit`: what was sent after it is not run.
        if self.input_closed {
            self.driver.queued.clear();
        }
        Ok(())
    }

    /// An approval request: put to the driver, or denied at once when its input is over.
    pub(super) fn ask_driver(&mut self, ask: &ApprovalAsk) -> io::Result<()> {
        if self.input_closed {
            self.send(Op::Approval {
                call_id: ask.call_id.clone(),
                decision: ApprovalDecision::Deny {
                    reason: Some("the driver's input has ended, so nobody can approve".into()),
                },
            });
            return self.renderer.denied(&ask.name, &ask.request);
        }
        let asked = match ask.request {
            crate::protocol::ApprovalRequestKind::Plan { .. } => Asked::Plan,
            _ => Asked::Call,
        };
        self.driver.closed.remove(&ask.call_id);
        self.driver.asks.insert(ask.call_id.clone(), asked);
        self.renderer
            .event(&Event::ApprovalRequest(ask.clone()))
            .map(|_| ())
    }

    /// The driver's answer to the request `call_id`.
    fn driver_answer(
        &mut self,
        line: u64,
        call_id: String,
        answer: DriverAnswer,
    ) -> io::Result<()> {
        let Some(asked) = self.driver.asks.get(&call_id).copied() else {
            let problem = match self.driver.closed.get(&call_id) {
                None => AnswerProblem::Unknown(call_id),
                Some(Closed::Answered { line }) => AnswerProblem::Answered {
                    call_id,
                    line: *line,
                },
                Some(Closed::TurnEnded | Closed::InputEnded) => AnswerProblem::Gone(call_id),
            };
            return self.renderer.input_error(line, &problem.to_string());
        };
        let decision = match (answer, asked) {
            (DriverAnswer::Deny { reason }, _) => ApprovalDecision::Deny { reason },
            (DriverAnswer::AllowOnce, Asked::Call) => ApprovalDecision::Approve,
            (DriverAnswer::AllowSession, Asked::Call) => ApprovalDecision::ApproveForSession,
            (DriverAnswer::ApprovePlan { mode }, Asked::Plan) => {
                ApprovalDecision::ApprovePlan { mode }
            }
            (DriverAnswer::AllowOnce | DriverAnswer::AllowSession, Asked::Plan) => {
                let problem = AnswerProblem::PlanNeedsMode(call_id);
                return self.renderer.input_error(line, &problem.to_string());
            }
            (DriverAnswer::ApprovePlan { .. }, Asked::Call) => {
                let problem = AnswerProblem::NotAPlan(call_id);
                return self.renderer.input_error(line, &problem.to_string());
            }
        };
        self.driver.asks.remove(&call_id);
        self.driver
            .closed
            .insert(call_id.clone(), Closed::Answered { line });
        self.send(Op::Approval { call_id, decision });
        Ok(())
    }

    /// The input is over (`end`, or stdin closed): the messages sent are answered, then
    /// the session ends. With approvals pending nobody is left to answer them: each is
    /// denied, the turn stopped and the messages not yet sent dropped.
    pub(super) fn driver_input_ended(&mut self) -> io::Result<()> {
        self.input_closed = true;
        if self.driver.asks.is_empty() {
            return Ok(());
        }
        let mut pending: Vec<String> = self.driver.asks.drain().map(|(id, _)| id).collect();
        pending.sort();
        for call_id in &pending {
            self.send(Op::Approval {
                call_id: call_id.clone(),
                decision: ApprovalDecision::Deny {
                    reason: Some("the driver's input ended before it answered".into()),
                },
            });
            self.driver
                .closed
                .insert(call_id.clone(), Closed::InputEnded);
        }
        self.driver.queued.clear();
        self.fail(ErrorKind::Interrupted);
        if self.state == State::Turn {
            self.send(Op::Interrupt);
        }
        self.renderer.error(&format!(
            "the input ended while {} pending ({}): denied, and the turn stopped",
            if pending.len() == 1 {
                "an approval was"
            } else {
                "approvals were"
            },
            pending.join(", ")
        ))
    }
}
