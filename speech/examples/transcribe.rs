//! The speech benchmark's side of ours: transcribes 16 kHz mono 16-bit WAV files and prints, per
//! file, a tab-separated line: file, audio seconds, transcription seconds, real-time factor, text.
//! `cargo run --release -p drive-speech --example transcribe -- MODEL_DIR FILE.wav...`
//! (`scripts/bench speech` runs it with `RAYON_NUM_THREADS=1`: one core.)

use std::path::Path;
use std::time::Instant;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (model, files) = args
        .split_first()
        .ok_or("usage: transcribe MODEL_DIR FILE.wav...")?;
    let started = Instant::now();
    let transcriber = drive_speech::Transcriber::load(Path::new(model))?;
    eprintln!("model loaded in {:.2} s", started.elapsed().as_secs_f64());
    for file in files {
        let mut wav = hound::WavReader::open(file)?;
        let spec = wav.spec();
        if spec.sample_rate as usize != drive_speech::SAMPLE_RATE
            || spec.channels != 1
            || spec.bits_per_sample != 16
        {
            return Err(format!("{file}: not 16 kHz mono 16-bit").into());
        }
        let samples = wav
            .samples::<i16>()
            .map(|s| s.map(|s| s as f32 / 32768.0))
            .collect::<Result<Vec<_>, _>>()?;
        let audio = samples.len() as f64 / drive_speech::SAMPLE_RATE as f64;
        let started = Instant::now();
        let segments = transcriber.transcribe(&samples)?;
        let took = started.elapsed().as_secs_f64();
        let text = segments
            .iter()
            .map(|s| s.text.as_str())
            .collect::<Vec<_>>()
            .join(" ");
        println!("{file}\t{audio:.2}\t{took:.2}\t{:.3}\t{text}", took / audio);
    }
    Ok(())
}
