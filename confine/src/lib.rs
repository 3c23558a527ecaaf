//! How a process that parses uploaded bytes (a worker's job process, the API's reader) is
//! narrowed with what Linux lets an unprivileged process do to itself: between fork and exec,
//! no new privileges, no capabilities and a seccomp filter ([`narrow`]); once it is handed its
//! work, a Landlock rule set over the file system, TCP and what it may signal ([`restrict`]).
//! Its empty environment and its limits are set where it is started (the worker's `farm`, the
//! API's `reader`).

use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

/// The system calls a job process is refused (EPERM): none of them is needed to parse a file,
/// and each is what an exploit reaches for: other processes' memory, namespaces and mounts,
/// and the kernel's larger attack surfaces (BPF, io_uring, userfaultfd, perf, keyrings,
/// modules). `clone`, `clone3`, `socket` and the sending calls are refused in part, by
/// [`filter`].
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
    // Listening binds a port of the kernel's choosing without `bind`, which Landlock's TCP
    // rules see: parsing serves nothing.
    libc::SYS_listen,
];

/// The `clone` flags that make a new namespace. A user namespace gives its maker every
/// capability inside it, and with them the kernel code only root reached (mounting file
/// systems, netfilter, raw sockets): the first step of many exploits. (`CLONE_NEWTIME` shares
/// its bit with the exit signal in `clone`: it is made only through `clone3` and `unshare`,
/// both refused.)
const NEW_NAMESPACES: u32 = (libc::CLONE_NEWNS
    | libc::CLONE_NEWCGROUP
    | libc::CLONE_NEWUTS
    | libc::CLONE_NEWIPC
    | libc::CLONE_NEWUSER
    | libc::CLONE_NEWPID
    | libc::CLONE_NEWNET) as u32;

/// The sockets a job process may make: TCP and UDP over IPv4 and IPv6, what reaching the store
/// (and resolving its name) takes. Not Unix sockets, which Landlock's network rules do not
/// cover and through which local services answer (PostgreSQL, Redis, D-Bus, the container
/// runtime's); nor netlink, packet or rarer families, kernel code that parsing never needs;
/// nor MPTCP and SCTP, whose connections Landlock's TCP rules do not see.
const SOCKET_DOMAINS: &[u32] = &[libc::AF_INET as u32, libc::AF_INET6 as u32];
const SOCKET_TYPES: &[u32] = &[libc::SOCK_STREAM as u32, libc::SOCK_DGRAM as u32];
/// 0 is the type's own protocol: TCP for a stream, UDP for datagrams.
const SOCKET_PROTOCOLS: &[u32] = &[0, libc::IPPROTO_TCP as u32, libc::IPPROTO_UDP as u32];
/// The bits of `socket`'s type that are its type (the others are flags: non-blocking,
/// close-on-exec).
const SOCKET_TYPE_MASK: u32 = 0xf;

/// The architecture the filter's numbers are for (`AUDIT_ARCH_*` in linux/audit.h): a call
/// made through another one (32-bit calls on a 64-bit kernel) kills the process.
#[cfg(target_arch = "x86_64")]
const ARCH: u32 = 0xC000_003E;
#[cfg(target_arch = "aarch64")]
const ARCH: u32 = 0xC000_00B7;

/// System call numbers from here up are x32's on x86_64: refused too.
const X32: u32 = 0x4000_0000;

/// Where `seccomp_data` holds the call's number, its architecture and the low 32 bits of its
/// arguments (little-endian; the calls checked here read only those bits of the arguments
/// checked: `clone`'s flags, `socket`'s ints).
const NUMBER: u32 = 0;
const ARCHITECTURE: u32 = 4;
const fn argument(n: u32) -> u32 {
    16 + 8 * n
}

/// The seccomp program: a classic BPF filter over `seccomp_data`. Built before fork, so
/// installing it allocates nothing.
pub fn filter() -> Vec<libc::sock_filter> {
    let mut program = vec![
        load(ARCHITECTURE),
        jump(libc::BPF_JEQ, ARCH, 1, 0),
        answer(libc::SECCOMP_RET_KILL_PROCESS),
        load(NUMBER),
        jump(libc::BPF_JGE, X32, 0, 1),
        refuse(libc::EPERM),
    ];
    for &call in REFUSED {
        when(&mut program, call, vec![refuse(libc::EPERM)]);
    }
    // Threads and processes, but no namespace.
    unless_flags(&mut program, libc::SYS_clone, 0, NEW_NAMESPACES);
    // Sending, but not TCP Fast Open, whose `sendto` or `sendmsg` connects without the
    // `connect` that Landlock's TCP rules check.
    let fast_open = libc::MSG_FASTOPEN as u32;
    unless_flags(&mut program, libc::SYS_sendto, 3, fast_open);
    unless_flags(&mut program, libc::SYS_sendmsg, 2, fast_open);
    unless_flags(&mut program, libc::SYS_sendmmsg, 3, fast_open);
    // `clone3` takes its flags behind a pointer, which a filter cannot read: "not here"
    // instead, and glibc (threads, `posix_spawn`, `fork`) falls back to `clone`.
    when(&mut program, libc::SYS_clone3, vec![refuse(libc::ENOSYS)]);
    let mut socket = vec![load(argument(0))];
    one_of(&mut socket, SOCKET_DOMAINS);
    socket.push(load(argument(1)));
    socket.push(statement(
        libc::BPF_ALU | libc::BPF_AND | libc::BPF_K,
        SOCKET_TYPE_MASK,
    ));
    one_of(&mut socket, SOCKET_TYPES);
    socket.push(load(argument(2)));
    one_of(&mut socket, SOCKET_PROTOCOLS);
    socket.push(answer(libc::SECCOMP_RET_ALLOW));
    when(&mut program, libc::SYS_socket, socket);
    program.push(answer(libc::SECCOMP_RET_ALLOW));
    program
}

fn statement(code: u32, k: u32) -> libc::sock_filter {
    libc::sock_filter {
        code: code as u16,
        jt: 0,
        jf: 0,
        k,
    }
}

/// Loads the word at `offset` of `seccomp_data`.
fn load(offset: u32) -> libc::sock_filter {
    statement(libc::BPF_LD | libc::BPF_W | libc::BPF_ABS, offset)
}

/// Compares the loaded word with `k` (`test`: equal, at least, any bit in common) and skips
/// `yes` or `no` instructions.
fn jump(test: u32, k: u32, yes: u8, no: u8) -> libc::sock_filter {
    libc::sock_filter {
        code: (libc::BPF_JMP | test | libc::BPF_K) as u16,
        jt: yes,
        jf: no,
        k,
    }
}

fn answer(action: u32) -> libc::sock_filter {
    statement(libc::BPF_RET | libc::BPF_K, action)
}

fn refuse(errno: i32) -> libc::sock_filter {
    answer(libc::SECCOMP_RET_ERRNO | errno as u32)
}

/// Appends `steps`, run for system call `call` only: each must end in an answer, as the
/// next call's test expects the call's number loaded.
fn when(program: &mut Vec<libc::sock_filter>, call: libc::c_long, steps: Vec<libc::sock_filter>) {
    let skip = u8::try_from(steps.len()).expect("a call's steps fit a jump");
    program.push(jump(libc::BPF_JEQ, call as u32, 0, skip));
    program.extend(steps);
}

/// Appends a refusal of system call `call` when its argument `n` has any of `flags`.
fn unless_flags(program: &mut Vec<libc::sock_filter>, call: libc::c_long, n: u32, flags: u32) {
    when(
        program,
        call,
        vec![
            load(argument(n)),
            jump(libc::BPF_JSET, flags, 0, 1),
            refuse(libc::EPERM),
            answer(libc::SECCOMP_RET_ALLOW),
        ],
    );
}

/// Appends a refusal unless the loaded word is one of `allowed`, and goes on past it if it is.
fn one_of(program: &mut Vec<libc::sock_filter>, allowed: &[u32]) {
    for (n, &value) in allowed.iter().enumerate() {
        // Past the comparisons left and the refusal.
        let past = (allowed.len() - n) as u8;
        program.push(jump(libc::BPF_JEQ, value, past, 0));
    }
    program.push(refuse(libc::EPERM));
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

#[cfg(test)]
mod tests {
    use std::io::{ErrorKind, Write};
    use std::net::{TcpListener, TcpStream, ToSocketAddrs};
    use std::path::{Path, PathBuf};

    /// A folder of this test's own under the temporary folder, removed when dropped.
    struct Scratch(PathBuf);

    impl Scratch {
        fn new(name: &str) -> Scratch {
            let dir = std::env::temp_dir().join(format!("drive-confine-{name}-{}", std::process::id()));
            std::fs::create_dir_all(&dir).unwrap();
            Scratch(dir)
        }
    }

    impl Drop for Scratch {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }

    /// A system call's answer: its value, or the error number it failed with.
    fn called(answer: libc::c_long) -> Result<libc::c_long, i32> {
        if answer < 0 {
            Err(std::io::Error::last_os_error().raw_os_error().unwrap())
        } else {
            Ok(answer)
        }
    }

    /// Sends a few bytes to 127.0.0.1:`port` with `flags` through a new TCP socket's `sendto`,
    /// which TCP Fast Open (`MSG_FASTOPEN`) makes a connection.
    fn fast_open(port: u16, flags: i32) -> Result<libc::c_long, i32> {
        // SAFETY: a socket made and closed here; the address and bytes outlive the call.
        unsafe {
            let fd = called(libc::socket(libc::AF_INET, libc::SOCK_STREAM, 0).into())? as i32;
            let mut address: libc::sockaddr_in = std::mem::zeroed();
            address.sin_family = libc::AF_INET as libc::sa_family_t;
            address.sin_port = port.to_be();
            address.sin_addr.s_addr = u32::from_ne_bytes([127, 0, 0, 1]);
            let sent = called(libc::sendto(
                fd,
                b"PING\r\n".as_ptr().cast(),
                6,
                flags,
                (&raw const address).cast(),
                std::mem::size_of::<libc::sockaddr_in>() as u32,
            ) as libc::c_long);
            libc::close(fd);
            sent
        }
    }

    /// `socket(domain, kind, protocol)`, closed again when made.
    fn socket(domain: i32, kind: i32, protocol: i32) -> Result<(), i32> {
        // SAFETY: a plain system call; the descriptor it makes is closed at once.
        unsafe {
            let fd = called(libc::socket(domain, kind, protocol).into())?;
            libc::close(fd as i32);
        }
        Ok(())
    }

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
    fn a_narrowed_thread_makes_threads_and_processes_but_no_namespace() {
        let (new_user, new_net, clone3, plain, thread, program) = std::thread::spawn(|| {
            super::narrow(&super::filter()).unwrap();
            // SAFETY: `clone` without a new stack is a fork: a child, were one made, leaves at
            // once without touching the tests' state. `clone3` is given a zeroed `clone_args`
            // of its second version's size (88 bytes) with only flags and exit signal set.
            unsafe {
                let fork_with = |flags: libc::c_int| {
                    let made = called(libc::syscall(libc::SYS_clone, flags | libc::SIGCHLD, 0, 0, 0, 0));
                    match made {
                        Ok(0) => libc::_exit(0),
                        Ok(child) => {
                            libc::waitpid(child as i32, std::ptr::null_mut(), 0);
                            Ok(())
                        }
                        Err(errno) => Err(errno),
                    }
                };
                let mut args = [0u64; 11];
                args[0] = libc::CLONE_NEWUSER as u64;
                args[4] = libc::SIGCHLD as u64;
                let clone3 = match called(libc::syscall(libc::SYS_clone3, args.as_ptr(), 88)) {
                    Ok(0) => libc::_exit(0),
                    Ok(child) => {
                        libc::waitpid(child as i32, std::ptr::null_mut(), 0);
                        Ok(child)
                    }
                    Err(errno) => Err(errno),
                };
                (
                    fork_with(libc::CLONE_NEWUSER),
                    fork_with(libc::CLONE_NEWNET),
                    clone3,
                    fork_with(0),
                    // glibc starts threads and programs with clone3 and falls back to clone.
                    std::thread::spawn(|| 1).join().unwrap(),
                    std::process::Command::new("true").status().unwrap().success(),
                )
            }
        })
        .join()
        .unwrap();
        assert_eq!(new_user, Err(libc::EPERM), "no user namespace");
        assert_eq!(new_net, Err(libc::EPERM), "no network namespace");
        assert_eq!(clone3, Err(libc::ENOSYS), "clone3 is answered as missing");
        assert_eq!(plain, Ok(()), "a process without a namespace is made");
        assert_eq!((thread, program), (1, true), "threads and programs start");
    }

    #[test]
    fn a_narrowed_thread_makes_only_tcp_and_udp_sockets() {
        let (allowed, refused, resolved) = std::thread::spawn(|| {
            super::narrow(&super::filter()).unwrap();
            let allowed = [
                socket(libc::AF_INET, libc::SOCK_STREAM | libc::SOCK_CLOEXEC, 0),
                socket(
                    libc::AF_INET6,
                    libc::SOCK_STREAM | libc::SOCK_NONBLOCK,
                    libc::IPPROTO_TCP,
                ),
                socket(libc::AF_INET, libc::SOCK_DGRAM, libc::IPPROTO_UDP),
                socket(libc::AF_INET6, libc::SOCK_DGRAM, 0),
            ];
            let refused = [
                // PostgreSQL's and Redis's local sockets, D-Bus, a container runtime's.
                socket(libc::AF_UNIX, libc::SOCK_STREAM, 0),
                socket(libc::AF_UNIX, libc::SOCK_DGRAM, 0),
                socket(libc::AF_NETLINK, libc::SOCK_RAW, libc::NETLINK_ROUTE),
                socket(libc::AF_PACKET, libc::SOCK_DGRAM, 0),
                socket(libc::AF_VSOCK, libc::SOCK_STREAM, 0),
                // Streams Landlock's TCP rules do not see.
                socket(libc::AF_INET, libc::SOCK_STREAM, libc::IPPROTO_MPTCP),
                socket(libc::AF_INET, libc::SOCK_STREAM, libc::IPPROTO_SCTP),
                socket(libc::AF_INET6, libc::SOCK_SEQPACKET, 0),
                socket(libc::AF_INET, libc::SOCK_RAW, libc::IPPROTO_TCP),
                // Ping sockets.
                socket(libc::AF_INET, libc::SOCK_DGRAM, libc::IPPROTO_ICMP),
            ];
            // Name resolution does without the refused netlink and Unix sockets.
            let resolved = ("localhost", 80).to_socket_addrs().map(|found| found.count());
            (allowed, refused, resolved)
        })
        .join()
        .unwrap();
        assert!(allowed.iter().all(Result::is_ok), "{allowed:?}");
        assert!(
            refused.iter().all(|made| *made == Err(libc::EPERM)),
            "{refused:?}"
        );
        assert!(resolved.is_ok_and(|found| found > 0));
        // PostgreSQL's own socket, where Debian's listens: refused before the path is looked at.
        let postgres = Path::new("/var/run/postgresql/.s.PGSQL.5432");
        let reached = std::thread::spawn(move || {
            super::narrow(&super::filter()).unwrap();
            std::os::unix::net::UnixStream::connect(postgres).map_err(|e| e.raw_os_error())
        })
        .join()
        .unwrap();
        assert_eq!(reached.err(), Some(Some(libc::EPERM)));
    }

    #[test]
    fn a_restricted_thread_connects_only_to_its_stores_port() {
        let scratch = Scratch::new("net");
        let store = TcpListener::bind("127.0.0.1:0").unwrap();
        // A stand-in for the store's filer and volume servers: any other port of the host.
        let filer = TcpListener::bind("127.0.0.1:0").unwrap();
        let (store_port, filer_port) = (
            store.local_addr().unwrap().port(),
            filer.local_addr().unwrap().port(),
        );
        // Outside the rules: a process of this user's (the supervisor, in service).
        let mut outsider = std::process::Command::new("sleep").arg("30").spawn().unwrap();
        let outsider_pid = outsider.id() as i32;
        let work = scratch.0.clone();
        let (restricted, connects, sent, bound, signalled, own) = std::thread::spawn(move || {
            super::narrow(&super::filter()).unwrap();
            let restricted = super::restrict(&work, &[], &[store_port]).unwrap();
            let connect = |address: &str| {
                TcpStream::connect_timeout(&address.parse().unwrap(), std::time::Duration::from_secs(5))
                    .map(drop)
                    .map_err(|e| e.kind())
            };
            let connects = [
                connect(&format!("127.0.0.1:{store_port}")),
                connect(&format!("127.0.0.1:{filer_port}")),
                // Redis and PostgreSQL, which run on this machine.
                connect("127.0.0.1:6379"),
                connect("[::1]:6379"),
                connect("127.0.0.1:5432"),
                // A cloud's metadata address and the internet.
                connect("169.254.169.254:80"),
                connect("1.1.1.1:443"),
            ];
            let sent = [
                // Sending on a connection made goes on: the store is written to.
                TcpStream::connect(("127.0.0.1", store_port))
                    .and_then(|mut stream| stream.write_all(b"PUT"))
                    .map_err(|e| e.raw_os_error().unwrap_or_default()),
                fast_open(filer_port, libc::MSG_FASTOPEN).map(drop),
                fast_open(filer_port, libc::MSG_FASTOPEN | libc::MSG_NOSIGNAL).map(drop),
            ];
            // Neither bound to a port named nor listening on one the kernel picks.
            let bound = [
                TcpListener::bind("127.0.0.1:0")
                    .map(drop)
                    .map_err(|e| e.raw_os_error().unwrap_or_default()),
                // SAFETY: a socket made and closed here.
                unsafe {
                    let fd = libc::socket(libc::AF_INET, libc::SOCK_STREAM, 0);
                    let listened = called(libc::listen(fd, 1).into()).map(drop);
                    libc::close(fd);
                    listened
                },
            ];
            // SAFETY: signals 0 (none is sent, only the right to is checked).
            let (signalled, own) = unsafe {
                (
                    called(libc::kill(outsider_pid, 0).into()),
                    called(libc::kill(libc::getpid(), 0).into()),
                )
            };
            (restricted, connects, sent, bound, signalled, own)
        })
        .join()
        .unwrap();
        outsider.kill().unwrap();
        outsider.wait().unwrap();
        assert!(
            restricted.files && restricted.tcp,
            "Landlock's network rules are enforced here"
        );
        assert_eq!(connects[0], Ok(()), "the store's port is open");
        for (refused, what) in connects[1..].iter().zip([
            "the filer",
            "Redis",
            "Redis on ::1",
            "PostgreSQL",
            "metadata",
            "the internet",
        ]) {
            assert_eq!(*refused, Err(ErrorKind::PermissionDenied), "{what}");
        }
        assert_eq!(
            sent,
            [Ok(()), Err(libc::EPERM), Err(libc::EPERM)],
            "the store is written to; TCP Fast Open reaches no other port"
        );
        filer.set_nonblocking(true).unwrap();
        assert_eq!(
            filer.accept().map_err(|e| e.kind()).err(),
            Some(ErrorKind::WouldBlock),
            "the filer was reached"
        );
        assert_eq!(bound, [Err(libc::EACCES), Err(libc::EPERM)], "no port is bound");
        assert_eq!(own, Ok(0), "its own process is signalled");
        // Scopes came with Linux 6.12: before, any process of the user's is.
        if restricted.scoped {
            assert_eq!(signalled, Err(libc::EPERM), "no process outside is signalled");
        }
    }

    #[test]
    fn a_restricted_thread_writes_and_reads_only_in_its_work_folder() {
        let scratch = Scratch::new("files");
        let (work, other, models) = (
            scratch.0.join("work"),
            scratch.0.join("other"),
            scratch.0.join("models"),
        );
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
                    let restricted = super::restrict(&work, &[font, &models], &[]).unwrap();
                    assert!(restricted.files, "Landlock is enforced here");
                    (
                        std::fs::write(work.join("result"), b"made").is_ok(),
                        std::fs::read("/etc/hosts").is_ok() && std::fs::read(font).is_ok(),
                        std::fs::write(other.join("result"), b"tampered").is_ok(),
                        std::fs::read(other.join("input")).is_ok(),
                        std::fs::read(models.join("model")).is_ok(),
                        std::fs::write(models.join("model"), b"poisoned").is_ok(),
                    )
                }
            })
            .join()
            .unwrap();
        assert!(
            written && read_system,
            "the work folder and the system stay usable"
        );
        assert!(!wrote_outside && !read_outside, "another folder is closed");
        assert!(read_model && !wrote_model, "the models are read-only");
    }

    #[test]
    fn a_restricted_thread_reads_the_named_settings_of_etc_and_nothing_of_run() {
        let scratch = Scratch::new("etc");
        let work = scratch.0.clone();
        let (opened, closed) = std::thread::spawn(move || {
            super::narrow(&super::filter()).unwrap();
            super::restrict(&work, &[], &[]).unwrap();
            let opened = [
                std::fs::read_dir("/etc/ssl/certs").map(drop),
                std::fs::read("/etc/hosts").map(drop),
                std::fs::read("/etc/resolv.conf").map(drop),
                std::fs::read("/etc/nsswitch.conf").map(drop),
                std::fs::read("/etc/ld.so.cache").map(drop),
            ];
            let closed = [
                std::fs::read("/etc/shadow").map(drop),
                std::fs::read("/etc/passwd").map(drop),
                std::fs::read_dir("/etc").map(drop),
                std::fs::read_dir("/etc/ssl/private").map(drop),
                std::fs::read_dir("/run").map(drop),
                std::fs::read_dir("/run/postgresql").map(drop),
            ];
            (opened, closed)
        })
        .join()
        .unwrap();
        for (result, path) in opened.iter().zip([
            "/etc/ssl/certs",
            "/etc/hosts",
            "/etc/resolv.conf",
            "/etc/nsswitch.conf",
            "/etc/ld.so.cache",
        ]) {
            assert!(result.is_ok(), "{path}: {result:?}");
        }
        // Refused by Landlock, not missing: those of them that exist here (all but the
        // private keys' folder and PostgreSQL's do everywhere).
        let paths = [
            "/etc/shadow",
            "/etc/passwd",
            "/etc",
            "/etc/ssl/private",
            "/run",
            "/run/postgresql",
        ];
        for (result, path) in closed.iter().zip(paths) {
            if !Path::new(path).exists() {
                continue;
            }
            assert_eq!(
                result.as_ref().map_err(std::io::Error::kind),
                Err(ErrorKind::PermissionDenied),
                "{path}"
            );
        }
    }
}
