//! Where a page of a sorted search starts: after an offset, or right after a file of the page
//! before (`nextCursor`), which the sort's index finds however deep it is.

use chrono::{DateTime, Datelike, Utc};
use sqlx::{Postgres, QueryBuilder};

use super::{Hit, Sort};
use crate::id::FileId;

/// Where a page of a sorted search starts.
#[derive(Debug, Clone, PartialEq)]
pub enum Start {
    /// After this many files.
    Offset(i64),
    /// Right after a file of the previous page: read off the index from there, however deep.
    After(After),
}

/// A place in a sorted search: right after the file `id`, whose key in the sort is `key`.
#[derive(Debug, Clone, PartialEq)]
pub struct After {
    pub sort: Sort,
    pub key: SortKey,
    pub id: FileId,
}

/// What a sort orders by, besides the id that breaks ties.
#[derive(Debug, Clone, PartialEq)]
pub enum SortKey {
    Time(DateTime<Utc>),
    Size(i64),
    /// The file's name as stored: the database lowers it as its sort does.
    Name(String),
}

impl After {
    /// The place right after `hit` in `sort`.
    pub fn hit(hit: &Hit, sort: Sort) -> After {
        let key = match sort {
            Sort::Newest | Sort::Oldest => SortKey::Time(hit.created_at),
            Sort::Largest | Sort::Smallest => SortKey::Size(hit.file_size),
            Sort::Name => SortKey::Name(hit.file_name.clone()),
        };
        After {
            sort,
            key,
            id: hit.id,
        }
    }

    /// The place as clients see it (`nextCursor`): plain text, its sort's letter, the id, then
    /// the key (last, as a name may hold any character).
    pub fn encode(&self) -> String {
        let letter = match self.sort {
            Sort::Newest => 'n',
            Sort::Oldest => 'o',
            Sort::Largest => 'l',
            Sort::Smallest => 's',
            Sort::Name => 'a',
        };
        let key = match &self.key {
            SortKey::Time(t) => t.timestamp_micros().to_string(),
            SortKey::Size(n) => n.to_string(),
            SortKey::Name(name) => name.clone(),
        };
        format!("{letter}{}.{key}", self.id)
    }

    pub fn decode(text: &str) -> Option<After> {
        let mut chars = text.chars();
        let sort = match chars.next()? {
            'n' => Sort::Newest,
            'o' => Sort::Oldest,
            'l' => Sort::Largest,
            's' => Sort::Smallest,
            'a' => Sort::Name,
            _ => return None,
        };
        let (id, key) = chars.as_str().split_once('.')?;
        let key = match sort {
            Sort::Newest | Sort::Oldest => {
                // Years PostgreSQL's timestamps hold too (chrono's reach further back): any
                // upload time is among them, and a forged cursor beyond them is no cursor.
                let time = DateTime::from_timestamp_micros(key.parse().ok()?)?;
                if !(1..=9999).contains(&time.year()) {
                    return None;
                }
                SortKey::Time(time)
            }
            Sort::Largest | Sort::Smallest => SortKey::Size(key.parse().ok()?),
            Sort::Name if key.is_empty() => return None,
            Sort::Name => SortKey::Name(key.to_string()),
        };
        Some(After {
            sort,
            key,
            id: id.parse().ok()?,
        })
    }

    /// ` and` the condition of the files after this place. Its first half bounds the key alone,
    /// which the sort's index takes; the second passes over the ties up to the id.
    pub(super) fn push_condition(&self, q: &mut QueryBuilder<'_, Postgres>) {
        let (column, later) = match self.sort {
            Sort::Newest => ("f.created_at", "<"),
            Sort::Oldest => ("f.created_at", ">"),
            Sort::Largest => ("f.file_size", "<"),
            Sort::Smallest => ("f.file_size", ">"),
            Sort::Name => ("lower(f.file_name)", ">"),
        };
        // Newest breaks ties by the id downwards (the library's index), the others upwards.
        let later_id = if self.sort == Sort::Newest { "<" } else { ">" };
        let push_key = |q: &mut QueryBuilder<'_, Postgres>| match &self.key {
            SortKey::Time(t) => {
                q.push_bind(*t);
            }
            SortKey::Size(n) => {
                q.push_bind(*n);
            }
            SortKey::Name(name) => {
                q.push("lower(").push_bind(name.clone()).push(")");
            }
        };
        q.push(format!(" and {column} {later}= "));
        push_key(q);
        q.push(format!(" and ({column} {later} "));
        push_key(q);
        q.push(format!(" or f.id {later_id} "))
            .push_bind(self.id)
            .push(")");
    }
}
