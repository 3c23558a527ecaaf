//! Database queries, one module per table family. SQL is written out in full so it can be
//! read next to the migrations; rows come back as plain structs.

pub mod agent_push;
pub mod agent_tasks;
pub mod agent_waits;
pub mod collections;
pub mod digests;
pub mod events;
pub mod files;
pub mod folders;
pub mod forms;
pub mod generations;
pub mod jobs;
pub mod locks;
pub mod moments;
pub mod oauth;
pub mod requests;
pub mod reservations;
pub mod reviews;
pub mod search;
pub mod subscriptions;
pub mod tags;
pub mod uploads;
pub mod users;
pub mod views;

pub use sqlx::PgPool;

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
            type Err = $crate::db::UnknownValue;

            fn from_str(s: &str) -> Result<$ty, $crate::db::UnknownValue> {
                <$ty>::parse(s).ok_or_else(|| $crate::db::UnknownValue {
                    what: $what,
                    value: s.to_owned(),
                })
            }
        }

        impl sqlx::Type<sqlx::Postgres> for $ty {
            fn type_info() -> sqlx::postgres::PgTypeInfo {
                <String as sqlx::Type<sqlx::Postgres>>::type_info()
            }

            fn compatible(ty: &sqlx::postgres::PgTypeInfo) -> bool {
                <String as sqlx::Type<sqlx::Postgres>>::compatible(ty)
            }
        }

        impl<'r> sqlx::Decode<'r, sqlx::Postgres> for $ty {
            fn decode(value: sqlx::postgres::PgValueRef<'r>) -> Result<$ty, sqlx::error::BoxDynError> {
                Ok(<&str as sqlx::Decode<sqlx::Postgres>>::decode(value)?.parse()?)
            }
        }
    };
}
pub(crate) use text_column;

/// Connects to PostgreSQL with a pool sized for an API process.
pub async fn connect(url: &str) -> Result<PgPool, sqlx::Error> {
    sqlx::postgres::PgPoolOptions::new()
        .max_connections(20)
        .acquire_timeout(std::time::Duration::from_secs(5))
        .connect(url)
        .await
}

/// The migrations in `migrations/`, embedded at build time.
pub static MIGRATOR: sqlx::migrate::Migrator = sqlx::migrate!("../migrations");

#[cfg(test)]
mod tests {
    use crate::db::events::EventKind;
    use crate::db::jobs::JobState;
    use crate::db::uploads::UploadState;
    use crate::job::JobType;
    use crate::metadata::{MetadataState, Mode};
    use crate::plan::Plan;
    use crate::storage::Bucket;

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
