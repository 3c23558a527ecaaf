//! Reads pictures and prints their text, a form feed after each page, as the `tesseract`
//! command does: `read [--threads N] PICTURE...`. Our side of `scripts/bench ocr`.

use std::num::NonZeroUsize;
use std::path::PathBuf;

use drive_ocr::Readers;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1).peekable();
    let mut threads = NonZeroUsize::MIN;
    if args.peek().map(String::as_str) == Some("--threads") {
        threads = args.nth(1).ok_or("--threads takes a number")?.parse()?;
    }
    let pictures: Vec<PathBuf> = args.map(PathBuf::from).collect();
    let mut readers = Readers::new(None, threads)?;
    // Each picture is decoded on the thread that reads it.
    let texts = readers.map(pictures.iter(), |reader, path| {
        let picture = image::open(path).map_err(|error| format!("{}: {error}", path.display()))?;
        reader
            .read(&picture.into_luma8())
            .map_err(|error| format!("{}: {error}", path.display()))
    });
    for text in texts {
        print!("{}\n\u{c}", text?);
    }
    Ok(())
}
