//! File jobs: the types a job can be, the settings each takes with their ranges, and which
//! files each accepts. The API validates a request with these; the worker reads the same
//! settings back from the job row, so the two can never disagree about what a setting means.

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use crate::file::FileKind;

/// Every job type the spec names. Those whose pipelines have not landed yet are refused at
/// creation with a 400 saying so ([`JobType::is_available`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub enum JobType {
    Cut,
    Proxy,
    Convert,
    Shrink,
    Reframe,
    Gif,
    BurnIn,
    Join,
    Stills,
    ContactSheet,
    ExtractAudio,
    Loudness,
    Split,
    StripMetadata,
    Watermark,
    MakePdf,
    MergePdf,
    SplitPdf,
    ExtractPages,
    CompressPdf,
    PdfToImages,
    Zip,
    Unzip,
    Captions,
    Checksum,
    /// Run by the drive itself on every new audio, video and picture file; never by a caller.
    ReadMetadata,
}

impl JobType {
    pub fn as_str(self) -> &'static str {
        match self {
            JobType::Cut => "cut",
            JobType::Proxy => "proxy",
            JobType::Convert => "convert",
            JobType::Shrink => "shrink",
            JobType::Reframe => "reframe",
            JobType::Gif => "gif",
            JobType::BurnIn => "burnIn",
            JobType::Join => "join",
            JobType::Stills => "stills",
            JobType::ContactSheet => "contactSheet",
            JobType::ExtractAudio => "extractAudio",
            JobType::Loudness => "loudness",
            JobType::Split => "split",
            JobType::StripMetadata => "stripMetadata",
            JobType::Watermark => "watermark",
            JobType::MakePdf => "makePdf",
            JobType::MergePdf => "mergePdf",
            JobType::SplitPdf => "splitPdf",
            JobType::ExtractPages => "extractPages",
            JobType::CompressPdf => "compressPdf",
            JobType::PdfToImages => "pdfToImages",
            JobType::Zip => "zip",
            JobType::Unzip => "unzip",
            JobType::Captions => "captions",
            JobType::Checksum => "checksum",
            JobType::ReadMetadata => "readMetadata",
        }
    }

    /// Whether this farm runs the type yet: audio, video and captions come with their own
    /// pipelines.
    pub fn is_available(self) -> bool {
        // Captions come with content reading, in their own issue.
        !matches!(self, JobType::Captions | JobType::ReadMetadata)
    }

    /// How many input files the type takes.
    pub fn input_count(self) -> (usize, usize) {
        match self {
            JobType::MergePdf | JobType::Join => (2, 50),
            JobType::Unzip | JobType::SplitPdf | JobType::ExtractPages | JobType::PdfToImages => (1, 1),
            JobType::Zip => (1, 1000),
            _ => (1, 100),
        }
    }

    /// The kinds of file the type takes (`None`: any file); convert narrows it further by its
    /// format ([`JobSpec::takes`]).
    fn kinds(self) -> Option<&'static [FileKind]> {
        use FileKind::{Audio, Image, Pdf, Video};
        Some(match self {
            JobType::Proxy
            | JobType::Shrink
            | JobType::Reframe
            | JobType::Gif
            | JobType::BurnIn
            | JobType::Stills
            | JobType::ExtractAudio => &[Video],
            JobType::Split => &[Audio],
            JobType::Cut | JobType::Join | JobType::Loudness | JobType::Captions => &[Video, Audio],
            JobType::ContactSheet => &[Video, Image],
            JobType::StripMetadata | JobType::Convert => &[Image, Video, Audio],
            JobType::Watermark | JobType::MakePdf => &[Image],
            JobType::MergePdf
            | JobType::SplitPdf
            | JobType::ExtractPages
            | JobType::CompressPdf
            | JobType::PdfToImages => &[Pdf],
            JobType::ReadMetadata => &[Video, Audio, Image],
            JobType::Unzip | JobType::Zip | JobType::Checksum => return None,
        })
    }

    /// Whether the job downloads an input of `kind` to work on it (pictures and PDFs, limited
    /// to [`download_limit`] in all) rather than reading it as a stream (audio and video, and
    /// every file of a checksum, zip or unzip).
    pub fn downloads(self, kind: FileKind) -> bool {
        !matches!(self, JobType::Checksum | JobType::Zip | JobType::Unzip)
            && matches!(kind, FileKind::Image | FileKind::Pdf)
    }
}

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

/// A job's settings, by type, with every default filled in: what the job row stores.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "jobType", content = "options", rename_all = "camelCase")]
pub enum JobSpec {
    Cut(Cut),
    Proxy(Proxy),
    Shrink(Shrink),
    Reframe(Reframe),
    Gif(Gif),
    BurnIn(BurnIn),
    Join(Join),
    Stills(Stills),
    ContactSheet(ContactSheet),
    ExtractAudio(ExtractAudio),
    Loudness(Loudness),
    Split(Split),
    Checksum(Checksum),
    ReadMetadata(NoSettings),
    Zip(Zip),
    Unzip(NoSettings),
    Convert(Convert),
    Watermark(Watermark),
    StripMetadata(NoSettings),
    MakePdf(MakePdf),
    MergePdf(MergePdf),
    SplitPdf(SplitPdf),
    ExtractPages(ExtractPages),
    CompressPdf(CompressPdf),
    PdfToImages(PdfToImages),
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
    /// The settings object did not parse (unknown field, wrong type, missing field).
    Shape(serde_path_to_error::Error<serde_json::Error>),
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
        let spec = match job_type {
            JobType::Cut => JobSpec::Cut(settings(options)?),
            JobType::Proxy => JobSpec::Proxy(settings(options)?),
            JobType::Shrink => JobSpec::Shrink(settings(options)?),
            JobType::Reframe => JobSpec::Reframe(settings(options)?),
            JobType::Gif => JobSpec::Gif(settings(options)?),
            JobType::BurnIn => JobSpec::BurnIn(settings(options)?),
            JobType::Join => JobSpec::Join(settings(options)?),
            JobType::Stills => JobSpec::Stills(settings(options)?),
            JobType::ContactSheet => JobSpec::ContactSheet(settings(options)?),
            JobType::ExtractAudio => JobSpec::ExtractAudio(settings(options)?),
            JobType::Loudness => JobSpec::Loudness(settings(options)?),
            JobType::Split => JobSpec::Split(settings(options)?),
            JobType::Checksum => JobSpec::Checksum(settings(options)?),
            JobType::Zip => JobSpec::Zip(settings(options)?),
            JobType::Unzip => JobSpec::Unzip(settings(options)?),
            JobType::Convert => JobSpec::Convert(settings(options)?),
            JobType::Watermark => JobSpec::Watermark(settings(options)?),
            JobType::StripMetadata => JobSpec::StripMetadata(settings(options)?),
            JobType::MakePdf => JobSpec::MakePdf(settings(options)?),
            JobType::MergePdf => JobSpec::MergePdf(settings(options)?),
            JobType::SplitPdf => JobSpec::SplitPdf(settings(options)?),
            JobType::ExtractPages => JobSpec::ExtractPages(settings(options)?),
            JobType::CompressPdf => JobSpec::CompressPdf(settings(options)?),
            JobType::PdfToImages => JobSpec::PdfToImages(settings(options)?),
            JobType::Captions => {
                return Err(out_of_range(
                    "jobType",
                    "captions jobs are not available yet: they come with reading what is said in a file",
                ));
            }
            JobType::ReadMetadata => {
                return Err(out_of_range(
                    "jobType",
                    "readMetadata runs by itself on every new audio, video and picture file",
                ));
            }
        };
        spec.check()?;
        Ok(spec)
    }

    pub fn job_type(&self) -> JobType {
        match self {
            JobSpec::Cut(_) => JobType::Cut,
            JobSpec::Proxy(_) => JobType::Proxy,
            JobSpec::Shrink(_) => JobType::Shrink,
            JobSpec::Reframe(_) => JobType::Reframe,
            JobSpec::Gif(_) => JobType::Gif,
            JobSpec::BurnIn(_) => JobType::BurnIn,
            JobSpec::Join(_) => JobType::Join,
            JobSpec::Stills(_) => JobType::Stills,
            JobSpec::ContactSheet(_) => JobType::ContactSheet,
            JobSpec::ExtractAudio(_) => JobType::ExtractAudio,
            JobSpec::Loudness(_) => JobType::Loudness,
            JobSpec::Split(_) => JobType::Split,
            JobSpec::Checksum(_) => JobType::Checksum,
            JobSpec::ReadMetadata(_) => JobType::ReadMetadata,
            JobSpec::Zip(_) => JobType::Zip,
            JobSpec::Unzip(_) => JobType::Unzip,
            JobSpec::Convert(_) => JobType::Convert,
            JobSpec::Watermark(_) => JobType::Watermark,
            JobSpec::StripMetadata(_) => JobType::StripMetadata,
            JobSpec::MakePdf(_) => JobType::MakePdf,
            JobSpec::MergePdf(_) => JobType::MergePdf,
            JobSpec::SplitPdf(_) => JobType::SplitPdf,
            JobSpec::ExtractPages(_) => JobType::ExtractPages,
            JobSpec::CompressPdf(_) => JobType::CompressPdf,
            JobSpec::PdfToImages(_) => JobType::PdfToImages,
        }
    }

    /// Whether a file of `kind` named `name` can be an input: a convert takes the kind its
    /// format is for, an unzip a `.zip`, other types the kinds listed for them in the spec.
    pub fn takes(&self, kind: FileKind, name: &str) -> bool {
        match self {
            JobSpec::Convert(c) => kind == c.format.kind(),
            JobSpec::Unzip(_) => name.to_ascii_lowercase().ends_with(".zip"),
            other => other.job_type().kinds().is_none_or(|kinds| kinds.contains(&kind)),
        }
    }

    /// What [`JobSpec::takes`] wants, for the 400 that refuses another kind.
    pub fn takes_what(&self) -> String {
        let kinds: &[FileKind] = match self {
            JobSpec::Convert(c) => &[c.format.kind()],
            JobSpec::Unzip(_) => return "a .zip file".to_string(),
            other => match other.job_type().kinds() {
                Some(kinds) => kinds,
                None => return "any files".to_string(),
            },
        };
        let words: Vec<&str> = kinds.iter().map(|k| kind_in_words(*k)).collect();
        match words.split_last() {
            Some((last, [])) => last.to_string(),
            Some((last, rest)) => format!("{} or {last}", rest.join(", ")),
            None => "nothing".to_string(),
        }
    }

    /// Rules across the inputs, once each is known to be one [`JobSpec::takes`]: a join, a
    /// contact sheet or a strip takes one kind (the first input's), and only audio joins have
    /// a format.
    pub fn check_inputs(&self, kinds: &[FileKind]) -> Result<(), SettingsError> {
        if let JobSpec::Join(_) | JobSpec::ContactSheet(_) | JobSpec::StripMetadata(_) = self
            && let Some(n) = kinds.iter().position(|k| *k != kinds[0])
        {
            return Err(out_of_range(
                "fileIds",
                format!(
                    "the first file makes this a job on {}, so every file must be one (file {} is not)",
                    kind_in_words(kinds[0]),
                    n + 1
                ),
            ));
        }
        if let JobSpec::Join(Join { format: Some(_) }) = self
            && kinds.first() == Some(&FileKind::Video)
        {
            return Err(out_of_range(
                "options.format",
                "format is for joining audio; videos join into an mp4",
            ));
        }
        Ok(())
    }

    /// The settings as the job row keeps them (every default filled in).
    pub fn options(&self) -> serde_json::Value {
        serde_json::to_value(self)
            .ok()
            .and_then(|mut v| v.get_mut("options").map(serde_json::Value::take))
            .unwrap_or_default()
    }

    /// Reads back what [`JobSpec::options`] stored.
    pub fn from_row(job_type: &str, options: serde_json::Value) -> Result<JobSpec, serde_json::Error> {
        serde_json::from_value(serde_json::json!({ "jobType": job_type, "options": options }))
    }

    /// Ranges serde cannot express.
    fn check(&self) -> Result<(), SettingsError> {
        match self {
            JobSpec::Zip(z) => check_name("options.name", z.name.as_deref()),
            JobSpec::MakePdf(m) => check_name("options.name", m.name.as_deref()),
            JobSpec::MergePdf(m) => check_name("options.name", m.name.as_deref()),
            JobSpec::Convert(c) => match (c.max_edge, c.codec) {
                (Some(_), _) if c.format.picture().is_none() => {
                    Err(out_of_range("options.maxEdge", "maxEdge is for pictures"))
                }
                (Some(edge), _) if !(16..=20_000).contains(&edge) => {
                    Err(out_of_range("options.maxEdge", "maxEdge is 16 to 20000 pixels"))
                }
                (_, Some(_)) if !matches!(c.format, MediaFormat::Mp4 | MediaFormat::Mov) => Err(
                    out_of_range("options.codec", "codec is for mp4 and mov (webm is always VP9)"),
                ),
                _ => Ok(()),
            },
            JobSpec::Cut(c) => {
                if let Some(end) = c.end
                    && end <= c.start
                {
                    return Err(out_of_range("options.end", "end comes after start"));
                }
                check_fade("options.fadeIn", c.fade_in)?;
                check_fade("options.fadeOut", c.fade_out)
            }
            JobSpec::Proxy(p) if p.height != 720 && p.height != 1080 => {
                Err(out_of_range("options.height", "height is 720 or 1080"))
            }
            JobSpec::Shrink(s)
                if !(s.target_mb.is_finite() && (0.1..=1_000_000.0).contains(&s.target_mb)) =>
            {
                Err(out_of_range("options.targetMB", "targetMB is 0.1 to 1000000"))
            }
            JobSpec::Reframe(r) => match r.rotate {
                Some(90 | 180 | 270) => Ok(()),
                Some(_) => Err(out_of_range("options.rotate", "rotate is 90, 180 or 270")),
                None if r.aspect.is_none() => Err(out_of_range(
                    "options.aspect",
                    "give an aspect (9:16, 1:1, 4:5, 16:9), a rotation or both",
                )),
                None => Ok(()),
            },
            JobSpec::Gif(g) => {
                if !(g.length.0 > 0.0 && g.length.0 <= 15.0) {
                    return Err(out_of_range("options.length", "length is up to 15 seconds"));
                }
                if !(120..=960).contains(&g.width) {
                    return Err(out_of_range("options.width", "width is 120 to 960 pixels"));
                }
                if !(5..=24).contains(&g.fps) {
                    return Err(out_of_range("options.fps", "fps is 5 to 24"));
                }
                Ok(())
            }
            JobSpec::BurnIn(b) => {
                if b.captions {
                    return Err(out_of_range(
                        "options.captions",
                        "captions are not available yet: they come with reading what is said in a file",
                    ));
                }
                match &b.text {
                    Some(text) => check_text("options.text", text),
                    None if !b.timecode => Err(out_of_range("options.text", "give text, timecode or both")),
                    None => Ok(()),
                }
            }
            JobSpec::Join(Join {
                format: Some(AudioFormat::Ogg),
            })
            | JobSpec::ExtractAudio(ExtractAudio {
                format: AudioFormat::Ogg,
            }) => Err(out_of_range("options.format", "format is mp3, m4a, wav or flac")),
            JobSpec::Stills(st) => {
                let given = [st.at.is_some(), st.moments.is_some(), st.every.is_some()];
                if given.iter().filter(|g| **g).count() != 1 {
                    return Err(out_of_range(
                        "options.at",
                        "give one of at (a moment), moments (a list) or every (seconds)",
                    ));
                }
                if let Some(moments) = &st.moments
                    && !(1..=100).contains(&moments.len())
                {
                    return Err(out_of_range("options.moments", "moments lists 1 to 100 times"));
                }
                if let Some(every) = st.every
                    && every.0 < 0.5
                {
                    return Err(out_of_range("options.every", "every is at least 0.5 seconds"));
                }
                Ok(())
            }
            JobSpec::ContactSheet(c) => {
                if !(2..=100).contains(&c.count) {
                    return Err(out_of_range("options.count", "count is 2 to 100"));
                }
                if !(1..=12).contains(&c.columns) {
                    return Err(out_of_range("options.columns", "columns is 1 to 12"));
                }
                Ok(())
            }
            JobSpec::Loudness(l) if ![-14, -16, -23].contains(&l.target) => {
                Err(out_of_range("options.target", "target is -14, -16 or -23 (LUFS)"))
            }
            JobSpec::Split(sp) => {
                if !(0.1..=30.0).contains(&sp.silence.0) {
                    return Err(out_of_range("options.silence", "silence is 0.1 to 30 seconds"));
                }
                if !(-90.0..=-10.0).contains(&sp.threshold) {
                    return Err(out_of_range("options.threshold", "threshold is -90 to -10 dB"));
                }
                Ok(())
            }
            JobSpec::Watermark(w) => {
                check_text("options.text", &w.text)?;
                if !(0.0..=1.0).contains(&w.opacity) {
                    return Err(out_of_range("options.opacity", "opacity is 0 to 1"));
                }
                Ok(())
            }
            JobSpec::SplitPdf(s) if s.every == 0 || s.every > 10_000 => {
                Err(out_of_range("options.every", "every is 1 to 10000 pages"))
            }
            JobSpec::ExtractPages(e) => check_pages("options.pages", &e.pages),
            JobSpec::PdfToImages(p) => {
                if !(36..=600).contains(&p.dpi) {
                    return Err(out_of_range("options.dpi", "dpi is 36 to 600"));
                }
                match &p.pages {
                    Some(pages) => check_pages("options.pages", pages),
                    None => Ok(()),
                }
            }
            _ => Ok(()),
        }
    }

    /// Roughly how long the job should take on `bytes` of input across `files` files: the
    /// `dryRun` answer. Rates are this farm's measured throughputs, rounded down.
    pub fn estimate_seconds(&self, files: usize, bytes: i64) -> u64 {
        const MB: f64 = 1_000_000.0;
        let (per_file, bytes_per_second) = match self {
            JobSpec::Cut(c) if !c.exact && c.fade_in.0 == 0.0 && c.fade_out.0 == 0.0 => (0.2, 150.0 * MB),
            JobSpec::StripMetadata(_) => (0.3, 30.0 * MB),
            JobSpec::Stills(_) | JobSpec::ContactSheet(_) => (1.0, 200.0 * MB),
            JobSpec::ExtractAudio(_) | JobSpec::Split(_) | JobSpec::Loudness(_) => (0.3, 10.0 * MB),
            // Encoding video: a few megabytes of input a second on this farm's cores.
            JobSpec::Cut(_)
            | JobSpec::Proxy(_)
            | JobSpec::Shrink(_)
            | JobSpec::Reframe(_)
            | JobSpec::Gif(_)
            | JobSpec::BurnIn(_)
            | JobSpec::Join(_) => (0.5, 2.0 * MB),
            JobSpec::Checksum(_) => (0.05, 300.0 * MB),
            JobSpec::ReadMetadata(_) => (1.0, 20.0 * MB),
            JobSpec::Zip(_) | JobSpec::Unzip(_) => (0.05, 150.0 * MB),
            JobSpec::Convert(c) if c.format.picture().is_none() => (0.5, 2.0 * MB),
            JobSpec::Convert(_) | JobSpec::Watermark(_) => (0.3, 30.0 * MB),
            JobSpec::MakePdf(_) | JobSpec::MergePdf(_) | JobSpec::CompressPdf(_) => (0.2, 20.0 * MB),
            JobSpec::SplitPdf(_) | JobSpec::ExtractPages(_) => (0.2, 50.0 * MB),
            JobSpec::PdfToImages(p) => (0.5 * f64::from(p.dpi) / 150.0, 5.0 * MB),
        };
        // Starting a job (a queue hop and a fresh process) costs about a second.
        (1.0 + per_file * files as f64 + bytes as f64 / bytes_per_second).ceil() as u64
    }
}

fn settings<T: DeserializeOwned>(options: serde_json::Value) -> Result<T, SettingsError> {
    serde_path_to_error::deserialize(options).map_err(SettingsError::Shape)
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

fn check_fade(field: &str, fade: Seconds) -> Result<(), SettingsError> {
    if fade.0 > 10.0 {
        return Err(out_of_range(field, "a fade is up to 10 seconds"));
    }
    Ok(())
}

fn check_pages(field: &str, pages: &str) -> Result<(), SettingsError> {
    parse_page_list(pages)
        .map(|_| ())
        .map_err(|why| out_of_range(field, why))
}

/// Page lists as people write them: 1-based pages and inclusive ranges separated by commas,
/// such as `1-3,7` or `2, 1`; `5-` runs from page 5 to the end. Answers `(first, last)` per
/// item in the order written (`None`: the last page), checked against a page count only when
/// the job runs. The error names the item at fault, ready to show.
pub fn parse_page_list(s: &str) -> Result<Vec<(u32, Option<u32>)>, String> {
    if s.trim().is_empty() {
        return Err("no pages were given".to_string());
    }
    let items: Vec<&str> = s.split(',').collect();
    if items.len() > 1000 {
        return Err("at most 1000 items".to_string());
    }
    items.into_iter().map(parse_page_item).collect()
}

fn parse_page_item(item: &str) -> Result<(u32, Option<u32>), String> {
    let item = item.trim();
    if item.is_empty() {
        return Err("the page list has an empty item between commas".to_string());
    }
    match item.split_once('-') {
        None => parse_page(item).map(|page| (page, Some(page))),
        Some((first, last)) => {
            let (first, last) = (first.trim(), last.trim());
            if first.is_empty() {
                return Err(format!("\"{item}\" has no first page"));
            }
            let first = parse_page(first)?;
            if last.is_empty() {
                return Ok((first, None));
            }
            let last = parse_page(last)?;
            if last < first {
                return Err(format!(
                    "\"{item}\" runs backwards; write it as \"{last}-{first}\""
                ));
            }
            Ok((first, Some(last)))
        }
    }
}

fn parse_page(text: &str) -> Result<u32, String> {
    // Digits only: `u32::from_str` would also take a leading '+'.
    if text.is_empty() || !text.bytes().all(|b| b.is_ascii_digit()) {
        return Err(format!("\"{text}\" is not a page number"));
    }
    match text.parse::<u32>() {
        Ok(0) => Err("pages are numbered from 1, so there is no page 0".to_string()),
        Ok(page) => Ok(page),
        Err(_) => Err(format!("{text} is too large to be a page number")),
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub struct NoSettings {}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default, ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum DigestAlgorithm {
    #[default]
    Sha256,
    Md5,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Checksum {
    #[serde(default)]
    pub algorithm: DigestAlgorithm,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Zip {
    /// The archive's name without `.zip`; default the folder's name, or `Archive`.
    pub name: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum PictureFormat {
    #[serde(alias = "jpeg")]
    Jpg,
    Png,
    Webp,
}

/// What a convert makes: a picture, video or audio format; inputs are of that kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum MediaFormat {
    #[serde(alias = "jpeg")]
    Jpg,
    Png,
    Webp,
    Mp4,
    Webm,
    Mov,
    Mp3,
    M4a,
    Wav,
    Flac,
    Ogg,
}

impl MediaFormat {
    pub fn kind(self) -> FileKind {
        match self.picture() {
            Some(_) => FileKind::Image,
            None if self.video().is_some() => FileKind::Video,
            None => FileKind::Audio,
        }
    }

    pub fn picture(self) -> Option<PictureFormat> {
        match self {
            MediaFormat::Jpg => Some(PictureFormat::Jpg),
            MediaFormat::Png => Some(PictureFormat::Png),
            MediaFormat::Webp => Some(PictureFormat::Webp),
            _ => None,
        }
    }

    pub fn video(self) -> Option<VideoFormat> {
        match self {
            MediaFormat::Mp4 => Some(VideoFormat::Mp4),
            MediaFormat::Webm => Some(VideoFormat::Webm),
            MediaFormat::Mov => Some(VideoFormat::Mov),
            _ => None,
        }
    }

    pub fn audio(self) -> Option<AudioFormat> {
        match self {
            MediaFormat::Mp3 => Some(AudioFormat::Mp3),
            MediaFormat::M4a => Some(AudioFormat::M4a),
            MediaFormat::Wav => Some(AudioFormat::Wav),
            MediaFormat::Flac => Some(AudioFormat::Flac),
            MediaFormat::Ogg => Some(AudioFormat::Ogg),
            _ => None,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum VideoFormat {
    Mp4,
    Webm,
    Mov,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum AudioFormat {
    Mp3,
    M4a,
    Wav,
    Flac,
    Ogg,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default, ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum VideoCodec {
    #[default]
    H264,
    Hevc,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Convert {
    pub format: MediaFormat,
    /// Pictures: the longer edge at most this many pixels (never enlarged); 16 to 20000.
    pub max_edge: Option<u32>,
    /// mp4 and mov: h264 (default) or hevc; webm is always VP9 with Opus. Left out of the
    /// stored settings when not given, as it means nothing for pictures and audio.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub codec: Option<VideoCodec>,
}

/// A moment or a length in seconds, written as a number or in a clock form: `90`, `12.5`,
/// `4:10`, `1:02:03.5`. Stored as a number.
#[derive(Debug, Clone, Copy, PartialEq, PartialOrd, Default, Serialize)]
#[serde(transparent)]
pub struct Seconds(pub f64);

impl<'de> Deserialize<'de> for Seconds {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Seconds, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Written {
            Number(f64),
            Clock(String),
        }
        let seconds = match Written::deserialize(d).map_err(|_| {
            serde::de::Error::custom("a time is seconds (a number) or a clock form like \"4:10\"")
        })? {
            Written::Number(n) => n,
            Written::Clock(text) => parse_clock(&text).map_err(serde::de::Error::custom)?,
        };
        if !seconds.is_finite() || seconds < 0.0 {
            return Err(serde::de::Error::custom("a time is not negative"));
        }
        Ok(Seconds(seconds))
    }
}

/// `4:10`, `1:02:03.5` or `12.5`: hours and minutes before seconds, each part under 60
/// after the first.
pub fn parse_clock(text: &str) -> Result<f64, String> {
    let parts: Vec<&str> = text.trim().split(':').collect();
    if parts.len() > 3 {
        return Err(format!("\"{text}\" is not a time: at most hours:minutes:seconds"));
    }
    let mut seconds = 0.0;
    for (n, part) in parts.iter().enumerate() {
        let last = n == parts.len() - 1;
        let well_formed = !part.is_empty()
            && part.bytes().all(|b| b.is_ascii_digit() || (last && b == b'.'))
            && part.bytes().filter(|b| *b == b'.').count() <= 1;
        let value: f64 = match part.parse() {
            Ok(v) if well_formed => v,
            _ => return Err(format!("\"{text}\" is not a time like 90, 12.5 or 4:10")),
        };
        if n > 0 && value >= 60.0 {
            return Err(format!(
                "\"{text}\" has {part} where minutes or seconds go (under 60)"
            ));
        }
        seconds = seconds * 60.0 + value;
    }
    Ok(seconds)
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Cut {
    #[serde(default)]
    pub start: Seconds,
    /// Default the end of the file.
    pub end: Option<Seconds>,
    /// Frame-exact start (re-encodes); otherwise the cut starts at the keyframe before `start`
    /// and copies the streams as they are.
    #[serde(default)]
    pub exact: bool,
    /// Fades of the sound, up to 10 seconds each (re-encodes the sound).
    #[serde(default)]
    pub fade_in: Seconds,
    #[serde(default)]
    pub fade_out: Seconds,
}

fn p1080() -> u32 {
    1080
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Proxy {
    /// 720 or 1080 (default).
    #[serde(default = "p1080")]
    pub height: u32,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Shrink {
    /// The result's size at most, in megabytes (1,000,000 bytes).
    #[serde(rename = "targetMB")]
    pub target_mb: f64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub enum Aspect {
    #[serde(rename = "9:16")]
    Portrait,
    #[serde(rename = "1:1")]
    Square,
    #[serde(rename = "4:5")]
    Tall,
    #[serde(rename = "16:9")]
    Wide,
}

impl Aspect {
    /// Width over height.
    pub fn ratio(self) -> (u32, u32) {
        match self {
            Aspect::Portrait => (9, 16),
            Aspect::Square => (1, 1),
            Aspect::Tall => (4, 5),
            Aspect::Wide => (16, 9),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Reframe {
    /// Cropped from the middle to this shape, after any rotation.
    pub aspect: Option<Aspect>,
    /// Clockwise: 90, 180 or 270.
    pub rotate: Option<u32>,
}

fn five_seconds() -> Seconds {
    Seconds(5.0)
}

fn gif_width() -> u32 {
    480
}

fn gif_fps() -> u32 {
    12
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Gif {
    #[serde(default)]
    pub start: Seconds,
    /// Up to 15 seconds; default 5.
    #[serde(default = "five_seconds")]
    pub length: Seconds,
    /// 120 to 960 pixels; default 480.
    #[serde(default = "gif_width")]
    pub width: u32,
    /// 5 to 24; default 12.
    #[serde(default = "gif_fps")]
    pub fps: u32,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct BurnIn {
    /// The running time (hours:minutes:seconds.frames), top left.
    #[serde(default)]
    pub timecode: bool,
    /// A line of text, bottom centre.
    pub text: Option<String>,
    /// What was read of the file; comes with content reading.
    #[serde(default)]
    pub captions: bool,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Join {
    /// Audio only: mp3 (default), m4a, wav or flac. Videos join into an mp4.
    pub format: Option<AudioFormat>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Stills {
    /// One moment.
    pub at: Option<Seconds>,
    /// Several moments (1 to 100), in the order wanted.
    pub moments: Option<Vec<Seconds>>,
    /// A still every so many seconds from the start (at least 0.5).
    pub every: Option<Seconds>,
    /// jpg (default), png or webp.
    #[serde(default = "jpg")]
    pub format: PictureFormat,
}

fn jpg() -> PictureFormat {
    PictureFormat::Jpg
}

/// Stills one job may make.
pub const MAX_STILLS: usize = 1000;

fn twelve() -> u32 {
    12
}

fn four() -> u32 {
    4
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ContactSheet {
    /// Frames taken from a video, evenly spaced: 2 to 100; default 12.
    #[serde(default = "twelve")]
    pub count: u32,
    /// 1 to 12; default 4.
    #[serde(default = "four")]
    pub columns: u32,
}

fn mp3() -> AudioFormat {
    AudioFormat::Mp3
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ExtractAudio {
    /// mp3 (default), m4a, wav or flac.
    #[serde(default = "mp3")]
    pub format: AudioFormat,
}

fn minus_fourteen() -> i32 {
    -14
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Loudness {
    /// Integrated loudness in LUFS: -14 (default), -16 or -23.
    #[serde(default = "minus_fourteen")]
    pub target: i32,
}

fn one_second() -> Seconds {
    Seconds(1.0)
}

fn minus_forty() -> f64 {
    -40.0
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Split {
    /// A quiet stretch at least this long separates pieces: 0.1 to 30 seconds; default 1.
    #[serde(default = "one_second")]
    pub silence: Seconds,
    /// Quieter than this (dBFS) is silence: -90 to -10; default -40.
    #[serde(default = "minus_forty")]
    pub threshold: f64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default, ToSchema)]
#[serde(rename_all = "camelCase")]
pub enum Position {
    TopLeft,
    Top,
    TopRight,
    Left,
    Center,
    Right,
    BottomLeft,
    Bottom,
    #[default]
    BottomRight,
}

fn half() -> f32 {
    0.5
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Watermark {
    pub text: String,
    #[serde(default)]
    pub position: Position,
    /// 0 (invisible) to 1; default 0.5.
    #[serde(default = "half")]
    pub opacity: f32,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default, ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum PageSize {
    #[default]
    Fit,
    A4,
    Letter,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct MakePdf {
    #[serde(default)]
    pub page_size: PageSize,
    /// The PDF's name without `.pdf`; default the first picture's name.
    pub name: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct MergePdf {
    /// The PDF's name without `.pdf`; default the first PDF's name with ` merged`.
    pub name: Option<String>,
}

fn one() -> u32 {
    1
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SplitPdf {
    /// Pages per part, 1 to 10000; default 1 (a PDF per page).
    #[serde(default = "one")]
    pub every: u32,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ExtractPages {
    /// Like `1-3,7`, in the order wanted.
    pub pages: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default, ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum PdfQuality {
    Screen,
    #[default]
    Ebook,
    Printer,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct CompressPdf {
    #[serde(default)]
    pub quality: PdfQuality,
}

fn default_dpi() -> u32 {
    150
}

fn png() -> PictureFormat {
    PictureFormat::Png
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PdfToImages {
    /// jpg or png; default png.
    #[serde(default = "png")]
    pub format: PictureFormat,
    /// 36 to 600; default 150.
    #[serde(default = "default_dpi")]
    pub dpi: u32,
    /// Like `1-3,7`; default every page.
    pub pages: Option<String>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn range_error(job_type: JobType, options: serde_json::Value) -> String {
        match JobSpec::parse(job_type, options) {
            Err(SettingsError::Range(e)) => e.field,
            other => panic!("not a range error: {other:?}"),
        }
    }

    #[test]
    fn defaults_are_filled_in_and_survive_the_row() {
        let spec = JobSpec::parse(JobType::PdfToImages, serde_json::Value::Null).unwrap();
        assert_eq!(
            spec.options(),
            json!({ "format": "png", "dpi": 150, "pages": null })
        );
        assert_eq!(JobSpec::from_row("pdfToImages", spec.options()).unwrap(), spec);
    }

    #[test]
    fn ranges_name_the_setting() {
        assert_eq!(
            range_error(JobType::Convert, json!({ "format": "png", "maxEdge": 8 })),
            "options.maxEdge"
        );
        assert_eq!(
            range_error(JobType::Watermark, json!({ "text": "x", "opacity": 1.5 })),
            "options.opacity"
        );
        assert_eq!(
            range_error(JobType::PdfToImages, json!({ "dpi": 1000 })),
            "options.dpi"
        );
        assert_eq!(
            range_error(JobType::ExtractPages, json!({ "pages": "3-1" })),
            "options.pages"
        );
        assert_eq!(range_error(JobType::Captions, json!({})), "jobType");
        assert_eq!(range_error(JobType::ReadMetadata, json!({})), "jobType");
        assert_eq!(
            range_error(JobType::Cut, json!({ "start": 5, "end": "0:04" })),
            "options.end"
        );
        assert_eq!(
            range_error(JobType::Cut, json!({ "fadeOut": 11 })),
            "options.fadeOut"
        );
        assert_eq!(
            range_error(JobType::Proxy, json!({ "height": 480 })),
            "options.height"
        );
        assert_eq!(
            range_error(JobType::Shrink, json!({ "targetMB": 0 })),
            "options.targetMB"
        );
        assert_eq!(range_error(JobType::Reframe, json!({})), "options.aspect");
        assert_eq!(
            range_error(JobType::Reframe, json!({ "rotate": 45 })),
            "options.rotate"
        );
        assert_eq!(
            range_error(JobType::Gif, json!({ "length": 16 })),
            "options.length"
        );
        assert_eq!(
            range_error(JobType::Gif, json!({ "width": 100 })),
            "options.width"
        );
        assert_eq!(range_error(JobType::Gif, json!({ "fps": 30 })), "options.fps");
        assert_eq!(range_error(JobType::BurnIn, json!({})), "options.text");
        assert_eq!(
            range_error(JobType::BurnIn, json!({ "captions": true })),
            "options.captions"
        );
        assert_eq!(
            range_error(JobType::Join, json!({ "format": "ogg" })),
            "options.format"
        );
        assert_eq!(range_error(JobType::Stills, json!({})), "options.at");
        assert_eq!(
            range_error(JobType::Stills, json!({ "at": 1, "every": 2 })),
            "options.at"
        );
        assert_eq!(
            range_error(JobType::Stills, json!({ "every": 0.1 })),
            "options.every"
        );
        assert_eq!(
            range_error(JobType::ContactSheet, json!({ "count": 1 })),
            "options.count"
        );
        assert_eq!(
            range_error(JobType::Loudness, json!({ "target": -20 })),
            "options.target"
        );
        assert_eq!(
            range_error(JobType::Split, json!({ "threshold": 0 })),
            "options.threshold"
        );
        assert_eq!(
            range_error(JobType::Convert, json!({ "format": "webm", "codec": "hevc" })),
            "options.codec"
        );
        assert_eq!(
            range_error(JobType::Convert, json!({ "format": "mp4", "maxEdge": 100 })),
            "options.maxEdge"
        );
    }

    #[test]
    fn times_read_as_seconds_or_clock_forms() {
        assert_eq!(parse_clock("4:10"), Ok(250.0));
        assert_eq!(parse_clock("1:02:03.5"), Ok(3723.5));
        assert_eq!(parse_clock("12.5"), Ok(12.5));
        for bad in ["", "1:60", "a:10", "1:2:3:4", "-5", "1.5:10", "1..5"] {
            assert!(parse_clock(bad).is_err(), "{bad:?} was taken");
        }
        let cut = JobSpec::parse(JobType::Cut, json!({ "start": "0:01.5", "end": 3 })).unwrap();
        assert_eq!(cut.options()["start"], 1.5);
        assert_eq!(JobSpec::from_row("cut", cut.options()).unwrap(), cut);
    }

    #[test]
    fn inputs_are_taken_by_kind() {
        let to_mp3 = JobSpec::parse(JobType::Convert, json!({ "format": "mp3" })).unwrap();
        assert!(to_mp3.takes(FileKind::Audio, "a.wav"));
        assert!(!to_mp3.takes(FileKind::Video, "a.mp4"));
        assert_eq!(to_mp3.takes_what(), "audio files");
        let cut = JobSpec::parse(JobType::Cut, json!({})).unwrap();
        assert_eq!(cut.takes_what(), "videos or audio files");
        let join = JobSpec::parse(JobType::Join, json!({ "format": "flac" })).unwrap();
        assert!(join.check_inputs(&[FileKind::Audio, FileKind::Audio]).is_ok());
        assert!(matches!(
            join.check_inputs(&[FileKind::Video, FileKind::Video]),
            Err(SettingsError::Range(SettingError { field, .. })) if field == "options.format"
        ));
        assert!(matches!(
            join.check_inputs(&[FileKind::Audio, FileKind::Video]),
            Err(SettingsError::Range(SettingError { field, .. })) if field == "fileIds"
        ));
        assert!(JobType::Convert.downloads(FileKind::Image));
        assert!(!JobType::Convert.downloads(FileKind::Video));
        assert!(!JobType::Zip.downloads(FileKind::Image));
    }

    #[test]
    fn unknown_settings_are_refused_with_their_path() {
        match JobSpec::parse(JobType::Checksum, json!({ "algorithm": "sha1" })) {
            Err(SettingsError::Shape(e)) => assert_eq!(e.path().to_string(), "algorithm"),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn sizes_read_like_people_write_them() {
        assert_eq!(decimal_size(2_000_000_000), "2 GB");
        assert_eq!(decimal_size(2_150_000_000), "2.15 GB");
        assert_eq!(decimal_size(1_500_000), "1.5 MB");
        assert_eq!(decimal_size(700), "700 bytes");
    }

    #[test]
    fn page_lists_read_like_people_write_them() {
        assert_eq!(
            parse_page_list("1-3, 7").unwrap(),
            vec![(1, Some(3)), (7, Some(7))]
        );
        assert_eq!(
            parse_page_list(" 9 , 3 - 4 ,1").unwrap(),
            vec![(9, Some(9)), (3, Some(4)), (1, Some(1))]
        );
        assert_eq!(parse_page_list("5-").unwrap(), vec![(5, None)]);
    }

    #[test]
    fn bad_page_lists_say_why() {
        let cases = [
            ("", "no pages"),
            ("   ", "no pages"),
            ("0", "no page 0"),
            ("0-3", "no page 0"),
            ("5-3", "runs backwards"),
            ("abc", "\"abc\" is not a page number"),
            ("1,,2", "empty item"),
            ("1,", "empty item"),
            ("-3", "no first page"),
            ("1-2-3", "\"2-3\" is not a page number"),
            ("1.5", "\"1.5\" is not a page number"),
            ("+2", "\"+2\" is not a page number"),
            ("99999999999", "too large"),
        ];
        for (list, reason) in cases {
            let error = parse_page_list(list).expect_err(list);
            assert!(
                error.contains(reason),
                "{list:?} gave {error:?}, expected {reason:?}"
            );
        }
    }
}
