/**
 * The English (Porter2 / Snowball) stemmer, compact. Input: a lower-case ASCII word.
 * https://snowballstem.org/algorithms/english/stemmer.html
 */

// A Map, not an object literal: a word is looked up here, and "constructor" or "toString" must not
// find Object.prototype's functions (a function stored as a term broke every save of the index).
const EXCEPTIONS1 = new Map<string, string>([
  ["skis", "ski"],
  ["skies", "sky"],
  ["dying", "die"],
  ["lying", "lie"],
  ["tying", "tie"],
  ["idly", "idl"],
  ["gently", "gentl"],
  ["ugly", "ugli"],
  ["early", "earli"],
  ["only", "onli"],
  ["singly", "singl"],
  ["sky", "sky"],
  ["news", "news"],
  ["howe", "howe"],
  ["atlas", "atlas"],
  ["cosmos", "cosmos"],
  ["bias", "bias"],
  ["andes", "andes"],
]);
const EXCEPTIONS2 = new Set(["inning", "outing", "canning", "herring", "earring", "proceed", "exceed", "succeed"]);

const STEP2: [string, string][] = [
  ["ization", "ize"],
  ["ational", "ate"],
  ["fulness", "ful"],
  ["ousness", "ous"],
  ["iveness", "ive"],
  ["tional", "tion"],
  ["biliti", "ble"],
  ["lessli", "less"],
  ["entli", "ent"],
  ["ation", "ate"],
  ["alism", "al"],
  ["aliti", "al"],
  ["ousli", "ous"],
  ["iviti", "ive"],
  ["fulli", "ful"],
  ["enci", "ence"],
  ["anci", "ance"],
  ["abli", "able"],
  ["izer", "ize"],
  ["ator", "ate"],
  ["alli", "al"],
  ["bli", "ble"],
  ["ogi", "og"],
  ["li", ""],
];
const STEP3: [string, string][] = [
  ["ational", "ate"],
  ["tional", "tion"],
  ["alize", "al"],
  ["icate", "ic"],
  ["iciti", "ic"],
  ["ative", ""],
  ["ical", "ic"],
  ["ness", ""],
  ["ful", ""],
];
const STEP4 = ["ement", "ance", "ence", "able", "ible", "ment", "ant", "ent", "ism", "ate", "iti", "ous", "ive", "ize", "ion", "al", "er", "ic"];

function isVowel(c: string): boolean {
  return c === "a" || c === "e" || c === "i" || c === "o" || c === "u" || c === "y";
}

function regionAfter(w: string, from: number): number {
  for (let i = from + 1; i < w.length; i++) if (!isVowel(w[i]) && isVowel(w[i - 1])) return i + 1;
  return w.length;
}

function endsShortSyllable(w: string): boolean {
  const n = w.length;
  if (n === 2) return isVowel(w[0]) && !isVowel(w[1]);
  if (n >= 3) {
    const c = w[n - 1];
    return !isVowel(w[n - 3]) && isVowel(w[n - 2]) && !isVowel(c) && c !== "w" && c !== "x" && c !== "Y";
  }
  return false;
}

function containsVowel(s: string): boolean {
  for (let i = 0; i < s.length; i++) if (isVowel(s[i])) return true;
  return false;
}

export function stemEnglish(input: string): string {
  if (input.length <= 2) return input;
  let w = input;
  if (w.includes("'")) {
    w = w.replace(/^'+/, "");
    if (w.endsWith("'s'")) w = w.slice(0, -3);
    else if (w.endsWith("'s")) w = w.slice(0, -2);
    else if (w.endsWith("'")) w = w.slice(0, -1);
    if (w.length <= 2) return w;
  }
  const ex = EXCEPTIONS1.get(w);
  if (ex) return ex;
  // Mark consonant-y as Y.
  if (w[0] === "y") w = "Y" + w.slice(1);
  for (let i = 1; i < w.length; i++) if (w[i] === "y" && isVowel(w[i - 1])) w = w.slice(0, i) + "Y" + w.slice(i + 1);

  let r1: number;
  if (w.startsWith("gener") || w.startsWith("arsen")) r1 = 5;
  else if (w.startsWith("commun")) r1 = 6;
  else r1 = regionAfter(w, 0);
  const r2 = regionAfter(w, r1);

  // Step 1a
  if (w.endsWith("sses")) w = w.slice(0, -2);
  else if (w.endsWith("ied") || w.endsWith("ies")) w = w.length > 4 ? w.slice(0, -2) : w.slice(0, -1);
  else if (w.endsWith("us") || w.endsWith("ss")) {
    /* unchanged */
  } else if (w.endsWith("s")) {
    if (containsVowel(w.slice(0, -2))) w = w.slice(0, -1);
  }
  if (EXCEPTIONS2.has(w)) return w;

  // Step 1b
  const m1b = /(eedly|ingly|edly|eed|ing|ed)$/.exec(w);
  if (m1b) {
    const suf = m1b[1];
    const stem = w.slice(0, -suf.length);
    if (suf === "eed" || suf === "eedly") {
      if (w.length - suf.length >= r1) w = stem + "ee";
    } else if (containsVowel(stem)) {
      w = stem;
      if (w.endsWith("at") || w.endsWith("bl") || w.endsWith("iz")) w += "e";
      else if (/(bb|dd|ff|gg|mm|nn|pp|rr|tt)$/.test(w)) w = w.slice(0, -1);
      else if (r1 >= w.length && endsShortSyllable(w)) w += "e";
    }
  }

  // Step 1c
  if (w.length > 2 && (w.endsWith("y") || w.endsWith("Y")) && !isVowel(w[w.length - 2])) w = w.slice(0, -1) + "i";

  // Step 2
  for (const [suf, rep] of STEP2) {
    if (!w.endsWith(suf)) continue;
    if (w.length - suf.length >= r1) {
      if (suf === "ogi") {
        if (w[w.length - 4] === "l") w = w.slice(0, -3) + rep;
      } else if (suf === "li") {
        if ("cdeghkmnrt".includes(w[w.length - 3] ?? "")) w = w.slice(0, -2);
      } else w = w.slice(0, -suf.length) + rep;
    }
    break;
  }

  // Step 3
  for (const [suf, rep] of STEP3) {
    if (!w.endsWith(suf)) continue;
    if (w.length - suf.length >= r1) {
      if (suf === "ative") {
        if (w.length - suf.length >= r2) w = w.slice(0, -5);
      } else w = w.slice(0, -suf.length) + rep;
    }
    break;
  }

  // Step 4
  for (const suf of STEP4) {
    if (!w.endsWith(suf)) continue;
    if (w.length - suf.length >= r2) {
      if (suf === "ion") {
        const c = w[w.length - 4];
        if (c === "s" || c === "t") w = w.slice(0, -3);
      } else w = w.slice(0, -suf.length);
    }
    break;
  }

  // Step 5
  if (w.endsWith("e")) {
    const at = w.length - 1;
    if (at >= r2 || (at >= r1 && !endsShortSyllable(w.slice(0, -1)))) w = w.slice(0, -1);
  } else if (w.endsWith("l") && w.length - 1 >= r2 && w[w.length - 2] === "l") {
    w = w.slice(0, -1);
  }
  return w.replace(/Y/g, "y");
}
