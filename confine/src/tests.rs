//! The walls tried from inside: threads narrowed and restricted as a job process is, making
//! the calls an exploit would.

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
    let (written, read_system, wrote_outside, read_outside, read_model, wrote_model) = std::thread::spawn({
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

/// A command made by [`crate::command`] runs with nothing of its starter's environment but
/// `PATH`, under its limits, never dumping core.
#[test]
fn a_confined_command_starts_with_an_empty_environment_and_its_limits() {
    let limits = crate::Limits {
        memory: 3 << 30,
        file_size: 5 << 20,
        cpu_seconds: Some(7),
    };
    // The test runs under cargo: HOME and CARGO_* are set here, and must not reach it.
    let out = crate::command("/bin/sh", limits)
        .args([
            "-c",
            "env; echo limits: v=$(ulimit -v) f=$(ulimit -f) t=$(ulimit -t) c=$(ulimit -c)",
        ])
        .output()
        .expect("a confined shell runs");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let out = String::from_utf8(out.stdout).unwrap();
    for line in out.lines().filter(|line| !line.starts_with("limits: ")) {
        let name = line.split_once('=').map_or(line, |(name, _)| name);
        // PWD, SHLVL and _ are the shell's own.
        assert!(
            ["PATH", "DRIVE_LOG", "PWD", "SHLVL", "_"].contains(&name),
            "{name} reached the confined process:\n{out}"
        );
    }
    // ulimit -v and -f count KiB (and 512-byte blocks in some shells: dash counts KiB too).
    assert!(
        out.contains(&format!(
            "v={} f={} t=7 c=0",
            (3u64 << 30) / 1024,
            (5u64 << 20) / 1024
        )) || out.contains(&format!(
            "v={} f={} t=7 c=0",
            (3u64 << 30) / 1024,
            (5u64 << 20) / 512
        )),
        "not its limits:\n{out}"
    );
}
