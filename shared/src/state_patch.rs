//! RFC 6902 JSON Patch, applied by the page: a small implementation of the six operations
//! over RFC 6901 JSON Pointers, so the page's WASM carries no general patch library. The
//! server checks every patch with the maintained `json-patch` crate before it is logged,
//! and the fuzz target `state_patch` holds the two to the same results on any input.

use serde_json::Value;

use super::PatchFailure;

/// The document `delta` makes of `document`: every operation applies, or none does.
pub fn apply_light(document: &Value, delta: &[Value]) -> Result<Value, PatchFailure> {
    let mut changed = document.clone();
    for (index, operation) in delta.iter().enumerate() {
        let path = operation.get("path").and_then(Value::as_str);
        let fail = |message: &str| PatchFailure {
            operation: index,
            path: path.unwrap_or_default().to_string(),
            message: message.to_string(),
        };
        let path = path.ok_or_else(|| fail("no path"))?;
        let value = || {
            operation
                .get("value")
                .cloned()
                .ok_or_else(|| fail("no value"))
        };
        let from = || {
            operation
                .get("from")
                .and_then(Value::as_str)
                .ok_or_else(|| fail("no from"))
        };
        match operation.get("op").and_then(Value::as_str) {
            Some("add") => add(&mut changed, path, value()?).map_err(&fail)?,
            Some("remove") => drop(remove(&mut changed, path).map_err(&fail)?),
            Some("replace") => {
                let value = value()?;
                *pointer(&mut changed, path).ok_or_else(|| fail("path is invalid"))? = value;
            }
            Some("move") => {
                let from = from()?;
                if path != from && path.starts_with(&format!("{from}/")) {
                    return Err(fail("cannot move a value into itself"));
                }
                let moved = remove(&mut changed, from).map_err(&fail)?;
                add(&mut changed, path, moved).map_err(&fail)?;
            }
            Some("copy") => {
                let copied = lookup(&changed, from()?).cloned();
                let copied = copied.ok_or_else(|| fail("from is invalid"))?;
                add(&mut changed, path, copied).map_err(&fail)?;
            }
            Some("test") => {
                let expected = value()?;
                if lookup(&changed, path) != Some(&expected) {
                    return Err(fail("value did not match"));
                }
            }
            _ => return Err(fail("not a JSON Patch operation")),
        }
    }
    Ok(changed)
}

/// A pointer's reference tokens, unescaped; `None` for a pointer that is not one.
fn tokens(path: &str) -> Option<Vec<String>> {
    if path.is_empty() {
        return Some(Vec::new());
    }
    let rest = path.strip_prefix('/')?;
    rest.split('/').map(unescape).collect()
}

/// A reference token with `~1` read as `/` and `~0` as `~`; `None` when a `~` starts
/// neither, which RFC 6901 does not allow (the `json-patch` crate refuses such a path too).
fn unescape(token: &str) -> Option<String> {
    let mut out = String::with_capacity(token.len());
    let mut chars = token.chars();
    while let Some(c) = chars.next() {
        out.push(match c {
            '~' => match chars.next()? {
                '0' => '~',
                '1' => '/',
                _ => return None,
            },
            c => c,
        });
    }
    Some(out)
}

/// An array index token: digits without a leading zero.
fn index(token: &str) -> Option<usize> {
    let digits = !token.is_empty() && token.bytes().all(|b| b.is_ascii_digit());
    let canonical = token == "0" || !token.starts_with('0');
    (digits && canonical).then(|| token.parse().ok()).flatten()
}

fn lookup<'a>(document: &'a Value, path: &str) -> Option<&'a Value> {
    tokens(path)?
        .iter()
        .try_fold(document, |at, token| match at {
            Value::Object(map) => map.get(token),
            Value::Array(items) => items.get(index(token)?),
            _ => None,
        })
}

fn pointer<'a>(document: &'a mut Value, path: &str) -> Option<&'a mut Value> {
    tokens(path)?
        .iter()
        .try_fold(document, |at, token| match at {
            Value::Object(map) => map.get_mut(token),
            Value::Array(items) => items.get_mut(index(token)?),
            _ => None,
        })
}

/// The parent of `path`'s target and its last token; `None` for the root.
fn parent<'a>(
    document: &'a mut Value,
    path: &str,
) -> Result<Option<(&'a mut Value, String)>, &'static str> {
    let mut tokens = tokens(path).ok_or("path is invalid")?;
    let Some(last) = tokens.pop() else {
        return Ok(None);
    };
    let parent_path: String = tokens
        .iter()
        .map(|t| format!("/{}", t.replace('~', "~0").replace('/', "~1")))
        .collect();
    let parent = pointer(document, &parent_path).ok_or("path is invalid")?;
    Ok(Some((parent, last)))
}

fn add(document: &mut Value, path: &str, value: Value) -> Result<(), &'static str> {
    let Some((parent, last)) = parent(document, path)? else {
        *document = value;
        return Ok(());
    };
    match parent {
        Value::Object(map) => {
            map.insert(last, value);
            Ok(())
        }
        Value::Array(items) if last == "-" => {
            items.push(value);
            Ok(())
        }
        Value::Array(items) => match index(&last) {
            Some(at) if at <= items.len() => {
                items.insert(at, value);
                Ok(())
            }
            _ => Err("path is invalid"),
        },
        _ => Err("path is invalid"),
    }
}

fn remove(document: &mut Value, path: &str) -> Result<Value, &'static str> {
    let Some((parent, last)) = parent(document, path)? else {
        return Err("path is invalid");
    };
    match parent {
        Value::Object(map) => map.shift_remove(&last).ok_or("path is invalid"),
        Value::Array(items) => match index(&last) {
            Some(at) if at < items.len() => Ok(items.remove(at)),
            _ => Err("path is invalid"),
        },
        _ => Err("path is invalid"),
    }
}
