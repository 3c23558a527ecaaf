//! `drive search`'s arguments: every filter of `/search-files`, and `--query` inside files.

use drive_client::search::{SearchQuery, Within};

#[derive(clap::Args)]
pub struct SearchArgs {
    /// What is said, seen or written inside files (at most 500 characters)
    #[arg(long)]
    query: Option<String>,
    /// Words in names, descriptions, tags, titles, artists, albums, genres (also finds folders)
    #[arg(long)]
    text: Option<String>,
    /// Only files of exactly this name
    #[arg(long)]
    name: Option<String>,
    /// Kinds, comma-separated: Video, Audio, Image, Pdf, Text, Archive, Other
    #[arg(long, value_delimiter = ',')]
    types: Vec<String>,
    /// Tags every file must carry, comma-separated
    #[arg(long, value_delimiter = ',')]
    tags: Vec<String>,
    /// A folder (and the folders inside it), like /Photos
    #[arg(long)]
    folder: Option<String>,
    /// Only public files
    #[arg(long, conflicts_with = "private")]
    public: bool,
    /// Only private files
    #[arg(long)]
    private: bool,
    #[arg(long, value_name = "TIME")]
    uploaded_after: Option<String>,
    #[arg(long, value_name = "TIME")]
    uploaded_before: Option<String>,
    /// When a photo was taken
    #[arg(long, value_name = "TIME")]
    taken_after: Option<String>,
    #[arg(long, value_name = "TIME")]
    taken_before: Option<String>,
    /// Seconds
    #[arg(long)]
    min_duration: Option<f64>,
    #[arg(long)]
    max_duration: Option<f64>,
    /// Bytes
    #[arg(long)]
    min_size: Option<i64>,
    #[arg(long)]
    max_size: Option<i64>,
    /// Beats a minute
    #[arg(long)]
    min_tempo: Option<f64>,
    #[arg(long)]
    max_tempo: Option<f64>,
    /// A musical key, like "F# minor"
    #[arg(long)]
    key: Option<String>,
    /// Where a photo was taken: south,west,north,east in degrees
    #[arg(long, value_delimiter = ',', num_args = 4, value_names = ["SOUTH", "WEST", "NORTH", "EAST"])]
    within: Vec<f64>,
    /// newest, oldest, largest, smallest or name [default: newest]
    #[arg(long)]
    sort: Option<String>,
    /// Files others share with you: include (beside yours) or only
    #[arg(long)]
    shared: Option<String>,
    /// Files (1 to 200; moments up to 50 with --query)
    #[arg(long)]
    limit: Option<u32>,
    /// Files to pass over (the page's `more: --offset N`)
    #[arg(long, conflicts_with = "cursor")]
    offset: Option<u32>,
    /// The page after another: its `more: --cursor …` (cheaper than --offset at depth)
    #[arg(long)]
    cursor: Option<String>,
}

impl SearchArgs {
    /// The `/search-files` body: only the filters given.
    pub fn query(&self) -> SearchQuery {
        let listed = |items: &[String]| (!items.is_empty()).then(|| items.to_vec());
        let within = match self.within[..] {
            [south, west, north, east] => Some(Within {
                south,
                west,
                north,
                east,
            }),
            _ => None,
        };
        SearchQuery {
            query: self.query.clone(),
            text: self.text.clone(),
            file_name: self.name.clone(),
            file_ids: None,
            types: listed(&self.types),
            tags: listed(&self.tags),
            folder: self.folder.clone(),
            // --public wins over --private; neither, either access.
            is_public: (self.public || self.private).then_some(self.public),
            uploaded_after: self.uploaded_after.clone(),
            uploaded_before: self.uploaded_before.clone(),
            taken_after: self.taken_after.clone(),
            taken_before: self.taken_before.clone(),
            min_duration: self.min_duration,
            max_duration: self.max_duration,
            min_size: self.min_size,
            max_size: self.max_size,
            min_tempo: self.min_tempo,
            max_tempo: self.max_tempo,
            key: self.key.clone(),
            within,
            sort: self.sort.clone(),
            shared: self.shared.clone(),
            limit: self.limit,
            offset: self.offset,
            cursor: self.cursor.clone(),
        }
    }
}
