//! Enums kept in text columns: each reads back through its own `parse`, and a value it does not
//! know is refused, never read as a default ([`text_column!`]). Every enum of the vocabulary
//! kept in a column (job types and states, lanes, plans, buckets, event kinds) has this one rule;
//! the database side of it is compiled with the `sqlx` feature.

/// A text column held a value its type does not know (a newer writer, a hand edit): the row
/// is refused rather than read as some default that would, say, show a public file as private.
#[derive(Debug, thiserror::Error)]
#[error("unknown {what} {value:?}")]
pub struct UnknownValue {
    pub what: &'static str,
    pub value: String,
}

/// Reads a text column as `$ty` through `$ty::parse` (and `str::parse`, for the same rule
/// elsewhere); a value it does not know is an [`UnknownValue`].
macro_rules! text_column {
    ($ty:ty, $what:literal) => {
        impl std::str::FromStr for $ty {
            type Err = $crate::column::UnknownValue;

            fn from_str(s: &str) -> Result<$ty, $crate::column::UnknownValue> {
                <$ty>::parse(s).ok_or_else(|| $crate::column::UnknownValue {
                    what: $what,
                    value: s.to_owned(),
                })
            }
        }

        #[cfg(feature = "sqlx")]
        impl sqlx::Type<sqlx::Postgres> for $ty {
            fn type_info() -> sqlx::postgres::PgTypeInfo {
                <String as sqlx::Type<sqlx::Postgres>>::type_info()
            }

            fn compatible(ty: &sqlx::postgres::PgTypeInfo) -> bool {
                <String as sqlx::Type<sqlx::Postgres>>::compatible(ty)
            }
        }

        #[cfg(feature = "sqlx")]
        impl<'r> sqlx::Decode<'r, sqlx::Postgres> for $ty {
            fn decode(value: sqlx::postgres::PgValueRef<'r>) -> Result<$ty, sqlx::error::BoxDynError> {
                Ok(<&str as sqlx::Decode<sqlx::Postgres>>::decode(value)?.parse()?)
            }
        }
    };
}
pub(crate) use text_column;

#[cfg(test)]
mod tests {
    use crate::event::EventKind;
    use crate::file::Bucket;
    use crate::job::{JobState, JobType};
    use crate::metadata::{MetadataState, Mode};
    use crate::plan::Plan;
    use crate::upload::UploadState;

    #[test]
    fn an_unknown_enum_value_is_an_error_not_a_default() {
        assert_eq!("failed".parse::<JobState>().unwrap(), JobState::Failed);
        let weird = "weird".parse::<JobState>().unwrap_err();
        assert_eq!(weird.to_string(), r#"unknown job state "weird""#);
        assert!("Private".parse::<Bucket>().is_err());
        assert!("".parse::<UploadState>().is_err());
        assert!("files".parse::<EventKind>().is_err());
        assert!("Gold".parse::<Plan>().is_err());
        assert!("readmetadata".parse::<JobType>().is_err());
        assert!("unread".parse::<MetadataState>().is_err());
        assert!("Major".parse::<Mode>().is_err());
    }
}
