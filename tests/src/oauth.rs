//! An OAuth client of the drive, as an app would be one: it registers, sends the person to the
//! consent page with a PKCE challenge, and exchanges the code it gets back. The consent is
//! either given in a real browser (the OAuth tests) or posted as the page's form would post it.

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use reqwest::StatusCode;
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

use crate::{Reply, TestApp};

pub struct OAuthClient {
    pub client_id: String,
    pub redirect_uri: String,
    /// This sign-in's PKCE verifier and its S256 challenge.
    pub verifier: String,
    pub challenge: String,
}

/// A client with no redirects followed: the tests read where the drive sends the person.
pub fn http() -> reqwest::Client {
    reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap()
}

impl OAuthClient {
    /// Registers a client named `name` sending people back to `redirect_uri`.
    pub async fn register(app: &TestApp, name: &str, redirect_uri: &str) -> OAuthClient {
        let answer = Reply::read(
            http()
                .post(format!("{}/oauth/register", app.url))
                .json(&json!({ "client_name": name, "redirect_uris": [redirect_uri] }))
                .send()
                .await
                .unwrap(),
        )
        .await;
        assert_eq!(answer.status, StatusCode::CREATED, "{}", answer.body);
        let verifier = format!(
            "{}{}",
            uuid::Uuid::new_v4().simple(),
            uuid::Uuid::new_v4().simple()
        );
        OAuthClient {
            client_id: answer.body["client_id"].as_str().unwrap().to_string(),
            redirect_uri: redirect_uri.to_string(),
            challenge: URL_SAFE_NO_PAD.encode(Sha256::digest(verifier.as_bytes())),
            verifier,
        }
    }

    /// The consent page's address asking for `scope`, with `state`.
    pub fn authorize_url(&self, app: &TestApp, scope: &str, state: &str) -> String {
        let query: String = url::form_urlencoded::Serializer::new(String::new())
            .append_pair("response_type", "code")
            .append_pair("client_id", &self.client_id)
            .append_pair("redirect_uri", &self.redirect_uri)
            .append_pair("code_challenge", &self.challenge)
            .append_pair("code_challenge_method", "S256")
            .append_pair("scope", scope)
            .append_pair("state", state)
            .finish();
        format!("{}/oauth/authorize?{query}", app.url)
    }

    /// Posts the consent form as the page would: asked for `asked`, `ticked` ticked, signed in
    /// with `api_token`, answered `decision`. Answers the response (a 303 when taken).
    pub async fn answer(
        &self,
        app: &TestApp,
        asked: &str,
        ticked: &[&str],
        api_token: &str,
        decision: &str,
    ) -> reqwest::Response {
        let mut form = url::form_urlencoded::Serializer::new(String::new());
        form.append_pair("client_id", &self.client_id)
            .append_pair("redirect_uri", &self.redirect_uri)
            .append_pair("response_type", "code")
            .append_pair("code_challenge", &self.challenge)
            .append_pair("code_challenge_method", "S256")
            .append_pair("asked", asked)
            .append_pair("state", "s-1")
            .append_pair("api_token", api_token)
            .append_pair("decision", decision);
        for scope in ticked {
            form.append_pair("scope", scope);
        }
        http()
            .post(format!("{}/oauth/authorize", app.url))
            .header("Content-Type", "application/x-www-form-urlencoded")
            .body(form.finish())
            .send()
            .await
            .unwrap()
    }

    /// The code the consent gave: the `code` of the redirect it answered.
    pub async fn code(&self, app: &TestApp, asked: &str, ticked: &[&str], api_token: &str) -> String {
        let response = self.answer(app, asked, ticked, api_token, "allow").await;
        assert_eq!(
            response.status(),
            StatusCode::SEE_OTHER,
            "{:?}",
            response.text().await
        );
        let to = redirected_to(&response);
        to.get("code").expect("a code").clone()
    }

    /// The token endpoint's answer for `code` sent with `verifier`.
    pub async fn exchange(&self, app: &TestApp, code: &str, verifier: &str) -> Reply {
        let form = url::form_urlencoded::Serializer::new(String::new())
            .append_pair("grant_type", "authorization_code")
            .append_pair("code", code)
            .append_pair("redirect_uri", &self.redirect_uri)
            .append_pair("client_id", &self.client_id)
            .append_pair("code_verifier", verifier)
            .finish();
        token_request(app, form).await
    }

    /// Consents with `api_token` to `scopes` and exchanges the code: the app's access token.
    pub async fn connect(&self, app: &TestApp, api_token: &str, scopes: &[&str]) -> String {
        let code = self.code(app, &scopes.join(" "), scopes, api_token).await;
        let token = self.exchange(app, &code, &self.verifier).await;
        assert_eq!(token.status, StatusCode::OK, "{}", token.body);
        token.body["access_token"].as_str().unwrap().to_string()
    }
}

/// POSTs a form body to the token endpoint.
pub async fn token_request(app: &TestApp, form: String) -> Reply {
    Reply::read(
        http()
            .post(format!("{}/oauth/token", app.url))
            .header("Content-Type", "application/x-www-form-urlencoded")
            .body(form)
            .send()
            .await
            .unwrap(),
    )
    .await
}

/// The query of a redirect's `Location`, as fields.
pub fn redirected_to(response: &reqwest::Response) -> std::collections::HashMap<String, String> {
    let location = response.headers()["location"].to_str().unwrap();
    query_of(location)
}

pub fn query_of(uri: &str) -> std::collections::HashMap<String, String> {
    let url = url::Url::parse(uri).unwrap();
    url.query_pairs().into_owned().collect()
}

/// An OAuth error body: `error` is `code`, with a description.
#[track_caller]
pub fn assert_oauth_error(reply: &Reply, status: u16, code: &str) -> Value {
    assert_eq!(reply.status.as_u16(), status, "{}", reply.body);
    assert_eq!(reply.body["error"], code, "{}", reply.body);
    assert!(reply.body["error_description"].is_string(), "{}", reply.body);
    reply.body.clone()
}
