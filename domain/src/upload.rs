//! A multipart upload's state, as its row remembers it.

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UploadState {
    Open,
    Complete,
    Aborted,
}

impl UploadState {
    pub fn as_str(self) -> &'static str {
        match self {
            UploadState::Open => "open",
            UploadState::Complete => "complete",
            UploadState::Aborted => "aborted",
        }
    }

    pub fn parse(s: &str) -> Option<UploadState> {
        [UploadState::Open, UploadState::Complete, UploadState::Aborted]
            .into_iter()
            .find(|state| state.as_str() == s)
    }
}

crate::column::text_column!(UploadState, "upload state");
