//! File kinds and the one table from a name's extension to a kind and a media type, shared by
//! the drive (files its jobs make, entries of an unzipped archive) and its clients (what they
//! send as `type` and `mimeType`), so the two never disagree about a file.

/// The kind of a file. The spec names Video, Audio and Image and says PDFs and text files are
/// handled too; everything else is `Other`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub enum FileKind {
    Video,
    Audio,
    Image,
    Pdf,
    Text,
    Archive,
    Other,
}

impl FileKind {
    pub const ALL: [FileKind; 7] = [
        FileKind::Video,
        FileKind::Audio,
        FileKind::Image,
        FileKind::Pdf,
        FileKind::Text,
        FileKind::Archive,
        FileKind::Other,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            FileKind::Video => "Video",
            FileKind::Audio => "Audio",
            FileKind::Image => "Image",
            FileKind::Pdf => "Pdf",
            FileKind::Text => "Text",
            FileKind::Archive => "Archive",
            FileKind::Other => "Other",
        }
    }

    pub fn parse(s: &str) -> Option<FileKind> {
        FileKind::ALL.into_iter().find(|k| k.as_str() == s)
    }
}

/// How the drive reads a stored kind: a name it does not know is an error, never `Other`.
impl TryFrom<String> for FileKind {
    type Error = UnknownKind;

    fn try_from(s: String) -> Result<FileKind, UnknownKind> {
        FileKind::parse(&s).ok_or(UnknownKind(s))
    }
}

/// A kind's name [`FileKind::parse`] does not know.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnknownKind(pub String);

impl std::fmt::Display for UnknownKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "unknown file kind {:?}", self.0)
    }
}

impl std::error::Error for UnknownKind {}

/// The media type of bytes nothing more is known about.
pub const OCTET_STREAM: &str = "application/octet-stream";

/// Extension (lower case), kind and media type. Anything not listed is `Other`, sent as
/// [`OCTET_STREAM`].
const BY_EXTENSION: &[(&str, FileKind, &str)] = &[
    ("mp4", FileKind::Video, "video/mp4"),
    ("m4v", FileKind::Video, "video/x-m4v"),
    ("mov", FileKind::Video, "video/quicktime"),
    ("webm", FileKind::Video, "video/webm"),
    ("mkv", FileKind::Video, "video/x-matroska"),
    ("avi", FileKind::Video, "video/x-msvideo"),
    ("mp3", FileKind::Audio, "audio/mpeg"),
    ("m4a", FileKind::Audio, "audio/mp4"),
    ("aac", FileKind::Audio, "audio/aac"),
    ("wav", FileKind::Audio, "audio/wav"),
    ("flac", FileKind::Audio, "audio/flac"),
    ("ogg", FileKind::Audio, "audio/ogg"),
    ("oga", FileKind::Audio, "audio/ogg"),
    ("opus", FileKind::Audio, "audio/opus"),
    ("jpg", FileKind::Image, "image/jpeg"),
    ("jpeg", FileKind::Image, "image/jpeg"),
    ("png", FileKind::Image, "image/png"),
    ("gif", FileKind::Image, "image/gif"),
    ("webp", FileKind::Image, "image/webp"),
    ("bmp", FileKind::Image, "image/bmp"),
    ("heic", FileKind::Image, "image/heic"),
    ("avif", FileKind::Image, "image/avif"),
    ("tif", FileKind::Image, "image/tiff"),
    ("tiff", FileKind::Image, "image/tiff"),
    ("svg", FileKind::Image, "image/svg+xml"),
    ("heif", FileKind::Image, "image/heif"),
    // Camera RAW: read by the preview the camera embeds.
    ("dng", FileKind::Image, "image/x-adobe-dng"),
    ("cr2", FileKind::Image, "image/x-canon-cr2"),
    ("nef", FileKind::Image, "image/x-nikon-nef"),
    ("arw", FileKind::Image, "image/x-sony-arw"),
    ("pdf", FileKind::Pdf, "application/pdf"),
    ("txt", FileKind::Text, "text/plain"),
    ("log", FileKind::Text, "text/plain"),
    ("md", FileKind::Text, "text/markdown"),
    ("csv", FileKind::Text, "text/csv"),
    ("json", FileKind::Text, "application/json"),
    ("html", FileKind::Text, "text/html"),
    ("htm", FileKind::Text, "text/html"),
    ("srt", FileKind::Text, "application/x-subrip"),
    ("vtt", FileKind::Text, "text/vtt"),
    ("xml", FileKind::Text, "application/xml"),
    ("yaml", FileKind::Text, "application/yaml"),
    ("yml", FileKind::Text, "application/yaml"),
    ("toml", FileKind::Text, "application/toml"),
    ("zip", FileKind::Archive, "application/zip"),
    ("tar", FileKind::Archive, "application/x-tar"),
    ("gz", FileKind::Archive, "application/gzip"),
    ("tgz", FileKind::Archive, "application/gzip"),
    ("7z", FileKind::Archive, "application/x-7z-compressed"),
    ("rar", FileKind::Archive, "application/vnd.rar"),
];

/// The table itself: extension, kind, media type (the app's uploads name files by it too).
pub fn by_extension() -> impl Iterator<Item = (&'static str, FileKind, &'static str)> {
    BY_EXTENSION.iter().copied()
}

/// Every media type the table above names, and [`OCTET_STREAM`] (bytes kept as they are), in
/// the table's order without repeats: what the drive knows a file to be.
pub fn known_media_types() -> Vec<&'static str> {
    let mut known: Vec<&'static str> = Vec::new();
    for &(_, _, mime) in BY_EXTENSION.iter() {
        if !known.contains(&mime) {
            known.push(mime);
        }
    }
    known.push(OCTET_STREAM);
    known
}

/// `mime` without its parameters, in lower case: `Text/Plain; charset=utf-8` is `text/plain`.
pub fn essence(mime: &str) -> String {
    mime.split(';')
        .next()
        .unwrap_or_default()
        .trim()
        .to_ascii_lowercase()
}

/// Whether a file of media type `mime` is text to read as it is stored: every `text/*`, and
/// the structured kinds written as text (JSON, XML and SVG, YAML, TOML, subtitles). Any
/// parameters (`; charset=utf-8`) are ignored.
pub fn is_text_type(mime: &str) -> bool {
    let essence = essence(mime);
    essence.starts_with("text/")
        || essence.ends_with("+json")
        || essence.ends_with("+xml")
        || matches!(
            essence.as_str(),
            "application/json"
                | "application/xml"
                | "application/yaml"
                | "application/x-yaml"
                | "application/toml"
                | "application/x-subrip"
                | "application/javascript"
                | "application/x-sh"
                | "application/sql"
        )
}

/// The kind and media type of a file named `name`, from its extension.
pub fn for_name(name: &str) -> (FileKind, &'static str) {
    let extension = name
        .rsplit_once('.')
        .map(|(_, e)| e.to_ascii_lowercase())
        .unwrap_or_default();
    BY_EXTENSION
        .iter()
        .find(|(e, _, _)| *e == extension)
        .map_or((FileKind::Other, OCTET_STREAM), |&(_, kind, mime)| (kind, mime))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn extensions_tell_kind_and_media_type() {
        assert_eq!(for_name("Clip.MP4"), (FileKind::Video, "video/mp4"));
        assert_eq!(for_name("clip.avi"), (FileKind::Video, "video/x-msvideo"));
        assert_eq!(for_name("notes.txt"), (FileKind::Text, "text/plain"));
        assert_eq!(for_name("scan.pdf"), (FileKind::Pdf, "application/pdf"));
        assert_eq!(for_name("a.tar.gz"), (FileKind::Archive, "application/gzip"));
        assert_eq!(for_name("blob.bin"), (FileKind::Other, OCTET_STREAM));
        assert_eq!(for_name("README"), (FileKind::Other, OCTET_STREAM));
    }

    #[test]
    fn known_media_types_are_the_table_s_once_each_and_any_bytes() {
        let known = known_media_types();
        assert!(known.contains(&"image/jpeg") && known.contains(&"application/pdf"));
        assert_eq!(known.iter().filter(|m| **m == "application/gzip").count(), 1);
        assert_eq!(known.last(), Some(&OCTET_STREAM));
        assert_eq!(essence(" Text/Plain; charset=utf-8"), "text/plain");
    }

    #[test]
    fn text_types_are_read_as_text() {
        for mime in [
            "text/plain",
            "text/csv; charset=utf-8",
            "application/json",
            "image/svg+xml",
            "application/x-subrip",
        ] {
            assert!(is_text_type(mime), "{mime}");
        }
        for mime in [
            "image/png",
            "application/pdf",
            OCTET_STREAM,
            "application/zip",
            "",
        ] {
            assert!(!is_text_type(mime), "{mime}");
        }
        // Every text kind of the table is read as text.
        for (extension, kind, mime) in BY_EXTENSION {
            assert_eq!(
                *kind == FileKind::Text,
                is_text_type(mime) && *extension != "svg",
                "{extension}"
            );
        }
    }

    #[test]
    fn a_stored_kind_it_does_not_know_is_an_error_not_other() {
        assert_eq!(FileKind::try_from("Audio".to_string()), Ok(FileKind::Audio));
        let bogus = FileKind::try_from("Bogus".to_string()).unwrap_err();
        assert_eq!(bogus.to_string(), r#"unknown file kind "Bogus""#);
    }

    #[test]
    fn every_extension_is_listed_once() {
        for (i, (extension, _, _)) in BY_EXTENSION.iter().enumerate() {
            assert!(
                !BY_EXTENSION[i + 1..].iter().any(|(e, _, _)| e == extension),
                "{extension}"
            );
        }
    }

    #[test]
    fn kinds_read_back() {
        for kind in FileKind::ALL {
            assert_eq!(FileKind::parse(kind.as_str()), Some(kind));
        }
    }
}
