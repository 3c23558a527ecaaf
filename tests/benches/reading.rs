//! Reading inside files (`scripts/bench reading`):
//!
//! 1. `/search-files` with `query` over 1,000,000 moments in one account (1,000 read text files
//!    seeded straight into the database, each moment with a real all-MiniLM-L6-v2 embedding of
//!    its sentence, moved a little so that no two are the same), through the API from 1 and from
//!    8 clients, against the floor: the same SQL run directly (`moments::words_query`, then
//!    `moments::found` of the moments the API answers from the best by words, 50 at 3 a file,
//!    and `search::hits` of their files) with no model, no search in memory, no HTTP and no
//!    JSON. The query's embedding alone is timed beside it;
//!    the nearest by meaning alone, in this process on the same embeddings: `Packed::nearest`
//!    by its rough pass over every moment's signs and then by the cells nearest the query,
//!    against scoring every moment, from 1 and 8 threads, with how many of the exact scan's
//!    nearest each way finds and how long making the cells took; and the best 200 by words alone: `Words::best`
//!    on the same moments' words in this process against PostgreSQL matching and ranking them
//!    (`@@` and `ts_rank_cd`, as the API did until 2026-12-01), from 1 and 8 callers.
//! 2. `/read-file` of a 24-megapixel JPEG (6000 × 4000) against `vipsthumbnail` to 1568 px on
//!    the same bytes fetched from the same store (`curl` of the same link, then
//!    `vipsthumbnail`), rounds alternating, median of seven.
//! 3. Captions of a spoken recording (espeak-ng): what a caller runs to caption a new
//!    recording, a readForSearch job (the speech model) and then a captions job (its moments as
//!    SubRip cues), against faster-whisper on the same model folder writing SubRip from the
//!    same bytes (`curl` of the same link, the model, `curl` PUT of the captions to the store),
//!    five rounds alternating which goes first.
//! 4. Queries embedded by 1 and 8 callers at once, in this process (`DRIVE_BENCH_ONLY=embedding`):
//!    each caller on candle's `BertModel` (the peer, on the same files), on the model itself, and
//!    through `BatchingEmbedder`, as the API embeds them; and 32 texts of 256 tokens by both.

use std::collections::HashMap;
use std::path::Path;
use std::time::{Duration, Instant};

use drive_core::db::moments;
use drive_core::db::search;
use drive_core::id::{FileId, UserId};
use drive_embed::{BatchingEmbedder, Embedder, Packed};
use drive_tests::bench::{add_file, link, middle, put_link, spread, timed_job, timed_script};
use drive_tests::media::ffmpeg;
use drive_tests::{TestApp, TestUser};
use drive_words::{Search, Words};
use futures::{StreamExt, stream};
use serde_json::json;
use sqlx::PgPool;

const FILES: usize = 1_000;
const MOMENTS: usize = 1_000_000;
const SENTENCES: usize = 1_000;
/// One client (the latency a caller sees) and eight at once (four for each core).
const CLIENTS: [usize; 2] = [1, 8];
/// What `/search-files` asks `Packed::nearest` for.
const NEAREST: usize = 200;
const CALLS: usize = 400;

/// Queries of the in-process figures: nearest by meaning alone, and embedding at once.
const QUERIES: [&str; 10] = [
    "lighthouse",
    "keeper painted tower",
    "fixing a car",
    "harbour storm",
    "a cake for the festival",
    "someone sold a boat",
    "checking the heating",
    "a map of the hills",
    "the bill for March",
    "riding a bike in the rain",
];

/// Sentences of varied words, made from parts: each moment takes one.
fn sentences() -> Vec<String> {
    let who = [
        "The keeper",
        "Our neighbour",
        "A young engineer",
        "The accountant",
        "My sister",
        "The old fisherman",
        "A careful driver",
        "The head chef",
        "Our teacher",
        "The mechanic",
    ];
    let did = [
        "painted",
        "repaired",
        "cleaned",
        "sold",
        "photographed",
        "measured",
        "delivered",
        "inspected",
        "borrowed",
        "described",
    ];
    let what = [
        "the lighthouse tower",
        "a broken bicycle",
        "the brake pads",
        "a lemon cake",
        "the harbour wall",
        "an invoice for March",
        "the garden fence",
        "a wooden boat",
        "the heating boiler",
        "a map of the valley",
    ];
    let when = [
        "before the storm",
        "on a quiet Sunday",
        "after the meeting",
        "in early spring",
        "late at night",
        "during the festival",
        "for the third time",
        "without any help",
        "while it was raining",
        "near the old mill",
    ];
    (0..SENTENCES)
        .map(|n| {
            format!(
                "{} {} {} {}.",
                who[n % 10],
                did[n / 10 % 10],
                what[n / 100 % 10],
                when[(n * 7 + n / 100) % 10]
            )
        })
        .collect()
}

/// Moment `n`'s embedding: its sentence's, moved a little (noise of its own, then length 1
/// again: a cosine of about 0.97 with the sentence's), so that the nearest are not ties.
fn moment_embedding(sentence: &[f32], n: usize) -> Vec<f32> {
    // xorshift64*, seeded by the moment's number.
    let mut state = (n as u64 + 1).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    let mut v: Vec<f32> = sentence
        .iter()
        .map(|x| {
            state ^= state >> 12;
            state ^= state << 25;
            state ^= state >> 27;
            let unit = (state.wrapping_mul(0x2545_f491_4f6c_dd1d) >> 40) as f32 / (1u64 << 24) as f32;
            x + (unit - 0.5) * 0.04
        })
        .collect();
    let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
    v.iter_mut().for_each(|x| *x /= norm);
    v
}

/// Seeds the account's files and moments; gives back the moments' embeddings packed as the API
/// packs them.
async fn seed(pool: &PgPool, user: UserId, models: &Path) -> Packed {
    let texts = sentences();
    let embedder = Embedder::load(models).expect("the embedding model");
    let started = Instant::now();
    let embeddings: Vec<Vec<f32>> = texts
        .chunks(64)
        .flat_map(|batch| embedder.embed(batch).expect("embedding"))
        .collect();
    println!(
        "embedded {SENTENCES} sentences in {:.1} s",
        started.elapsed().as_secs_f64()
    );
    let files: Vec<FileId> = sqlx::query_scalar(
        "insert into files (id, user_id, file_name, file_size, mime_type, kind, bucket, object_key)
         select gen_random_uuid(), $1, 'notes-' || n || '.txt', 1000, 'text/plain', 'Text', 'private',
                'users/' || $1 || '/bench/notes-' || n || '.txt'
         from generate_series(1, $2) as n
         returning id",
    )
    .bind(user)
    .bind(FILES as i32)
    .fetch_all(pool)
    .await
    .expect("files");
    sqlx::query(
        "insert into file_readings (file_id, user_id, state, moment_count)
         select unnest($1::uuid[]), $2, 'read', $3",
    )
    .bind(&files)
    .bind(user)
    .bind((MOMENTS / FILES) as i32)
    .execute(pool)
    .await
    .expect("readings");
    let mut packed = Packed::default();
    for batch in (0..MOMENTS).collect::<Vec<_>>().chunks(5_000) {
        let file: Vec<FileId> = batch.iter().map(|&n| files[n % FILES]).collect();
        let text: Vec<&str> = batch.iter().map(|&n| texts[n % SENTENCES].as_str()).collect();
        let embedding: Vec<Vec<u8>> = batch
            .iter()
            .map(|&n| {
                let moved = moment_embedding(&embeddings[n % SENTENCES], n);
                packed.push(&moved);
                drive_embed::to_bytes(&moved)
            })
            .collect();
        sqlx::query(
            "insert into moments (file_id, user_id, entry_type, text, embedding)
             select f, $2, 'text', t, e from unnest($1::uuid[], $3::text[], $4::bytea[]) as m (f, t, e)",
        )
        .bind(&file)
        .bind(user)
        .bind(&text)
        .bind(&embedding)
        .execute(pool)
        .await
        .expect("moments");
    }
    for sql in ["vacuum (analyze)", "checkpoint"] {
        sqlx::query(sql).execute(pool).await.expect(sql);
    }
    packed
}

/// The nearest by meaning alone, in this process: `Packed::nearest` by the rough pass over
/// every moment's signs, then in the cells nearest the query once `Packed::index` made them (as
/// the API does after reading an account), against scoring every moment; each query asked
/// `CALLS` times from 1 and 8 threads, with how many of the exact scan's nearest each way finds.
fn nearest_alone(mut packed: Packed, embedder: &Embedder) {
    let queries = embedder.embed(&QUERIES).expect("embedding");
    let exact = |packed: &Packed, query: &[f32]| {
        let mut all: Vec<(f32, usize)> = (0..packed.len()).map(|i| (packed.score(i, query), i)).collect();
        all.select_nth_unstable_by(NEAREST, |a, b| b.0.total_cmp(&a.0));
        all.truncate(NEAREST);
        all.into_iter().map(|(_, i)| i).collect::<Vec<_>>()
    };
    let recall = |packed: &Packed| {
        let mut found = 0;
        for query in &queries {
            let exact: std::collections::HashSet<usize> = exact(packed, query).into_iter().collect();
            found += packed
                .nearest(query, NEAREST, |_| true)
                .iter()
                .filter(|i| exact.contains(i))
                .count();
        }
        found as f64 / (NEAREST * queries.len()) as f64
    };
    println!(
        "\n| nearest {NEAREST} by meaning alone ({} moments, in process) | threads | p50 | p99 |",
        packed.len()
    );
    println!("| --- | --- | --- | --- |");
    let queries = &queries;
    let timed = |threads: usize, search: &(dyn Fn(&[f32]) + Sync)| {
        stats(on_threads(threads, CALLS, &|call| {
            search(&queries[call % queries.len()])
        }))
    };
    let rough_recall = recall(&packed);
    let mut rough = Vec::new();
    for threads in CLIENTS {
        let (p50, p99) = timed(threads, &|q| {
            std::hint::black_box(exact(&packed, q));
        });
        println!("| every moment scored | {threads} | {p50:.1} ms | {p99:.1} ms |");
        rough.push(timed(threads, &|q| {
            std::hint::black_box(packed.nearest(q, NEAREST, |_| true));
        }));
    }
    let started = Instant::now();
    packed.index();
    let indexing = started.elapsed().as_secs_f64();
    let cells_recall = recall(&packed);
    for (threads, (p50, p99)) in CLIENTS.into_iter().zip(rough) {
        println!(
            "| the rough pass (signs), then its 10,000 scored | {threads} | {p50:.1} ms | {p99:.1} ms |"
        );
        let (p50, p99) = timed(threads, &|q| {
            std::hint::black_box(packed.nearest(q, NEAREST, |_| true));
        });
        println!(
            "| the cells nearest the query, their moments scored | {threads} | {p50:.1} ms | {p99:.1} ms |"
        );
    }
    println!(
        "\nOf the exact scan's nearest {NEAREST} over {} queries, the rough pass found {:.1} % and the nearest cells {:.1} %; making the cells took {indexing:.2} s.",
        queries.len(),
        rough_recall * 100.0,
        cells_recall * 100.0,
    );
}

/// Queries of the words' figures: a word in a tenth of the moments, three words, two rarer ones.
const WORD_QUERIES: [&str; 3] = ["lighthouse", "keeper painted tower", "harbour storm"];

/// The best by words alone: `Words::best` on the moments' words in this process against
/// PostgreSQL matching and ranking them (the API's query until 2026-12-01), each query asked
/// `CALLS` times by 1 and 8 callers. Answers the index and its moments' ids, for the API rows'
/// floor.
async fn words_alone(pool: &PgPool, user: UserId) -> (Words, Vec<(i64, FileId)>) {
    let rows: Vec<(i64, FileId, String)> =
        sqlx::query_as("select id, file_id, words::text from moments where user_id = $1 order by id")
            .bind(user)
            .fetch_all(pool)
            .await
            .expect("words");
    let mut words = Words::default();
    for (_, _, tsvector) in &rows {
        words.push(tsvector).expect("a tsvector");
    }
    let moments: Vec<(i64, FileId)> = rows.into_iter().map(|(id, file, _)| (id, file)).collect();
    println!(
        "\n| best {NEAREST} by words alone ({} moments) | query | callers | p50 | p99 |",
        words.len()
    );
    println!("| --- | --- | --- | --- | --- |");
    for query in WORD_QUERIES {
        let search =
            Search::parse(&moments::words_query(pool, query).await.expect("tsquery")).expect("a tsquery");
        for callers in CLIENTS {
            let (p50, p99) = stats(on_threads(callers, CALLS, &|_| {
                std::hint::black_box(words.best(&search, NEAREST, |_| true));
            }));
            println!("| `Words::best`, in process | {query} | {callers} | {p50:.1} ms | {p99:.1} ms |");
            let (p50, p99) = load(callers, || async {
                let ranked: Vec<i64> = sqlx::query_scalar(
                    "select m.id from moments m, websearch_to_tsquery('english', $2) q
                     where m.user_id = $1 and m.words @@ q
                     order by ts_rank_cd(m.words, q) desc, m.id limit $3",
                )
                .bind(user)
                .bind(query)
                .bind(NEAREST as i64)
                .fetch_all(pool)
                .await
                .expect("ranked by PostgreSQL");
                std::hint::black_box(ranked);
            })
            .await;
            println!(
                "| PostgreSQL `@@` and `ts_rank_cd` | {query} | {callers} | {p50:.1} ms | {p99:.1} ms |"
            );
        }
    }
    (words, moments)
}

/// `call(0)` to `call(calls - 1)` spread over `threads` threads at once: each call's time.
fn on_threads(threads: usize, calls: usize, call: &(dyn Fn(usize) + Sync)) -> Vec<Duration> {
    std::thread::scope(|scope| {
        let workers: Vec<_> = (0..threads)
            .map(|t| {
                scope.spawn(move || {
                    (t..calls)
                        .step_by(threads)
                        .map(|i| {
                            let start = Instant::now();
                            call(i);
                            start.elapsed()
                        })
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        workers
            .into_iter()
            .flat_map(|w| w.join().expect("a bench thread"))
            .collect()
    })
}

/// Median and 99th percentile, in milliseconds.
fn stats(mut samples: Vec<Duration>) -> (f64, f64) {
    samples.sort();
    let at =
        |q: f64| samples[((samples.len() as f64 * q) as usize).min(samples.len() - 1)].as_secs_f64() * 1000.0;
    (at(0.5), at(0.99))
}

async fn load<F: Future<Output = ()>>(clients: usize, mut make: impl FnMut() -> F) -> (f64, f64) {
    let samples = stream::iter(0..CALLS)
        .map(|_| {
            let call = make();
            async move {
                let start = Instant::now();
                call.await;
                start.elapsed()
            }
        })
        .buffer_unordered(clients)
        .collect::<Vec<_>>()
        .await;
    stats(samples)
}

/// The peer of the embedding figures: candle's `BertModel` on the same model files, as
/// `drive-embed` ran it until 2026-12-01 (its products by the `gemm` crate, which packs the
/// weights at each call; each batch padded to its longest text and the padding masked), mean
/// pooled and scaled to length 1 as the drive does.
struct CandleBert {
    model: candle_transformers::models::bert::BertModel,
    tokenizer: tokenizers::Tokenizer,
}

impl CandleBert {
    fn load(models: &Path) -> CandleBert {
        use candle_transformers::models::bert::{BertModel, Config};
        let folder = models.join(drive_embed::MODEL_FOLDER);
        let config: Config =
            serde_json::from_str(&std::fs::read_to_string(folder.join("config.json")).expect("config.json"))
                .expect("config.json");
        let weights = std::fs::read(folder.join("model.safetensors")).expect("model.safetensors");
        let vars = candle_nn::VarBuilder::from_buffered_safetensors(
            weights,
            candle_core::DType::F32,
            &candle_core::Device::Cpu,
        )
        .expect("model.safetensors");
        let mut tokenizer =
            tokenizers::Tokenizer::from_file(folder.join("tokenizer.json")).expect("tokenizer.json");
        tokenizer.with_padding(Some(tokenizers::PaddingParams::default()));
        tokenizer
            .with_truncation(Some(tokenizers::TruncationParams {
                max_length: 256,
                ..Default::default()
            }))
            .expect("truncation");
        CandleBert {
            model: BertModel::load(vars, &config).expect("candle's BertModel"),
            tokenizer,
        }
    }

    fn embed(&self, texts: &[&str]) -> Vec<Vec<f32>> {
        use candle_core::{DType, Device, Tensor};
        let encodings = self.tokenizer.encode_batch(texts.to_vec(), true).expect("tokens");
        let rows = |f: fn(&tokenizers::Encoding) -> &[u32]| {
            let rows: Vec<Tensor> = encodings
                .iter()
                .map(|e| Tensor::new(f(e), &Device::Cpu).expect("a row"))
                .collect();
            Tensor::stack(&rows, 0).expect("rows")
        };
        let mask = rows(tokenizers::Encoding::get_attention_mask);
        let run = || -> candle_core::Result<Vec<Vec<f32>>> {
            let hidden = self.model.forward(
                &rows(tokenizers::Encoding::get_ids),
                &rows(tokenizers::Encoding::get_type_ids),
                Some(&mask),
            )?;
            let mask = mask.to_dtype(DType::F32)?.unsqueeze(2)?;
            let mean = hidden
                .broadcast_mul(&mask)?
                .sum(1)?
                .broadcast_div(&mask.sum(1)?)?;
            let norms = mean.sqr()?.sum_keepdim(1)?.sqrt()?;
            mean.broadcast_div(&norms)?.to_vec2()
        };
        run().expect("candle's forward pass")
    }
}

/// Queries embedded by 1 and 8 callers at once, in this process: each caller on candle's
/// `BertModel` (the peer), each on the drive's model itself, and through `BatchingEmbedder`
/// (as the API embeds them: what was asked meanwhile as one batch on the model's own thread).
/// Two rounds, the ways alternating. Then readForSearch's side: 32 texts of 256 tokens (the
/// longest a moment is embedded) by the drive's model and by candle's, rounds alternating.
fn embedding_at_once(models: &Path) {
    let shared = Embedder::load(models).expect("the embedding model");
    let batching = BatchingEmbedder::new(Embedder::load(models).expect("the embedding model"))
        .expect("the embedding thread");
    let candle = CandleBert::load(models);
    let timed = |threads: usize, embed: &(dyn Fn(&str) + Sync)| {
        on_threads(threads, CALLS / 2, &|call| embed(QUERIES[call % QUERIES.len()]))
    };
    println!("\n| embedding the query, in process | callers at once | p50 | p99 |");
    println!("| --- | --- | --- | --- |");
    for threads in CLIENTS {
        let (mut peer, mut alone, mut together) = (Vec::new(), Vec::new(), Vec::new());
        for _ in 0..2 {
            peer.extend(timed(threads, &|text| {
                std::hint::black_box(candle.embed(&[text]));
            }));
            alone.extend(timed(threads, &|text| {
                std::hint::black_box(shared.embed(&[text]).expect("embedding"));
            }));
            together.extend(timed(threads, &|text| {
                std::hint::black_box(batching.embed(text).expect("embedding"));
            }));
        }
        let (p50, p99) = stats(peer);
        println!("| peer: candle's `BertModel`, each caller on it | {threads} | {p50:.1} ms | {p99:.1} ms |");
        let (p50, p99) = stats(alone);
        println!("| each caller on the model itself | {threads} | {p50:.1} ms | {p99:.1} ms |");
        let (p50, p99) = stats(together);
        println!("| `BatchingEmbedder` (one batch of what waits) | {threads} | {p50:.1} ms | {p99:.1} ms |");
    }
    let long = sentences().join(" ");
    let words: Vec<&str> = long.split(' ').collect();
    // 256 tokens each: more words than that, cut by the tokenizer as the drive cuts them.
    let texts: Vec<String> = (0..32).map(|i| words[i * 7..i * 7 + 400].join(" ")).collect();
    let texts: Vec<&str> = texts.iter().map(String::as_str).collect();
    let (mut ours, mut theirs) = (Vec::new(), Vec::new());
    for _ in 0..5 {
        let start = Instant::now();
        std::hint::black_box(shared.embed(&texts).expect("embedding"));
        ours.push(start.elapsed());
        let start = Instant::now();
        std::hint::black_box(candle.embed(&texts));
        theirs.push(start.elapsed());
    }
    let (ours, _) = stats(ours);
    let (theirs, _) = stats(theirs);
    println!(
        "\n| 32 texts of 256 tokens, in process, median of 5 | ours | peer: candle's `BertModel` | ratio |"
    );
    println!("| --- | --- | --- | --- |");
    println!(
        "| one pass of readForSearch's longest moments | {ours:.0} ms | {theirs:.0} ms | {:.2} |",
        ours / theirs
    );
}

async fn query_latency(app: &TestApp, user: &TestUser, pool: &PgPool, models: &Path) {
    let packed = seed(pool, user.id, models).await;
    let embedder = Embedder::load(models).expect("the embedding model");
    nearest_alone(packed, &embedder);
    let (words, moments_at) = words_alone(pool, user.id).await;
    // The API reads an account's embeddings into memory at its first query by meaning, and
    // then only what changed: timed once here, then left out of the figures.
    let start = Instant::now();
    let first = app
        .call(user, "/search-files", Some(json!({ "query": "warming up" })))
        .await;
    assert_eq!(first.status, 200, "{}", first.body);
    println!(
        "first query of the account (its {MOMENTS} embeddings read into the API's memory): {:.2} s",
        start.elapsed().as_secs_f64()
    );
    println!(
        "\n| query ({MOMENTS} moments, one account) | clients | API p50 | API p99 | SQL floor p50 | SQL floor p99 | p99 ratio | embedding the query p50 |"
    );
    println!("| --- | --- | --- | --- | --- | --- | --- | --- |");
    for (shape, body) in [
        ("one word", json!({ "query": "lighthouse" })),
        ("three words", json!({ "query": "keeper painted tower" })),
        ("meaning, no word shared", json!({ "query": "fixing a car" })),
        (
            "words, narrowed to text files",
            json!({ "query": "harbour storm", "types": ["Text"] }),
        ),
    ] {
        let query = body["query"].as_str().unwrap().to_string();
        // The floor's moments: those the API answers from its words ranking, 50 at most and 3
        // a file, as it chooses them before fetching them.
        let search = Search::parse(&moments::words_query(pool, &query).await.unwrap()).unwrap();
        let mut per_file: HashMap<FileId, usize> = HashMap::new();
        let answered: Vec<i64> = words
            .best(&search, NEAREST, |_| true)
            .into_iter()
            .map(|i| moments_at[i])
            .filter(|(_, file)| {
                let count = per_file.entry(*file).or_default();
                *count += 1;
                *count <= 3
            })
            .take(50)
            .map(|(id, _)| id)
            .collect();
        let answered = &answered;
        let embed: Vec<Duration> = (0..50)
            .map(|_| {
                let start = Instant::now();
                embedder.embed(std::slice::from_ref(&query)).unwrap();
                start.elapsed()
            })
            .collect();
        let (embed50, _) = stats(embed);
        for clients in CLIENTS {
            let (api50, api99) = load(clients, || {
                let body = body.clone();
                async move {
                    let reply = app.call(user, "/search-files", Some(body)).await;
                    assert_eq!(reply.status, 200, "{}", reply.body);
                    assert!(
                        !reply.body["moments"].as_array().unwrap().is_empty(),
                        "{}",
                        reply.body
                    );
                }
            })
            .await;
            let (floor50, floor99) = load(clients, || {
                let query = query.clone();
                async move {
                    moments::words_query(pool, &query).await.unwrap();
                    let found = moments::found(pool, &[user.id], answered).await.unwrap();
                    let mut files: Vec<FileId> = found.iter().map(|m| m.file_id).collect();
                    files.sort();
                    files.dedup();
                    search::hits(pool, user.id, &files).await.unwrap();
                }
            })
            .await;
            println!(
                "| {shape} | {clients} | {api50:.1} ms | {api99:.1} ms | {floor50:.1} ms | {floor99:.1} ms | {:.2} | {embed50:.1} ms |",
                api99 / floor99
            );
        }
    }
}

async fn read_file_against_vips(app: &TestApp, user: &TestUser) {
    let dir = Path::new(&std::env::var("DRIVE_BENCH_DIR").unwrap()).join("read");
    std::fs::create_dir_all(&dir).unwrap();
    let photo = dir.join("photo.jpg");
    let bytes = ffmpeg(
        &[
            "-f",
            "lavfi",
            "-i",
            "testsrc2=size=6000x4000",
            "-frames:v",
            "1",
            "-q:v",
            "3",
        ],
        "jpg",
    );
    std::fs::write(&photo, &bytes).unwrap();
    let id = add_file(app, user, &photo, "Image", "image/jpeg").await;
    let url = link(app, user, id).await;
    let peer = "curl -sf -o \"$2/fetched.jpg\" \"$1\" && vipsthumbnail \"$2/fetched.jpg\" -s 1568 -o \"$2/thumb.jpg\"";
    let dir_arg = dir.to_str().unwrap();
    let (mut ours, mut theirs) = (Vec::new(), Vec::new());
    for round in 0..8 {
        // Rotated: the first of each pair alternates, and round 0 only warms both up.
        let mut turn = [true, false];
        if round % 2 == 1 {
            turn.reverse();
        }
        for drive in turn {
            let seconds = if drive {
                let start = Instant::now();
                let reply = app.call(user, "/read-file", Some(json!({ "fileId": id }))).await;
                assert_eq!(reply.status, 200, "{}", reply.body);
                start.elapsed().as_secs_f64()
            } else {
                timed_script(peer, &[&url, dir_arg])
            };
            if round > 0 {
                if drive {
                    ours.push(seconds)
                } else {
                    theirs.push(seconds)
                }
            }
        }
    }
    let spread = |v: &[f64]| {
        let (min, max) = v
            .iter()
            .fold((f64::MAX, 0.0f64), |(a, b), &x| (a.min(x), b.max(x)));
        format!("{:.3} s ({:.3}–{:.3})", middle(v.to_vec()), min, max)
    };
    println!(
        "\n| /read-file of a 6000 × 4000 JPEG ({} MB) | drive median (min–max) | curl + vipsthumbnail -s 1568 median (min–max) | ratio of medians |",
        bytes.len() / 1_000_000
    );
    println!("| --- | --- | --- | --- |");
    println!(
        "| 7 rounds, alternating | {} | {} | {:.2} |",
        spread(&ours),
        spread(&theirs),
        middle(ours.clone()) / middle(theirs.clone())
    );
}

/// What the recording says: ten sentences read by espeak-ng, about 50 s.
const SPOKEN: &str = "The old lighthouse stood at the edge of the cliff for more than a century. \
Every evening the keeper climbed the narrow stairs to light the lamp. \
Ships passing in the night relied on its steady beam to avoid the rocks. \
When the storm arrived, the waves rose higher than anyone could remember. \
The keeper wrote in his journal that the wind sounded like a distant choir. \
By morning the sea was calm again, and the fishermen returned to the harbour. \
Years later the lighthouse was replaced by an automatic light. \
Visitors now walk along the path and read the stories painted on the walls. \
Some say that on quiet nights you can still hear footsteps on the stairs. \
The town holds a festival every summer to remember the keepers and their work.";

async fn captions_against_faster_whisper(app: &TestApp, user: &TestUser) {
    let peer = std::env::var("DRIVE_BENCH_CAPTIONS_PEER")
        .expect("DRIVE_BENCH_CAPTIONS_PEER (scripts/bench sets it)");
    let dir = Path::new(&std::env::var("DRIVE_BENCH_DIR").unwrap()).join("captions");
    std::fs::create_dir_all(&dir).unwrap();
    let dir_arg = dir.to_str().unwrap();
    timed_script(
        "espeak-ng -v en-us -s 150 -w \"$1/spoken.raw.wav\" \"$2\" && sox \"$1/spoken.raw.wav\" -r 16000 -c 1 -b 16 \"$1/spoken.wav\"",
        &[dir_arg, SPOKEN],
    );
    let recording = dir.join("spoken.wav");
    let seconds = drive_tests::media::duration(&drive_tests::media::ffprobe_file(&recording, &[]));
    let id = add_file(app, user, &recording, "Audio", "audio/wav").await;
    let url = link(app, user, id).await;
    let put = put_link(app, "bench/peer/captions.srt").await;
    let script = format!(
        "curl -sf -o \"$2/in.wav\" \"$1\" && /usr/bin/time -f %M -o \"$2/peak-kib\" {peer} \"$2/in.wav\" \"$2/out.srt\" && test -s \"$2/out.srt\" && curl -sf -T \"$2/out.srt\" -o /dev/null \"$3\""
    );
    let (mut theirs, mut reads, mut captions, mut both) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for round in 0..5 {
        if round % 2 == 0 {
            theirs.push(timed_script(&script, &[&url, dir_arg, &put]));
        }
        let (read, _, _) = timed_job(app, user, json!({ "jobType": "readForSearch", "fileIds": [id] })).await;
        let (cues, _, _) = timed_job(app, user, json!({ "jobType": "captions", "fileIds": [id] })).await;
        reads.push(read);
        captions.push(cues);
        both.push(read + cues);
        if round % 2 == 1 {
            theirs.push(timed_script(&script, &[&url, dir_arg, &put]));
        }
    }
    println!(
        "\n| captions of {seconds:.1} s of speech, 5 rounds alternating | faster-whisper → SubRip (curl, the model on every core, curl PUT) | readForSearch job run | captions job run | both | both ÷ peer |"
    );
    println!("| --- | --- | --- | --- | --- | --- |");
    println!(
        "| medians (min–max) | {} | {} | {} | {} | {:.2} |",
        spread(&theirs),
        spread(&reads),
        spread(&captions),
        spread(&both),
        middle(both.clone()) / middle(theirs.clone())
    );
    // Peak memory: the peer's last run (`time -f %M`), and the worker's supervisor, which holds
    // Whisper and the embedding model for all its jobs (its name is host-pid-suffix).
    let peer_kib = std::fs::read_to_string(dir.join("peak-kib")).unwrap_or_default();
    let pid = app
        .worker(0)
        .name
        .rsplit('-')
        .nth(1)
        .expect("the worker's pid in its name");
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    let field = |key: &str| {
        status
            .lines()
            .find_map(|line| line.strip_prefix(key))
            .map(|v| v.trim().to_string())
            .unwrap_or_default()
    };
    println!(
        "peak memory: faster-whisper {} kB; the worker's supervisor {} (now {})",
        peer_kib.trim(),
        field("VmHWM:"),
        field("VmRSS:")
    );
}

#[tokio::main]
async fn main() {
    let models = std::path::PathBuf::from(
        std::env::var("DRIVE_MODELS").expect("DRIVE_MODELS (scripts/bench sets it)"),
    );
    let mut app = TestApp::spawn_with(&[("DRIVE_JOB_MINUTES_PRO", "100000")]).await;
    let user = app.user(Some("Pro")).await;
    let pool = PgPool::connect(&app.database_url)
        .await
        .expect("the test database");
    // DRIVE_BENCH_ONLY=captions runs only the sections whose name holds one of those words:
    // embedding (queries embedded at once, in process), read (`/read-file`), query (search at a
    // million moments), captions.
    let only = std::env::var("DRIVE_BENCH_ONLY").unwrap_or_default();
    let chosen = |section: &str| only.is_empty() || only.split(',').any(|word| section.contains(word));
    if chosen("embedding") {
        embedding_at_once(&models);
    }
    if chosen("read") {
        read_file_against_vips(&app, &user).await;
    }
    if chosen("query") {
        query_latency(&app, &user, &pool, &models).await;
    }
    if chosen("captions") {
        app.start_worker(&[("DRIVE_WORKER_CONCURRENCY", "1")]).await;
        captions_against_faster_whisper(&app, &user).await;
    }
}
