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
//!
//! The functions a serving host runs are laid out together, hottest first, in
//! the order of `link-order.txt` (`make link-order` writes it from a profile of
//! the training run of `make pgo`): a call then touches fewer pages and cache
//! lines of the binary's 32 MB of code, a few per cent more sequential calls/s
//! side by side (docs/benchmarks.md, "Link order"). The order is LLD's
//! `--symbol-ordering-file`, so it is given only where rustc links with its own
//! LLD, as it does by default for `x86_64-unknown-linux-gnu` since Rust 1.90,
//! with no other linker chosen (Cargo's `linker` setting, or linker flags in
//! `RUSTFLAGS`); `TOOLHOST_LINK_ORDER=0` turns it off. A name the binary does not
//! have is skipped: a stale file costs speed, never a build.

use std::path::Path;
use std::process::Command;

/// The file of the link order, beside this one.
const LINK_ORDER: &str = "link-order.txt";

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-changed={LINK_ORDER}");
    println!("cargo:rerun-if-env-changed=TOOLHOST_PACK_RELOCATIONS");
    println!("cargo:rerun-if-env-changed=TOOLHOST_LINK_ORDER");
    println!("cargo:rerun-if-env-changed=RUSTC_LINKER");
    let var = |name: &str| std::env::var(name).unwrap_or_default();
    let wanted = var("TOOLHOST_PACK_RELOCATIONS") != "0";
    let linux_gnu = var("CARGO_CFG_TARGET_OS") == "linux" && var("CARGO_CFG_TARGET_ENV") == "gnu";
    let native = var("HOST") == var("TARGET");
    // `getconf GNU_LIBC_VERSION` prints e.g. `glibc 2.36`.
    if wanted && linux_gnu && native && reports_at_least("getconf", "GNU_LIBC_VERSION", (2, 36)) {
        println!("cargo:rustc-link-arg-bins=-Wl,-z,pack-relative-relocs");
    }
    let order = Path::new(&var("CARGO_MANIFEST_DIR")).join(LINK_ORDER);
    if var("TOOLHOST_LINK_ORDER") != "0" && links_with_rust_lld(&var) && order.is_file() {
        println!(
            "cargo:rustc-link-arg-bins=-Wl,--symbol-ordering-file={}",
            order.display()
        );
        println!("cargo:rustc-link-arg-bins=-Wl,--no-warn-symbol-ordering");
    }
}

/// Whether the binary is linked by rustc's own LLD: the default linker of
/// `x86_64-unknown-linux-gnu` since Rust 1.90, unless another is chosen, by
/// Cargo's `linker` setting (which Cargo passes on as `RUSTC_LINKER`) or by
/// linker flags among the compiler's.
fn links_with_rust_lld(var: &dyn Fn(&str) -> String) -> bool {
    let linker_chosen = !var("RUSTC_LINKER").is_empty()
        || var("CARGO_ENCODED_RUSTFLAGS")
            .split('\x1f')
            .any(|flag| flag.contains("linker") || flag.contains("link-self-contained"));
    var("TARGET") == "x86_64-unknown-linux-gnu"
        && !linker_chosen
        // `rustc 1.95.0 (59807616e 2026-04-14)`
        && reports_at_least(&var("RUSTC"), "--version", (1, 90))
}

/// Whether `program arg` prints a name and then a version (`glibc 2.36`,
/// `rustc 1.95.0 (...)`) of at least `major.minor`; false when it cannot be told.
fn reports_at_least(program: &str, arg: &str, (major, minor): (u32, u32)) -> bool {
    let Ok(output) = Command::new(program).arg(arg).output() else {
        return false;
    };
    let text = String::from_utf8_lossy(&output.stdout);
    let version = text.split_whitespace().nth(1).unwrap_or_default();
    let mut parts = version.split('.').map(|part| part.parse::<u32>().ok());
    match (parts.next().flatten(), parts.next().flatten()) {
        (Some(have_major), Some(have_minor)) => (have_major, have_minor) >= (major, minor),
        _ => false,
    }
}
