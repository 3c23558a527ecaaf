//! Progress bars for an upload: one for all the bytes, one per file in flight. Hidden for
//! `--json` and when stderr is not a terminal, where they would only be noise.

use std::sync::Arc;

use anyhow::Result;
use drive_client::upload::Progress;
use indicatif::{MultiProgress, ProgressBar, ProgressDrawTarget, ProgressStyle};

pub struct UploadProgress {
    bars: MultiProgress,
    total: ProgressBar,
    file_style: ProgressStyle,
}

impl UploadProgress {
    pub fn new(total_bytes: u64, files: usize, visible: bool) -> Result<UploadProgress> {
        let target = if visible {
            ProgressDrawTarget::stderr()
        } else {
            ProgressDrawTarget::hidden()
        };
        let bars = MultiProgress::with_draw_target(target);
        let total = bars.add(
            ProgressBar::new(total_bytes).with_style(ProgressStyle::with_template(
                "{msg} [{bar:30}] {binary_bytes}/{binary_total_bytes} {binary_bytes_per_sec} eta {eta}",
            )?),
        );
        total.set_message(format!("uploading {files} files"));
        Ok(UploadProgress {
            bars,
            total,
            file_style: ProgressStyle::with_template(
                "  {wide_msg} {binary_bytes:>10}/{binary_total_bytes:<10} {percent:>3}%",
            )?,
        })
    }

    /// A bar for one file, shown while it is sent.
    pub fn start_file(&self, name: &str, size: u64) -> FileProgress {
        let file = self
            .bars
            .add(ProgressBar::new(size).with_style(self.file_style.clone()));
        file.set_message(name.to_string());
        FileProgress {
            file,
            total: self.total.clone(),
        }
    }

    pub fn finish(&self) {
        self.total.finish_and_clear();
    }
}

/// One file's bar, which also moves the overall one.
#[derive(Clone)]
pub struct FileProgress {
    file: ProgressBar,
    total: ProgressBar,
}

impl FileProgress {
    /// What the upload tells of the bytes it sends.
    pub fn counter(&self) -> Progress {
        let bars = self.clone();
        Arc::new(move |bytes| {
            bars.file.inc(bytes);
            bars.total.inc(bytes);
        })
    }

    pub fn done(&self) {
        self.file.finish_and_clear();
    }
}
