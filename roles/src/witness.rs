//! The witness role (`toolmark witness`): toolmark's own C2SP tlog-witness for other logs
//! (`toolmark-witness`), served behind the same connection layer as the API.

use std::net::SocketAddr;
use std::sync::Arc;

use toolmark_server::Limits;
use toolmark_witness::Witness;

use crate::{RoleError, Stop};

/// Serves `witness`'s routes under `prefix` (`""` or starting with `/`: the caller checks it
/// before the witness is opened) on `listen` under `limits` until `stop` fires. It must trust
/// at least one log.
pub async fn serve(
    witness: Witness,
    listen: SocketAddr,
    prefix: &str,
    limits: Limits,
    stop: Stop,
) -> Result<(), RoleError> {
    if witness.trusted().is_empty() {
        return Err(RoleError::Refused(
            "no trusted log: give --trust ORIGIN=VKEY or --trust-file".into(),
        ));
    }
    let (listener, bound) = crate::api::bind(listen).await?;
    tracing::info!(
        "toolmark witness {} serving http://{bound}{prefix} for {} logs",
        witness.vkey(),
        witness.trusted().len()
    );
    let router = toolmark_witness::router(Arc::new(witness), prefix);
    toolmark_server::serve_process(listener, limits, stop.cancelled_owned(), |_stats| router)
        .await
        .map_err(RoleError::doing("serving"))
}
