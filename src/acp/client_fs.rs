//! The editor's files over ACP: when the client offers `fs/read_text_file` and
//! `fs/write_text_file` in `initialize`, the file tools read and write through them
//! ([`ClientFiles`], the ACP side of the tools' [`EditorFiles`] port), so unsaved
//! buffers are read and edits land in the editor.
//!
//! A tool's call becomes an [`FsCall`] handed to the server loop, which sends it as a
//! JSON-RPC request and routes the client's answer back ([`Pending`]); an error answer,
//! an answer of the wrong shape, a closed connection or no answer within
//! [`ANSWER_TIME`] is an [`EditorFileError`], so a tool never waits without end. It
//! knows nothing of what may be read or written: the tools ask only for paths already
//! judged.

use std::collections::HashMap;
use std::path::Path;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use agent_client_protocol_schema::v1::{
    ClientCapabilities, ReadTextFileRequest, ReadTextFileResponse, SessionId, WriteTextFileRequest,
};
use serde_json::Value;
use tokio::sync::{mpsc, oneshot};

use crate::tools::files::{EditorFileError, EditorFiles, EditorFuture, EditorOffers, FileAccess};

/// How long the client has to answer a file request.
pub const ANSWER_TIME: Duration = Duration::from_secs(30);

/// The client's answer to a request: its result, or the error object it sent.
pub type Answer = Result<Value, Value>;

/// The id of the session a file request is for: known once the agent has started and
/// said it (a saved session's id), set then by the server; the tools ask nothing before.
pub type SessionCell = Arc<OnceLock<SessionId>>;

/// A file request for the server loop to send.
#[derive(Debug)]
pub struct FsCall {
    /// The method.
    pub method: FsMethod,
    /// Where the answer goes.
    pub reply: oneshot::Sender<Answer>,
}

/// One of the client's file methods with its parameters.
#[derive(Debug)]
pub enum FsMethod {
    /// `fs/read_text_file`.
    Read(ReadTextFileRequest),
    /// `fs/write_text_file`.
    Write(WriteTextFileRequest),
}

impl FsMethod {
    /// The method's name on the wire.
    pub fn name(&self) -> &'static str {
        match self {
            FsMethod::Read(_) => "fs/read_text_file",
            FsMethod::Write(_) => "fs/write_text_file",
        }
    }

    /// Its parameters as JSON.
    pub fn params(&self) -> Result<Value, serde_json::Error> {
        match self {
            FsMethod::Read(request) => serde_json::to_value(request),
            FsMethod::Write(request) => serde_json::to_value(request),
        }
    }
}

/// The file access a session of this client gets: through the client for what it
/// offers, on disk otherwise.
pub fn access(
    capabilities: &ClientCapabilities,
    session: &SessionCell,
    calls: mpsc::UnboundedSender<FsCall>,
) -> FileAccess {
    let offers = match (
        capabilities.fs.read_text_file,
        capabilities.fs.write_text_file,
    ) {
        (true, true) => EditorOffers::ReadsAndWrites,
        (true, false) => EditorOffers::Reads,
        (false, true) => EditorOffers::Writes,
        (false, false) => return FileAccess::Disk,
    };
    FileAccess::Editor {
        files: Arc::new(ClientFiles {
            session: Arc::clone(session),
            calls,
            answer_time: ANSWER_TIME,
        }),
        offers,
    }
}

/// The client's files, asked through the server loop.
pub struct ClientFiles {
    session: SessionCell,
    calls: mpsc::UnboundedSender<FsCall>,
    answer_time: Duration,
}

impl ClientFiles {
    /// The session's id; a request made before the server set it is refused.
    fn session(&self) -> Result<SessionId, EditorFileError> {
        self.session
            .get()
            .cloned()
            .ok_or_else(|| EditorFileError::Refused("the session is not open yet".into()))
    }

    async fn call(&self, method: FsMethod) -> Result<Value, EditorFileError> {
        let (reply, answer) = oneshot::channel();
        self.calls
            .send(FsCall { method, reply })
            .map_err(|_| EditorFileError::Gone)?;
        match tokio::time::timeout(self.answer_time, answer).await {
            Err(_) => Err(EditorFileError::TimedOut {
                seconds: self.answer_time.as_secs(),
            }),
            Ok(Err(_)) => Err(EditorFileError::Gone),
            Ok(Ok(Ok(result))) => Ok(result),
            Ok(Ok(Err(error))) => Err(EditorFileError::Refused(error_message(&error))),
        }
    }
}

/// The message of a JSON-RPC error object, cut to a line's length.
fn error_message(error: &Value) -> String {
    let message = match error.get("message").and_then(Value::as_str) {
        Some(message) => message.to_string(),
        None => error.to_string(),
    };
    let mut line: String = message.chars().take(300).collect();
    if line.len() < message.len() {
        line.push('…');
    }
    line
}

impl EditorFiles for ClientFiles {
    fn read_text<'a>(&'a self, real: &'a Path) -> EditorFuture<'a, String> {
        Box::pin(async move {
            let request = ReadTextFileRequest::new(self.session()?, real);
            let result = self.call(FsMethod::Read(request)).await?;
            serde_json::from_value::<ReadTextFileResponse>(result)
                .map(|response| response.content)
                .map_err(|e| EditorFileError::BadAnswer(e.to_string()))
        })
    }

    fn write_text<'a>(&'a self, real: &'a Path, text: &'a str) -> EditorFuture<'a, ()> {
        Box::pin(async move {
            let request = WriteTextFileRequest::new(self.session()?, real, text);
            // Any result is success (the response carries nothing but `_meta`).
            self.call(FsMethod::Write(request)).await.map(drop)
        })
    }
}

/// The file requests sent and not answered: our request id → where the answer goes.
#[derive(Debug, Default)]
pub struct Pending {
    waiting: HashMap<String, oneshot::Sender<Answer>>,
    sent: u64,
}

impl Pending {
    /// The id for `call`'s request, its answer awaited from now on.
    pub fn add(&mut self, reply: oneshot::Sender<Answer>) -> String {
        // Requests whose tool stopped waiting (timed out, interrupted) are forgotten.
        self.waiting.retain(|_, reply| !reply.is_closed());
        self.sent += 1;
        let id = format!("harness9-fs-{}", self.sent);
        self.waiting.insert(id.clone(), reply);
        id
    }

    /// Routes the answer to request `id`; `false` when it is none of ours.
    pub fn answer(&mut self, id: &str, answer: Answer) -> bool {
        match self.waiting.remove(id) {
            Some(reply) => {
                let _ = reply.send(answer);
                true
            }
            None => false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn files(answer_time: Duration) -> (ClientFiles, mpsc::UnboundedReceiver<FsCall>) {
        let (calls, received) = mpsc::unbounded_channel();
        let files = ClientFiles {
            session: Arc::new(OnceLock::from(SessionId::new("s"))),
            calls,
            answer_time,
        };
        (files, received)
    }

    #[tokio::test]
    async fn an_answer_is_the_text_and_an_error_or_silence_is_a_failure() {
        let (files, mut received) = files(Duration::from_millis(50));
        let path = Path::new("/p/a.txt");
        let answering = tokio::spawn(async move {
            let mut pending = Pending::default();
            let answers = [
                Ok(json!({"content": "unsaved"})),
                Err(json!({"code": -32603, "message": "no such buffer"})),
                Ok(json!({"text": "wrong shape"})),
            ];
            for answer in answers {
                let call = received.recv().await.unwrap();
                assert_eq!(call.method.name(), "fs/read_text_file");
                assert_eq!(
                    call.method.params().unwrap(),
                    json!({"sessionId": "s", "path": "/p/a.txt"})
                );
                let id = pending.add(call.reply);
                assert!(pending.answer(&id, answer));
                assert!(!pending.answer(&id, Ok(Value::Null)), "answered twice");
            }
            // The last one is never answered.
            let call = received.recv().await.unwrap();
            (pending, call)
        });
        assert_eq!(files.read_text(path).await.unwrap(), "unsaved");
        assert_eq!(
            files.read_text(path).await,
            Err(EditorFileError::Refused("no such buffer".into()))
        );
        assert!(matches!(
            files.read_text(path).await,
            Err(EditorFileError::BadAnswer(_))
        ));
        assert_eq!(
            files.read_text(path).await,
            Err(EditorFileError::TimedOut { seconds: 0 })
        );
        let (mut pending, call) = answering.await.unwrap();
        let id = pending.add(call.reply);
        // The tool stopped waiting: a late answer goes nowhere, and is forgotten.
        pending.add(oneshot::channel().0);
        assert!(!pending.waiting.contains_key(&id));
        drop(files);
    }

    #[tokio::test]
    async fn a_closed_connection_is_gone() {
        let (files, received) = files(ANSWER_TIME);
        drop(received);
        assert_eq!(
            files.write_text(Path::new("/p/a"), "x").await,
            Err(EditorFileError::Gone)
        );
    }

    #[test]
    fn the_offer_decides_what_goes_through_the_client() {
        let caps = |read: bool, write: bool| {
            serde_json::from_value::<ClientCapabilities>(
                json!({"fs": {"readTextFile": read, "writeTextFile": write}}),
            )
            .unwrap()
        };
        let (calls, _received) = mpsc::unbounded_channel();
        let session: SessionCell = Arc::new(OnceLock::from(SessionId::new("s")));
        let both = access(&caps(true, true), &session, calls.clone());
        assert!(both.reader().is_some() && both.writer().is_some());
        let reads = access(&caps(true, false), &session, calls.clone());
        assert!(reads.reader().is_some() && reads.writer().is_none());
        let writes = access(&caps(false, true), &session, calls.clone());
        assert!(writes.reader().is_none() && writes.writer().is_some());
        let none = access(&caps(false, false), &session, calls);
        assert!(matches!(none, FileAccess::Disk));
        let empty = serde_json::from_value::<ClientCapabilities>(json!({})).unwrap();
        assert!(matches!(
            access(&empty, &session, mpsc::unbounded_channel().0),
            FileAccess::Disk
        ));
    }
}
