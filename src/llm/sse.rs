//! An incremental Server-Sent Events parser over raw bytes. It owns line splitting (LF,
//! CRLF or a lone CR, at any byte boundary, including inside a UTF-8 sequence), field
//! parsing (`data:` lines joined with "\n", `event:` kept, `id:` / `retry:` and `:`
//! comments ignored) and a cap on line length so a broken server cannot make it grow
//! without bound. It must not know what the events mean: JSON, `[DONE]` and chat
//! completions are the client's business.

/// One dispatched event: the `data:` lines joined with "\n", and the `event:` type when
/// the server named one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SseEvent {
    /// The `event:` field, when the server sent one (`None` means "message").
    pub event: Option<String>,
    /// The data lines joined with "\n" (lossily decoded as UTF-8).
    pub data: String,
}

/// What can go wrong while parsing.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SseError {
    /// A single line grew longer than the configured cap.
    #[error("an event-stream line is longer than {limit} bytes")]
    LineTooLong {
        /// The cap in bytes.
        limit: usize,
    },
}

/// The parser. Feed it bytes as they arrive; it returns the events completed so far.
#[derive(Debug)]
pub struct SseParser {
    max_line_bytes: usize,
    /// Bytes of the current, unfinished line.
    line: Vec<u8>,
    /// The previous byte ended a line with CR, so a following LF belongs to it.
    after_cr: bool,
    /// No line has been completed yet (a leading BOM is stripped from the first).
    first_line: bool,
    /// Data buffer: every `data:` value followed by "\n".
    data: String,
    /// At least one `data:` field was seen for the pending event.
    has_data: bool,
    event: Option<String>,
    /// Bytes of lines that are not comments (complete or partial), ever: grows when
    /// the stream carries anything but keep-alive comments and blank lines.
    progress: u64,
    /// Complete lines that are no SSE field at all (HTML, a JSON body...).
    foreign_lines: u64,
}

impl SseParser {
    /// A parser that refuses lines longer than `max_line_bytes`.
    pub fn new(max_line_bytes: usize) -> Self {
        SseParser {
            max_line_bytes,
            line: Vec::new(),
            after_cr: false,
            first_line: true,
            data: String::new(),
            has_data: false,
            event: None,
            progress: 0,
            foreign_lines: 0,
        }
    }

    /// A counter that grows with every byte of a line that is not a comment, so a
    /// caller can tell keep-alive comments from the stream moving on.
    pub fn progress(&self) -> u64 {
        self.progress
    }

    /// How many complete lines were not SSE fields (`data`, `event`, `id`, `retry`),
    /// comments or blank: more than zero means the body is not an event stream.
    pub fn foreign_lines(&self) -> u64 {
        self.foreign_lines
    }

    /// Parses the next bytes of the stream and returns the events they completed.
    pub fn feed(&mut self, bytes: &[u8]) -> Result<Vec<SseEvent>, SseError> {
        let mut out = Vec::new();
        let mut rest = bytes;
        if self.after_cr && !rest.is_empty() {
            self.after_cr = false;
            if rest[0] == b'\n' {
                rest = &rest[1..];
            }
        }
        while !rest.is_empty() {
            match rest.iter().position(|&b| b == b'\n' || b == b'\r') {
                None => {
                    self.push_partial(rest)?;
                    break;
                }
                Some(end) => {
                    let terminator = rest[end];
                    if self.line.is_empty() {
                        self.check_len(end)?;
                        self.line_done(&rest[..end], &mut out);
                    } else {
                        self.push_partial(&rest[..end])?;
                        let line = std::mem::take(&mut self.line);
                        self.line_done(&line, &mut out);
                        // Keep the allocation for the next long line.
                        self.line = line;
                        self.line.clear();
                    }
                    rest = &rest[end + 1..];
                    if terminator == b'\r' {
                        match rest.first() {
                            Some(b'\n') => rest = &rest[1..],
                            Some(_) => {}
                            None => self.after_cr = true,
                        }
                    }
                }
            }
        }
        Ok(out)
    }

    /// Ends the stream. A last line without a line end is processed, and an event still
    /// pending (no blank line after it) is dispatched: servers often end that way.
    pub fn finish(&mut self) -> Result<Vec<SseEvent>, SseError> {
        let mut out = Vec::new();
        if !self.line.is_empty() {
            let line = std::mem::take(&mut self.line);
            self.line_done(&line, &mut out);
        }
        self.dispatch(&mut out);
        self.after_cr = false;
        Ok(out)
    }

    fn check_len(&self, len: usize) -> Result<(), SseError> {
        if len > self.max_line_bytes {
            Err(SseError::LineTooLong {
                limit: self.max_line_bytes,
            })
        } else {
            Ok(())
        }
    }

    fn push_partial(&mut self, bytes: &[u8]) -> Result<(), SseError> {
        self.check_len(self.line.len() + bytes.len())?;
        if self
            .line
            .first()
            .or(bytes.first())
            .is_some_and(|&b| b != b':')
        {
            self.progress += bytes.len() as u64;
        }
        self.line.extend_from_slice(bytes);
        Ok(())
    }

    fn line_done(&mut self, mut line: &[u8], out: &mut Vec<SseEvent>) {
        if self.first_line {
            self.first_line = false;
            line = line.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(line);
        }
        if line.is_empty() {
            self.dispatch(out);
            return;
        }
        if line[0] == b':' {
            return;
        }
        self.progress += line.len() as u64;
        let (name, value) = match line.iter().position(|&b| b == b':') {
            Some(colon) => {
                let value = &line[colon + 1..];
                (&line[..colon], value.strip_prefix(b" ").unwrap_or(value))
            }
            None => (line, &line[line.len()..]),
        };
        match name {
            b"data" => {
                self.data.push_str(&String::from_utf8_lossy(value));
                self.data.push('\n');
                self.has_data = true;
            }
            b"event" => self.event = Some(String::from_utf8_lossy(value).into_owned()),
            // `id` and `retry` are tolerated and ignored.
            b"id" | b"retry" => {}
            // Unknown fields are ignored too, but counted: a body full of them is not
            // an event stream.
            _ => self.foreign_lines += 1,
        }
    }

    fn dispatch(&mut self, out: &mut Vec<SseEvent>) {
        if self.has_data {
            let mut data = std::mem::take(&mut self.data);
            data.pop();
            out.push(SseEvent {
                event: self.event.take(),
                data,
            });
        }
        self.has_data = false;
        self.data.clear();
        self.event = None;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn parse_all(input: &[u8]) -> Vec<SseEvent> {
        let mut p = SseParser::new(1 << 20);
        let mut out = p.feed(input).unwrap();
        out.extend(p.finish().unwrap());
        out
    }

    fn data(d: &str) -> SseEvent {
        SseEvent {
            event: None,
            data: d.to_string(),
        }
    }

    #[test]
    fn simple_events_and_done() {
        let got = parse_all(b"data: {\"a\":1}\n\ndata: [DONE]\n\n");
        assert_eq!(got, vec![data("{\"a\":1}"), data("[DONE]")]);
    }

    #[test]
    fn crlf_and_lone_cr_line_ends() {
        assert_eq!(
            parse_all(b"data: a\r\n\r\ndata: b\r\rdata: c\n\n"),
            vec![data("a"), data("b"), data("c")]
        );
    }

    #[test]
    fn crlf_split_between_feeds_is_one_line_end() {
        let mut p = SseParser::new(100);
        assert!(p.feed(b"data: a\r").unwrap().is_empty());
        // The LF completes the CRLF, it is not a blank line.
        assert!(p.feed(b"\n").unwrap().is_empty());
        assert_eq!(p.feed(b"\r\n").unwrap(), vec![data("a")]);
    }

    #[test]
    fn multi_line_data_is_joined_with_newlines() {
        assert_eq!(
            parse_all(b"data: one\ndata:two\ndata\n\n"),
            vec![data("one\ntwo\n")]
        );
    }

    #[test]
    fn comments_id_retry_and_event_fields() {
        let got = parse_all(b": keep-alive\n\nid: 7\nretry: 10\nevent: error\ndata: x\n\n");
        assert_eq!(
            got,
            vec![SseEvent {
                event: Some("error".into()),
                data: "x".into()
            }]
        );
    }

    #[test]
    fn blank_lines_without_data_dispatch_nothing() {
        assert!(parse_all(b"\n\n\nevent: ping\n\n").is_empty());
    }

    #[test]
    fn eof_without_blank_line_still_dispatches() {
        assert_eq!(parse_all(b"data: [DONE]"), vec![data("[DONE]")]);
        assert_eq!(parse_all(b"data: x\n"), vec![data("x")]);
    }

    #[test]
    fn utf8_split_inside_a_character() {
        let bytes = "data: héllo→\n\n".as_bytes();
        let mut p = SseParser::new(100);
        let mut got = Vec::new();
        for b in bytes {
            got.extend(p.feed(std::slice::from_ref(b)).unwrap());
        }
        assert_eq!(got, vec![data("héllo→")]);
    }

    #[test]
    fn comments_are_not_progress_and_foreign_lines_are_counted() {
        let mut p = SseParser::new(100);
        p.feed(b": ping - 2025\n\n: OPENROUTER PROCESSING\n\n")
            .unwrap();
        assert_eq!((p.progress(), p.foreign_lines()), (0, 0));
        p.feed(b"data: {\"a\"").unwrap();
        let partial = p.progress();
        assert!(partial > 0);
        p.feed(b": not a comment, inside the data line").unwrap();
        assert!(p.progress() > partial);
        p.feed(b"\n\nid: 1\nretry: 5\nevent: x\n\n").unwrap();
        assert_eq!(p.foreign_lines(), 0);
        p.feed(b"<html>not an API</html>\n").unwrap();
        assert_eq!(p.foreign_lines(), 1);
    }

    #[test]
    fn leading_bom_is_stripped() {
        assert_eq!(parse_all(b"\xEF\xBB\xBFdata: a\n\n"), vec![data("a")]);
    }

    #[test]
    fn line_cap_is_enforced_across_feeds() {
        let mut p = SseParser::new(10);
        assert!(p.feed(b"data: 1234").is_ok());
        assert_eq!(p.feed(b"5678\n"), Err(SseError::LineTooLong { limit: 10 }));
        let mut p = SseParser::new(10);
        assert!(p.feed(b"data: 123456789\n").is_err());
    }

    /// Builds a stream from event payloads, with a chosen line-end style per line and
    /// comments sprinkled in.
    fn render(events: &[(Option<String>, Vec<String>)], ends: &[u8], comments: bool) -> Vec<u8> {
        let mut out = Vec::new();
        let mut i = 0;
        let mut end = |out: &mut Vec<u8>| {
            let mut e: &[u8] = match ends[i % ends.len()] % 3 {
                0 => b"\n",
                1 => b"\r\n",
                _ => b"\r",
            };
            // A lone CR followed by LF would read as one CRLF: keep them apart.
            if out.last() == Some(&b'\r') && e == b"\n" {
                e = b"\r";
            }
            i += 1;
            out.extend_from_slice(e);
        };
        for (event, lines) in events {
            if comments {
                out.extend_from_slice(b": ping");
                end(&mut out);
            }
            if let Some(ev) = event {
                out.extend_from_slice(format!("event: {ev}").as_bytes());
                end(&mut out);
            }
            for l in lines {
                out.extend_from_slice(format!("data: {l}").as_bytes());
                end(&mut out);
            }
            end(&mut out);
        }
        out
    }

    fn line_text() -> impl Strategy<Value = String> {
        // Any text without line ends; may contain colons, multi-byte characters.
        proptest::string::string_regex("[^\r\n]{0,20}").unwrap()
    }

    proptest! {
        #[test]
        fn any_split_gives_the_same_events(
            events in proptest::collection::vec(
                (proptest::option::of("[a-z]{1,6}"), proptest::collection::vec(line_text(), 1..4)),
                0..8,
            ),
            ends in proptest::collection::vec(any::<u8>(), 1..8),
            comments in any::<bool>(),
            cuts in proptest::collection::vec(any::<usize>(), 0..12),
        ) {
            let bytes = render(&events, &ends, comments);
            let expected: Vec<SseEvent> = events
                .iter()
                .map(|(e, lines)| SseEvent { event: e.clone(), data: lines.join("\n") })
                .collect();
            prop_assert_eq!(&parse_all(&bytes), &expected);

            let mut cuts: Vec<usize> = cuts.iter().map(|c| c % (bytes.len() + 1)).collect();
            cuts.sort_unstable();
            let mut p = SseParser::new(1 << 20);
            let mut got = Vec::new();
            let mut start = 0;
            for c in cuts.into_iter().chain([bytes.len()]) {
                got.extend(p.feed(&bytes[start..c]).unwrap());
                start = c;
            }
            got.extend(p.finish().unwrap());
            prop_assert_eq!(got, expected);
        }

        #[test]
        fn arbitrary_bytes_never_panic(
            pieces in proptest::collection::vec(proptest::collection::vec(any::<u8>(), 0..64), 0..16),
            cap in 1usize..64,
        ) {
            let mut p = SseParser::new(cap);
            for piece in &pieces {
                if p.feed(piece).is_err() {
                    return Ok(());
                }
            }
            let _ = p.finish();
        }
    }
}
