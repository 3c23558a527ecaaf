//! Makes a running job process make system calls of a test's choosing, as its own. A parser
//! cannot be made to run code of the test's by honest input, so the test does what an exploit
//! would end with: it attaches to the process with ptrace (the test is its ancestor, and a job
//! process is dumpable), stops its main thread, points it at a `syscall` instruction of the
//! process's own libc with the test's number and arguments, steps it over that one
//! instruction, and gives it its registers back. What the call answers is what the process
//! is answered itself: its seccomp filter and its Landlock domain judge the call, not the
//! test's. x86_64 only (its registers and its `syscall` instruction).

use std::fs::File;
use std::io;
use std::os::unix::fs::FileExt;

/// An argument ptrace does not read (a null pointer: variadic, a plain 0 would be an int).
const NULL: *mut libc::c_void = std::ptr::null_mut();

/// The bytes of x86_64's `syscall`.
const SYSCALL: [u8; 2] = [0x0f, 0x05];

/// A job process attached and stopped, until dropped.
pub struct Probe {
    pid: libc::pid_t,
    /// Its registers when it was stopped, given back when it is let go.
    saved: Option<libc::user_regs_struct>,
    /// Where a `syscall` instruction is in its memory.
    syscall_at: u64,
    memory: File,
    /// A page of its own mapped for the calls' arguments (paths, addresses).
    page: Option<u64>,
}

impl Probe {
    /// Attaches to `pid`'s main thread, the one that restricted itself, and stops it.
    pub fn attach(pid: u32) -> io::Result<Probe> {
        let pid = pid as libc::pid_t;
        // SAFETY: ptrace requests on another process, their unused arguments null; the
        // registers struct is written by the kernel.
        unsafe {
            check(libc::ptrace(libc::PTRACE_SEIZE, pid, NULL, NULL))?;
            // From here on, dropped, it is let go.
            let mut probe = Probe {
                pid,
                saved: None,
                syscall_at: 0,
                memory: File::options()
                    .read(true)
                    .write(true)
                    .open(format!("/proc/{pid}/mem"))?,
                page: None,
            };
            check(libc::ptrace(libc::PTRACE_INTERRUPT, pid, NULL, NULL))?;
            probe.wait_stop()?;
            let mut saved: libc::user_regs_struct = std::mem::zeroed();
            check(libc::ptrace(libc::PTRACE_GETREGS, pid, NULL, &mut saved))?;
            probe.saved = Some(saved);
            probe.syscall_at = probe.find_syscall()?;
            let page = probe.call(
                libc::SYS_mmap,
                &[
                    0,
                    4096,
                    (libc::PROT_READ | libc::PROT_WRITE) as u64,
                    (libc::MAP_PRIVATE | libc::MAP_ANONYMOUS) as u64,
                    u64::MAX,
                    0,
                ],
            );
            if page < 0 {
                return Err(io::Error::from_raw_os_error(-page as i32));
            }
            probe.page = Some(page as u64);
            Ok(probe)
        }
    }

    /// Makes the process call `number` with `arguments`; answers what it was answered (a
    /// negative error number when refused).
    pub fn call(&mut self, number: libc::c_long, arguments: &[u64]) -> i64 {
        let mut registers = self.saved.expect("its registers are read");
        registers.rip = self.syscall_at;
        registers.rax = number as u64;
        // Not in a system call: what it was stopped in is not restarted before this one.
        registers.orig_rax = u64::MAX;
        for (register, &value) in [
            &mut registers.rdi,
            &mut registers.rsi,
            &mut registers.rdx,
            &mut registers.r10,
            &mut registers.r8,
            &mut registers.r9,
        ]
        .into_iter()
        .zip(arguments)
        {
            *register = value;
        }
        // SAFETY: as in `attach`.
        unsafe {
            check(libc::ptrace(libc::PTRACE_SETREGS, self.pid, NULL, &registers)).expect("set its registers");
            check(libc::ptrace(libc::PTRACE_SINGLESTEP, self.pid, NULL, NULL)).expect("step it");
            self.wait_stop().expect("it stops after the call");
            check(libc::ptrace(libc::PTRACE_GETREGS, self.pid, NULL, &mut registers))
                .expect("read its answer");
        }
        registers.rax as i64
    }

    /// Writes `bytes` to the process's page; answers where they are there.
    pub fn put(&mut self, bytes: &[u8]) -> u64 {
        let page = self.page.expect("a page is mapped");
        self.memory.write_all_at(bytes, page).expect("write its memory");
        page
    }

    /// `socket(domain, kind, protocol)`: a descriptor, or minus the error number.
    pub fn socket(&mut self, domain: i32, kind: i32, protocol: i32) -> i64 {
        self.call(libc::SYS_socket, &[domain as u64, kind as u64, protocol as u64])
    }

    /// Connects a new TCP socket to 127.0.0.1:`port` (or `address`); answers 0 or minus the
    /// error number, the socket closed again.
    pub fn connect(&mut self, address: [u8; 4], port: u16) -> i64 {
        let fd = self.socket(libc::AF_INET, libc::SOCK_STREAM | libc::SOCK_CLOEXEC, 0);
        assert!(fd >= 0, "a TCP socket is made: {fd}");
        let at = self.put(&sockaddr(address, port));
        let connected = self.call(libc::SYS_connect, &[fd as u64, at, 16]);
        self.call(libc::SYS_close, &[fd as u64]);
        connected
    }

    /// Sends a Redis PING to `address`:`port` with TCP Fast Open (`sendto` with
    /// `MSG_FASTOPEN`, a connection made without `connect`) through a new TCP socket; answers
    /// the bytes sent or minus the error number, the socket closed again.
    pub fn fast_open(&mut self, address: [u8; 4], port: u16) -> i64 {
        let fd = self.socket(libc::AF_INET, libc::SOCK_STREAM | libc::SOCK_CLOEXEC, 0);
        assert!(fd >= 0, "a TCP socket is made: {fd}");
        let mut message = sockaddr(address, port).to_vec();
        message.extend_from_slice(b"PING\r\n");
        let at = self.put(&message);
        let sent = self.call(
            libc::SYS_sendto,
            &[fd as u64, at + 16, 6, libc::MSG_FASTOPEN as u64, at, 16],
        );
        self.call(libc::SYS_close, &[fd as u64]);
        sent
    }

    /// Opens `path` for reading; answers 0 or minus the error number, the file closed again.
    pub fn open(&mut self, path: &str) -> i64 {
        let mut name = path.as_bytes().to_vec();
        name.push(0);
        let at = self.put(&name);
        let fd = self.call(
            libc::SYS_openat,
            &[
                libc::AT_FDCWD as u64,
                at,
                (libc::O_RDONLY | libc::O_CLOEXEC) as u64,
            ],
        );
        if fd < 0 {
            return fd;
        }
        self.call(libc::SYS_close, &[fd as u64]);
        0
    }

    /// Waits for the attached thread to stop.
    fn wait_stop(&self) -> io::Result<()> {
        let mut status = 0;
        // SAFETY: waits for a tracee of this thread's.
        check(unsafe { libc::waitpid(self.pid, &mut status, libc::__WALL) })?;
        if !libc::WIFSTOPPED(status) {
            return Err(io::Error::other(format!(
                "the process did not stop: status {status:#x}"
            )));
        }
        Ok(())
    }

    /// A `syscall` instruction in the process's libc (any will do: the process is stepped
    /// over that one instruction only).
    fn find_syscall(&self) -> io::Result<u64> {
        let maps = std::fs::read_to_string(format!("/proc/{}/maps", self.pid))?;
        for line in maps
            .lines()
            .filter(|line| line.contains("r-xp") && line.contains("libc.so"))
        {
            let range = line.split_whitespace().next().unwrap_or_default();
            let Some((start, end)) = range.split_once('-') else {
                continue;
            };
            let (start, end) = (
                u64::from_str_radix(start, 16).map_err(io::Error::other)?,
                u64::from_str_radix(end, 16).map_err(io::Error::other)?,
            );
            let mut code = vec![0u8; (end - start) as usize];
            self.memory.read_exact_at(&mut code, start)?;
            if let Some(offset) = code.windows(2).position(|pair| pair == SYSCALL) {
                return Ok(start + offset as u64);
            }
        }
        Err(io::Error::other("no syscall instruction in the process's libc"))
    }
}

impl Drop for Probe {
    /// Unmaps the page and lets the process go on as it was.
    fn drop(&mut self) {
        if let Some(page) = self.page.take() {
            self.call(libc::SYS_munmap, &[page, 4096]);
        }
        // SAFETY: as in `attach`; the saved registers are the process's own.
        unsafe {
            if let Some(saved) = &self.saved {
                libc::ptrace(libc::PTRACE_SETREGS, self.pid, NULL, saved);
            }
            libc::ptrace(libc::PTRACE_DETACH, self.pid, NULL, NULL);
        }
    }
}

/// A `sockaddr_in` for `address`:`port`.
fn sockaddr(address: [u8; 4], port: u16) -> [u8; 16] {
    let mut sockaddr = [0u8; 16];
    sockaddr[..2].copy_from_slice(&(libc::AF_INET as u16).to_ne_bytes());
    sockaddr[2..4].copy_from_slice(&port.to_be_bytes());
    sockaddr[4..8].copy_from_slice(&address);
    sockaddr
}

fn check(answer: impl Into<i64>) -> io::Result<()> {
    if answer.into() < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}
