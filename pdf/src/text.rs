//! The words on a PDF's pages, as text: what reading a PDF answers, and what indexing one
//! stores. `hayro`'s interpreter runs each page's content and hands over every glyph it
//! shows with where it goes and the Unicode its font maps it to (the font's `ToUnicode`
//! map, else its glyph names); glyphs are written in the order the page shows them, with
//! a line break where the baseline moves and a space where a gap opens on a line. Invisible
//! text (the layer OCR puts under a scan) is read like any other.

use hayro::hayro_interpret::font::{Glyph, GlyphRun, PositionedGlyph};
use hayro::hayro_interpret::hayro_cmap::BfString;
use hayro::hayro_interpret::{
    BlendMode, ClipPath, Context, Device, DrawMode, DrawProps, Image, ImageDrawProps, InterpreterCache,
    InterpreterSettings, SoftMask, interpret_page,
};
use hayro::hayro_syntax::Pdf;
use hayro::kurbo::{Affine, BezPath, Point, Rect, Vec2};

use crate::error::{PdfError, guard, unreadable};
use crate::render::load_error;

/// The most text kept of one page (in bytes): a page of ordinary prose holds a few
/// kilobytes, and a hostile one showing millions of glyphs should not fill the memory.
pub const MAX_PAGE_TEXT: usize = 1 << 20;

/// Glyph space units to the em, as the interpreter scales glyphs' transforms.
const GLYPH_UNITS: f64 = 1000.0;

/// A PDF opened for reading its text, page by page.
pub struct TextPages {
    pdf: Pdf,
}

/// The text of one page.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PageText {
    /// Lines separated by `\n`, without a trailing one; at most [`MAX_PAGE_TEXT`] bytes.
    pub text: String,
    /// Whether the page shows any glyph that reads as a letter, digit or sign: a scan
    /// without an OCR layer has none, and only its pictures tell what it says.
    pub has_text_layer: bool,
}

impl TextPages {
    /// Opens a PDF held in memory. One that needs a password is [`PdfError::Encrypted`].
    pub fn open(data: Vec<u8>) -> Result<TextPages, PdfError> {
        let pdf = guard(|| Pdf::new(data).map_err(load_error))?;
        if guard(|| Ok(pdf.pages().is_empty()))? {
            return Err(unreadable("it has no pages"));
        }
        Ok(TextPages { pdf })
    }

    /// The number of pages.
    pub fn count(&self) -> u32 {
        self.pdf.pages().len() as u32
    }

    /// The text of page `number` (from 1).
    pub fn page(&self, number: u32) -> Result<PageText, PdfError> {
        let count = self.count();
        if number == 0 || number > count {
            return Err(PdfError::NoSuchPage { page: number, count });
        }
        guard(|| {
            let page = &self.pdf.pages()[number as usize - 1];
            let cache = InterpreterCache::new();
            let (width, height) = page.render_dimensions();
            let bbox = Rect::new(0.0, 0.0, f64::from(width), f64::from(height));
            let mut context = Context::new(
                Affine::IDENTITY,
                bbox,
                &cache,
                page.xref(),
                InterpreterSettings::default(),
            );
            let mut collector = Collector::default();
            interpret_page(page, &mut context, &mut collector);
            let kept = collector.text.trim_end().len();
            collector.text.truncate(kept);
            Ok(PageText {
                has_text_layer: collector.has_text_layer,
                text: collector.text,
            })
        })
    }
}

/// Writes the glyphs a page shows into text.
#[derive(Default)]
struct Collector {
    text: String,
    has_text_layer: bool,
    /// Where the last glyph ended, its baseline's direction and its size (the length of its
    /// em), in the page's space.
    last: Option<(Point, Vec2, f64)>,
}

impl Collector {
    fn add(&mut self, positioned: &PositionedGlyph<'_>, transform: Affine) {
        let glyph: &Glyph<'_> = positioned;
        let Some(unicode) = glyph.as_unicode() else {
            return;
        };
        let units = GLYPH_UNITS;
        let origin = transform * Point::ORIGIN;
        let em = transform * Point::new(0.0, units) - origin;
        let size = em.hypot();
        let along = transform * Point::new(units, 0.0) - origin;
        if size <= 0.0 || along.hypot() <= 0.0 || !size.is_finite() {
            return;
        }
        let direction = along / along.hypot();
        let advance = match glyph {
            Glyph::Outline(outline) => outline.advance_width(),
            Glyph::Type3(type3) => type3.advance_width(),
        }
        .map_or(units / 2.0, f64::from);
        let end = transform * Point::new(advance, 0.0);
        if let Some((last_end, last_direction, last_size)) = self.last {
            let gap = origin - last_end;
            // Distance across the last baseline, and along it.
            let across = gap.cross(last_direction).abs();
            let ahead = gap.dot(last_direction);
            let size = size.max(last_size);
            if across > size * 0.5 {
                self.push('\n');
            } else if (ahead > size * 0.2 || ahead < -size) && !self.text.ends_with([' ', '\n']) {
                self.push(' ');
            }
        }
        match unicode {
            BfString::Char(c) => self.push(c),
            BfString::String(s) => s.chars().for_each(|c| self.push(c)),
        }
        self.last = Some((end, direction, size));
    }

    fn push(&mut self, c: char) {
        // Control characters carry no words (a `\0` from a broken map, a form feed).
        let c = if c.is_control() && c != '\n' { ' ' } else { c };
        if c == ' ' && self.text.ends_with([' ', '\n']) || c == '\n' && self.text.is_empty() {
            return;
        }
        if self.text.len() + c.len_utf8() > MAX_PAGE_TEXT {
            return;
        }
        self.has_text_layer |= c.is_alphanumeric() || c.is_ascii_punctuation();
        self.text.push(c);
    }
}

impl<'a> Device<'a> for Collector {
    fn draw_glyph_run(&mut self, run: &GlyphRun<'_, 'a>, props: DrawProps<'a>, _: &DrawMode) {
        for glyph in run.glyphs() {
            self.add(glyph, props.transform * glyph.transform());
        }
    }
    fn draw_path(&mut self, _: &BezPath, _: DrawProps<'a>, _: &DrawMode) {}
    fn push_clip_path(&mut self, _: &ClipPath) {}
    fn push_transparency_group(&mut self, _: f32, _: Option<SoftMask<'a>>, _: BlendMode) {}
    fn draw_image(&mut self, _: Image<'a, '_>, _: ImageDrawProps<'a>) {}
    fn pop_clip(&mut self) {}
    fn pop_transparency_group(&mut self) {}
}

#[cfg(test)]
mod tests {
    use lopdf::content::{Content, Operation};
    use lopdf::{Document, Object, Stream, dictionary};

    use super::*;

    /// A one-page PDF per entry of `pages`, each showing its operations with the fonts F1
    /// (Helvetica, WinAnsi) and F2 (a composite font whose two-byte codes read as Unicode
    /// only through its `ToUnicode` map, as subset fonts' do).
    fn pdf(pages: Vec<Vec<Operation>>) -> Vec<u8> {
        let mut doc = Document::with_version("1.5");
        let tree = doc.new_object_id();
        let helvetica = doc.add_object(dictionary! {
            "Type" => "Font", "Subtype" => "Type1", "BaseFont" => "Helvetica",
            "Encoding" => "WinAnsiEncoding",
        });
        // Codes 1, 2, 3 are П, р, и; 4 is a space.
        let cmap = "/CIDInit /ProcSet findresource begin 12 dict begin begincmap\n\
                    /CMapName /Test def /CMapType 2 def\n\
                    1 begincodespacerange <0000> <FFFF> endcodespacerange\n\
                    4 beginbfchar <0001> <041F> <0002> <0440> <0003> <0438> <0004> <0020> endbfchar\n\
                    endcmap CMapName currentdict /CMap defineresource pop end end";
        let to_unicode = doc.add_object(Stream::new(dictionary! {}, cmap.as_bytes().to_vec()));
        let descendant = doc.add_object(dictionary! {
            "Type" => "Font", "Subtype" => "CIDFontType2", "BaseFont" => "Test",
            "CIDSystemInfo" => dictionary! {
                "Registry" => Object::string_literal("Adobe"),
                "Ordering" => Object::string_literal("Identity"), "Supplement" => 0,
            },
            "DW" => 600,
        });
        let composite = doc.add_object(dictionary! {
            "Type" => "Font", "Subtype" => "Type0", "BaseFont" => "Test",
            "Encoding" => "Identity-H", "DescendantFonts" => vec![descendant.into()],
            "ToUnicode" => to_unicode,
        });
        let resources = doc.add_object(dictionary! {
            "Font" => dictionary! { "F1" => helvetica, "F2" => composite },
        });
        let mut kids = Vec::new();
        for operations in pages {
            let content = Content { operations }.encode().unwrap();
            let content = doc.add_object(Stream::new(dictionary! {}, content));
            let id = doc.add_object(dictionary! {
                "Type" => "Page", "Parent" => tree, "Contents" => content,
                "Resources" => resources,
                "MediaBox" => vec![0.into(), 0.into(), 600.into(), 800.into()],
            });
            kids.push(Object::Reference(id));
        }
        let count = kids.len() as i64;
        doc.objects.insert(
            tree,
            Object::Dictionary(dictionary! { "Type" => "Pages", "Kids" => kids, "Count" => count }),
        );
        let catalog = doc.add_object(dictionary! { "Type" => "Catalog", "Pages" => tree });
        doc.trailer.set("Root", catalog);
        let mut out = Vec::new();
        doc.save_to(&mut out).unwrap();
        out
    }

    /// Shows `text` (raw bytes in the font's encoding) with `font` at (x, y).
    fn show(font: &str, x: i64, y: i64, text: Vec<u8>) -> Vec<Operation> {
        vec![
            Operation::new("BT", vec![]),
            Operation::new("Tf", vec![font.into(), 12.into()]),
            Operation::new("Td", vec![x.into(), y.into()]),
            Operation::new("Tj", vec![Object::String(text, lopdf::StringFormat::Literal)]),
            Operation::new("ET", vec![]),
        ]
    }

    #[test]
    fn lines_words_and_mapped_glyphs_read_back() {
        let mut first = show("F1", 72, 700, b"Hello, world.".to_vec());
        // A word placed apart on the same line reads after a space.
        first.extend(show("F1", 300, 700, b"Caf\xE9".to_vec()));
        first.extend(show("F2", 72, 680, vec![0, 1, 0, 2, 0, 3, 0, 4, 0, 1]));
        // Text rendering mode 3 is invisible: an OCR layer under a scan.
        let mut second = vec![Operation::new("Tr", vec![3.into()])];
        second.extend(show("F1", 72, 700, b"hidden words".to_vec()));
        let pages = TextPages::open(pdf(vec![first, second, vec![]])).unwrap();
        assert_eq!(pages.count(), 3);
        let page = pages.page(1).unwrap();
        assert_eq!(page.text, "Hello, world. Café\nПри П");
        assert!(page.has_text_layer);
        let page = pages.page(2).unwrap();
        assert_eq!(page.text, "hidden words");
        assert!(page.has_text_layer);
        let page = pages.page(3).unwrap();
        assert_eq!((page.text.as_str(), page.has_text_layer), ("", false));
        assert!(matches!(
            pages.page(4),
            Err(PdfError::NoSuchPage { page: 4, count: 3 })
        ));
        assert!(matches!(pages.page(0), Err(PdfError::NoSuchPage { .. })));
    }

    #[test]
    fn what_is_not_a_pdf_is_unreadable() {
        let error = TextPages::open(b"just some words".to_vec()).err().unwrap();
        assert!(error.is_client_error(), "{error}");
    }
}
