//! Measuring sound rather than encoding it: mono samples for analysis, loudness (EBU R128) and
//! the gain that sets it, and the stretches of sound between silences.

use ffmpeg::util::channel_layout::ChannelLayout;
use ffmpeg::util::format::{Sample, sample};

use super::graph::{AudioShape, Filtered, Flow, Outputs, Pipeline};
use super::jobs::RATE;
use super::source::Source;
use super::{AvError, Input, ffmpeg};

/// Decodes `source`'s sound as mono 32-bit floats at `rate`, handing them over in frames.
pub fn mono_samples(
    source: Source,
    rate: u32,
    each: &mut dyn FnMut(&[f32]),
    progress: &mut dyn FnMut(f64),
) -> Result<(), AvError> {
    let outputs = Outputs {
        video: None,
        audio: Some(AudioShape {
            format: Sample::F32(sample::Type::Packed),
            rate,
            layout: ChannelLayout::MONO,
            frame_size: None,
        }),
    };
    let pipeline = Pipeline::new(vec![source], "[a0]anull[aout]", outputs)?;
    let mut any = false;
    pipeline.run(&mut |frame, done| {
        if let Filtered::Audio(sound) = frame {
            any = true;
            each(&sound.plane::<f32>(0)[..sound.samples()]);
        }
        progress(done);
        Ok(Flow::More)
    })?;
    if !any {
        return Err(AvError::Input("no sound could be decoded".to_string()));
    }
    Ok(())
}

/// Integrated loudness (EBU R128, LUFS) and sample peak of a file's sound.
pub fn measure_loudness(location: &str, progress: &mut dyn FnMut(f64)) -> Result<(f64, f32), AvError> {
    let outputs = Outputs {
        video: None,
        audio: Some(AudioShape {
            format: Sample::F32(sample::Type::Packed),
            rate: RATE,
            layout: ChannelLayout::STEREO,
            frame_size: None,
        }),
    };
    let mut meter = ebur128::EbuR128::new(2, RATE, ebur128::Mode::I)
        .map_err(|e| AvError::machine("starting the loudness meter", e))?;
    let mut peak = 0.0f32;
    let pipeline = Pipeline::new(vec![Input::whole(location).open()?], "[a0]anull[aout]", outputs)?;
    pipeline.run(&mut |frame, done| {
        if let Filtered::Audio(sound) = frame {
            let samples = &sound.plane::<f32>(0)[..sound.samples() * 2];
            peak = samples.iter().fold(peak, |p, s| p.max(s.abs()));
            meter
                .add_frames_f32(samples)
                .map_err(|e| AvError::machine("measuring loudness", e))?;
        }
        progress(done);
        Ok(Flow::More)
    })?;
    let loudness = meter
        .loudness_global()
        .map_err(|e| AvError::machine("measuring loudness", e))?;
    if !loudness.is_finite() {
        return Err(AvError::Input(
            "it is silent, so its loudness cannot be set".to_string(),
        ));
    }
    Ok((loudness, peak))
}

/// The gain that brings `measured` LUFS to `target`, and the filters that apply it: a plain
/// volume change, with a limiter only where the louder peaks would clip.
pub fn loudness_filters(measured: f64, peak: f32, target: f64) -> String {
    let gain = target - measured;
    let new_peak = f64::from(peak) * 10f64.powf(gain / 20.0);
    let mut filters = format!("volume={gain:.3}dB");
    if new_peak > 0.98 {
        filters.push_str(",alimiter=limit=0.98:level=disabled");
    }
    filters
}

/// The sound's spans between silences: at least `silence` seconds quieter than `threshold`
/// dBFS (in 10 ms windows) separate two pieces. Answers (start, end) in seconds.
pub fn sound_segments(
    location: &str,
    silence: f64,
    threshold: f64,
    progress: &mut dyn FnMut(f64),
) -> Result<Vec<(f64, f64)>, AvError> {
    const WINDOW: usize = 480; // 10 ms at RATE
    let limit = 10f64.powf(threshold / 20.0);
    let mut segments = Vec::new();
    let mut window = Vec::with_capacity(WINDOW);
    let mut windows = 0usize;
    let mut sound_start: Option<usize> = None;
    let mut last_loud = 0usize;
    let quiet_windows = (silence * 100.0).round() as usize;
    let mut close = |window: &[f32], index: usize, segments: &mut Vec<(f64, f64)>| {
        let rms = (window.iter().map(|s| f64::from(*s).powi(2)).sum::<f64>() / window.len() as f64).sqrt();
        if rms >= limit {
            if sound_start.is_none() {
                sound_start = Some(index);
            }
            last_loud = index;
        } else if let Some(start) = sound_start
            && index - last_loud >= quiet_windows
        {
            segments.push((start as f64 / 100.0, (last_loud + 1) as f64 / 100.0));
            sound_start = None;
        }
    };
    mono_samples(
        Input::whole(location).open()?,
        RATE,
        &mut |samples| {
            for s in samples {
                window.push(*s);
                if window.len() == WINDOW {
                    close(&window, windows, &mut segments);
                    windows += 1;
                    window.clear();
                }
            }
        },
        progress,
    )?;
    if !window.is_empty() {
        close(&window, windows, &mut segments);
    }
    if let Some(start) = sound_start {
        segments.push((start as f64 / 100.0, (last_loud + 1) as f64 / 100.0));
    }
    Ok(segments)
}
