//! How a process that parses uploaded bytes (a worker's job process, the API's reader) is
//! narrowed with what Linux lets an unprivileged process do to itself: between fork and exec,
//! no new privileges, no capabilities and a seccomp filter ([`narrow`]); once it is handed its
//! work, a Landlock rule set over the file system ([`restrict_files`]). Its empty environment
//! and its limits are set where it is started (the worker's `farm`, the API's `reader`).

use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

/// The system calls a job process is refused (EPERM): none of them is needed to parse a file,
/// and each is what an exploit reaches for: other processes' memory, namespaces and mounts,
/// and the kernel's larger attack surfaces (BPF, io_uring, userfaultfd, perf, keyrings,
/// modules).
const REFUSED: &[libc::c_long] = &[
    libc::SYS_ptrace,
    libc::SYS_process_vm_readv,
    libc::SYS_process_vm_writev,
    libc::SYS_mount,
    libc::SYS_umount2,
    libc::SYS_pivot_root,
    libc::SYS_unshare,
    libc::SYS_setns,
    libc::SYS_bpf,
    libc::SYS_io_uring_setup,
    libc::SYS_userfaultfd,
    libc::SYS_perf_event_open,
    libc::SYS_keyctl,
    libc::SYS_add_key,
    libc::SYS_request_key,
    libc::SYS_init_module,
    libc::SYS_finit_module,
    libc::SYS_delete_module,
    libc::SYS_kexec_load,
    libc::SYS_open_by_handle_at,
];

/// The architecture the filter's numbers are for (`AUDIT_ARCH_*` in linux/audit.h): a call
/// made through another one (32-bit calls on a 64-bit kernel) kills the process.
#[cfg(target_arch = "x86_64")]
const ARCH: u32 = 0xC000_003E;
#[cfg(target_arch = "aarch64")]
const ARCH: u32 = 0xC000_00B7;

/// System call numbers from here up are x32's on x86_64: refused too.
const X32: u32 = 0x4000_0000;

/// The seccomp program: a classic BPF filter over `seccomp_data` (the call's number at offset
/// 0, the architecture at 4). Built before fork, so installing it allocates nothing.
pub fn filter() -> Vec<libc::sock_filter> {
    let statement = |code: u32, k: u32| libc::sock_filter {
        code: code as u16,
        jt: 0,
        jf: 0,
        k,
    };
    let jump = |code: u32, k: u32, jt: u8, jf: u8| libc::sock_filter {
        code: code as u16,
        jt,
        jf,
        k,
    };
    let load = |offset: u32| statement(libc::BPF_LD | libc::BPF_W | libc::BPF_ABS, offset);
    let refuse = statement(
        libc::BPF_RET | libc::BPF_K,
        libc::SECCOMP_RET_ERRNO | libc::EPERM as u32,
    );
    let mut program = vec![
        load(4),
        jump(libc::BPF_JMP | libc::BPF_JEQ | libc::BPF_K, ARCH, 1, 0),
        statement(libc::BPF_RET | libc::BPF_K, libc::SECCOMP_RET_KILL_PROCESS),
        load(0),
        jump(libc::BPF_JMP | libc::BPF_JGE | libc::BPF_K, X32, 0, 1),
        refuse,
    ];
    for &call in REFUSED {
        program.push(jump(
            libc::BPF_JMP | libc::BPF_JEQ | libc::BPF_K,
            call as u32,
            0,
            1,
        ));
        program.push(refuse);
    }
    program.push(statement(libc::BPF_RET | libc::BPF_K, libc::SECCOMP_RET_ALLOW));
    program
}

/// Narrows the calling process (a job process between fork and exec): no new privileges, an
/// empty capability bounding set, and `filter`. Only async-signal-safe calls (prctl).
pub fn narrow(filter: &[libc::sock_filter]) -> std::io::Result<()> {
    // SAFETY: prctl on this process; the program outlives the call, which copies it.
    unsafe {
        // Nothing it runs gains privileges (setuid programs, file capabilities); this is also
        // what lets an unprivileged process install a seccomp filter.
        if libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 {
            return Err(std::io::Error::last_os_error());
        }
        // A worker run as root would hand its job processes every capability at exec (reading
        // any process's memory among them): an empty bounding set gives them none. Refused,
        // and needless, for a worker that is not root.
        for capability in 0..64 {
            libc::prctl(libc::PR_CAPBSET_DROP, capability, 0, 0, 0);
        }
        let program = libc::sock_fprog {
            len: filter.len() as u16,
            filter: filter.as_ptr().cast_mut(),
        };
        if libc::prctl(libc::PR_SET_SECCOMP, libc::SECCOMP_MODE_FILTER, &program) != 0 {
            return Err(std::io::Error::last_os_error());
        }
    }
    Ok(())
}

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

const CREATE_RULESET_VERSION: u32 = 1;
const RULE_PATH_BENEATH: u32 = 1;

#[repr(C)]
struct RulesetAttr {
    handled_access_fs: u64,
}

#[repr(C, packed)]
struct PathBeneathAttr {
    allowed_access: u64,
    parent_fd: i32,
}

/// What a job process may read besides its work folder and its font: the system's programs,
/// libraries and settings (TLS roots, name resolution, fonts' configuration), its own
/// `/proc` entries and devices. Not other jobs' folders, nor anything else on the host.
const READABLE: &[&str] = &[
    "/usr",
    "/lib",
    "/lib64",
    "/bin",
    "/etc",
    "/run",
    "/sys",
    "/dev",
    "/proc/self",
    "/proc/sys",
    "/proc/cpuinfo",
    "/proc/meminfo",
    "/var/cache/fontconfig",
];

/// Restricts this process's threads, and every thread they start, to reading [`READABLE`]
/// and `also_readable` (a job's font, the models folder), and to reading and writing only
/// inside `work` (and `/dev/null`): a job cannot read another job's inputs nor change another
/// job's results before its supervisor stores them, nor anything else of the host's. Call it
/// before any other thread starts. Answers false on a kernel without Landlock, where it does
/// nothing.
pub fn restrict_files(work: &Path, also_readable: &[&Path]) -> io::Result<bool> {
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
            return Ok(false);
        }
        let mut handled = ALL_OF_ABI_1;
        if abi >= 2 {
            handled |= REFER;
        }
        if abi >= 3 {
            handled |= TRUNCATE;
        }
        let attr = RulesetAttr {
            handled_access_fs: handled,
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
        let file_rights = WRITE_FILE | READ_FILE | TRUNCATE | EXECUTE;
        let allow = |path: &Path, rights: u64| -> io::Result<()> {
            let Some(opened) = open_path(path) else {
                return Ok(());
            };
            let is_dir = std::fs::metadata(path).is_ok_and(|m| m.is_dir());
            let rights = if is_dir { rights } else { rights & file_rights };
            let rule = PathBeneathAttr {
                allowed_access: rights & handled,
                parent_fd: opened.as_raw_fd(),
            };
            let added = libc::syscall(
                libc::SYS_landlock_add_rule,
                ruleset.as_raw_fd(),
                RULE_PATH_BENEATH,
                &rule,
                0,
            );
            if added != 0 {
                return Err(io::Error::last_os_error());
            }
            Ok(())
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
        if libc::syscall(libc::SYS_landlock_restrict_self, ruleset.as_raw_fd(), 0) != 0 {
            return Err(io::Error::last_os_error());
        }
    }
    Ok(true)
}

/// `path` opened as a reference for a rule (`O_PATH`); `None` when it does not exist here.
fn open_path(path: &Path) -> Option<OwnedFd> {
    let name = std::ffi::CString::new(path.as_os_str().as_bytes()).ok()?;
    // SAFETY: a NUL-terminated path; the descriptor is owned by the answer.
    let fd = unsafe { libc::open(name.as_ptr(), libc::O_PATH | libc::O_CLOEXEC) };
    // SAFETY: a descriptor just opened and owned by nothing else.
    (fd >= 0).then(|| unsafe { OwnedFd::from_raw_fd(fd) })
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    #[test]
    fn a_narrowed_thread_is_refused_the_filtered_calls_and_keeps_the_others() {
        // Filters and privileges are a thread's own: narrowing this one leaves the tests'.
        let (refused, errno, pid) = std::thread::spawn(|| {
            super::narrow(&super::filter()).unwrap();
            // SAFETY: plain system calls; the refused one is never let touch memory.
            unsafe {
                let refused = libc::syscall(libc::SYS_process_vm_readv, 0, 0, 0, 0, 0, 0);
                let errno = std::io::Error::last_os_error().raw_os_error();
                (refused, errno, libc::getpid())
            }
        })
        .join()
        .unwrap();
        assert_eq!((refused, errno), (-1, Some(libc::EPERM)));
        assert_eq!(pid as u32, std::process::id());
    }

    #[test]
    fn a_restricted_thread_writes_and_reads_only_in_its_work_folder() {
        let base = std::env::temp_dir().join(format!("drive-confine-{}", std::process::id()));
        let (work, other, models) = (base.join("work"), base.join("other"), base.join("models"));
        for dir in [&work, &other, &models] {
            std::fs::create_dir_all(dir).unwrap();
        }
        std::fs::write(other.join("input"), b"another job's").unwrap();
        std::fs::write(models.join("model"), b"weights").unwrap();
        let font = Path::new("/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf");
        // Landlock binds a thread and the threads it starts: this one, not the tests'.
        let (written, read_system, wrote_outside, read_outside, read_model, wrote_model) =
            std::thread::spawn({
                let (work, other, models) = (work.clone(), other.clone(), models.clone());
                move || {
                    // As in a job process: narrowed first (Landlock wants no new privileges).
                    super::narrow(&super::filter()).unwrap();
                    assert!(
                        super::restrict_files(&work, &[font, &models]).unwrap(),
                        "Landlock is enforced here"
                    );
                    (
                        std::fs::write(work.join("result"), b"made").is_ok(),
                        std::fs::read("/etc/passwd").is_ok(),
                        std::fs::write(other.join("result"), b"tampered").is_ok(),
                        std::fs::read(other.join("input")).is_ok(),
                        std::fs::read(models.join("model")).is_ok(),
                        std::fs::write(models.join("model"), b"poisoned").is_ok(),
                    )
                }
            })
            .join()
            .unwrap();
        std::fs::remove_dir_all(&base).unwrap();
        assert!(
            written && read_system,
            "the work folder and the system stay usable"
        );
        assert!(!wrote_outside && !read_outside, "another folder is closed");
        assert!(read_model && !wrote_model, "the models are read-only");
    }
}
