//! A file that states what a fold gives, compared with the fold: the same
//! JSON values (the file's layout aside), the first difference named by
//! its JSON path.

use serde::Serialize;
use serde_json::Value;

use carcassonne_archive::Archive;

use crate::audit::Finding;

/// The archive's file `path` holds the JSON of `expected`.
pub fn same(archive: &Archive, path: &str, expected: &impl Serialize) -> Result<(), Finding> {
    let bytes = archive
        .file(path)
        .ok_or_else(|| Finding::file(Some(path), "missing: a tournament's archive holds it"))?;
    let stated: Value =
        serde_json::from_slice(bytes).map_err(|e| Finding::file(Some(path), format!("not JSON: {e}")))?;
    // Through text, like the file: both numbers parsed alike.
    let computed = serde_json::to_string(expected)
        .and_then(|text| serde_json::from_str::<Value>(&text))
        .map_err(|e| Finding::file(Some(path), format!("the recomputed view as JSON: {e}")))?;
    match difference(&computed, &stated, "") {
        None => Ok(()),
        Some(error) => Err(Finding::file(Some(path), error)),
    }
}

/// The first place where `stated` differs from `computed`, in words.
fn difference(computed: &Value, stated: &Value, path: &str) -> Option<String> {
    let here = if path.is_empty() { "the file" } else { path };
    match (computed, stated) {
        (Value::Object(ours), Value::Object(theirs)) => {
            for (key, value) in ours {
                let inner = if path.is_empty() {
                    key.clone()
                } else {
                    format!("{path}.{key}")
                };
                match theirs.get(key) {
                    None => return Some(format!("{inner}: missing; the fold gives {}", short(value))),
                    Some(other) => {
                        if let Some(found) = difference(value, other, &inner) {
                            return Some(found);
                        }
                    }
                }
            }
            theirs
                .keys()
                .find(|key| !ours.contains_key(*key))
                .map(|key| format!("{here}: holds {key:?}, which the fold does not give"))
        }
        (Value::Array(ours), Value::Array(theirs)) => {
            for (i, (a, b)) in ours.iter().zip(theirs).enumerate() {
                if let Some(found) = difference(a, b, &format!("{path}[{i}]")) {
                    return Some(found);
                }
            }
            (ours.len() != theirs.len())
                .then(|| format!("{here}: {} entries; the fold gives {}", theirs.len(), ours.len()))
        }
        _ => (computed != stated).then(|| {
            format!(
                "{here}: the file states {}; the fold gives {}",
                short(stated),
                short(computed)
            )
        }),
    }
}

/// A value in at most a line.
fn short(value: &Value) -> String {
    let text = value.to_string();
    if text.len() <= 80 {
        return text;
    }
    let mut end = 77;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}...", &text[..end])
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::difference;

    #[test]
    fn the_first_difference_is_named_by_its_path() {
        let ours = json!({"a": [1, {"b": "x"}], "c": 2});
        assert_eq!(difference(&ours, &ours.clone(), ""), None);
        let theirs = json!({"a": [1, {"b": "y"}], "c": 2});
        assert_eq!(
            difference(&ours, &theirs, "").unwrap(),
            r#"a[1].b: the file states "y"; the fold gives "x""#
        );
        let theirs = json!({"a": [1], "c": 2});
        assert_eq!(
            difference(&ours, &theirs, "").unwrap(),
            "a: 1 entries; the fold gives 2"
        );
        let theirs = json!({"a": [1, {"b": "x"}], "c": 2, "d": 0});
        assert_eq!(
            difference(&ours, &theirs, "").unwrap(),
            r#"the file: holds "d", which the fold does not give"#
        );
        let theirs = json!({"a": [1, {"b": "x"}]});
        assert_eq!(
            difference(&ours, &theirs, "").unwrap(),
            "c: missing; the fold gives 2"
        );
    }
}
