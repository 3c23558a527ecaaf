//! Following the drive without hammering it: a caller of `/select-drive-events` with `wait`
//! whose page is empty holds until an event of its account is written, then asks again. A
//! trigger on `drive_events` notifies each new event's account on the `drive_events` channel at
//! commit; one connection per API process listens there and wakes the callers waiting for that
//! account. A waiting caller holds no database connection: only a place on a broadcast channel.

use std::time::Duration;

use drive_core::id::UserId;
use sqlx::postgres::PgListener;
use tokio::sync::broadcast;

const CHANNEL: &str = "drive_events";

/// Who may have new events: one account, or (after the listening connection was lost, when
/// notifications may have been missed) everyone.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Woken {
    Account(UserId),
    Everyone,
}

pub struct Follow {
    wake: broadcast::Sender<Woken>,
}

impl Follow {
    /// Listens on its own connection to `database_url` for as long as the process runs.
    pub async fn start(database_url: &str) -> Result<Follow, sqlx::Error> {
        let mut listener = PgListener::connect(database_url).await?;
        listener.listen(CHANNEL).await?;
        // A burst of events beyond this many wakes a slow waiter with `Lagged`: it asks again,
        // which is what a wake would have made it do.
        let (wake, _) = broadcast::channel(1024);
        let sender = wake.clone();
        tokio::spawn(async move {
            loop {
                match listener.try_recv().await {
                    Ok(Some(notification)) => {
                        if let Ok(id) = notification.payload().parse::<UserId>() {
                            let _ = sender.send(Woken::Account(id));
                        }
                    }
                    // The connection was lost and is made again at the next call; whatever was
                    // notified meanwhile is gone, so every waiter asks again.
                    Ok(None) => {
                        tracing::warn!("the event listener's connection was lost; reconnecting");
                        let _ = sender.send(Woken::Everyone);
                    }
                    Err(e) => {
                        tracing::warn!("listening for events failed: {e}");
                        let _ = sender.send(Woken::Everyone);
                        tokio::time::sleep(Duration::from_secs(1)).await;
                    }
                }
            }
        });
        Ok(Follow { wake })
    }

    /// A place in line: take it before looking, so an event written between the look and the
    /// wait still wakes the caller.
    pub fn subscribe(&self) -> Waiter {
        Waiter {
            woken: self.wake.subscribe(),
        }
    }
}

pub struct Waiter {
    woken: broadcast::Receiver<Woken>,
}

impl Waiter {
    /// Waits until `user` may have a new event or `deadline` passes; `false` once it passed.
    pub async fn wait(&mut self, user: UserId, deadline: tokio::time::Instant) -> bool {
        loop {
            match tokio::time::timeout_at(deadline, self.woken.recv()).await {
                Err(_) => return false,
                Ok(Ok(Woken::Account(id))) if id != user => continue,
                Ok(Ok(_)) | Ok(Err(broadcast::error::RecvError::Lagged(_))) => return true,
                Ok(Err(broadcast::error::RecvError::Closed)) => return false,
            }
        }
    }
}
