declare module "*.wasm" {
  const bytes: Uint8Array;
  export default bytes;
}
