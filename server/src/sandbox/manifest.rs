//! A WebAssembly tool's manifest (`NAME.json` beside `NAME.wasm`): what the model is told
//! of the tool, whether a person approves its calls, whether a call may run twice, what
//! of the workspace it sees, and the limits it asks for.

use serde::Deserialize;
use serde_json::Value;

use super::limits::AskedLimits;

/// The most bytes a manifest may take.
pub const MAX_MANIFEST_BYTES: usize = 64 * 1024;
/// The longest description, in characters.
const MAX_DESCRIPTION_CHARS: usize = 2_000;

/// A tool's manifest, checked.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Manifest {
    /// What the model is told the tool does.
    pub description: String,
    /// The JSON Schema of its arguments (an object).
    pub parameters: Value,
    /// Whether a person approves each call before it runs.
    #[serde(default)]
    pub approval: Approval,
    /// Whether running the same call twice is harmless: only then is a call a crash cut
    /// short run again.
    #[serde(default)]
    pub idempotent: bool,
    /// What the call sees of the calling user's workspace.
    #[serde(default)]
    pub files: FileAccess,
    /// Limits lower than the server's, if the tool wants them.
    #[serde(default)]
    pub limits: AskedLimits,
}

/// Whether calls wait for a person's approval.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Approval {
    #[default]
    Never,
    Always,
}

/// What a call sees of its user's workspace folder, at `/workspace`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum FileAccess {
    /// Nothing.
    #[default]
    None,
    /// Its files, read-only.
    Read,
    /// Its files, to read and write (within the user's quota).
    Write,
}

impl Manifest {
    /// Parses and checks a manifest's bytes: valid JSON of the known fields, a description,
    /// an object schema that compiles, limits above zero.
    pub fn parse(bytes: &[u8]) -> Result<Manifest, String> {
        if bytes.len() > MAX_MANIFEST_BYTES {
            return Err(format!(
                "the manifest takes {} bytes; at most {MAX_MANIFEST_BYTES}",
                bytes.len()
            ));
        }
        let invalid = |why: String| format!("the manifest is not valid: {why}");
        let value: Value = serde_json::from_slice(bytes).map_err(|e| invalid(e.to_string()))?;
        let Value::Object(fields) = &value else {
            return Err(invalid("it must be a JSON object".into()));
        };
        if let Some(why) = fields
            .iter()
            .find_map(|(key, field)| field_problem(key, field))
        {
            return Err(invalid(why));
        }
        let manifest: Manifest =
            serde_json::from_value(value).map_err(|e| invalid(e.to_string()))?;
        let description = manifest.description.trim();
        if description.is_empty() || description.chars().count() > MAX_DESCRIPTION_CHARS {
            return Err(format!(
                "`description` must hold 1 to {MAX_DESCRIPTION_CHARS} characters"
            ));
        }
        if manifest.parameters.get("type").and_then(Value::as_str) != Some("object") {
            return Err(
                "`parameters` must be a JSON Schema of an object (`\"type\": \"object\"`)".into(),
            );
        }
        if let Some(why) = shared::nesting::too_deep("`parameters`", &manifest.parameters) {
            return Err(why);
        }
        jsonschema::validator_for(&manifest.parameters)
            .map_err(|e| format!("`parameters` is not a valid JSON Schema: {e}"))?;
        let limits = manifest.limits;
        let zero = [limits.fuel, limits.memory_mib, limits.timeout_ms].contains(&Some(0));
        if zero {
            return Err("a limit in `limits` must be above zero".into());
        }
        Ok(manifest)
    }
}

/// What is wrong with the manifest's field `key`, if anything (serde's own error would not
/// name the field).
fn field_problem(key: &str, field: &Value) -> Option<String> {
    fn problem<T: serde::de::DeserializeOwned>(field: &Value) -> Option<serde_json::Error> {
        T::deserialize(field).err()
    }
    let found = match key {
        "description" => problem::<String>(field),
        "parameters" => None,
        "approval" => problem::<Approval>(field),
        "idempotent" => problem::<bool>(field),
        "files" => problem::<FileAccess>(field),
        "limits" => problem::<AskedLimits>(field),
        _ => {
            return Some(format!(
                "unknown field `{key}`; a manifest has `description`, `parameters`, \
                 `approval`, `idempotent`, `files` and `limits`"
            ))
        }
    };
    found.map(|error| format!("`{key}`: {error}"))
}

/// Checks a tool's name: a lower-case letter, then up to 63 lower-case letters, digits
/// and single underscores (`__` separates an MCP server's name from its tool's).
pub fn check_name(name: &str) -> Result<(), String> {
    let mut chars = name.chars();
    let starts = chars.next().is_some_and(|c| c.is_ascii_lowercase());
    let rest = chars.all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_');
    if !starts || !rest || name.len() > 64 || name.contains("__") {
        return Err(format!(
            "`{name}` is not a tool name: a lower-case letter, then up to 63 lower-case \
             letters, digits or single underscores"
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn parse(value: Value) -> Result<Manifest, String> {
        Manifest::parse(value.to_string().as_bytes())
    }

    #[test]
    fn a_manifest_takes_its_defaults() {
        let manifest = parse(json!({
            "description": "Echoes.",
            "parameters": {"type": "object"},
        }))
        .unwrap();
        assert_eq!(manifest.approval, Approval::Never);
        assert!(!manifest.idempotent);
        assert_eq!(manifest.files, FileAccess::None);
        assert_eq!(manifest.limits, AskedLimits::default());
    }

    #[test]
    fn a_bad_manifest_says_what_is_wrong() {
        let cases = [
            (json!({"parameters": {"type": "object"}}), "description"),
            (
                json!({"description": " ", "parameters": {"type": "object"}}),
                "description",
            ),
            (
                json!({"description": "x", "parameters": {"type": "string"}}),
                "object",
            ),
            (
                json!({"description": "x", "parameters": {"type": "object", "minProperties": "a"}}),
                "JSON Schema",
            ),
            (
                json!({"description": "x", "parameters": {"type": "object"}, "files": "all"}),
                "files",
            ),
            (
                json!({"description": "x", "parameters": {"type": "object"}, "limits": {"fuel": 0}}),
                "above zero",
            ),
            (
                json!({"description": "x", "parameters": {"type": "object"}, "network": true}),
                "network",
            ),
        ];
        for (manifest, says) in cases {
            let error = parse(manifest.clone()).unwrap_err();
            assert!(error.contains(says), "{manifest}: {error}");
        }
        assert!(Manifest::parse(b"{").unwrap_err().contains("not valid"));
        let huge = vec![b' '; MAX_MANIFEST_BYTES + 1];
        assert!(Manifest::parse(&huge).unwrap_err().contains("at most"));
    }

    #[test]
    fn tool_names_are_plain_and_never_an_mcp_tools() {
        for good in ["echo", "a", "word_count", "v2"] {
            assert!(check_name(good).is_ok(), "{good}");
        }
        let long = "a".repeat(65);
        for bad in ["", "Echo", "2fa", "a-b", "a__b", "é", long.as_str()] {
            assert!(check_name(bad).is_err(), "{bad}");
        }
    }
}
