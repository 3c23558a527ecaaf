//! Writing media: [`transcode`] runs a [`Pipeline`] into encoders and a muxer; [`remux`]
//! copies streams without decoding them (fast cuts, stripping metadata).

use std::path::Path;

use ffmpeg::util::channel_layout::ChannelLayout;
use ffmpeg::util::format::{Pixel, Sample};
use ffmpeg::{Dictionary, Packet, Rational, codec, encoder, format, media};

use super::graph::{AudioShape, Filtered, Flow, Outputs, Pipeline, all_threads};
use super::source::Source;
use super::{AvError, Input, ffmpeg};

/// A video encoder by FFmpeg's name (`libx264`, `libx265`, `libvpx-vp9`, `gif`) with its
/// private options (`crf`, `preset`…) and, for a size target, a bit rate.
#[derive(Debug, Clone)]
pub struct VideoEncoding {
    pub encoder: &'static str,
    pub pixel: Pixel,
    pub options: Vec<(&'static str, String)>,
    pub bit_rate: Option<usize>,
}

/// An audio encoder by FFmpeg's name (`aac`, `libmp3lame`, `flac`, `pcm_s16le`, `libopus`,
/// `libvorbis`) and what it is fed.
#[derive(Debug, Clone)]
pub struct AudioEncoding {
    pub encoder: &'static str,
    pub format: Sample,
    pub rate: u32,
    pub bit_rate: Option<usize>,
}

/// Where a transcode writes: a file in the muxer's format.
#[derive(Debug, Clone)]
pub struct Target<'a> {
    pub path: &'a Path,
    /// FFmpeg's short name: `mp4`, `mov`, `webm`, `mp3`, `ipod` (m4a), `wav`, `flac`, `ogg`, `gif`.
    pub muxer: &'static str,
    pub video: Option<VideoEncoding>,
    pub audio: Option<AudioEncoding>,
}

/// What a transcode wrote.
#[derive(Debug, Clone, Copy, Default)]
pub struct Written {
    pub width: u32,
    pub height: u32,
    pub frames: u64,
    pub samples: u64,
}

struct Encoding<E> {
    encoder: E,
    stream: usize,
    time_base: Rational,
}

/// Runs `spec` over `sources` into `target`; `progress` hears 0..1 from the media clock.
pub fn transcode(
    sources: Vec<Source>,
    spec: &str,
    target: &Target,
    progress: &mut dyn FnMut(f64),
) -> Result<Written, AvError> {
    let video_codec = target.video.as_ref().map(|v| find(v.encoder)).transpose()?;
    let audio_codec = target.audio.as_ref().map(|a| find(a.encoder)).transpose()?;
    let layout = ChannelLayout::STEREO;
    let frame_size = |codec: &codec::codec::Codec| -> Option<u32> {
        let variable = codec
            .capabilities()
            .contains(codec::capabilities::Capabilities::VARIABLE_FRAME_SIZE);
        // Opened below with the same settings; these encoders' frame sizes are fixed by codec.
        (!variable).then(|| match codec.id() {
            codec::Id::AAC => 1024,
            codec::Id::MP3 => 1152,
            codec::Id::OPUS => 960,
            codec::Id::VORBIS => 64,
            _ => 1024,
        })
    };
    let outputs = Outputs {
        video: target.video.as_ref().map(|v| v.pixel),
        audio: target.audio.as_ref().map(|a| AudioShape {
            format: a.format,
            rate: a.rate,
            layout,
            frame_size: audio_codec.as_ref().and_then(frame_size),
        }),
    };
    let mut pipeline = Pipeline::new(sources, spec, outputs)?;
    let mut output = format::output_as(&target.path, target.muxer)
        .map_err(|e| AvError::machine(&format!("creating {}", target.path.display()), e))?;
    let global_header = output
        .format()
        .flags()
        .contains(format::flag::Flags::GLOBAL_HEADER);
    let mut written = Written::default();

    let mut video = match (&target.video, video_codec) {
        (Some(settings), Some(codec)) => {
            let shape = pipeline.video_out().expect("the graph has a picture output");
            written.width = shape.width;
            written.height = shape.height;
            let mut context = codec::context::Context::new_with_codec(codec);
            all_threads(&mut context);
            let mut encoder = context
                .encoder()
                .video()
                .map_err(|e| AvError::machine("preparing the video encoder", e))?;
            encoder.set_width(shape.width);
            encoder.set_height(shape.height);
            encoder.set_format(settings.pixel);
            encoder.set_time_base(shape.time_base);
            encoder.set_frame_rate(Some(shape.frame_rate));
            encoder.set_aspect_ratio(shape.aspect);
            if let Some(rate) = settings.bit_rate {
                encoder.set_bit_rate(rate);
                encoder.set_max_bit_rate(rate * 3 / 2);
            }
            if global_header {
                encoder.set_flags(codec::flag::Flags::GLOBAL_HEADER);
            }
            let mut options = Dictionary::new();
            for (key, value) in &settings.options {
                options.set(key, value);
            }
            let opened = encoder
                .open_as_with(codec, options)
                .map_err(|e| AvError::machine(&format!("opening {}", settings.encoder), e))?;
            let mut stream = output
                .add_stream(codec)
                .map_err(|e| AvError::machine("adding the video stream", e))?;
            stream.set_parameters(&opened);
            stream.set_time_base(shape.time_base);
            Some(Encoding {
                encoder: opened,
                stream: stream.index(),
                time_base: shape.time_base,
            })
        }
        _ => None,
    };
    let mut audio = match (&target.audio, audio_codec) {
        (Some(settings), Some(codec)) => {
            let time_base = pipeline.audio_time_base().expect("the graph has a sound output");
            let mut encoder = codec::context::Context::new_with_codec(codec)
                .encoder()
                .audio()
                .map_err(|e| AvError::machine("preparing the audio encoder", e))?;
            encoder.set_rate(settings.rate as i32);
            encoder.set_channel_layout(layout);
            encoder.set_format(settings.format);
            encoder.set_time_base(time_base);
            if let Some(rate) = settings.bit_rate {
                encoder.set_bit_rate(rate);
            }
            if global_header {
                encoder.set_flags(codec::flag::Flags::GLOBAL_HEADER);
            }
            let opened = encoder
                .open_as(codec)
                .map_err(|e| AvError::machine(&format!("opening {}", settings.encoder), e))?;
            let mut stream = output
                .add_stream(codec)
                .map_err(|e| AvError::machine("adding the audio stream", e))?;
            stream.set_parameters(&opened);
            stream.set_time_base(time_base);
            Some(Encoding {
                encoder: opened,
                stream: stream.index(),
                time_base,
            })
        }
        _ => None,
    };
    let mut header = Dictionary::new();
    if matches!(target.muxer, "mp4" | "mov" | "ipod") {
        // The index up front, so players can start before the whole file arrives.
        header.set("movflags", "+faststart");
    }
    output
        .write_header_with(header)
        .map_err(|e| AvError::machine("writing the header", e))?;
    let mut muxer = Muxer {
        time_bases: output.streams().map(|s| s.time_base()).collect(),
        output,
        packet: Packet::empty(),
    };
    pipeline.run(&mut |frame, done| {
        progress(done);
        match frame {
            Filtered::Video(picture) => {
                if let Some(v) = video.as_mut() {
                    // The encoder chooses picture types; the decoder's are no guide.
                    picture.set_kind(ffmpeg::picture::Type::None);
                    written.frames += 1;
                    encode(&mut v.encoder, v.stream, v.time_base, Some(picture), &mut muxer)?;
                }
            }
            Filtered::Audio(sound) => {
                if let Some(a) = audio.as_mut() {
                    written.samples += sound.samples() as u64;
                    encode(&mut a.encoder, a.stream, a.time_base, Some(sound), &mut muxer)?;
                }
            }
        }
        Ok(Flow::More)
    })?;
    if written.frames == 0 && written.samples == 0 {
        return Err(AvError::Input(
            "nothing in the file could be decoded in the span asked for".to_string(),
        ));
    }
    if let Some(v) = video.as_mut() {
        encode(&mut v.encoder, v.stream, v.time_base, None, &mut muxer)?;
    }
    if let Some(a) = audio.as_mut() {
        encode(&mut a.encoder, a.stream, a.time_base, None, &mut muxer)?;
    }
    let Muxer { mut output, .. } = muxer;
    output
        .write_trailer()
        .map_err(|e| AvError::machine("finishing the file", e))?;
    progress(1.0);
    Ok(written)
}

fn find(name: &str) -> Result<codec::codec::Codec, AvError> {
    encoder::find_by_name(name)
        .ok_or_else(|| AvError::Machine(format!("this machine's FFmpeg has no {name} encoder")))
}

/// The output file, with each stream's time base and a packet to reuse.
struct Muxer {
    output: format::context::Output,
    time_bases: Vec<Rational>,
    packet: Packet,
}

/// Sends `frame` to an encoder (or, with `None`, the end) and writes the packets that come out.
fn encode(
    encoder: &mut encoder::Encoder,
    stream: usize,
    time_base: Rational,
    frame: Option<&ffmpeg::Frame>,
    muxer: &mut Muxer,
) -> Result<(), AvError> {
    match frame {
        Some(frame) => encoder.send_frame(frame),
        None => encoder.send_eof(),
    }
    .map_err(|e| AvError::machine("encoding", e))?;
    while encoder.receive_packet(&mut muxer.packet).is_ok() {
        muxer.packet.set_stream(stream);
        muxer.packet.rescale_ts(time_base, muxer.time_bases[stream]);
        muxer
            .packet
            .write_interleaved(&mut muxer.output)
            .map_err(|e| AvError::machine("writing to the file", e))?;
    }
    Ok(())
}

/// Copies the picture and sound streams of `input` (from the keyframe at or before its
/// start, to its end) into `path` without decoding them. With `keep_metadata` false the
/// container's and streams' tags are left behind.
pub fn remux(
    input: &Input,
    path: &Path,
    muxer: &'static str,
    keep_metadata: bool,
    progress: &mut dyn FnMut(f64),
) -> Result<(), AvError> {
    let mut context = super::source::open(&input.location)?;
    let length = super::source::duration_of(&context);
    if length > 0.0 && input.start >= length {
        return Err(AvError::Input(format!(
            "it starts at {:.2} s but the file is {length:.2} s long",
            input.start
        )));
    }
    let mut output = format::output_as(&path, muxer)
        .map_err(|e| AvError::machine(&format!("creating {}", path.display()), e))?;
    let mut mapping = vec![None; context.nb_streams() as usize];
    for stream in context.streams() {
        let medium = stream.parameters().medium();
        if medium != media::Type::Video && medium != media::Type::Audio {
            continue;
        }
        // SAFETY: reads the disposition of an opened stream.
        let attached =
            unsafe { (*stream.as_ptr()).disposition & ffmpeg::ffi::AV_DISPOSITION_ATTACHED_PIC != 0 };
        if attached && !keep_metadata {
            continue;
        }
        let mut out = output
            .add_stream(encoder::find(codec::Id::None))
            .map_err(|e| AvError::machine("adding a stream", e))?;
        out.set_parameters(stream.parameters());
        // SAFETY: the codec tag of the source container may not fit the target's.
        unsafe {
            (*out.parameters().as_mut_ptr()).codec_tag = 0;
        }
        if keep_metadata {
            out.set_metadata(stream.metadata().to_owned());
        }
        mapping[stream.index()] = Some((out.index(), stream.time_base()));
    }
    if mapping.iter().all(Option::is_none) {
        return Err(AvError::Input("it has neither picture nor sound".to_string()));
    }
    let used: Vec<usize> = (0..mapping.len()).filter(|&i| mapping[i].is_some()).collect();
    super::source::read_only(&mut context, &used);
    if keep_metadata {
        output.set_metadata(context.metadata().to_owned());
    }
    let mut header = Dictionary::new();
    if matches!(muxer, "mp4" | "mov" | "ipod") {
        header.set("movflags", "+faststart");
    }
    output
        .write_header_with(header)
        .map_err(|e| AvError::machine("writing the header", e))?;
    let origin = {
        // SAFETY: reads a field of an opened format context.
        let start = unsafe { (*context.as_ptr()).start_time };
        if start == ffmpeg::ffi::AV_NOPTS_VALUE {
            0
        } else {
            start
        }
    };
    let base = f64::from(ffmpeg::ffi::AV_TIME_BASE);
    let seek_to = origin + (input.start * base) as i64;
    if input.start > 0.0 {
        context
            .seek(seek_to, ..seek_to)
            .map_err(|e| AvError::reading("seeking", e))?;
    }
    let stop = input.end.map(|e| origin as f64 / base + e);
    let total = input.end.unwrap_or(length) - input.start;
    // Every stream shifts by the same amount, the first timestamp copied, so they stay in sync.
    let mut shift: Option<f64> = None;
    let mut copied = 0u64;
    let out_time_bases: Vec<Rational> = output.streams().map(|s| s.time_base()).collect();
    for (stream, mut packet) in context.packets() {
        let Some((out_index, time_base)) = mapping[stream.index()] else {
            continue;
        };
        let Some(pts) = packet.pts().or(packet.dts()) else {
            continue;
        };
        let at = pts as f64 * f64::from(time_base);
        if let Some(stop) = stop
            && at >= stop
        {
            continue;
        }
        let first = *shift.get_or_insert(at);
        let offset = ((first / f64::from(time_base)).round()) as i64;
        packet.set_pts(packet.pts().map(|p| p - offset));
        packet.set_dts(packet.dts().map(|d| d - offset));
        packet.set_position(-1);
        packet.set_stream(out_index);
        packet.rescale_ts(time_base, out_time_bases[out_index]);
        packet
            .write_interleaved(&mut output)
            .map_err(|e| AvError::machine("writing to the file", e))?;
        copied += 1;
        if total > 0.0 {
            progress(((at - first) / total).clamp(0.0, 1.0));
        }
    }
    if copied == 0 {
        return Err(AvError::Input("nothing in the span asked for".to_string()));
    }
    output
        .write_trailer()
        .map_err(|e| AvError::machine("finishing the file", e))?;
    progress(1.0);
    Ok(())
}
