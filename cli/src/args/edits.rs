//! The arguments of `drive folder`.

use clap::Subcommand;

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
