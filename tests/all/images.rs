//! Images through the real binary: an `@shot.png` mention and `-p --image` reach the
//! server as `image_url` parts carrying the file's bytes; the session file keeps only a
//! reference (the bytes once, by hash, beside it) and a resumed session sends them
//! again; a file is an image by its first bytes, not its name; a mentioned image is
//! judged like any mentioned file (a link out of the project is refused unattended); a
//! server that refuses images is its own error with advice and exit code 3; with
//! `images = false` attaching one says so and nothing is sent.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::support::*;

/// A PNG by its first bytes, `size` bytes long, with a marker inside.
pub(super) fn png(size: usize) -> Vec<u8> {
    let mut bytes = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR".to_vec();
    let mut x: u32 = 12345;
    while bytes.len() < size {
        x = x.wrapping_mul(1_103_515_245).wrapping_add(12_345);
        bytes.push((x >> 16) as u8);
    }
    bytes
}

/// `bytes` in standard base64 (written here again so the test does not trust the code
/// under test).
pub(super) fn base64(bytes: &[u8]) -> String {
    const A: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::new();
    for c in bytes.chunks(3) {
        let n = (u32::from(c[0]) << 16)
            | (u32::from(*c.get(1).unwrap_or(&0)) << 8)
            | u32::from(*c.get(2).unwrap_or(&0));
        for (i, shift) in [18, 12, 6, 0].into_iter().enumerate() {
            if i <= c.len() {
                out.push(A[((n >> shift) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

/// The `image_url` URLs of the user messages of a request, message by message.
pub(super) fn image_urls(request: &RecordedRequest) -> Vec<Vec<String>> {
    request
        .messages()
        .iter()
        .filter(|m| m["role"] == "user")
        .map(|m| match &m["content"] {
            Value::Array(parts) => parts
                .iter()
                .filter(|p| p["type"] == "image_url")
                .map(|p| p["image_url"]["url"].as_str().unwrap().to_string())
                .collect(),
            _ => Vec::new(),
        })
        .collect()
}

/// The saved session files under `home`.
fn session_files(home: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let mut stack = vec![home.join("sessions")];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|e| e == "jsonl") {
                found.push(path);
            }
        }
    }
    found
}

/// The files in the images folder beside `session`.
fn stored_images(session: &Path) -> Vec<PathBuf> {
    let dir = session.with_extension("artifacts").join("images");
    std::fs::read_dir(dir)
        .map(|entries| entries.flatten().map(|e| e.path()).collect())
        .unwrap_or_default()
}

#[test]
fn a_mention_and_image_flags_become_image_parts_stored_once_by_reference_and_resent_on_resume() {
    let dirs = Dirs::new();
    let shot = png(300 * 1024);
    std::fs::write(dirs.project().join("shot.png"), &shot).unwrap();
    let url = format!("data:image/png;base64,{}", base64(&shot));

    let server = MockServer::start(vec![answer("a red square")]);
    let out = server.run(&dirs, &["-p", "what is in @shot.png"]);
    assert_exit(&out, 0);
    let requests = server.chat_requests();
    assert_eq!(image_urls(&requests[0]), [vec![url.clone()]]);
    let user = &requests[0].messages()[1];
    let text = user["content"][0]["text"].as_str().unwrap();
    assert!(text.starts_with("what is in @shot.png"), "{text}");
    assert!(text.contains("image #1"), "{text}");

    // Saved by reference: the file holds no image bytes, the bytes are stored once.
    let sessions = session_files(dirs.home());
    assert_eq!(sessions.len(), 1);
    let saved = std::fs::read_to_string(&sessions[0]).unwrap();
    assert!(
        !saved.contains(&base64(&shot[..3000])),
        "image bytes inlined"
    );
    assert!(saved.len() < 16 * 1024, "{} bytes", saved.len());
    assert_eq!(stored_images(&sessions[0]).len(), 1);
    assert_eq!(
        std::fs::read(&stored_images(&sessions[0])[0]).unwrap(),
        shot
    );

    // Resumed with the same image again by --image: the old one is sent again, the new
    // reference stores nothing more, and the file grows by under 1 KB for it.
    let plain_before = saved.len();
    let server = MockServer::start(vec![answer("the same"), answer("plain")]);
    let out = server.run(&dirs, &["-c", "-p", "and this one?", "--image", "shot.png"]);
    assert_exit(&out, 0);
    let with_image = std::fs::read_to_string(&sessions[0]).unwrap().len() - plain_before;
    let requests = server.chat_requests();
    assert_eq!(
        image_urls(&requests[0]),
        [vec![url.clone()], vec![url.clone()]]
    );
    let last = requests[0].messages().last().unwrap().clone();
    assert_eq!(
        last["content"][0]["text"],
        "and this one?\n\n[image #1: shot.png]"
    );
    assert_eq!(stored_images(&sessions[0]).len(), 1);
    // The same turn without an image, for comparison.
    let before = std::fs::read_to_string(&sessions[0]).unwrap().len();
    let out = server.run(&dirs, &["-c", "-p", "and this one?"]);
    assert_exit(&out, 0);
    let without_image = std::fs::read_to_string(&sessions[0]).unwrap().len() - before;
    assert!(
        with_image < without_image + 1024,
        "with the image reference {with_image} bytes, without {without_image}"
    );
}

#[test]
fn an_image_is_told_by_its_bytes_and_is_judged_like_any_mentioned_file() {
    let Outside { dirs, outside } = Outside::new();
    // Named .png but text: attached as text. An SVG stays text. A JPEG named .txt is an
    // image.
    write(&dirs.project().join("fake.png"), "FAKE-PNG-TEXT\n");
    write(
        &dirs.project().join("logo.svg"),
        "<svg xmlns=\"http://www.w3.org/2000/svg\"/>\n",
    );
    std::fs::write(
        dirs.project().join("photo.txt"),
        b"\xff\xd8\xff\xe0JFIF-ish",
    )
    .unwrap();
    let server = MockServer::start(vec![answer("ok")]);
    let out = server.run(&dirs, &["-p", "see @fake.png @logo.svg @photo.txt"]);
    assert_exit(&out, 0);
    let request = &server.chat_requests()[0];
    let urls = image_urls(request);
    assert_eq!(urls.len(), 1);
    assert_eq!(urls[0].len(), 1);
    assert!(
        urls[0][0].starts_with("data:image/jpeg;base64,"),
        "{urls:?}"
    );
    let text = request.messages()[1]["content"][0]["text"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(text.contains("FAKE-PNG-TEXT"), "{text}");
    assert!(text.contains("<svg xmlns"), "{text}");

    // A link in the project to an image outside it is judged by where it leads: with
    // nobody to ask, refused, and nothing sent.
    std::fs::write(outside.path().join("secret.png"), png(100)).unwrap();
    std::os::unix::fs::symlink(
        outside.path().join("secret.png"),
        dirs.project().join("link.png"),
    )
    .unwrap();
    for prompt in [
        "see @link.png",
        &format!("see @{}", outside.path().join("secret.png").display()),
    ] {
        let server = MockServer::start(vec![answer("ok")]);
        let out = server.run(&dirs, &["-p", prompt]);
        assert_exit(&out, 2);
        let stderr = stderr_text(&out);
        assert!(stderr.contains("not attached"), "{prompt}: {stderr}");
        assert!(server.chat_requests().is_empty(), "{prompt}");
    }

    // Over the cap: refused with the size, nothing sent.
    std::fs::write(dirs.project().join("big.png"), png(4096)).unwrap();
    write(&dirs.home().join("config.toml"), "max_image_bytes = 1000\n");
    for args in [
        vec!["-p", "see @big.png"],
        vec!["-p", "see", "--image", "big.png"],
    ] {
        let server = MockServer::start(vec![answer("ok")]);
        let out = server.run(&dirs, &args);
        assert_exit(&out, 2);
        let stderr = stderr_text(&out);
        assert!(stderr.contains("over the 1000-byte cap"), "{stderr}");
        assert!(server.chat_requests().is_empty());
    }
    // --image of a file that is no image.
    let server = MockServer::start(vec![answer("ok")]);
    let out = server.run(&dirs, &["-p", "see", "--image", "fake.png"]);
    assert_exit(&out, 2);
    assert!(
        stderr_text(&out).contains("not an image"),
        "{}",
        stderr_text(&out)
    );
    assert!(server.chat_requests().is_empty());
}

#[test]
fn a_server_that_refuses_images_is_a_clear_error_and_images_false_sends_nothing() {
    let dirs = Dirs::new();
    std::fs::write(dirs.project().join("shot.png"), png(200)).unwrap();
    // The words of real servers refusing image parts.
    for (status, message) in [
        (
            400,
            "Invalid content type. image_url is only supported by certain models.",
        ),
        (400, "Qwen/Qwen2.5-7B-Instruct is not a multimodal model"),
        (
            500,
            "image input is not supported - hint: if this is unexpected, you may need to provide the mmproj",
        ),
        (422, "unknown variant `image_url`, expected `text`"),
    ] {
        let server = MockServer::start(vec![
            http_error(status).json_body(serde_json::json!({"error": {"message": message}})),
        ]);
        let out = server.run(&dirs, &["-p", "see @shot.png", "--output-format", "json"]);
        assert_exit(&out, 3);
        let stdout = stdout_text(&out);
        assert!(stdout.contains("images_refused"), "{message}: {stdout}");
        assert!(stdout.contains("images = false"), "{message}: {stdout}");
        assert!(stdout.contains("vision model"), "{message}: {stdout}");
        // Not retried: a refusal is not a flaky server.
        assert_eq!(server.chat_requests().len(), 1, "{message}");
    }
    // The same words about something else, without images, stay a plain bad request.
    let server =
        MockServer::start(vec![http_error(400).json_body(
            serde_json::json!({"error": {"message": "Invalid content type."}}),
        )]);
    let out = server.run(&dirs, &["-p", "no image here", "--output-format", "json"]);
    assert_exit(&out, 3);
    assert!(
        stdout_text(&out).contains("bad_request"),
        "{}",
        stdout_text(&out)
    );

    // images = false: attaching says so, and nothing is sent.
    write(&dirs.home().join("config.toml"), "images = false\n");
    for args in [
        vec!["-p", "see @shot.png"],
        vec!["-p", "see", "--image", "shot.png"],
    ] {
        let server = MockServer::start(vec![answer("ok")]);
        let out = server.run(&dirs, &args);
        assert_exit(&out, 2);
        let stderr = stderr_text(&out);
        assert!(stderr.contains("takes no images"), "{stderr}");
        assert!(server.chat_requests().is_empty());
    }
}

#[test]
fn view_image_shows_a_project_image_after_the_results_and_is_judged_like_read_file() {
    let Outside { dirs, outside } = Outside::new();
    let shot = png(500);
    std::fs::write(dirs.project().join("plot.png"), &shot).unwrap();
    let server = MockServer::start(vec![
        tool_reply("c1", "view_image", r#"{"path":"plot.png"}"#),
        answer("a plot"),
    ]);
    let out = server.run(&dirs, &["-p", "look at the plot"]);
    assert_exit(&out, 0);
    let requests = server.chat_requests();
    assert!(requests[0].tool_names().contains(&"view_image".to_string()));
    let messages = requests[1].messages();
    let n = messages.len();
    assert_eq!(messages[n - 2]["role"], "tool");
    assert!(
        messages[n - 2]["content"]
            .as_str()
            .unwrap()
            .contains("shown to you in the next message")
    );
    assert_eq!(messages[n - 1]["role"], "user");
    assert!(
        messages[n - 1]["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains("returned by tool call c1"),
        "{:?}",
        messages[n - 1]
    );
    assert_eq!(
        image_urls(&requests[1]).last().unwrap(),
        &vec![format!("data:image/png;base64,{}", base64(&shot))]
    );

    // Outside the project, through a link or a path: asks, so refused unattended; no
    // image is sent.
    std::fs::write(outside.path().join("private.png"), png(300)).unwrap();
    std::os::unix::fs::symlink(
        outside.path().join("private.png"),
        dirs.project().join("shortcut.png"),
    )
    .unwrap();
    let outside_path = outside.path().join("private.png").display().to_string();
    for path in ["shortcut.png", outside_path.as_str()] {
        let args = serde_json::json!({ "path": path }).to_string();
        let server = MockServer::start(vec![tool_reply("c1", "view_image", &args), answer("ok")]);
        let out = server.run(&dirs, &["-p", "look"]);
        assert_exit(&out, 0);
        let requests = server.chat_requests();
        let result = requests[1].tool_result("c1");
        assert!(!result.contains("shown to you"), "{path}: {result}");
        assert!(
            image_urls(&requests[1]).iter().all(Vec::is_empty),
            "{path}: an image was sent"
        );
    }

    // A model that cannot see is not offered the tool.
    write(&dirs.home().join("config.toml"), "images = false\n");
    let server = MockServer::start(vec![answer("ok")]);
    let out = server.run(&dirs, &["-p", "hi"]);
    assert_exit(&out, 0);
    assert!(
        !server.chat_requests()[0]
            .tool_names()
            .contains(&"view_image".to_string())
    );
}

/// Images handed over as bytes (`Op::with_images`, the way ACP and stream-json will)
/// are sent; a compaction drops them with the older messages and says so.
#[tokio::test]
async fn compaction_drops_old_images_and_says_so() {
    use harness9::protocol::{Event, ImageInput, Op};
    let dir = tempfile::tempdir().unwrap();
    let server = MockServer::start(vec![
        answer(&"a long answer ".repeat(300)),
        answer("the summary"),
        answer("after"),
    ]);
    let mut s = SessionBuilder::new(&server, dir.path()).start();
    s.op(Op::typed("look").with_images(vec![ImageInput::Bytes {
        bytes: png(400),
        name: "clipboard".into(),
    }]));
    s.until(|e| matches!(e, Event::TurnComplete { .. })).await;
    s.op(Op::Compact { focus: None });
    let warning = s
        .until(|e| matches!(e, Event::Warning { message } if message.contains("compaction")))
        .await;
    assert!(
        matches!(&warning, Event::Warning { message }
            if message.contains("1 image(s)") && message.contains("clipboard")),
        "{warning:?}"
    );
    s.turn("next").await;
    let reqs = server.chat_requests();
    assert_eq!(
        image_urls(&reqs[0]),
        [vec![format!("data:image/png;base64,{}", base64(&png(400)))]]
    );
    let last = reqs.last().unwrap();
    assert!(
        image_urls(last).iter().all(Vec::is_empty),
        "{:?}",
        last.raw_body
    );
    assert!(last.raw_body.contains("dropped by this compaction"));
}
