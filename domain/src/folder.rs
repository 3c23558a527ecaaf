//! Folder paths: `/` is the top, `/a/b` a folder two levels down. At most 32 levels.

use serde::Deserialize;
use utoipa::ToSchema;

pub const MAX_DEPTH: usize = 32;

/// A parsed folder path. Input may end in a slash (as listings write paths); it is kept
/// without one.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(try_from = "String")]
pub struct FolderPath(Vec<String>);

/// `/`, or names as [`crate::file::check_name`] takes them after it, at most 32, with an
/// optional slash at the end. The names' 255 characters each are left to the route.
impl utoipa::PartialSchema for FolderPath {
    fn schema() -> utoipa::openapi::RefOr<utoipa::openapi::schema::Schema> {
        let name = crate::file::name_pattern();
        utoipa::openapi::schema::ObjectBuilder::new()
            .schema_type(utoipa::openapi::schema::Type::String)
            .pattern(Some(format!(
                "^/(?:{name}(?:/{name}){{0,{}}}/?)?$",
                MAX_DEPTH - 1
            )))
            .examples(["/Holidays/2026"])
            .into()
    }
}

impl ToSchema for FolderPath {}

impl TryFrom<String> for FolderPath {
    type Error = String;
    fn try_from(s: String) -> Result<Self, String> {
        let Some(rest) = s.strip_prefix('/') else {
            return Err("a folder path begins with / (the top of the drive is /)".into());
        };
        if rest.starts_with('/') {
            return Err("folder names must not be empty".into());
        }
        let rest = rest.strip_suffix('/').unwrap_or(rest);
        if rest.is_empty() {
            return Ok(FolderPath(Vec::new()));
        }
        let segments: Vec<String> = rest.split('/').map(str::to_string).collect();
        if segments.len() > MAX_DEPTH {
            return Err(format!("a folder path is at most {MAX_DEPTH} levels deep"));
        }
        for segment in &segments {
            crate::file::check_name(segment).map_err(|why| format!("a folder name {why}"))?;
        }
        Ok(FolderPath(segments))
    }
}

impl FolderPath {
    /// The top of the drive.
    pub fn is_top(&self) -> bool {
        self.0.is_empty()
    }

    /// This path and every path above it, top first, without `/` itself: `/a`, `/a/b`, …
    pub fn lineage(&self) -> impl Iterator<Item = String> + '_ {
        (1..=self.0.len()).map(|n| format!("/{}", self.0[..n].join("/")))
    }

    /// The stored form: `/a/b` (empty for the top).
    pub fn stored(&self) -> String {
        self.lineage().last().unwrap_or_default()
    }

    /// How many levels down it is: 0 for the top.
    pub fn depth(&self) -> usize {
        self.0.len()
    }

    /// The folder holding it; the top for a folder at the top (and for the top itself).
    pub fn parent(&self) -> FolderPath {
        FolderPath(self.0[..self.0.len().saturating_sub(1)].to_vec())
    }
}

/// How many levels down a stored path (`/a/b`) is.
pub fn stored_depth(stored: &str) -> usize {
    stored.matches('/').count()
}

/// How listings write a stored path: with a trailing slash (`/a/b/`).
pub fn listed(stored: &str) -> String {
    format!("{stored}/")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(s: &str) -> Result<FolderPath, String> {
        FolderPath::try_from(s.to_string())
    }

    #[test]
    fn paths_are_parsed_and_bounded() {
        assert!(parse("/").unwrap().is_top());
        assert_eq!(parse("/a/b").unwrap().depth(), 2);
        assert_eq!(parse("/a/b").unwrap().parent().stored(), "/a");
        assert!(parse("/a").unwrap().parent().is_top());
        assert_eq!(stored_depth("/a/b/c"), 3);
        assert_eq!(parse("/a/b/").unwrap().stored(), "/a/b");
        assert_eq!(
            parse("/a/b").unwrap().lineage().collect::<Vec<_>>(),
            ["/a", "/a/b"]
        );
        let deep = |n: usize| format!("/{}", vec!["x"; n].join("/"));
        assert!(parse(&deep(32)).is_ok());
        assert!(parse(&deep(33)).is_err());
        for bad in ["a/b", "/a//b", "/a/../b", "//", "/ /x"] {
            assert!(parse(bad).is_err(), "{bad} was accepted");
        }
    }

    #[test]
    fn the_schema_pattern_takes_what_parse_takes() {
        use utoipa::PartialSchema;
        use utoipa::openapi::{RefOr, schema::Schema};
        let RefOr::T(Schema::Object(schema)) = FolderPath::schema() else {
            panic!("not an object")
        };
        let pattern = regex::Regex::new(schema.pattern.as_deref().unwrap()).unwrap();
        let deep = |n: usize| format!("/{}", vec!["x"; n].join("/"));
        for sample in [
            "/",
            "/a",
            "/a/",
            "/a/b",
            "//",
            "/a//b",
            "a",
            "",
            "/.",
            "/..",
            "/...",
            "/. ",
            "/ .",
            "/ ",
            "/a\\b",
            "/été",
            "/a\u{202E}",
            "/\u{3000}",
            "/ x ",
            &deep(32),
            &deep(33),
        ] {
            assert_eq!(pattern.is_match(sample), parse(sample).is_ok(), "{sample:?}");
        }
    }
}
