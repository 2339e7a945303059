//! An MCP server's prompts as slash commands: what the user typed after
//! `/SERVER:PROMPT` bound to the prompt's declared arguments ([`bind`]), and the prompt
//! the server returned made into the text of the user's message ([`message_text`]).
//!
//! The text is the server's, word for word: it never goes through the skill pipeline
//! (no inline `` !`command` ``, no `$ARGUMENTS` or other templates), because a server is
//! remote, untrusted text and expansion could run something. It knows prompt
//! descriptions and JSON, nothing of the agent or terminals.

use serde_json::{Map, Value};

use super::connection::PromptInfo;
use super::content::block_text;

/// Binds `typed` to `prompt`'s arguments: `NAME=value` words set arguments by name;
/// otherwise the words fill the arguments in order, the last one taking the rest of
/// the line (so a single argument takes everything typed).
pub fn bind(server: &str, prompt: &PromptInfo, typed: &str) -> Result<Map<String, Value>, String> {
    let typed = typed.trim();
    let declared = &prompt.arguments;
    let mut bound = Map::new();
    let words: Vec<&str> = typed.split_whitespace().collect();
    let named = !words.is_empty()
        && words.iter().all(|w| {
            w.split_once('=')
                .is_some_and(|(k, _)| declared.iter().any(|a| a.name == k))
        });
    if named {
        for word in words {
            if let Some((k, v)) = word.split_once('=') {
                bound.insert(k.to_string(), Value::String(v.to_string()));
            }
        }
    } else if !typed.is_empty() {
        if declared.is_empty() {
            return Err(format!(
                "/{server}:{} takes no arguments (it was given `{typed}`)",
                prompt.name
            ));
        }
        let mut rest = typed;
        for (i, arg) in declared.iter().enumerate() {
            if rest.is_empty() {
                break;
            }
            if i + 1 == declared.len() {
                bound.insert(arg.name.clone(), Value::String(rest.to_string()));
                break;
            }
            let (word, after) = match rest.find(char::is_whitespace) {
                Some(at) => (&rest[..at], rest[at..].trim_start()),
                None => (rest, ""),
            };
            bound.insert(arg.name.clone(), Value::String(word.to_string()));
            rest = after;
        }
    }
    let missing: Vec<&str> = declared
        .iter()
        .filter(|a| a.required && !bound.contains_key(&a.name))
        .map(|a| a.name.as_str())
        .collect();
    if !missing.is_empty() {
        return Err(format!(
            "/{server}:{} needs {}; usage: {}",
            prompt.name,
            missing.join(", "),
            usage(server, prompt)
        ));
    }
    Ok(bound)
}

/// `/server:prompt <required> [optional]`.
pub fn usage(server: &str, prompt: &PromptInfo) -> String {
    let mut line = format!("/{server}:{}", prompt.name);
    for arg in &prompt.arguments {
        if arg.required {
            line.push_str(&format!(" <{}>", arg.name));
        } else {
            line.push_str(&format!(" [{}]", arg.name));
        }
    }
    line
}

/// The user's message for a `prompts/get` result: the text of its messages; when they
/// are not all the user's, each is labelled with its role.
pub fn message_text(result: &Value) -> String {
    let messages = result
        .get("messages")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let parts: Vec<(String, String)> = messages
        .iter()
        .map(|m| {
            let role = m
                .get("role")
                .and_then(Value::as_str)
                .unwrap_or("user")
                .to_string();
            let text = match m.get("content") {
                Some(Value::Array(blocks)) => blocks
                    .iter()
                    .filter_map(|b| block_text(b, "the server's resources tool"))
                    .collect::<Vec<_>>()
                    .join("\n"),
                Some(block) => block_text(block, "the server's resources tool").unwrap_or_default(),
                None => String::new(),
            };
            (role, text)
        })
        .collect();
    if parts.iter().all(|(role, _)| role == "user") {
        return parts
            .into_iter()
            .map(|(_, t)| t)
            .collect::<Vec<_>>()
            .join("\n\n");
    }
    parts
        .into_iter()
        .map(|(role, text)| format!("[{role}]\n{text}"))
        .collect::<Vec<_>>()
        .join("\n\n")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mcp::connection::PromptArgument;
    use serde_json::json;

    fn prompt(args: &[(&str, bool)]) -> PromptInfo {
        PromptInfo {
            name: "p".into(),
            description: String::new(),
            arguments: args
                .iter()
                .map(|(n, r)| PromptArgument {
                    name: n.to_string(),
                    description: String::new(),
                    required: *r,
                })
                .collect(),
        }
    }

    #[test]
    fn words_fill_arguments_in_order_or_by_name() {
        let two = prompt(&[("name", true), ("style", false)]);
        let one = prompt(&[("code", true)]);
        for (p, words, bound) in [
            // In order, the last taking the rest.
            (
                &two,
                "Ann in a pirate way",
                json!({"name": "Ann", "style": "in a pirate way"}),
            ),
            (&one, " fn main() {} ", json!({"code": "fn main() {}"})),
            // By name, in any order.
            (
                &two,
                "style=loud name=Bo",
                json!({"name": "Bo", "style": "loud"}),
            ),
            // An `=` inside ordinary text is not a name.
            (&two, "x=1 y", json!({"name": "x=1", "style": "y"})),
        ] {
            let got = Value::Object(bind("s", p, words).unwrap());
            assert_eq!(got, bound, "{words:?}");
        }
    }

    #[test]
    fn missing_and_surplus_arguments_are_errors_with_usage() {
        let p = prompt(&[("name", true), ("style", false)]);
        let e = bind("s", &p, "").unwrap_err();
        assert_eq!(e, "/s:p needs name; usage: /s:p <name> [style]");
        let none = prompt(&[]);
        assert!(
            bind("s", &none, "x")
                .unwrap_err()
                .contains("takes no arguments")
        );
        assert!(bind("s", &none, "").unwrap().is_empty());
    }

    #[test]
    fn messages_become_text_never_expanded() {
        let one = json!({"messages": [{"role": "user", "content": {"type": "text", "text": "Run !`rm -rf /` $ARGUMENTS"}}]});
        assert_eq!(message_text(&one), "Run !`rm -rf /` $ARGUMENTS");
        let two = json!({"messages": [
            {"role": "user", "content": {"type": "text", "text": "Review."}},
            {"role": "assistant", "content": {"type": "text", "text": "I will."}}
        ]});
        assert_eq!(
            message_text(&two),
            "[user]\nReview.\n\n[assistant]\nI will."
        );
        assert_eq!(message_text(&json!({})), "");
    }
}
