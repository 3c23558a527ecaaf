//! Moments and lengths in job settings: seconds, or the clock forms people write.

use serde::{Deserialize, Serialize};

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
        let cut = JobSpec::parse(JobType::Cut, json!({ "start": "0:01.5", "end": 3 })).unwrap();
        assert_eq!(cut.options()["start"], 1.5);
        assert_eq!(JobSpec::from_row(JobType::Cut, cut.options()).unwrap(), cut);
    }
}
