//! Opening an input: the one place FFmpeg opens a file or a URL, and what is read off an opened
//! container before its streams are decoded.

use ffmpeg::format;

use super::{AvError, Input, ffmpeg};

/// An input opened for reading (its container's header read and its streams found) with the
/// span of it to use. A job that must know what a file holds before it builds its graph
/// probes the source it then runs, so the store is asked for the header once.
pub struct Source {
    pub(crate) context: format::context::Input,
    pub(crate) start: f64,
    pub(crate) end: Option<f64>,
}

impl Input {
    pub fn open(&self) -> Result<Source, AvError> {
        Ok(Source {
            context: open(&self.location)?,
            start: self.start,
            end: self.end,
        })
    }
}

/// The demuxers an input may be read by: single-file containers of the drive's audio and
/// video, and its picture kinds (the reading takes a picture's size from FFmpeg). Each reads
/// only the bytes it is handed. Left out on purpose: `hls`, `dash`, `concat`, `image2` and
/// the like, which open further files or URLs that the bytes name (a playlist's segments,
/// a list's entries, a pattern's numbered pictures), and `sdp`/`rtsp`, which open network
/// streams. The `*_pipe` picture demuxers read one stream of bytes, never a file by name
/// as `image2` does.
const DEMUXERS: &str = "mov,matroska,avi,mpegts,mpeg,flv,asf,ogg,mp3,wav,flac,aac,aiff,caf,amr,\
                        png_pipe,jpeg_pipe,webp_pipe,gif,bmp_pipe,tiff_pipe";

/// Opens a location for reading, with reconnects for the store's HTTP. FFmpeg opens exactly
/// the object it is given: an uploaded file's bytes choose its demuxer, and some demuxers
/// fetch whatever those bytes name (an HLS playlist uploaded as `x.mp4` had the worker GET
/// its segment's URL), so only [`DEMUXERS`] may read it, and only the location's own
/// protocol may be opened at all.
pub(crate) fn open(location: &str) -> Result<format::context::Input, AvError> {
    super::init();
    let mut options = ffmpeg::Dictionary::new();
    let protocols = if location.starts_with("https://") {
        "https,tls,tcp"
    } else if location.starts_with("http://") {
        "http,tcp"
    } else {
        "file"
    };
    options.set("protocol_whitelist", protocols);
    options.set("format_whitelist", DEMUXERS);
    // mov follows a track's external data references (other files, by path or URL) only when
    // asked; off is its default, kept here so no upgrade or option can turn it on unseen.
    options.set("enable_drefs", "0");
    if protocols != "file" {
        options.set("reconnect", "1");
        options.set("reconnect_on_network_error", "1");
        options.set("reconnect_delay_max", "5");
    }
    format::input_with_dictionary(&location, options).map_err(|e| match e {
        // What FFmpeg answers when the format the bytes say is not on the list: our own
        // location and options are always valid.
        ffmpeg::Error::Other {
            errno: ffmpeg::util::error::EINVAL,
        } => AvError::Input(
            "the file could not be read as audio or video (its format is not one the drive opens)"
                .to_string(),
        ),
        e => AvError::reading("opening", e),
    })
}

/// Tells the demuxer to skip every stream but `used`, as the `ffmpeg` command does with the
/// streams it does not map: an mp4's pictures are then not even read when only its sound is
/// wanted, which over the store's HTTP saves reading most of the file.
pub(crate) fn read_only(context: &mut format::context::Input, used: &[usize]) {
    for index in 0..context.nb_streams() as usize {
        if !used.contains(&index) {
            // SAFETY: `index` is below the opened context's stream count.
            unsafe {
                (**(*context.as_mut_ptr()).streams.add(index)).discard =
                    ffmpeg::ffi::AVDiscard::AVDISCARD_ALL;
            }
        }
    }
}

/// The duration of an opened input in seconds (0 when the container does not say).
pub(crate) fn duration_of(context: &format::context::Input) -> f64 {
    let d = context.duration();
    if d > 0 {
        d as f64 / f64::from(ffmpeg::ffi::AV_TIME_BASE)
    } else {
        0.0
    }
}

pub(crate) fn origin_of(context: &format::context::Input) -> f64 {
    // SAFETY: reads a field of an opened format context.
    let start = unsafe { (*context.as_ptr()).start_time };
    if start == ffmpeg::ffi::AV_NOPTS_VALUE {
        0.0
    } else {
        start as f64 / f64::from(ffmpeg::ffi::AV_TIME_BASE)
    }
}
