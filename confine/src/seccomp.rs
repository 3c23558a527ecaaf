//! The seccomp filter and the rest of what a process gives up between fork and exec ([`narrow`]).

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
