//! Bulk jobs held still so that a job of another lane runs in their slot. Lanes take turns only
//! when a slot is free: once a worker's slots all run bulk jobs of minutes, a job of another
//! lane would wait for one of them to end. Instead the worker stops one bulk job's process
//! (SIGSTOP, through a pidfd so that a reused pid is never signalled), runs the arrival in its
//! slot, and lets the bulk job go on (SIGCONT) when the arrival ends, or after
//! `DRIVE_BULK_PAUSE_SECONDS`, whichever comes first. Nothing of the bulk job is lost: its
//! process, memory and connections stand still and go on where they were.
//!
//! Two rules keep this from starving bulk work or overrunning the worker:
//! - a bulk job is held only while it has run at least as long as it has stood still (in this
//!   attempt), so a stream of arrivals leaves it half of its slot at worst;
//! - one job at a time runs in a lent slot, so a worker runs at most one job process more than
//!   it has slots (its memory must allow for it).
//!
//! The time a job stands still is not its own: its row marks the pause (`jobs::paused`,
//! `jobs::resumed`), and neither its account's minutes nor its time limit count it.

use std::collections::HashMap;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::sync::{Mutex, MutexGuard};
use std::time::{Duration, Instant};

use drive_core::id::JobId;
use tokio::process::Child;
use tokio::sync::Notify;

pub struct Pauses {
    /// The longest one pause lasts; zero: no job is ever held.
    longest: Duration,
    state: Mutex<State>,
    /// Rung when what may be held changes: a bulk job starts, ends or goes on, a lent slot is
    /// given back. One waiter (the worker's take loop); a ring while it is busy is kept.
    changed: Notify,
}

#[derive(Default)]
struct State {
    held: HashMap<JobId, Bulk>,
    /// A job runs in a held job's slot.
    lent: bool,
    /// Numbers the pauses, so that a late resume of an earlier pause leaves a later one be.
    pauses: u64,
}

/// A running bulk job's process, and how it has shared its slot so far.
struct Bulk {
    process: OwnedFd,
    /// Running time before `since`.
    ran: Duration,
    /// When it last started or went on.
    since: Instant,
    /// Time stood still in pauses that ended.
    stood: Duration,
    /// The pause under way: when it began, and its number.
    paused: Option<(Instant, u64)>,
}

impl Bulk {
    /// How much longer it must run before it may be held again (zero: it may now).
    fn owed(&self, now: Instant) -> Duration {
        self.stood.saturating_sub(self.ran + (now - self.since))
    }
}

/// One pause of one job, as [`Pauses::pause`] made it.
#[derive(Debug, Clone, Copy)]
pub struct Pause {
    pub job: JobId,
    number: u64,
}

/// A bulk job that may be held while its process runs: it leaves [`Pauses`] when dropped.
pub struct Holding<'a> {
    pauses: &'a Pauses,
    job: JobId,
}

impl Drop for Holding<'_> {
    fn drop(&mut self) {
        self.pauses.state().held.remove(&self.job);
        self.pauses.changed.notify_one();
    }
}

impl Pauses {
    pub fn new(longest: Duration) -> Pauses {
        Pauses {
            longest,
            state: Mutex::new(State::default()),
            changed: Notify::new(),
        }
    }

    fn state(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    pub fn longest(&self) -> Duration {
        self.longest
    }

    /// Lets bulk job `job`, run by `child`, be held while the returned guard lives; `None` when
    /// pauses are off or the process is already gone.
    pub fn hold(&self, job: JobId, child: &Child) -> Option<Holding<'_>> {
        if self.longest.is_zero() {
            return None;
        }
        let process = child.id().and_then(|pid| {
            pidfd_open(pid)
                .inspect_err(|e| tracing::warn!(job.id = %job, "a bulk job's process cannot be held: {e}"))
                .ok()
        })?;
        self.state().held.insert(
            job,
            Bulk {
                process,
                ran: Duration::ZERO,
                since: Instant::now(),
                stood: Duration::ZERO,
                paused: None,
            },
        );
        self.changed.notify_one();
        Some(Holding { pauses: self, job })
    }

    /// Resolves once a bulk job may be held: no slot is lent and one runs that has run at least
    /// as long as it stood. Never, while pauses are off.
    pub async fn until_one_may_be_held(&self) {
        loop {
            let owed = {
                let state = self.state();
                let now = Instant::now();
                if self.longest.is_zero() || state.lent {
                    None
                } else {
                    state
                        .held
                        .values()
                        .filter(|bulk| bulk.paused.is_none())
                        .map(|bulk| bulk.owed(now))
                        .min()
                }
            };
            match owed {
                Some(Duration::ZERO) => return,
                Some(owed) => {
                    tokio::select! {
                        () = tokio::time::sleep(owed) => {}
                        () = self.changed.notified() => {}
                    }
                }
                None => self.changed.notified().await,
            }
        }
    }

    /// Holds one bulk job that may be held, and lends its slot; `None` when none may be.
    pub fn pause(&self) -> Option<Pause> {
        let mut state = self.state();
        if self.longest.is_zero() || state.lent {
            return None;
        }
        let now = Instant::now();
        let number = state.pauses + 1;
        let (&job, bulk) = state
            .held
            .iter_mut()
            .filter(|(_, bulk)| bulk.paused.is_none() && bulk.owed(now).is_zero())
            .min_by_key(|(_, bulk)| bulk.since)?;
        if let Err(e) = signal(&bulk.process, libc::SIGSTOP) {
            // It has just exited: its slot is about to be free anyway.
            tracing::debug!(job.id = %job, "holding a bulk job failed: {e}");
            return None;
        }
        bulk.ran += now - bulk.since;
        bulk.paused = Some((now, number));
        state.pauses = number;
        state.lent = true;
        Some(Pause { job, number })
    }

    /// Lets the job of `pause` go on, if that pause is still under way; answers whether it was.
    pub fn resume(&self, pause: Pause) -> bool {
        let mut state = self.state();
        let Some(bulk) = state.held.get_mut(&pause.job) else {
            return false;
        };
        let Some((began, number)) = bulk.paused else {
            return false;
        };
        if number != pause.number {
            return false;
        }
        if let Err(e) = signal(&bulk.process, libc::SIGCONT) {
            tracing::warn!(job.id = %pause.job, "letting a held bulk job go on failed: {e}");
        }
        let now = Instant::now();
        bulk.stood += now - began;
        bulk.since = now;
        bulk.paused = None;
        drop(state);
        self.changed.notify_one();
        true
    }

    /// The lent slot is free again (the job that ran in it ended, or never started).
    pub fn slot_given_back(&self) {
        self.state().lent = false;
        self.changed.notify_one();
    }

    /// How long job `job` has stood still in this attempt, a pause under way included.
    pub fn stood(&self, job: JobId) -> Duration {
        let state = self.state();
        state.held.get(&job).map_or(Duration::ZERO, |bulk| {
            bulk.stood + bulk.paused.map_or(Duration::ZERO, |(began, _)| began.elapsed())
        })
    }

    /// Jobs held still now.
    pub fn held_now(&self) -> usize {
        self.state()
            .held
            .values()
            .filter(|bulk| bulk.paused.is_some())
            .count()
    }
}

/// A file descriptor for process `pid`, our child not yet waited for.
fn pidfd_open(pid: u32) -> std::io::Result<OwnedFd> {
    let pid = libc::pid_t::try_from(pid).map_err(std::io::Error::other)?;
    // SAFETY: pidfd_open takes a pid and flags, no pointers.
    let fd = unsafe { libc::syscall(libc::SYS_pidfd_open, pid, 0) };
    if fd < 0 {
        return Err(std::io::Error::last_os_error());
    }
    let fd = i32::try_from(fd).map_err(std::io::Error::other)?;
    // SAFETY: a new descriptor the call just opened, owned by nobody else.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// Sends `signal` to the process behind `process`; fails once that process has exited.
fn signal(process: &OwnedFd, signal: i32) -> std::io::Result<()> {
    // SAFETY: a live descriptor, a signal number, no siginfo (null), no flags.
    let sent = unsafe {
        libc::syscall(
            libc::SYS_pidfd_send_signal,
            process.as_raw_fd(),
            signal,
            std::ptr::null::<libc::siginfo_t>(),
            0,
        )
    };
    if sent < 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The state letter of `pid` in /proc (`T`: stopped), once it is `wanted` or after a second.
    async fn state_becomes(pid: u32, wanted: char) -> char {
        let mut state = '?';
        for _ in 0..100 {
            let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).expect("the process's stat");
            // The state follows the command's closing parenthesis.
            state = stat[stat.rfind(')').expect("a command") + 2..]
                .chars()
                .next()
                .expect("a state");
            if state == wanted {
                break;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        state
    }

    #[tokio::test]
    async fn a_held_job_stands_still_goes_on_and_is_held_again_only_once_it_ran_as_long() {
        let mut child = tokio::process::Command::new("sleep")
            .arg("30")
            .kill_on_drop(true)
            .spawn()
            .expect("sleep starts");
        let pid = child.id().expect("running");
        let pauses = Pauses::new(Duration::from_secs(10));
        let job = JobId::random();
        let holding = pauses.hold(job, &child).expect("held");

        let pause = pauses
            .pause()
            .expect("a job that has not stood still may be held");
        assert_eq!(state_becomes(pid, 'T').await, 'T');
        assert_eq!(pauses.held_now(), 1);
        assert!(pauses.pause().is_none(), "one slot lent at a time");
        tokio::time::sleep(Duration::from_millis(300)).await;
        assert!(pauses.resume(pause));
        assert!(!pauses.resume(pause), "a pause ends once");
        assert_ne!(state_becomes(pid, 'S').await, 'T');
        assert!(pauses.stood(job) >= Duration::from_millis(300));
        pauses.slot_given_back();

        // Stood 300 ms and ran only a moment: it is owed the difference first.
        assert!(
            pauses.pause().is_none(),
            "held again before it ran as long as it stood"
        );
        tokio::time::timeout(Duration::from_secs(2), pauses.until_one_may_be_held())
            .await
            .expect("it may be held once it ran as long");
        let again = pauses.pause().expect("held again");
        assert_eq!(state_becomes(pid, 'T').await, 'T');

        // Gone from the pauses, it is never signalled again.
        assert!(pauses.resume(again));
        drop(holding);
        pauses.slot_given_back();
        assert!(pauses.pause().is_none());
        child.kill().await.expect("killed");
    }

    #[tokio::test]
    async fn nothing_is_held_when_pauses_are_off() {
        let child = tokio::process::Command::new("sleep")
            .arg("30")
            .kill_on_drop(true)
            .spawn()
            .expect("sleep starts");
        let pauses = Pauses::new(Duration::ZERO);
        assert!(pauses.hold(JobId::random(), &child).is_none());
        assert!(pauses.pause().is_none());
    }
}
