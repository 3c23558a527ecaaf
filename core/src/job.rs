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
        }
    }

    /// Whether this farm runs the type yet: audio, video and captions come with their own
    /// pipelines.
    pub fn is_available(self) -> bool {
        matches!(
            self,
            JobType::Convert
                | JobType::StripMetadata
                | JobType::Watermark
                | JobType::MakePdf
                | JobType::MergePdf
                | JobType::SplitPdf
                | JobType::ExtractPages
                | JobType::CompressPdf
                | JobType::PdfToImages
                | JobType::Zip
                | JobType::Unzip
                | JobType::Checksum
        )
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

    /// Whether a file of `kind` named `name` can be an input of this type (of those available).
    pub fn takes(self, kind: FileKind, name: &str) -> bool {
        match self {
            JobType::Convert | JobType::StripMetadata | JobType::Watermark | JobType::MakePdf => {
                kind == FileKind::Image
            }
            JobType::MergePdf
            | JobType::SplitPdf
            | JobType::ExtractPages
            | JobType::CompressPdf
            | JobType::PdfToImages => kind == FileKind::Pdf,
            JobType::Unzip => name.to_ascii_lowercase().ends_with(".zip"),
            _ => true,
        }
    }

    /// What [`JobType::takes`] wants, for the 400 that refuses another kind.
    pub fn takes_what(self) -> &'static str {
        match self {
            JobType::Convert | JobType::StripMetadata | JobType::Watermark | JobType::MakePdf => "pictures",
            JobType::MergePdf
            | JobType::SplitPdf
            | JobType::ExtractPages
            | JobType::CompressPdf
            | JobType::PdfToImages => "PDFs",
            JobType::Unzip => "a .zip file",
            _ => "any files",
        }
    }

    /// Whether the job downloads its inputs to work on them (pictures and PDFs, limited to
    /// [`download_limit`] in all) rather than reading them as streams.
    pub fn downloads_inputs(self) -> bool {
        !matches!(self, JobType::Checksum | JobType::Zip | JobType::Unzip)
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

/// A job's settings, by type, with every default filled in: what the job row stores.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "jobType", content = "options", rename_all = "camelCase")]
pub enum JobSpec {
    Checksum(Checksum),
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
            other => {
                return Err(out_of_range(
                    "jobType",
                    format!("{} jobs are not available yet", other.as_str()),
                ));
            }
        };
        spec.check()?;
        Ok(spec)
    }

    pub fn job_type(&self) -> JobType {
        match self {
            JobSpec::Checksum(_) => JobType::Checksum,
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
            JobSpec::Convert(c) => match c.max_edge {
                Some(edge) if !(16..=20_000).contains(&edge) => {
                    Err(out_of_range("options.maxEdge", "maxEdge is 16 to 20000 pixels"))
                }
                _ => Ok(()),
            },
            JobSpec::Watermark(w) => {
                let chars = w.text.chars().count();
                if chars == 0 || chars > 200 || w.text.chars().any(char::is_control) {
                    return Err(out_of_range(
                        "options.text",
                        "text is 1 to 200 characters, with no control characters",
                    ));
                }
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
            JobSpec::Checksum(_) => (0.05, 300.0 * MB),
            JobSpec::Zip(_) | JobSpec::Unzip(_) => (0.05, 150.0 * MB),
            JobSpec::Convert(_) | JobSpec::Watermark(_) | JobSpec::StripMetadata(_) => (0.3, 30.0 * MB),
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
/// the right extension).
fn check_name(field: &str, name: Option<&str>) -> Result<(), SettingsError> {
    match name {
        Some(n)
            if n.trim().is_empty()
                || n.chars().count() > 200
                || n.contains('/')
                || n.chars().any(char::is_control) =>
        {
            Err(out_of_range(
                field,
                "name is 1 to 200 characters, with no slash or control characters",
            ))
        }
        _ => Ok(()),
    }
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

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Convert {
    pub format: PictureFormat,
    /// The longer edge at most this many pixels (never enlarged); 16 to 20000.
    pub max_edge: Option<u32>,
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
        assert_eq!(range_error(JobType::Cut, json!({})), "jobType");
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
