//! Printed words out of pictures and scanned pages, with the system's Tesseract (Debian's
//! `tesseract-ocr`, English), in process.
//!
//! A [`Reader`] is one Tesseract engine: [`Reader::read`] takes a grey or RGB picture and gives its
//! [`Text`] (paragraphs of lines, each with Tesseract's confidence; lines it was unsure of are left
//! out). [`Readers`] holds several and reads pages on that many threads, giving the texts back in
//! the pages' order.
//!
//! At run time Tesseract reads one file, `eng.traineddata`, from the data folder
//! ([`TESSDATA`] unless another is given); nothing else, and it writes nothing.

mod page;
mod readers;
mod text;

use std::ffi::CString;
use std::path::{Path, PathBuf};

use tesseract_plumbing::TessBaseApi;
use tesseract_plumbing::tesseract_sys::TessPageSegMode_PSM_AUTO;

pub use page::{MAX_PIXELS, MAX_SIDE, Page};
pub use readers::Readers;
pub use text::{Line, MIN_LINE_CONFIDENCE, Paragraph, Text};

/// Where Debian's `tesseract-ocr-eng` puts the English model.
pub const TESSDATA: &str = "/usr/share/tesseract-ocr/5/tessdata";

/// The model read: English.
pub const LANGUAGE: &str = "eng";

#[derive(Debug, thiserror::Error)]
pub enum OcrError {
    #[error("cannot read Tesseract's model {}", .path.display())]
    Model { path: PathBuf, source: std::io::Error },
    #[error("Tesseract could not start with the model in {}", .tessdata.display())]
    Init { tessdata: PathBuf },
    #[error("Tesseract refused the picture")]
    Picture(#[from] tesseract_plumbing::TessBaseApiSetImageSafetyError),
    #[error("Tesseract failed to recognise the picture")]
    Recognise(#[from] tesseract_plumbing::TessBaseApiRecogniseError),
    #[error("Tesseract gave no result")]
    Result(#[from] tesseract_plumbing::TessBaseApiGetTsvTextError),
    #[error("Tesseract's result is not UTF-8")]
    Utf8(#[from] std::str::Utf8Error),
}

/// One Tesseract engine with the English model loaded (about 0.1 s and 20 MB to make; keep it
/// for many pictures). Not shared between threads: [`Readers`] holds one per thread.
pub struct Reader {
    api: TessBaseApi,
}

impl std::fmt::Debug for Reader {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Reader")
    }
}

impl Reader {
    /// Loads the English model from `tessdata` (a folder holding `eng.traineddata`), or from
    /// [`TESSDATA`]. The folder is always given to Tesseract, so `TESSDATA_PREFIX` plays no part.
    pub fn new(tessdata: Option<&Path>) -> Result<Reader, OcrError> {
        let tessdata = tessdata.unwrap_or(Path::new(TESSDATA));
        // Tesseract only says that it failed: look for the model first to say why.
        let model = tessdata.join(format!("{LANGUAGE}.traineddata"));
        std::fs::File::open(&model).map_err(|source| OcrError::Model { path: model, source })?;
        let init = || OcrError::Init {
            tessdata: tessdata.to_path_buf(),
        };
        let path = CString::new(tessdata.as_os_str().as_encoded_bytes()).map_err(|_| init())?;
        let language = CString::new(LANGUAGE).expect("no NUL in a constant");
        let mut api = TessBaseApi::create();
        api.init_2(Some(&path), Some(&language)).map_err(|_| init())?;
        // The API's default is one block of text; the `tesseract` command's, kept here, finds the
        // page's columns and blocks itself.
        api.set_page_seg_mode(TessPageSegMode_PSM_AUTO);
        Ok(Reader { api })
    }

    /// Reads the words in `picture`. A picture over [`MAX_PIXELS`] or [`MAX_SIDE`] is read from a
    /// copy shrunk to fit; one too small to hold a letter gives no text. Text on its side is
    /// found as it is; text upside down is read again turned half round (see below).
    pub fn read(&mut self, picture: &impl Page) -> Result<Text, OcrError> {
        let Some(fitted) = page::fit(picture) else {
            return Ok(Text::default());
        };
        let (text, confidence) = self.recognise(&fitted)?;
        match confidence {
            // Tesseract (without its orientation model) takes upside-down text for garbage it is
            // unsure of; a page of such reads is tried the other way up, and the surer kept.
            Some(confidence) if confidence < MIN_LINE_CONFIDENCE => {
                let (turned, turned_confidence) = self.recognise(&fitted.turned_half_round())?;
                Ok(if turned_confidence > Some(confidence) {
                    turned
                } else {
                    text
                })
            }
            _ => Ok(text),
        }
    }

    fn recognise(&mut self, pixels: &page::Pixels) -> Result<(Text, Option<f32>), OcrError> {
        readers::limit_openmp();
        let (data, width, height, channels) = pixels.as_raw();
        let (width, height) = (width as i32, height as i32);
        self.api
            .set_image(data, width, height, channels as i32, width * channels as i32)?;
        self.api.recognize()?;
        let tsv = self.api.get_tsv_text(0)?;
        Ok(Text::from_tsv(tsv.as_ref().to_str()?))
    }
}
