//! A launch handed to a launcher that is already running: the launcher's arguments (the
//! same ones [`super::launcher::parse`] reads from the command line), the command's
//! working folder, its exact environment, and what becomes of its standard streams. A
//! session keeps one launcher started ahead (`exec`'s spare), waiting on its stdin for
//! one job, so a confined command does not wait for the launcher's own start; the
//! policy is still computed when the command starts and applied from scratch, exactly
//! as a launcher started for it would.
//!
//! On the wire: [`MAGIC`], the body's length (8 bytes, little-endian), then the body:
//! NUL-terminated fields (`cwd`, stdin, stderr, the number of variables, each `NAME=VALUE`,
//! then the arguments). Whatever follows on stdin is the command's stdin. It owns the
//! format; it must not know how a job is run.

use std::ffi::{OsStr, OsString};
use std::io::Read;
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::path::PathBuf;

/// The first bytes of every job.
pub const MAGIC: &[u8; 8] = b"h9job01\0";
/// The largest body read (the command line, over 100 KiB, goes through a file; the
/// environment is bounded by what `execve` takes).
pub const MAX_BODY: usize = 16 * 1024 * 1024;

/// What the command reads on stdin.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum JobStdin {
    /// `/dev/null`.
    Null,
    /// What follows the job on the launcher's stdin.
    Rest,
}

/// Where the command's stderr (and the launcher's own messages) go.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum JobStderr {
    /// The launcher's stderr.
    Own,
    /// The launcher's stdout: one stream, interleaved as written.
    IntoStdout,
}

/// One launch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Job {
    /// The command's working folder.
    pub cwd: PathBuf,
    /// Its stdin.
    pub stdin: JobStdin,
    /// Its stderr.
    pub stderr: JobStderr,
    /// Its whole environment, in order.
    pub env: Vec<(OsString, OsString)>,
    /// The launcher's arguments after its marker (`--mode … -- PROGRAM ARGS…`).
    pub args: Vec<OsString>,
}

/// Why a job could not be read.
#[derive(Debug, thiserror::Error)]
pub enum JobError {
    /// Nothing came: the session let the launcher go unused.
    #[error("no job came")]
    NoJob,
    /// Reading failed or stopped in the middle.
    #[error("cannot read the job: {0}")]
    Io(#[source] std::io::Error),
    /// The bytes are not a job.
    #[error("malformed job: {0}")]
    Malformed(&'static str),
}

impl Job {
    /// The job on the wire.
    pub fn encode(&self) -> Vec<u8> {
        let mut body = Vec::new();
        let mut field = |bytes: &[u8]| {
            body.extend_from_slice(bytes);
            body.push(0);
        };
        field(self.cwd.as_os_str().as_bytes());
        field(match self.stdin {
            JobStdin::Null => b"null",
            JobStdin::Rest => b"rest",
        });
        field(match self.stderr {
            JobStderr::Own => b"own",
            JobStderr::IntoStdout => b"stdout",
        });
        field(self.env.len().to_string().as_bytes());
        for (name, value) in &self.env {
            let mut entry = name.as_bytes().to_vec();
            entry.push(b'=');
            entry.extend_from_slice(value.as_bytes());
            field(&entry);
        }
        for arg in &self.args {
            field(arg.as_bytes());
        }
        let mut out = Vec::with_capacity(MAGIC.len() + 8 + body.len());
        out.extend_from_slice(MAGIC);
        out.extend_from_slice(&(body.len() as u64).to_le_bytes());
        out.extend_from_slice(&body);
        out
    }

    /// Reads one job from `input`, not a byte more (what follows is the command's).
    pub fn read(input: &mut dyn Read) -> Result<Job, JobError> {
        let mut head = [0u8; 16];
        let got = read_full(input, &mut head)?;
        if got == 0 {
            return Err(JobError::NoJob);
        }
        if got < head.len() || &head[..8] != MAGIC {
            return Err(JobError::Malformed("no job header"));
        }
        let mut len = [0u8; 8];
        len.copy_from_slice(&head[8..]);
        let len = usize::try_from(u64::from_le_bytes(len))
            .ok()
            .filter(|n| *n <= MAX_BODY)
            .ok_or(JobError::Malformed("the job is too long"))?;
        let mut body = vec![0u8; len];
        if read_full(input, &mut body)? < len {
            return Err(JobError::Malformed("the job ends early"));
        }
        Job::decode(&body)
    }

    fn decode(body: &[u8]) -> Result<Job, JobError> {
        let Some(body) = body.strip_suffix(&[0]) else {
            return Err(JobError::Malformed("unterminated field"));
        };
        let mut fields = body.split(|b| *b == 0);
        let mut next = || fields.next().ok_or(JobError::Malformed("missing field"));
        let cwd = PathBuf::from(OsStr::from_bytes(next()?));
        let stdin = match next()? {
            b"null" => JobStdin::Null,
            b"rest" => JobStdin::Rest,
            _ => return Err(JobError::Malformed("unknown stdin")),
        };
        let stderr = match next()? {
            b"own" => JobStderr::Own,
            b"stdout" => JobStderr::IntoStdout,
            _ => return Err(JobError::Malformed("unknown stderr")),
        };
        let count: usize = std::str::from_utf8(next()?)
            .ok()
            .and_then(|n| n.parse().ok())
            .ok_or(JobError::Malformed("bad variable count"))?;
        let mut env = Vec::new();
        for _ in 0..count {
            let entry = next()?;
            // A name never holds `=` (a value may).
            let eq = entry
                .iter()
                .position(|b| *b == b'=')
                .filter(|i| *i > 0)
                .ok_or(JobError::Malformed("bad variable"))?;
            env.push((
                OsString::from_vec(entry[..eq].to_vec()),
                OsString::from_vec(entry[eq + 1..].to_vec()),
            ));
        }
        let args = fields
            .map(|a| OsString::from_vec(a.to_vec()))
            .collect::<Vec<_>>();
        if !cwd.is_absolute() {
            return Err(JobError::Malformed("the working folder is not absolute"));
        }
        Ok(Job {
            cwd,
            stdin,
            stderr,
            env,
            args,
        })
    }
}

/// Reads until `buf` is full or the input ends; returns how much was read.
fn read_full(input: &mut dyn Read, buf: &mut [u8]) -> Result<usize, JobError> {
    let mut done = 0;
    while done < buf.len() {
        match input.read(&mut buf[done..]) {
            Ok(0) => break,
            Ok(n) => done += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(JobError::Io(e)),
        }
    }
    Ok(done)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn job() -> Job {
        Job {
            cwd: PathBuf::from("/p q"),
            stdin: JobStdin::Rest,
            stderr: JobStderr::IntoStdout,
            env: vec![
                ("PATH".into(), "/bin:/usr/bin".into()),
                ("EMPTY".into(), "".into()),
                ("EQ".into(), "a=b=c".into()),
            ],
            args: ["--mode", "read-only", "--", "bash", "-c", "echo ''", ""]
                .iter()
                .map(OsString::from)
                .collect(),
        }
    }

    #[test]
    fn a_job_reads_back_and_leaves_what_follows() {
        let mut wire = job().encode();
        wire.extend_from_slice(b"stdin bytes");
        let mut input = &wire[..];
        assert_eq!(Job::read(&mut input).unwrap(), job());
        assert_eq!(input, b"stdin bytes");
    }

    #[test]
    fn nothing_at_all_is_no_job_and_damaged_jobs_are_refused() {
        assert!(matches!(Job::read(&mut &b""[..]), Err(JobError::NoJob)));
        let wire = job().encode();
        for bad in [
            &wire[..10],
            &wire[..wire.len() - 1],
            b"h9job02\0\0\0\0\0\0\0\0\0",
        ] {
            assert!(
                matches!(Job::read(&mut &bad[..]), Err(JobError::Malformed(_))),
                "{bad:?}"
            );
        }
        let mut huge = MAGIC.to_vec();
        huge.extend_from_slice(&u64::MAX.to_le_bytes());
        assert!(Job::read(&mut &huge[..]).is_err());
        let relative = Job {
            cwd: PathBuf::from("p"),
            ..job()
        };
        assert!(Job::read(&mut &relative.encode()[..]).is_err());
    }
}
