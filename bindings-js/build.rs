//! Emits the linker arguments a Node-API addon needs (native builds only).

fn main() {
    if std::env::var("CARGO_CFG_TARGET_ARCH").as_deref() != Ok("wasm32") {
        #[cfg(not(target_arch = "wasm32"))]
        napi_build::setup();
    }
}
