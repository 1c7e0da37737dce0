//! WebArena-Verified's JSON Schemas (`results_schema`, `query_params_schema`, `post_data_schema`) read
//! once into a type: the parts their `ValueNormalizer` reads (`type`, `format`, `items`, `properties`),
//! each read as leniently as their `schema.get(...)` does: a part of another JSON type than the one it
//! should have is absent, and every other keyword is ignored. The scoring rules ask this type, never the
//! JSON, what a value's schema says.

use std::collections::BTreeMap;

use serde::{Deserialize, Deserializer};
use serde_json::Value;

/// One schema (or sub-schema).
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
pub struct Schema {
    /// `type` (`string`, `number`, `array`, `object`, ...), when it is a string.
    #[serde(default, rename = "type", deserialize_with = "text")]
    pub ty: Option<String>,
    /// `format` (`date`, `currency`, `url`, ...), when it is a string.
    #[serde(default, deserialize_with = "text")]
    pub format: Option<String>,
    /// `items`: an array's element schema.
    #[serde(default, deserialize_with = "sub_schema")]
    pub items: Option<Box<Schema>>,
    /// `properties`: an object's property schemas, when it is an object.
    #[serde(default, deserialize_with = "sub_schemas")]
    pub properties: Option<BTreeMap<String, Schema>>,
}

impl Schema {
    /// Reads `v`; anything but an object is the empty schema (it says nothing).
    pub fn read(v: &Value) -> Schema {
        Schema::deserialize(v).unwrap_or_default()
    }

    /// An object schema with no properties (`{"type": "object"}`).
    pub fn object() -> Schema {
        Schema { ty: Some("object".into()), ..Schema::default() }
    }

    /// Its `type` is `name`.
    pub fn is(&self, name: &str) -> bool {
        self.ty.as_deref() == Some(name)
    }

    /// The schema of property `name`, if it has one.
    pub fn property(&self, name: &str) -> Option<&Schema> {
        self.properties.as_ref()?.get(name)
    }

    /// The schema its values are read by, one at a time: an array's `items` (None when it has none), any
    /// other schema itself.
    pub fn element(&self) -> Option<&Schema> {
        if self.is("array") {
            self.items.as_deref()
        } else {
            Some(self)
        }
    }
}

fn text<'de, D: Deserializer<'de>>(d: D) -> Result<Option<String>, D::Error> {
    Ok(match Value::deserialize(d)? {
        Value::String(s) => Some(s),
        _ => None,
    })
}

fn sub_schema<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Box<Schema>>, D::Error> {
    Ok(Some(Box::new(Schema::read(&Value::deserialize(d)?))))
}

fn sub_schemas<'de, D: Deserializer<'de>>(d: D) -> Result<Option<BTreeMap<String, Schema>>, D::Error> {
    Ok(match Value::deserialize(d)? {
        Value::Object(o) => Some(o.iter().map(|(k, v)| (k.clone(), Schema::read(v))).collect()),
        _ => None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn schemas_read_as_leniently_as_theirs() {
        let date = Schema { ty: Some("string".into()), format: Some("date".into()), ..Schema::default() };
        // (schema, what is read)
        for (v, want) in [
            (json!({"type": "string", "format": "date", "title": "ignored"}), date.clone()),
            (json!({"type": ["string", "null"], "format": 3}), Schema::default()),
            (json!("not an object"), Schema::default()),
            (json!(null), Schema::default()),
            (
                json!({"type": "array", "items": {"type": "string", "format": "date"}}),
                Schema { ty: Some("array".into()), items: Some(Box::new(date.clone())), ..Schema::default() },
            ),
            (
                json!({"type": "array", "items": [{"type": "number"}]}),
                Schema { ty: Some("array".into()), items: Some(Box::default()), ..Schema::default() },
            ),
            (
                json!({"type": "object", "properties": {"d": {"format": "date"}, "x": 1}}),
                Schema {
                    ty: Some("object".into()),
                    properties: Some(BTreeMap::from([
                        ("d".to_string(), Schema { format: Some("date".into()), ..Schema::default() }),
                        ("x".to_string(), Schema::default()),
                    ])),
                    ..Schema::default()
                },
            ),
            (json!({"properties": []}), Schema::default()),
        ] {
            assert_eq!(Schema::read(&v), want, "{v}");
        }
        let list = Schema::read(&json!({"type": "array", "items": {"type": "string", "format": "date"}}));
        assert_eq!(list.element(), Some(&date));
        assert_eq!(Schema::read(&json!({"type": "array"})).element(), None);
        assert_eq!(date.element(), Some(&date));
        assert!(Schema::object().is("object") && Schema::object().property("x").is_none());
    }
}
