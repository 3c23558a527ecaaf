//! The arguments of `drive jobs`, `drive templates` and `drive rules`.

use clap::Subcommand;
use uuid::Uuid;

// One command is parsed once a run: the size of its largest variant costs nothing.
#[allow(clippy::large_enum_variant)]
#[derive(Subcommand)]
pub enum JobsCommand {
    /// Start a job on files (in order); prints it, or with --wait follows it to its end
    Create {
        /// The job type, like proxy, convert, zip, checksum (docs/behaviour.md lists each type's
        /// settings); with --steps, the first file instead
        #[arg(value_name = "TYPE")]
        job_type: String,
        /// The files it works on, in order
        file_ids: Vec<Uuid>,
        /// A JSON file of a pipeline's steps instead of a type (every argument is then a file)
        #[arg(long, value_name = "FILE.json", conflicts_with_all = ["settings", "options"])]
        steps: Option<std::path::PathBuf>,
        /// One of your templates instead of a type (every argument is then a file)
        #[arg(long, value_name = "ID", conflicts_with_all = ["settings", "options", "steps"])]
        template: Option<Uuid>,
        /// The same key within 24 hours answers the same job instead of starting another
        #[arg(long)]
        idempotency_key: Option<String>,
        /// An https link the job's end is POSTed to, signed (the secret is printed)
        #[arg(long)]
        notify_url: Option<String>,
        /// A JSON object echoed with that notice
        #[arg(long, requires = "notify_url")]
        client_metadata: Option<String>,
        /// A setting, name=value (repeatable): --set height=720 --set format=webm
        #[arg(long = "set", value_name = "NAME=VALUE")]
        settings: Vec<String>,
        /// All the settings as one JSON object (--set values go over it)
        #[arg(long)]
        options: Option<String>,
        /// Where results land, like /Exports (default: beside the first file)
        #[arg(long)]
        folder: Option<String>,
        /// Check the settings and print the estimate without starting anything
        #[arg(long, conflicts_with = "wait")]
        dry_run: bool,
        /// Follow the job to its end with a progress bar, then list what it made
        #[arg(long)]
        wait: bool,
    },
    /// Your jobs, newest first, and this month's job minutes
    List {
        /// Jobs to show, 1 to 100 [default: 25]
        #[arg(long)]
        limit: Option<u32>,
    },
    /// Stop a job (a queued one at once, a running one within a heartbeat)
    Cancel { id: Uuid },
    /// Try a failed or stopped job again, going on from what it made
    Retry {
        id: Uuid,
        /// Follow it to its end with a progress bar, then list what it made
        #[arg(long)]
        wait: bool,
    },
}

#[derive(Subcommand)]
pub enum TemplatesCommand {
    /// Keep a pipeline's steps (a JSON file, as drive jobs create --steps takes) under a name
    Create {
        name: String,
        #[arg(long, value_name = "FILE.json")]
        steps: std::path::PathBuf,
    },
    /// Your templates, by name
    List,
    /// Remove a template
    Remove { id: Uuid },
}

#[derive(Subcommand)]
pub enum RulesCommand {
    /// Run a job on every file that lands in a folder: uploaded there, sent to a request,
    /// imported, made by a job or moved in (results of a rule's job fire no rule)
    Add {
        /// The folder watched, like /Inbox (made when missing)
        folder: String,
        /// The job type (docs/behaviour.md lists each type's settings)
        #[arg(long = "type", value_name = "TYPE", required_unless_present_any = ["steps", "template"],
              conflicts_with_all = ["steps", "template"])]
        job_type: Option<String>,
        /// A setting, name=value (repeatable)
        #[arg(long = "set", value_name = "NAME=VALUE", requires = "job_type")]
        settings: Vec<String>,
        /// All the settings as one JSON object (--set values go over it)
        #[arg(long, requires = "job_type")]
        options: Option<String>,
        /// A JSON file of a pipeline's steps instead of a type
        #[arg(long, value_name = "FILE.json", conflicts_with = "template")]
        steps: Option<std::path::PathBuf>,
        /// One of your templates instead of a type
        #[arg(long, value_name = "ID")]
        template: Option<Uuid>,
        /// The id of a folder of yours for the results (default: beside each file)
        #[arg(long, value_name = "FOLDER_ID")]
        results_folder: Option<Uuid>,
        /// Also run on the files already there, oldest first, within this many minutes of
        /// estimated job time
        #[arg(long, value_name = "MINUTES")]
        backfill: Option<u32>,
        /// Check the rule and print what a backfill would take, making nothing
        #[arg(long)]
        dry_run: bool,
    },
    /// Your folder rules, oldest first
    List,
    /// Stop a rule firing until it is resumed
    Pause { id: Uuid },
    /// Let a paused rule fire again
    Resume { id: Uuid },
    /// Remove a rule (the jobs it started go on)
    Remove { id: Uuid },
}
