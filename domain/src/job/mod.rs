//! File jobs: the types a job can be, the settings each takes with their ranges, and which
//! files each accepts. The API validates a request with these; the worker reads the same
//! settings back from the job row, so the two can never disagree about what a setting means.
//!
//! Every type is listed once, in [`job_types!`] below: its name and its settings struct, which
//! lives with its family (`av`, `sound`, `convert`, `pictures`, `pdf`, `archives`, `checksum`,
//! `reading`, `imports`, `generation`) and says there, through [`Settings`], what it takes,
//! which ranges it checks and how fast it runs. Adding a type: a struct in its family with its
//! `Settings`, a line here, and its pipeline in the worker's `perform` (the compiler points there).

mod archives;
mod av;
mod checksum;
mod convert;
mod generation;
mod imports;
mod lane;
mod pdf;
mod pictures;
mod pipeline;
mod reading;
mod schema;
mod sound;
mod state;
mod times;

use serde::{Deserialize, Serialize, de::DeserializeOwned};
use utoipa::ToSchema;

pub use self::archives::{Unzip, Zip};
pub use self::av::{
    Aspect, BurnIn, ContactSheet, Cut, Gif, Join, MAX_STILLS, Proxy, ReadMetadata, Reframe, Shrink, Stills,
    StripMetadata, VideoThumbnail,
};
pub use self::checksum::{Checksum, Checksums, DigestAlgorithm, FileDigest};
pub use self::convert::{AudioFormat, Convert, MediaFormat, VideoCodec, VideoFormat};
pub use self::generation::GenerateImage;
pub use self::imports::Import;
pub use self::lane::{FEW_FILES, Lane};
pub use self::pdf::{
    CompressPdf, ExtractPages, MakePdf, MergePdf, PageSize, PdfQuality, PdfToImages, SplitPdf,
    parse_page_list,
};
pub use self::pictures::{PictureFormat, Position, Watermark};
pub use self::pipeline::{MAX_STEPS, Pipeline, Source, Step, StepInput, StepName};
pub use self::reading::{CaptionFormat, Captions, ReadForSearch};
pub use self::schema::OptionsSchema;
use self::schema::whole_numbers;
pub use self::sound::{ExtractAudio, Loudness, Split};
pub use self::state::JobState;
pub use self::times::{Seconds, parse_clock};
use crate::file::FileKind;

/// Declares the job types: each one's name on the wire and its settings struct. `JobType`,
/// `JobSpec` and the dispatch to each struct's [`Settings`] all come from this one list.
macro_rules! job_types {
    (
        $($(#[$doc:meta])* $variant:ident($settings:ty) = $name:literal,)*
    ) => {
        /// Every job type the spec names, and the drive's own `readMetadata`, which callers
        /// cannot submit ([`JobSpec::parse`]).
        // Names on the wire are the variants' names in camelCase (`rename_all`, which the
        // OpenAPI derive reads too); `as_str` spells the same names out, and a test holds
        // the two together.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
        #[serde(rename_all = "camelCase")]
        pub enum JobType {
            $($(#[$doc])* $variant,)*
        }

        impl JobType {
            pub const ALL: &[JobType] = &[$(JobType::$variant,)*];

            pub fn as_str(self) -> &'static str {
                match self {
                    $(JobType::$variant => $name,)*
                }
            }

            pub fn parse(s: &str) -> Option<JobType> {
                match s {
                    $($name => Some(JobType::$variant),)*
                    _ => None,
                }
            }

            /// The schema of this type's `options` (its settings struct), under its name, and
            /// the schemas that one refers to: for the OpenAPI document.
            pub fn options_schema(self) -> OptionsSchema {
                match self {
                    $(JobType::$variant => OptionsSchema::of::<$settings>(),)*
                }
            }
        }

        $crate::column::text_column!(JobType, "job type");

        /// A job's settings, by type, with every default filled in: what the job row stores.
        #[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
        #[serde(tag = "jobType", content = "options", rename_all = "camelCase")]
        pub enum JobSpec {
            $($variant($settings),)*
        }

        impl JobSpec {
            pub fn job_type(&self) -> JobType {
                match self {
                    $(JobSpec::$variant(_) => JobType::$variant,)*
                }
            }

            fn settings(&self) -> &dyn Settings {
                match self {
                    $(JobSpec::$variant(settings) => settings,)*
                }
            }

            /// `options` read as `job_type`'s settings.
            fn read(job_type: JobType, options: serde_json::Value) -> Result<JobSpec, SettingsError> {
                match job_type {
                    $(JobType::$variant => read_settings(options).map(JobSpec::$variant),)*
                }
            }
        }
    };
}

job_types! {
    Cut(Cut) = "cut",
    Proxy(Proxy) = "proxy",
    Convert(Convert) = "convert",
    Shrink(Shrink) = "shrink",
    Reframe(Reframe) = "reframe",
    Gif(Gif) = "gif",
    BurnIn(BurnIn) = "burnIn",
    Join(Join) = "join",
    Stills(Stills) = "stills",
    ContactSheet(ContactSheet) = "contactSheet",
    ExtractAudio(ExtractAudio) = "extractAudio",
    Loudness(Loudness) = "loudness",
    Split(Split) = "split",
    StripMetadata(StripMetadata) = "stripMetadata",
    Watermark(Watermark) = "watermark",
    MakePdf(MakePdf) = "makePdf",
    MergePdf(MergePdf) = "mergePdf",
    SplitPdf(SplitPdf) = "splitPdf",
    ExtractPages(ExtractPages) = "extractPages",
    CompressPdf(CompressPdf) = "compressPdf",
    PdfToImages(PdfToImages) = "pdfToImages",
    Zip(Zip) = "zip",
    Unzip(Unzip) = "unzip",
    Checksum(Checksum) = "checksum",
    /// Reads files for searching inside them: moments for `/search-files`'s `query`.
    ReadForSearch(ReadForSearch) = "readForSearch",
    /// Captions from what was read of a video or audio file (readForSearch first).
    Captions(Captions) = "captions",
    /// Run by the drive itself on every new audio, video and picture file; never by a caller.
    ReadMetadata(ReadMetadata) = "readMetadata",
    /// A file fetched from a link (`/import-from-url`, not `/create-file-job`).
    Import(Import) = "import",
    /// An image drawn by a provider from a prompt (`/generate-image`, not `/create-file-job`).
    GenerateImage(GenerateImage) = "generateImage",
    /// A video's thumbnail from a frame (`/set-video-thumbnail`, not `/create-file-job`).
    VideoThumbnail(VideoThumbnail) = "videoThumbnail",
    /// A chain of jobs run as one (`/create-file-job` with `steps`).
    Pipeline(Pipeline) = "pipeline",
}

impl JobType {
    /// Why a caller cannot ask `/create-file-job` for this type, when it cannot: the drive or
    /// another route starts it.
    pub fn started_elsewhere(self) -> Option<&'static str> {
        match self {
            JobType::ReadMetadata => {
                Some("readMetadata runs by itself on every new audio, video and picture file")
            }
            JobType::Import => Some("an import is started by /import-from-url"),
            JobType::GenerateImage => Some("an image is generated by /generate-image"),
            JobType::VideoThumbnail => Some("a video's thumbnail is set by /set-video-thumbnail"),
            JobType::Pipeline => Some("a pipeline is asked for with steps, not a jobType"),
            _ => None,
        }
    }

    /// The schema of a `jobType` a caller may ask for: every type not started elsewhere.
    pub fn requestable_schema() -> utoipa::openapi::schema::Object {
        let names = JobType::ALL
            .iter()
            .filter(|t| t.started_elsewhere().is_none())
            .map(|t| t.as_str());
        utoipa::openapi::schema::ObjectBuilder::new()
            .schema_type(utoipa::openapi::schema::Type::String)
            .enum_values(Some(names))
            .build()
    }
}

/// What one job type's settings say about the job, beside the struct that holds them.
trait Settings {
    /// The kinds of file the job takes (`None`: any file).
    fn kinds(&self) -> Option<&'static [FileKind]>;

    /// Ranges serde cannot express.
    fn check(&self) -> Result<(), SettingsError> {
        Ok(())
    }

    /// How fast this farm runs it, for the dry run's estimate.
    fn rates(&self) -> Rates;

    /// How many input files it takes.
    fn input_count(&self) -> (usize, usize) {
        (1, 100)
    }

    /// Whether a file of `kind` named `name` can be an input.
    fn takes(&self, kind: FileKind, _name: &str) -> bool {
        self.takes_kind(kind)
    }

    /// Whether a file of `kind` can be an input, whatever its name: what a pipeline's step can
    /// be given by the steps before it, known by kind alone.
    fn takes_kind(&self, kind: FileKind) -> bool {
        self.kinds().is_none_or(|kinds| kinds.contains(&kind))
    }

    /// The kinds of file it makes from inputs of the kinds `taken` (by default, the same kinds:
    /// a cut of a video is a video).
    fn makes(&self, taken: &[FileKind]) -> Vec<FileKind> {
        taken.to_vec()
    }

    /// What [`Settings::takes`] wants, in words, for the 400 that refuses another file.
    fn takes_what(&self) -> String {
        match self.kinds() {
            Some(kinds) => kinds_in_words(kinds),
            None => "any files".to_string(),
        }
    }

    /// Rules across the inputs, once each is known to be one it takes.
    fn check_inputs(&self, _kinds: &[FileKind]) -> Result<(), SettingsError> {
        Ok(())
    }

    /// Whether it downloads its pictures and PDFs to work on them (limited to
    /// [`download_limit`] in all) rather than reading every input as a stream.
    fn downloads(&self) -> bool {
        true
    }

    /// Whether it works from what was said in its inputs (their speech moments), so each must
    /// have been read for searching first.
    fn reads_speech(&self) -> bool {
        false
    }
}

/// Seconds of work per file and input bytes a second: this farm's measured throughputs,
/// rounded down.
#[derive(Debug, Clone, Copy)]
struct Rates {
    per_file: f64,
    bytes_per_second: f64,
}

const MB: f64 = 1_000_000.0;

/// Pictures and PDFs one job downloads to work on may total 2 GB.
pub const DOWNLOAD_LIMIT_BYTES: i64 = 2 * 1000 * 1000 * 1000;

/// The download limit in force: `DRIVE_JOB_DOWNLOAD_LIMIT_BYTES`, default the spec's 2 GB. The
/// API refuses jobs past it and workers stop downloading at it, so both must read the same.
pub fn download_limit() -> Result<i64, crate::ConfigError> {
    crate::config::parsed_or("DRIVE_JOB_DOWNLOAD_LIMIT_BYTES", DOWNLOAD_LIMIT_BYTES)
}

/// A byte count as people read sizes: `2 GB`, `1.5 MB`, `700 bytes`.
pub fn decimal_size(bytes: i64) -> String {
    let value = bytes as f64;
    match bytes {
        b if b >= 1_000_000_000 => format!("{} GB", trimmed(value / 1e9)),
        b if b >= 1_000_000 => format!("{} MB", trimmed(value / 1e6)),
        b if b >= 1_000 => format!("{} kB", trimmed(value / 1e3)),
        b => format!("{b} bytes"),
    }
}

fn trimmed(x: f64) -> String {
    let s = format!("{x:.2}");
    s.trim_end_matches('0').trim_end_matches('.').to_string()
}

/// One job may run for two hours.
pub const TIME_LIMIT_SECONDS: u64 = 2 * 60 * 60;

fn kinds_in_words(kinds: &[FileKind]) -> String {
    let words: Vec<&str> = kinds.iter().map(|k| kind_in_words(*k)).collect();
    match words.split_last() {
        Some((last, [])) => last.to_string(),
        Some((last, rest)) => format!("{} or {last}", rest.join(", ")),
        None => "nothing".to_string(),
    }
}

fn kind_in_words(kind: FileKind) -> &'static str {
    match kind {
        FileKind::Video => "videos",
        FileKind::Audio => "audio files",
        FileKind::Image => "pictures",
        FileKind::Pdf => "PDFs",
        FileKind::Text => "text files",
        FileKind::Archive => "archives",
        FileKind::Other => "other files",
    }
}

/// A setting that is present but wrong: `field` is its path under `options`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SettingError {
    pub field: String,
    pub message: String,
}

/// Why a job's settings were refused.
#[derive(Debug)]
pub enum SettingsError {
    /// The settings object at `at` (`options`, or a pipeline's `steps[2].options`) did not
    /// parse (unknown field, wrong type, missing field).
    Shape {
        at: String,
        error: serde_path_to_error::Error<serde_json::Error>,
    },
    /// A value out of its range.
    Range(SettingError),
}

fn out_of_range(field: &str, message: impl Into<String>) -> SettingsError {
    SettingsError::Range(SettingError {
        field: field.to_string(),
        message: message.into(),
    })
}

impl JobSpec {
    /// Reads `options` (null or missing means all defaults) for an available job type.
    pub fn parse(job_type: JobType, options: serde_json::Value) -> Result<JobSpec, SettingsError> {
        let options = if options.is_null() {
            serde_json::json!({})
        } else {
            options
        };
        if let Some(why) = job_type.started_elsewhere() {
            return Err(out_of_range("jobType", why));
        }
        let spec = JobSpec::read(job_type, options)?;
        spec.settings().check()?;
        Ok(spec)
    }

    /// How many input files the job takes.
    pub fn input_count(&self) -> (usize, usize) {
        self.settings().input_count()
    }

    /// Whether a file of `kind` named `name` can be an input: a convert takes the kind its
    /// format is for, an unzip a `.zip`, other types the kinds listed for them in the spec.
    pub fn takes(&self, kind: FileKind, name: &str) -> bool {
        self.settings().takes(kind, name)
    }

    /// Whether a file of `kind` can be an input, known by its kind alone (an unzip takes
    /// archives).
    pub fn takes_kind(&self, kind: FileKind) -> bool {
        self.settings().takes_kind(kind)
    }

    /// The kinds of file the job makes from inputs of the kinds `taken`.
    pub fn makes(&self, taken: &[FileKind]) -> Vec<FileKind> {
        self.settings().makes(taken)
    }

    /// What [`JobSpec::takes`] wants, for the 400 that refuses another kind.
    pub fn takes_what(&self) -> String {
        self.settings().takes_what()
    }

    /// Rules across the inputs, once each is known to be one [`JobSpec::takes`].
    pub fn check_inputs(&self, kinds: &[FileKind]) -> Result<(), SettingsError> {
        self.settings().check_inputs(kinds)
    }

    /// Whether the job downloads an input of `kind` to work on it (pictures and PDFs, limited
    /// to [`download_limit`] in all) rather than reading it as a stream (audio and video, and
    /// every file of a checksum, zip or unzip).
    pub fn downloads(&self, kind: FileKind) -> bool {
        self.settings().downloads() && matches!(kind, FileKind::Image | FileKind::Pdf)
    }

    /// Whether the job works from what was read of its inputs' sound (captions, burned-in
    /// captions): each input must have been read (readForSearch) first.
    pub fn reads_speech(&self) -> bool {
        self.settings().reads_speech()
    }

    /// The settings as the job row keeps them (every default filled in).
    pub fn options(&self) -> serde_json::Value {
        serde_json::to_value(self)
            .ok()
            .and_then(|mut v| v.get_mut("options").map(serde_json::Value::take))
            .unwrap_or_default()
    }

    /// Reads back what [`JobSpec::options`] stored.
    pub fn from_row(job_type: JobType, options: serde_json::Value) -> Result<JobSpec, serde_json::Error> {
        serde_json::from_value(serde_json::json!({ "jobType": job_type, "options": options }))
    }

    /// Roughly how long the job should take on `bytes` of input across `files` files: the
    /// `dryRun` answer.
    pub fn estimate_seconds(&self, files: usize, bytes: i64) -> u64 {
        let rates = self.settings().rates();
        // Starting a job (a queue hop and a fresh process) costs about a second.
        (1.0 + rates.per_file * files as f64 + bytes as f64 / rates.bytes_per_second).ceil() as u64
    }
}

fn read_settings<T: DeserializeOwned>(options: serde_json::Value) -> Result<T, SettingsError> {
    serde_path_to_error::deserialize(options).map_err(|error| SettingsError::Shape {
        at: "options".to_string(),
        error,
    })
}

/// The rule of a job whose inputs are all of one kind (the first input's).
fn one_kind(kinds: &[FileKind]) -> Result<(), SettingsError> {
    match kinds.iter().position(|k| *k != kinds[0]) {
        Some(n) => Err(out_of_range(
            "fileIds",
            format!(
                "the first file makes this a job on {}, so every file must be one (file {} is not)",
                kind_in_words(kinds[0]),
                n + 1
            ),
        )),
        None => Ok(()),
    }
}

/// An output name given by the caller: a file name without the extension rules (the job adds
/// the right extension), at most 200 characters.
fn check_name(field: &str, name: Option<&str>) -> Result<(), SettingsError> {
    let Some(name) = name else { return Ok(()) };
    if name.chars().count() > 200 {
        return Err(out_of_range(field, "name is at most 200 characters"));
    }
    crate::file::check_name(name).map_err(|why| out_of_range(field, format!("name {why}")))
}

/// A line drawn on a picture or video: 1 to 200 characters, none of them control or
/// invisible characters.
fn check_text(field: &str, text: &str) -> Result<(), SettingsError> {
    let chars = text.chars().count();
    if chars == 0 || chars > 200 {
        return Err(out_of_range(field, "text is 1 to 200 characters"));
    }
    crate::input::check_chars(text, false).map_err(|why| out_of_range(field, format!("text {why}")))
}

#[cfg(test)]
mod tests;
