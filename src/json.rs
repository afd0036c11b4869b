//! Panic-free edits of JSON values. `value["key"] = x` panics when the
//! value is neither an object nor null; these helpers do nothing instead,
//! which is right for the objects this crate builds itself.
//!
//! Architecture invariant: depends on serde_json only.

use serde_json::Value as Json;

/// Sets `key` on an object (a no-op on anything else).
pub fn set(v: &mut Json, key: &str, value: Json) {
    if let Some(o) = v.as_object_mut() {
        o.insert(key.into(), value);
    }
}

/// Sets `key` on the object at `path` inside `v`, if there is one.
pub fn set_in(v: &mut Json, path: &str, key: &str, value: Json) {
    if let Some(inner) = v.get_mut(path) {
        set(inner, key, value);
    }
}

/// An object of `pairs`, the values moved in. `json!` copies every value it
/// is given through serde (a list of built objects is serialised again),
/// which costs a compile more than building the list did.
pub fn object<const N: usize>(pairs: [(&str, Json); N]) -> Json {
    let mut map = serde_json::Map::with_capacity(N);
    for (key, value) in pairs {
        map.insert(key.to_string(), value);
    }
    Json::Object(map)
}
