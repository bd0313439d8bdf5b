/**
 * A tiny BERT-shaped ONNX model the tests write themselves (no weights can be downloaded here):
 * input_ids → Gather(an embedding table) → last_hidden_state, with its own WordPiece `tokenizer.json`,
 * so the built-in model's real loading and inference path (transformers.js on onnxruntime-web) runs.
 * A few KB; its vectors mean nothing beyond "same words, same vectors".
 */
import { mkdirSync, writeFileSync } from "node:fs";
import * as path from "node:path";
import { mulberry32 } from "../../src/core/random";

const enc = new TextEncoder();

function varint(n: number): number[] {
  const out: number[] = [];
  let v = BigInt(n);
  do {
    let b = Number(v & 0x7fn);
    v >>= 7n;
    if (v) b |= 0x80;
    out.push(b);
  } while (v);
  return out;
}
const field = (no: number, wire: number, payload: number[]) => [...varint((no << 3) | wire), ...payload];
const vint = (no: number, n: number) => field(no, 0, varint(n));
const bytes = (no: number, b: number[]) => field(no, 2, [...varint(b.length), ...b]);
const str = (no: number, s: string) => bytes(no, [...enc.encode(s)]);
const msg = (no: number, parts: number[][]) => bytes(no, parts.flat());
const dimParam = (s: string) => msg(1, [str(2, s)]);
const dimValue = (n: number) => msg(1, [vint(1, n)]);
/** ValueInfoProto: name, then TypeProto.tensor_type { elem_type, shape }. */
const valueInfo = (no: number, name: string, elem: number, dims: number[][]) => msg(no, [str(1, name), msg(2, [msg(1, [vint(1, elem), msg(2, dims)])])]);

export const TINY_VOCAB = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "the", "a", "deploy", "pipeline", "release", "garden", "tomato", "basil", "pesto", "##s", "script", "server", "water"];

/** The ONNX ModelProto bytes (IR 8, opset 13). */
export function tinyBertOnnx(vocab: number, dim: number, seed = 1): Uint8Array {
  const rnd = mulberry32(seed);
  const w = new Float32Array(vocab * dim).map(() => rnd() * 2 - 1);
  const tensor = msg(5, [vint(1, vocab), vint(1, dim), vint(2, 1), str(8, "embeddings"), bytes(9, [...new Uint8Array(w.buffer)])]);
  const node = msg(1, [str(1, "embeddings"), str(1, "input_ids"), str(2, "last_hidden_state"), str(3, "gather"), str(4, "Gather")]);
  const graph = msg(7, [
    node,
    str(2, "tiny-bert"),
    tensor,
    valueInfo(11, "input_ids", 7, [dimParam("batch"), dimParam("sequence")]),
    valueInfo(11, "attention_mask", 7, [dimParam("batch"), dimParam("sequence")]),
    valueInfo(12, "last_hidden_state", 1, [dimParam("batch"), dimParam("sequence"), dimValue(dim)]),
  ]);
  return new Uint8Array([...vint(1, 8), ...str(2, "vault-mcp-tests"), ...graph, ...msg(8, [str(1, ""), vint(2, 13)])]);
}

/** Writes the model folder (config.json, tokenizer.json, tokenizer_config.json, onnx/model.onnx); returns it. */
export function writeTinyBert(dir: string, dim = 8): string {
  mkdirSync(path.join(dir, "onnx"), { recursive: true });
  writeFileSync(path.join(dir, "onnx", "model.onnx"), tinyBertOnnx(TINY_VOCAB.length, dim));
  const vocab = Object.fromEntries(TINY_VOCAB.map((w, i) => [w, i]));
  writeFileSync(
    path.join(dir, "tokenizer.json"),
    JSON.stringify({
      version: "1.0",
      truncation: null,
      padding: null,
      added_tokens: TINY_VOCAB.slice(0, 5).map((content, id) => ({ id, content, single_word: false, lstrip: false, rstrip: false, normalized: false, special: true })),
      normalizer: { type: "BertNormalizer", clean_text: true, handle_chinese_chars: true, strip_accents: null, lowercase: true },
      pre_tokenizer: { type: "BertPreTokenizer" },
      post_processor: {
        type: "TemplateProcessing",
        single: [{ SpecialToken: { id: "[CLS]", type_id: 0 } }, { Sequence: { id: "A", type_id: 0 } }, { SpecialToken: { id: "[SEP]", type_id: 0 } }],
        pair: [],
        special_tokens: { "[CLS]": { id: "[CLS]", ids: [2], tokens: ["[CLS]"] }, "[SEP]": { id: "[SEP]", ids: [3], tokens: ["[SEP]"] } },
      },
      decoder: { type: "WordPiece", prefix: "##", cleanup: true },
      model: { type: "WordPiece", unk_token: "[UNK]", continuing_subword_prefix: "##", max_input_chars_per_word: 100, vocab },
    }),
  );
  writeFileSync(
    path.join(dir, "tokenizer_config.json"),
    JSON.stringify({ tokenizer_class: "BertTokenizer", do_lower_case: true, model_max_length: 512, cls_token: "[CLS]", sep_token: "[SEP]", pad_token: "[PAD]", unk_token: "[UNK]", mask_token: "[MASK]" }),
  );
  writeFileSync(path.join(dir, "config.json"), JSON.stringify({ model_type: "bert", hidden_size: dim, vocab_size: TINY_VOCAB.length, architectures: ["BertModel"] }));
  return dir;
}
