//! People's sign-in over HTTP: an invitation sets a password; the sign-in lives in an HttpOnly,
//! SameSite=Strict cookie that renews short sessions and is useless as a bearer; a second factor
//! is begun, confirmed and asked for; wrong guesses lock the account for a while; sign-ins are
//! listed and ended one by one or everywhere.

use chrono::Utc;
use drive_core::totp;
use drive_tests::{APP_ID, Reply, TestApp, TestUser, totp_key};
use reqwest::StatusCode;
use reqwest::header::{COOKIE, SET_COOKIE};
use serde_json::{Value, json};

/// A call to a cookie route (or any route) as a browser makes it: the app header, the cookie
/// when given, and a session as bearer when given. Answers the reply and the cookie it set.
async fn browser(
    app: &TestApp,
    route: &str,
    body: Value,
    cookie: Option<&str>,
    session: Option<&str>,
) -> (Reply, Option<String>) {
    let mut request = app
        .http
        .post(format!("{}{route}", app.url))
        .header("X-Drive-App", APP_ID)
        .header("User-Agent", "PeopleTest/1.0")
        .json(&body);
    if let Some(cookie) = cookie {
        request = request.header(COOKIE, format!("drive_sign_in={cookie}"));
    }
    if let Some(session) = session {
        request = request.bearer_auth(session);
    }
    let response = request.send().await.expect(route);
    let set = response
        .headers()
        .get(SET_COOKIE)
        .map(|v| v.to_str().unwrap().to_string());
    (Reply::read(response).await, set)
}

/// The cookie's value out of a Set-Cookie header, having checked its attributes.
fn cookie_value(set: &str) -> String {
    for attribute in ["HttpOnly", "SameSite=Strict", "Path=/"] {
        assert!(set.contains(attribute), "{set} lacks {attribute}");
    }
    let value = set
        .strip_prefix("drive_sign_in=")
        .unwrap()
        .split(';')
        .next()
        .unwrap();
    assert!(value.starts_with("drive_signin_"), "{set}");
    value.to_string()
}

const PASSWORD: &str = "correct horse battery";

/// `/update-password` from `password` to "a new long password".
async fn change_password(app: &TestApp, session: &str, password: &str) -> Reply {
    let body = json!({ "password": password, "newPassword": "a new long password" });
    app.send(Some(session), Some(APP_ID), "/update-password", Some(body))
        .await
}

/// Sets the account's password from a new invitation; answers the sign-in cookie and session.
async fn with_password(app: &TestApp, user: &TestUser) -> (String, String) {
    let invitation = app.invitation(&user.handle);
    let (reply, set) = browser(
        app,
        "/accept-invitation",
        json!({ "invitation": invitation, "password": PASSWORD }),
        None,
        None,
    )
    .await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.body);
    (
        cookie_value(&set.unwrap()),
        reply.body["gelToken"].as_str().unwrap().to_string(),
    )
}

#[tokio::test]
async fn a_person_signs_in_with_a_password_a_cookie_and_a_second_factor() {
    let app = TestApp::spawn_with(&[("DRIVE_RATE_SIGN_IN_PER_MINUTE", "1000")]).await;
    let user = app.user(Some("Pro")).await;
    let invitation = app.invitation(&user.handle);

    // Refusals before anything is set: the header, the password's length, the invitation.
    let bare = app
        .http
        .post(format!("{}/accept-invitation", app.url))
        .json(&json!({ "invitation": invitation, "password": PASSWORD }))
        .send()
        .await
        .unwrap();
    Reply::read(bare)
        .await
        .assert_bad_field("missing_field", "X-Drive-App");
    let (short, _) = browser(
        &app,
        "/accept-invitation",
        json!({ "invitation": invitation, "password": "short" }),
        None,
        None,
    )
    .await;
    short.assert_bad_field("invalid_field", "password");
    let (unknown, _) = browser(
        &app,
        "/accept-invitation",
        json!({ "invitation": "drive_invite_nope", "password": PASSWORD }),
        None,
        None,
    )
    .await;
    unknown.assert_bad_field("invalid_field", "invitation");

    let (accepted, set) = browser(
        &app,
        "/accept-invitation",
        json!({ "invitation": invitation, "password": PASSWORD }),
        None,
        None,
    )
    .await;
    assert_eq!(accepted.status, StatusCode::OK, "{}", accepted.body);
    let first_cookie = cookie_value(&set.unwrap());
    let first_session = accepted.body["gelToken"].as_str().unwrap().to_string();
    assert_eq!(accepted.body["userId"], user.id.to_string());
    let (again, _) = browser(
        &app,
        "/accept-invitation",
        json!({ "invitation": invitation, "password": PASSWORD }),
        None,
        None,
    )
    .await;
    again.assert_bad_field("invalid_field", "invitation");
    let profile = app
        .send(Some(&first_session), Some(APP_ID), "/select-profile", None)
        .await;
    assert_eq!(profile.body["handle"], user.handle, "{}", profile.body);

    // The cookie renews sessions; it is not an API token, and nothing renews without it.
    let (renewed, _) = browser(&app, "/renew-session", json!({}), Some(&first_cookie), None).await;
    assert_eq!(renewed.status, StatusCode::OK, "{}", renewed.body);
    assert_ne!(renewed.body["gelToken"], first_session);
    app.exchange(&first_cookie)
        .await
        .assert_error(401, "unauthorized");
    let (none, cleared) = browser(&app, "/renew-session", json!({}), None, None).await;
    none.assert_error(401, "signed_out");
    assert!(cleared.unwrap().contains("Max-Age=0"));

    // Wrong passwords and unknown handles are the same refusal; the right one opens a second
    // sign-in, and the list marks the caller's own.
    let (wrong, _) = browser(
        &app,
        "/sign-in",
        json!({ "handle": user.handle, "password": "not the password" }),
        None,
        None,
    )
    .await;
    wrong.assert_error(401, "wrong_password");
    let (nobody, _) = browser(
        &app,
        "/sign-in",
        json!({ "handle": "nobody-at-all", "password": PASSWORD }),
        None,
        None,
    )
    .await;
    nobody.assert_error(401, "wrong_password");
    // A guess of a megabyte is no password, and costs the drive no more than one.
    let huge = "x".repeat(1 << 20);
    let (long, _) = browser(
        &app,
        "/sign-in",
        json!({ "handle": user.handle, "password": huge }),
        None,
        None,
    )
    .await;
    long.assert_error(401, "wrong_password");
    let (signed_in, set) = browser(
        &app,
        "/sign-in",
        json!({ "handle": user.handle, "password": PASSWORD }),
        None,
        None,
    )
    .await;
    assert_eq!(signed_in.status, StatusCode::OK, "{}", signed_in.body);
    let second_cookie = cookie_value(&set.unwrap());
    let second_session = signed_in.body["gelToken"].as_str().unwrap().to_string();
    let listed = app
        .send(Some(&second_session), Some(APP_ID), "/select-sign-ins", None)
        .await;
    let sign_ins = listed.body["signIns"].as_array().unwrap();
    assert_eq!(sign_ins.len(), 2, "{}", listed.body);
    assert_eq!(sign_ins.iter().filter(|s| s["current"] == true).count(), 1);
    assert!(
        sign_ins
            .iter()
            .all(|s| s["userAgent"] == "PeopleTest/1.0" && s["address"] == "127.0.0.1")
    );
    let first_id = sign_ins.iter().find(|s| s["current"] == false).unwrap()["signInId"].clone();

    // A second factor: begun, refused with a wrong code, confirmed with the right one.
    let begun = app
        .send(Some(&second_session), Some(APP_ID), "/begin-totp", None)
        .await;
    assert_eq!(begun.status, StatusCode::OK, "{}", begun.body);
    assert!(
        begun.body["link"]
            .as_str()
            .unwrap()
            .starts_with("otpauth://totp/"),
        "{}",
        begun.body
    );
    let key = totp_key(begun.body["secret"].as_str().unwrap());
    let step = totp::step_of(Utc::now().timestamp());
    let confirm = |code: String| {
        app.send(
            Some(&second_session),
            Some(APP_ID),
            "/confirm-totp",
            Some(json!({ "code": code })),
        )
    };
    let wrong_code = format!(
        "{:06}",
        (totp::code_at(&key, step).parse::<u32>().unwrap() + 1) % 1_000_000
    );
    confirm(wrong_code.clone())
        .await
        .assert_bad_field("invalid_field", "code");
    assert_eq!(
        confirm(totp::code_at(&key, step)).await.status,
        StatusCode::NO_CONTENT
    );

    // Now the password alone is not enough; a wrong code is refused; the code of the next step
    // (the one confirmed is used) signs in.
    let (needs, _) = browser(
        &app,
        "/sign-in",
        json!({ "handle": user.handle, "password": PASSWORD }),
        None,
        None,
    )
    .await;
    needs.assert_error(401, "code_needed");
    let (bad, _) = browser(
        &app,
        "/sign-in",
        json!({ "handle": user.handle, "password": PASSWORD, "code": wrong_code }),
        None,
        None,
    )
    .await;
    bad.assert_error(401, "wrong_code");
    let (used, _) = browser(
        &app,
        "/sign-in",
        json!({ "handle": user.handle, "password": PASSWORD, "code": totp::code_at(&key, step) }),
        None,
        None,
    )
    .await;
    used.assert_error(401, "wrong_code");
    let next = totp::code_at(&key, step + 1);
    let (with_code, _) = browser(
        &app,
        "/sign-in",
        json!({ "handle": user.handle, "password": PASSWORD, "code": next }),
        None,
        None,
    )
    .await;
    assert_eq!(with_code.status, StatusCode::OK, "{}", with_code.body);

    // Changing the password needs the one now; a token limited to reading may not.
    change_password(&app, &second_session, "not the password")
        .await
        .assert_error(401, "wrong_password");
    let reader: Value = serde_json::from_str(&app.admin(&[
        "create-token",
        "--handle",
        &user.handle,
        "--scope",
        "read",
        "--json",
    ]))
    .unwrap();
    let reader_session = app.exchange(reader["apiToken"].as_str().unwrap()).await.body["gelToken"]
        .as_str()
        .unwrap()
        .to_string();
    change_password(&app, &reader_session, PASSWORD)
        .await
        .assert_error(403, "insufficient_scope");
    assert_eq!(
        change_password(&app, &second_session, PASSWORD).await.status,
        StatusCode::NO_CONTENT
    );
    let removed = app
        .send(
            Some(&second_session),
            Some(APP_ID),
            "/remove-totp",
            Some(json!({ "password": "a new long password" })),
        )
        .await;
    assert_eq!(removed.status, StatusCode::NO_CONTENT, "{}", removed.body);
    let (plain, _) = browser(
        &app,
        "/sign-in",
        json!({ "handle": user.handle, "password": "a new long password" }),
        None,
        None,
    )
    .await;
    assert_eq!(plain.status, StatusCode::OK, "{}", plain.body);

    // Ending the first sign-in ends its sessions and its cookie; another account's id is not
    // found; signing out here clears this cookie; everywhere ends the rest.
    let ended = app
        .send(
            Some(&second_session),
            Some(APP_ID),
            "/end-sign-ins",
            Some(json!({ "signInId": first_id })),
        )
        .await;
    assert_eq!(ended.body["ended"], 1, "{}", ended.body);
    app.send(Some(&first_session), Some(APP_ID), "/select-profile", None)
        .await
        .assert_error(401, "unauthorized");
    browser(&app, "/renew-session", json!({}), Some(&first_cookie), None)
        .await
        .0
        .assert_error(401, "signed_out");
    let stranger = app.user(Some("Pro")).await;
    let (_, stranger_session) = with_password(&app, &stranger).await;
    app.send(
        Some(&stranger_session),
        Some(APP_ID),
        "/end-sign-ins",
        Some(json!({ "signInId": first_id })),
    )
    .await
    .assert_error(404, "sign_in_not_found");
    let (out, cleared) = browser(&app, "/sign-out", json!({}), Some(&second_cookie), None).await;
    assert_eq!(out.status, StatusCode::NO_CONTENT);
    assert!(cleared.unwrap().contains("Max-Age=0"));
    browser(&app, "/renew-session", json!({}), Some(&second_cookie), None)
        .await
        .0
        .assert_error(401, "signed_out");
    let with_code_session = with_code.body["gelToken"].as_str().unwrap();
    let everywhere = app
        .send(
            Some(with_code_session),
            Some(APP_ID),
            "/end-sign-ins",
            Some(json!({})),
        )
        .await;
    assert_eq!(everywhere.body["ended"], 2, "{}", everywhere.body);
    app.send(Some(with_code_session), Some(APP_ID), "/select-profile", None)
        .await
        .assert_error(401, "unauthorized");
    // The account's API tokens are not sign-ins: they still work.
    assert_eq!(
        app.call(&user, "/select-profile", None).await.status,
        StatusCode::OK
    );
    // The stranger is still signed in.
    assert_eq!(
        app.send(Some(&stranger_session), Some(APP_ID), "/select-profile", None)
            .await
            .status,
        StatusCode::OK
    );
}

#[tokio::test]
async fn wrong_guesses_lock_an_account_whatever_is_guessed_next() {
    let app = TestApp::spawn_with(&[
        ("DRIVE_RATE_SIGN_IN_PER_MINUTE", "1000"),
        ("DRIVE_SIGN_IN_GUESSES", "3"),
        ("DRIVE_SIGN_IN_LOCK_SECONDS", "600"),
    ])
    .await;
    let user = app.user(Some("Pro")).await;
    let other = app.user(Some("Pro")).await;
    with_password(&app, &user).await;
    with_password(&app, &other).await;
    let guess = |handle: &str, password: &str| {
        browser(
            &app,
            "/sign-in",
            json!({ "handle": handle, "password": password }),
            None,
            None,
        )
    };
    // A right guess between wrong ones starts the count again.
    guess(&user.handle, "wrong one")
        .await
        .0
        .assert_error(401, "wrong_password");
    guess(&user.handle, "wrong two")
        .await
        .0
        .assert_error(401, "wrong_password");
    assert_eq!(guess(&user.handle, PASSWORD).await.0.status, StatusCode::OK);
    guess(&user.handle, "wrong one")
        .await
        .0
        .assert_error(401, "wrong_password");
    guess(&user.handle, "wrong two")
        .await
        .0
        .assert_error(401, "wrong_password");
    let locked = guess(&user.handle, "wrong three").await.0;
    assert!(
        locked.assert_error(429, "too_many_guesses")["error"]
            .as_str()
            .unwrap()
            .contains("until")
    );
    // Locked: the right password is refused the same way, and says nothing of being right.
    guess(&user.handle, PASSWORD)
        .await
        .0
        .assert_error(429, "too_many_guesses");
    // Another account is not touched by it.
    assert_eq!(guess(&other.handle, PASSWORD).await.0.status, StatusCode::OK);
}

#[tokio::test]
async fn sign_in_guesses_are_limited_per_address() {
    let app = TestApp::spawn_with(&[("DRIVE_RATE_SIGN_IN_PER_MINUTE", "4")]).await;
    // Counted in one-minute windows: not started at the end of one.
    let into_minute = Utc::now().timestamp() % 60;
    if into_minute > 55 {
        tokio::time::sleep(std::time::Duration::from_secs((61 - into_minute) as u64)).await;
    }
    let mut answers = Vec::new();
    for n in 0..6 {
        let (reply, _) = browser(
            &app,
            "/sign-in",
            json!({ "handle": format!("nobody-{n}"), "password": PASSWORD }),
            None,
            None,
        )
        .await;
        answers.push(reply.status.as_u16());
    }
    // Every account a guess names is another; the address is the same: the fifth is refused.
    assert_eq!(answers[..4], [401; 4], "{answers:?}");
    assert_eq!(answers[4..], [429; 2], "{answers:?}");
}
