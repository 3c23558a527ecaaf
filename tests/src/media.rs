//! Media made and read back with the `ffmpeg` and `ffprobe` commands (installed by
//! `scripts/lib.sh`): inputs for the audio and video tests, and an independent check of what
//! the drive wrote. Also HEIC and AVIF pictures made by `heif-enc` (libheif's examples, also
//! installed there), and camera RAW files (DNG) written here around an embedded preview.

use std::path::Path;
use std::process::Command;

use lopdf::content::{Content, Operation};
use lopdf::{Dictionary, Document, Object, Stream, dictionary};
use serde_json::Value;

/// Runs `ffmpeg` with `args`, writing a file with `extension`; answers its bytes.
pub fn ffmpeg(args: &[&str], extension: &str) -> Vec<u8> {
    let dir = tempfile::tempdir().expect("a temporary folder");
    let path = dir.path().join(format!("made.{extension}"));
    let out = Command::new("ffmpeg")
        .args(["-nostdin", "-v", "error", "-y"])
        .args(args)
        .arg(&path)
        .output()
        .expect("ffmpeg runs");
    assert!(
        out.status.success(),
        "ffmpeg {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    std::fs::read(&path).expect("ffmpeg wrote its output")
}

/// A HEIF picture of the PNG or JPEG `source`, made by `heif-enc`: HEIC (H.265), or AVIF (AV1)
/// when `avif`.
pub fn heif(source: &[u8], avif: bool) -> Vec<u8> {
    let dir = tempfile::tempdir().expect("a temporary folder");
    // heif-enc tells its input's format by the name.
    let input = dir.path().join(if source.starts_with(b"\x89PNG") {
        "source.png"
    } else {
        "source.jpg"
    });
    std::fs::write(&input, source).expect("the source is written");
    let output = dir.path().join(if avif { "made.avif" } else { "made.heic" });
    let mut command = Command::new("heif-enc");
    if avif {
        command.arg("--avif");
    }
    let out = command
        .arg("-o")
        .arg(&output)
        .arg(&input)
        .output()
        .expect("heif-enc runs");
    assert!(
        out.status.success(),
        "heif-enc: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    std::fs::read(&output).expect("heif-enc wrote its output")
}

/// A little-endian DNG: IFD0 with the orientation "turn a quarter right" (6), the DNG
/// version and a SubIFD holding `preview` as a JPEG, as cameras store theirs.
pub fn dng(preview: &[u8]) -> Vec<u8> {
    let entry = |tag: u16, kind: u16, count: u32, value: u32| {
        let mut e = tag.to_le_bytes().to_vec();
        e.extend(kind.to_le_bytes());
        e.extend(count.to_le_bytes());
        e.extend(value.to_le_bytes());
        e
    };
    let ifd0 = 8u32;
    let sub = ifd0 + 2 + 3 * 12 + 4;
    let data = sub + 2 + 3 * 12 + 4;
    let mut out = vec![b'I', b'I', 42, 0];
    out.extend(ifd0.to_le_bytes());
    out.extend(3u16.to_le_bytes());
    out.extend(entry(0x0112, 3, 1, 6));
    out.extend(entry(0x014A, 4, 1, sub));
    out.extend(entry(0xC612, 1, 4, 0x0000_0401));
    out.extend(0u32.to_le_bytes());
    out.extend(3u16.to_le_bytes());
    out.extend(entry(0x00FE, 4, 1, 1));
    out.extend(entry(0x0201, 4, 1, data));
    out.extend(entry(0x0202, 4, 1, preview.len() as u32));
    out.extend(0u32.to_le_bytes());
    out.extend(preview);
    out
}

/// An mp4 of `seconds` of the lavfi video `source` (its size and rate in it, like
/// `testsrc2=size=320x240:rate=25`): H.264 with a keyframe every 25 frames, and a 440 Hz tone in
/// AAC; `extra` goes before the output (`-metadata title=…`).
pub fn video_of(source: &str, seconds: f64, extra: &[&str]) -> Vec<u8> {
    let seconds = seconds.to_string();
    let mut args = vec![
        "-f",
        "lavfi",
        "-i",
        source,
        "-f",
        "lavfi",
        "-i",
        "sine=frequency=440:sample_rate=48000",
        "-t",
        &seconds,
        "-c:v",
        "libx264",
        "-preset",
        "ultrafast",
        "-pix_fmt",
        "yuv420p",
        "-g",
        "25",
        "-c:a",
        "aac",
    ];
    args.extend(extra);
    ffmpeg(&args, "mp4")
}

/// `ffprobe -show_format -show_streams` of `bytes` saved with `extension`, as JSON.
pub fn ffprobe(bytes: &[u8], extension: &str) -> Value {
    ffprobe_with(bytes, extension, &[])
}

/// [`ffprobe`] with `extra` options before the input (like `-count_frames`).
pub fn ffprobe_with(bytes: &[u8], extension: &str, extra: &[&str]) -> Value {
    let dir = tempfile::tempdir().expect("a temporary folder");
    let path = dir.path().join(format!("probed.{extension}"));
    std::fs::write(&path, bytes).expect("write the file to probe");
    ffprobe_file(&path, extra)
}

/// `ffprobe -show_format -show_streams` of the file at `path`, `extra` before it, as JSON.
pub fn ffprobe_file(path: &Path, extra: &[&str]) -> Value {
    let out = Command::new("ffprobe")
        .args(["-v", "error", "-show_format", "-show_streams", "-of", "json"])
        .args(extra)
        .arg(path)
        .output()
        .expect("ffprobe runs");
    assert!(
        out.status.success(),
        "ffprobe on {}: {}",
        path.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("ffprobe writes JSON")
}

/// The container's duration in seconds.
pub fn duration(probe: &Value) -> f64 {
    probe["format"]["duration"]
        .as_str()
        .and_then(|d| d.parse().ok())
        .unwrap_or_else(|| panic!("no duration in {probe}"))
}

/// The first stream of `kind` (`video` or `audio`).
pub fn stream<'a>(probe: &'a Value, kind: &str) -> &'a Value {
    probe["streams"]
        .as_array()
        .and_then(|s| s.iter().find(|s| s["codec_type"] == kind))
        .unwrap_or_else(|| panic!("no {kind} stream in {probe}"))
}

/// `text` spoken by espeak-ng (American English, 150 words a minute) as a WAV: speech whose
/// words the test knows (scripts/lib.sh installs espeak-ng).
pub fn speak(text: &str) -> Vec<u8> {
    let dir = tempfile::tempdir().expect("a temporary folder");
    let path = dir.path().join("spoken.wav");
    let out = Command::new("espeak-ng")
        .args(["-v", "en-us", "-s", "150", "-w"])
        .arg(&path)
        .arg(text)
        .output()
        .expect("espeak-ng runs");
    assert!(
        out.status.success(),
        "espeak-ng: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    std::fs::read(&path).expect("espeak-ng wrote a WAV")
}

/// A page as a scanner gives it: `lines` printed in DejaVu Sans on a white page of 1240 × 1754
/// pixels (A4 at 150 dpi), turned a little and speckled; a PNG.
pub fn scanned_page(lines: &[&str]) -> Vec<u8> {
    let dir = tempfile::tempdir().expect("a temporary folder");
    let text = dir.path().join("page.txt");
    std::fs::write(&text, lines.join("\n")).expect("writing the page's text");
    let draw = format!(
        "drawtext=fontfile=/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf:textfile={}:fontsize=30:\
         fontcolor=black:x=110:y=160:line_spacing=18,rotate=0.6*PI/180:fillcolor=white,noise=alls=10:allf=u",
        text.display()
    );
    ffmpeg(
        &[
            "-f",
            "lavfi",
            "-i",
            "color=c=white:s=1240x1754",
            "-vf",
            &draw,
            "-frames:v",
            "1",
        ],
        "png",
    )
}

/// A PDF page: its size in points and its content.
pub struct Page {
    pub width: i64,
    pub height: i64,
    pub operations: Vec<Operation>,
}

/// A PDF of `pages` sharing one resource dictionary: Helvetica as F1 and the XObjects
/// `xobjects` adds.
pub fn pdf(pages: Vec<Page>, xobjects: impl FnOnce(&mut Document) -> Dictionary) -> Vec<u8> {
    let mut doc = Document::with_version("1.5");
    let xobjects = xobjects(&mut doc);
    let tree = doc.new_object_id();
    let font = doc.add_object(dictionary! {
        "Type" => "Font", "Subtype" => "Type1", "BaseFont" => "Helvetica",
    });
    let resources = doc.add_object(dictionary! {
        "Font" => dictionary! { "F1" => font },
        "XObject" => xobjects,
    });
    let mut kids = Vec::new();
    for page in pages {
        let content = Content {
            operations: page.operations,
        }
        .encode()
        .expect("encode content");
        let content = doc.add_object(Stream::new(dictionary! {}, content));
        let id = doc.add_object(dictionary! {
            "Type" => "Page",
            "Parent" => tree,
            "Contents" => content,
            "Resources" => resources,
            "MediaBox" => vec![0.into(), 0.into(), page.width.into(), page.height.into()],
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
    doc.save_to(&mut out).expect("save PDF");
    out
}

/// A PDF with a text layer: each page's lines in Helvetica, top down, on 600 × 800 pt pages.
pub fn text_pdf(pages: &[Vec<String>]) -> Vec<u8> {
    let pages = pages
        .iter()
        .map(|lines| {
            let mut operations = vec![
                Operation::new("BT", vec![]),
                Operation::new("Tf", vec!["F1".into(), 10.into()]),
                Operation::new("TL", vec![12.into()]),
                Operation::new("Td", vec![20.into(), 780.into()]),
            ];
            for (n, line) in lines.iter().enumerate() {
                let show = if n == 0 { "Tj" } else { "'" };
                operations.push(Operation::new(show, vec![Object::string_literal(line.as_str())]));
            }
            operations.push(Operation::new("ET", vec![]));
            Page {
                width: 600,
                height: 800,
                operations,
            }
        })
        .collect();
    pdf(pages, |_| Dictionary::new())
}
