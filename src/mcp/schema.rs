//! A server's tool schemas made acceptable to chat APIs. Servers write full JSON Schema;
//! some providers and local servers' grammar builders reject parts of it (`$schema`,
//! `$id`, `$ref` into `$defs`, a top level that is not an object). The normalized schema
//! keeps the meaning the model needs: local `$ref`s are replaced by what they point to
//! (a cycle, or depth past 16, becomes `{}`), meta keywords go, the top level is always
//! `{"type":"object","properties":{…}}` and `required` names only real properties.
//! It knows JSON, nothing of servers or requests.

use serde_json::{Map, Value, json};

/// How deep `$ref`s are followed.
const MAX_REF_DEPTH: usize = 16;

/// Keywords dropped everywhere: about the schema document, not the data.
const META: &[&str] = &["$schema", "$id", "$comment", "$anchor", "$dynamicAnchor"];

/// The schema sent to the model for a tool whose server gave `schema`.
pub fn normalize(schema: &Value) -> Value {
    let defs = collect_defs(schema);
    let mut out = resolve(schema, &defs, 0);
    let Value::Object(map) = &mut out else {
        return json!({"type": "object", "properties": {}});
    };
    map.remove("$defs");
    map.remove("definitions");
    map.insert("type".into(), Value::String("object".into()));
    let properties = match map.get("properties") {
        Some(Value::Object(p)) => p.clone(),
        _ => Map::new(),
    };
    if let Some(Value::Array(required)) = map.get_mut("required") {
        required.retain(|r| r.as_str().is_some_and(|r| properties.contains_key(r)));
        if required.is_empty() {
            map.remove("required");
        }
    } else {
        map.remove("required");
    }
    map.insert("properties".into(), Value::Object(properties));
    out
}

fn collect_defs(schema: &Value) -> Map<String, Value> {
    let mut defs = Map::new();
    for key in ["$defs", "definitions"] {
        if let Some(Value::Object(d)) = schema.get(key) {
            for (name, value) in d {
                defs.insert(format!("#/{key}/{name}"), value.clone());
            }
        }
    }
    defs
}

fn resolve(value: &Value, defs: &Map<String, Value>, depth: usize) -> Value {
    match value {
        Value::Object(map) => {
            if let Some(Value::String(target)) = map.get("$ref") {
                if depth >= MAX_REF_DEPTH {
                    return json!({});
                }
                return match defs.get(target) {
                    Some(def) => {
                        let mut resolved = resolve(def, defs, depth + 1);
                        // Siblings of `$ref` (a description) are kept.
                        if let Value::Object(r) = &mut resolved {
                            for (k, v) in map {
                                if k != "$ref" && !META.contains(&k.as_str()) {
                                    r.insert(k.clone(), resolve(v, defs, depth + 1));
                                }
                            }
                        }
                        resolved
                    }
                    None => json!({}),
                };
            }
            let mut out = Map::new();
            for (k, v) in map {
                if META.contains(&k.as_str()) || (depth > 0 && (k == "$defs" || k == "definitions"))
                {
                    continue;
                }
                // Property names are data, not keywords: a property called `$id` stays.
                let v = if k == "properties" {
                    match v {
                        Value::Object(props) => Value::Object(
                            props
                                .iter()
                                .map(|(name, s)| (name.clone(), resolve(s, defs, depth + 1)))
                                .collect(),
                        ),
                        other => other.clone(),
                    }
                } else {
                    resolve(v, defs, depth + 1)
                };
                out.insert(k.clone(), v);
            }
            Value::Object(out)
        }
        Value::Array(items) => {
            Value::Array(items.iter().map(|v| resolve(v, defs, depth)).collect())
        }
        other => other.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refs_are_inlined_and_meta_keywords_dropped() {
        let schema = json!({
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "type": "object",
            "properties": {
                "when": {"$ref": "#/$defs/Time", "description": "start"},
                "$id": {"type": "string"}
            },
            "required": ["when", "missing"],
            "$defs": {"Time": {"type": "string", "format": "date-time"}}
        });
        let out = normalize(&schema);
        assert_eq!(
            out,
            json!({
                "type": "object",
                "properties": {
                    "when": {"type": "string", "format": "date-time", "description": "start"},
                    "$id": {"type": "string"}
                },
                "required": ["when"]
            })
        );
    }

    #[test]
    fn hostile_schemas_become_objects() {
        for schema in [
            json!(null),
            json!("x"),
            json!([1]),
            json!({"type": "string"}),
            json!({}),
        ] {
            let out = normalize(&schema);
            assert_eq!(out["type"], "object", "{schema}");
            assert!(out["properties"].is_object());
        }
        // A cycle ends.
        let cyclic = json!({"type": "object", "properties": {"a": {"$ref": "#/$defs/A"}},
                            "$defs": {"A": {"type": "object", "properties": {"next": {"$ref": "#/$defs/A"}}}}});
        let out = normalize(&cyclic);
        assert_eq!(out["properties"]["a"]["type"], "object");
        assert!(serde_json::to_string(&out).unwrap().len() < 10_000);
        // An unknown ref is "anything".
        let dangling = json!({"properties": {"a": {"$ref": "http://elsewhere"}}});
        assert_eq!(normalize(&dangling)["properties"]["a"], json!({}));
    }
}
