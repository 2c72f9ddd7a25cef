//! Link settings for the hook executable, which every agent starts on every event: on Linux it
//! is linked as a position-dependent executable, so the loader has no relocations to apply to it
//! and it starts measurably faster (see the hook benchmark). Its code is position-independent
//! as always; only the final link differs.
#![allow(
    clippy::disallowed_methods,
    reason = "a build script reads Cargo's environment"
)]

fn main() {
    if std::env::var("CARGO_CFG_TARGET_OS").as_deref() == Ok("linux") {
        println!("cargo:rustc-link-arg-bin=lidguard-hook=-no-pie");
    }
}
