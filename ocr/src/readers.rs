//! Several readers, one thread each; and keeping Tesseract to the thread it is called on.

use std::num::NonZeroUsize;
use std::path::Path;
use std::sync::{Mutex, OnceLock};

use crate::{OcrError, Page, Reader, Text};

/// Readers for reading pages in parallel: at most as many threads as readers.
#[derive(Debug)]
pub struct Readers {
    readers: Vec<Reader>,
}

impl Readers {
    /// `threads` readers, each with the model loaded (see [`Reader::new`]).
    pub fn new(tessdata: Option<&Path>, threads: NonZeroUsize) -> Result<Readers, OcrError> {
        let readers = (0..threads.get())
            .map(|_| Reader::new(tessdata))
            .collect::<Result<_, _>>()?;
        Ok(Readers { readers })
    }

    /// Reads every page, on as many threads as there are readers; the texts come back in the
    /// pages' order. Pages are taken from the iterator as threads come free, so no more than one
    /// page per thread is held at a time.
    pub fn read_pages<P: Page + Send>(
        &mut self,
        pages: impl Iterator<Item = P> + Send,
    ) -> Vec<Result<Text, OcrError>> {
        self.map(pages, |reader, page| reader.read(&page))
    }

    /// `work` on every item with a reader of its own, as many at a time as there are readers; the
    /// results in the items' order. For work around the reading: rendering a PDF page and reading
    /// it, on the same thread.
    pub fn map<T: Send, R: Send>(
        &mut self,
        items: impl Iterator<Item = T> + Send,
        work: impl Fn(&mut Reader, T) -> R + Sync,
    ) -> Vec<R> {
        let items = Mutex::new(items.enumerate());
        let work = &work;
        let items = &items;
        let mut done: Vec<(usize, R)> = std::thread::scope(|scope| {
            let threads: Vec<_> = self
                .readers
                .iter_mut()
                .map(|reader| {
                    scope.spawn(move || {
                        let mut done = Vec::new();
                        // The lock is only held to take the next item; a panic elsewhere is
                        // passed on by the scope, so a poisoned lock still holds a sound iterator.
                        let next = || {
                            items
                                .lock()
                                .unwrap_or_else(|poisoned| poisoned.into_inner())
                                .next()
                        };
                        while let Some((n, item)) = next() {
                            done.push((n, work(reader, item)));
                        }
                        done
                    })
                })
                .collect();
            threads
                .into_iter()
                .flat_map(|thread| {
                    thread
                        .join()
                        .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
                })
                .collect()
        });
        done.sort_unstable_by_key(|(n, _)| *n);
        done.into_iter().map(|(_, result)| result).collect()
    }
}

/// Debian's Tesseract is built with OpenMP, whose parallel sections would start threads of
/// their own (3 more per reading thread, per the `num_threads` Tesseract asks for) on top of ours,
/// and on two cores these spin against each other: a page took 4.7 s instead of 1.3 s. The usual
/// cure, `OMP_THREAD_LIMIT=1`, is read from the environment when libgomp is loaded, before
/// `main`, so setting it from here is too late (and a job process starts with an empty
/// environment). Allowing no active parallel level does the same from inside: every parallel
/// section then runs on the calling thread alone. libgomp keeps that setting per thread, so it
/// is made on the reading thread before every read. Looked up at run time, so a Tesseract built
/// without OpenMP needs nothing.
pub(crate) fn limit_openmp() {
    static SET_MAX_ACTIVE_LEVELS: OnceLock<Option<extern "C" fn(libc::c_int)>> = OnceLock::new();
    let set = SET_MAX_ACTIVE_LEVELS.get_or_init(|| {
        // SAFETY: dlsym with a NUL-terminated name; the symbol, when present, is libgomp's
        // `void omp_set_max_active_levels(int)`.
        unsafe {
            let symbol = libc::dlsym(libc::RTLD_DEFAULT, c"omp_set_max_active_levels".as_ptr());
            (!symbol.is_null())
                .then(|| std::mem::transmute::<*mut libc::c_void, extern "C" fn(libc::c_int)>(symbol))
        }
    });
    if let Some(set_max_active_levels) = set {
        set_max_active_levels(0);
    }
}
