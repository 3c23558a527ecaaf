//! The decode → filter loop. A [`Pipeline`] takes its inputs opened ([`Source`]s), decodes
//! the best video and audio stream of each, and pushes their frames through one libavfilter
//! graph written as text: input `i`'s picture is `[v{i}]` and its sound `[a{i}]` (already cut
//! to the input's span and starting at zero), and the graph ends in `[vout]` and/or `[aout]`.
//! Inputs are read one after another, in order, which is what `concat` wants and costs nothing
//! elsewhere.
//!
//! Memory stays at what the codecs and filters hold: frames are handed on as they leave
//! the graph.

use ffmpeg::codec::discard::Discard;
use ffmpeg::util::channel_layout::ChannelLayout;
use ffmpeg::util::format::{Pixel, Sample};
use ffmpeg::util::option::Settable;
use ffmpeg::{Frame, Rational, codec, decoder, filter, format, frame, media};

use super::source::{Source, duration_of, origin_of, read_only};
use super::{AvError, ffmpeg};

/// A frame leaving the graph (the receiver may change its properties before encoding it).
pub enum Filtered<'a> {
    Video(&'a mut frame::Video),
    Audio(&'a frame::Audio),
}

/// What the receiver of frames wants next.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Flow {
    More,
    /// Stop reading: it has what it needs (a still).
    Enough,
}

/// What the graph's outputs must carry.
#[derive(Debug, Clone, Copy, Default)]
pub struct Outputs {
    /// `[vout]`, in this pixel format.
    pub video: Option<Pixel>,
    /// `[aout]`, in this shape.
    pub audio: Option<AudioShape>,
}

#[derive(Debug, Clone, Copy)]
pub struct AudioShape {
    pub format: Sample,
    pub rate: u32,
    pub layout: ChannelLayout,
    /// Samples per frame, for encoders that take no other size.
    pub frame_size: Option<u32>,
}

/// The picture `[vout]` carries, known once the graph is configured.
#[derive(Debug, Clone, Copy)]
pub struct VideoOut {
    pub width: u32,
    pub height: u32,
    pub time_base: Rational,
    pub frame_rate: Rational,
    pub aspect: Rational,
}

struct Decoding<D> {
    stream: usize,
    decoder: D,
}

struct Opened {
    context: format::context::Input,
    video: Option<Decoding<decoder::Video>>,
    audio: Option<Decoding<decoder::Audio>>,
    /// The container's first timestamp, in seconds: spans count from here.
    origin: f64,
    start: f64,
    end: Option<f64>,
}

pub struct Pipeline {
    graph: filter::Graph,
    inputs: Vec<Opened>,
    outputs: Outputs,
    /// Seconds of media the inputs' spans hold, for progress.
    duration: f64,
}

/// Lets a codec use as many threads as it finds useful (FFmpeg's own default is one).
pub(crate) fn all_threads(context: &mut codec::context::Context) {
    context.set_threading(codec::threading::Config {
        kind: codec::threading::Type::Frame,
        count: 0,
        ..Default::default()
    });
}

fn threaded(stream: &format::stream::Stream) -> Result<codec::context::Context, AvError> {
    let mut context = codec::context::Context::from_parameters(stream.parameters())
        .map_err(|e| AvError::reading("reading the stream's parameters", e))?;
    all_threads(&mut context);
    Ok(context)
}

impl Pipeline {
    /// Builds the graph `spec` over `inputs` (see the module's documentation).
    pub fn new(inputs: Vec<Source>, spec: &str, outputs: Outputs) -> Result<Pipeline, AvError> {
        let mut graph = filter::Graph::new();
        let mut opened = Vec::with_capacity(inputs.len());
        let mut chains = Vec::new();
        let mut sources = Vec::new();
        let mut duration = 0.0;
        for (i, input) in inputs.into_iter().enumerate() {
            let mut context = input.context;
            let origin = origin_of(&context);
            let length = duration_of(&context);
            if length > 0.0 && input.start >= length {
                return Err(AvError::Input(format!(
                    "it starts at {:.2} s but the file is {length:.2} s long",
                    input.start
                )));
            }
            let end = input.end.map(|e| if length > 0.0 { e.min(length) } else { e });
            duration += end.unwrap_or(length) - input.start;
            let wants_video = spec.contains(&format!("[v{i}]"));
            let wants_audio = spec.contains(&format!("[a{i}]"));
            let span = trim_span(origin + input.start, end.map(|e| origin + e));
            let mut video = None;
            if wants_video {
                let stream = context
                    .streams()
                    .best(media::Type::Video)
                    .ok_or_else(|| AvError::Input("it has no picture".to_string()))?;
                let decoder = threaded(&stream)?
                    .decoder()
                    .video()
                    .map_err(|e| AvError::reading("opening the video decoder", e))?;
                let time_base = stream.time_base();
                let aspect = match decoder.aspect_ratio() {
                    r if r.numerator() > 0 => r,
                    _ => Rational(1, 1),
                };
                let rate = match stream.avg_frame_rate() {
                    r if r.numerator() > 0 => r,
                    _ => Rational(25, 1),
                };
                let args = format!(
                    "video_size={}x{}:pix_fmt={}:time_base={}/{}:pixel_aspect={}/{}:frame_rate={}/{}",
                    decoder.width(),
                    decoder.height(),
                    ffmpeg::ffi::AVPixelFormat::from(decoder.format()) as i32,
                    time_base.numerator(),
                    time_base.denominator(),
                    aspect.numerator(),
                    aspect.denominator(),
                    rate.numerator(),
                    rate.denominator(),
                );
                sources.push((format!("src_v{i}"), "buffer", args));
                chains.push(format!("[src_v{i}]{}setpts=PTS-STARTPTS[v{i}]", span.video));
                video = Some(Decoding {
                    stream: stream.index(),
                    decoder,
                });
            }
            let mut audio = None;
            if wants_audio {
                let stream = context
                    .streams()
                    .best(media::Type::Audio)
                    .ok_or_else(|| AvError::Input("it has no sound".to_string()))?;
                let decoder = threaded(&stream)?
                    .decoder()
                    .audio()
                    .map_err(|e| AvError::reading("opening the audio decoder", e))?;
                let time_base = stream.time_base();
                let layout = match decoder.channel_layout() {
                    l if l.bits() != 0 => l,
                    _ => ChannelLayout::default(i32::from(decoder.channels())),
                };
                let args = format!(
                    "time_base={}/{}:sample_rate={}:sample_fmt={}:channel_layout=0x{:x}",
                    time_base.numerator(),
                    time_base.denominator(),
                    decoder.rate(),
                    decoder.format().name(),
                    layout.bits()
                );
                sources.push((format!("src_a{i}"), "abuffer", args));
                chains.push(format!("[src_a{i}]{}asetpts=PTS-STARTPTS[a{i}]", span.audio));
                audio = Some(Decoding {
                    stream: stream.index(),
                    decoder,
                });
            }
            let used: Vec<usize> = video
                .iter()
                .map(|v| v.stream)
                .chain(audio.iter().map(|a| a.stream))
                .collect();
            read_only(&mut context, &used);
            opened.push(Opened {
                context,
                video,
                audio,
                origin,
                start: input.start,
                end,
            });
        }
        for (name, kind, args) in &sources {
            graph
                .add(
                    &filter::find(kind).expect("libavfilter has its buffer sources"),
                    name,
                    args,
                )
                .map_err(|e| AvError::machine("adding a graph input", e))?;
        }
        if let Some(pixel) = outputs.video {
            let mut sink = graph
                .add(
                    &filter::find("buffersink").expect("libavfilter has buffersink"),
                    "vout",
                    "",
                )
                .map_err(|e| AvError::machine("adding the picture output", e))?;
            sink.set_pixel_format(pixel);
        }
        if let Some(shape) = outputs.audio {
            let mut sink = graph
                .add(
                    &filter::find("abuffersink").expect("libavfilter has abuffersink"),
                    "aout",
                    "",
                )
                .map_err(|e| AvError::machine("adding the sound output", e))?;
            sink.set_sample_format(shape.format);
            // Not `set_sample_rate`: it writes the rate as an i64 into a list of C ints, so the
            // sink was offered the rate and 0, and sound under 24 kHz (closer to 0 than to
            // 48 kHz) was resampled to 0 Hz and the graph refused.
            Settable::set(&mut sink, "sample_rates", &(shape.rate as i32))
                .map_err(|e| AvError::machine("setting the sound output's rate", e))?;
            sink.set_channel_layout(shape.layout);
        }
        let mut parser = filter::graph::Parser::new(&mut graph);
        for (name, _, _) in &sources {
            parser = parser
                .output(name, 0)
                .map_err(|e| AvError::machine("linking a graph input", e))?;
        }
        if outputs.video.is_some() {
            parser = parser
                .input("vout", 0)
                .map_err(|e| AvError::machine("linking vout", e))?;
        }
        if outputs.audio.is_some() {
            parser = parser
                .input("aout", 0)
                .map_err(|e| AvError::machine("linking aout", e))?;
        }
        chains.push(spec.to_string());
        let full = chains.join(";");
        parser
            .parse(&full)
            .map_err(|e| AvError::machine(&format!("the filter graph {full:?}"), e))?;
        graph
            .validate()
            .map_err(|e| AvError::machine(&format!("configuring the filter graph {full:?}"), e))?;
        if let Some(shape) = outputs.audio
            && let Some(size) = shape.frame_size
        {
            graph
                .get("aout")
                .expect("the sound output was added")
                .sink()
                .set_frame_size(size);
        }
        Ok(Pipeline {
            graph,
            inputs: opened,
            outputs,
            duration: duration.max(0.0),
        })
    }

    /// Seconds of media going in.
    pub fn duration(&self) -> f64 {
        self.duration
    }

    /// The picture `[vout]` carries.
    pub fn video_out(&mut self) -> Option<VideoOut> {
        self.outputs.video?;
        let sink = self.graph.get("vout")?;
        // SAFETY: the graph is configured; these read its output link.
        unsafe {
            let ctx = sink.as_ptr() as *mut _;
            let rate = ffmpeg::ffi::av_buffersink_get_frame_rate(ctx);
            Some(VideoOut {
                width: ffmpeg::ffi::av_buffersink_get_w(ctx) as u32,
                height: ffmpeg::ffi::av_buffersink_get_h(ctx) as u32,
                time_base: ffmpeg::ffi::av_buffersink_get_time_base(ctx).into(),
                frame_rate: if rate.num > 0 {
                    rate.into()
                } else {
                    Rational(25, 1)
                },
                aspect: match ffmpeg::ffi::av_buffersink_get_sample_aspect_ratio(ctx) {
                    r if r.num > 0 => r.into(),
                    _ => Rational(1, 1),
                },
            })
        }
    }

    /// The time base of `[aout]`'s frames.
    pub fn audio_time_base(&mut self) -> Option<Rational> {
        self.outputs.audio?;
        let sink = self.graph.get("aout")?;
        // SAFETY: as in `video_out`.
        Some(unsafe { ffmpeg::ffi::av_buffersink_get_time_base(sink.as_ptr() as *mut _).into() })
    }

    /// Decodes every input through the graph, handing each frame that leaves it to `each`
    /// along with how far along the inputs are (0..1), until the inputs end or `each` has had
    /// enough.
    pub fn run(
        mut self,
        each: &mut dyn FnMut(Filtered, f64) -> Result<Flow, AvError>,
    ) -> Result<(), AvError> {
        let total = self.duration.max(0.001);
        let mut done_before = 0.0;
        let inputs = std::mem::take(&mut self.inputs);
        for (i, mut input) in inputs.into_iter().enumerate() {
            if input.start > 0.0 {
                let at = ((input.origin + input.start) * f64::from(ffmpeg::ffi::AV_TIME_BASE)) as i64;
                input
                    .context
                    .seek(at, ..at)
                    .map_err(|e| AvError::reading("seeking", e))?;
            }
            // Past the span's end (plus reordering slack) nothing more is needed.
            let stop = input.end.map(|e| input.origin + e + 2.0);
            let span = input.end.unwrap_or(f64::INFINITY) - input.start;
            let mut position = 0.0f64;
            let (src_v, src_a) = (format!("src_v{i}"), format!("src_a{i}"));
            let mut frame_v = frame::Video::empty();
            let mut frame_a = frame::Audio::empty();
            for (stream, packet) in input.context.packets() {
                let index = stream.index();
                let seconds = packet.pts().map(|pts| pts as f64 * f64::from(stream.time_base()));
                if let (Some(stop), Some(at)) = (stop, seconds)
                    && at > stop
                {
                    break;
                }
                if let Some(at) = seconds {
                    position = position.max((at - input.origin - input.start).min(span));
                }
                let progress = ((done_before + position) / total).clamp(0.0, 1.0);
                if let Some(v) = input.video.as_mut().filter(|v| v.stream == index) {
                    if input.start > 0.0 {
                        // A seek lands on the keyframe before the span, often seconds early;
                        // of the frames before the span, those no other frame refers to are
                        // never shown (trim drops them), so the decoder may skip making them.
                        let before = seconds.is_some_and(|at| at < input.origin + input.start);
                        v.decoder.skip_frame(if before {
                            Discard::NonReference
                        } else {
                            Discard::Default
                        });
                    }
                    v.decoder
                        .send_packet(&packet)
                        .or_else(tolerate_bad_packet)
                        .map_err(|e| AvError::reading("decoding the picture", e))?;
                    self.feed(&src_v, "filtering a picture", &mut v.decoder, &mut frame_v)?;
                } else if let Some(a) = input.audio.as_mut().filter(|a| a.stream == index) {
                    a.decoder
                        .send_packet(&packet)
                        .or_else(tolerate_bad_packet)
                        .map_err(|e| AvError::reading("decoding the sound", e))?;
                    self.feed(&src_a, "filtering sound", &mut a.decoder, &mut frame_a)?;
                } else {
                    continue;
                }
                if self.drain(each, progress)? == Flow::Enough {
                    return Ok(());
                }
            }
            if let Some(v) = input.video.as_mut() {
                let _ = v.decoder.send_eof();
                self.feed(&src_v, "filtering a picture", &mut v.decoder, &mut frame_v)?;
                self.close(&src_v)?;
            }
            if let Some(a) = input.audio.as_mut() {
                let _ = a.decoder.send_eof();
                self.feed(&src_a, "filtering sound", &mut a.decoder, &mut frame_a)?;
                self.close(&src_a)?;
            }
            done_before += span.min(position.max(0.0)).max(0.0);
            if self.drain(each, (done_before / total).clamp(0.0, 1.0))? == Flow::Enough {
                return Ok(());
            }
        }
        self.drain(each, 1.0).map(|_| ())
    }

    /// Pushes every frame the decoder has ready into the graph input `name` (`src_v{i}` for
    /// pictures, `src_a{i}` for sound); `what` names the step in an error.
    fn feed(
        &mut self,
        name: &str,
        what: &str,
        decoder: &mut decoder::Opened,
        frame: &mut Frame,
    ) -> Result<(), AvError> {
        while decoder.receive_frame(frame).is_ok() {
            let at = frame.timestamp();
            frame.set_pts(at);
            self.source(name)?
                .source()
                .add(frame)
                .map_err(|e| AvError::machine(what, e))?;
        }
        Ok(())
    }

    fn source(&mut self, name: &str) -> Result<filter::Context, AvError> {
        self.graph
            .get(name)
            .ok_or_else(|| AvError::Machine(format!("the graph lost its input {name}")))
    }

    fn close(&mut self, name: &str) -> Result<(), AvError> {
        self.source(name)?
            .source()
            .flush()
            .map_err(|e| AvError::machine("ending a graph input", e))
    }

    /// Hands on what has left the graph; `Enough` when the receiver or every output is done.
    fn drain(
        &mut self,
        each: &mut dyn FnMut(Filtered, f64) -> Result<Flow, AvError>,
        progress: f64,
    ) -> Result<Flow, AvError> {
        let mut ended = true;
        if self.outputs.video.is_some() {
            let mut frame = frame::Video::empty();
            while let Some(mut sink) = self.graph.get("vout") {
                match sink.sink().frame(&mut frame) {
                    Ok(()) => {}
                    Err(ffmpeg::Error::Eof) => break,
                    Err(_) => {
                        ended = false;
                        break;
                    }
                }
                if each(Filtered::Video(&mut frame), progress)? == Flow::Enough {
                    return Ok(Flow::Enough);
                }
            }
        }
        if self.outputs.audio.is_some() {
            let mut frame = frame::Audio::empty();
            while let Some(mut sink) = self.graph.get("aout") {
                match sink.sink().frame(&mut frame) {
                    Ok(()) => {}
                    Err(ffmpeg::Error::Eof) => break,
                    Err(_) => {
                        ended = false;
                        break;
                    }
                }
                if each(Filtered::Audio(&frame), progress)? == Flow::Enough {
                    return Ok(Flow::Enough);
                }
            }
        }
        // Every output has ended (a trim passed its end): nothing more needs reading.
        Ok(if ended { Flow::Enough } else { Flow::More })
    }
}

/// A damaged packet in the middle of a file is skipped, as players do; a file that is
/// nothing but damage fails when nothing decodes.
fn tolerate_bad_packet(e: ffmpeg::Error) -> Result<(), ffmpeg::Error> {
    match e {
        ffmpeg::Error::InvalidData => Ok(()),
        other => Err(other),
    }
}

struct Span {
    video: String,
    audio: String,
}

/// The trim filters (with a trailing comma) that keep `start..end`, in absolute seconds.
fn trim_span(start: f64, end: Option<f64>) -> Span {
    let mut bounds = Vec::new();
    if start > 0.0 {
        bounds.push(format!("start={start:.6}"));
    }
    if let Some(end) = end {
        bounds.push(format!("end={end:.6}"));
    }
    if bounds.is_empty() {
        return Span {
            video: String::new(),
            audio: String::new(),
        };
    }
    let bounds = bounds.join(":");
    Span {
        video: format!("trim={bounds},"),
        audio: format!("atrim={bounds},"),
    }
}
