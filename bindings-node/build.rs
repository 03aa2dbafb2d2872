//! Emits the linker arguments a Node-API addon needs.

fn main() {
    napi_build::setup();
}
