/** A hand-written SVG line chart (no dependency): one panel per metric, log-scaled x (notes). */

export interface Series {
  name: string;
  color: string;
  /** [notes, value] */
  points: [number, number][];
}

export interface Panel {
  title: string;
  unit: string;
  series: Series[];
}

const W = 440;
const H = 300;
const PAD = { l: 60, r: 16, t: 34, b: 44 };

export function scalingSvg(panels: Panel[], caption: string): string {
  const width = W * panels.length;
  const parts: string[] = [];
  parts.push(`<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${H + 40}" viewBox="0 0 ${width} ${H + 40}" font-family="system-ui, sans-serif" font-size="11">`);
  parts.push(`<rect width="100%" height="100%" fill="#fff"/>`);
  panels.forEach((p, i) => parts.push(`<g transform="translate(${i * W},0)">${panel(p)}</g>`));
  parts.push(`<text x="10" y="${H + 28}" fill="#555">${esc(caption)}</text>`);
  parts.push("</svg>");
  return parts.join("\n");
}

function panel(p: Panel): string {
  const pts = p.series.flatMap((s) => s.points).filter(([x, y]) => x > 0 && Number.isFinite(y) && y > 0);
  if (pts.length === 0) return `<text x="${PAD.l}" y="${PAD.t}">${esc(p.title)}: no data</text>`;
  const xs = pts.map(([x]) => x);
  const ys = pts.map(([, y]) => y);
  const x0 = Math.log10(Math.min(...xs)) - 0.1;
  const x1 = Math.log10(Math.max(...xs)) + 0.1;
  const y0 = Math.floor(Math.log10(Math.min(...ys)));
  const y1 = Math.ceil(Math.log10(Math.max(...ys))) + (Math.min(...ys) === Math.max(...ys) ? 1 : 0);
  const iw = W - PAD.l - PAD.r;
  const ih = H - PAD.t - PAD.b;
  const sx = (x: number) => PAD.l + ((Math.log10(x) - x0) / (x1 - x0 || 1)) * iw;
  const sy = (y: number) => PAD.t + ih - ((Math.log10(y) - y0) / (y1 - y0 || 1)) * ih;
  const out: string[] = [];
  out.push(`<text x="${PAD.l}" y="18" font-size="13" font-weight="600">${esc(p.title)} (${esc(p.unit)}, log scale)</text>`);
  out.push(`<rect x="${PAD.l}" y="${PAD.t}" width="${iw}" height="${ih}" fill="none" stroke="#ccc"/>`);
  for (let e = y0; e <= y1; e++) {
    const y = sy(Math.pow(10, e));
    out.push(`<line x1="${PAD.l}" x2="${PAD.l + iw}" y1="${y.toFixed(1)}" y2="${y.toFixed(1)}" stroke="#eee"/>`);
    out.push(`<text x="${PAD.l - 6}" y="${(y + 4).toFixed(1)}" text-anchor="end" fill="#555">${fmt(Math.pow(10, e))}</text>`);
  }
  for (const x of [...new Set(xs)].sort((a, b) => a - b)) {
    out.push(`<text x="${sx(x).toFixed(1)}" y="${PAD.t + ih + 16}" text-anchor="middle" fill="#555">${fmt(x)}</text>`);
  }
  out.push(`<text x="${PAD.l + iw / 2}" y="${PAD.t + ih + 32}" text-anchor="middle" fill="#555">notes in the vault</text>`);
  p.series.forEach((s, i) => {
    const sp = s.points.filter(([x, y]) => x > 0 && Number.isFinite(y) && y > 0).sort((a, b) => a[0] - b[0]);
    if (sp.length > 0) {
      const d = sp.map(([x, y], k) => `${k ? "L" : "M"}${sx(x).toFixed(1)},${sy(y).toFixed(1)}`).join(" ");
      out.push(`<path d="${d}" fill="none" stroke="${s.color}" stroke-width="2"/>`);
      for (const [x, y] of sp) out.push(`<circle cx="${sx(x).toFixed(1)}" cy="${sy(y).toFixed(1)}" r="3" fill="${s.color}"><title>${esc(s.name)}: ${fmt(y)} ${esc(p.unit)} at ${x} notes</title></circle>`);
    }
    out.push(`<rect x="${PAD.l + 8}" y="${PAD.t + 8 + i * 15}" width="10" height="10" fill="${s.color}"/>`);
    out.push(`<text x="${PAD.l + 22}" y="${PAD.t + 17 + i * 15}">${esc(s.name)}</text>`);
  });
  return out.join("\n");
}

function fmt(n: number): string {
  if (n >= 1000) return `${+(n / 1000).toFixed(1)}k`;
  if (n >= 1) return String(+n.toFixed(2));
  return String(+n.toPrecision(2));
}

function esc(s: string): string {
  return s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;");
}
