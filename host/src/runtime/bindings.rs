//! Host-side bindings of the WIT world `recon:controller/controller`.

wasmtime::component::bindgen!({
    path: "../wit",
    world: "controller",
    imports: {
        "recon:controller/client": async,
    },
    exports: { default: async },
});
