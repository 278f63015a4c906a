/**
 * A QR code drawn as SVG rects from `qrcode-generator` (the encoder; this only draws
 * its modules), so it needs no canvas, no image URL and no inline style: the console's
 * CSP stays as strict as it is. Error correction M, a four-module quiet zone.
 */
import qrcode from "qrcode-generator";

export function QrCode({ text, label, size = 200 }: { text: string; label: string; size?: number }) {
  const qr = qrcode(0, "M");
  qr.addData(text);
  qr.make();
  const n = qr.getModuleCount();
  const quiet = 4;
  const dark: string[] = [];
  for (let r = 0; r < n; r++) for (let c = 0; c < n; c++) if (qr.isDark(r, c)) dark.push(`M${c + quiet} ${r + quiet}h1v1h-1z`);
  return (
    <svg class="qr" role="img" aria-label={label} width={size} height={size} viewBox={`0 0 ${n + 2 * quiet} ${n + 2 * quiet}`} shape-rendering="crispEdges">
      <rect width="100%" height="100%" fill="#fff" />
      <path d={dark.join("")} fill="#000" />
    </svg>
  );
}
