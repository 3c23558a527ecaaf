//! Searching inside files: readForSearch jobs read text files into moments (embedded by the
//! real model in the confined job process), and `/search-files`'s `query` finds them by words
//! and by meaning, only in the caller's own library files.

use drive_core::id::FileId;
use drive_tests::{TestApp, TestUser, assert_done};
use serde_json::{Value, json};

async fn app_with_worker() -> (TestApp, TestUser) {
    let mut app = TestApp::spawn().await;
    app.start_worker(&[]).await;
    let user = app.user(Some("Pro")).await;
    (app, user)
}

/// Uploads a text file and has it read; answers its id and the job.
async fn read_text(app: &TestApp, user: &TestUser, name: &str, text: &str) -> (FileId, Value) {
    let id = app
        .upload(user, name, "Text", "text/plain", text.as_bytes().to_vec())
        .await;
    let job = app
        .run_job(user, json!({ "jobType": "readForSearch", "fileIds": [id] }))
        .await;
    (id, job)
}

async fn query(app: &TestApp, user: &TestUser, body: Value) -> Value {
    let found = app.call(user, "/search-files", Some(body)).await;
    assert_eq!(found.status, 200, "{}", found.body);
    found.body
}

fn moment_texts(found: &Value) -> Vec<String> {
    found["moments"]
        .as_array()
        .expect("moments")
        .iter()
        .map(|m| m["text"].as_str().unwrap().to_string())
        .collect()
}

fn moment_files(found: &Value) -> Vec<String> {
    found["moments"]
        .as_array()
        .expect("moments")
        .iter()
        .map(|m| m["fileId"].as_str().unwrap().to_string())
        .collect()
}

const REPAIR: &str = "The garage replaced the brake pads and changed the engine oil of the automobile.";
const CAKE: &str =
    "Whisk the eggs with sugar, fold in the flour and bake the lemon sponge for forty minutes.";

#[tokio::test]
async fn a_read_text_file_is_found_by_its_words_and_by_what_it_means() {
    let (app, user) = app_with_worker().await;
    let (notes, job) = read_text(
        &app,
        &user,
        "notes.txt",
        &format!("Notes\n\n{REPAIR}\n\n{CAKE}\n"),
    )
    .await;
    assert_done(&job);
    assert_eq!(job["jobType"], "readForSearch");
    assert_eq!(
        job["result"],
        json!({ "files": [{ "fileId": notes, "moments": 3, "truncated": false }] })
    );

    // By a word (stemmed: "brakes" finds "brake"), first; what is near in meaning may follow
    // (a one-word heading is near any one word), what is unrelated does not.
    let found = query(&app, &user, json!({ "query": "brakes" })).await;
    let texts = moment_texts(&found);
    assert_eq!(texts.first().map(String::as_str), Some(REPAIR), "{found}");
    assert!(!texts.contains(&CAKE.to_string()), "{found}");
    let moment = &found["moments"][0];
    assert_eq!(moment["entryType"], "text");
    assert_eq!(
        (
            moment["at"].clone(),
            moment["until"].clone(),
            moment["page"].clone()
        ),
        (Value::Null, Value::Null, Value::Null)
    );
    assert_eq!(found["files"][0]["id"], json!(notes));
    assert_eq!(found["files"].as_array().unwrap().len(), 1);
    assert_eq!(found["nextOffset"], Value::Null);

    // By meaning: no word of the query is in the paragraph.
    let found = query(&app, &user, json!({ "query": "fixing my car" })).await;
    assert_eq!(
        moment_texts(&found).first().map(String::as_str),
        Some(REPAIR),
        "{found}"
    );
    let found = query(&app, &user, json!({ "query": "baking a dessert" })).await;
    assert_eq!(
        moment_texts(&found).first().map(String::as_str),
        Some(CAKE),
        "{found}"
    );

    // The other fields narrow which files it looks in.
    for (narrowing, finds) in [
        (json!({ "types": ["Text"] }), true),
        (json!({ "types": ["Image"] }), false),
        (json!({ "text": "notes" }), true),
        (json!({ "text": "elsewhere" }), false),
        (json!({ "isPublic": true }), false),
        (json!({ "minSize": 100000 }), false),
        (json!({ "folder": "/nowhere" }), false),
    ] {
        let mut body = narrowing.clone();
        body["query"] = json!("brake pads");
        let found = query(&app, &user, body).await;
        assert_eq!(
            moment_texts(&found).contains(&REPAIR.to_string()),
            finds,
            "{narrowing}: {found}"
        );
        assert_eq!(
            found["files"].as_array().unwrap().is_empty(),
            !finds,
            "{narrowing}"
        );
    }

    // The query is bounded and not blank.
    let long = app
        .call(&user, "/search-files", Some(json!({ "query": "a".repeat(501) })))
        .await;
    long.assert_bad_field("invalid_field", "query");
    let blank = app
        .call(&user, "/search-files", Some(json!({ "query": "  " })))
        .await;
    blank.assert_bad_field("invalid_field", "query");
    // PostgreSQL stacks at most 31 negations: more is the query's fault.
    for negations in [
        format!("{}brakes", "-".repeat(40)),
        format!("{}brakes", "- ".repeat(40)),
    ] {
        let deep = app
            .call(&user, "/search-files", Some(json!({ "query": negations })))
            .await;
        deep.assert_bad_field("invalid_field", "query");
    }
    let negated = query(
        &app,
        &user,
        json!({ "query": format!("{}brakes", "--".repeat(15)) }),
    )
    .await;
    assert!(
        moment_texts(&negated).iter().any(|t| t.contains("brake")),
        "{negated}"
    );
    let at_limit = app
        .call(
            &user,
            "/search-files",
            Some(json!({ "query": "car ".repeat(125) })),
        )
        .await;
    assert_eq!(at_limit.status, 200, "{}", at_limit.body);
}

#[tokio::test]
async fn nobody_searches_inside_another_users_files_even_public_ones() {
    let (app, owner) = app_with_worker().await;
    let other = app.user(Some("Pro")).await;
    let (notes, job) = read_text(&app, &owner, "notes.txt", REPAIR).await;
    assert_done(&job);
    let made_public = app
        .call(&owner, "/toggle-file-access", Some(json!({ "id": notes })))
        .await;
    assert_eq!(made_public.status, 200, "{}", made_public.body);
    let (own, job) = read_text(&app, &other, "mine.txt", CAKE).await;
    assert_done(&job);

    for q in ["brake pads", "fixing my car", "automobile"] {
        let found = query(&app, &other, json!({ "query": q })).await;
        assert!(!moment_files(&found).contains(&notes.to_string()), "{q}: {found}");
        assert!(
            moment_files(&found).iter().all(|f| *f == own.to_string()),
            "{found}"
        );
    }
    // The owner still finds it, public now.
    let found = query(&app, &owner, json!({ "query": "brake pads", "isPublic": true })).await;
    assert_eq!(moment_files(&found), [notes.to_string()]);

    // Nor can another user have someone else's file read.
    let refused = app
        .call(
            &other,
            "/create-file-job",
            Some(json!({ "jobType": "readForSearch", "fileIds": [notes] })),
        )
        .await;
    assert_eq!(refused.status, 404, "{}", refused.body);
}

#[tokio::test]
async fn at_most_three_moments_a_file_and_limit_caps_them() {
    let (app, user) = app_with_worker().await;
    let cars: Vec<String> = (1..=6)
        .map(|n| format!("Car maintenance note {n}: the car needed new tyres and a car wash."))
        .collect();
    let (many, job) = read_text(&app, &user, "cars.txt", &cars.join("\n\n")).await;
    assert_done(&job);
    let (few, job) = read_text(
        &app,
        &user,
        "more cars.txt",
        "The car is parked.\n\nA car horn sounded.",
    )
    .await;
    assert_done(&job);

    let found = query(&app, &user, json!({ "query": "car" })).await;
    let files = moment_files(&found);
    assert_eq!(
        files.iter().filter(|f| **f == many.to_string()).count(),
        3,
        "{found}"
    );
    assert_eq!(
        files.iter().filter(|f| **f == few.to_string()).count(),
        2,
        "{found}"
    );
    assert_eq!(found["files"].as_array().unwrap().len(), 2);

    let found = query(&app, &user, json!({ "query": "car", "limit": 2 })).await;
    assert_eq!(found["moments"].as_array().unwrap().len(), 2, "{found}");
    let named: Vec<&str> = found["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["id"].as_str().unwrap())
        .collect();
    let mut expected = moment_files(&found);
    expected.dedup();
    assert_eq!(
        named, expected,
        "files are the moments' files, in the moments' order"
    );
}

async fn moments_of(app: &TestApp, file: FileId) -> i64 {
    sqlx::query_scalar("select count(*) from moments where file_id = $1")
        .bind(file)
        .fetch_one(&mut app.db().await)
        .await
        .unwrap()
}

#[tokio::test]
async fn deleting_or_purging_a_file_removes_its_moments() {
    let (app, user) = app_with_worker().await;
    let (deleted, job) = read_text(&app, &user, "deleted.txt", REPAIR).await;
    assert_done(&job);
    let (purged, job) = read_text(&app, &user, "purged.txt", &format!("{REPAIR} Again.")).await;
    assert_done(&job);
    assert_eq!(
        (moments_of(&app, deleted).await, moments_of(&app, purged).await),
        (1, 1)
    );
    assert_eq!(
        moment_files(&query(&app, &user, json!({ "query": "brake" })).await).len(),
        2
    );

    let gone = app
        .call(&user, "/delete-files", Some(json!([{ "id": deleted }])))
        .await;
    assert_eq!(gone.status, 200, "{}", gone.body);
    assert_eq!(moments_of(&app, deleted).await, 0);

    let trashed = app
        .call(&user, "/trash-files", Some(json!([{ "id": purged }])))
        .await;
    assert_eq!(trashed.status, 200, "{}", trashed.body);
    let found = query(&app, &user, json!({ "query": "brake" })).await;
    assert_eq!(
        found["moments"],
        json!([]),
        "trashed files are not searched: {found}"
    );
    assert_eq!(moments_of(&app, purged).await, 1, "kept while it can be restored");
    let purge = app.call(&user, "/purge-trashed-files", None).await;
    assert_eq!(purge.status, 200, "{}", purge.body);
    assert_eq!(moments_of(&app, purged).await, 0);
    let readings: i64 = sqlx::query_scalar("select count(*) from file_readings")
        .fetch_one(&mut app.db().await)
        .await
        .unwrap();
    assert_eq!(readings, 0);
}

#[tokio::test]
async fn a_file_that_cannot_be_read_fails_the_job_with_a_sentence() {
    let (app, user) = app_with_worker().await;
    let binary = app
        .upload(
            &user,
            "data.txt",
            "Text",
            "text/plain",
            vec![0x66, 0x6f, 0xff, 0xfe, 0x00, 0x01],
        )
        .await;
    let job = app
        .run_job(&user, json!({ "jobType": "readForSearch", "fileIds": [binary] }))
        .await;
    assert_eq!(job["state"], "failed", "{job}");
    assert_eq!(job["error"], "data.txt: it is not text in UTF-8 (byte 3 is not)");
    let (state, error): (String, Option<String>) =
        sqlx::query_as("select state, error from file_readings where file_id = $1")
            .bind(binary)
            .fetch_one(&mut app.db().await)
            .await
            .unwrap();
    assert_eq!(
        (state.as_str(), error.as_deref()),
        ("failed", Some("it is not text in UTF-8 (byte 3 is not)"))
    );

    // A picture that is not one fails its reading with a sentence naming it.
    let picture = app
        .upload(&user, "p.png", "Image", "image/png", drive_tests::bytes(100, 1))
        .await;
    let job = app
        .run_job(&user, json!({ "jobType": "readForSearch", "fileIds": [picture] }))
        .await;
    assert_eq!(job["state"], "failed", "{job}");
    assert!(job["error"].as_str().unwrap().starts_with("p.png: "), "{job}");

    // Kinds with no source are refused when the job is made.
    let archive = app
        .upload(
            &user,
            "a.zip",
            "Archive",
            "application/zip",
            drive_tests::bytes(100, 2),
        )
        .await;
    let refused = app
        .call(
            &user,
            "/create-file-job",
            Some(json!({ "jobType": "readForSearch", "fileIds": [archive] })),
        )
        .await;
    refused.assert_bad_field("invalid_field", "fileIds");
}

/// Moments for matching words in memory against PostgreSQL: phrases, hyphens, stop words,
/// repeats, possessives, numbers and addresses.
const SAID: [&str; 12] = [
    "The garage replaced the brake pads and checked the brake fluid.",
    "Brake pads wear out; the pads of a brake squeal when worn.",
    "A state-of-the-art design for a fat cat that sat on the mat.",
    "The fat, fat cat sat; then the cat ran.",
    "Dogs bark loudly at night, and the dog barked at the cat.",
    "Bake the lemon sponge for forty minutes at 180 degrees.",
    "Write to a.b.c@example.com or call supernova-1987a for details.",
    "The cat's toy and the dogs' beds.",
    "the of and a",
    "Stormy harbour: the boats rocked in the storm all night.",
    "La la la, the chorus goes la la.",
    "Fluid brake pads? No: brake fluid and pads.",
];

/// A text file `name` recorded as read into `moments` moments, straight into the database:
/// its moments are written by the test.
async fn read_file_row(pool: &sqlx::PgPool, user: &TestUser, name: &str, moments: usize) -> FileId {
    let file: FileId = sqlx::query_scalar(
        "insert into files (id, user_id, file_name, file_size, mime_type, kind, bucket, object_key)
         values (gen_random_uuid(), $1, $2, 1, 'text/plain', 'Text', 'private', 'users/' || $1 || '/' || $2)
         returning id",
    )
    .bind(user.id)
    .bind(name)
    .fetch_one(pool)
    .await
    .unwrap();
    sqlx::query(
        "insert into file_readings (file_id, user_id, state, moment_count) values ($1, $2, 'read', $3)",
    )
    .bind(file)
    .bind(user.id)
    .bind(moments as i32)
    .execute(pool)
    .await
    .unwrap();
    file
}

/// `count` moments of `file`, their texts `text` and a number, their embeddings all one.
async fn add_moments(pool: &sqlx::PgPool, user: &TestUser, file: FileId, text: &str, count: i32) {
    sqlx::query(
        "insert into moments (file_id, user_id, entry_type, text, embedding)
         select $1, $2, 'text', $3 || ' ' || n, $4 from generate_series(1, $5) n",
    )
    .bind(file)
    .bind(user.id)
    .bind(text)
    .bind(drive_embed::to_bytes(&[0.05; drive_embed::DIMENSIONS]))
    .bind(count)
    .execute(pool)
    .await
    .unwrap();
}

/// The API's count of moments read from the database into its memory.
async fn moments_read(app: &TestApp) -> u64 {
    let url = format!("{}/metrics", app.metrics_url.as_deref().expect("metrics served"));
    let text = reqwest::get(url).await.unwrap().text().await.unwrap();
    let line = text
        .lines()
        .find(|l| l.starts_with("drive_search_moments_read_total "))
        .unwrap_or_else(|| panic!("no drive_search_moments_read_total in {text}"));
    line["drive_search_moments_read_total ".len()..].parse().unwrap()
}

/// Eight first searches of an account at once: one reads its moments into the API's memory
/// and the others wait for that reading (each reading its own would be eight copies of the
/// account in memory at once); a search after more moments came reads only those.
#[tokio::test]
async fn searches_at_once_read_an_account_once_then_only_what_is_new() {
    let app = TestApp::spawn().await;
    let user = app.user(Some("Pro")).await;
    let pool = sqlx::PgPool::connect(&app.database_url).await.unwrap();
    let file = read_file_row(&pool, &user, "said.txt", 20_005).await;
    add_moments(&pool, &user, file, "the lighthouse keeper wrote entry", 20_000).await;
    assert_eq!(moments_read(&app).await, 0);
    let found = futures::future::join_all(
        (0..8).map(|_| query(&app, &user, json!({ "query": "lighthouse keeper" }))),
    )
    .await;
    for each in &found {
        let texts = moment_texts(each);
        assert!(
            !texts.is_empty() && texts.iter().all(|t| t.contains("lighthouse")),
            "{each}"
        );
        assert_eq!(each["moments"], found[0]["moments"]);
    }
    assert_eq!(moments_read(&app).await, 20_000);

    add_moments(&pool, &user, file, "the harbour storm", 5).await;
    let texts = moment_texts(&query(&app, &user, json!({ "query": "harbour storm" })).await);
    assert!(
        !texts.is_empty() && texts.iter().all(|t| t.contains("harbour storm")),
        "{texts:?}"
    );
    assert_eq!(moments_read(&app).await, 20_005);
    // Nothing new: nothing read.
    query(&app, &user, json!({ "query": "lighthouse" })).await;
    assert_eq!(moments_read(&app).await, 20_005);
}

/// The API chooses a query's moments by the files its copy in memory gives them and fetches
/// only those: when the file of the best ones has been trashed since, the moments ranked after
/// take their places, and the answer still holds `limit` moments.
#[tokio::test]
async fn moments_of_a_file_trashed_since_give_way_to_the_next_ranked() {
    let app = TestApp::spawn().await;
    let user = app.user(Some("Pro")).await;
    let pool = sqlx::PgPool::connect(&app.database_url).await.unwrap();
    let trashed = read_file_row(&pool, &user, "first.txt", 5).await;
    add_moments(&pool, &user, trashed, "lighthouse lighthouse lighthouse", 5).await;
    let second = read_file_row(&pool, &user, "second.txt", 3).await;
    add_moments(&pool, &user, second, "a lighthouse", 3).await;
    let third = read_file_row(&pool, &user, "third.txt", 3).await;
    add_moments(&pool, &user, third, "a lighthouse", 3).await;
    let found = query(&app, &user, json!({ "query": "lighthouse", "limit": 4 })).await;
    assert_eq!(
        moment_files(&found)[..3],
        [trashed.to_string(), trashed.to_string(), trashed.to_string()],
        "the first file's moments rank first: {found}"
    );

    let trash = app
        .call(&user, "/trash-files", Some(json!([{ "id": trashed }])))
        .await;
    assert_eq!(trash.status, 200, "{}", trash.body);
    let found = query(&app, &user, json!({ "query": "lighthouse", "limit": 4 })).await;
    let files = moment_files(&found);
    assert_eq!(files.len(), 4, "{found}");
    assert!(!files.contains(&trashed.to_string()), "{found}");
    let mut counts = [second, third].map(|file| files.iter().filter(|f| **f == file.to_string()).count());
    counts.sort();
    assert_eq!(
        counts,
        [1, 3],
        "three of the next file, then one of the last: {found}"
    );
}

#[tokio::test]
async fn words_matched_in_memory_are_those_postgresql_matches() {
    let app = TestApp::spawn().await;
    let user = app.user(Some("Pro")).await;
    let pool = sqlx::PgPool::connect(&app.database_url).await.unwrap();
    let file = read_file_row(&pool, &user, "said.txt", SAID.len()).await;
    let embedding = drive_embed::to_bytes(&[0.0; drive_embed::DIMENSIONS]);
    for text in SAID {
        sqlx::query(
            "insert into moments (file_id, user_id, entry_type, text, embedding) values ($1, $2, 'text', $3, $4)",
        )
        .bind(file)
        .bind(user.id)
        .bind(text)
        .bind(&embedding)
        .execute(&pool)
        .await
        .unwrap();
    }
    let rows: Vec<(i64, String)> = sqlx::query_as("select id, words::text from moments order by id")
        .fetch_all(&pool)
        .await
        .unwrap();
    let mut words = drive_words::Words::default();
    for (_, tsvector) in &rows {
        words.push(tsvector).unwrap();
    }
    let mut matched = 0;
    for query in [
        "brake",
        "brakes pads",
        "brake or cake",
        "-brake",
        "brake -fluid",
        "\"brake pads\"",
        "\"brake fluid\"",
        "\"pads brake\"",
        "\"fat cat\"",
        "\"the fat cat sat\"",
        "\"fat or cat\"",
        "state-of-the-art",
        "\"state-of-the-art design\"",
        "-\"fat cat\"",
        "cat or -\"dog bark\"",
        "dog barking",
        "\"dog barked\"",
        "\"la la la\"",
        "\"la la\" -chorus",
        "a.b.c@example.com",
        "supernova-1987a",
        "cat's toy",
        "the",
        "storm harbours",
        "\"brake pads\" or \"brake fluid\" -garage",
        "forty minutes 180",
        "nowhere",
    ] {
        let expected: Vec<i64> = sqlx::query_scalar(
            "select id from moments where words @@ websearch_to_tsquery('english', $1) order by id",
        )
        .bind(query)
        .fetch_all(&pool)
        .await
        .unwrap();
        let tsquery = drive_core::db::moments::words_query(&pool, query).await.unwrap();
        let search = drive_words::Search::parse(&tsquery).unwrap_or_else(|e| panic!("{query:?}: {e}"));
        let mut found: Vec<i64> = words
            .best(&search, SAID.len(), |_| true)
            .into_iter()
            .map(|i| rows[i].0)
            .collect();
        found.sort_unstable();
        assert_eq!(found, expected, "{query:?} ({tsquery})");
        matched += usize::from(!expected.is_empty());
    }
    // The queries are not vacuous: most find something, and some not everything.
    assert!(matched >= 20, "{matched}");
}
