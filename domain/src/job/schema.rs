//! Job settings in the OpenAPI document: each type's options schema, derived from its settings
//! struct, with the ranges written beside the fields; a test holds those ranges to the checks
//! in each struct's `Settings::check`.

use utoipa::ToSchema;
use utoipa::openapi::{RefOr, Schema};

/// A settings struct's schema, for the OpenAPI document ([`JobType::options_schema`]).
pub struct OptionsSchema {
    /// The component's name (`CutOptions`).
    pub name: String,
    pub schema: RefOr<Schema>,
    /// The components it refers to (its enums, `Seconds`), by name.
    pub refers_to: Vec<(String, RefOr<Schema>)>,
}

impl OptionsSchema {
    pub(super) fn of<T: ToSchema>() -> OptionsSchema {
        let mut refers_to = Vec::new();
        T::schemas(&mut refers_to);
        OptionsSchema {
            name: T::name().into_owned(),
            schema: T::schema(),
            refers_to,
        }
    }
}

/// The schema of a whole number that is one of `values`.
pub(super) fn whole_numbers(values: &[i64]) -> utoipa::openapi::Object {
    utoipa::openapi::schema::ObjectBuilder::new()
        .schema_type(utoipa::openapi::schema::Type::Integer)
        .enum_values(Some(values.iter().copied()))
        .build()
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use crate::job::{JobSpec, JobType};

    /// The OpenAPI document states each type's options from its settings struct's schema; the
    /// ranges there are written beside the fields, the checks in `Settings::check`. This holds
    /// the two together: every bound, list of values, length and list size in a schema is
    /// taken at its edge and refused just past it.
    #[test]
    fn each_range_in_an_options_schema_is_the_one_its_settings_check() {
        // What each type needs besides the setting tried.
        let base = |t: JobType| match t {
            JobType::Shrink => json!({ "targetMB": 10 }),
            JobType::Reframe => json!({ "rotate": 90 }),
            JobType::BurnIn => json!({ "timecode": true }),
            JobType::Convert => json!({ "format": "png" }),
            JobType::Watermark => json!({ "text": "Draft" }),
            JobType::ExtractPages => json!({ "pages": "1" }),
            JobType::Stills => json!({ "at": 1 }),
            _ => json!({}),
        };
        // Settings of which a type takes one: trying one leaves the others out.
        let either = ["at", "moments", "every"];
        let mut tried = 0;
        for &t in JobType::ALL.iter().filter(|t| t.started_elsewhere().is_none()) {
            let schema = serde_json::to_value(t.options_schema().schema).unwrap();
            assert!(JobSpec::parse(t, base(t)).is_ok(), "{t:?}'s base options");
            let Some(properties) = schema["properties"].as_object() else {
                continue;
            };
            for (field, property) in properties {
                let takes = |value: Value| {
                    let mut options = base(t);
                    if either.contains(&field.as_str()) {
                        options
                            .as_object_mut()
                            .unwrap()
                            .retain(|k, _| !either.contains(&k.as_str()));
                    }
                    options[field] = value;
                    JobSpec::parse(t, options).is_ok()
                };
                let at = format!("{t:?} {field}");
                let types = property["type"].to_string();
                let whole = types.contains("integer");
                let number = |x: f64| if whole { json!(x as i64) } else { json!(x) };
                let step = if whole { 1.0 } else { 0.01 };
                if let Some(min) = property["minimum"].as_f64() {
                    assert!(takes(number(min)), "{at}: {min} refused");
                    assert!(!takes(number(min - step)), "{at}: under {min} taken");
                    tried += 1;
                }
                if let Some(max) = property["maximum"].as_f64() {
                    assert!(takes(number(max)), "{at}: {max} refused");
                    assert!(!takes(number(max + step)), "{at}: over {max} taken");
                    tried += 1;
                }
                if let Some(multiple) = property["multipleOf"].as_f64() {
                    let min = property["minimum"].as_f64().unwrap();
                    assert!(
                        !takes(number(min + 1.0)),
                        "{at}: not a multiple of {multiple} taken"
                    );
                }
                if whole && let Some(values) = property["enum"].as_array() {
                    let values: Vec<i64> = values.iter().map(|v| v.as_i64().unwrap()).collect();
                    let (lo, hi) = (*values.iter().min().unwrap(), *values.iter().max().unwrap());
                    for n in lo - 1..=hi + 1 {
                        assert_eq!(takes(json!(n)), values.contains(&n), "{at}: {n}");
                    }
                    tried += 1;
                }
                if let Some(max) = property["maxLength"].as_u64() {
                    assert!(
                        takes(json!("é".repeat(max as usize))),
                        "{at}: {max} characters refused"
                    );
                    assert!(
                        !takes(json!("é".repeat(max as usize + 1))),
                        "{at}: over {max} taken"
                    );
                    tried += 1;
                }
                if property["minLength"].as_u64() == Some(1) {
                    assert!(!takes(json!("")), "{at}: empty taken");
                }
                if let Some(max) = property["maxItems"].as_u64() {
                    let min = property["minItems"].as_u64().unwrap();
                    assert!(takes(json!(vec![1.0; max as usize])), "{at}: {max} items refused");
                    assert!(
                        !takes(json!(vec![1.0; max as usize + 1])),
                        "{at}: over {max} taken"
                    );
                    assert!(takes(json!(vec![1.0; min as usize])), "{at}: {min} items refused");
                    assert!(
                        !takes(json!(vec![1.0; min as usize - 1])),
                        "{at}: under {min} taken"
                    );
                    tried += 1;
                }
            }
        }
        // Every range written beside a field (a typo in a field's name would skip it).
        assert_eq!(tried, 30, "ranges tried");
    }
}
