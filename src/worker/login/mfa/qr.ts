import { encode } from "uqr";

/**
 * A QR code as inline SVG, rendered here (issue 12 point 3: no external service ever sees the secret). One
 * `<path>` of unit squares over a white quiet zone; dark on light whatever the branding, so phones scan it.
 */
export function qrSvg(text: string, label: string, sizePx = 200): string {
  const { data } = encode(text, { ecc: "M", border: 4 });
  const size = data.length;
  let path = "";
  data.forEach((row, y) => {
    row.forEach((dark, x) => {
      if (dark) path += `M${x} ${y}h1v1h-1z`;
    });
  });
  const escaped = label.replace(/[<>&"]/g, (ch) => `&#${ch.charCodeAt(0)};`);
  return (
    `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 ${size} ${size}" width="${sizePx}" height="${sizePx}" ` +
    `role="img" aria-label="${escaped}" shape-rendering="crispEdges"><rect width="${size}" height="${size}" fill="#ffffff"/>` +
    `<path d="${path}" fill="#000000"/></svg>`
  );
}
