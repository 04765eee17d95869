//! Link settings of the `toolhost` binary.
//!
//! On Linux with glibc 2.36 or later, the binary's relative relocations are
//! packed (`DT_RELR`, `-z pack-relative-relocs`). A position-independent
//! executable of this size carries about 80,000 of them; as classic `RELA`
//! entries they take 2 MiB, which the loader reads in full at every start and
//! which then stay resident. Packed, they take about 25 KiB, and the code stays
//! position-independent (the binary keeps its address randomisation). Both
//! linkers Rust uses here (LLD, and GNU ld 2.38 or later) support it.
//!
//! A packed binary needs glibc 2.36 where it runs, so relocations are packed
//! only when the build machine has it (the binary then runs where it was built)
//! and the build is not a cross build; `TOOLHOST_PACK_RELOCATIONS=0` turns it
//! off, for a binary meant for older systems. docs/benchmarks.md, "Idle memory",
//! has the measurement.

use std::process::Command;

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-env-changed=TOOLHOST_PACK_RELOCATIONS");
    let var = |name: &str| std::env::var(name).unwrap_or_default();
    let wanted = var("TOOLHOST_PACK_RELOCATIONS") != "0";
    let linux_gnu = var("CARGO_CFG_TARGET_OS") == "linux" && var("CARGO_CFG_TARGET_ENV") == "gnu";
    let native = var("HOST") == var("TARGET");
    if wanted && linux_gnu && native && glibc_at_least(2, 36) {
        println!("cargo:rustc-link-arg-bins=-Wl,-z,pack-relative-relocs");
    }
}

/// Whether the build machine's glibc (`getconf GNU_LIBC_VERSION`, e.g.
/// `glibc 2.36`) is at least `major.minor`; false when it cannot be told.
fn glibc_at_least(major: u32, minor: u32) -> bool {
    let Ok(output) = Command::new("getconf").arg("GNU_LIBC_VERSION").output() else {
        return false;
    };
    let text = String::from_utf8_lossy(&output.stdout);
    let mut parts = text
        .trim()
        .trim_start_matches("glibc ")
        .split('.')
        .map(|part| part.parse::<u32>().ok());
    match (parts.next().flatten(), parts.next().flatten()) {
        (Some(have_major), Some(have_minor)) => (have_major, have_minor) >= (major, minor),
        _ => false,
    }
}
