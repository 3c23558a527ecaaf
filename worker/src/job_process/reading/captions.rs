//! captions: what was read of a recording (its speech moments) written as subtitles, SubRip,
//! WebVTT or plain text, one file per input beside it. Burned-in captions (burnIn's
//! `captions`) are drawn from the same SubRip text.

use drive_domain::file::stem;
use drive_domain::job::{CaptionFormat, Captions};
use drive_domain::moment::Said;
use drive_domain::rows::FileRow;
use serde_json::json;

use crate::job_process::context::JobContext;
use crate::protocol::{JobError, JobResult, Request};

/// A cue is shown for this long at least, however short the stretch it times.
const MIN_CUE_SECONDS: f64 = 0.5;

pub fn run(context: &JobContext, c: &Captions) -> JobResult<serde_json::Value> {
    let inputs = context.inputs()?;
    let mut files = Vec::new();
    for (n, file) in inputs.iter().enumerate() {
        let said = said_in(context, file)?;
        let path = context.dir.join(format!("captions-{n}"));
        std::fs::write(&path, cues(c.format, &said))?;
        let name = format!("{}.{}", stem(&file.file_name), c.format.extension());
        let saved = context.save(n as i32, &path, &name, context.folder_id())?;
        files.push(json!({ "fileId": saved.id, "from": file.id }));
        context.progress((n + 1) as f32 / inputs.len() as f32);
    }
    Ok(json!({ "files": files }))
}

/// What is said in `file`, an input of the job, in order of time; a file in which nothing was
/// heard is the input's fault (there is nothing to caption).
pub fn said_in(context: &JobContext, file: &FileRow) -> JobResult<Vec<Said>> {
    let said: Vec<Said> = context.ask(&Request::Said { file_id: file.id })?;
    if said.is_empty() {
        return Err(JobError::Input(format!(
            "{}: nothing was heard said in it when it was read, so there are no captions",
            file.file_name
        )));
    }
    Ok(said)
}

/// The cues in `format`: each stretch of speech, shown from its start to its end (at least
/// [`MIN_CUE_SECONDS`]).
pub fn cues(format: CaptionFormat, said: &[Said]) -> String {
    let mut out = String::new();
    if format == CaptionFormat::Vtt {
        out.push_str("WEBVTT\n\n");
    }
    for (n, s) in said.iter().enumerate() {
        // A cue's text is one line, and never holds the arrow that times a cue.
        let text = s
            .text
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ")
            .replace("-->", "->");
        let until = s.until.max(s.at + MIN_CUE_SECONDS);
        match format {
            CaptionFormat::Srt => out.push_str(&format!(
                "{}\n{} --> {}\n{text}\n\n",
                n + 1,
                clock(s.at, ','),
                clock(until, ',')
            )),
            CaptionFormat::Vtt => out.push_str(&format!(
                "{} --> {}\n{text}\n\n",
                clock(s.at, '.'),
                clock(until, '.')
            )),
            CaptionFormat::Txt => {
                out.push_str(&text);
                out.push('\n');
            }
        }
    }
    out
}

/// `hh:mm:ss` and milliseconds after `separator` (a comma for SubRip, a full stop for WebVTT).
fn clock(seconds: f64, separator: char) -> String {
    let ms = (seconds.max(0.0) * 1000.0).round() as u64;
    format!(
        "{:02}:{:02}:{:02}{separator}{:03}",
        ms / 3_600_000,
        ms / 60_000 % 60,
        ms / 1000 % 60,
        ms % 1000
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn said(at: f64, until: f64, text: &str) -> Said {
        Said {
            at,
            until,
            text: text.to_string(),
        }
    }

    #[test]
    fn cues_are_written_in_each_format() {
        let said = [
            said(0.0, 2.5, "Hello there."),
            said(3661.25, 3661.25, "An hour  in --> still\ttalking."),
        ];
        assert_eq!(
            cues(CaptionFormat::Srt, &said),
            "1\n00:00:00,000 --> 00:00:02,500\nHello there.\n\n\
             2\n01:01:01,250 --> 01:01:01,750\nAn hour in -> still talking.\n\n"
        );
        assert_eq!(
            cues(CaptionFormat::Vtt, &said),
            "WEBVTT\n\n00:00:00.000 --> 00:00:02.500\nHello there.\n\n\
             01:01:01.250 --> 01:01:01.750\nAn hour in -> still talking.\n\n"
        );
        assert_eq!(
            cues(CaptionFormat::Txt, &said),
            "Hello there.\nAn hour in -> still talking.\n"
        );
    }
}
