//! Page lists (which pages, in what order) and counting pages.

use std::path::Path;

use crate::document::load;
use crate::error::{PdfError, guard};

/// A list of pages: 1-based pages and inclusive ranges in the order wanted, repeats included, as
/// `drive_domain::job::parse_page_list` reads them from what a user wrote (`1-3,7`, `5-`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PageRanges(Vec<Span>);

/// One item of the list: a first page and a last page, `None` meaning the end of the document.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Span {
    first: u32,
    last: Option<u32>,
}

impl PageRanges {
    /// The list from spans already parsed elsewhere (`drive_domain::job::parse_page_list`, which
    /// the API checks requests with): `(first, last)`, `None` for "to the end".
    pub fn from_spans(spans: &[(u32, Option<u32>)]) -> PageRanges {
        PageRanges(spans.iter().map(|&(first, last)| Span { first, last }).collect())
    }

    /// The page numbers in the order written, checked against a document of `page_count` pages.
    pub fn pages(&self, page_count: u32) -> Result<Vec<u32>, PdfError> {
        let mut pages = Vec::new();
        for span in &self.0 {
            let last = span.last.unwrap_or(page_count);
            // An open range starting past the end names a page that does not exist, like a
            // closed one would.
            let beyond = if span.first > page_count { span.first } else { last };
            if beyond > page_count {
                return Err(PdfError::NoSuchPage {
                    page: beyond,
                    count: page_count,
                });
            }
            pages.extend(span.first..=last);
        }
        Ok(pages)
    }
}

/// The number of pages of the PDF at `path`.
pub fn page_count(path: &Path) -> Result<u32, PdfError> {
    guard(|| {
        let doc = load(path)?;
        Ok(doc.page_ids.len() as u32)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The spans `drive_domain::job::parse_page_list` makes of `list`.
    fn ranges(list: &str) -> PageRanges {
        PageRanges::from_spans(&drive_domain::job::parse_page_list(list).expect("valid list"))
    }

    fn pages(list: &str, count: u32) -> Vec<u32> {
        ranges(list).pages(count).expect("pages exist")
    }

    #[test]
    fn ranges_and_single_pages_keep_their_order() {
        assert_eq!(pages("1-3,7", 10), [1, 2, 3, 7]);
        assert_eq!(pages("2,1", 10), [2, 1]);
        assert_eq!(pages(" 9 , 3 - 4 ,1", 10), [9, 3, 4, 1]);
        assert_eq!(pages("2,2", 3), [2, 2]);
        assert_eq!(pages("4-4", 4), [4]);
    }

    #[test]
    fn an_open_range_runs_to_the_end() {
        assert_eq!(pages("5-", 7), [5, 6, 7]);
        assert_eq!(pages("7-", 7), [7]);
        let error = ranges("8-").pages(7).unwrap_err();
        assert!(
            matches!(error, PdfError::NoSuchPage { page: 8, count: 7 }),
            "{error:?}"
        );
    }

    #[test]
    fn pages_past_the_end_are_client_errors() {
        let error = ranges("1-3,12").pages(10).unwrap_err();
        assert!(
            matches!(error, PdfError::NoSuchPage { page: 12, count: 10 }),
            "{error:?}"
        );
        assert!(error.is_client_error());
        let error = ranges("9-11").pages(10).unwrap_err();
        assert!(
            matches!(error, PdfError::NoSuchPage { page: 11, count: 10 }),
            "{error:?}"
        );
    }
}
