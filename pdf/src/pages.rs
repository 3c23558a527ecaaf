//! Page lists as users write them ("1-3,7", "5-"), and counting pages.

use std::path::Path;

use crate::document::load;
use crate::error::{PdfError, guard};

/// A list of pages as a user writes it: 1-based page numbers and inclusive ranges separated by
/// commas, such as `1-3,7` or `2, 1`. `5-` runs from page 5 to the end. Pages come out in the
/// order written, repeats included.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PageRanges(Vec<Span>);

/// One item of the list: a first page and a last page, `None` meaning the end of the document.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Span {
    first: u32,
    last: Option<u32>,
}

impl PageRanges {
    /// Parses a page list. The error names the item at fault, ready to show to the user.
    pub fn parse(s: &str) -> Result<PageRanges, String> {
        if s.trim().is_empty() {
            return Err("no pages were given".to_string());
        }
        s.split(',').map(parse_span).collect::<Result<Vec<_>, _>>().map(PageRanges)
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
                return Err(PdfError::NoSuchPage { page: beyond, count: page_count });
            }
            pages.extend(span.first..=last);
        }
        Ok(pages)
    }
}

fn parse_span(item: &str) -> Result<Span, String> {
    let item = item.trim();
    if item.is_empty() {
        return Err("the page list has an empty item between commas".to_string());
    }
    match item.split_once('-') {
        None => parse_page(item).map(|page| Span { first: page, last: Some(page) }),
        Some((first, last)) => {
            let (first, last) = (first.trim(), last.trim());
            if first.is_empty() {
                return Err(format!("\"{item}\" has no first page"));
            }
            let first = parse_page(first)?;
            if last.is_empty() {
                return Ok(Span { first, last: None });
            }
            let last = parse_page(last)?;
            if last < first {
                return Err(format!("\"{item}\" runs backwards; write it as \"{last}-{first}\""));
            }
            Ok(Span { first, last: Some(last) })
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

    fn pages(list: &str, count: u32) -> Vec<u32> {
        PageRanges::parse(list).expect("valid list").pages(count).expect("pages exist")
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
        let error = PageRanges::parse("8-").unwrap().pages(7).unwrap_err();
        assert!(matches!(error, PdfError::NoSuchPage { page: 8, count: 7 }), "{error:?}");
    }

    #[test]
    fn pages_past_the_end_are_client_errors() {
        let error = PageRanges::parse("1-3,12").unwrap().pages(10).unwrap_err();
        assert!(matches!(error, PdfError::NoSuchPage { page: 12, count: 10 }), "{error:?}");
        assert!(error.is_client_error());
        let error = PageRanges::parse("9-11").unwrap().pages(10).unwrap_err();
        assert!(matches!(error, PdfError::NoSuchPage { page: 11, count: 10 }), "{error:?}");
    }

    #[test]
    fn bad_lists_are_rejected_with_the_reason() {
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
            let error = PageRanges::parse(list).expect_err(list);
            assert!(error.contains(reason), "{list:?} gave {error:?}, expected {reason:?}");
        }
    }
}
