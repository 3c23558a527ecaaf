//! The numbers of the local models (Whisper in `drive-speech`, the sentence embeddings in
//! `drive-embed`), written once: exp, tanh, erf, softmax and GELU as branch-free loops the
//! compiler vectorizes ([`math`]), and the f32 matrix product with weights packed once
//! ([`Panels`]), by AVX2 and FMA where the CPU has them, chosen at run time (the workspace
//! builds for any x86-64).

pub mod math;
mod matmul;

pub use matmul::Panels;
