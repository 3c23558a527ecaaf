//! The arguments of `drive folder`, `drive share`, `drive unshare` and `drive sign-ins`.

use clap::{Args, Subcommand};
use uuid::Uuid;

#[derive(Subcommand)]
pub enum FolderCommand {
    /// Move or rename a folder, with everything in it: `drive folder mv /Old /New/Name`
    Mv {
        /// The folder, like /Clients/Acme
        from: String,
        /// Its new path (made on the way)
        to: String,
    },
    /// Delete a folder and those inside it; their files go to the trash and, restored, come back
    /// to where they were
    Rm {
        /// The folder, like /Clients/Acme
        path: String,
    },
}

#[derive(Args)]
pub struct ShareArgs {
    /// The files' ids (or --folder)
    #[arg(value_name = "ID", required_unless_present = "folder")]
    pub ids: Vec<Uuid>,
    /// A folder, like /Photos/2026 (instead of ids)
    #[arg(long, conflicts_with = "ids")]
    pub folder: Option<String>,
    /// Handles, comma-separated (1 to 50; unshare: leave out for everyone)
    #[arg(long = "with", value_delimiter = ',')]
    pub handles: Vec<String>,
}

#[derive(Args)]
pub struct SignInsArgs {
    /// End this sign-in (its id from the list)
    #[arg(long, conflicts_with = "end_all")]
    pub end: Option<Uuid>,
    /// End every one: sign out everywhere
    #[arg(long)]
    pub end_all: bool,
}
