//! A minimal PDF writer that streams objects straight to the output.
//!
//! `from_pictures` builds documents from scratch whose bulk is picture data; writing each picture
//! as soon as it is read keeps one picture in memory at a time, where `lopdf` would hold the
//! whole document until it is saved.

use std::io::{self, Write};

pub(crate) struct PdfWriter<W: Write> {
    out: W,
    /// Bytes written so far: the offset of the next object.
    position: u64,
    /// The offset of each object, by object number less one; `None` until written.
    offsets: Vec<Option<u64>>,
}

impl<W: Write> PdfWriter<W> {
    /// Starts a PDF 1.4 file (the version that brought soft masks, i.e. transparency).
    pub(crate) fn new(out: W) -> io::Result<Self> {
        let mut writer = PdfWriter {
            out,
            position: 0,
            offsets: Vec::new(),
        };
        // The comment of high bytes tells transfer tools that the file is binary.
        writer.write_raw(b"%PDF-1.4\n%\xE2\xE3\xCF\xD3\n")?;
        Ok(writer)
    }

    /// Sets aside an object number, to be written later with [`Self::object`] or
    /// [`Self::stream`]; objects may refer to it before then.
    pub(crate) fn reserve(&mut self) -> u32 {
        self.offsets.push(None);
        self.offsets.len() as u32
    }

    /// Writes object `id`, given the text of its value (a dictionary, say).
    pub(crate) fn object(&mut self, id: u32, value: &str) -> io::Result<()> {
        self.start(id)?;
        self.write_raw(value.as_bytes())?;
        self.write_raw(b"\nendobj\n")
    }

    /// Writes a stream object: `entries` are its dictionary entries other than /Length.
    pub(crate) fn stream(&mut self, id: u32, entries: &str, data: &[u8]) -> io::Result<()> {
        self.start(id)?;
        self.write_raw(format!("<< {entries} /Length {} >>\nstream\n", data.len()).as_bytes())?;
        self.write_raw(data)?;
        self.write_raw(b"\nendstream\nendobj\n")
    }

    /// Writes the cross-reference table and trailer, and returns the output.
    pub(crate) fn finish(mut self, root: u32) -> io::Result<W> {
        let xref_offset = self.position;
        let mut table = format!("xref\n0 {}\n0000000000 65535 f \n", self.offsets.len() + 1);
        for (index, offset) in self.offsets.iter().enumerate() {
            let offset = offset.ok_or_else(|| {
                io::Error::other(format!("object {} was reserved but never written", index + 1))
            })?;
            // Each entry is exactly 20 bytes, the line end included.
            table.push_str(&format!("{offset:010} 00000 n \n"));
        }
        table.push_str(&format!(
            "trailer\n<< /Size {} /Root {root} 0 R >>\nstartxref\n{xref_offset}\n%%EOF\n",
            self.offsets.len() + 1
        ));
        self.write_raw(table.as_bytes())?;
        self.out.flush()?;
        Ok(self.out)
    }

    fn start(&mut self, id: u32) -> io::Result<()> {
        let slot = id.checked_sub(1).and_then(|i| self.offsets.get_mut(i as usize));
        match slot {
            Some(offset @ None) => *offset = Some(self.position),
            _ => {
                return Err(io::Error::other(format!(
                    "object {id} was not reserved or is written twice"
                )));
            }
        }
        self.write_raw(format!("{id} 0 obj\n").as_bytes())
    }

    fn write_raw(&mut self, bytes: &[u8]) -> io::Result<()> {
        self.out.write_all(bytes)?;
        self.position += bytes.len() as u64;
        Ok(())
    }
}

/// A number as PDF writes it: no exponent, at most three decimals, no trailing zeros.
pub(crate) fn number(value: f32) -> String {
    let text = format!("{value:.3}");
    let text = text.trim_end_matches('0').trim_end_matches('.');
    if text == "-0" {
        "0".to_string()
    } else {
        text.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_are_short() {
        assert_eq!(number(595.0), "595");
        assert_eq!(number(0.5), "0.5");
        assert_eq!(number(-0.0001), "0");
        assert_eq!(number(1.23456), "1.235");
    }

    #[test]
    fn the_cross_reference_table_points_at_each_object() {
        let mut writer = PdfWriter::new(Vec::new()).unwrap();
        let catalog = writer.reserve();
        let pages = writer.reserve();
        writer
            .object(pages, "<< /Type /Pages /Kids [] /Count 0 >>")
            .unwrap();
        writer
            .object(catalog, &format!("<< /Type /Catalog /Pages {pages} 0 R >>"))
            .unwrap();
        let bytes = writer.finish(catalog).unwrap();
        let xref = bytes.windows(5).position(|w| w == b"xref\n").unwrap();
        let table = String::from_utf8(bytes[xref..].to_vec()).unwrap();
        for (line, id) in table.lines().skip(3).take(2).zip([catalog, pages]) {
            let offset: usize = line[..10].parse().unwrap();
            assert!(
                bytes[offset..].starts_with(format!("{id} 0 obj").as_bytes()),
                "{line}"
            );
        }
    }

    #[test]
    fn an_unwritten_object_is_an_error() {
        let mut writer = PdfWriter::new(Vec::new()).unwrap();
        let catalog = writer.reserve();
        assert!(writer.finish(catalog).is_err());
    }
}
