//! The ids of the drive's records, one type each, so a file id can never be passed where a
//! folder id is expected: a swapped argument is a compile error, not a query that finds
//! nothing. On the wire and in the database each is its uuid, unchanged.

use uuid::Uuid;

macro_rules! ids {
    ($($(#[$doc:meta])* $name:ident;)*) => {$(
        $(#[$doc])*
        #[derive(
            Debug,
            Clone,
            Copy,
            PartialEq,
            Eq,
            Hash,
            PartialOrd,
            Ord,
            serde::Serialize,
            serde::Deserialize,
            utoipa::ToSchema,
        )]
        #[serde(transparent)]
        #[cfg_attr(feature = "sqlx", derive(sqlx::Type), sqlx(transparent))]
        #[schema(value_type = String, format = Uuid)]
        pub struct $name(Uuid);

        impl $name {
            /// A fresh id for a new record.
            pub fn random() -> $name {
                $name(Uuid::new_v4())
            }

            /// The bare uuid, where a column is not one kind of record (a view's viewer, nil
            /// for anyone).
            pub fn as_uuid(self) -> Uuid {
                self.0
            }
        }

        /// An event's subject is whichever record it is about.
        impl From<$name> for Uuid {
            fn from(id: $name) -> Uuid {
                id.0
            }
        }

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                self.0.fmt(f)
            }
        }

        impl std::str::FromStr for $name {
            type Err = uuid::Error;

            fn from_str(s: &str) -> Result<$name, uuid::Error> {
                s.parse().map($name)
            }
        }
    )*};
}

ids! {
    /// An account.
    UserId;
    /// A recorded file (derivatives included).
    FileId;
    FolderId;
    TagId;
    /// A playlist or a gallery (one table, a kind column).
    CollectionId;
    JobId;
    /// A multipart upload.
    UploadId;
    /// An API token (not a session).
    TokenId;
    /// An entry of the drive event log.
    EventId;
    /// A file request: a link anyone can send files to.
    RequestId;
    /// One sender's visit to a file request.
    DropId;
    /// A file a sender announced to a request, uploaded or not yet.
    ArrivalId;
    /// A review: a link to watch a video or track and leave notes.
    ReviewId;
    /// A note on a review, or a reply to one.
    NoteId;
    /// An image generated from a prompt.
    GenerationId;
    /// An account's drive-event webhook.
    SubscriptionId;
    /// A task of the agent interface.
    TaskId;
    /// A conversation of the agent interface: the tasks sharing it.
    ContextId;
    /// An OAuth client (an agent or tool client that registered itself).
    ClientId;
    /// A pipeline kept under a name, to run on files (`/create-job-template`).
    TemplateId;
    /// A folder rule: a job run on every file that lands in a folder.
    RuleId;
    /// A file or folder shared with one other account.
    ShareId;
}
