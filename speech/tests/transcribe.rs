//! Transcribes speech that espeak-ng speaks from sentences known to the test, with the model
//! `scripts/lib.sh` installs (found through `DRIVE_MODELS`; a missing model fails the test).

use std::path::{Path, PathBuf};
use std::process::Command;

use drive_speech::{SAMPLE_RATE, Segment, SpeechError, Transcriber};

/// espeak-ng's voice is synthetic and flat; Whisper base reads it nearly word for word (about
/// 5 % word error on these sentences), so a fifth is a clear failure, not noise.
const MAX_WER: f64 = 0.2;

const SENTENCES: [&str; 8] = [
    "The quick brown fox jumps over the lazy dog.",
    "Please remember to bring your umbrella tomorrow morning.",
    "The library opens early on weekdays and closes late on Fridays.",
    "She planted tomatoes, carrots and beans in the garden behind the house.",
    "Our train was delayed because of heavy snow in the mountains.",
    "He bought a new bicycle and rode it along the river.",
    "The meeting has been moved to the small room on the second floor.",
    "Children were playing football in the park until it got dark.",
];

fn model_dir() -> PathBuf {
    let root = std::env::var_os("DRIVE_MODELS")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            PathBuf::from(std::env::var_os("HOME").expect("HOME")).join(".cache/drive/models")
        });
    let dir = root.join("whisper-base");
    assert!(
        dir.join("model.bin").is_file(),
        "no speech model at {} (scripts/test installs it: ensure_speech_model in scripts/lib.sh)",
        dir.display()
    );
    dir
}

fn transcriber() -> Transcriber {
    Transcriber::load(&model_dir()).expect("the installed model loads")
}

/// espeak-ng speaks `text`; sox resamples it to 16 kHz mono; hound reads the samples back.
fn speak(text: &str, dir: &Path) -> Vec<f32> {
    let spoken = dir.join("spoken.wav");
    let resampled = dir.join("16k.wav");
    run(Command::new("espeak-ng")
        .args(["-v", "en-us", "-s", "150", "-w"])
        .arg(&spoken)
        .arg(text));
    run(Command::new("sox")
        .arg(&spoken)
        .args(["-r", "16000", "-c", "1", "-b", "16"])
        .arg(&resampled));
    let mut wav = hound::WavReader::open(&resampled).expect("sox wrote a WAV");
    assert_eq!(wav.spec().sample_rate as usize, SAMPLE_RATE);
    wav.samples::<i16>()
        .map(|s| s.expect("a sample") as f32 / 32768.0)
        .collect()
}

fn run(command: &mut Command) {
    let out = command
        .output()
        .unwrap_or_else(|e| panic!("{command:?}: {e} (scripts/lib.sh installs espeak-ng and sox)"));
    assert!(
        out.status.success(),
        "{command:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

fn seconds(s: f64) -> usize {
    (s * SAMPLE_RATE as f64) as usize
}

fn words(text: &str) -> Vec<String> {
    text.split_whitespace()
        .map(|w| {
            w.chars()
                .filter(|c| c.is_alphanumeric())
                .collect::<String>()
                .to_lowercase()
        })
        .filter(|w| !w.is_empty())
        .collect()
}

/// Word error rate: word-level edit distance over the reference's length.
fn wer(reference: &str, hypothesis: &str) -> f64 {
    let (r, h) = (words(reference), words(hypothesis));
    let mut row: Vec<usize> = (0..=h.len()).collect();
    for i in 1..=r.len() {
        let mut prev = row[0];
        row[0] = i;
        for j in 1..=h.len() {
            let here = row[j];
            row[j] = (prev + usize::from(r[i - 1] != h[j - 1]))
                .min(row[j] + 1)
                .min(row[j - 1] + 1);
            prev = here;
        }
    }
    row[h.len()] as f64 / r.len() as f64
}

fn joined(segments: &[Segment]) -> String {
    segments
        .iter()
        .map(|s| s.text.as_str())
        .collect::<Vec<_>>()
        .join(" ")
}

/// Every segment lies inside the clip, ends after it starts, and starts no earlier than the one
/// before it.
fn assert_timed_within(segments: &[Segment], duration: f64) {
    for (i, s) in segments.iter().enumerate() {
        assert!(
            0.0 <= s.start && s.start <= s.end && s.end <= duration,
            "segment {i} {s:?} outside 0..{duration}"
        );
        if i > 0 {
            assert!(
                s.start >= segments[i - 1].start,
                "segment {i} {s:?} starts before {:?}",
                segments[i - 1]
            );
        }
    }
}

#[test]
fn spoken_sentences_are_transcribed_word_for_word() {
    let dir = tempfile();
    let text = format!("{} {}", SENTENCES[0], SENTENCES[1]);
    let samples = speak(&text, dir.path());
    let duration = samples.len() as f64 / SAMPLE_RATE as f64;
    let segments = transcriber().transcribe(&samples).unwrap();
    let heard = joined(&segments);
    let error = wer(&text, &heard);
    assert!(
        error <= MAX_WER,
        "word error {error:.2}: heard {heard:?} for {text:?}"
    );
    assert!(!segments.is_empty());
    assert_timed_within(&segments, duration);
    // The speech starts at once and fills the clip: the segments cover it.
    assert!(segments[0].start < 1.0, "{segments:?}");
    assert!(
        segments.last().unwrap().end > duration - 2.0,
        "{segments:?} in {duration} s"
    );
}

#[test]
fn silence_gives_no_segments() {
    let segments = transcriber().transcribe(&vec![0.0; seconds(40.0)]).unwrap();
    assert_eq!(segments, vec![]);
}

#[test]
fn faint_noise_gives_no_segments() {
    // Above the silence gate (peak 0.01), so the model itself runs and must say "no speech".
    let mut state = 0x2545_f491_4f6c_dd1d_u64;
    let noise: Vec<f32> = (0..seconds(35.0))
        .map(|_| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            ((state >> 40) as f32 / (1u64 << 24) as f32 - 0.5) * 0.02
        })
        .collect();
    let segments = transcriber().transcribe(&noise).unwrap();
    assert_eq!(segments, vec![], "invented text from noise");
}

#[test]
fn a_long_clip_spans_windows_with_times_that_match_the_speech() {
    // Eight sentences with pauses of 2.5 to 6 s: about 70 s, so three 30 s windows at least,
    // with sentences crossing the windows' edges.
    let dir = tempfile();
    let mut samples = Vec::new();
    let mut spans = Vec::new();
    let at = |samples: &Vec<f32>| samples.len() as f64 / SAMPLE_RATE as f64;
    for (i, sentence) in SENTENCES.iter().enumerate() {
        samples.extend(std::iter::repeat_n(0.0, seconds(2.5 + (i % 3) as f64 * 1.75)));
        let start = at(&samples);
        samples.extend(speak(sentence, dir.path()));
        spans.push((start, at(&samples)));
    }
    samples.extend(std::iter::repeat_n(0.0, seconds(2.0)));
    let duration = samples.len() as f64 / SAMPLE_RATE as f64;
    assert!(duration > 65.0, "the clip is {duration} s");

    let transcriber = transcriber();
    let segments = transcriber.transcribe(&samples).unwrap();
    // Handed over in pieces of another size (as a worker's job process hands its sound to the
    // supervisor, 30 s at most a piece), the stream reads the same windows: the same segments.
    let mut stream = transcriber.stream();
    for piece in samples.chunks(7 * SAMPLE_RATE + 123) {
        stream.push(piece).unwrap();
    }
    assert_eq!(stream.finish().unwrap(), segments);
    let heard = joined(&segments);
    let text = SENTENCES.join(" ");
    let error = wer(&text, &heard);
    assert!(error <= MAX_WER, "word error {error:.2}: heard {heard:?}");
    assert_timed_within(&segments, duration);
    // Each sentence is heard in a segment placed where it was spoken. Whisper opens a segment
    // where the previous one closed (so the pause before a sentence is counted into it) and
    // closes it near the sentence's end, to about a second; a wrong window offset would be off
    // by many seconds.
    for (sentence, (start, end)) in SENTENCES.iter().zip(&spans) {
        let opening = words(sentence)[..2].join(" ");
        let found = segments
            .iter()
            .find(|s| words(&s.text).join(" ").contains(&opening))
            .unwrap_or_else(|| panic!("{opening:?} not heard in {segments:?}"));
        assert!(
            found.start <= start + 0.5,
            "{opening:?} spoken from {start:.2} s, heard at {found:?}"
        );
        assert!(
            (found.end - end).abs() < 1.5,
            "{opening:?} spoken until {end:.2} s, heard at {found:?}"
        );
    }
    assert!(segments.last().unwrap().end > 60.0, "{segments:?}");
}

#[test]
fn a_damaged_model_is_an_error_not_a_panic() {
    let installed = model_dir();
    let dir = tempfile();
    for name in ["config.json", "tokenizer.json"] {
        std::fs::copy(installed.join(name), dir.path().join(name)).unwrap();
    }
    // Cut short inside the weights: a variable's size no longer fits the file.
    let mut head = vec![0u8; 1 << 20];
    std::io::Read::read_exact(
        &mut std::fs::File::open(installed.join("model.bin")).unwrap(),
        &mut head,
    )
    .unwrap();
    std::fs::write(dir.path().join("model.bin"), &head).unwrap();
    let error = Transcriber::load(dir.path())
        .err()
        .expect("a truncated model does not load");
    assert!(matches!(error, SpeechError::Model { .. }), "{error:?}");
    // Not a CTranslate2 file at all.
    std::fs::write(dir.path().join("model.bin"), b"RIFF\0\0\0\0WAVEfmt ").unwrap();
    let error = Transcriber::load(dir.path())
        .err()
        .expect("a foreign file does not load");
    assert!(matches!(error, SpeechError::Model { .. }), "{error:?}");
    // No model at all.
    std::fs::remove_file(dir.path().join("model.bin")).unwrap();
    assert!(matches!(Transcriber::load(dir.path()), Err(SpeechError::Io(..))));
}

fn tempfile() -> tempfile::TempDir {
    tempfile::tempdir().unwrap()
}
