//! Text and integers as requests send them, refused while deserializing when the drive cannot
//! hold them: a request type made of these cannot let a NUL reach PostgreSQL (which refuses
//! it with an error that would look like the server's fault) or an offset overflow the
//! arithmetic of a page, and no route can forget the check.

use std::borrow::Cow;
use std::ops::Deref;

use serde::{Deserialize, Serialize};
use utoipa::openapi::schema::{ArrayBuilder, KnownFormat, ObjectBuilder, SchemaFormat, Type};
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

/// No length limit of its own: the body's limit bounds it.
pub const UNLIMITED: usize = usize::MAX;

/// The characters [`refused`] refuses, as the inside of a regular-expression class (ECMA 262
/// and Python read it alike), for the schemas: `\t` and `\n` are left out when `multiline`.
pub fn refused_class(multiline: bool) -> String {
    let controls = if multiline {
        r"\u0000-\u0008\u000B-\u001F"
    } else {
        r"\u0000-\u001F"
    };
    format!(
        r"{controls}\u007F-\u009F\u061C\u200B\u200E\u200F\u2028\u2029\uFEFF\u202A-\u202E\u2060-\u2064\u2066-\u2069\uFFF9-\uFFFB"
    )
}

/// Unicode's White_Space characters that [`refused`] lets through (what `str::trim` trims).
pub const SPACES: &str = r" \u00A0\u1680\u2000-\u200A\u202F\u205F\u3000";

/// Text as typed into the drive: [`check_chars`], and `MIN..=MAX` characters as sent; with a
/// `MIN` of 1 or more it must also hold something besides spaces (a title of spaces is no
/// title). Routes trim it before keeping it. The schema carries all three rules (lengths and a
/// pattern), so a request the document calls valid is one the route takes.
fn check_text<const MIN: usize, const MAX: usize>(s: &str, multiline: bool) -> Result<(), String> {
    check_chars(s, multiline)?;
    let count = s.chars().count();
    if count < MIN || count > MAX {
        return Err(match MAX {
            UNLIMITED => format!("must be at least {MIN} characters"),
            _ if MIN == 0 => format!("must be at most {MAX} characters"),
            _ => format!("must be {MIN} to {MAX} characters"),
        });
    }
    if MIN > 0 && s.trim().is_empty() {
        return Err("must not be blank".to_string());
    }
    Ok(())
}

fn text_schema<const MIN: usize, const MAX: usize>(multiline: bool) -> RefOr<Schema> {
    let allowed = format!("[^{}]", refused_class(multiline));
    let pattern = if MIN > 0 {
        let spaces = if multiline {
            format!(r"{SPACES}\t\n")
        } else {
            SPACES.to_string()
        };
        format!("^{allowed}*[^{}{spaces}]{allowed}*$", refused_class(multiline))
    } else {
        format!("^{allowed}*$")
    };
    ObjectBuilder::new()
        .schema_type(Type::String)
        .min_length((MIN > 0).then_some(MIN))
        .max_length((MAX != UNLIMITED).then_some(MAX))
        .pattern(Some(pattern))
        .into()
}

fn text_name(kind: &str, min: usize, max: usize) -> Cow<'static, str> {
    match max {
        UNLIMITED if min == 0 => Cow::Owned(kind.to_string()),
        UNLIMITED => Cow::Owned(format!("{kind}From{min}")),
        _ => Cow::Owned(format!("{kind}{min}To{max}")),
    }
}

/// One line of text (a title, a tag, search words, a token) of `MIN..=MAX` characters: no
/// control or invisible characters.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct Line<const MIN: usize = 0, const MAX: usize = UNLIMITED>(String);

impl<const MIN: usize, const MAX: usize> TryFrom<String> for Line<MIN, MAX> {
    type Error = String;
    fn try_from(s: String) -> Result<Self, String> {
        check_text::<MIN, MAX>(&s, false)?;
        Ok(Line(s))
    }
}

/// Text of several lines (a description): as [`Line`], but line feeds and tabs are kept.
/// Carriage returns are not: lines end in `\n`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct Text<const MIN: usize = 0, const MAX: usize = UNLIMITED>(String);

impl<const MIN: usize, const MAX: usize> TryFrom<String> for Text<MIN, MAX> {
    type Error = String;
    fn try_from(s: String) -> Result<Self, String> {
        check_text::<MIN, MAX>(&s, true)?;
        Ok(Text(s))
    }
}

macro_rules! text_access {
    ($t:ident, $multiline:literal) => {
        impl<const MIN: usize, const MAX: usize> From<$t<MIN, MAX>> for String {
            fn from(t: $t<MIN, MAX>) -> String {
                t.0
            }
        }

        impl<const MIN: usize, const MAX: usize> Deref for $t<MIN, MAX> {
            type Target = str;
            fn deref(&self) -> &str {
                &self.0
            }
        }

        impl<const MIN: usize, const MAX: usize> PartialSchema for $t<MIN, MAX> {
            fn schema() -> RefOr<Schema> {
                text_schema::<MIN, MAX>($multiline)
            }
        }

        impl<const MIN: usize, const MAX: usize> ToSchema for $t<MIN, MAX> {
            fn name() -> Cow<'static, str> {
                text_name(stringify!($t), MIN, MAX)
            }
        }
    };
}
text_access!(Line, false);
text_access!(Text, true);

/// A list of `MIN..=MAX` items (ids, tags, part numbers), refused while deserializing
/// otherwise; its schema says the same with `minItems` and `maxItems`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(try_from = "Vec<T>", into = "Vec<T>")]
#[serde(bound(deserialize = "T: Deserialize<'de>", serialize = "T: Serialize + Clone"))]
pub struct List<T, const MIN: usize, const MAX: usize>(Vec<T>);

impl<T, const MIN: usize, const MAX: usize> TryFrom<Vec<T>> for List<T, MIN, MAX> {
    type Error = String;
    fn try_from(items: Vec<T>) -> Result<Self, String> {
        if items.len() < MIN || items.len() > MAX {
            return Err(match MAX {
                UNLIMITED => format!("give at least {MIN} items"),
                _ => format!("give {MIN} to {MAX} items"),
            });
        }
        Ok(List(items))
    }
}

/// Empty, for a list that may be left out.
impl<T, const MAX: usize> Default for List<T, 0, MAX> {
    fn default() -> Self {
        List(Vec::new())
    }
}

impl<T, const MIN: usize, const MAX: usize> From<List<T, MIN, MAX>> for Vec<T> {
    fn from(list: List<T, MIN, MAX>) -> Vec<T> {
        list.0
    }
}

impl<T, const MIN: usize, const MAX: usize> IntoIterator for List<T, MIN, MAX> {
    type Item = T;
    type IntoIter = std::vec::IntoIter<T>;
    fn into_iter(self) -> Self::IntoIter {
        self.0.into_iter()
    }
}

impl<T, const MIN: usize, const MAX: usize> Deref for List<T, MIN, MAX> {
    type Target = [T];
    fn deref(&self) -> &[T] {
        &self.0
    }
}

fn list_schema<const MIN: usize, const MAX: usize>(items: RefOr<Schema>) -> RefOr<Schema> {
    ArrayBuilder::new()
        .items(items)
        .min_items(Some(MIN))
        .max_items((MAX != UNLIMITED).then_some(MAX))
        .into()
}

/// The list's schema around its item's, which utoipa's derive hands over (as a reference where
/// the item has a name); utoipa makes the `PartialSchema` from this.
impl<T: PartialSchema, const MIN: usize, const MAX: usize> utoipa::__dev::ComposeSchema
    for List<T, MIN, MAX>
{
    fn compose(items: Vec<RefOr<Schema>>) -> RefOr<Schema> {
        list_schema::<MIN, MAX>(items.into_iter().next().unwrap_or_else(T::schema))
    }
}

impl<T: ToSchema, const MIN: usize, const MAX: usize> ToSchema for List<T, MIN, MAX> {
    fn name() -> Cow<'static, str> {
        Cow::Owned(format!("{}List{MIN}To{MAX}", T::name()))
    }
}

/// How far a listing may be paged: far beyond any library, and far from overflowing
/// `offset + limit`.
pub const MAX_OFFSET: i64 = 1_000_000_000;

/// An integer in `MIN..=MAX`: offsets, limits, sizes, part numbers.
/// JSON does not tell `62` from `62.0`, and JSON Schema calls both integers, so both are
/// read; `62.5` is not.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(try_from = "serde_json::Number", into = "i64")]
pub struct Bounded<const MIN: i64, const MAX: i64>(i64);

impl<const MIN: i64, const MAX: i64> TryFrom<serde_json::Number> for Bounded<MIN, MAX> {
    type Error = String;
    fn try_from(n: serde_json::Number) -> Result<Self, String> {
        Bounded::try_from(whole(&n).ok_or_else(|| format!("must be a whole number from {MIN} to {MAX}"))?)
    }
}

/// A JSON number as a whole `i64` (`62` or `62.0`), if it is one.
pub fn whole(n: &serde_json::Number) -> Option<i64> {
    match (n.as_i64(), n.as_f64()) {
        (Some(i), _) => Some(i),
        (None, Some(f)) if f.fract() == 0.0 && f >= i64::MIN as f64 && f < i64::MAX as f64 => Some(f as i64),
        _ => None,
    }
}

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
        assert!(<Line>::try_from("Summer 2026 — été ✓ 👩‍💻".to_string()).is_ok());
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
            assert!(<Line>::try_from(bad.to_string()).is_err(), "{bad:?} was accepted");
        }
    }

    #[test]
    fn text_keeps_line_feeds_and_tabs_only() {
        assert!(<Text>::try_from("one\n\ttwo".to_string()).is_ok());
        for bad in ["a\0b", "a\r\nb", "a\u{1b}[31m", "a\u{202E}b"] {
            assert!(<Text>::try_from(bad.to_string()).is_err(), "{bad:?} was accepted");
        }
    }

    #[test]
    fn lengths_count_characters_as_sent_and_a_required_text_is_not_blank() {
        assert!(Line::<1, 3>::try_from("été".to_string()).is_ok());
        assert!(Line::<1, 3>::try_from("étés".to_string()).is_err());
        assert!(Line::<1, 3>::try_from(String::new()).is_err());
        assert!(Line::<1, 3>::try_from("   ".to_string()).is_err());
        assert!(Line::<0, 3>::try_from("   ".to_string()).is_ok());
        assert!(Text::<1, 9>::try_from("\n\t ".to_string()).is_err());
    }

    #[test]
    fn the_schema_pattern_takes_what_the_type_takes() {
        // The pattern is for other tools' regular expressions; Rust's regex reads this subset
        // the same way, so check it against the type on the characters that matter.
        let RefOr::T(Schema::Object(line)) = Line::<1, 100>::schema() else {
            panic!("not an object")
        };
        let pattern = regex::Regex::new(line.pattern.as_deref().unwrap()).unwrap();
        for sample in [
            "a",
            " a ",
            "été",
            "👩\u{200D}💻",
            " ",
            "",
            "a\nb",
            "a\u{202E}",
            "\u{3000}",
            "\u{85}",
        ] {
            assert_eq!(
                pattern.is_match(sample),
                Line::<1, 100>::try_from(sample.to_string()).is_ok(),
                "{sample:?}"
            );
        }
    }

    #[test]
    fn lists_hold_min_to_max_items() {
        assert!(serde_json::from_str::<List<u8, 1, 2>>("[]").is_err());
        assert!(serde_json::from_str::<List<u8, 1, 2>>("[1, 2]").is_ok());
        assert!(serde_json::from_str::<List<u8, 1, 2>>("[1, 2, 3]").is_err());
        assert!(serde_json::from_str::<List<u8, 1, UNLIMITED>>("[1, 2, 3]").is_ok());
    }

    #[test]
    fn bounded_integers_stop_at_their_ends() {
        assert!(Bounded::<0, MAX_OFFSET>::try_from(MAX_OFFSET).is_ok());
        assert!(Bounded::<0, MAX_OFFSET>::try_from(MAX_OFFSET + 1).is_err());
        assert!(Bounded::<0, MAX_OFFSET>::try_from(-1).is_err());
        assert!(serde_json::from_str::<Bounded<1, 200>>("9223372036854775807").is_err());
        assert_eq!(serde_json::from_str::<Bounded<1, 200>>("62.0").unwrap().get(), 62);
        assert!(serde_json::from_str::<Bounded<1, 200>>("62.5").is_err());
        assert!(serde_json::from_str::<Bounded<1, 200>>("1e300").is_err());
    }
}
