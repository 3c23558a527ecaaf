//! The one way a process that parses uploaded bytes is started: [`command`] makes the
//! `std::process::Command` that the worker (its job processes) and the API (its reader) both
//! run, so the empty environment, the limits and the narrowing are written once.

use std::ffi::OsStr;
use std::os::unix::process::CommandExt;
use std::process::Command;

/// What a confined process may use, set between fork and exec (`setrlimit`); past one, its
/// allocations fail, it is killed (CPU time, `SIGXCPU`) or its write fails (`SIGXFSZ`). It never
/// dumps core: a core file would hold the uploaded bytes it parsed.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// Address space in bytes.
    pub memory: u64,
    /// The largest file it may write, in bytes.
    pub file_size: u64,
    /// CPU seconds; `None`: no limit (a job's time limit is watched by its supervisor).
    pub cpu_seconds: Option<u64>,
}

/// A command for `program` that starts confined: an empty environment but `PATH` and
/// `DRIVE_LOG` (how much to log), killed when the process that started it dies, under `limits`,
/// and narrowed ([`crate::narrow`]) before it runs anything of its own. The caller adds its
/// arguments and pipes (and turns it into a `tokio::process::Command` where it runs async).
pub fn command(program: impl AsRef<OsStr>, limits: Limits) -> Command {
    let mut command = Command::new(program);
    // Nothing of this process's environment: no database URL, no store keys, no Redis URL, no
    // DRIVE_SECRET.
    command.env_clear().env("PATH", "/usr/local/bin:/usr/bin:/bin");
    if let Ok(filter) = std::env::var("DRIVE_LOG") {
        command.env("DRIVE_LOG", filter);
    }
    let filter = crate::filter();
    let mut rlimits = vec![
        (libc::RLIMIT_AS, limits.memory),
        (libc::RLIMIT_FSIZE, limits.file_size),
        (libc::RLIMIT_CORE, 0),
    ];
    if let Some(seconds) = limits.cpu_seconds {
        rlimits.push((libc::RLIMIT_CPU, seconds));
    }
    // SAFETY: between fork and exec only async-signal-safe calls (prctl, setrlimit) over what
    // was allocated before the fork.
    unsafe {
        command.pre_exec(move || {
            // It dies with the process that started it: a killed worker or API leaves no parser
            // running unwatched.
            if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            for &(resource, wanted) in &rlimits {
                // Never above a hard limit already set (raising one is refused): the lower holds.
                let mut now = libc::rlimit {
                    rlim_cur: 0,
                    rlim_max: 0,
                };
                if libc::getrlimit(resource, &mut now) != 0 {
                    return Err(std::io::Error::last_os_error());
                }
                let limit = wanted.min(now.rlim_max);
                let limit = libc::rlimit {
                    rlim_cur: limit,
                    rlim_max: limit,
                };
                if libc::setrlimit(resource, &limit) != 0 {
                    return Err(std::io::Error::last_os_error());
                }
            }
            crate::narrow(&filter)
        });
    }
    command
}
