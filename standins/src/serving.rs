//! One axum app served on an already-bound loopback listener until shut down: what the
//! registry replica and the package stand-in share.

use std::time::Duration;

use axum::Router;
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

/// An app being served; stops accepting when dropped.
pub(crate) struct Serving {
    stop: Option<oneshot::Sender<()>>,
    task: Option<JoinHandle<()>>,
}

impl Serving {
    /// Serve `app` on `listener` on the current Tokio runtime.
    pub(crate) fn start(listener: tokio::net::TcpListener, app: Router) -> Serving {
        let (stop, stopped) = oneshot::channel::<()>();
        let task = tokio::spawn(async move {
            let serve = axum::serve(listener, app).with_graceful_shutdown(async move {
                let _ = stopped.await;
            });
            // The listener is already bound, so serving only ends at shutdown.
            let _ = serve.await;
        });
        Serving {
            stop: Some(stop),
            task: Some(task),
        }
    }

    /// Stop accepting connections, let open ones finish (at most `grace`, then they are
    /// aborted), and return.
    pub(crate) async fn shutdown(&mut self, grace: Duration) {
        self.signal();
        if let Some(mut task) = self.task.take()
            && tokio::time::timeout(grace, &mut task).await.is_err()
        {
            task.abort();
        }
    }

    /// Tell the server to stop (the listener closes; requests in flight are still answered).
    fn signal(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
    }
}

impl Drop for Serving {
    fn drop(&mut self) {
        self.signal();
    }
}
