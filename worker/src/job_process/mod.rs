//! The job process: `drive-worker run-job`, started confined by its supervisor, parses the
//! uploaded bytes of one job and holds no credential. Everything here runs in that process; it
//! reaches the drive only through its supervisor ([`crate::protocol`]).

pub mod archive;
pub mod av;
pub mod checksum;
pub mod context;
pub mod imports;
pub mod metadata;
pub mod objects;
pub mod pdfs;
pub mod pictures;
pub mod reading;
pub mod run;

#[cfg(test)]
mod tests {
    use std::path::Path;

    /// The wall in code as well as in the process: the job process and the protocol name the
    /// vocabulary (`drive_domain`) and never the data crate, so no query, store or queue type
    /// can reach the side that parses uploaded bytes.
    const BEYOND: [&str; 5] = ["drive_core", "sqlx", "aws_sdk_s3", "redis::", "crate::supervisor"];

    #[test]
    fn the_job_process_names_no_data_access() {
        fn sources(dir: &Path, found: &mut Vec<std::path::PathBuf>) {
            for entry in std::fs::read_dir(dir).unwrap() {
                let path = entry.unwrap().path();
                if path.is_dir() {
                    sources(&path, found);
                } else if path.extension().is_some_and(|e| e == "rs") {
                    found.push(path);
                }
            }
        }
        let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
        let mut files = vec![src.join("protocol.rs")];
        sources(&src.join("job_process"), &mut files);
        assert!(
            files.len() > 10,
            "the job process's files are where this test looks"
        );
        let crossing: Vec<_> = files
            .iter()
            .filter(|f| {
                let text = std::fs::read_to_string(f).unwrap();
                // The code, not its comments, and not the tests below.
                let code = text.split("#[cfg(test)]").next().unwrap();
                code.lines()
                    .filter(|line| !line.trim_start().starts_with("//"))
                    .any(|line| BEYOND.iter().any(|name| line.contains(name)))
            })
            .collect();
        assert!(
            crossing.is_empty(),
            "these name what is beyond the wall: {crossing:?}"
        );
    }
}
