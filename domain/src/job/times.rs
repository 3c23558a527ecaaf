//! Moments and lengths in job settings: seconds, or the clock forms people write.

use serde::{Deserialize, Serialize};
use utoipa::openapi::RefOr;
use utoipa::openapi::schema::{ObjectBuilder, OneOfBuilder, Schema, Type};

/// A moment or a length in seconds, written as a number or in a clock form: `90`, `12.5`,
/// `4:10`, `1:02:03.5`. Stored as a number.
#[derive(Debug, Clone, Copy, PartialEq, PartialOrd, Default, Serialize)]
#[serde(transparent)]
pub struct Seconds(pub f64);

impl<'de> Deserialize<'de> for Seconds {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Seconds, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Written {
            Number(f64),
            Clock(String),
        }
        let seconds = match Written::deserialize(d).map_err(|_| {
            serde::de::Error::custom("a time is seconds (a number) or a clock form like \"4:10\"")
        })? {
            Written::Number(n) => n,
            Written::Clock(text) => parse_clock(&text).map_err(serde::de::Error::custom)?,
        };
        if !seconds.is_finite() || seconds < 0.0 {
            return Err(serde::de::Error::custom("a time is not negative"));
        }
        Ok(Seconds(seconds))
    }
}

/// A number of seconds (not negative), or a string in a clock form. The pattern takes every
/// form [`parse_clock`] reads (and a little more: minutes and seconds of 60 or over are the
/// parser's to refuse, naming the field).
impl utoipa::PartialSchema for Seconds {
    fn schema() -> RefOr<Schema> {
        let number = ObjectBuilder::new().schema_type(Type::Number).minimum(Some(0));
        let clock = ObjectBuilder::new()
            .schema_type(Type::String)
            .pattern(Some(r"^\s*([0-9]+:){0,2}[0-9]*\.?[0-9]*\s*$"));
        OneOfBuilder::new()
            .item(number)
            .item(clock)
            .description(Some(
                "Seconds, or a clock form: `90`, `12.5`, `4:10`, `1:02:03.5`.",
            ))
            .into()
    }
}

impl utoipa::ToSchema for Seconds {}

/// `4:10`, `1:02:03.5` or `12.5`: hours and minutes before seconds, each part under 60
/// after the first.
pub fn parse_clock(text: &str) -> Result<f64, String> {
    let parts: Vec<&str> = text.trim().split(':').collect();
    if parts.len() > 3 {
        return Err(format!("\"{text}\" is not a time: at most hours:minutes:seconds"));
    }
    let mut seconds = 0.0;
    for (n, part) in parts.iter().enumerate() {
        let last = n == parts.len() - 1;
        let well_formed = !part.is_empty()
            && part.bytes().all(|b| b.is_ascii_digit() || (last && b == b'.'))
            && part.bytes().filter(|b| *b == b'.').count() <= 1;
        let value: f64 = match part.parse() {
            Ok(v) if well_formed => v,
            _ => return Err(format!("\"{text}\" is not a time like 90, 12.5 or 4:10")),
        };
        if n > 0 && value >= 60.0 {
            return Err(format!(
                "\"{text}\" has {part} where minutes or seconds go (under 60)"
            ));
        }
        seconds = seconds * 60.0 + value;
    }
    Ok(seconds)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::job::{JobSpec, JobType};
    use serde_json::json;

    #[test]
    fn times_read_as_seconds_or_clock_forms() {
        assert_eq!(parse_clock("4:10"), Ok(250.0));
        assert_eq!(parse_clock("1:02:03.5"), Ok(3723.5));
        assert_eq!(parse_clock("12.5"), Ok(12.5));
        for bad in ["", "1:60", "a:10", "1:2:3:4", "-5", "1.5:10", "1..5"] {
            assert!(parse_clock(bad).is_err(), "{bad:?} was taken");
        }
        // The schema's pattern takes every form the parser does (what it refuses besides is
        // the parser's to name), and none of the forms that are not times at all.
        let schema = serde_json::to_value(<Seconds as utoipa::PartialSchema>::schema()).unwrap();
        let pattern = regex::Regex::new(schema["oneOf"][1]["pattern"].as_str().unwrap()).unwrap();
        for good in [
            "4:10",
            "1:02:03.5",
            "12.5",
            "0",
            " 7 ",
            "5.",
            ".5",
            "00:00:59.999",
        ] {
            assert!(parse_clock(good).is_ok(), "{good:?} was refused");
            assert!(pattern.is_match(good), "the pattern refuses {good:?}");
        }
        for bad in ["a:10", "1:2:3:4", "-5", "1.5:10", "1..5"] {
            assert!(!pattern.is_match(bad), "the pattern takes {bad:?}");
        }
        let cut = JobSpec::parse(JobType::Cut, json!({ "start": "0:01.5", "end": 3 })).unwrap();
        assert_eq!(cut.options()["start"], 1.5);
        assert_eq!(JobSpec::from_row(JobType::Cut, cut.options()).unwrap(), cut);
    }
}
