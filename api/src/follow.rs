//! Following the drive without hammering it: every caller that waits for a row to change holds
//! until the database says something of its account changed, then looks again. Triggers notify
//! at commit, with the account's id: on the `drive_events` channel for each new drive event (what
//! `/select-drive-events` and `/select-file-jobs` with `wait`, and `/cancel-file-job`, wait for:
//! a job's end writes one), on `agent_tasks` when an agent task's state changes or it begins
//! waiting (A2A's blocking `SendMessage`). One connection per API process listens to both and
//! wakes the callers waiting for that account. A waiting caller holds no database connection:
//! only a place on a broadcast channel.

use std::time::Duration;

use drive_core::id::UserId;
use sqlx::postgres::PgListener;
use tokio::sync::broadcast;

const EVENTS: &str = "drive_events";
const TASKS: &str = "agent_tasks";

/// What may have changed: an account's drive events, an account's agent tasks, or (after the
/// listening connection was lost, when notifications may have been missed) anything.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Woken {
    Events(UserId),
    Tasks(UserId),
    Everyone,
}

pub struct Follow {
    wake: broadcast::Sender<Woken>,
}

impl Follow {
    /// Listens on its own connection to `database_url` for as long as the process runs.
    pub async fn start(database_url: &str) -> Result<Follow, sqlx::Error> {
        let mut listener = PgListener::connect(database_url).await?;
        listener.listen_all([EVENTS, TASKS]).await?;
        // A burst of events beyond this many wakes a slow waiter with `Lagged`: it asks again,
        // which is what a wake would have made it do.
        let (wake, _) = broadcast::channel(1024);
        let sender = wake.clone();
        tokio::spawn(async move {
            loop {
                match listener.try_recv().await {
                    Ok(Some(notification)) => {
                        let Ok(id) = notification.payload().parse::<UserId>() else {
                            continue;
                        };
                        let woken = match notification.channel() {
                            TASKS => Woken::Tasks(id),
                            _ => Woken::Events(id),
                        };
                        let _ = sender.send(woken);
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

    /// A place in line: take it before looking, so a change between the look and the wait
    /// still wakes the caller.
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
    /// Waits until `change` (`Woken::Events` or `Woken::Tasks` of an account) may have
    /// happened, or `deadline` passes; `false` once it passed.
    pub async fn wait(&mut self, change: Woken, deadline: tokio::time::Instant) -> bool {
        loop {
            match tokio::time::timeout_at(deadline, self.woken.recv()).await {
                Err(_) => return false,
                Ok(Ok(woken)) if woken == change || woken == Woken::Everyone => return true,
                Ok(Ok(_)) => continue,
                Ok(Err(broadcast::error::RecvError::Lagged(_))) => return true,
                Ok(Err(broadcast::error::RecvError::Closed)) => return false,
            }
        }
    }
}
