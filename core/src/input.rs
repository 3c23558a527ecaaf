//! Text and integers as requests send them, refused while deserializing when the drive cannot
//! hold them: a request type made of these cannot let a NUL reach PostgreSQL (which refuses
//! it with an error that would look like the server's fault) or an offset overflow the
//! arithmetic of a page, and no route can forget the check.

use std::borrow::Cow;
use std::ops::Deref;

use serde::{Deserialize, Serialize};
use utoipa::openapi::schema::{KnownFormat, ObjectBuilder, SchemaFormat, Type};
use utoipa::openapi::{RefOr, Schema};
use utoipa::{PartialSchema, ToSchema};

/// Whether `c` may not appear in text people type into the drive: control characters (C0,
/// DEL, C1), and the invisible characters that make text show other than it reads — the
/// bidirectional embeddings, overrides, isolates and marks ("Trojan Source"), line and
/// paragraph separators, zero-width spaces and joiners of words, and the byte-order mark. The
/// zero-width (non-)joiners U+200C and U+200D stay: scripts and emoji need them. Multi-line
/// text keeps line feeds and tabs.
pub fn refused(c: char, multiline: bool) -> bool {
    match c {
        '\n' | '\t' => !multiline,
        '\u{061C}' | '\u{200B}' | '\u{200E}' | '\u{200F}' | '\u{2028}' | '\u{2029}' | '\u{FEFF}' => true,
        '\u{202A}'..='\u{202E}'
        | '\u{2060}'..='\u{2064}'
        | '\u{2066}'..='\u{2069}'
        | '\u{FFF9}'..='\u{FFFB}' => true,
        c => c.is_control(),
    }
}

/// Refuses text holding a character of [`refused`]; the sentence says which and where.
pub fn check_chars(s: &str, multiline: bool) -> Result<(), String> {
    match s.chars().enumerate().find(|(_, c)| refused(*c, multiline)) {
        Some((n, c)) => Err(format!(
            "must not hold control or invisible characters (U+{:04X} at character {})",
            c as u32,
            n + 1
        )),
        None => Ok(()),
    }
}

/// One line of text (a title, a tag, search words, a token): no control or invisible
/// characters. Lengths are each field's own rule.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(try_from = "String", into = "String")]
#[schema(value_type = String)]
pub struct Line(String);

impl TryFrom<String> for Line {
    type Error = String;
    fn try_from(s: String) -> Result<Self, String> {
        check_chars(&s, false)?;
        Ok(Line(s))
    }
}

/// Text of several lines (a description): as [`Line`], but line feeds and tabs are kept.
/// Carriage returns are not: lines end in `\n`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(try_from = "String", into = "String")]
#[schema(value_type = String)]
pub struct Text(String);

impl TryFrom<String> for Text {
    type Error = String;
    fn try_from(s: String) -> Result<Self, String> {
        check_chars(&s, true)?;
        Ok(Text(s))
    }
}

macro_rules! text_access {
    ($t:ident) => {
        impl From<$t> for String {
            fn from(t: $t) -> String {
                t.0
            }
        }

        impl Deref for $t {
            type Target = str;
            fn deref(&self) -> &str {
                &self.0
            }
        }
    };
}
text_access!(Line);
text_access!(Text);

/// How far a listing may be paged: far beyond any library, and far from overflowing
/// `offset + limit`.
pub const MAX_OFFSET: i64 = 1_000_000_000;

/// An integer in `MIN..=MAX`: offsets, limits, sizes, part numbers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(try_from = "i64", into = "i64")]
pub struct Bounded<const MIN: i64, const MAX: i64>(i64);

impl<const MIN: i64, const MAX: i64> TryFrom<i64> for Bounded<MIN, MAX> {
    type Error = String;
    fn try_from(n: i64) -> Result<Self, String> {
        if !(MIN..=MAX).contains(&n) {
            return Err(format!("must be {MIN} to {MAX}"));
        }
        Ok(Bounded(n))
    }
}

impl<const MIN: i64, const MAX: i64> From<Bounded<MIN, MAX>> for i64 {
    fn from(n: Bounded<MIN, MAX>) -> i64 {
        n.0
    }
}

impl<const MIN: i64, const MAX: i64> Bounded<MIN, MAX> {
    pub fn get(self) -> i64 {
        self.0
    }
}

impl<const MIN: i64, const MAX: i64> PartialSchema for Bounded<MIN, MAX> {
    fn schema() -> RefOr<Schema> {
        ObjectBuilder::new()
            .schema_type(Type::Integer)
            .format(Some(SchemaFormat::KnownFormat(KnownFormat::Int64)))
            .minimum(Some(MIN))
            .maximum(Some(MAX))
            .into()
    }
}

/// One schema per range (the default name would give every range the one name `Bounded`).
impl<const MIN: i64, const MAX: i64> ToSchema for Bounded<MIN, MAX> {
    fn name() -> Cow<'static, str> {
        Cow::Owned(format!("Integer{MIN}To{MAX}").replace('-', "Minus"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_refuse_control_and_invisible_characters() {
        assert!(Line::try_from("Summer 2026 — été ✓ 👩‍💻".to_string()).is_ok());
        for bad in [
            "a\0b",
            "a\nb",
            "a\tb",
            "a\u{7f}",
            "a\u{85}",
            "a\u{202E}b",
            "a\u{2066}",
            "\u{200F}",
            "a\u{FEFF}",
        ] {
            assert!(Line::try_from(bad.to_string()).is_err(), "{bad:?} was accepted");
        }
    }

    #[test]
    fn text_keeps_line_feeds_and_tabs_only() {
        assert!(Text::try_from("one\n\ttwo".to_string()).is_ok());
        for bad in ["a\0b", "a\r\nb", "a\u{1b}[31m", "a\u{202E}b"] {
            assert!(Text::try_from(bad.to_string()).is_err(), "{bad:?} was accepted");
        }
    }

    #[test]
    fn bounded_integers_stop_at_their_ends() {
        assert!(Bounded::<0, MAX_OFFSET>::try_from(MAX_OFFSET).is_ok());
        assert!(Bounded::<0, MAX_OFFSET>::try_from(MAX_OFFSET + 1).is_err());
        assert!(Bounded::<0, MAX_OFFSET>::try_from(-1).is_err());
        assert!(serde_json::from_str::<Bounded<1, 200>>("9223372036854775807").is_err());
    }
}
