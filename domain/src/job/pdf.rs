//! Jobs on PDFs (and makePdf, which builds one from pictures), and the page lists they take.

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use super::{MB, Rates, Settings, SettingsError, check_name, out_of_range};
use crate::file::FileKind;
use crate::job::PictureFormat;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default, ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum PageSize {
    #[default]
    Fit,
    A4,
    Letter,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[schema(as = MakePdfOptions)]
pub struct MakePdf {
    #[serde(default)]
    pub page_size: PageSize,
    /// The PDF's name without `.pdf`, at most 200 characters; default the first picture's name.
    #[schema(min_length = 1, max_length = 200)]
    pub name: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[schema(as = MergePdfOptions)]
pub struct MergePdf {
    /// The PDF's name without `.pdf`, at most 200 characters; default the first PDF's name
    /// with ` merged`.
    #[schema(min_length = 1, max_length = 200)]
    pub name: Option<String>,
}

fn one() -> u32 {
    1
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[schema(as = SplitPdfOptions)]
pub struct SplitPdf {
    /// Pages per part, 1 to 10000; default 1 (a PDF per page).
    #[serde(default = "one")]
    #[schema(minimum = 1, maximum = 10000)]
    pub every: u32,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[schema(as = ExtractPagesOptions)]
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

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[schema(as = CompressPdfOptions)]
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

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[schema(as = PdfToImagesOptions)]
pub struct PdfToImages {
    /// jpg or png; default png.
    #[serde(default = "png")]
    pub format: PictureFormat,
    /// 36 to 600; default 150.
    #[serde(default = "default_dpi")]
    #[schema(minimum = 36, maximum = 600)]
    pub dpi: u32,
    /// Like `1-3,7`; default every page.
    pub pages: Option<String>,
}

const PDFS: Option<&[FileKind]> = Some(&[FileKind::Pdf]);

const ASSEMBLING: Rates = Rates {
    per_file: 0.2,
    bytes_per_second: 20.0 * MB,
};

const PICKING_PAGES: Rates = Rates {
    per_file: 0.2,
    bytes_per_second: 50.0 * MB,
};

impl Settings for MakePdf {
    fn makes(&self, _taken: &[FileKind]) -> Vec<FileKind> {
        vec![FileKind::Pdf]
    }

    fn kinds(&self) -> Option<&'static [FileKind]> {
        Some(&[FileKind::Image])
    }

    fn check(&self) -> Result<(), SettingsError> {
        check_name("options.name", self.name.as_deref())
    }

    fn rates(&self) -> Rates {
        ASSEMBLING
    }
}

impl Settings for MergePdf {
    fn kinds(&self) -> Option<&'static [FileKind]> {
        PDFS
    }

    fn check(&self) -> Result<(), SettingsError> {
        check_name("options.name", self.name.as_deref())
    }

    fn rates(&self) -> Rates {
        ASSEMBLING
    }

    fn input_count(&self) -> (usize, usize) {
        (2, 50)
    }
}

impl Settings for SplitPdf {
    fn kinds(&self) -> Option<&'static [FileKind]> {
        PDFS
    }

    fn check(&self) -> Result<(), SettingsError> {
        if self.every == 0 || self.every > 10_000 {
            return Err(out_of_range("options.every", "every is 1 to 10000 pages"));
        }
        Ok(())
    }

    fn rates(&self) -> Rates {
        PICKING_PAGES
    }

    fn input_count(&self) -> (usize, usize) {
        (1, 1)
    }
}

impl Settings for ExtractPages {
    fn kinds(&self) -> Option<&'static [FileKind]> {
        PDFS
    }

    fn check(&self) -> Result<(), SettingsError> {
        check_pages("options.pages", &self.pages)
    }

    fn rates(&self) -> Rates {
        PICKING_PAGES
    }

    fn input_count(&self) -> (usize, usize) {
        (1, 1)
    }
}

impl Settings for CompressPdf {
    fn kinds(&self) -> Option<&'static [FileKind]> {
        PDFS
    }

    fn rates(&self) -> Rates {
        ASSEMBLING
    }
}

impl Settings for PdfToImages {
    fn makes(&self, _taken: &[FileKind]) -> Vec<FileKind> {
        vec![FileKind::Image]
    }

    fn kinds(&self) -> Option<&'static [FileKind]> {
        PDFS
    }

    fn check(&self) -> Result<(), SettingsError> {
        if !(36..=600).contains(&self.dpi) {
            return Err(out_of_range("options.dpi", "dpi is 36 to 600"));
        }
        match &self.pages {
            Some(pages) => check_pages("options.pages", pages),
            None => Ok(()),
        }
    }

    fn rates(&self) -> Rates {
        Rates {
            per_file: 0.5 * f64::from(self.dpi) / 150.0,
            bytes_per_second: 5.0 * MB,
        }
    }

    fn input_count(&self) -> (usize, usize) {
        (1, 1)
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

#[cfg(test)]
mod tests {
    use super::*;

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
