//! Tesseract starts no threads of its own, even in a process started with an empty environment,
//! as a job process is (so without `OMP_THREAD_LIMIT`).

mod common;

use std::process::Command;

use drive_ocr::Reader;

#[test]
fn reading_starts_no_threads_in_an_empty_environment() {
    let output = Command::new(std::env::current_exe().unwrap())
        .args(["--exact", "read_and_count_threads", "--ignored", "--nocapture"])
        .env_clear()
        .output()
        .unwrap();
    let said =
        String::from_utf8_lossy(&output.stdout).into_owned() + &String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{said}");
    assert!(said.contains("1 passed"), "{said}");
}

/// Run by the test above, in a process of its own: a read on this thread, then on another (libgomp
/// keeps its settings per thread), each counting the threads before and after.
#[test]
#[ignore = "run with an empty environment by reading_starts_no_threads_in_an_empty_environment"]
fn read_and_count_threads() {
    assert_eq!(std::env::var_os("OMP_THREAD_LIMIT"), None);
    let threads = || std::fs::read_dir("/proc/self/task").unwrap().count();
    let (page, _) = common::scanned_letter();
    let mut reader = Reader::new(None).unwrap();
    let read_and_count = |reader: &mut Reader| {
        let before = threads();
        let text = reader.read(&page).unwrap();
        assert!(text.words() > 100, "{text}");
        assert_eq!(
            threads(),
            before,
            "threads in the process before and after reading"
        );
    };
    read_and_count(&mut reader);
    std::thread::scope(|scope| scope.spawn(|| read_and_count(&mut reader)).join().unwrap());
}
