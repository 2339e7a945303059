//! What the model sees of an MCP result. Tool results reach the model as text, so each
//! content block becomes text: text as is; an embedded text resource with a line naming
//! its URI; images, audio and binary resources as one line saying what they are and how
//! big (the bytes would be noise to a text model); a resource link as its URI with how
//! to read it; structured content as JSON when the text does not already carry it.
//! It reads the result as JSON by the field names of the MCP specification, so a
//! server's odd or hostile result is handled the same way as a well-formed one. It
//! knows nothing of tools or servers beyond the name it is given.

use serde_json::Value;

/// One result, as text for the model.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rendered {
    /// The text.
    pub text: String,
    /// The server said the call failed (`isError`).
    pub is_error: bool,
}

/// Whether `structured` is only `text` under one key, as servers wrap a text result
/// (`{"content": TEXT}` of server-filesystem, `{"result": TEXT}` of Python's FastMCP):
/// adding it would repeat the whole text.
fn wraps_text(structured: &Value, text: &str) -> bool {
    let Some(map) = structured.as_object() else {
        return false;
    };
    let mut values = map.values();
    match (values.next(), values.next()) {
        (Some(Value::String(only)), None) => !text.trim().is_empty() && only.trim() == text.trim(),
        _ => false,
    }
}

/// Renders a `tools/call` result; `resources_tool` is the name of the tool that reads
/// the server's resources, for resource links.
pub fn tool_result(result: &Value, resources_tool: &str) -> Rendered {
    let mut parts: Vec<String> = Vec::new();
    if let Some(Value::Array(blocks)) = result.get("content") {
        for block in blocks {
            if let Some(text) = block_text(block, resources_tool) {
                parts.push(text);
            }
        }
    }
    let text_so_far = parts.join("\n");
    if let Some(structured) = result.get("structuredContent").filter(|v| !v.is_null()) {
        let json = serde_json::to_string(structured).unwrap_or_default();
        let already = serde_json::from_str::<Value>(text_so_far.trim())
            .ok()
            .as_ref()
            == Some(structured)
            || wraps_text(structured, &text_so_far);
        if !already {
            parts.push(format!("Structured result: {json}"));
        }
    }
    let is_error = result
        .get("isError")
        .and_then(Value::as_bool)
        .unwrap_or(false);
    let text = if parts.is_empty() {
        "(the tool returned no content)".to_string()
    } else {
        parts.join("\n")
    };
    Rendered { text, is_error }
}

/// Renders a `resources/read` result.
pub fn resource_contents(result: &Value) -> String {
    let Some(Value::Array(contents)) = result.get("contents") else {
        return "(the resource has no contents)".to_string();
    };
    let parts: Vec<String> = contents.iter().map(contents_text).collect();
    if parts.is_empty() {
        "(the resource has no contents)".to_string()
    } else {
        parts.join("\n")
    }
}

/// One content block as text (`None` for a block too broken to say anything of).
pub(crate) fn block_text(block: &Value, resources_tool: &str) -> Option<String> {
    let kind = block.get("type").and_then(Value::as_str).unwrap_or("");
    let str_of = |key: &str| block.get(key).and_then(Value::as_str);
    Some(match kind {
        "text" => str_of("text")?.to_string(),
        "image" | "audio" => format!(
            "[{kind}: {}, {} — not shown: tool results reach you as text]",
            str_of("mimeType").unwrap_or("unknown type"),
            size_of_base64(str_of("data").unwrap_or(""))
        ),
        "resource" => contents_text(block.get("resource")?),
        "resource_link" => {
            let uri = str_of("uri")?;
            let mut line = format!("[resource link: {uri}");
            if let Some(name) = str_of("name") {
                line.push_str(&format!(" ({name}"));
                if let Some(mime) = str_of("mimeType") {
                    line.push_str(&format!(", {mime}"));
                }
                line.push(')');
            }
            if let Some(d) = str_of("description") {
                line.push_str(&format!(" — {d}"));
            }
            line.push_str(&format!("; read it with {resources_tool}]"));
            line
        }
        other => format!("[content of type {other:?} not shown]"),
    })
}

fn contents_text(contents: &Value) -> String {
    let uri = contents.get("uri").and_then(Value::as_str).unwrap_or("?");
    let mime = contents.get("mimeType").and_then(Value::as_str);
    if let Some(text) = contents.get("text").and_then(Value::as_str) {
        return format!("[resource {uri}]\n{text}");
    }
    let blob = contents.get("blob").and_then(Value::as_str).unwrap_or("");
    format!(
        "[resource {uri}: binary, {}, {} — not shown]",
        mime.unwrap_or("unknown type"),
        size_of_base64(blob)
    )
}

/// The decoded size of base64 text, in words.
fn size_of_base64(data: &str) -> String {
    let len = data.trim_end_matches('=').len() * 3 / 4;
    if len < 1024 {
        format!("{len} bytes")
    } else {
        format!("{:.1} KB", len as f64 / 1024.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn every_kind_of_block_becomes_text() {
        let result = json!({"content": [
            {"type": "text", "text": "hello"},
            {"type": "image", "data": "iVBORw0KGgo=", "mimeType": "image/png"},
            {"type": "resource_link", "uri": "file:///a.txt", "name": "a", "mimeType": "text/plain"},
            {"type": "resource", "resource": {"uri": "mem://x", "text": "inside"}},
            {"type": "resource", "resource": {"uri": "mem://y", "blob": "AAAA", "mimeType": "application/zip"}},
            {"type": "hologram"}
        ]});
        let r = tool_result(&result, "mcp__s__resources");
        assert!(!r.is_error);
        let lines: Vec<&str> = r.text.lines().collect();
        assert_eq!(lines[0], "hello");
        assert_eq!(
            lines[1],
            "[image: image/png, 8 bytes — not shown: tool results reach you as text]"
        );
        assert_eq!(
            lines[2],
            "[resource link: file:///a.txt (a, text/plain); read it with mcp__s__resources]"
        );
        assert_eq!(lines[3..5], ["[resource mem://x]", "inside"]);
        assert!(lines[5].starts_with("[resource mem://y: binary, application/zip, 3 bytes"));
        assert_eq!(lines[6], "[content of type \"hologram\" not shown]");
    }

    #[test]
    fn structured_content_is_added_unless_the_text_is_it() {
        let both =
            json!({"content": [{"type": "text", "text": "5"}], "structuredContent": {"sum": 5}});
        assert_eq!(
            tool_result(&both, "r").text,
            "5\nStructured result: {\"sum\":5}"
        );
        let same = json!({"content": [{"type": "text", "text": "{\"sum\": 5}"}], "structuredContent": {"sum": 5}});
        assert_eq!(tool_result(&same, "r").text, "{\"sum\": 5}");
        // A text result wrapped under one key (server-filesystem, FastMCP) is not repeated.
        let wrapped = json!({"content": [{"type": "text", "text": "[FILE] a.txt\n"}], "structuredContent": {"content": "[FILE] a.txt"}});
        assert_eq!(tool_result(&wrapped, "r").text, "[FILE] a.txt\n");
        let fastmcp = json!({"content": [{"type": "text", "text": "ok"}], "structuredContent": {"result": "ok"}});
        assert_eq!(tool_result(&fastmcp, "r").text, "ok");
        // Anything more than the text is still added.
        let more = json!({"content": [{"type": "text", "text": "ok"}], "structuredContent": {"result": "ok", "n": 1}});
        assert_eq!(
            tool_result(&more, "r").text,
            "ok\nStructured result: {\"result\":\"ok\",\"n\":1}"
        );
        let other = json!({"content": [{"type": "text", "text": "ok"}], "structuredContent": {"result": "no"}});
        assert!(tool_result(&other, "r").text.contains("Structured result"));
        let only = json!({"structuredContent": [1, 2]});
        assert_eq!(tool_result(&only, "r").text, "Structured result: [1,2]");
    }

    #[test]
    fn errors_and_empty_and_hostile_results() {
        let err = json!({"content": [{"type": "text", "text": "boom"}], "isError": true});
        assert_eq!(
            tool_result(&err, "r"),
            Rendered {
                text: "boom".into(),
                is_error: true
            }
        );
        assert_eq!(
            tool_result(&json!({}), "r").text,
            "(the tool returned no content)"
        );
        let hostile = json!({"content": [{"type": "text"}, {"type": 5}, "x", {"type": "resource"}], "isError": "yes"});
        let r = tool_result(&hostile, "r");
        assert!(!r.is_error);
        assert!(r.text.contains("not shown"));
        assert_eq!(
            resource_contents(&json!({"contents": "no"})),
            "(the resource has no contents)"
        );
    }
}
