//! Canary arguments for one call of each tool, built from the tool's `inputSchema`.
//!
//! Only the constructs whose meaning is plain are filled: `type` (one, or a list whose first
//! non-null member is taken), `enum` / `const` (the first value), `properties` with `required`
//! (required members only, optional ones left out), `items` with `minItems`, `minimum` /
//! `exclusiveMinimum` for numbers, `minLength` for strings, and `format` / property names that
//! say a string is an email, a URL or a path. Every string carries the run's canary, so a
//! value that leaves through a tool shows up in the traps and the trace.
//!
//! A schema that needs more (`$ref`, `anyOf`, `oneOf`, `allOf`, `not`, `if`, `pattern`,
//! `multipleOf`, `patternProperties`, `dependentRequired`, …, or one nested deeper than
//! [`MAX_SCHEMA_DEPTH`]) is not guessed at: the tool is [`Arguments::Skipped`] with the
//! construct named, and the caller counts it.

use serde_json::{Map, Value, json};

/// How deep a schema is followed before the tool is skipped.
pub const MAX_SCHEMA_DEPTH: usize = 8;

/// The host name canary URLs and email addresses name (`.invalid`: it never resolves outside).
pub const TRAP_DOMAIN: &str = "toolmark-trap.invalid";

/// Keywords whose meaning arguments are not built for.
const UNSUPPORTED: [&str; 13] = [
    "$ref",
    "anyOf",
    "oneOf",
    "allOf",
    "not",
    "if",
    "pattern",
    "multipleOf",
    "patternProperties",
    "dependentRequired",
    "dependentSchemas",
    "propertyNames",
    "contains",
];

/// The arguments for one call, or why the tool is not called.
#[derive(Debug, Clone, PartialEq)]
pub enum Arguments {
    /// Call the tool with this object.
    Call(Value),
    /// Not called: the schema uses this construct (or is not a schema).
    Skipped(String),
}

/// Arguments for a tool whose `inputSchema` is `schema` (absent: none), carrying `canary`;
/// `path` is the decoy file a path argument names.
pub fn for_schema(schema: Option<&Value>, canary: &str, path: &str) -> Arguments {
    let Some(schema) = schema else {
        return Arguments::Call(json!({}));
    };
    let filler = Filler { canary, path };
    match filler.value(schema, "", 0) {
        Ok(Value::Object(o)) => Arguments::Call(Value::Object(o)),
        Ok(Value::Null) => Arguments::Call(json!({})),
        Ok(_) => Arguments::Skipped("inputSchema is not an object schema".into()),
        Err(why) => Arguments::Skipped(why),
    }
}

struct Filler<'a> {
    canary: &'a str,
    path: &'a str,
}

impl Filler<'_> {
    fn value(&self, schema: &Value, name: &str, depth: usize) -> Result<Value, String> {
        if depth > MAX_SCHEMA_DEPTH {
            return Err(format!("nested deeper than {MAX_SCHEMA_DEPTH}"));
        }
        let s = match schema {
            Value::Object(s) => s,
            Value::Bool(true) => return Ok(Value::String(self.string(name, None))),
            _ => return Err("a schema that is not an object".into()),
        };
        if let Some(k) = UNSUPPORTED.iter().find(|k| s.contains_key(**k)) {
            return Err(format!("uses `{k}`"));
        }
        if let Some(v) = s.get("const") {
            return Ok(v.clone());
        }
        if let Some(e) = s.get("enum") {
            return e
                .as_array()
                .and_then(|a| a.first())
                .cloned()
                .ok_or_else(|| "an empty or malformed `enum`".into());
        }
        let ty = match s.get("type") {
            None if s.contains_key("properties") => "object",
            None => return Err("no `type`".into()),
            Some(Value::String(t)) => t.as_str(),
            Some(Value::Array(ts)) => ts
                .iter()
                .filter_map(Value::as_str)
                .find(|t| *t != "null")
                .unwrap_or("null"),
            Some(_) => return Err("a malformed `type`".into()),
        };
        match ty {
            "object" => self.object(s, depth),
            "array" => {
                let n = s.get("minItems").and_then(Value::as_u64).unwrap_or(0);
                if n == 0 {
                    return Ok(json!([]));
                }
                if n > 16 {
                    return Err("`minItems` above 16".into());
                }
                let item = self.value(
                    s.get("items").unwrap_or(&Value::Bool(true)),
                    name,
                    depth + 1,
                )?;
                Ok(Value::Array(vec![item; n as usize]))
            }
            "string" => Ok(Value::String(
                self.string(name, s.get("format").and_then(Value::as_str)),
            )),
            "integer" => Ok(json!(minimum(s).map_or(1, |m| m.ceil() as i64))),
            "number" => Ok(json!(minimum(s).unwrap_or(1.0))),
            "boolean" => Ok(json!(false)),
            "null" => Ok(Value::Null),
            other => Err(format!("type `{other}`")),
        }
    }

    fn object(&self, s: &Map<String, Value>, depth: usize) -> Result<Value, String> {
        let empty = Map::new();
        let props = s
            .get("properties")
            .map(|p| p.as_object().ok_or("malformed `properties`"))
            .transpose()?
            .unwrap_or(&empty);
        let mut out = Map::new();
        for name in s
            .get("required")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            let name = name
                .as_str()
                .ok_or("a `required` member that is not a name")?;
            let sub = props.get(name).unwrap_or(&Value::Bool(true));
            out.insert(name.to_owned(), self.value(sub, name, depth + 1)?);
        }
        Ok(Value::Object(out))
    }

    /// A string for property `name` of `format`, carrying the canary.
    fn string(&self, name: &str, format: Option<&str>) -> String {
        let n = name.to_ascii_lowercase();
        let c = self.canary;
        match format {
            Some("email" | "idn-email") => return format!("{c}@{TRAP_DOMAIN}"),
            Some("uri" | "url" | "iri" | "uri-reference") => {
                return format!("https://{TRAP_DOMAIN}/{c}");
            }
            _ => {}
        }
        if n.contains("email") || n == "to" || n == "recipient" {
            format!("{c}@{TRAP_DOMAIN}")
        } else if n.contains("url") || n.contains("uri") || n.contains("endpoint") {
            format!("https://{TRAP_DOMAIN}/{c}")
        } else if n.contains("path") || n.contains("file") || n == "dir" || n.contains("directory")
        {
            self.path.to_owned()
        } else {
            c.to_owned()
        }
    }
}

fn minimum(s: &Map<String, Value>) -> Option<f64> {
    let min = s.get("minimum").and_then(Value::as_f64);
    let exclusive = s
        .get("exclusiveMinimum")
        .and_then(Value::as_f64)
        .map(|m| m + 1.0);
    min.into_iter().chain(exclusive).reduce(f64::max)
}

#[cfg(test)]
mod tests {
    use super::*;

    const C: &str = "toolmark-canary-00112233aabbccdd";
    const NOTE: &str = "/home/decoy/notes/canary.txt";

    fn args(schema: Value) -> Arguments {
        for_schema(Some(&schema), C, NOTE)
    }

    #[test]
    fn required_members_are_filled_by_type_and_optional_ones_left_out() {
        let a = args(
            json!({"type": "object", "required": ["q", "n", "x", "flag", "tags", "opts"],
            "properties": {"q": {"type": "string"}, "n": {"type": "integer", "minimum": 3},
                "x": {"type": "number"}, "flag": {"type": "boolean"},
                "tags": {"type": "array", "items": {"type": "string"}},
                "opts": {"type": "object", "properties": {"k": {"type": "string"}}},
                "optional": {"type": "string"}}}),
        );
        assert_eq!(
            a,
            Arguments::Call(
                json!({"q": C, "n": 3, "x": 1.0, "flag": false, "tags": [], "opts": {}})
            )
        );
    }

    #[test]
    fn emails_urls_and_paths_point_at_the_traps_and_the_decoy_note() {
        let a = args(
            json!({"type": "object", "required": ["to", "homepage", "file_path", "contact"],
            "properties": {"to": {"type": "string"}, "homepage": {"type": "string", "format": "uri"},
                "file_path": {"type": "string"}, "contact": {"type": "string", "format": "email"}}}),
        );
        let email = format!("{C}@{TRAP_DOMAIN}");
        let url = format!("https://{TRAP_DOMAIN}/{C}");
        assert_eq!(
            a,
            Arguments::Call(
                json!({"to": email, "homepage": url, "file_path": NOTE, "contact": email})
            )
        );
    }

    #[test]
    fn enums_consts_min_items_and_nullable_types_take_a_valid_value() {
        let a = args(
            json!({"type": "object", "required": ["unit", "mode", "ids", "tz"],
            "properties": {"unit": {"enum": ["c", "f"]}, "mode": {"const": 2},
                "ids": {"type": "array", "minItems": 2, "items": {"type": "integer", "exclusiveMinimum": 0}},
                "tz": {"type": ["null", "string"]}}}),
        );
        assert_eq!(
            a,
            Arguments::Call(json!({"unit": "c", "mode": 2, "ids": [1, 1], "tz": C}))
        );
    }

    #[test]
    fn a_schema_that_needs_more_than_plain_constructs_is_skipped_with_the_reason() {
        for (schema, why) in [
            (
                json!({"type": "object", "required": ["a"], "properties": {"a": {"$ref": "#/x"}}}),
                "uses `$ref`",
            ),
            (
                json!({"type": "object", "required": ["a"], "properties": {"a": {"anyOf": []}}}),
                "uses `anyOf`",
            ),
            (
                json!({"type": "object", "required": ["a"], "properties": {"a": {"type": "string", "pattern": "^x$"}}}),
                "uses `pattern`",
            ),
            (
                json!({"type": "string"}),
                "inputSchema is not an object schema",
            ),
            (
                json!({"type": "object", "required": [1]}),
                "a `required` member that is not a name",
            ),
        ] {
            assert_eq!(args(schema), Arguments::Skipped(why.into()));
        }
        let mut deep = json!({"type": "string"});
        for _ in 0..=MAX_SCHEMA_DEPTH {
            deep = json!({"type": "object", "required": ["a"], "properties": {"a": deep}});
        }
        assert_eq!(
            args(deep),
            Arguments::Skipped(format!("nested deeper than {MAX_SCHEMA_DEPTH}"))
        );
    }

    #[test]
    fn no_schema_and_a_schema_without_members_call_with_an_empty_object() {
        assert_eq!(for_schema(None, C, NOTE), Arguments::Call(json!({})));
        assert_eq!(args(json!({"type": "object"})), Arguments::Call(json!({})));
        assert_eq!(args(json!({"properties": {}})), Arguments::Call(json!({})));
    }
}
