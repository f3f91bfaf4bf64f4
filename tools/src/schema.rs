//! JSON Schemas generated with schemars, once per [`Dialect`].

use schemars::JsonSchema;
use schemars::generate::SchemaSettings;
use serde_json::Value;

use crate::revision::Dialect;

/// A schema in each dialect the served revisions use.
#[derive(Clone, Debug, PartialEq)]
pub struct Schemas {
    /// Draft-07 (2025-03-26, 2025-06-18).
    pub draft07: Value,
    /// 2020-12 (2025-11-25 and later).
    pub draft2020_12: Value,
}

impl Schemas {
    /// The same hand-written schema in every dialect (for schemas a tool
    /// must publish verbatim, such as one that names its `$schema`).
    pub fn verbatim(schema: Value) -> Schemas {
        Schemas {
            draft07: schema.clone(),
            draft2020_12: schema,
        }
    }

    /// The schema of what `T` deserializes from (tool arguments).
    pub fn input<T: JsonSchema + ?Sized>() -> Schemas {
        Schemas {
            draft07: generate::<T>(SchemaSettings::draft07().for_deserialize()),
            draft2020_12: generate::<T>(SchemaSettings::draft2020_12().for_deserialize()),
        }
    }

    /// The schema of what `T` serializes to (tool results).
    pub fn output<T: JsonSchema + ?Sized>() -> Schemas {
        Schemas {
            draft07: generate::<T>(SchemaSettings::draft07().for_serialize()),
            draft2020_12: generate::<T>(SchemaSettings::draft2020_12().for_serialize()),
        }
    }

    /// The schema in `dialect`.
    pub fn get(&self, dialect: Dialect) -> &Value {
        match dialect {
            Dialect::Draft07 => &self.draft07,
            Dialect::Draft2020_12 => &self.draft2020_12,
        }
    }

    /// Whether the root is `type: "object"` in every dialect (what
    /// `inputSchema` always needs, and `outputSchema` before 2026-07-28).
    pub fn is_object(&self) -> bool {
        [&self.draft07, &self.draft2020_12]
            .iter()
            .all(|s| s.get("type").and_then(Value::as_str) == Some("object"))
    }
}

/// The root schema of `T`. The root `title` (the Rust type's name) is
/// dropped: the tool's name and description say what it is. `$schema`
/// stays, naming the dialect.
fn generate<T: JsonSchema + ?Sized>(settings: SchemaSettings) -> Value {
    let mut schema = settings.into_generator().into_root_schema_for::<T>();
    schema.remove("title");
    schema.to_value()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Deserialize;

    #[allow(dead_code)]
    #[derive(Deserialize, JsonSchema)]
    struct Inner {
        x: u32,
    }

    /// Arguments.
    #[allow(dead_code)]
    #[derive(Deserialize, JsonSchema)]
    struct Args {
        /// The name.
        name: String,
        inner: Option<Inner>,
    }

    #[test]
    fn each_dialect_has_its_keywords() {
        let s = Schemas::input::<Args>();
        assert!(s.is_object());
        let d7 = &s.draft07;
        assert_eq!(d7["$schema"], "http://json-schema.org/draft-07/schema#");
        assert!(d7["definitions"]["Inner"].is_object(), "{d7}");
        assert!(d7.get("title").is_none());
        let d20 = &s.draft2020_12;
        assert_eq!(
            d20["$schema"],
            "https://json-schema.org/draft/2020-12/schema"
        );
        assert!(d20["$defs"]["Inner"].is_object(), "{d20}");
        assert_eq!(d20["properties"]["name"]["description"], "The name.");
        assert_eq!(d20["required"], serde_json::json!(["name"]));
        assert!(!Schemas::input::<u32>().is_object());
    }
}
