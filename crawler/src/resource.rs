//! The protected-resource metadata of an `auth-required` remote (RFC 9728): who may grant a
//! client access to it.
//!
//! One unauthenticated `GET`, after the listing ended in a challenge: of the challenge's
//! `resource_metadata` URL when it names one, else of the well-known URL for the endpoint
//! (`/.well-known/oauth-protected-resource` inserted before its path, RFC 9728 §3.1). The URL
//! passes the same SSRF guard as every remote (resolved once, every address checked, the
//! connection pinned), `https` only unless the policy allows private addresses (loopback tests),
//! no redirect is followed, no header of the remote's declaration and no cookie is sent, and
//! the whole exchange is bounded by [`RESOURCE_METADATA_TIMEOUT`] and
//! [`MAX_RESOURCE_METADATA_BYTES`]. What it found — `resource`, `authorization_servers`,
//! `scopes_supported`, `bearer_methods_supported`, or why nothing was read — is recorded in the
//! challenge ([`ProtectedResource`]); it never changes the observation's status.

use crate::body::Body;
use crate::guard;
use crate::limits::{
    MAX_RESOURCE_METADATA_BYTES, MAX_RESOURCE_METADATA_ENTRIES, RESOURCE_METADATA_TIMEOUT,
};
use crate::mcp::ClientConfig;
use crate::observe::{Dialled, ProtectedResource};
use crate::registry::{Declared, MAX_URL_LEN};

/// The well-known metadata URL of `endpoint` (RFC 9728 §3.1): the path of the well-known
/// suffix, then the endpoint's path (none for a root endpoint); query and fragment dropped.
pub fn well_known(endpoint: &url::Url) -> url::Url {
    let mut u = endpoint.clone();
    let path = endpoint.path().trim_end_matches('/');
    u.set_path(&format!("/.well-known/oauth-protected-resource{path}"));
    u.set_query(None);
    u.set_fragment(None);
    u
}

/// Fetch the metadata for the challenge recorded in `dialled.auth` (nothing when there is
/// none), counting the request and its bytes in `dialled`, and record it there.
pub(crate) async fn fetch_for(config: &ClientConfig, endpoint: &url::Url, dialled: &mut Dialled) {
    let Some(auth) = &dialled.auth else { return };
    let (url, from_challenge) = match &auth.resource_metadata {
        Some(m) => (m.clone(), true),
        None => (well_known(endpoint).to_string(), false),
    };
    let mut found = ProtectedResource {
        url: url.clone(),
        from_challenge,
        ..ProtectedResource::default()
    };
    let fetched = tokio::time::timeout(
        RESOURCE_METADATA_TIMEOUT,
        fetch(config, &url, dialled, &mut found),
    )
    .await;
    match fetched {
        Err(_) => {
            found.error = Some(format!(
                "no answer within {} s",
                RESOURCE_METADATA_TIMEOUT.as_secs_f64()
            ))
        }
        Ok(Err(e)) => found.error = Some(e),
        Ok(Ok(())) => {}
    }
    if let Some(auth) = &mut dialled.auth {
        auth.protected_resource = Some(found);
    }
}

async fn fetch(
    config: &ClientConfig,
    url: &str,
    dialled: &mut Dialled,
    found: &mut ProtectedResource,
) -> Result<(), String> {
    let pinned = guard::check(url, config.policy, config.resolver.as_ref())
        .await
        .map_err(|e| e.to_string())?;
    let client = crate::mcp::build_client(config, &pinned, &Declared::default())?;
    dialled.requests += 1;
    let response = client
        .get(pinned.url.clone())
        .header(reqwest::header::ACCEPT, "application/json")
        .send()
        .await
        .map_err(|e| crate::error_chain(&e))?;
    let status = response.status();
    found.http_status = Some(status.as_u16());
    if !status.is_success() {
        return Err(format!("HTTP {}", status.as_u16()));
    }
    let body = Body::new(response, MAX_RESOURCE_METADATA_BYTES)
        .map_err(|e| e.to_string())?
        .read_all()
        .await
        .map_err(|e| e.to_string())?;
    dialled.bytes += body.len() as u64;
    read_metadata(&body, found)
}

/// Fill `found` from a metadata document: a JSON object whose members of interest have the
/// types RFC 9728 gives them (a member of another type is an error, not ignored: a client
/// would refuse it too).
pub fn read_metadata(body: &[u8], found: &mut ProtectedResource) -> Result<(), String> {
    let value: serde_json::Value =
        serde_json::from_slice(body).map_err(|e| format!("not JSON: {e}"))?;
    let serde_json::Value::Object(doc) = value else {
        return Err("not a JSON object".to_owned());
    };
    found.resource = match doc.get("resource") {
        None => None,
        Some(serde_json::Value::String(r)) => (r.len() <= MAX_URL_LEN).then(|| r.clone()),
        Some(_) => return Err("`resource` is not a string".to_owned()),
    };
    let list = |name: &str| -> Result<Vec<String>, String> {
        match doc.get(name) {
            None => Ok(Vec::new()),
            Some(serde_json::Value::Array(items)) => items
                .iter()
                .map(|i| {
                    i.as_str()
                        .map(str::to_owned)
                        .ok_or_else(|| format!("`{name}` holds a non-string"))
                })
                .filter(|s| s.as_ref().map_or(true, |s| s.len() <= MAX_URL_LEN))
                .take(MAX_RESOURCE_METADATA_ENTRIES)
                .collect(),
            Some(_) => Err(format!("`{name}` is not an array")),
        }
    };
    found.authorization_servers = list("authorization_servers")?;
    found.scopes_supported = list("scopes_supported")?;
    found.bearer_methods_supported = list("bearer_methods_supported")?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn well_known_inserts_the_suffix_before_the_path() {
        let u = |s: &str| well_known(&url::Url::parse(s).unwrap()).to_string();
        assert_eq!(
            u("https://mcp.example.com/v1/mcp?x=1"),
            "https://mcp.example.com/.well-known/oauth-protected-resource/v1/mcp"
        );
        assert_eq!(
            u("https://mcp.example.com/"),
            "https://mcp.example.com/.well-known/oauth-protected-resource"
        );
        assert_eq!(
            u("http://127.0.0.1:8080/mcp/"),
            "http://127.0.0.1:8080/.well-known/oauth-protected-resource/mcp"
        );
    }

    #[test]
    fn metadata_members_are_read_with_their_types() {
        let mut found = ProtectedResource::default();
        read_metadata(
            br#"{"resource":"https://r.example/mcp","authorization_servers":["https://as.example"],
                "scopes_supported":["read","write"],"bearer_methods_supported":["header"],"x":1}"#,
            &mut found,
        )
        .unwrap();
        assert_eq!(found.resource.as_deref(), Some("https://r.example/mcp"));
        assert_eq!(found.authorization_servers, ["https://as.example"]);
        assert_eq!(found.scopes_supported, ["read", "write"]);
        assert_eq!(found.bearer_methods_supported, ["header"]);
    }

    #[test]
    fn metadata_of_the_wrong_shape_is_an_error() {
        let mut found = ProtectedResource::default();
        for (body, why) in [
            (&b"[1]"[..], "not a JSON object"),
            (b"<html>", "not JSON"),
            (br#"{"authorization_servers":"https://as"}"#, "not an array"),
            (br#"{"authorization_servers":[1]}"#, "non-string"),
            (br#"{"resource":7}"#, "not a string"),
        ] {
            let e = read_metadata(body, &mut found).unwrap_err();
            assert!(e.contains(why), "{e}");
        }
    }

    #[test]
    fn metadata_lists_are_capped_and_overlong_entries_dropped() {
        let long = format!("https://{}", "a".repeat(MAX_URL_LEN));
        let many: Vec<String> = (0..MAX_RESOURCE_METADATA_ENTRIES + 10)
            .map(|i| format!("s{i}"))
            .collect();
        let body = serde_json::json!({
            "authorization_servers": [long, "https://as.example"],
            "scopes_supported": many,
        });
        let mut found = ProtectedResource::default();
        read_metadata(body.to_string().as_bytes(), &mut found).unwrap();
        assert_eq!(found.authorization_servers, ["https://as.example"]);
        assert_eq!(found.scopes_supported.len(), MAX_RESOURCE_METADATA_ENTRIES);
    }
}
