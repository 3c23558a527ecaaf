//! What an API token may do. A token is given one or more scopes (all three unless it was made
//! with fewer, or an OAuth client was granted fewer); each route of the file service needs one
//! (`drive-api`'s `auth::needed_scopes`).

use serde::{Deserialize, Serialize};

#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, utoipa::ToSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum Scope {
    /// List, search and read files, hand out links, read events and views.
    Read,
    /// Add and change files: uploads, imports, moves, tags, collections, jobs, images,
    /// requests, reviews, webhooks.
    Write,
    /// Trash, restore and delete files.
    Delete,
}

impl Scope {
    pub const ALL: [Scope; 3] = [Scope::Read, Scope::Write, Scope::Delete];

    pub fn as_str(self) -> &'static str {
        match self {
            Scope::Read => "read",
            Scope::Write => "write",
            Scope::Delete => "delete",
        }
    }

    pub fn parse(s: &str) -> Option<Scope> {
        Scope::ALL.into_iter().find(|scope| scope.as_str() == s)
    }

    /// What the consent page and the metadata documents say it allows.
    pub fn describe(self) -> &'static str {
        match self {
            Scope::Read => "See your files, search them, read what is in them and hand out links",
            Scope::Write => "Add and change files: uploads, moves, tags, jobs, images, requests and reviews",
            Scope::Delete => "Trash, restore and delete files",
        }
    }

    /// A space-separated list (OAuth's `scope`), each scope once; `None` when a word is not a
    /// scope. Answered in [`Scope::ALL`]'s order.
    pub fn parse_list(words: &str) -> Option<Vec<Scope>> {
        let asked = words
            .split(' ')
            .filter(|w| !w.is_empty())
            .map(Scope::parse)
            .collect::<Option<Vec<Scope>>>()?;
        Some(Scope::ALL.into_iter().filter(|s| asked.contains(s)).collect())
    }

    /// The list as OAuth writes it: `read write`.
    pub fn join(scopes: &[Scope]) -> String {
        scopes.iter().map(|s| s.as_str()).collect::<Vec<_>>().join(" ")
    }

    /// The column's text array as scopes (unknown words, which the column's check keeps out,
    /// are dropped).
    pub fn from_column(column: &[String]) -> Vec<Scope> {
        Scope::ALL
            .into_iter()
            .filter(|s| column.iter().any(|c| c == s.as_str()))
            .collect()
    }

    pub fn to_column(scopes: &[Scope]) -> Vec<String> {
        scopes.iter().map(|s| s.as_str().to_string()).collect()
    }
}

#[cfg(test)]
mod unit {
    use super::Scope;

    #[test]
    fn lists_parse_in_order_once_each_and_refuse_unknown_words() {
        assert_eq!(
            Scope::parse_list("delete read  read"),
            Some(vec![Scope::Read, Scope::Delete])
        );
        assert_eq!(Scope::parse_list(""), Some(vec![]));
        assert_eq!(Scope::parse_list("read admin"), None);
        assert_eq!(Scope::parse_list("READ"), None);
        assert_eq!(Scope::join(&Scope::ALL), "read write delete");
    }
}
