//! The Landlock rule set a process restricts itself with once it has its work ([`restrict`]):
//! the file system, TCP ports and what it may signal or reach by abstract sockets.

use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

/// Landlock's file-system rights (linux/landlock.h), those of its first ABI...
const EXECUTE: u64 = 1 << 0;
const WRITE_FILE: u64 = 1 << 1;
const READ_FILE: u64 = 1 << 2;
const READ_DIR: u64 = 1 << 3;
/// ...removing, making every kind of file (bits 4 to 12)...
const ALL_OF_ABI_1: u64 = (1 << 13) - 1;
/// ...and of the next two: moving and linking across folders, truncating.
const REFER: u64 = 1 << 13;
const TRUNCATE: u64 = 1 << 14;

/// Its network rights (ABI 4): binding and connecting TCP sockets, by port.
const BIND_TCP: u64 = 1 << 0;
const CONNECT_TCP: u64 = 1 << 1;

/// What it scopes to the processes under the same rule set (ABI 6): connecting to abstract
/// Unix sockets, sending signals.
const SCOPE_ABSTRACT_UNIX_SOCKET: u64 = 1 << 0;
const SCOPE_SIGNAL: u64 = 1 << 1;

const CREATE_RULESET_VERSION: u32 = 1;
const RULE_PATH_BENEATH: u32 = 1;
const RULE_NET_PORT: u32 = 2;

/// All three fields are given to every kernel: one that knows fewer accepts the struct as
/// long as the fields it does not know are zero.
#[repr(C)]
struct RulesetAttr {
    handled_access_fs: u64,
    handled_access_net: u64,
    scoped: u64,
}

#[repr(C, packed)]
struct PathBeneathAttr {
    allowed_access: u64,
    parent_fd: i32,
}

#[repr(C)]
struct NetPortAttr {
    allowed_access: u64,
    port: u64,
}

/// What a job process may read besides its work folder and its font: the system's programs
/// and libraries, the few settings of `/etc` it reads (TLS roots, name resolution, the
/// loader's cache for the modules glibc loads, time zone, fonts' configuration), its own
/// `/proc` entries and devices. Not the rest of `/etc` nor anything of `/run`, where secrets
/// live (`/etc/shadow`, systemd credentials, Docker and Kubernetes secrets, services'
/// sockets and settings), nor other jobs' folders, nor anything else on the host.
const READABLE: &[&str] = &[
    "/usr",
    "/lib",
    "/lib64",
    "/bin",
    // The roots, not the folders beside them (`/etc/ssl/private`, `/etc/pki/tls/private`).
    "/etc/ssl/certs",
    "/etc/ssl/openssl.cnf",
    "/etc/pki/tls/certs",
    "/etc/pki/ca-trust/extracted",
    "/etc/resolv.conf",
    "/etc/hosts",
    "/etc/host.conf",
    "/etc/nsswitch.conf",
    "/etc/gai.conf",
    "/etc/services",
    "/etc/ld.so.cache",
    "/etc/localtime",
    "/etc/fonts",
    "/sys",
    "/dev",
    "/proc/self",
    "/proc/sys",
    "/proc/cpuinfo",
    "/proc/meminfo",
    "/var/cache/fontconfig",
];

/// What the kernel enforced of [`restrict`]: each part needs a Landlock ABI that older
/// kernels lack.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Restricted {
    /// Files (ABI 1, Linux 5.13).
    pub files: bool,
    /// TCP: connecting only to the ports given, binding none (ABI 4, Linux 6.7).
    pub tcp: bool,
    /// Abstract Unix sockets and signals only within the process and what it starts (ABI 6,
    /// Linux 6.12).
    pub scoped: bool,
}

impl Restricted {
    /// What went unenforced and what that leaves open, in words for a warning; `None` when
    /// everything holds.
    pub fn missing(&self) -> Option<String> {
        let mut open = Vec::new();
        if !self.files {
            open.push("it may read and write any file its user can (no Landlock, Linux 5.13)");
        }
        if !self.tcp {
            open.push(
                "it may connect to any TCP port its host reaches (no Landlock network rules, Linux 6.7)",
            );
        }
        if !self.scoped {
            open.push("it may signal its user's other processes (no Landlock scopes, Linux 6.12)");
        }
        (!open.is_empty()).then(|| open.join("; "))
    }
}

/// Restricts this process's threads, and every thread and process they start: to reading
/// [`READABLE`] and `also_readable` (a job's font, the models folder), and to reading and
/// writing only inside `work` (and `/dev/null`), so that a job cannot read another job's
/// inputs nor change another job's results before its supervisor stores them, nor anything
/// else of the host's; to connecting over TCP only to `ports` (the store's), and binding
/// none, so that it reaches neither the store's other services, nor PostgreSQL, Redis or a
/// cloud's metadata address; to signalling and reaching abstract Unix sockets only within
/// itself. Call it before any other thread starts. What an older kernel cannot enforce is
/// left out: the answer says what held.
pub fn restrict(work: &Path, also_readable: &[&Path], ports: &[u16]) -> io::Result<Restricted> {
    // SAFETY: the Landlock system calls take pointers to the attribute structs above, which
    // outlive each call; every descriptor made is owned.
    unsafe {
        let abi = libc::syscall(
            libc::SYS_landlock_create_ruleset,
            std::ptr::null::<RulesetAttr>(),
            0,
            CREATE_RULESET_VERSION,
        );
        if abi < 1 {
            return Ok(Restricted {
                files: false,
                tcp: false,
                scoped: false,
            });
        }
        let mut handled = ALL_OF_ABI_1;
        if abi >= 2 {
            handled |= REFER;
        }
        if abi >= 3 {
            handled |= TRUNCATE;
        }
        let restricted = Restricted {
            files: true,
            tcp: abi >= 4,
            scoped: abi >= 6,
        };
        let attr = RulesetAttr {
            handled_access_fs: handled,
            handled_access_net: if restricted.tcp { BIND_TCP | CONNECT_TCP } else { 0 },
            scoped: if restricted.scoped {
                SCOPE_ABSTRACT_UNIX_SOCKET | SCOPE_SIGNAL
            } else {
                0
            },
        };
        let ruleset = libc::syscall(
            libc::SYS_landlock_create_ruleset,
            &attr,
            std::mem::size_of::<RulesetAttr>(),
            0,
        );
        if ruleset < 0 {
            return Err(io::Error::last_os_error());
        }
        let ruleset = OwnedFd::from_raw_fd(ruleset as i32);
        let add_rule = |kind: u32, rule: *const libc::c_void| -> io::Result<()> {
            if libc::syscall(libc::SYS_landlock_add_rule, ruleset.as_raw_fd(), kind, rule, 0) != 0 {
                return Err(io::Error::last_os_error());
            }
            Ok(())
        };
        let file_rights = WRITE_FILE | READ_FILE | TRUNCATE | EXECUTE;
        let allow = |path: &Path, rights: u64| -> io::Result<()> {
            // Opened through its links: a rule on a link's name would be on its target
            // (`/etc/resolv.conf` is often one into `/run`), which stays readable then.
            let Some(opened) = open_path(path) else {
                return Ok(());
            };
            let is_dir = std::fs::metadata(path).is_ok_and(|m| m.is_dir());
            let rights = if is_dir { rights } else { rights & file_rights };
            let rule = PathBeneathAttr {
                allowed_access: rights & handled,
                parent_fd: opened.as_raw_fd(),
            };
            add_rule(RULE_PATH_BENEATH, (&raw const rule).cast())
        };
        for path in READABLE {
            allow(Path::new(path), READ_FILE | READ_DIR | EXECUTE)?;
        }
        for path in also_readable {
            // Landlock refuses rights on a file that only a folder can have.
            let rights = if path.is_dir() {
                READ_FILE | READ_DIR
            } else {
                READ_FILE
            };
            allow(path, rights)?;
        }
        allow(Path::new("/dev/null"), READ_FILE | WRITE_FILE)?;
        allow(work, handled)?;
        if restricted.tcp {
            for &port in ports {
                let rule = NetPortAttr {
                    allowed_access: CONNECT_TCP,
                    port: port.into(),
                };
                add_rule(RULE_NET_PORT, (&raw const rule).cast())?;
            }
        }
        if libc::syscall(libc::SYS_landlock_restrict_self, ruleset.as_raw_fd(), 0) != 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(restricted)
    }
}

/// `path` opened as a reference for a rule (`O_PATH`); `None` when it does not exist here.
fn open_path(path: &Path) -> Option<OwnedFd> {
    let name = std::ffi::CString::new(path.as_os_str().as_bytes()).ok()?;
    // SAFETY: a NUL-terminated path; the descriptor is owned by the answer.
    let fd = unsafe { libc::open(name.as_ptr(), libc::O_PATH | libc::O_CLOEXEC) };
    // SAFETY: a descriptor just opened and owned by nothing else.
    (fd >= 0).then(|| unsafe { OwnedFd::from_raw_fd(fd) })
}
