//! How a job process is narrowed, between fork and exec, with what Linux lets an unprivileged
//! process do to itself: no new privileges, no capabilities, a seccomp filter. Its empty
//! environment and its limits are set where it is started ([`crate::farm`]).

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

#[cfg(test)]
mod tests {
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
}
