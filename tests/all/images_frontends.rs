//! Images from the frontends that take them as data, through the real binary: an
//! editor's `session/prompt` image block (ACP, `promptCapabilities.image` advertised)
//! and a stream-json `user` line's `images` reach the server as `image_url` parts with
//! their bytes; an image the size cap, the type check or `images = false` refuses is an
//! error naming why, and nothing is sent for it.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use serde_json::{Value, json};

use crate::acp::{Acp, initialize, new_session};
use crate::images::{base64, image_urls, png};
use crate::support::*;

fn image_block(bytes: &[u8], mime: &str) -> Value {
    json!({"type": "image", "data": base64(bytes), "mimeType": mime})
}

/// Sends a prompt of `blocks` as request `id` and returns its answer.
fn prompt(acp: &mut Acp, session: &str, id: u64, blocks: Value) -> Value {
    acp.request(
        id,
        "session/prompt",
        json!({"sessionId": session, "prompt": blocks}),
    );
    acp.until_answer(id).1
}

#[test]
fn an_editor_prompt_image_is_sent_and_a_refused_one_is_a_json_rpc_error_naming_why() {
    let server = MockServer::start(vec![answer("A small PNG.")]);
    let dirs = Dirs::new();
    write(&dirs.home().join("config.toml"), "max_image_bytes = 1000\n");
    let mut acp = Acp::start(&server, &dirs);
    let init = initialize(&mut acp);
    assert_eq!(
        init["result"]["agentCapabilities"]["promptCapabilities"]["image"], true,
        "{init}"
    );
    let session = new_session(&mut acp, &dirs);

    let shot = png(300);
    let answer = prompt(
        &mut acp,
        &session,
        3,
        json!([{"type": "text", "text": "what is this?"}, image_block(&shot, "image/png")]),
    );
    assert_eq!(answer["result"]["stopReason"], "end_turn", "{answer}");
    let requests = server.chat_requests();
    assert_eq!(requests.len(), 1);
    let urls: Vec<String> = image_urls(&requests[0]).into_iter().flatten().collect();
    assert_eq!(
        urls,
        vec![format!("data:image/png;base64,{}", base64(&shot))]
    );

    // Each refused for its own reason, said in the error; nothing reaches the server.
    let cases = [
        (image_block(&png(2000), "image/png"), "1000-byte cap"),
        (
            image_block(b"just some text, no image", "image/png"),
            "not an image",
        ),
        (image_block(&shot, "image/jpeg"), "said to be image/jpeg"),
        (
            json!({"type": "image", "data": "not base64!", "mimeType": "image/png"}),
            "not valid base64",
        ),
    ];
    for (i, (block, says)) in cases.into_iter().enumerate() {
        let id = 10 + i as u64;
        let answer = prompt(
            &mut acp,
            &session,
            id,
            json!([{"type": "text", "text": "look"}, block]),
        );
        assert_eq!(answer["error"]["code"], -32602, "{answer}");
        let message = answer["error"]["message"].as_str().unwrap();
        assert!(message.contains(says), "{says}: {message}");
    }
    assert_eq!(server.chat_requests().len(), 1);
    // The session goes on.
    server.push(crate::support::answer("still here"));
    let answer = prompt(
        &mut acp,
        &session,
        20,
        json!([{"type": "text", "text": "hi"}]),
    );
    assert_eq!(answer["result"]["stopReason"], "end_turn", "{answer}");
    assert_eq!(acp.close().code(), Some(0));
}

#[test]
fn an_editor_image_for_a_model_that_takes_none_is_refused() {
    let server = MockServer::start(vec![answer("ok")]);
    let dirs = Dirs::new();
    write(&dirs.home().join("config.toml"), "images = false\n");
    let mut acp = Acp::start(&server, &dirs);
    initialize(&mut acp);
    let session = new_session(&mut acp, &dirs);
    let answer = prompt(
        &mut acp,
        &session,
        3,
        json!([{"type": "text", "text": "see"}, image_block(&png(100), "image/png")]),
    );
    assert_eq!(answer["error"]["code"], -32602, "{answer}");
    assert!(
        answer["error"]["message"]
            .as_str()
            .unwrap()
            .contains("takes no images"),
        "{answer}"
    );
    assert!(server.chat_requests().is_empty());
    assert_eq!(acp.close().code(), Some(0));
}
