//! The drive's one way out to the network on a user's behalf (imports, webhooks, `url` parts):
//! a link is fetched only over http(s), and only from addresses on the public internet.
//!
//! The check is made where it cannot be dodged, at connect time: names are resolved by
//! [`Fetcher`]'s own resolver, which drops every address outside the public ranges
//! ([`is_public`]) before the HTTP client sees it, so the client can only connect to
//! addresses that passed; a link naming an address outright is checked before it is sent.
//! Redirects are followed (at most [`MAX_REDIRECTS`]) through the same checks, so a public
//! server cannot bounce a fetch into a private range; a webhook's fetcher follows none
//! ([`Fetcher::unredirected`]). No proxy from the environment is used.
//! Bodies are read as streams within a size cap, requests within a time cap.

mod ranges;

use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;
use std::time::Duration;

use futures::future::BoxFuture;
pub use ranges::is_public;
pub use reqwest::Response;
use reqwest::dns::{Addrs, Name, Resolve, Resolving};
pub use url::Url;

/// Redirects followed at most.
pub const MAX_REDIRECTS: usize = 5;

/// Why a link was not fetched.
#[derive(Debug, thiserror::Error)]
pub enum FetchError {
    /// The link itself is refused: not http(s), no host, or an address outside the public
    /// internet (or a name that resolves only to such). Nothing was sent.
    #[error("{0}")]
    Refused(String),
    /// The server could not be reached, failed, or took too long.
    #[error("fetching the link failed: {0}")]
    Failed(String),
}

impl FetchError {
    /// Whether the link is at fault (a 400 for the caller) rather than the network.
    pub fn is_refusal(&self) -> bool {
        matches!(self, FetchError::Refused(_))
    }
}

/// Names to addresses: the system's resolver in service, one the tests control in tests.
pub trait Resolver: Send + Sync + 'static {
    fn lookup(&self, host: String) -> BoxFuture<'static, std::io::Result<Vec<IpAddr>>>;
}

/// The system's resolver (`getaddrinfo` through tokio).
pub struct SystemResolver;

impl Resolver for SystemResolver {
    fn lookup(&self, host: String) -> BoxFuture<'static, std::io::Result<Vec<IpAddr>>> {
        Box::pin(async move {
            let found = tokio::net::lookup_host((host.as_str(), 0)).await?;
            Ok(found.map(|a| a.ip()).collect())
        })
    }
}

/// What a fetcher may reach beyond the public internet: nothing in service. Tests name the
/// hosts of their own loopback servers (`DRIVE_FETCH_ALLOW_HOSTS` where the drive reads it)
/// and the certificate their https servers present (`DRIVE_FETCH_ROOT_CERT`).
#[derive(Debug, Clone, Default)]
pub struct Allowances {
    /// Host names allowed to resolve to any address (a local test server's name).
    pub hosts: Vec<String>,
    /// Certificates trusted beside the public roots.
    pub roots: Vec<reqwest::Certificate>,
}

#[derive(Clone)]
pub struct Fetcher {
    client: reqwest::Client,
    allowances: Arc<Allowances>,
    /// Whether redirects are followed (through the checks) or refused.
    follows: bool,
}

impl std::fmt::Debug for Fetcher {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Fetcher")
            .field("allowances", &self.allowances)
            .finish()
    }
}

impl Fetcher {
    /// A fetcher resolving with `resolver`, giving up on a request after `timeout` (from the
    /// start of the request to the end of its body) and on a connection after 10 s.
    pub fn new(resolver: impl Resolver, allowances: Allowances, timeout: Duration) -> Fetcher {
        let allowances = Arc::new(allowances);
        let redirects = policy(&allowances);
        Fetcher::build(resolver, allowances, timeout, redirects, true)
    }

    /// [`Fetcher::new`] following no redirect: a webhook's POST goes where its owner said, or
    /// fails (a redirect is answered as a refusal).
    pub fn unredirected(resolver: impl Resolver, allowances: Allowances, timeout: Duration) -> Fetcher {
        let allowances = Arc::new(allowances);
        Fetcher::build(
            resolver,
            allowances,
            timeout,
            reqwest::redirect::Policy::none(),
            false,
        )
    }

    fn build(
        resolver: impl Resolver,
        allowances: Arc<Allowances>,
        timeout: Duration,
        redirects: reqwest::redirect::Policy,
        follows: bool,
    ) -> Fetcher {
        let mut builder = reqwest::Client::builder()
            .no_proxy()
            .dns_resolver(checked(resolver, &allowances))
            .connect_timeout(CONNECT_TIMEOUT)
            .timeout(timeout)
            .redirect(redirects);
        for root in &allowances.roots {
            builder = builder.add_root_certificate(root.clone());
        }
        let client = builder
            .build()
            .expect("a client with a resolver, a policy and timeouts builds");
        Fetcher {
            client,
            allowances,
            follows,
        }
    }

    /// GETs `link`; answers the response whatever its status, its body unread (read it with
    /// [`read_capped`] or as a stream).
    pub async fn get(&self, link: &str) -> Result<Response, FetchError> {
        let url = parse(link)?;
        check_url(&url, &self.allowances)?;
        self.unfollowed(self.client.get(url).send().await.map_err(failure)?)
    }

    /// POSTs `body` as JSON to `link` with `headers`; answers the response.
    pub async fn post_json(
        &self,
        link: &str,
        headers: &[(&str, &str)],
        body: Vec<u8>,
    ) -> Result<Response, FetchError> {
        let url = parse(link)?;
        check_url(&url, &self.allowances)?;
        let mut request = self
            .client
            .post(url)
            .header("Content-Type", "application/json")
            .body(body);
        for (name, value) in headers {
            request = request.header(*name, *value);
        }
        self.unfollowed(request.send().await.map_err(failure)?)
    }
}

/// The same fetcher for a caller with no async runtime (a job process streaming an import into
/// the store): the same resolver, checks, redirect policy and caps.
#[derive(Clone)]
pub struct BlockingFetcher {
    client: reqwest::blocking::Client,
    allowances: Arc<Allowances>,
}

impl BlockingFetcher {
    /// See [`Fetcher::new`]; `timeout` caps a whole request, body included.
    pub fn new(resolver: impl Resolver, allowances: Allowances, timeout: Duration) -> BlockingFetcher {
        let allowances = Arc::new(allowances);
        let mut builder = reqwest::blocking::Client::builder()
            .no_proxy()
            .dns_resolver(checked(resolver, &allowances))
            .connect_timeout(CONNECT_TIMEOUT)
            .timeout(timeout)
            .redirect(policy(&allowances));
        for root in &allowances.roots {
            builder = builder.add_root_certificate(root.clone());
        }
        let client = builder
            .build()
            .expect("a client with a resolver, a policy and timeouts builds");
        BlockingFetcher { client, allowances }
    }

    /// GETs `link`; answers the response whatever its status, its body unread.
    pub fn get(&self, link: &str) -> Result<reqwest::blocking::Response, FetchError> {
        let url = parse(link)?;
        check_url(&url, &self.allowances)?;
        let response = self.client.get(url).send().map_err(failure)?;
        if response.status().is_redirection() {
            return Err(unfollowed_redirect());
        }
        Ok(response)
    }
}

/// Checks a link before anything is asked of it: http(s), an address written in it public,
/// and a name resolving (through `resolver`) to at least one public address. What a caller
/// answers a user at once; the fetch checks again when it connects.
pub async fn check_link(
    link: &str,
    resolver: &dyn Resolver,
    allowances: &Allowances,
) -> Result<Url, FetchError> {
    let url = parse(link)?;
    check_url(&url, allowances)?;
    if let Some(url::Host::Domain(name)) = url.host() {
        let name = name.to_string();
        if allowances.hosts.contains(&name) {
            return Ok(url);
        }
        let found = resolver
            .lookup(name.clone())
            .await
            .map_err(|e| FetchError::Refused(format!("{name} does not resolve: {e}")))?;
        if !found.into_iter().any(is_public) {
            return Err(refused_address(&format!("{name} (as it resolves)")));
        }
    }
    Ok(url)
}

/// The hosts `DRIVE_FETCH_ALLOW_HOSTS` names (comma-separated) and the certificates in the
/// PEM file `DRIVE_FETCH_ROOT_CERT`: the tests' own loopback servers. Never set in service.
pub fn allowances_from_environment() -> Result<Allowances, String> {
    let roots = match std::env::var("DRIVE_FETCH_ROOT_CERT") {
        Ok(path) if !path.is_empty() => {
            let pem = std::fs::read(&path).map_err(|e| format!("DRIVE_FETCH_ROOT_CERT ({path}): {e}"))?;
            reqwest::Certificate::from_pem_bundle(&pem)
                .map_err(|e| format!("DRIVE_FETCH_ROOT_CERT ({path}) holds no certificate: {e}"))?
        }
        _ => Vec::new(),
    };
    Ok(Allowances {
        hosts: std::env::var("DRIVE_FETCH_ALLOW_HOSTS")
            .unwrap_or_default()
            .split(',')
            .map(str::trim)
            .filter(|h| !h.is_empty())
            .map(str::to_string)
            .collect(),
        roots,
    })
}

/// A connection not made within this long is given up.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// The resolver a client connects through (see [`CheckedResolver`]).
fn checked(resolver: impl Resolver, allowances: &Arc<Allowances>) -> Arc<CheckedResolver> {
    Arc::new(CheckedResolver {
        inner: Arc::new(resolver),
        allowances: allowances.clone(),
    })
}

/// Redirects followed through the same checks, at most [`MAX_REDIRECTS`].
fn policy(allowances: &Arc<Allowances>) -> reqwest::redirect::Policy {
    let allowances = allowances.clone();
    reqwest::redirect::Policy::custom(move |attempt| {
        if attempt.previous().len() > MAX_REDIRECTS {
            return attempt.error(FetchError::Refused(format!(
                "the link redirects more than {MAX_REDIRECTS} times"
            )));
        }
        match check_url(attempt.url(), &allowances) {
            Ok(()) => attempt.follow(),
            Err(refused) => attempt.error(refused),
        }
    })
}

fn unfollowed_redirect() -> FetchError {
    FetchError::Refused("the link redirects to one that is not fetched (only http and https are)".into())
}

impl Fetcher {
    /// A response still redirecting is one the client would not follow (to a `file:` or other
    /// link that is not http, or any, for a fetcher that follows none): refused, like a
    /// redirect it refused.
    fn unfollowed(&self, response: Response) -> Result<Response, FetchError> {
        match response.status() {
            status if status.is_redirection() && !self.follows => Err(FetchError::Refused(format!(
                "the link answered {status}: redirects are not followed"
            ))),
            status if status.is_redirection() => Err(unfollowed_redirect()),
            _ => Ok(response),
        }
    }
}

/// A response's body, refused past `cap` bytes (read as it comes, never more than the cap
/// held).
pub async fn read_capped(mut response: Response, cap: usize) -> Result<Vec<u8>, FetchError> {
    if response.content_length().is_some_and(|n| n > cap as u64) {
        return Err(FetchError::Refused(format!(
            "the answer is larger than {cap} bytes"
        )));
    }
    let mut body = Vec::new();
    while let Some(chunk) = response.chunk().await.map_err(failure)? {
        if body.len() + chunk.len() > cap {
            return Err(FetchError::Refused(format!(
                "the answer is larger than {cap} bytes"
            )));
        }
        body.extend_from_slice(&chunk);
    }
    Ok(body)
}

/// A link as a URL, http(s) only, with a host.
pub fn parse(link: &str) -> Result<Url, FetchError> {
    let url = Url::parse(link).map_err(|e| FetchError::Refused(format!("the link is not a URL: {e}")))?;
    match url.scheme() {
        "http" | "https" => {}
        other => {
            return Err(FetchError::Refused(format!(
                "only http and https links are fetched, not {other}"
            )));
        }
    }
    if url.host().is_none() {
        return Err(FetchError::Refused("the link has no host".into()));
    }
    Ok(url)
}

/// A URL the client is about to request (the first, or a redirect's): http(s), and an address
/// written in it must be public. Names are checked by the resolver when connecting.
fn check_url(url: &Url, allowances: &Allowances) -> Result<(), FetchError> {
    match url.scheme() {
        "http" | "https" => {}
        other => {
            return Err(FetchError::Refused(format!(
                "the link leads to a {other} link; only http and https are fetched"
            )));
        }
    }
    let ip = match url.host() {
        Some(url::Host::Ipv4(ip)) => IpAddr::V4(ip),
        Some(url::Host::Ipv6(ip)) => IpAddr::V6(ip),
        Some(url::Host::Domain(_)) => return Ok(()),
        None => return Err(FetchError::Refused("the link has no host".into())),
    };
    if is_public(ip) || allowances.hosts.iter().any(|h| *h == ip.to_string()) {
        Ok(())
    } else {
        Err(refused_address(&ip.to_string()))
    }
}

fn refused_address(what: &str) -> FetchError {
    FetchError::Refused(format!(
        "{what} is not on the public internet (loopback, private, link-local, shared, multicast \
         or reserved addresses are never fetched)"
    ))
}

/// Why a request failed: a refusal carried out of the redirect policy or the resolver stays
/// one; anything else is the network's.
fn failure(e: reqwest::Error) -> FetchError {
    let mut source: Option<&(dyn std::error::Error + 'static)> = Some(&e);
    while let Some(cause) = source {
        if let Some(FetchError::Refused(why)) = cause.downcast_ref::<FetchError>() {
            return FetchError::Refused(why.clone());
        }
        source = cause.source();
    }
    let what = if e.is_timeout() {
        "it took too long".to_string()
    } else {
        e.to_string()
    };
    FetchError::Failed(what)
}

/// The resolver the client connects through: what `inner` answers, less every address that
/// is not public (unless the name is allowed). A name left with none is refused.
struct CheckedResolver {
    inner: Arc<dyn Resolver>,
    allowances: Arc<Allowances>,
}

impl Resolve for CheckedResolver {
    fn resolve(&self, name: Name) -> Resolving {
        let host = name.as_str().to_string();
        let allowed = self.allowances.hosts.contains(&host);
        let lookup = self.inner.lookup(host.clone());
        Box::pin(async move {
            let found = lookup.await?;
            let kept: Vec<SocketAddr> = found
                .into_iter()
                .filter(|ip| allowed || is_public(*ip))
                .map(|ip| SocketAddr::new(ip, 0))
                .collect();
            if kept.is_empty() {
                let refused: Box<dyn std::error::Error + Send + Sync> =
                    Box::new(refused_address(&format!("{host} (as it resolves)")));
                return Err(refused);
            }
            let addrs: Addrs = Box::new(kept.into_iter());
            Ok(addrs)
        })
    }
}
