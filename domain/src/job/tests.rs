//! The job vocabulary's own checks: settings, ranges, kinds and names.

use super::*;
use serde_json::json;

fn range_error(job_type: JobType, options: serde_json::Value) -> String {
    match JobSpec::parse(job_type, options) {
        Err(SettingsError::Range(e)) => e.field,
        other => panic!("not a range error: {other:?}"),
    }
}

#[test]
fn defaults_are_filled_in_and_survive_the_row() {
    let spec = JobSpec::parse(JobType::PdfToImages, serde_json::Value::Null).unwrap();
    assert_eq!(
        spec.options(),
        json!({ "format": "png", "dpi": 150, "pages": null })
    );
    assert_eq!(
        JobSpec::from_row(JobType::PdfToImages, spec.options()).unwrap(),
        spec
    );
}

#[test]
fn ranges_name_the_setting() {
    assert_eq!(
        range_error(JobType::Convert, json!({ "format": "png", "maxEdge": 8 })),
        "options.maxEdge"
    );
    assert_eq!(
        range_error(JobType::Watermark, json!({ "text": "x", "opacity": 1.5 })),
        "options.opacity"
    );
    assert_eq!(
        range_error(JobType::PdfToImages, json!({ "dpi": 1000 })),
        "options.dpi"
    );
    assert_eq!(
        range_error(JobType::ExtractPages, json!({ "pages": "3-1" })),
        "options.pages"
    );
    assert!(matches!(
        JobSpec::parse(JobType::Captions, json!({ "format": "ass" })),
        Err(SettingsError::Shape { .. })
    ));
    assert_eq!(range_error(JobType::ReadMetadata, json!({})), "jobType");
    assert_eq!(
        range_error(JobType::Cut, json!({ "start": 5, "end": "0:04" })),
        "options.end"
    );
    assert_eq!(
        range_error(JobType::Cut, json!({ "fadeOut": 11 })),
        "options.fadeOut"
    );
    assert_eq!(
        range_error(JobType::Proxy, json!({ "height": 480 })),
        "options.height"
    );
    assert_eq!(
        range_error(JobType::Shrink, json!({ "targetMB": 0 })),
        "options.targetMB"
    );
    assert_eq!(range_error(JobType::Reframe, json!({})), "options.aspect");
    assert_eq!(
        range_error(JobType::Reframe, json!({ "rotate": 45 })),
        "options.rotate"
    );
    assert_eq!(
        range_error(JobType::Gif, json!({ "length": 16 })),
        "options.length"
    );
    assert_eq!(
        range_error(JobType::Gif, json!({ "width": 100 })),
        "options.width"
    );
    assert_eq!(range_error(JobType::Gif, json!({ "fps": 30 })), "options.fps");
    assert_eq!(range_error(JobType::BurnIn, json!({})), "options.text");
    assert!(JobSpec::parse(JobType::BurnIn, json!({ "captions": true })).is_ok());
    assert_eq!(
        range_error(JobType::Join, json!({ "format": "ogg" })),
        "options.format"
    );
    assert_eq!(range_error(JobType::Stills, json!({})), "options.at");
    assert_eq!(
        range_error(JobType::Stills, json!({ "at": 1, "every": 2 })),
        "options.at"
    );
    assert_eq!(
        range_error(JobType::Stills, json!({ "every": 0.1 })),
        "options.every"
    );
    assert_eq!(
        range_error(JobType::ContactSheet, json!({ "count": 1 })),
        "options.count"
    );
    assert_eq!(
        range_error(JobType::Loudness, json!({ "target": -20 })),
        "options.target"
    );
    assert_eq!(
        range_error(JobType::Split, json!({ "threshold": 0 })),
        "options.threshold"
    );
    assert_eq!(
        range_error(JobType::Convert, json!({ "format": "webm", "codec": "hevc" })),
        "options.codec"
    );
    assert_eq!(
        range_error(JobType::Convert, json!({ "format": "mp4", "maxEdge": 100 })),
        "options.maxEdge"
    );
}

#[test]
fn every_type_is_named_alike_on_the_wire_and_in_words() {
    for job_type in JobType::ALL {
        assert_eq!(serde_json::to_value(job_type).unwrap(), json!(job_type.as_str()));
    }
    let schema = serde_json::to_value(<JobType as utoipa::PartialSchema>::schema()).unwrap();
    assert!(schema.to_string().contains("\"burnIn\""), "{schema}");
}

#[test]
fn inputs_are_taken_by_kind() {
    let to_mp3 = JobSpec::parse(JobType::Convert, json!({ "format": "mp3" })).unwrap();
    assert!(to_mp3.takes(FileKind::Audio, "a.wav"));
    assert!(!to_mp3.takes(FileKind::Video, "a.mp4"));
    assert_eq!(to_mp3.takes_what(), "audio files");
    let cut = JobSpec::parse(JobType::Cut, json!({})).unwrap();
    assert_eq!(cut.takes_what(), "videos or audio files");
    let join = JobSpec::parse(JobType::Join, json!({ "format": "flac" })).unwrap();
    assert!(join.check_inputs(&[FileKind::Audio, FileKind::Audio]).is_ok());
    assert!(matches!(
        join.check_inputs(&[FileKind::Video, FileKind::Video]),
        Err(SettingsError::Range(SettingError { field, .. })) if field == "options.format"
    ));
    assert!(matches!(
        join.check_inputs(&[FileKind::Audio, FileKind::Video]),
        Err(SettingsError::Range(SettingError { field, .. })) if field == "fileIds"
    ));
    let to_png = JobSpec::parse(JobType::Convert, json!({ "format": "png" })).unwrap();
    assert!(to_png.downloads(FileKind::Image));
    assert!(!to_mp3.downloads(FileKind::Video));
    let zip = JobSpec::parse(JobType::Zip, json!({})).unwrap();
    assert!(!zip.downloads(FileKind::Image));
    assert_eq!((zip.input_count(), join.input_count()), ((1, 1000), (2, 50)));
}

#[test]
fn unknown_settings_are_refused_with_their_path() {
    match JobSpec::parse(JobType::Checksum, json!({ "algorithm": "sha1" })) {
        Err(SettingsError::Shape { at, error }) => assert_eq!(
            (at.as_str(), error.path().to_string().as_str()),
            ("options", "algorithm")
        ),
        other => panic!("{other:?}"),
    }
}

#[test]
fn sizes_read_like_people_write_them() {
    assert_eq!(decimal_size(2_000_000_000), "2 GB");
    assert_eq!(decimal_size(2_150_000_000), "2.15 GB");
    assert_eq!(decimal_size(1_500_000), "1.5 MB");
    assert_eq!(decimal_size(700), "700 bytes");
}
