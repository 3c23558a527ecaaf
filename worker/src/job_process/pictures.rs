//! Picture jobs: convert, watermark and stripMetadata, one result per input picture, each
//! saved beside its input as soon as it is made (a stopped job keeps them).

use std::path::{Path, PathBuf};

use drive_domain::file::stem;
use drive_domain::job::{self, Convert, Watermark};
use drive_domain::rows::FileRow;
use drive_media::picture::{self, PictureError, PictureFormat, Position};
use serde_json::json;

use crate::job_process::context::JobContext;
use crate::protocol::{JobError, JobResult};

pub fn format_of(format: job::PictureFormat) -> PictureFormat {
    match format {
        job::PictureFormat::Jpg => PictureFormat::Jpg,
        job::PictureFormat::Png => PictureFormat::Png,
        job::PictureFormat::Webp => PictureFormat::Webp,
    }
}

fn position_of(position: job::Position) -> Position {
    match position {
        job::Position::TopLeft => Position::TopLeft,
        job::Position::Top => Position::Top,
        job::Position::TopRight => Position::TopRight,
        job::Position::Left => Position::Left,
        job::Position::Center => Position::Center,
        job::Position::Right => Position::Right,
        job::Position::BottomLeft => Position::BottomLeft,
        job::Position::Bottom => Position::Bottom,
        job::Position::BottomRight => Position::BottomRight,
    }
}

pub fn convert(context: &JobContext, settings: &Convert) -> JobResult<serde_json::Value> {
    let format = settings
        .format
        .picture()
        .map(format_of)
        .ok_or_else(|| JobError::Server("a picture convert was given another format".to_string()))?;
    let options = picture::Convert {
        format,
        max_edge: settings.max_edge,
    };
    each_picture(
        context,
        |file, _| format!("{}.{}", stem(&file.file_name), format.extension()),
        |input, output| picture::convert(input, output, &options).map(Some),
    )
}

pub fn watermark(context: &JobContext, settings: &Watermark) -> JobResult<serde_json::Value> {
    let font = std::fs::read(&context.font).map_err(|e| {
        JobError::Server(format!(
            "reading the watermark font {}: {e}",
            context.font.display()
        ))
    })?;
    let mark = picture::Watermark {
        text: &settings.text,
        position: position_of(settings.position),
        opacity: settings.opacity,
        font: &font,
    };
    each_picture(
        context,
        |file, input| {
            format!(
                "{} watermarked.{}",
                stem(&file.file_name),
                written_extension(input)
            )
        },
        |input, output| picture::watermark(input, output, &mark).map(Some),
    )
}

pub fn strip_metadata(context: &JobContext) -> JobResult<serde_json::Value> {
    each_picture(
        context,
        |file, input| format!("{} stripped.{}", stem(&file.file_name), written_extension(input)),
        |input, output| picture::strip_metadata(input, output).map(|()| None),
    )
}

/// The extension of what a watermark or strip writes: the input's own format, PNG for
/// formats it cannot write.
fn written_extension(input: &Path) -> &'static str {
    PictureFormat::of_path(input)
        .unwrap_or(PictureFormat::Png)
        .extension()
}

/// Downloads each input picture, makes its result with `make` (in a blocking section) and
/// saves it as the job's result at the input's position. `make` may answer the result's
/// dimensions.
fn each_picture(
    context: &JobContext,
    name: impl Fn(&FileRow, &Path) -> String,
    make: impl Fn(&Path, &Path) -> Result<Option<picture::Dimensions>, PictureError>,
) -> JobResult<serde_json::Value> {
    let inputs = context.inputs()?;
    let mut made = Vec::with_capacity(inputs.len());
    for (index, file) in inputs.iter().enumerate() {
        let position = index as i32;
        let saved = match context.saved(position)? {
            Some(saved) => saved,
            None => {
                let input = context.download(file, index)?;
                let output: PathBuf = context.dir.join(format!("output-{index}"));
                let dimensions =
                    make(&input, &output).map_err(|e| JobError::from(e).in_file(&file.file_name))?;
                let saved = context.save(position, &output, &name(file, &input), context.folder_id())?;
                made.push(json!({
                    "fileId": saved.id,
                    "from": file.id,
                    "width": dimensions.map(|d| d.width),
                    "height": dimensions.map(|d| d.height),
                }));
                let _ = std::fs::remove_file(&input);
                let _ = std::fs::remove_file(&output);
                context.progress((index + 1) as f32 / inputs.len() as f32);
                continue;
            }
        };
        made.push(json!({ "fileId": saved.id, "from": file.id }));
    }
    Ok(json!({ "files": made }))
}
