//! File jobs against the command-line tool that does the same work, on the same bytes
//! (`scripts/bench jobs`): checksum against `sha256sum` and `md5sum`, zip against `zip`,
//! picture convert against `vipsthumbnail`, mergePdf against `qpdf`; and the job process's
//! peak memory while hashing a file larger than the address space it is allowed.
//!
//! The peers read local files; the jobs read their inputs from the object store and write
//! their results back to it, so a job's time includes that transfer. Where the job does not
//! beat the local peer, the peer also runs on the same objects in the store, as a person
//! would run it on their drive: `curl` reads each through a download link (piped into the
//! hash; to disk for `zip`, whose archive `curl` then PUTs back to the store). Two figures per job:
//! the job's own run (its `startTime` to `endTime`: process start, reads, work, writes,
//! record) and end to end (from just before `/create-file-job` to the job's `endTime`,
//! adding the request and the queue hop). `DRIVE_BENCH_JOBS_GIB` sets the big file (default 8).

use std::path::{Path, PathBuf};
use std::time::Duration;

use drive_tests::bench::{
    add_file, forget_digests, link, median, put_link, script, timed, timed_job, timed_median,
};
use drive_tests::{TestApp, env};
use serde_json::json;
use tokio::io::AsyncWriteExt;

const MIB: u64 = 1024 * 1024;

/// Writes `len` bytes that no layer can deduplicate or compress much.
async fn write_noise(path: &Path, len: u64) {
    let mut file = tokio::fs::File::create(path).await.unwrap();
    let mut state = 0x2545_f491_4f6c_dd1du64;
    let mut block = vec![0u8; MIB as usize];
    for _ in 0..len.div_ceil(MIB) {
        for chunk in block.chunks_mut(8) {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            chunk.copy_from_slice(&state.to_le_bytes()[..chunk.len()]);
        }
        file.write_all(&block).await.unwrap();
    }
    file.set_len(len).await.unwrap();
    file.sync_all().await.unwrap();
}

/// One row: the peer on local files, and (where it was run) on the same objects in the store.
fn row(what: &str, peer: &str, local: f64, stored: Option<f64>, own: f64, end_to_end: f64) {
    let (stored, stored_ratio) = match stored {
        Some(s) => (format!("{s:.2} s"), format!("{:.2}", own / s)),
        None => ("".to_string(), "".to_string()),
    };
    println!(
        "| {what} | {peer} | {local:.2} s | {stored} | {own:.2} s | {end_to_end:.2} s | {:.2} | {stored_ratio} |",
        own / local
    );
}

/// Peak resident memory of any `drive-worker run-job` process, sampled until `done` is set.
fn watch_job_memory(done: std::sync::Arc<std::sync::atomic::AtomicBool>) -> std::thread::JoinHandle<u64> {
    std::thread::spawn(move || {
        let mut peak_kib = 0u64;
        while !done.load(std::sync::atomic::Ordering::Relaxed) {
            for (pid, _) in drive_tests::job_processes() {
                let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
                if let Some(kib) = status
                    .lines()
                    .find(|l| l.starts_with("VmHWM:"))
                    .and_then(|l| l.split_whitespace().nth(1))
                    .and_then(|v| v.parse::<u64>().ok())
                {
                    peak_kib = peak_kib.max(kib);
                }
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        peak_kib
    })
}

fn pdf_of(path: &Path, pages: u32) {
    use lopdf::content::{Content, Operation};
    use lopdf::{Document, Object, Stream, dictionary};
    let mut doc = Document::with_version("1.5");
    let pages_id = doc.new_object_id();
    let font =
        doc.add_object(dictionary! { "Type" => "Font", "Subtype" => "Type1", "BaseFont" => "Helvetica" });
    let resources = doc.add_object(dictionary! { "Font" => dictionary! { "F1" => font } });
    let mut kids = Vec::new();
    for n in 0..pages {
        let mut operations = vec![
            Operation::new("BT", vec![]),
            Operation::new("Tf", vec!["F1".into(), 11.into()]),
        ];
        for line in 0..50 {
            operations.push(Operation::new("Td", vec![50.into(), (760 - line * 14).into()]));
            operations.push(Operation::new(
                "Tj",
                vec![Object::string_literal(format!(
                    "page {n} line {line}: the quick brown fox jumps over the lazy dog"
                ))],
            ));
        }
        operations.push(Operation::new("ET", vec![]));
        let content = doc.add_object(Stream::new(
            dictionary! {},
            Content { operations }.encode().unwrap(),
        ));
        kids.push(
            doc.add_object(dictionary! {
                "Type" => "Page", "Parent" => pages_id, "Contents" => content, "Resources" => resources,
                "MediaBox" => vec![0.into(), 0.into(), 612.into(), 792.into()],
            })
            .into(),
        );
    }
    doc.objects.insert(
        pages_id,
        Object::Dictionary(dictionary! { "Type" => "Pages", "Kids" => kids, "Count" => pages }),
    );
    let catalog = doc.add_object(dictionary! { "Type" => "Catalog", "Pages" => pages_id });
    doc.trailer.set("Root", catalog);
    doc.compress();
    doc.save(path).unwrap();
}

#[tokio::main(flavor = "multi_thread")]
async fn main() {
    let gib: u64 = std::env::var("DRIVE_BENCH_JOBS_GIB")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(8);
    let dir = PathBuf::from(env("DRIVE_BENCH_DIR"));
    let s = |p: &Path| p.to_str().unwrap().to_string();

    // Jobs may take 1 GiB of address space here: less than the big file, so a job that held
    // the file in memory would fail.
    let mut app = TestApp::spawn_with(&[("DRIVE_JOB_MINUTES_PRO", "100000")]).await;
    app.start_worker(&[
        ("DRIVE_JOB_MEMORY_LIMIT_BYTES", "1073741824"),
        ("DRIVE_WORKER_CONCURRENCY", "1"),
    ])
    .await;
    let user = app.user(Some("Pro")).await;

    println!(
        "| job | peer | peer, local files | peer, same objects from the store | job run | end to end | ratio to local | ratio to store |"
    );
    println!("|---|---|---|---|---|---|---|---|");

    // Checksums of 1 GiB.
    let gib1 = dir.join("one-gib.bin");
    write_noise(&gib1, 1024 * MIB).await;
    let id = add_file(&app, &user, &gib1, "Other", "application/octet-stream").await;
    let gib1_url = link(&app, &user, id).await;
    // The store's own speed for the same object: the floor under any job that reads it.
    let raw_get = script("curl -sf \"$1\" > /dev/null", &[&gib1_url]);
    let mut against_get = Vec::new();
    for (algorithm, tool) in [("sha256", "sha256sum"), ("md5", "md5sum")] {
        let local = timed(tool, &[&s(&gib1)]);
        let stored = script(&format!("curl -sf \"$1\" | {tool}"), &[&gib1_url]);
        let (own, e2e) = median(3, || async {
            forget_digests(&app).await;
            let (own, e2e, _) = timed_job(
                &app,
                &user,
                json!({ "jobType": "checksum", "fileIds": [id], "options": { "algorithm": algorithm } }),
            )
            .await;
            (own, e2e)
        })
        .await;
        row(
            &format!("checksum {algorithm}, 1 GiB"),
            tool,
            local,
            Some(stored),
            own,
            e2e,
        );
        against_get.push((algorithm, own));
    }

    // Zip: four 256 MiB media files stored, and 256 MiB of text deflated.
    let mut media = Vec::new();
    let mut media_ids = Vec::new();
    for n in 0..4 {
        let path = dir.join(format!("clip{n}.mp4"));
        write_noise(&path, 256 * MIB).await;
        media_ids.push(add_file(&app, &user, &path, "Video", "video/mp4").await);
        media.push(s(&path));
    }
    let zip_out = dir.join("peer.zip");
    let mut args = vec!["-q".to_string(), "-0".to_string(), s(&zip_out)];
    args.extend(media.iter().cloned());
    let _ = std::fs::remove_file(&zip_out);
    let local = timed("zip", &args.iter().map(String::as_str).collect::<Vec<_>>());
    // The same by hand on the drive: fetch the four, zip them, put the archive back.
    let scratch = dir.join("by-hand");
    std::fs::create_dir_all(&scratch).unwrap();
    let mut by_hand = vec![s(&scratch), put_link(&app, "bench/by-hand.zip").await];
    for id in &media_ids {
        by_hand.push(link(&app, &user, *id).await);
    }
    let stored = script(
        "cd \"$1\"; put=$2; shift 2; n=0; for url; do n=$((n + 1)); curl -sf -o clip$n.mp4 \"$url\"; done; \
         rm -f out.zip; zip -q -0 out.zip clip*.mp4; curl -sf -T out.zip \"$put\"; rm -f clip*.mp4 out.zip",
        &by_hand.iter().map(String::as_str).collect::<Vec<_>>(),
    );
    let (own, e2e, _) = timed_job(&app, &user, json!({ "jobType": "zip", "fileIds": media_ids })).await;
    row(
        "zip of 4 × 256 MiB videos (stored)",
        "zip -0",
        local,
        Some(stored),
        own,
        e2e,
    );

    let text = dir.join("log.txt");
    {
        let mut file = std::io::BufWriter::new(std::fs::File::create(&text).unwrap());
        let mut n = 0u64;
        while n < 256 * MIB {
            let line = format!(
                "2026-11-22T06:{:02}:{:02}Z INFO request {n} served in {} ms\n",
                n % 60,
                n % 59,
                n % 997
            );
            std::io::Write::write_all(&mut file, line.as_bytes()).unwrap();
            n += line.len() as u64;
        }
    }
    let text_id = add_file(&app, &user, &text, "Text", "text/plain").await;
    let _ = std::fs::remove_file(&zip_out);
    let peer = timed("zip", &["-q", &s(&zip_out), &s(&text)]);
    let (own, e2e, job) = timed_job(&app, &user, json!({ "jobType": "zip", "fileIds": [text_id] })).await;
    row(
        "zip of 256 MiB of text (deflate, level 6)",
        "zip -6",
        peer,
        None,
        own,
        e2e,
    );
    println!(
        "|   sizes: ours {} MiB, zip's {} MiB | | | | | | | |",
        job["result"]["bytes"].as_u64().unwrap() / MIB,
        std::fs::metadata(&zip_out).unwrap().len() / MIB
    );

    // Picture convert: a 6000 × 4000 JPEG to a 2048-pixel JPEG.
    let photo = dir.join("photo.jpg");
    drive_tests::bench::photo(&photo, 6000, 4000);
    let photo_id = add_file(&app, &user, &photo, "Image", "image/jpeg").await;
    let thumb = dir.join("thumb.jpg");
    let peer = timed_median(
        "vipsthumbnail",
        &[&s(&photo), "-s", "2048", "-o", &format!("{}[Q=85]", s(&thumb))],
    );
    let (own, e2e) = median(3, || async {
        let (own, e2e, _) = timed_job(
            &app,
            &user,
            json!({ "jobType": "convert", "fileIds": [photo_id], "options": { "format": "jpg", "maxEdge": 2048 } }),
        )
        .await;
        (own, e2e)
    })
    .await;
    row(
        "convert 6000×4000 JPEG → 2048 px JPEG",
        "vipsthumbnail",
        peer,
        None,
        own,
        e2e,
    );

    // mergePdf: 20 PDFs of 50 pages.
    let mut pdfs = Vec::new();
    let mut pdf_ids = Vec::new();
    for n in 0..20 {
        let path = dir.join(format!("doc{n}.pdf"));
        pdf_of(&path, 50);
        pdf_ids.push(add_file(&app, &user, &path, "Pdf", "application/pdf").await);
        pdfs.push(s(&path));
    }
    let merged = dir.join("merged.pdf");
    let mut args = vec!["--empty".to_string(), "--pages".to_string()];
    args.extend(pdfs.iter().cloned());
    args.extend(["--".to_string(), s(&merged)]);
    let peer = timed("qpdf", &args.iter().map(String::as_str).collect::<Vec<_>>());
    let (own, e2e, _) = timed_job(&app, &user, json!({ "jobType": "mergePdf", "fileIds": pdf_ids })).await;
    row(
        "mergePdf of 20 PDFs × 50 pages",
        "qpdf --empty --pages",
        peer,
        None,
        own,
        e2e,
    );

    // Checksums against the store's raw read of the same object (the goal: at least 90 % of it).
    println!();
    println!(
        "| checksum of 1 GiB | the store's raw GET (`curl > /dev/null`) | job run | job's speed / the GET's |"
    );
    println!("|---|---|---|---|");
    for (algorithm, own) in against_get {
        println!(
            "| {algorithm} | {raw_get:.2} s | {own:.2} s | {:.0} % |",
            100.0 * raw_get / own
        );
    }

    // Flat memory: the job's process hashing 1 GiB and the big file, capped at 1 GiB.
    println!();
    println!(
        "| checksum sha256 under a 1 GiB address-space cap | file | job run | peak RSS of the job's process |"
    );
    println!("|---|---|---|---|");
    let big = dir.join("big.bin");
    write_noise(&big, gib * 1024 * MIB).await;
    let big_id = add_file(&app, &user, &big, "Other", "application/octet-stream").await;
    for (label, id) in [("1 GiB", id), (format!("{gib} GiB").as_str(), big_id)] {
        let done = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let watcher = watch_job_memory(done.clone());
        forget_digests(&app).await;
        let (own, _, _) = timed_job(&app, &user, json!({ "jobType": "checksum", "fileIds": [id] })).await;
        done.store(true, std::sync::atomic::Ordering::Relaxed);
        let peak = watcher.join().unwrap();
        println!("| | {label} | {own:.2} s | {} MiB |", peak / 1024);
    }
    let _ = std::fs::remove_file(&big);
}
