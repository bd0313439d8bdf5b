// Jest stand-in for esbuild's `--loader:.html=text`: the file's text as the module's default export.
module.exports = {
  process(source) {
    return { code: `module.exports = ${JSON.stringify(source)}; module.exports.default = module.exports;` };
  },
};
