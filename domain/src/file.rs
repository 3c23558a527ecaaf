//! Files as the spec describes them: kinds, names, sizes and storage keys, each parsed once
//! at the edge ("parse, don't validate") so the rest of the code can trust them.

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;
use uuid::Uuid;

use crate::id::UserId;

/// The largest file the drive takes: 2 TB, counted as 2 TiB.
pub const MAX_FILE_SIZE: i64 = 2 * 1024 * 1024 * 1024 * 1024;

/// Object stores refuse a single-request upload (a presigned POST) above 5 GiB; bigger files
/// go through multipart.
pub const MAX_FORM_UPLOAD_SIZE: i64 = 5 * 1024 * 1024 * 1024;

pub use drive_kinds::FileKind;

/// Whether a picture is its own thumbnail: small, and of a type every browser shows. The farm
/// makes a thumbnail of any other picture as it reads it; a listing links a small one itself.
pub fn is_own_thumbnail(mime_type: &str, file_size: i64) -> bool {
    const SMALL: i64 = 100 * 1024;
    file_size <= SMALL && matches!(mime_type, "image/jpeg" | "image/png" | "image/webp" | "image/gif")
}

/// A file name without its extension (`a.tar` of `a.tar.gz`, `.hidden` of `.hidden`): what
/// results named after an input, and numbered variants of a taken name, are built on.
pub fn stem(name: &str) -> &str {
    match name.rfind('.') {
        Some(dot) if dot > 0 => &name[..dot],
        _ => name,
    }
}

/// A file's kind and media type from its name's extension, for files the drive makes itself
/// (job results, entries of an unzipped archive): uploaders say what they send.
pub use drive_kinds::for_name as guess_type;
pub use drive_kinds::is_text_type;

/// The rules of a name people give a file or a folder: 1 to 255 characters, not blank, not
/// `.` or `..`, no slash or backslash (either would read as a path somewhere: in a zip entry,
/// on a Windows disk), and no control or invisible characters
/// ([`input::check_chars`](crate::input::check_chars)).
pub fn check_name(name: &str) -> Result<(), String> {
    if name.trim().is_empty() {
        return Err("must not be empty".into());
    }
    if name.chars().count() > 255 {
        return Err("must be at most 255 characters".into());
    }
    if name == "." || name == ".." {
        return Err("must not be . or ..".into());
    }
    if name.contains(['/', '\\']) {
        return Err("must not contain a slash or a backslash".into());
    }
    crate::input::check_chars(name, false)
}

/// What [`check_name`] takes, as a regular expression without anchors for the OpenAPI document
/// (ECMA 262 and Python read it alike; the 255 characters are the schema's `maxLength`): a
/// character other than a space or a dot, or else spaces and dots with at least one of each,
/// or three dots or more.
pub fn name_pattern() -> String {
    let refused = crate::input::refused_class(false);
    let spaces = crate::input::SPACES;
    let any = format!(r"[^/\\{refused}]");
    let solid = format!(r"[^/\\.{refused}{spaces}]");
    let thin = format!("[.{spaces}]");
    let space = format!("[{spaces}]");
    format!(r"(?:{any}*{solid}{any}*|{thin}*\.{thin}*{space}{thin}*|{thin}*{space}{thin}*\.{thin}*|\.\.\.+)")
}

/// `name` made to pass [`check_name`], for names the drive did not check when it stored them:
/// each character it refuses becomes `_`, and a name of dots only becomes `_`.
pub fn safe_name(name: &str) -> String {
    let safe: String = name
        .chars()
        .map(|c| {
            if c == '/' || c == '\\' || crate::input::refused(c, false) {
                '_'
            } else {
                c
            }
        })
        .take(255)
        .collect();
    if safe.trim().is_empty() || safe.chars().all(|c| c == '.') {
        return "_".to_string();
    }
    safe
}

/// A file's display name, as [`check_name`] has it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct FileName(String);

impl utoipa::PartialSchema for FileName {
    fn schema() -> utoipa::openapi::RefOr<utoipa::openapi::schema::Schema> {
        utoipa::openapi::schema::ObjectBuilder::new()
            .schema_type(utoipa::openapi::schema::Type::String)
            .min_length(Some(1))
            .max_length(Some(255))
            .pattern(Some(format!("^{}$", name_pattern())))
            .examples(["holiday.mp4"])
            .into()
    }
}

impl ToSchema for FileName {}

impl TryFrom<String> for FileName {
    type Error = String;
    fn try_from(s: String) -> Result<Self, String> {
        check_name(&s)?;
        Ok(FileName(s))
    }
}

impl From<FileName> for String {
    fn from(n: FileName) -> String {
        n.0
    }
}

impl FileName {
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// An exact file size in bytes, 0 to 2 TB.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(try_from = "serde_json::Number", into = "i64")]
pub struct FileSize(i64);

/// `62.0` is the whole number `62` (as JSON Schema reads it).
impl TryFrom<serde_json::Number> for FileSize {
    type Error = String;
    fn try_from(n: serde_json::Number) -> Result<Self, String> {
        FileSize::try_from(crate::input::whole(&n).ok_or("must be a whole number of bytes")?)
    }
}

impl utoipa::PartialSchema for FileSize {
    fn schema() -> utoipa::openapi::RefOr<utoipa::openapi::schema::Schema> {
        crate::input::Bounded::<0, MAX_FILE_SIZE>::schema()
    }
}

impl ToSchema for FileSize {}

impl TryFrom<i64> for FileSize {
    type Error = String;
    fn try_from(n: i64) -> Result<Self, String> {
        if n < 0 {
            return Err("must not be negative".into());
        }
        if n > MAX_FILE_SIZE {
            return Err(format!("must be at most {MAX_FILE_SIZE} bytes (2 TB)"));
        }
        Ok(FileSize(n))
    }
}

impl From<FileSize> for i64 {
    fn from(s: FileSize) -> i64 {
        s.0
    }
}

impl FileSize {
    pub fn bytes(self) -> i64 {
        self.0
    }
}

/// A storage key as sent by a client: `users/{userId}/` followed by a path of non-empty
/// segments, at most 1024 bytes. Which user it must name is checked against the caller by
/// [`ObjectKey::belongs_to`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(try_from = "String", into = "String")]
#[schema(value_type = String, example = "users/7d1c0c4e-2b5c-4a8e-9a57-3f1f7b0d9c11/holiday.mp4")]
pub struct ObjectKey(String);

impl TryFrom<String> for ObjectKey {
    type Error = String;
    fn try_from(s: String) -> Result<Self, String> {
        if s.len() > 1024 {
            return Err("must be at most 1024 bytes".into());
        }
        let Some(rest) = s.strip_prefix("users/") else {
            return Err("must begin users/{userId}/".into());
        };
        let mut segments = rest.split('/');
        let user = segments.next().unwrap_or_default();
        // One spelling per user: `Uuid::parse_str` also takes upper case, no hyphens, braces
        // and `urn:uuid:`, which would be other keys for the same user.
        if !Uuid::parse_str(user).is_ok_and(|id| id.hyphenated().to_string() == user) {
            return Err("must begin users/{userId}/ with the id in lower case with hyphens".into());
        }
        let path: Vec<&str> = segments.collect();
        if path.is_empty() || path.iter().any(|p| p.is_empty() || *p == "." || *p == "..") {
            return Err("must name a file under users/{userId}/ with no empty, . or .. segments".into());
        }
        crate::input::check_chars(&s, false)?;
        Ok(ObjectKey(s))
    }
}

impl From<ObjectKey> for String {
    fn from(k: ObjectKey) -> String {
        k.0
    }
}

impl ObjectKey {
    pub fn as_str(&self) -> &str {
        &self.0
    }

    pub fn belongs_to(&self, user: UserId) -> bool {
        self.0
            .strip_prefix("users/")
            .and_then(|rest| rest.split('/').next())
            .and_then(|id| id.parse().ok())
            == Some(user)
    }
}

/// A MIME type such as `video/mp4`: `type/subtype` with optional parameters, no control
/// characters, at most 255 bytes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(try_from = "String", into = "String")]
#[schema(value_type = String, example = "video/mp4")]
pub struct MimeType(String);

impl TryFrom<String> for MimeType {
    type Error = String;
    fn try_from(s: String) -> Result<Self, String> {
        let essence = s.split(';').next().unwrap_or_default().trim();
        let valid_essence = essence
            .split_once('/')
            .is_some_and(|(t, st)| !t.is_empty() && !st.is_empty() && !st.contains('/'));
        if s.len() > 255 || !valid_essence || s.chars().any(char::is_control) {
            return Err("must be a content type like video/mp4".into());
        }
        Ok(MimeType(s))
    }
}

impl From<MimeType> for String {
    fn from(m: MimeType) -> String {
        m.0
    }
}

impl MimeType {
    pub const OCTET_STREAM: &'static str = drive_kinds::OCTET_STREAM;

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// Serializable because a file row, which holds one, is handed to a job process.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Bucket {
    Private,
    Public,
}

impl Bucket {
    /// How the bucket is named in the database.
    pub fn as_str(self) -> &'static str {
        match self {
            Bucket::Private => "private",
            Bucket::Public => "public",
        }
    }

    pub fn parse(s: &str) -> Option<Bucket> {
        match s {
            "private" => Some(Bucket::Private),
            "public" => Some(Bucket::Public),
            _ => None,
        }
    }

    pub fn other(self) -> Bucket {
        match self {
            Bucket::Private => Bucket::Public,
            Bucket::Public => Bucket::Private,
        }
    }
}

crate::column::text_column!(Bucket, "bucket");

/// `name`, or `name (2)`, `name (3)`... before its extension: the first one not `taken`.
pub fn free_variant(name: &str, taken: impl Fn(&str) -> bool) -> String {
    let stem = stem(name);
    first_free(stem, &name[stem.len()..], taken)
}

/// `{stem}{extension}`, or `{stem} (n){extension}` for the first n from 2 not `taken`.
pub fn first_free(stem: &str, extension: &str, taken: impl Fn(&str) -> bool) -> String {
    let mut n = 1;
    loop {
        let candidate = if n == 1 {
            format!("{stem}{extension}")
        } else {
            format!("{stem} ({n}){extension}")
        };
        if !taken(&candidate) {
            return candidate;
        }
        n += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn object_keys_must_sit_under_a_user() {
        let user = UserId::random();
        let key = ObjectKey::try_from(format!("users/{user}/a/b.mp4")).unwrap();
        assert!(key.belongs_to(user));
        assert!(!key.belongs_to(UserId::random()));
        for bad in [
            "a/b".to_string(),
            format!("users/{user}/"),
            format!("users/{user}/../x"),
            format!("users/{user}//x"),
            "users/not-a-uuid/x".to_string(),
            format!("users/{}/x", user.to_string().to_uppercase()),
            format!("users/{}/x", user.as_uuid().simple()),
            format!("users/{{{user}}}/x"),
            format!("users/{}/x", user.as_uuid().urn()),
            format!("users/{user}/a\u{202E}b"),
        ] {
            assert!(ObjectKey::try_from(bad.clone()).is_err(), "{bad} was accepted");
        }
    }

    #[test]
    fn file_sizes_stop_at_two_terabytes() {
        assert!(FileSize::try_from(MAX_FILE_SIZE).is_ok());
        assert!(FileSize::try_from(MAX_FILE_SIZE + 1).is_err());
        assert!(FileSize::try_from(-1).is_err());
    }

    #[test]
    fn names_refuse_slashes_and_emptiness() {
        assert!(FileName::try_from("clip.mp4".to_string()).is_ok());
        assert!(FileName::try_from("a/b".to_string()).is_err());
        assert!(FileName::try_from(" ".to_string()).is_err());
        assert!(FileName::try_from("x".repeat(256)).is_err());
        for bad in [
            ".",
            "..",
            "a\\b",
            "a\u{7}b",
            "a\u{202E}gpj.exe",
            "a\u{2066}b",
            "a\u{200E}",
        ] {
            assert!(
                FileName::try_from(bad.to_string()).is_err(),
                "{bad:?} was accepted"
            );
        }
        assert!(FileName::try_from("..hidden".to_string()).is_ok());
    }

    #[test]
    fn safe_names_pass_the_name_check() {
        for name in ["..", ".", "", "..\\..\\x", "a/b", "a\u{202E}b", "\u{1}", "ok.txt"] {
            let safe = safe_name(name);
            assert!(check_name(&safe).is_ok(), "{name:?} became {safe:?}");
        }
        assert_eq!(safe_name("ok.txt"), "ok.txt");
        assert_eq!(safe_name("..\\..\\x"), ".._.._x");
    }

    #[test]
    fn a_taken_name_gets_a_number_before_its_extension() {
        let taken = ["a.pdf", "a (2).pdf"];
        assert_eq!(first_free("a", ".pdf", |c| taken.contains(&c)), "a (3).pdf");
        assert_eq!(first_free("b", ".pdf", |c| taken.contains(&c)), "b.pdf");
        assert_eq!(first_free("/x/photos", "", |c| c == "/x/photos"), "/x/photos (2)");
    }
}
