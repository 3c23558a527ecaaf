//! Pages per second: our crate (its `read` example, a whole process) against the `tesseract`
//! command on the same scanned pages, same model (eng) and page mode (3, automatic), in rounds
//! that alternate which goes first (`scripts/bench ocr`). Every run's output is checked to hold
//! every page. `DRIVE_OCR_READ` is the example's path; `DRIVE_OCR_PAGES` and
//! `DRIVE_OCR_ROUNDS` set the work (default 8 pages, 5 rounds).

#[path = "../tests/common/mod.rs"]
mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

/// One run of one or more processes started together: wall seconds until the last ends, CPU
/// seconds of all, the largest peak RSS (MiB), and what they printed.
struct Run {
    wall: f64,
    cpu: f64,
    peak_mib: f64,
    output: String,
}

fn run(commands: &mut [Command]) -> Run {
    let start = Instant::now();
    let children: Vec<_> = commands
        .iter_mut()
        .map(|command| {
            command
                .stdout(Stdio::piped())
                .stderr(Stdio::null())
                .spawn()
                .expect("the command starts")
        })
        .collect();
    let mut output = String::new();
    let (mut cpu, mut peak_kib) = (0.0, 0i64);
    for mut child in children {
        let mut stdout = child.stdout.take().unwrap();
        std::io::Read::read_to_string(&mut stdout, &mut output).unwrap();
        // `tesseract` puts a form feed between pages, not after the last.
        output.push('\u{c}');
        // wait4 rather than Child::wait, for the CPU time and peak memory of this child alone.
        let (mut status, mut usage) = (0, unsafe { std::mem::zeroed::<libc::rusage>() });
        let pid = unsafe { libc::wait4(child.id() as i32, &mut status, 0, &mut usage) };
        assert_eq!(
            pid,
            child.id() as i32,
            "wait4: {}",
            std::io::Error::last_os_error()
        );
        assert!(
            libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0,
            "status {status}"
        );
        let seconds = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
        cpu += seconds(usage.ru_utime) + seconds(usage.ru_stime);
        peak_kib = peak_kib.max(usage.ru_maxrss);
    }
    Run {
        wall: start.elapsed().as_secs_f64(),
        cpu,
        peak_mib: peak_kib as f64 / 1024.0,
        output,
    }
}

fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    values[values.len() / 2]
}

/// `tesseract LIST - --psm 3 -l eng`: one process reading every page the list file names.
fn tesseract(list: &Path, openmp_limited: bool) -> Command {
    let mut command = Command::new("tesseract");
    command.arg(list).args(["-", "--psm", "3", "-l", "eng"]);
    if openmp_limited {
        command.env("OMP_THREAD_LIMIT", "1");
    } else {
        command.env_remove("OMP_THREAD_LIMIT");
    }
    command
}

fn main() {
    let ours =
        PathBuf::from(std::env::var("DRIVE_OCR_READ").expect("DRIVE_OCR_READ: the read example's path"));
    let count: usize = std::env::var("DRIVE_OCR_PAGES").map_or(8, |n| n.parse().unwrap());
    let rounds: usize = std::env::var("DRIVE_OCR_ROUNDS").map_or(5, |n| n.parse().unwrap());
    let dir = std::env::temp_dir().join(format!("drive-ocr-bench-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();

    // The letter, scanned at a different angle and with different specks on each page.
    let (page, paragraphs) = common::print(common::LETTER, common::A4);
    let printed = common::as_text(&paragraphs);
    let pages: Vec<PathBuf> = (0..count)
        .map(|n| {
            let path = dir.join(format!("page-{n:03}.png"));
            common::scan(&page, 0.8 - 0.2 * (n % 8) as f32, n as u64)
                .save(&path)
                .unwrap();
            path
        })
        .collect();
    let list = |name: &str, pages: &[PathBuf]| {
        let path = dir.join(name);
        let lines: Vec<String> = pages.iter().map(|p| p.display().to_string()).collect();
        std::fs::write(&path, lines.join("\n") + "\n").unwrap();
        path
    };
    let all = list("all.txt", &pages);
    let (first, second) = pages.split_at(count / 2);
    let (first, second) = (list("first.txt", first), list("second.txt", second));
    let read = |threads: &str| {
        let mut command = Command::new(&ours);
        command
            .arg("--threads")
            .arg(threads)
            .args(&pages)
            .env_remove("OMP_THREAD_LIMIT");
        command
    };

    type Commands<'a> = Box<dyn Fn() -> Vec<Command> + 'a>;
    let cases: Vec<(&str, &str, Commands, Commands)> = vec![
        (
            "1 thread",
            "tesseract, one process, OMP_THREAD_LIMIT=1",
            Box::new(|| vec![read("1")]),
            Box::new({
                let all = all.clone();
                move || vec![tesseract(&all, true)]
            }),
        ),
        (
            "2 threads",
            "tesseract, two processes of half the pages each, OMP_THREAD_LIMIT=1",
            Box::new(|| vec![read("2")]),
            Box::new(move || vec![tesseract(&first, true), tesseract(&second, true)]),
        ),
        (
            "2 threads",
            "tesseract, one process, its OpenMP threads as shipped",
            Box::new(|| vec![read("2")]),
            Box::new(move || vec![tesseract(&all, false)]),
        ),
    ];

    let words = printed.split_whitespace().count();
    println!(
        "{count} scanned A4 pages at 300 dpi (2480x3508 grey PNG, {words} words each), {rounds} rounds, first in each round alternating"
    );
    println!();
    println!(
        "| ours (read example) | peer | ours pages/s | peer pages/s | time ratio (ours / peer, median of pairs) | ours CPU s | peer CPU s | ours peak RSS | peer peak RSS | ours CER | peer CER |"
    );
    println!("|---|---|---|---|---|---|---|---|---|---|---|");
    for (ours_name, peer_name, ours, peer) in &cases {
        // The warm-up: both read every page, and read it well.
        let (a, b) = (run(&mut ours()), run(&mut peer()));
        let error = |run: &Run| {
            let texts: Vec<&str> = run
                .output
                .split('\u{c}')
                .filter(|t| !t.trim().is_empty())
                .collect();
            assert_eq!(texts.len(), count, "a text per page");
            median(
                texts
                    .iter()
                    .map(|t| common::character_error_rate(t, &printed))
                    .collect(),
            )
        };
        let (a_error, b_error) = (error(&a), error(&b));
        let (mut a_runs, mut b_runs) = (Vec::new(), Vec::new());
        for round in 0..rounds {
            if round % 2 == 0 {
                a_runs.push(run(&mut ours()));
                b_runs.push(run(&mut peer()));
            } else {
                b_runs.push(run(&mut peer()));
                a_runs.push(run(&mut ours()));
            }
        }
        let wall = |runs: &[Run]| median(runs.iter().map(|r| r.wall).collect());
        let cpu = |runs: &[Run]| median(runs.iter().map(|r| r.cpu).collect());
        let peak = |runs: &[Run]| runs.iter().map(|r| r.peak_mib).fold(0.0, f64::max);
        let ratio = median(a_runs.iter().zip(&b_runs).map(|(a, b)| a.wall / b.wall).collect());
        println!(
            "| {ours_name} | {peer_name} | {:.2} | {:.2} | {ratio:.2} | {:.2} | {:.2} | {:.0} MiB | {:.0} MiB | {:.2} % | {:.2} % |",
            count as f64 / wall(&a_runs),
            count as f64 / wall(&b_runs),
            cpu(&a_runs),
            cpu(&b_runs),
            peak(&a_runs),
            peak(&b_runs),
            a_error * 100.0,
            b_error * 100.0,
        );
    }
    std::fs::remove_dir_all(&dir).unwrap();
}
