//! Link settings for the hook executable, which every agent starts on every event: on Linux with
//! glibc it is linked as a position-dependent executable, so the loader has no relocations to
//! apply to it and it starts measurably faster (see the hook benchmark). Its code is
//! position-independent as always; only the final link differs. The static musl build keeps its
//! target's default (static-pie): `-no-pie` with musl's static-pie start files crashes at start.
#![allow(
    clippy::disallowed_methods,
    reason = "a build script reads Cargo's environment"
)]

fn main() {
    let var = |name: &str| std::env::var(name).unwrap_or_default();
    if var("CARGO_CFG_TARGET_OS") == "linux" && var("CARGO_CFG_TARGET_ENV") == "gnu" {
        println!("cargo:rustc-link-arg-bin=lidguard-hook=-no-pie");
    }
}
