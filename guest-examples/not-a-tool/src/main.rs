//! A WASI command, not a toolhost plugin.

fn main() {
    println!("I am a command, not a tool.");
}
