//! A JSON body extractor whose failures name the field: malformed JSON, a missing field and
//! a value of the wrong type or out of range all answer 400 with `field` set, which axum's
//! own `Json` cannot do.

use axum::body::Bytes;
use axum::extract::{FromRequest, Request};
use axum::http::StatusCode;
use axum::http::header::CONTENT_TYPE;
use serde::de::DeserializeOwned;
use serde_path_to_error::Segment;
use utoipa::PartialSchema;

use crate::error::ApiError;

/// The largest body a route reads (axum's default limit, which the router leaves in place).
pub const BODY_LIMIT: usize = 2 * 1024 * 1024;

pub struct Json<T>(pub T);

impl<S: Send + Sync, T: DeserializeOwned + PartialSchema> FromRequest<S> for Json<T> {
    type Rejection = ApiError;

    async fn from_request(req: Request, state: &S) -> Result<Self, Self::Rejection> {
        let bytes = json_body(req, state).await?;
        refuse_unlisted_array::<T>(&bytes)?;
        parse(&bytes).map(Json)
    }
}

/// serde reads a struct from an array of its fields in order (`[null, null]` for a body of two
/// optional fields), which the document does not offer: a body that is an array is taken only
/// where the route's schema is one.
fn refuse_unlisted_array<T: PartialSchema>(bytes: &[u8]) -> Result<(), ApiError> {
    if bytes.iter().find(|b| !b.is_ascii_whitespace()) != Some(&b'[') {
        return Ok(());
    }
    let schema = serde_json::to_value(T::schema()).unwrap_or_default();
    let is_array = |s: &serde_json::Value| {
        s["type"] == "array" || s["type"].as_array().is_some_and(|t| t.contains(&"array".into()))
    };
    let options = ["oneOf", "anyOf"]
        .iter()
        .filter_map(|k| schema[k].as_array())
        .flatten();
    if is_array(&schema) || options.into_iter().any(is_array) {
        return Ok(());
    }
    Err(ApiError::invalid(
        "body",
        "the body is a JSON object, not an array",
    ))
}

/// One JSON body read as two types: a shared input (`A`) plus the fields one route adds to
/// it (`B`). serde's `flatten` would do this in one type but loses the field names in its
/// errors, and naming the field is the point of this module.
pub struct JsonWith<A, B>(pub A, pub B);

impl<S: Send + Sync, A: DeserializeOwned, B: DeserializeOwned> FromRequest<S> for JsonWith<A, B> {
    type Rejection = ApiError;

    async fn from_request(req: Request, state: &S) -> Result<Self, Self::Rejection> {
        let bytes = json_body(req, state).await?;
        Ok(JsonWith(parse(&bytes)?, parse(&bytes)?))
    }
}

/// The bytes of a body sent as `application/json`. An empty body reads as JSON `null`, so a
/// route whose body is optional takes `Json<Option<T>>`.
async fn json_body<S: Send + Sync>(req: Request, state: &S) -> Result<Bytes, ApiError> {
    let is_json = req
        .headers()
        .get(CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| {
            v.split(';')
                .next()
                .is_some_and(|m| m.trim().eq_ignore_ascii_case("application/json"))
        });
    let bytes = Bytes::from_request(req, state).await.map_err(|e| {
        if e.status() == StatusCode::PAYLOAD_TOO_LARGE {
            ApiError::TooLarge {
                message: format!("the body is over the limit of {BODY_LIMIT} bytes"),
            }
        } else {
            ApiError::bad_request("invalid_body", "body", e.body_text())
        }
    })?;
    // No body at all; a body of only spaces or line ends is not JSON, and answers so.
    if bytes.is_empty() {
        return Ok(Bytes::from_static(b"null"));
    }
    if !is_json {
        return Err(ApiError::bad_request(
            "invalid_content_type",
            "Content-Type",
            "send the body as application/json",
        ));
    }
    Ok(bytes)
}

/// A list of `min..=max` items (ids, tags, part numbers), or a 400 naming `field`.
pub fn id_count<'a, T>(field: &str, ids: &'a [T], min: usize, max: usize) -> Result<&'a [T], ApiError> {
    if ids.len() < min || ids.len() > max {
        return Err(ApiError::invalid(field, format!("give {min} to {max} items")));
    }
    Ok(ids)
}

/// Parses a body, turning serde's error into a 400 that names the field at fault.
pub fn parse<T: DeserializeOwned>(bytes: &[u8]) -> Result<T, ApiError> {
    let mut deserializer = serde_json::Deserializer::from_slice(bytes);
    let value = serde_path_to_error::deserialize(&mut deserializer).map_err(|err| serde_error("", err))?;
    deserializer.end().map_err(|e| json_error(None, None, e))?;
    Ok(value)
}

/// The 400 for a serde error inside the body's `prefix` object (`""`: the body itself).
/// `field` names the request's own field (`kinds`, not `kinds[0]`); the position of an item
/// in a list goes in the sentence.
pub fn serde_error(prefix: &str, err: serde_path_to_error::Error<serde_json::Error>) -> ApiError {
    let mut names: Vec<String> = Some(prefix.to_string())
        .filter(|p| !p.is_empty())
        .into_iter()
        .collect();
    let mut item = None;
    for segment in err.path().iter() {
        match segment {
            Segment::Map { key } => names.push(key.clone()),
            Segment::Seq { index } => item = Some(index + 1),
            Segment::Enum { .. } | Segment::Unknown => {}
        }
    }
    let field = Some(names.join(".")).filter(|f| !f.is_empty());
    json_error(field, item, err.into_inner())
}

/// The 400 for a serde error at `field` (`None`: the body as a whole), in its `item`th item
/// when it is a list.
fn json_error(field: Option<String>, item: Option<usize>, err: serde_json::Error) -> ApiError {
    // serde_json appends " at line L column C"; the field says where instead.
    let message = err.to_string();
    let message = message
        .rsplit_once(" at line ")
        .map_or(message.as_str(), |(m, _)| m);
    if err.is_syntax() || err.is_eof() {
        return ApiError::bad_request(
            "invalid_json",
            "body",
            format!("the body is not valid JSON: {message}"),
        );
    }
    if let Some(name) = message
        .strip_prefix("missing field `")
        .and_then(|m| m.strip_suffix('`'))
    {
        return ApiError::missing(&field.map_or(name.to_string(), |f| format!("{f}.{name}")));
    }
    let field = field.unwrap_or_else(|| "body".to_string());
    let at = item.map_or(String::new(), |n| format!(" (item {n})"));
    ApiError::invalid(&field, format!("{field}{at}: {message}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, serde::Deserialize)]
    #[serde(rename_all = "camelCase")]
    #[allow(dead_code)]
    struct Input {
        file_name: String,
        creator: Option<Creator>,
        kinds: Option<Vec<drive_core::file::FileKind>>,
    }

    #[derive(Debug, serde::Deserialize)]
    #[allow(dead_code)]
    struct Creator {
        id: uuid::Uuid,
    }

    fn field_and_code(body: &str) -> (String, &'static str) {
        match parse::<Input>(body.as_bytes()).unwrap_err() {
            ApiError::BadRequest { field, code, .. } => (field, code),
            other => panic!("not a 400: {other:?}"),
        }
    }

    #[test]
    fn a_list_item_is_named_by_its_list_and_placed_in_the_sentence() {
        let body = r#"{"fileName": "a", "kinds": ["Video", "Sculpture"]}"#;
        match parse::<Input>(body.as_bytes()).unwrap_err() {
            ApiError::BadRequest { field, message, .. } => {
                assert_eq!(field, "kinds");
                assert!(message.contains("item 2"), "{message}");
            }
            other => panic!("not a 400: {other:?}"),
        }
    }

    #[test]
    fn errors_name_the_field() {
        assert_eq!(field_and_code("{}"), ("fileName".into(), "missing_field"));
        assert_eq!(
            field_and_code(r#"{"fileName": 3}"#),
            ("fileName".into(), "invalid_field")
        );
        assert_eq!(
            field_and_code(r#"{"fileName": "a", "creator": {"id": "x"}}"#),
            ("creator.id".into(), "invalid_field")
        );
        assert_eq!(
            field_and_code(r#"{"fileName": "a", "creator": {}}"#),
            ("creator.id".into(), "missing_field")
        );
        assert_eq!(
            field_and_code(r#"{"fileName": "#),
            ("body".into(), "invalid_json")
        );
        assert_eq!(field_and_code("7"), ("body".into(), "invalid_field"));
        assert_eq!(
            field_and_code(r#"{"fileName": "a"} {}"#),
            ("body".into(), "invalid_json")
        );
    }
}
