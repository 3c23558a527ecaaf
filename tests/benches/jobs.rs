//! Every file job that is not audio or video (those are `scripts/bench av`) against the
//! command-line tool that does the same work (`scripts/bench jobs`): checksum (`sha256sum`,
//! `md5sum`), zip, archive requests and unzip (`zip`, `unzip`), picture convert
//! (`vipsthumbnail`), watermark (`ffmpeg` drawtext), stripMetadata (`exiftool`), stills,
//! contactSheet and videoThumbnail (`ffmpeg` select, tile and `-ss`), makePdf (`img2pdf`),
//! mergePdf, splitPdf and extractPages (`qpdf`), compressPdf (Ghostscript), pdfToImages
//! (`pdftoppm`, and its renderer alone against `pdftoppm` on a local file); then the checksums
//! against their floors in the same rotated rounds (the store's raw GET of the same object, and
//! that GET streamed into `openssl dgst`), the stored zip against its streamed floor (every
//! input's GET piped into the result's PUT), and the job process's peak memory while
//! hashing a file larger than the address space it is allowed.
//!
//! Both sides work on the same objects in the store: the peer's inputs are fetched through
//! download links by `curl`, and what it makes is PUT back, as a person would run it on their
//! drive; the job reads its inputs from the store and writes its results back. Each row is five
//! rounds, the peer first in even rounds and the job first in odd ones, printed as medians with
//! their spread; the ratio is the job's run (its `startTime` to `endTime`: process start, reads,
//! work, writes, record) over the peer's. End to end adds the request and the queue hop (from
//! just before the request that starts it to the job's `endTime`). `DRIVE_BENCH_JOBS_GIB` sets the big
//! file (default 4: the benchmark stores it in one PUT, which the drive takes up to 5 GiB).

use std::path::{Path, PathBuf};
use std::time::Duration;

use drive_core::id::FileId;
use drive_tests::bench::{
    CPU_HEADS, Cpu, add_file, forget_digests, link, middle, put_link, spread, timed_job, timed_job_at,
    timed_script,
};
use drive_tests::{TestApp, TestUser, env};
use serde_json::{Value, json};
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

/// Rounds of each row, in rotated order: the peer first in even rounds, the job first in odd.
const ROUNDS: usize = 5;

/// The floor under any stored zip of stored objects, as a streamed peer: every input read from
/// the store and the result written back once, through a pipe (`$1` the PUT, then the GETs).
const STREAMED_ZIP_FLOOR: &str = "put=$1; shift; curl -sf \"$@\" | curl -sf -T - -o /dev/null \"$put\"";

/// A row's peer: a shell command run in a scratch folder whose `in/` holds the inputs (named
/// `0001.EXT`…), fetched from the store through download links by one `curl`; what it writes to
/// `out/` is PUT back to the store (at most `outputs` files), by one `curl` too.
struct Peer<'a> {
    label: &'a str,
    ext: &'a str,
    command: &'a str,
    outputs: usize,
}

struct Bench<'a> {
    app: &'a TestApp,
    user: &'a TestUser,
    scratch: PathBuf,
}

impl Bench<'_> {
    /// Times `peer` and the file job `body` on the same stored `inputs` in [`ROUNDS`] rounds and
    /// prints the row; answers the job run's median.
    async fn row(&self, what: &str, peer: Peer<'_>, inputs: &[FileId], body: Value) -> f64 {
        self.row_at(what, peer, inputs, "/create-file-job", body).await
    }

    /// [`Bench::row`] for a job started through another route (see [`TestApp::start_job`]).
    async fn row_at(&self, what: &str, peer: Peer<'_>, inputs: &[FileId], route: &str, body: Value) -> f64 {
        let mut args = vec![
            self.scratch.to_str().unwrap().to_string(),
            peer.ext.to_string(),
            inputs.len().to_string(),
        ];
        for id in inputs {
            args.push(link(self.app, self.user, *id).await);
        }
        for n in 0..peer.outputs {
            args.push(put_link(self.app, &format!("bench/peer/{n}")).await);
        }
        let script = format!(
            r#"dir=$1; ext=$2; n=$3; shift 3
rm -rf "$dir"; mkdir -p "$dir/in" "$dir/out"; cd "$dir"
get=(); i=0
for url in "${{@:1:$n}}"; do i=$((i + 1)); get+=(-o "in/$(printf %04d $i).$ext" "$url"); done
curl -sf --fail-early "${{get[@]}}"
shift "$n"
{command}
put=(); for f in out/*; do [ -e "$f" ] || continue; put+=(-T "$f" "$1"); shift; done
if [ ${{#put[@]}} -gt 0 ]; then curl -sf --fail-early -o /dev/null "${{put[@]}}"; fi
cd /; rm -rf "$dir""#,
            command = peer.command
        );
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let (mut peers, mut runs, mut ends) = (Vec::new(), Vec::new(), Vec::new());
        for round in 0..ROUNDS {
            if round % 2 == 0 {
                peers.push(timed_script(&script, &args));
            }
            forget_digests(self.app).await;
            let (own, end_to_end, _) = timed_job_at(self.app, self.user, route, body.clone()).await;
            runs.push(own);
            ends.push(end_to_end);
            if round % 2 == 1 {
                peers.push(timed_script(&script, &args));
            }
        }
        let own = middle(runs.clone());
        println!(
            "| {what} | {} | {} | {} | {:.2} s | {:.2} |",
            peer.label,
            spread(&peers),
            spread(&runs),
            middle(ends),
            own / middle(peers.clone())
        );
        own
    }
}

/// `len` bytes of numbered lines of text.
fn text_block(n: usize, len: usize) -> Vec<u8> {
    let mut text = Vec::with_capacity(len + 80);
    let mut line = 0;
    while text.len() < len {
        text.extend_from_slice(
            format!("document {n}, line {line}: the quick brown fox jumps over the lazy dog\n").as_bytes(),
        );
        line += 1;
    }
    text.truncate(len);
    text
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

/// What bounds pdfToImages, measured: the renderer alone on the job's 20 pages of `pdf`, a
/// local file (no store, no encoding, the pixels dropped: `DRIVE_BENCH_PDF_RENDER` is the pdf
/// crate's `render` example), on the job's two threads and confined to one core, against
/// `pdftoppm` writing PPM, its cheapest output. Rounds rotated like the job rows'.
fn render_alone(pdf: &Path) {
    let ours = env("DRIVE_BENCH_PDF_RENDER");
    let pdf = pdf.to_str().unwrap();
    let out = pdf.replace(".pdf", "-ppm");
    // Each side a script of the same arguments: the PDF, a folder for pdftoppm's pages, ours.
    let args = [pdf, out.as_str(), ours.as_str()];
    let sides = [
        (
            "pdftoppm -r 150 (PPM)",
            "rm -rf \"$2\" && mkdir \"$2\" && pdftoppm -r 150 -f 1 -l 20 \"$1\" \"$2/p\"",
        ),
        ("hayro, the job's 2 threads", "\"$3\" \"$1\" 150 1 20 > /dev/null"),
        (
            "hayro, both threads on one core",
            "taskset -c 0 \"$3\" \"$1\" 150 1 20 > /dev/null",
        ),
    ];
    let mut times = vec![Vec::new(); sides.len()];
    for round in 0..ROUNDS {
        for turn in 0..sides.len() {
            let side = (turn + round) % sides.len();
            times[side].push(timed_script(sides[side].1, &args));
        }
    }
    let _ = std::fs::remove_dir_all(&out);
    println!();
    println!(
        "| pdfToImages' renderer alone, 20 pages at 150 dpi of a local file | median (min–max) | ÷ pdftoppm |"
    );
    println!("|---|---|---|");
    let peer = middle(times[0].clone());
    for ((label, _), seconds) in sides.iter().zip(&times) {
        println!(
            "| {label} | {} | {:.2} |",
            spread(seconds),
            middle(seconds.clone()) / peer
        );
    }
}

#[tokio::main(flavor = "multi_thread")]
async fn main() {
    let gib: u64 = std::env::var("DRIVE_BENCH_JOBS_GIB")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(4);
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
        "| job | peer (the same objects: GET, the command, PUT back) | peer, median (min–max) | job run, median (min–max) | end to end, median | job run ÷ peer |"
    );
    println!("|---|---|---|---|---|---|");
    let bench = Bench {
        app: &app,
        user: &user,
        scratch: dir.join("peer"),
    };

    // DRIVE_BENCH_ONLY=unzip,pdf runs only the sections whose name holds one of those words:
    // checksum (with the GET and memory tables), zip, unzip, pictures, video, pdf, big zip
    // (its own word: `big`; `zip` runs it too).
    let only = std::env::var("DRIVE_BENCH_ONLY").unwrap_or_default();
    let chosen = |section: &str| only.is_empty() || only.split(',').any(|word| section.contains(word));

    let checksums = if chosen("checksum") {
        // Checksums of 1 GiB.
        let gib1 = dir.join("one-gib.bin");
        write_noise(&gib1, 1024 * MIB).await;
        let id = add_file(&app, &user, &gib1, "Other", "application/octet-stream").await;
        let gib1_url = link(&app, &user, id).await;
        for (algorithm, tool) in [("sha256", "sha256sum"), ("md5", "md5sum")] {
            bench
                .row(
                    &format!("checksum {algorithm}, 1 GiB"),
                    Peer {
                        label: tool,
                        ext: "bin",
                        command: &format!("{tool} in/*"),
                        outputs: 0,
                    },
                    &[id],
                    json!({ "jobType": "checksum", "fileIds": [id], "options": { "algorithm": algorithm } }),
                )
                .await;
        }

        Some((id, gib1_url))
    } else {
        None
    };

    let mut unzip_cpu = None;
    let mut stored_against_floor = None;
    if chosen("zip") {
        // Zip: four 256 MiB media files stored, 256 MiB of text deflated, a folder of 1,000 small
        // files; and unzip of 200 files.
        let mut media_ids = Vec::new();
        for n in 0..4 {
            let path = dir.join(format!("clip{n}.mp4"));
            write_noise(&path, 256 * MIB).await;
            media_ids.push(add_file(&app, &user, &path, "Video", "video/mp4").await);
        }
        bench
            .row(
                "zip of 4 × 256 MiB videos (stored)",
                Peer {
                    label: "zip -0",
                    ext: "mp4",
                    command: "zip -q -0 out/a.zip in/*",
                    outputs: 1,
                },
                &media_ids,
                json!({ "jobType": "zip", "fileIds": media_ids }),
            )
            .await;
        // The same zip against its streamed floor, in rotated rounds; printed after the table.
        let mut args = vec![put_link(&app, "bench/floor/stored").await];
        for id in &media_ids {
            args.push(link(&app, &user, *id).await);
        }
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let (mut floors, mut jobs) = (Vec::new(), Vec::new());
        for round in 0..ROUNDS {
            for side in (0..2).map(|i| (i + round) % 2) {
                if side == 0 {
                    floors.push(timed_script(STREAMED_ZIP_FLOOR, &args));
                } else {
                    let body = json!({ "jobType": "zip", "fileIds": media_ids });
                    jobs.push(timed_job(&app, &user, body).await.0);
                }
            }
        }
        stored_against_floor = Some((floors, jobs));
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
        bench
            .row(
                "zip of 256 MiB of text (deflate, level 6)",
                Peer {
                    label: "zip -6",
                    ext: "txt",
                    command: "zip -q out/a.zip in/*",
                    outputs: 1,
                },
                &[text_id],
                json!({ "jobType": "zip", "fileIds": [text_id] }),
            )
            .await;
        let mut small = Vec::new();
        for n in 0..1000 {
            let path = dir.join(format!("note-{n:04}.txt"));
            std::fs::write(&path, format!("note {n}\n").repeat(40 + n % 200)).unwrap();
            small.push(add_file(&app, &user, &path, "Text", "text/plain").await);
        }
        let mut folder = None;
        for chunk in small.chunks(500) {
            let moved = app
                .call(
                    &user,
                    "/move-files",
                    Some(json!({ "fileIds": chunk, "folder": "/notes" })),
                )
                .await;
            assert_eq!(moved.status, 200, "{}", moved.body);
            folder = Some(moved.body["folder"]["id"].clone());
        }
        bench
            .row(
                "zip of a folder of 1,000 small files",
                Peer {
                    label: "zip -r",
                    ext: "txt",
                    command: "zip -q -r out/a.zip in",
                    outputs: 1,
                },
                &small,
                json!({ "jobType": "zip", "fromFolderId": folder }),
            )
            .await;
        bench
            .row_at(
                "archive request of 1,000 small files",
                Peer {
                    label: "zip",
                    ext: "txt",
                    command: "zip -q out/a.zip in/*",
                    outputs: 1,
                },
                &small,
                "/create-archive-request",
                json!({ "fileIds": small, "title": "Notes" }),
            )
            .await;
    }

    if chosen("unzip") {
        let archive = dir.join("docs.zip");
        {
            let mut zip = zip::ZipWriter::new(std::fs::File::create(&archive).unwrap());
            for n in 0..200 {
                zip.start_file(
                    format!("doc-{n:03}.txt"),
                    zip::write::SimpleFileOptions::default(),
                )
                .unwrap();
                std::io::Write::write_all(&mut zip, &text_block(n, 50_000)).unwrap();
            }
            zip.finish().unwrap();
        }
        let archive_id = add_file(&app, &user, &archive, "Archive", "application/zip").await;
        bench
            .row(
                "unzip of 200 files × 50 KB",
                Peer {
                    label: "unzip",
                    ext: "zip",
                    command: "unzip -q in/* -d out",
                    outputs: 200,
                },
                &[archive_id],
                json!({ "jobType": "unzip", "fileIds": [archive_id] }),
            )
            .await;
        // Where the cores go in one more unzip, its 200 entries each stored and recorded.
        let worker = app.worker_pid(0);
        let before = Cpu::now(worker);
        let (wall, _, _) = timed_job(
            &app,
            &user,
            json!({ "jobType": "unzip", "fileIds": [archive_id] }),
        )
        .await;
        unzip_cpu = Some(Cpu::now(worker).row(&before, wall));
    }

    if chosen("pictures") {
        // Pictures: a 6000 × 4000 JPEG converted, watermarked and stripped.
        let photo = dir.join("photo.jpg");
        drive_tests::bench::photo(&photo, 6000, 4000);
        let photo_id = add_file(&app, &user, &photo, "Image", "image/jpeg").await;
        bench
        .row(
            "convert 6000×4000 JPEG → 2048 px JPEG",
            Peer {
                label: "vipsthumbnail",
                ext: "jpg",
                command: "vipsthumbnail in/* -s 2048 -o \"$PWD/out/%s.jpg[Q=85]\"",
                outputs: 1,
            },
            &[photo_id],
            json!({ "jobType": "convert", "fileIds": [photo_id], "options": { "format": "jpg", "maxEdge": 2048 } }),
        )
        .await;
        bench
        .row(
            "watermark 6000×4000 JPEG",
            Peer {
                label: "ffmpeg drawtext",
                ext: "jpg",
                command: "ffmpeg -v error -i in/* -vf \"drawtext=fontfile=/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf:text='© Drive':fontsize=h/20:fontcolor=white@0.5:x=w-tw-h/40:y=h-th-h/40\" -q:v 2 out/a.jpg",
                outputs: 1,
            },
            &[photo_id],
            json!({ "jobType": "watermark", "fileIds": [photo_id], "options": { "text": "© Drive" } }),
        )
        .await;
        bench
            .row(
                "stripMetadata of a 6000×4000 JPEG",
                Peer {
                    label: "exiftool -all=",
                    ext: "jpg",
                    command: "exiftool -q -all= -o out/a.jpg in/*",
                    outputs: 1,
                },
                &[photo_id],
                json!({ "jobType": "stripMetadata", "fileIds": [photo_id] }),
            )
            .await;
    }

    if chosen("video") {
        // A minute of 720p video: stills every 5 s and a contact sheet of 12.
        let clip = dir.join("minute.mp4");
        let made = drive_tests::media::ffmpeg(
            &[
                "-f",
                "lavfi",
                "-i",
                "testsrc2=size=1280x720:rate=30",
                "-t",
                "60",
                "-c:v",
                "libx264",
            ]
            .into_iter()
            .chain(["-preset", "veryfast", "-pix_fmt", "yuv420p"])
            .collect::<Vec<_>>(),
            "mp4",
        );
        std::fs::write(&clip, made).unwrap();
        let clip_id = add_file(&app, &user, &clip, "Video", "video/mp4").await;
        bench
        .row(
            "stills every 5 s of a minute of 720p",
            Peer {
                label: "ffmpeg select",
                ext: "mp4",
                command: "ffmpeg -v error -i in/* -vf \"select='isnan(prev_selected_t)+gte(t-prev_selected_t\\,5)'\" -fps_mode vfr -q:v 2 out/s%02d.jpg",
                outputs: 12,
            },
            &[clip_id],
            json!({ "jobType": "stills", "fileIds": [clip_id], "options": { "every": 5 } }),
        )
        .await;
        bench
        .row(
            "contactSheet of 12 frames, 4 columns",
            Peer {
                label: "ffmpeg select,tile",
                ext: "mp4",
                command: "ffmpeg -v error -i in/* -vf \"select='not(mod(n\\,150))',scale=320:-1,tile=4x3\" -frames:v 1 -q:v 2 out/sheet.jpg",
                outputs: 1,
            },
            &[clip_id],
            json!({ "jobType": "contactSheet", "fileIds": [clip_id] }),
        )
        .await;
        bench
            .row_at(
                "videoThumbnail at 0:30 of a minute of 720p",
                Peer {
                    label: "ffmpeg -ss -frames:v 1",
                    ext: "mp4",
                    command: "ffmpeg -v error -ss 30 -i in/* -frames:v 1 -q:v 2 out/t.jpg",
                    outputs: 1,
                },
                &[clip_id],
                "/set-video-thumbnail",
                json!({ "fileId": clip_id, "at": 30 }),
            )
            .await;
    }

    let mut rendered_pdf = None;
    if chosen("pdf") {
        // PDFs: 10 photos made into one, 20 × 50 pages merged, 200 pages split, extracted,
        // rendered; the photos' PDF compressed.
        let mut photos = Vec::new();
        for n in 0..10 {
            let path = dir.join(format!("scan{n}.jpg"));
            drive_tests::bench::photo(&path, 2000, 1500);
            photos.push(add_file(&app, &user, &path, "Image", "image/jpeg").await);
        }
        bench
            .row(
                "makePdf of 10 JPEGs 2000×1500",
                Peer {
                    label: "img2pdf",
                    ext: "jpg",
                    command: "img2pdf in/* -o out/a.pdf",
                    outputs: 1,
                },
                &photos,
                json!({ "jobType": "makePdf", "fileIds": photos }),
            )
            .await;
        let mut pdf_ids = Vec::new();
        for n in 0..20 {
            let path = dir.join(format!("doc{n}.pdf"));
            pdf_of(&path, 50);
            pdf_ids.push(add_file(&app, &user, &path, "Pdf", "application/pdf").await);
        }
        bench
            .row(
                "mergePdf of 20 PDFs × 50 pages",
                Peer {
                    label: "qpdf --empty --pages",
                    ext: "pdf",
                    command: "qpdf --empty --pages in/* -- out/a.pdf",
                    outputs: 1,
                },
                &pdf_ids,
                json!({ "jobType": "mergePdf", "fileIds": pdf_ids }),
            )
            .await;
        let long = dir.join("long.pdf");
        pdf_of(&long, 200);
        let long_id = add_file(&app, &user, &long, "Pdf", "application/pdf").await;
        bench
            .row(
                "splitPdf of 200 pages every 10",
                Peer {
                    label: "qpdf --split-pages",
                    ext: "pdf",
                    command: "qpdf --split-pages=10 in/* out/part-%d.pdf",
                    outputs: 20,
                },
                &[long_id],
                json!({ "jobType": "splitPdf", "fileIds": [long_id], "options": { "every": 10 } }),
            )
            .await;
        bench
            .row(
                "extractPages 1-50 of 200",
                Peer {
                    label: "qpdf --pages",
                    ext: "pdf",
                    command: "qpdf in/* --pages . 1-50 -- out/a.pdf",
                    outputs: 1,
                },
                &[long_id],
                json!({ "jobType": "extractPages", "fileIds": [long_id], "options": { "pages": "1-50" } }),
            )
            .await;
        bench
        .row(
            "pdfToImages of 20 pages at 150 dpi",
            Peer { label: "pdftoppm -jpeg", ext: "pdf", command: "pdftoppm -r 150 -jpeg -f 1 -l 20 in/* out/p", outputs: 20 },
            &[long_id],
            json!({ "jobType": "pdfToImages", "fileIds": [long_id], "options": { "format": "jpg", "dpi": 150, "pages": "1-20" } }),
        )
        .await;
        rendered_pdf = Some(long);
        let scans = dir.join("scans.pdf");
        let made = std::process::Command::new("img2pdf")
            .args((0..10).map(|n| s(&dir.join(format!("scan{n}.jpg")))))
            .args(["-o", &s(&scans)])
            .status()
            .unwrap();
        assert!(made.success(), "making the scanned PDF");
        let scans_id = add_file(&app, &user, &scans, "Pdf", "application/pdf").await;
        bench
            .row(
                "compressPdf of 10 scanned pages",
                Peer {
                    label: "gs pdfwrite /ebook",
                    ext: "pdf",
                    command: "gs -q -sDEVICE=pdfwrite -dPDFSETTINGS=/ebook -o out/a.pdf in/*",
                    outputs: 1,
                },
                &[scans_id],
                json!({ "jobType": "compressPdf", "fileIds": [scans_id] }),
            )
            .await;
    }

    if let Some((floors, jobs)) = stored_against_floor {
        println!();
        println!(
            "| zip of 4 × 256 MiB videos (stored), {ROUNDS} rounds rotated | streamed floor: GET every input, PUT the result (`curl | curl -T -`) | job run | job ÷ floor |"
        );
        println!("|---|---|---|---|");
        println!(
            "| | {} | {} | {:.2} |",
            spread(&floors),
            spread(&jobs),
            middle(jobs.clone()) / middle(floors.clone())
        );
    }

    if let Some(cpu) = unzip_cpu {
        println!();
        println!("| CPU seconds of one more unzip of 200 files × 50 KB | {CPU_HEADS} |");
        println!("|---|---|---|---|---|---|---|");
        println!("| | {cpu} |");
    }

    if let Some(long) = rendered_pdf {
        render_alone(&long);
    }

    if let Some((id, gib1_url)) = checksums {
        // The floors under a checksum of a stored object, in the same rounds as the job: the
        // store's raw GET (`curl > /dev/null`), under anything that reads the object, and the
        // GET streamed into `openssl dgst` (SHA instructions where the CPU has them), which
        // hashes while it reads as the job does. Sides rotated each round.
        println!();
        println!(
            "| checksum of 1 GiB, {ROUNDS} rounds rotated | the store's raw GET | `curl \\| openssl dgst` | job run | job / openssl | job / GET |"
        );
        println!("|---|---|---|---|---|---|");
        for algorithm in ["sha256", "md5"] {
            let (mut get, mut streamed, mut job) = (Vec::new(), Vec::new(), Vec::new());
            for round in 0..ROUNDS {
                for side in (0..3).map(|i| (i + round) % 3) {
                    match side {
                        0 => get.push(timed_script("curl -sf \"$1\" > /dev/null", &[&gib1_url])),
                        1 => streamed.push(timed_script(
                            "curl -sf \"$1\" | openssl dgst \"-$2\" > /dev/null",
                            &[&gib1_url, algorithm],
                        )),
                        _ => {
                            forget_digests(&app).await;
                            let body = json!({ "jobType": "checksum", "fileIds": [id], "options": { "algorithm": algorithm } });
                            job.push(timed_job(&app, &user, body).await.0);
                        }
                    }
                }
            }
            let own = middle(job.clone());
            println!(
                "| {algorithm} | {} | {} | {} | {:.2} | {:.2} |",
                spread(&get),
                spread(&streamed),
                spread(&job),
                own / middle(streamed.clone()),
                own / middle(get.clone())
            );
        }

        // What the machine spends on each, once more: whether its two cores are what bounds
        // the job.
        println!();
        println!("| CPU seconds of one more run of each, 1 GiB | {CPU_HEADS} |");
        println!("|---|---|---|---|---|---|---|");
        let worker = app.worker_pid(0);
        let row = |what: &str, wall: f64, before: Cpu, after: Cpu| {
            println!("| {what} | {} |", after.row(&before, wall))
        };
        let before = Cpu::now(worker);
        let wall = timed_script("curl -sf \"$1\" > /dev/null", &[&gib1_url]);
        row("the store's raw GET", wall, before, Cpu::now(worker));
        for algorithm in ["sha256", "md5"] {
            forget_digests(&app).await;
            let before = Cpu::now(worker);
            let (wall, _, _) = timed_job(
                &app,
                &user,
                json!({ "jobType": "checksum", "fileIds": [id], "options": { "algorithm": algorithm } }),
            )
            .await;
            row(&format!("checksum {algorithm}"), wall, before, Cpu::now(worker));
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
            let watcher = drive_tests::bench::watch_job_memory(done.clone(), Duration::from_millis(20));
            forget_digests(&app).await;
            let (own, _, _) = timed_job(&app, &user, json!({ "jobType": "checksum", "fileIds": [id] })).await;
            done.store(true, std::sync::atomic::Ordering::Relaxed);
            let peak = watcher.join().unwrap();
            println!("| | {label} | {own:.2} s | {} MiB |", peak / 1024);
        }
        let _ = std::fs::remove_file(&big);
    }

    if chosen("big zip") {
        // A stored zip of DRIVE_BENCH_ZIP_GIB (8 by default) inputs of 1 GiB: the job's process's
        // peak memory, and its time against the floor under any zip of them, every input read
        // from the store and the result written back once, streamed (`curl GET | curl -T - PUT`).
        let count: u64 = std::env::var("DRIVE_BENCH_ZIP_GIB")
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(8);
        let one = dir.join("take.bin");
        write_noise(&one, 1024 * MIB).await;
        let mut ids = Vec::new();
        for n in 0..count {
            let take = dir.join(format!("take-{n}.mp4"));
            std::fs::hard_link(&one, &take).unwrap();
            ids.push(add_file(&app, &user, &take, "Video", "video/mp4").await);
            let _ = std::fs::remove_file(&take);
        }
        let _ = std::fs::remove_file(&one);
        let mut args = vec![put_link(&app, "bench/floor/zip").await];
        for id in &ids {
            args.push(link(&app, &user, *id).await);
        }
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        // One round of each: the store keeps what is deleted until it compacts its volumes,
        // and a second round's 16 GiB more would crowd the disk.
        let worker = app.worker_pid(0);
        let floor_before = Cpu::now(worker);
        let floor = timed_script(STREAMED_ZIP_FLOOR, &args);
        let floor_cpu = Cpu::now(worker).row(&floor_before, floor);
        let job_before = Cpu::now(worker);
        let done = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let watcher = drive_tests::bench::watch_job_memory(done.clone(), Duration::from_millis(20));
        let (own, _, job) = timed_job(&app, &user, json!({ "jobType": "zip", "fileIds": ids })).await;
        let job_cpu = Cpu::now(worker).row(&job_before, own);
        done.store(true, std::sync::atomic::Ordering::Relaxed);
        let peak = watcher.join().unwrap();
        assert_eq!(job["state"], "done", "{job}");
        println!();
        println!(
            "| stored zip of {count} × 1 GiB, one round | floor: GET every input, PUT the result (`curl | curl -T -`) | job run | job ÷ floor | peak RSS of the job's process |"
        );
        println!("|---|---|---|---|---|");
        println!(
            "| | {floor:.2} s | {own:.2} s | {:.2} | {} MiB |",
            own / floor,
            peak / 1024
        );
        // The CPU the job's time includes that of reading the result's metadata after it.
        println!();
        println!("| CPU seconds of the stored zip of {count} GiB | {CPU_HEADS} |");
        println!("|---|---|---|---|---|---|---|");
        println!("| the floor | {floor_cpu} |");
        println!("| the zip job | {job_cpu} |");
    }
}
